/* alt_svc.c -- reading Alt-Svc values and the bounded table of origins'
 * HTTP/3 alternatives (see alt_svc.h). The grammar (RFC 7838 section 3):
 *   Alt-Svc = clear / 1#alt-value
 *   alt-value = protocol-id "=" quoted-authority *( OWS ";" OWS name "=" value )
 * Parameters other than ma are skipped; a value with an unterminated
 * quote or no '=' ends the reading (what was read before stands). */
#include "alt_svc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DAY_NS (86400ull * 1000000000ull)

static void origin_key(char *out, size_t len, const char *host, int port) { snprintf(out, len, "%s:%d", host, port); }

static ll_alt_svc_entry *find(ll_alt_svc *a, const char *key) {
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->e[i].origin, key) == 0) return &a->e[i];
    return NULL;
}

static void drop(ll_alt_svc *a, ll_alt_svc_entry *e) { *e = a->e[--a->n]; }

/* A cursor over the value. */
typedef struct rd {
    const char *p, *end;
} rd;

static void skip_ws(rd *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t')) r->p++;
}

/* A token (up to one of stop or a blank) into out; 0, or -1 when empty. */
static int token(rd *r, const char *stop, char *out, size_t len) {
    size_t n = 0;
    skip_ws(r);
    while (r->p < r->end && !strchr(stop, *r->p) && *r->p != ' ' && *r->p != '\t') {
        if (n + 1 < len) out[n++] = *r->p;
        r->p++;
    }
    out[n] = 0;
    return n ? 0 : -1;
}

/* A value: a quoted string (its escapes undone) or a token. 0, or -1. */
static int value(rd *r, char *out, size_t len) {
    skip_ws(r);
    if (r->p >= r->end || *r->p != '"') return token(r, ",;", out, len);
    size_t n = 0;
    for (r->p++; r->p < r->end && *r->p != '"'; r->p++) {
        if (*r->p == '\\' && r->p + 1 < r->end) r->p++;
        if (n + 1 < len) out[n++] = *r->p;
    }
    out[n] = 0;
    if (r->p >= r->end) return -1;
    r->p++;
    return 0;
}

/* "host:port", ":port" or "[v6]:port" into host ("" when none) and port. */
static int authority(const char *s, char *host, size_t len, int *port) {
    const char *colon = strrchr(s, ':');
    if (!colon) return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || p < 1 || p > 65535) return -1;
    const char *h = s;
    size_t hn = (size_t)(colon - s);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') h++, hn -= 2;
    if (hn >= len) return -1;
    memcpy(host, h, hn);
    host[hn] = 0;
    *port = (int)p;
    return 0;
}

int ll_alt_svc_heard(ll_alt_svc *a, const char *host, int port, const char *v, size_t len, uint64_t now_ns) {
    char key[sizeof(a->e[0].origin)];
    origin_key(key, sizeof(key), host, port);
    rd r = {v, v + len};
    char proto[64], auth[300], name[64], val[64];
    skip_ws(&r);
    if (len - (size_t)(r.p - v) >= 5 && strncasecmp(r.p, "clear", 5) == 0) {
        rd t = {r.p + 5, r.end};
        skip_ws(&t);
        if (t.p == t.end) {
            ll_alt_svc_entry *e = find(a, key);
            if (e) drop(a, e);
            return 0;
        }
    }
    while (r.p < r.end) {
        if (token(&r, "=,;", proto, sizeof(proto)) < 0 || r.p >= r.end || *r.p != '=') return 0;
        r.p++;
        if (value(&r, auth, sizeof(auth)) < 0) return 0;
        uint64_t ma = DAY_NS / 1000000000ull;
        skip_ws(&r);
        while (r.p < r.end && *r.p == ';') {
            r.p++;
            if (token(&r, "=,;", name, sizeof(name)) < 0 || r.p >= r.end || *r.p != '=') return 0;
            r.p++;
            if (value(&r, val, sizeof(val)) < 0) return 0;
            if (strcasecmp(name, "ma") == 0) ma = strtoull(val, NULL, 10);
            skip_ws(&r);
        }
        if (r.p < r.end && *r.p != ',') return 0; /* junk after the alternative */
        char ahost[256];
        int aport;
        if (strcmp(proto, "h3") == 0 && authority(auth, ahost, sizeof(ahost), &aport) == 0 && ma > 0) {
            ll_alt_svc_entry *e = find(a, key);
            if (!e && a->n == LL_ALT_SVC_MAX) { /* the one that expires first goes */
                e = &a->e[0];
                for (int i = 1; i < a->n; i++)
                    if (a->e[i].expires_ns < e->expires_ns) e = &a->e[i];
            } else if (!e) {
                e = &a->e[a->n++];
            }
            snprintf(e->origin, sizeof(e->origin), "%s", key);
            snprintf(e->host, sizeof(e->host), "%s", strcmp(ahost, host) == 0 ? "" : ahost);
            e->port = aport;
            e->expires_ns = now_ns + (ma > 100ull * 365 * 86400 ? 100ull * 365 * 86400 : ma) * 1000000000ull;
            return 1;
        }
        if (r.p < r.end) r.p++;
        skip_ws(&r);
    }
    return 0;
}

const ll_alt_svc_entry *ll_alt_svc_find(ll_alt_svc *a, const char *host, int port, uint64_t now_ns) {
    char key[sizeof(a->e[0].origin)];
    origin_key(key, sizeof(key), host, port);
    ll_alt_svc_entry *e = find(a, key);
    if (e && e->expires_ns <= now_ns) {
        drop(a, e);
        e = NULL;
    }
    return e;
}

void ll_alt_svc_forget(ll_alt_svc *a, const char *host, int port) {
    char key[sizeof(a->e[0].origin)];
    origin_key(key, sizeof(key), host, port);
    ll_alt_svc_entry *e = find(a, key);
    if (e) drop(a, e);
}
