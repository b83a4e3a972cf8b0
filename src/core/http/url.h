/* url.h -- an absolute http(s) URL taken apart (scheme, host, port, path,
 * query) and a reference such as a Location header resolved against one
 * (RFC 3986 section 5), both done by libcurl's URL API (url.c): no URL is
 * parsed by hand. */
#ifndef LL_URL_H
#define LL_URL_H

#include <stddef.h>

typedef struct ll_url {
    char *scheme; /* lower case: "http" or "https" */
    char *host;   /* lower case; IPv6 without brackets ("::1", with a zone
                   * as "fe80::1%eth0") */
    int port;     /* the explicit port, or the scheme's default (80, 443) */
    char *path;   /* starts with "/", dot segments removed, as encoded */
    char *query;  /* without the "?", or NULL when there is none or it is empty */
} ll_url;

/* Parses s, an absolute http or https URL (any case; userinfo and fragment
 * are dropped). Returns 0, or -1 when s is not one (no scheme, another
 * scheme, no host, a bad port, spaces or control characters, ...) or on
 * out of memory; u is zeroed on failure (ll_url_free is then a no-op). */
int ll_url_parse(ll_url *u, const char *s);
void ll_url_free(ll_url *u);

/* When s, an absolute URL, carries credentials ("http://user:pass@host/"),
 * returns 1 with them percent-decoded in *user and *password ("" when the
 * URL has none) and s without them in *rest, all malloc'd; 0 when it
 * carries none or does not parse (nothing is set); -1 when out of
 * memory. */
int ll_url_credentials(const char *s, char **rest, char **user, char **password);

/* ref (a Location header value: absolute, scheme-relative "//h/p",
 * absolute-path "/p", relative "p", "?q", "#f" or empty) resolved against
 * base, an absolute http(s) URL, as RFC 3986 5.2 says, with dot segments
 * removed. Surrounding spaces and tabs of ref are ignored; spaces and
 * bytes over 127 inside it are percent-encoded (as curl does when it
 * follows a redirect). Returns a malloc'd absolute URL, or NULL when base
 * is not an absolute http(s) URL, ref has a control character, the result
 * is not http(s) or not a valid URL, or out of memory. */
char *ll_url_resolve(const char *base, const char *ref);

/* The URL's authority as a Host header or HTTP/2's :authority carries it:
 * the host (brackets around an IPv6 address, its zone left out), then
 * ":port" unless the port is the scheme's own. Returns its length, and
 * writes it to buf (without a NUL) only when it fits in n bytes. */
size_t ll_url_authority(const ll_url *u, char *buf, size_t n);

/* 1 when a and b have the same host and port (the scheme is not compared):
 * a redirect that changes either drops Authorization. */
int ll_url_same_origin_host(const ll_url *a, const ll_url *b);

#endif
