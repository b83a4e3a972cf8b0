/* redirect.h -- k6's redirects, one hop at a time: which responses are
 * followed and the request of the next hop (redirect.c). */
#ifndef LL_REDIRECT_H
#define LL_REDIRECT_H

#include <stddef.h>

#include "http_req.h"

/* k6's default of options.maxRedirects */
#define LL_REDIRECTS_DEFAULT 10

/* The value of the next header called name (any case) in a raw header
 * block, from *pos on; *pos moves past it and *vlen is its length (spaces
 * trimmed). NULL when there is none. */
const char *ll_http_header_next(const char *block, size_t len, const char *name, size_t *pos, size_t *vlen);
/* 1 for the statuses a client follows: 301, 302, 303, 307, 308 */
int ll_redirect_status(int status);
/* Builds in next (initialised, empty) the request that follows res, the
 * redirect response to req sent with method: the Location resolved
 * against req's URL; GET without the body after 301/302/303 (HEAD stays
 * HEAD), the same method and body after 307/308; req's headers except
 * Host, and Authorization and cookies when the host changes; req's tags
 * and options. *next_method outlives the transfer as start() wants.
 * Returns 1, 0 when there is nothing to follow (no usable Location), -1
 * when out of memory. */
int ll_redirect_next(const ll_http_req *req, const char *method, const ll_http_res *res, ll_http_req *next,
                     const char **next_method);

#endif
