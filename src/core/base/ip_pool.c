/* ip_pool.c -- source address pools from text (see ip_pool.h). */
#include "ip_pool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/* One address as a number: 1 for IPv4, 2 for IPv6, 0 when not an address. */
static int ip_number(const char *s, ll_ip_u128 *out) {
    unsigned char b[16];
    if (inet_pton(AF_INET, s, b) == 1) {
        *out = ((ll_ip_u128)b[0] << 24) | ((ll_ip_u128)b[1] << 16) | ((ll_ip_u128)b[2] << 8) | b[3];
        return 1;
    }
    if (inet_pton(AF_INET6, s, b) == 1) {
        ll_ip_u128 v = 0;
        for (int i = 0; i < 16; i++) v = (v << 8) | b[i];
        *out = v;
        return 2;
    }
    return 0;
}

/* An element of the list ("a", "a-b", "a/n") as its first address and
 * count. 0, or -1 with err. */
static int block_of(const char *s, int *v6, ll_ip_u128 *first, ll_ip_u128 *count, char *err, size_t errlen) {
    char a[64], b[64];
    const char *dash = strchr(s, '-'), *slash = strchr(s, '/');
    size_t alen = dash ? (size_t)(dash - s) : slash ? (size_t)(slash - s) : strlen(s);
    if (alen >= sizeof(a)) goto bad;
    memcpy(a, s, alen);
    a[alen] = 0;
    ll_ip_u128 x, y;
    int fa = ip_number(a, &x);
    if (!fa) goto bad;
    *v6 = fa == 2;
    *first = x;
    *count = 1;
    if (dash) {
        if (strlen(dash + 1) >= sizeof(b)) goto bad;
        strcpy(b, dash + 1);
        int fb = ip_number(b, &y);
        if (fb != fa || y < x) {
            snprintf(err, errlen, "'%s' is not a range of one IP version from a lower to a higher address", s);
            return -1;
        }
        *count = y - x + 1;
        if (*count == 0) goto too_big; /* all of IPv6 */
    } else if (slash) {
        char *end;
        long bits = strtol(slash + 1, &end, 10);
        int width = *v6 ? 128 : 32;
        if (!slash[1] || *end || bits < 0 || bits > width) goto bad;
        if (*v6 && bits == 0) goto too_big;
        ll_ip_u128 size = (ll_ip_u128)1 << (width - bits);
        *first = x & ~(size - 1);
        *count = size;
        if (!*v6 && size > 2) { /* without the network and broadcast addresses, as k6 */
            *first += 1;
            *count -= 2;
        }
    }
    return 0;
bad:
    snprintf(err, errlen, "'%s' is not an IP address, range (A-B) or CIDR block (A/N)", s);
    return -1;
too_big:
    snprintf(err, errlen, "'%s' holds more addresses than luaload counts", s);
    return -1;
}

int ll_ip_pool_parse(ll_ip_pool *p, const char *text, char *err, size_t errlen) {
    memset(p, 0, sizeof(*p));
    int cap = 0;
    for (const char *s = text;;) {
        while (*s == ' ') s++;
        size_t len = strcspn(s, ",");
        while (len && s[len - 1] == ' ') len--;
        char item[160];
        if (len == 0 || len >= sizeof(item)) {
            snprintf(err, errlen, "%s", len ? "an entry is too long" : "expected addresses, ranges or CIDR blocks "
                                                                        "separated by commas");
            goto fail;
        }
        memcpy(item, s, len);
        item[len] = 0;
        ll_ip_block b;
        ll_ip_u128 count;
        if (block_of(item, &b.v6, &b.first, &count, err, errlen) < 0) goto fail;
        b.end = p->total + count;
        if (b.end < p->total) {
            snprintf(err, errlen, "the pool holds more addresses than luaload counts");
            goto fail;
        }
        p->total = b.end;
        ll_xgrow((void **)&p->blocks, &cap, p->n + 1, sizeof(*p->blocks));
        p->blocks[p->n++] = b;
        s = strchr(s, ',');
        if (!s) break;
        s++;
    }
    return 0;
fail:
    ll_ip_pool_free(p);
    return -1;
}

void ll_ip_pool_free(ll_ip_pool *p) {
    free(p->blocks);
    memset(p, 0, sizeof(*p));
}

void ll_ip_pool_get(const ll_ip_pool *p, uint64_t index, ll_addr *out) {
    memset(out, 0, sizeof(*out));
    if (!p->n) return;
    ll_ip_u128 i = (ll_ip_u128)index % p->total;
    int k = 0;
    while (i >= p->blocks[k].end) k++;
    const ll_ip_block *b = &p->blocks[k];
    ll_ip_u128 v = b->first + (i - (k ? p->blocks[k - 1].end : 0));
    if (!b->v6) {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&out->ss;
        a4->sin_family = AF_INET;
        a4->sin_addr.s_addr = htonl((uint32_t)v);
        out->len = sizeof(*a4);
        return;
    }
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->ss;
    a6->sin6_family = AF_INET6;
    for (int j = 15; j >= 0; j--, v >>= 8) a6->sin6_addr.s6_addr[j] = (unsigned char)v;
    out->len = sizeof(*a6);
}
