/* http_vu.c -- a VU's transfers by client slot (see http_vu.h). */
#include "http_vu.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

static void drop(ll_http_vu *hv, int slot) {
    ll_transfer *x = hv->xfers[slot];
    if (x) x->tp->ops->transfer_free(x);
    hv->xfers[slot] = NULL;
    hv->owners[slot] = 0;
}

ll_transfer *ll_http_vu_transfer(ll_http_vu *hv, ll_transport *tp, int vu_index, int slot, uint64_t uid,
                                 const ll_client_opts *opts) {
    if (slot >= hv->n) {
        int n = slot + 4;
        hv->xfers = ll_xrealloc(hv->xfers, (size_t)n * sizeof(*hv->xfers));
        hv->owners = ll_xrealloc(hv->owners, (size_t)n * sizeof(*hv->owners));
        for (int i = hv->n; i < n; i++) {
            hv->xfers[i] = NULL;
            hv->owners[i] = 0;
        }
        hv->n = n;
    }
    /* a collected client's, or the same client's on another transport */
    if (hv->xfers[slot] && (hv->owners[slot] != uid || hv->xfers[slot]->tp != tp)) drop(hv, slot);
    if (!hv->xfers[slot]) {
        hv->xfers[slot] = tp->ops->transfer_new(tp, vu_index, opts);
        hv->owners[slot] = uid;
    }
    return hv->xfers[slot];
}

ll_http_req *ll_http_vu_oneoff(ll_http_vu *hv) {
    if (!hv->oneoff) hv->oneoff = ll_xcalloc(1, sizeof(*hv->oneoff));
    ll_http_req_clear(hv->oneoff);
    ll_http_req_init(hv->oneoff);
    return hv->oneoff;
}

void ll_http_vu_free(ll_http_vu *hv) {
    for (int i = 0; i < hv->n; i++) drop(hv, i);
    free(hv->xfers);
    free(hv->owners);
    if (hv->oneoff) ll_http_req_clear(hv->oneoff);
    free(hv->oneoff);
    memset(hv, 0, sizeof(*hv));
}
