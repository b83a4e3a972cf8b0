/* http_error.h -- the words of a failed request, the same whichever
 * transport served it: for the failures k6 users know by their Go text
 * (a name that does not resolve, a refused or timed-out connection, a
 * reset, a request timeout) the message k6 gives; for the rest the
 * transport's own description stands. */
#ifndef LL_HTTP_ERROR_H
#define LL_HTTP_ERROR_H

#include <stddef.h>

/* The message of error_code (k6's codes) for a request to url, written in
 * buf (n bytes), or NULL when the code has no common text. */
const char *ll_http_error_text(int error_code, const char *url, char *buf, size_t n);

#endif
