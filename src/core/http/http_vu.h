/* http_vu.h -- a VU's HTTP side: one transfer (its connection slot) per
 * http.Client, and the scratch request of its one-off calls. The VU knows
 * it only to free it; waits on a transfer are cancelled through the VU's
 * pending-operation slot. */
#ifndef LL_HTTP_VU_H
#define LL_HTTP_VU_H

#include <stdint.h>

#include "http_worker.h"

typedef struct ll_http_vu {
    ll_transfer **xfers;       /* by client slot */
    uint64_t *owners;          /* the client (uid) each transfer was made for */
    int n;
    ll_http_req *oneoff;       /* scratch request of one-off http calls */
    ll_transfer *inflight;     /* the transfer its request is waiting on */
} ll_http_vu;

/* The VU's transfer for a client: slot is reused by later clients once a
 * client is collected, uid tells them apart. vu_index is the VU's index in
 * its worker. NULL when the transport cannot make one. */
ll_transfer *ll_http_vu_transfer(ll_http_vu *hv, ll_transport *tp, int vu_index, int slot, uint64_t uid,
                                 const ll_client_opts *opts);
/* The one-off scratch request, cleared and initialised for a new call. */
ll_http_req *ll_http_vu_oneoff(ll_http_vu *hv);
void ll_http_vu_free(ll_http_vu *hv);

#endif
