/* http_error.c -- k6's text for the common request failures, and a
 * message's varying numbers taken out (see http_error.h). */
#include "http_error.h"

#include <stdio.h>
#include <string.h>

#include "url.h"

const char *ll_http_error_text(int error_code, const char *url, int udp, char *buf, size_t n) {
    if (error_code == 1050) return "request timeout";
    if (error_code == 1220) return udp ? NULL : "read: connection reset by peer"; /* QUIC's reset says so itself */
    if (error_code != 1100 && error_code != 1211 && error_code != 1212) return NULL;
    ll_url u;
    if (ll_url_parse(&u, url) < 0) return NULL;
    int v6 = strchr(u.host, ':') != NULL;
    if (error_code == 1100) snprintf(buf, n, "lookup %s: no such host", u.host);
    else snprintf(buf, n, "dial %s %s%s%s:%d: %s", udp ? "udp" : "tcp", v6 ? "[" : "", u.host, v6 ? "]" : "", u.port,
                  error_code == 1212 ? "connect: connection refused" : "i/o timeout");
    ll_url_free(&u);
    return buf;
}

/* The length of s's start matching pat, where '#' stands for a run of
 * digits; 0 when it does not match. */
static size_t error_match(const char *s, const char *pat) {
    const char *p = s;
    for (; *pat; pat++) {
        if (*pat != '#' && *p++ != *pat) return 0;
        if (*pat != '#') continue;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return (size_t)(p - s);
}

void ll_http_error_normalize(char *dst, size_t len, const char *msg) {
    static const char *const varying[] = {" after # ms", " after # milliseconds", " with # out of # bytes received",
                                          " with # bytes received"};
    size_t o = 0;
    while (*msg && o + 1 < len) {
        size_t skip = 0;
        for (size_t i = 0; !skip && i < sizeof(varying) / sizeof(varying[0]); i++) skip = error_match(msg, varying[i]);
        if (skip) msg += skip;
        else dst[o++] = *msg++;
    }
    if (len) dst[o] = 0;
}
