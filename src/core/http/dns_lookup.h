/* dns_lookup.h -- name lookups that never block a worker: c-ares queries
 * (/etc/hosts first, then the servers of /etc/resolv.conf, as
 * nsswitch.conf orders them), their sockets and timeouts driven by the
 * worker's event loop. A query cannot be taken back: who no longer wants
 * an answer ignores it (resolve.c keeps the answer in its cache). The only
 * c-ares user. */
#ifndef LL_DNS_LOOKUP_H
#define LL_DNS_LOOKUP_H

#include "addr.h"
#include "loop.h"

typedef struct ll_dns_lookup ll_dns_lookup;

/* The answer: err NULL and n >= 1 addresses (port 0, in the order c-ares
 * gave them; fn owns addrs and frees it), or err, a static phrase ("no
 * such host", "i/o timeout", ...) and no addresses. */
typedef void ll_dns_lookup_fn(void *ud, const char *err, ll_addr *addrs, int n);

/* The channel is made on the first query (it reads resolv.conf then). */
ll_dns_lookup *ll_dns_lookup_new(ll_loop *loop);
/* Pending queries end without their callbacks. */
void ll_dns_lookup_free(ll_dns_lookup *d);
/* Looks up host's IPv4 and IPv6 addresses. fn is called once: from the
 * loop, or before this returns (an answer from /etc/hosts, or a failure
 * to start). */
/* The c-ares the binary runs with ("1.18.1"). */
const char *ll_dns_lookup_version(void);
void ll_dns_lookup_query(ll_dns_lookup *d, const char *host, ll_dns_lookup_fn *fn, void *ud);

#endif
