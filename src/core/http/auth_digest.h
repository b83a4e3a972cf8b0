/* auth_digest.h -- HTTP Digest access authentication (RFC 7616, and RFC
 * 2617's form without qop), the client's side: a 401's challenge read, and
 * the Authorization value that answers it (auth_digest.c). k6's
 * params.auth = "digest" sends a request, answers its 401 once and counts
 * the challenge as an expected response. */
#ifndef LL_AUTH_DIGEST_H
#define LL_AUTH_DIGEST_H

#include <stddef.h>

#include "http_req.h"

/* The first Digest challenge among the WWW-Authenticate headers of a raw
 * header block, or NULL; *len is its length. */
const char *ll_auth_digest_challenge(const char *headers, size_t headers_len, size_t *len);

/* The Authorization header value ("Digest username=...") that answers
 * challenge (len bytes: a WWW-Authenticate value) for a request of method
 * to uri (its path and query) with user and password; cnonce is the
 * client's nonce and nc its count for this nonce. Algorithms MD5,
 * MD5-sess, SHA-256 and SHA-256-sess (with or without "-sess"), qop "auth"
 * or none. Returns a malloc'd string, or NULL when the challenge is not
 * one of those (no nonce, another algorithm, only qop=auth-int) or out of
 * memory. */
char *ll_auth_digest_answer(const char *challenge, size_t len, const char *method, const char *uri, const char *user,
                            const char *password, const char *cnonce, unsigned nc);

/* The Authorization value answering challenge for req (its URL's path and
 * query, its credentials) sent with method, with a fresh random cnonce and
 * nc 1. NULL as ll_auth_digest_answer, or when req has no credentials. */
char *ll_auth_digest_for(const ll_http_req *req, const char *method, const char *challenge, size_t len);

#endif
