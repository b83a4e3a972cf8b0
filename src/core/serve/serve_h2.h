/* serve_h2.h -- private to h2.c and grpc_echo.c: the gRPC echo's interface
 * to the HTTP/2 session (it speaks nghttp2's types, which the rest of
 * serve/ does not see). */
#ifndef LL_SERVE_H2_H
#define LL_SERVE_H2_H

#include "serve_internal.h"

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

#define GRPC_ECHO_MSG_MAX (4u * 1024 * 1024) /* largest message echoed (gRPC's default limit) */

typedef struct grpc_echo grpc_echo;

/* A gRPC call on stream id of session ng begins (its request headers are
 * in): path is its :path, echo_status the x-echo-status value (NULL when
 * the header was not sent). A path that is no /Service/Method, or a bad
 * x-echo-status, already decides its status. */
grpc_echo *ll_grpc_echo_new(conn *c, nghttp2_session *ng, int32_t id, const char *path, size_t plen,
                            const char *echo_status, size_t slen);
/* The next n bytes of the request's DATA. */
void ll_grpc_echo_data(grpc_echo *g, const uint8_t *p, size_t n);
/* The client ended its stream. */
void ll_grpc_echo_end(grpc_echo *g);
/* Bytes of whole messages held, waiting to be sent. */
size_t ll_grpc_echo_held(const grpc_echo *g);
/* The response's data provider (source.ptr: the grpc_echo): the echoed
 * messages, then the trailers once the call's status is known. */
ssize_t ll_grpc_echo_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                          nghttp2_data_source *src, void *ud);
void ll_grpc_echo_free(grpc_echo *g);

#endif
