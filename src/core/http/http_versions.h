/* http_versions.h -- the versions of the HTTP layer's libraries, for
 * `luaload version`: libcurl (its protocols, its features, its TLS and
 * QUIC libraries), OpenSSL, nghttp2 and c-ares as they are at run time. */
#ifndef LL_HTTP_VERSIONS_H
#define LL_HTTP_VERSIONS_H

typedef struct cJSON cJSON;

/* Adds "libcurl": {version, ssl, quic, ngtcp2, nghttp3, protocols[],
 * features[]}, "openssl" and "nghttp2" (version strings) to o. */
void ll_http_versions(cJSON *o);

#endif
