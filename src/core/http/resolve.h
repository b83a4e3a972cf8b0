/* resolve.h -- where a native transport connects for a host and port, as
 * k6's resolver: options.hosts' entries first ("name:port:addr:port", an
 * empty port matching any, as libcurl's CONNECT_TO); IP literals and
 * "localhost" (127.0.0.1 and ::1) at once; other names through a worker's
 * cache of lookups (dns_lookup.c), kept for the dns option's ttl. A lookup
 * never blocks the loop: who asks for a name being looked up waits, and
 * every waiter of a name shares one query.
 *
 * The answer is the addresses to try in order (Happy Eyeballs, RFC 8305):
 * the dns option's policy says which IP versions count and which comes
 * first (preferIPv4: IPv4 when the name has any), its select which of
 * those a new connection tries first (first, random, roundRobin); the
 * others follow, the two IP versions taking turns. */
#ifndef LL_RESOLVE_H
#define LL_RESOLVE_H

#include <stdint.h>

#include "addr.h"
#include "dns_config.h"
#include "loop.h"

#define LL_RESOLVE_MAX 16 /* addresses a connection tries, at most */

typedef struct ll_resolver ll_resolver;
typedef struct ll_resolve_wait ll_resolve_wait;

/* The addresses to try (ll_xmalloc'd, the callee frees them; n >= 1), or
 * NULL with k6's error code (1100: the lookup failed; 1101: no address of
 * the IP versions the policy allows) and err, a static phrase. */
typedef void ll_resolve_fn(void *ud, ll_addr *addrs, int n, int code, const char *err);

/* A wait for a lookup, kept by the waiter (a connection being made). */
struct ll_resolve_wait {
    struct dns_entry *e;       /* the name waited for; NULL: not waiting */
    ll_resolve_wait *prev, *next;
    ll_resolve_fn *fn;
    void *ud;
    int port;
};

/* dns: the dns option (NULL: k6's defaults); it must outlive r. */
ll_resolver *ll_resolver_new(ll_loop *loop, const ll_dns_config *dns);
void ll_resolver_free(ll_resolver *r);
/* The addresses for host:port through connect_to (NULL-ended entries, or
 * NULL). Returns 0 with *addrs (ll_xmalloc'd) and *n when known now; 1
 * when w waits: fn(ud, ...) is called from the loop later, unless
 * ll_resolve_cancel(w) comes first; -1 with *code and *err. */
int ll_resolve(ll_resolver *r, char *const *connect_to, const char *host, int port, ll_resolve_wait *w,
               ll_resolve_fn *fn, void *ud, ll_addr **addrs, int *n, int *code, const char **err);
/* w waits no longer: no callback follows. Nothing when it was not waiting. */
void ll_resolve_cancel(ll_resolve_wait *w);

/* The order to try addrs (n of them, the name's addresses as resolved) in,
 * from the one select picks (pick: its draw, the round-robin count or a
 * random number): kept in out (at most LL_RESOLVE_MAX), their number
 * returned; 0 when the policy allows none of them. */
int ll_resolve_order(const ll_addr *addrs, int n, int policy, int select, uint64_t pick, ll_addr *out);

#endif
