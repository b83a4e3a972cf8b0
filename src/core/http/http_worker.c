/* http_worker.c -- a worker's transports, one per kind (see http_worker.h). */
#include "http_worker.h"

#include <string.h>

#include "transport_native.h"

void ll_http_worker_init(ll_http_worker *hw, ll_loop *loop, const ll_dns_config *dns) {
    memset(hw, 0, sizeof(*hw));
    hw->loop = loop;
    hw->dns = dns;
}

void ll_http_worker_free(ll_http_worker *hw) {
    for (int i = 0; i < hw->n; i++) hw->ops[i]->transport_free(hw->tps[i]);
    memset(hw, 0, sizeof(*hw));
}

ll_transport *ll_http_worker_transport(ll_http_worker *hw, const ll_transport_ops *ops) {
    for (int i = 0; i < hw->n; i++)
        if (hw->ops[i] == ops) return hw->tps[i];
    if (hw->n == LL_HTTP_MAX_TRANSPORTS) return NULL;
    ll_transport *tp = ops->transport_new(hw->loop, hw->dns);
    if (!tp) return NULL;
    hw->ops[hw->n] = ops;
    hw->tps[hw->n++] = tp;
    return tp;
}

ll_resolver *ll_http_worker_dns(ll_http_worker *hw) {
    ll_transport *tp = ll_http_worker_transport(hw, &ll_transport_native);
    return tp ? ll_transport_native_dns(tp) : NULL;
}
