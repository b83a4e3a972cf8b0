/* ip_pool.h -- a pool of source addresses, as k6's --local-ips: a comma-
 * separated list of addresses ("10.0.0.10"), ranges ("10.0.0.20-10.0.0.30")
 * and CIDR blocks ("10.0.1.0/27", IPv4 ones without their network and
 * broadcast addresses when larger than /31), IPv4 or IPv6. The i-th address
 * is computed, never listed, so a /8 costs what one address does. */
#ifndef LL_IP_POOL_H
#define LL_IP_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"

typedef unsigned __int128 ll_ip_u128;

typedef struct ll_ip_block {
    int v6;
    ll_ip_u128 first;          /* its first address */
    ll_ip_u128 end;            /* the pool's count up to and including it */
} ll_ip_block;

typedef struct ll_ip_pool {
    ll_ip_block *blocks;
    int n;
    ll_ip_u128 total;
} ll_ip_pool;

/* Parses text into p (zeroed first). Returns 0, or -1 with what is wrong
 * in err ("'10.0.0.x' is not an IP address, range or CIDR"). */
int ll_ip_pool_parse(ll_ip_pool *p, const char *text, char *err, size_t errlen);
void ll_ip_pool_free(ll_ip_pool *p);
/* The address at index modulo the pool's size, port 0. */
void ll_ip_pool_get(const ll_ip_pool *p, uint64_t index, ll_addr *out);

#endif
