/* http_debug.h -- --http-debug (k6's): every request and response printed
 * on stderr as Go's httputil dumps them, "Request:" then the HTTP/1.1 head
 * ("GET /path HTTP/1.1\r\nHost: ...\r\n\r\n") as luaload sends it, and
 * "Response:" then the status line and headers as they came; with full,
 * the bodies too. HTTP/2 and HTTP/3 requests are shown in HTTP/1.1 form,
 * as Go shows them. Each dump is one write, so the dumps of concurrent VUs
 * do not mix. The transports call these only when the level is set. */
#ifndef LL_HTTP_DEBUG_H
#define LL_HTTP_DEBUG_H

#include <stddef.h>

#include "http_req.h"

/* The levels of ll_client_opts.http_debug */
#define LL_HTTP_DEBUG_OFF 0
#define LL_HTTP_DEBUG_HEADERS 1
#define LL_HTTP_DEBUG_FULL 2

/* The request whose HTTP/1.1 head is head (head_len bytes, up to and maybe
 * past its blank line: what follows it is not printed) and whose body is
 * req's; a body that is not in memory is shown by its size. */
void ll_http_debug_head(int level, const char *head, size_t head_len, const ll_http_req *req);
/* The same from req itself: its head built as the native transport builds
 * it, with cookie (NULL: none) and user_agent (unless req has its own). */
void ll_http_debug_request(int level, const ll_http_req *req, const char *method, const char *cookie,
                           const char *user_agent);
/* The response r (nothing for a transport error). */
void ll_http_debug_response(int level, const ll_http_res *r);

#endif
