/* http_versions.c -- the HTTP layer's library versions (see
 * http_versions.h), read from the libraries themselves, not from their
 * headers, so they say what the binary runs with. */
#include "http_versions.h"

#include <cJSON.h>
#include <curl/curl.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "dns_lookup.h"

/* The version of lib in curl's QUIC string ("ngtcp2/1.2.0 nghttp3/1.1.0"),
 * or NULL. */
static cJSON *quic_part(const char *quic, const char *lib) {
    const char *at = quic ? strstr(quic, lib) : NULL;
    if (!at || at[strlen(lib)] != '/') return cJSON_CreateNull();
    at += strlen(lib) + 1;
    char v[64];
    snprintf(v, sizeof(v), "%.*s", (int)strcspn(at, " "), at);
    return cJSON_CreateString(v);
}

void ll_http_versions(cJSON *o) {
    static const struct {
        int bit;
        const char *name;
    } features[] = {{CURL_VERSION_HTTP2, "HTTP2"},     {CURL_VERSION_HTTP3, "HTTP3"},
                    {CURL_VERSION_SSL, "SSL"},         {CURL_VERSION_HTTPS_PROXY, "HTTPS-proxy"},
                    {CURL_VERSION_IPV6, "IPv6"},       {CURL_VERSION_LIBZ, "libz"},
                    {CURL_VERSION_BROTLI, "brotli"},   {CURL_VERSION_ZSTD, "zstd"},
                    {CURL_VERSION_ASYNCHDNS, "AsynchDNS"}, {CURL_VERSION_ALTSVC, "alt-svc"},
                    {CURL_VERSION_HSTS, "HSTS"},       {CURL_VERSION_UNIX_SOCKETS, "UnixSockets"}};
    const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);
    cJSON *c = cJSON_AddObjectToObject(o, "libcurl");
    cJSON_AddStringToObject(c, "version", d->version);
    cJSON_AddItemToObject(c, "ssl", d->ssl_version ? cJSON_CreateString(d->ssl_version) : cJSON_CreateNull());
    const char *quic = d->age >= CURLVERSION_FIFTH ? d->quic_version : NULL;
    cJSON_AddItemToObject(c, "quic", quic ? cJSON_CreateString(quic) : cJSON_CreateNull());
    cJSON_AddItemToObject(c, "ngtcp2", quic_part(quic, "ngtcp2"));
    cJSON_AddItemToObject(c, "nghttp3", quic_part(quic, "nghttp3"));
    cJSON *protos = cJSON_AddArrayToObject(c, "protocols");
    for (const char *const *p = d->protocols; p && *p; p++) cJSON_AddItemToArray(protos, cJSON_CreateString(*p));
    cJSON *feats = cJSON_AddArrayToObject(c, "features");
    for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
        if (d->features & features[i].bit) cJSON_AddItemToArray(feats, cJSON_CreateString(features[i].name));
    cJSON_AddStringToObject(o, "openssl", OpenSSL_version(OPENSSL_VERSION));
    cJSON_AddStringToObject(o, "nghttp2", nghttp2_version(0)->version_str);
    cJSON_AddStringToObject(o, "c-ares", ll_dns_lookup_version());
}
