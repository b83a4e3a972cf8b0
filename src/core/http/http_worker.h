/* http_worker.h -- a worker's HTTP side: its event loop and one transport
 * of each kind its Clients use, made on first use. */
#ifndef LL_HTTP_WORKER_H
#define LL_HTTP_WORKER_H

#include "resolve.h"
#include "transport.h"

#define LL_HTTP_MAX_TRANSPORTS 4

typedef struct ll_http_worker {
    ll_loop *loop;
    const ll_dns_config *dns;  /* the run's dns option */
    const ll_transport_ops *ops[LL_HTTP_MAX_TRANSPORTS];
    ll_transport *tps[LL_HTTP_MAX_TRANSPORTS];
    int n;
} ll_http_worker;

/* dns: the run's dns option (NULL: k6's defaults); it outlives hw. */
void ll_http_worker_init(ll_http_worker *hw, ll_loop *loop, const ll_dns_config *dns);
void ll_http_worker_free(ll_http_worker *hw);
/* The worker's transport of kind ops; NULL when it cannot be made. */
ll_transport *ll_http_worker_transport(ll_http_worker *hw, const ll_transport_ops *ops);
/* The worker's resolver (its native transport's, made on first use), for
 * what dials outside a transport (a WebSocket); NULL when it cannot be made. */
ll_resolver *ll_http_worker_dns(ll_http_worker *hw);

#endif
