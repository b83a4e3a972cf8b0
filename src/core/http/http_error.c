/* http_error.c -- k6's text for the common request failures (see
 * http_error.h). */
#include "http_error.h"

#include <stdio.h>
#include <string.h>

#include "url.h"

const char *ll_http_error_text(int error_code, const char *url, char *buf, size_t n) {
    if (error_code == 1050) return "request timeout";
    if (error_code == 1220) return "read: connection reset by peer";
    if (error_code != 1100 && error_code != 1211 && error_code != 1212) return NULL;
    ll_url u;
    if (ll_url_parse(&u, url) < 0) return NULL;
    int v6 = strchr(u.host, ':') != NULL;
    if (error_code == 1100) snprintf(buf, n, "lookup %s: no such host", u.host);
    else snprintf(buf, n, "dial tcp %s%s%s:%d: %s", v6 ? "[" : "", u.host, v6 ? "]" : "", u.port,
                  error_code == 1212 ? "connect: connection refused" : "i/o timeout");
    ll_url_free(&u);
    return buf;
}
