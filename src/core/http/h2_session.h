/* h2_session.h -- the HTTP/2 framing of one client connection, on nghttp2:
 * requests go in as streams, the server's bytes are fed in, the bytes to
 * send come out, and each stream's events reach its owner through a table
 * of callbacks. HPACK, flow control, SETTINGS and GOAWAY are nghttp2's;
 * nothing here touches a socket, so the fuzzer can drive it too. */
#ifndef LL_H2_SESSION_H
#define LL_H2_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

typedef struct ll_h2 ll_h2;

/* What a stream's owner hears, with the ud given to ll_h2_submit. A
 * callback returning -1 resets the stream. */
typedef struct ll_h2_stream_ops {
    /* a response header; names are lower case, ":status" comes first */
    int (*on_header)(void *ud, const char *name, size_t nlen, const char *value, size_t vlen);
    /* the header block of a response ended; final: not a 1xx */
    int (*on_headers_done)(void *ud, int final);
    int (*on_data)(void *ud, const char *p, size_t n);
    /* the request's last frame is about to go out */
    void (*on_sent)(void *ud);
    /* the stream is over: error_code 0 when it ended cleanly, else the
     * HTTP/2 error code of the reset (NGHTTP2_REFUSED_STREAM: the server
     * did not process it); no callback follows */
    void (*on_close)(void *ud, uint32_t error_code);
    /* up to n bytes of the request body: the count, 0 at its end, -1 on an
     * error of the source */
    ssize_t (*read_body)(void *ud, char *buf, size_t n);
} ll_h2_stream_ops;

typedef struct ll_h2_header {
    const char *name, *value;
    size_t nlen, vlen;
    int static_name;            /* name is a lower-case literal: not copied */
} ll_h2_header;

/* A session that has queued the client preface and SETTINGS; NULL when
 * out of memory. */
ll_h2 *ll_h2_new(const ll_h2_stream_ops *ops);
void ll_h2_free(ll_h2 *h);
/* Submits a request (pseudo-headers first, names lower case); has_body:
 * the body comes through read_body. Returns the stream id (> 0), or -1. */
int32_t ll_h2_submit(ll_h2 *h, const ll_h2_header *hv, size_t n, int has_body, void *ud);
/* The owner of stream id is gone: it is reset, and no callback reaches ud. */
void ll_h2_cancel(ll_h2 *h, int32_t id);
/* The server's bytes. 0, or -1 on a protocol error (*err). */
int ll_h2_recv(ll_h2 *h, const char *p, size_t n, const char **err);
/* Appends what is ready to be sent to out. 0, or -1 (*err). */
int ll_h2_send(ll_h2 *h, ll_buf *out, const char **err);
/* A stream whose body source had nothing yet may be read again. */
void ll_h2_resume(ll_h2 *h, int32_t id);
/* 1 when the session can take another stream besides the open ones (as
 * its owner counts them): no GOAWAY, under the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS and under max (0: no limit of ours). */
int ll_h2_can_submit(const ll_h2 *h, int open, int max);
/* 1 while the session is alive (not torn down by GOAWAY or an error). */
int ll_h2_alive(const ll_h2 *h);

#endif
