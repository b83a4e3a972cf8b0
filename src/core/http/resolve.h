/* resolve.h -- where a native transport connects for a host and port:
 * options.hosts' entries first ("name:port:addr:port", an empty port
 * matching any, as libcurl's CONNECT_TO), then a cache of getaddrinfo's
 * answers (IPv4 preferred, as k6's dns.policy default), kept for
 * LL_RESOLVE_TTL_S like k6's dns.ttl. getaddrinfo blocks the worker's loop
 * once per name and TTL; addresses given as IP literals never reach it. */
#ifndef LL_RESOLVE_H
#define LL_RESOLVE_H

#include <stdint.h>
#include <sys/socket.h>

#define LL_RESOLVE_TTL_S 300

typedef struct ll_resolver ll_resolver;

typedef struct ll_addr {
    struct sockaddr_storage ss;
    socklen_t len;
} ll_addr;

ll_resolver *ll_resolver_new(void);
void ll_resolver_free(ll_resolver *r);
/* The address for host:port through connect_to (NULL-ended entries, or
 * NULL). Returns 0, or -1 with a static message in *err (no such host,
 * out of memory). now_s: a monotonic clock in seconds. */
int ll_resolve(ll_resolver *r, char *const *connect_to, const char *host, int port, uint64_t now_s, ll_addr *out,
               const char **err);

#endif
