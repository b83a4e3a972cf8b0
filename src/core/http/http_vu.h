/* http_vu.h -- a VU's HTTP side: one transfer (its connection slot) per
 * http.Client, the scratch requests of its one-off calls and redirect
 * hops, and its cookie jar (k6's: one per VU, emptied at each iteration).
 * The VU knows it only to free it and to start iterations; waits on a
 * transfer are cancelled through the VU's pending-operation slot. */
#ifndef LL_HTTP_VU_H
#define LL_HTTP_VU_H

#include <stdint.h>

#include "cookie_jar.h"
#include "http_worker.h"

/* One request of a VU in flight, from its first hop to its response. */
typedef struct ll_http_call {
    void *owner;               /* the VU (for the completion) */
    void *waiter;              /* who waits for it (lua_api: the VU's task) */
    ll_transfer *x;            /* the transfer it is in flight on; NULL: none */
    ll_http_req *hops[2];      /* its redirect hops, alternating */
    int redirects_left;        /* hops it may still follow */
    int challenged;            /* a Digest challenge was answered (once per call) */
    int discard;               /* its client discards bodies by default */
    int index;                 /* 1-based place in an http.batch; 0: alone */
    int lane;                  /* the lane its transfer is on */
    int anchor_ref;            /* a registry reference (lua_api) to what its body is
                                * read from while it is in flight; 0: none */
} ll_http_call;

/* Connection slots of a client: its own HTTP version, and one for each
 * version a request may ask for instead (their connections are never
 * shared: libcurl would send an HTTP/2 request on an HTTP/1.1 connection). */
#define LL_HTTP_VARIANTS (4 * LL_TRANSPORT_SLOTS)

/* A set of connection slots, LL_HTTP_VARIANTS per client slot. */
typedef struct ll_http_lane {
    ll_transfer **xfers;       /* by client slot * LL_HTTP_VARIANTS + variant */
    uint64_t *owners;          /* the client (uid) each transfer was made for */
    char *per_iteration;       /* its client's connections last one iteration */
    int n;
    int busy;                  /* a request is in flight on it (ll_http_vu_lane_take) */
} ll_http_lane;

typedef struct ll_http_vu {
    ll_http_lane *lanes;       /* 0: the VU's connections; more: http.batch's */
    int nlanes;
    ll_http_req *oneoff;       /* scratch request of one-off http calls */
    ll_http_call call;         /* its request, when alone */
    ll_http_call *batch;       /* the requests of its http.batch */
    ll_http_req *batch_reqs;   /* and their scratch requests */
    int nbatch, cap_batch;
    void *batch_ud;            /* the batch in flight (lua_api's), or NULL */
    ll_cookie_jar jar;
    char *cookie;              /* the jar's Cookie value for the last request */
    ll_addr local;             /* the source address of its connections (--local-ips), len 0: any */
} ll_http_vu;

/* The VU's transfer for a client on a lane (0: its own connection; an
 * http.batch runs on lanes 0..n-1): slot is reused by later clients once
 * a client is collected, uid tells them apart. http_version: the one the
 * request asks for (LL_HTTP_*, -1: the client's); another than the
 * client's gets a transfer and a connection pool of its own. vu_index is
 * the VU's index in its worker. NULL when the transport cannot make one. */
ll_transfer *ll_http_vu_transfer(ll_http_vu *hv, ll_transport *tp, int vu_index, int lane, int slot, uint64_t uid,
                                 int http_version, const ll_client_opts *opts);
/* Closes the VU's connections of the client of slot and uid (grpc's
 * close()): its transfers on the lanes with no request in flight go. */
void ll_http_vu_close_client(ll_http_vu *hv, int client_slot, uint64_t uid);
/* A lane with no request in flight, marked busy until given back: the
 * lowest free (0 for a VU whose requests go one at a time, so its
 * connections are lane 0's); its connections stay for the next request
 * that takes it. */
int ll_http_vu_lane_take(ll_http_vu *hv);
void ll_http_vu_lane_give(ll_http_vu *hv, int lane);
/* n calls and n cleared, initialised scratch requests for an http.batch
 * (hv->batch, hv->batch_reqs). */
void ll_http_vu_batch(ll_http_vu *hv, int n);
/* The request in *slot (made when NULL), cleared and initialised for a new
 * call; and freed. */
ll_http_req *ll_http_scratch(ll_http_req **slot);
void ll_http_scratch_free(ll_http_req **slot);
/* Frees what a call keeps (its redirect hops). */
void ll_http_call_free(ll_http_call *c);
/* The one-off scratch request, cleared and initialised for a new call. */
ll_http_req *ll_http_vu_oneoff(ll_http_vu *hv);
void ll_http_vu_free(ll_http_vu *hv);
/* A new iteration: the jar starts empty, and the connections of clients
 * with no_vu_reuse are closed. */
void ll_http_vu_new_iteration(ll_http_vu *hv);
/* The jar's Cookie header value for req at now (kept until the next call),
 * without the cookies req replaces; NULL when no cookie goes there. */
const char *ll_http_vu_cookie(ll_http_vu *hv, const ll_http_req *req, int64_t now);
/* Stores the Set-Cookie headers of r, the response to url, in the jar. */
void ll_http_vu_store_cookies(ll_http_vu *hv, const char *url, const ll_http_res *r, int64_t now);
/* A cleared, initialised scratch request of call for the next redirect
 * hop, other than current (which may be the previous hop's). */
ll_http_req *ll_http_vu_hop(ll_http_call *call, const ll_http_req *current);

#endif
