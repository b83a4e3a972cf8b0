/* url.c -- URLs taken apart and references resolved with libcurl's URL API
 * (see url.h). curl does the parsing, normalising and RFC 3986 resolution;
 * this file only checks the scheme and copies the parts into malloc'd
 * strings. Everything here is user-sized, so out of memory is reported. */
#include "url.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

/* What curl accepts in a Location (curl's own redirect following). */
#define URL_REF_FLAGS (CURLU_ALLOW_SPACE | CURLU_URLENCODE)

static void url_lower(char *s) {
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s + 32);
}

/* Copies the part what of h into *out (malloc'd). Returns 0, 1 when h has
 * no such part (*out NULL), -1 on an error or out of memory. */
static int url_part(CURLU *h, CURLUPart what, unsigned flags, char **out) {
    char *s = NULL;
    CURLUcode rc = curl_url_get(h, what, &s, flags);
    *out = NULL;
    if (rc == CURLUE_NO_QUERY || rc == CURLUE_NO_ZONEID) return 1;
    if (rc != CURLUE_OK) return -1;
    *out = strdup(s);
    curl_free(s);
    return *out ? 0 : -1;
}

/* 1 when the URL in h is http or https (curl lower-cases the scheme) */
static int url_http(CURLU *h) {
    char *s = NULL;
    int ok = url_part(h, CURLUPART_SCHEME, 0, &s) == 0 && (strcmp(s, "http") == 0 || strcmp(s, "https") == 0);
    free(s);
    return ok;
}

/* Lower-cases u->host, takes the brackets off an IPv6 address and appends
 * its zone. Returns 0, or -1 on an empty host or out of memory. */
static int url_host(ll_url *u, const char *zone) {
    char *h = u->host;
    size_t n = strlen(h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        memmove(h, h + 1, n - 2);
        n -= 2;
        h[n] = 0;
    }
    url_lower(h);
    if (!n) return -1;
    if (!zone) return 0;
    size_t z = strlen(zone);
    char *p = realloc(h, n + 1 + z + 1);
    if (!p) return -1;
    p[n] = '%';
    memcpy(p + n + 1, zone, z + 1);
    u->host = p;
    return 0;
}

int ll_url_parse(ll_url *u, const char *s) {
    memset(u, 0, sizeof(*u));
    CURLU *h = curl_url();
    char *port = NULL, *zone = NULL;
    int ok = h && curl_url_set(h, CURLUPART_URL, s, 0) == CURLUE_OK && url_http(h) &&
             url_part(h, CURLUPART_SCHEME, 0, &u->scheme) == 0 && url_part(h, CURLUPART_HOST, 0, &u->host) == 0 &&
             url_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, &port) == 0 &&
             url_part(h, CURLUPART_PATH, 0, &u->path) == 0 && u->path[0] == '/' &&
             url_part(h, CURLUPART_QUERY, 0, &u->query) >= 0 && url_part(h, CURLUPART_ZONEID, 0, &zone) >= 0 &&
             url_host(u, zone) == 0;
    if (ok) u->port = atoi(port);
    free(port);
    free(zone);
    curl_url_cleanup(h);
    if (!ok) ll_url_free(u);
    return ok ? 0 : -1;
}

/* 1 when the authority of s (after "://", up to the path, query or
 * fragment) holds an '@': the one cheap test a URL without credentials
 * passes, so that only those with them go through curl's parser */
static int url_has_userinfo(const char *s) {
    const char *a = strstr(s, "://");
    if (!a) return 0;
    a += 3;
    size_t n = strcspn(a, "/?#");
    return memchr(a, '@', n) != NULL;
}

int ll_url_credentials(const char *s, char **rest, char **user, char **password) {
    if (!url_has_userinfo(s)) return 0;
    CURLU *h = curl_url();
    if (!h) return -1;
    char *u = NULL, *p = NULL, *r = NULL;
    if (curl_url_set(h, CURLUPART_URL, s, 0) != CURLUE_OK || !url_http(h)) {
        curl_url_cleanup(h); /* no URL: the request fails on it, as it is */
        return 0;
    }
    int ok = 1;
    {
        CURLUcode pc = curl_url_get(h, CURLUPART_PASSWORD, &p, CURLU_URLDECODE);
        CURLUcode uc = curl_url_get(h, CURLUPART_USER, &u, CURLU_URLDECODE);
        ok = (uc == CURLUE_OK || uc == CURLUE_NO_USER) && (pc == CURLUE_OK || pc == CURLUE_NO_PASSWORD) &&
             curl_url_set(h, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
             curl_url_set(h, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
             curl_url_get(h, CURLUPART_URL, &r, 0) == CURLUE_OK;
    }
    if (ok) {
        *user = strdup(u ? u : "");
        *password = strdup(p ? p : "");
        *rest = strdup(r);
        ok = *user && *password && *rest;
        if (!ok) {
            free(*user);
            free(*password);
            free(*rest);
        }
    }
    curl_free(u);
    curl_free(p);
    curl_free(r);
    curl_url_cleanup(h);
    return ok ? 1 : -1;
}

void ll_url_free(ll_url *u) {
    free(u->scheme);
    free(u->host);
    free(u->path);
    free(u->query);
    memset(u, 0, sizeof(*u));
}

/* A copy of s without surrounding spaces and tabs, or NULL when s has a
 * control character or on out of memory. */
static char *url_trim(const char *s) {
    for (const char *p = s; *p; p++)
        if (((unsigned char)*p < 32 && *p != '\t') || *p == 127) return NULL;
    size_t n = strlen(s);
    while (*s == ' ' || *s == '\t') s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    return strndup(s, n);
}

char *ll_url_resolve(const char *base, const char *ref) {
    char *r = url_trim(ref), *out = NULL;
    CURLU *h = curl_url();
    int ok = r && h && curl_url_set(h, CURLUPART_URL, base, 0) == CURLUE_OK && url_http(h) &&
             curl_url_set(h, CURLUPART_URL, r, URL_REF_FLAGS) == CURLUE_OK && url_http(h) &&
             url_part(h, CURLUPART_URL, 0, &out) == 0;
    free(r);
    curl_url_cleanup(h);
    return ok ? out : NULL;
}

size_t ll_url_authority(const ll_url *u, char *buf, size_t n) {
    size_t hl = strcspn(u->host, "%"), at = 0;
    int v6 = memchr(u->host, ':', hl) != NULL;
    int dflt = strcmp(u->scheme, "https") == 0 ? 443 : 80;
    char port[12];
    size_t pl = 0;
    for (unsigned p = (unsigned)u->port; u->port != dflt && (pl == 0 || p); p /= 10) port[pl++] = (char)('0' + p % 10);
    size_t len = hl + 2 * (size_t)v6 + (pl ? pl + 1 : 0);
    if (len > n) return len;
    if (v6) buf[at++] = '[';
    memcpy(buf + at, u->host, hl);
    at += hl;
    if (v6) buf[at++] = ']';
    if (pl) buf[at++] = ':';
    while (pl) buf[at++] = port[--pl]; /* the digits were made last first */
    return at;
}

int ll_url_same_origin_host(const ll_url *a, const ll_url *b) {
    return a->host && b->host && strcmp(a->host, b->host) == 0 && a->port == b->port;
}
