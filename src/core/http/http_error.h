/* http_error.h -- the words of a failed request, the same whichever
 * transport served it: for the failures k6 users know by their Go text
 * (a name that does not resolve, a refused or timed-out connection, a
 * reset, a request timeout) the message k6 gives; for the rest the
 * transport's own description stands. And a message without the numbers
 * that vary from one failure to the next, to count failures by message. */
#ifndef LL_HTTP_ERROR_H
#define LL_HTTP_ERROR_H

#include <stddef.h>

/* The message of error_code (k6's codes) for a request to url, written in
 * buf (n bytes), or NULL when the code has no common text. udp: the
 * request went over QUIC (HTTP/3), whose dials Go would name "dial udp"
 * and whose resets (stateless, 1220) keep the transport's words. */
const char *ll_http_error_text(int error_code, const char *url, int udp, char *buf, size_t n);

/* Copies msg into dst (truncated to len) without the varying numbers that
 * libcurl puts in its messages (" after 3 ms", " with 0 bytes received"),
 * so that one error counts as one message (a worker's table of failed
 * requests, the errors of throw = true). */
void ll_http_error_normalize(char *dst, size_t len, const char *msg);

#endif
