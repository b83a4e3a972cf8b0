/* resolve.c -- host names to addresses for the native transports (see
 * resolve.h): options.hosts, IP literals, then a small cache in front of
 * getaddrinfo. */
#include "resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct resolved {
    char *host;
    int port;
    uint64_t until_s;
    ll_addr addr;
} resolved;

struct ll_resolver {
    resolved *v;
    int n, cap;
};

ll_resolver *ll_resolver_new(void) { return calloc(1, sizeof(ll_resolver)); }

void ll_resolver_free(ll_resolver *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) free(r->v[i].host);
    free(r->v);
    free(r);
}

/* host as an IPv4 or IPv6 literal (an IPv6 zone as "fe80::1%eth0") */
static int literal(const char *host, int port, ll_addr *out) {
    memset(out, 0, sizeof(*out));
    struct sockaddr_in *a4 = (struct sockaddr_in *)&out->ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        out->len = sizeof(*a4);
        return 1;
    }
    if (!strchr(host, ':')) return 0;
    struct addrinfo hints = {.ai_family = AF_INET6, .ai_flags = AI_NUMERICHOST}, *ai = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &ai) != 0) return 0;
    memcpy(&out->ss, ai->ai_addr, ai->ai_addrlen);
    out->len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 1;
}

/* The options.hosts entry for host:port, as host and port to use instead:
 * returns 1 and fills to (at most n bytes) and *to_port, or 0. */
static int route(char *const *connect_to, const char *host, int port, char *to, size_t n, int *to_port) {
    for (int i = 0; connect_to && connect_to[i]; i++) {
        const char *e = connect_to[i], *c1 = strchr(e, ':');
        if (!c1) continue;
        const char *c2 = strchr(c1 + 1, ':');
        if (!c2 || (size_t)(c1 - e) != strlen(host) || strncmp(e, host, (size_t)(c1 - e)) != 0) continue;
        if (c2 > c1 + 1 && atoi(c1 + 1) != port) continue;
        const char *a = c2 + 1, *end;
        if (*a == '[') {
            end = strchr(a, ']');
            if (!end) continue;
            a++;
        } else {
            end = strchr(a, ':');
            if (!end) end = a + strlen(a);
        }
        size_t len = (size_t)(end - a);
        if (len >= n) continue;
        memcpy(to, a, len);
        to[len] = 0;
        const char *p = strchr(end, ':');
        *to_port = p && p[1] ? atoi(p + 1) : port;
        return 1;
    }
    return 0;
}

int ll_resolve(ll_resolver *r, char *const *connect_to, const char *host, int port, uint64_t now_s, ll_addr *out,
               const char **err) {
    char to[256];
    int to_port = port;
    if (route(connect_to, host, port, to, sizeof(to), &to_port)) host = to;
    port = to_port;
    if (literal(host, port, out)) return 0;
    for (int i = 0; i < r->n; i++) {
        resolved *e = &r->v[i];
        if (e->port != port || strcmp(e->host, host) != 0) continue;
        if (e->until_s > now_s) {
            *out = e->addr;
            return 0;
        }
        free(e->host);
        r->v[i--] = r->v[--r->n]; /* expired */
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &ai) != 0 || !ai) {
        *err = "no such host";
        return -1;
    }
    const struct addrinfo *pick = ai;
    for (const struct addrinfo *a = ai; a; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
    memset(out, 0, sizeof(*out));
    memcpy(&out->ss, pick->ai_addr, pick->ai_addrlen);
    out->len = pick->ai_addrlen;
    freeaddrinfo(ai);
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        resolved *v = realloc(r->v, (size_t)cap * sizeof(*v));
        if (!v) return 0; /* not cached, still resolved */
        r->v = v;
        r->cap = cap;
    }
    char *h = strdup(host);
    if (!h) return 0;
    r->v[r->n++] = (resolved){.host = h, .port = port, .until_s = now_s + LL_RESOLVE_TTL_S, .addr = *out};
    return 0;
}
