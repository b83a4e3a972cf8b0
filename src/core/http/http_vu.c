/* http_vu.c -- a VU's transfers by lane and client slot, its scratch
 * requests and its cookie jar (see http_vu.h). */
#include "http_vu.h"

#include <stdlib.h>
#include <string.h>

#include "redirect.h"
#include "xmalloc.h"

static void drop(ll_http_lane *ln, int slot) {
    ll_transfer *x = ln->xfers[slot];
    if (x) x->tp->ops->transfer_free(x);
    ln->xfers[slot] = NULL;
    ln->owners[slot] = 0;
    ln->per_iteration[slot] = 0;
}

static void lane_free(ll_http_lane *ln) {
    for (int i = 0; i < ln->n; i++) drop(ln, i);
    free(ln->xfers);
    free(ln->owners);
    free(ln->per_iteration);
}

/* 0: the client's own version; 1..3: HTTP/1.1, 2, 3 asked for instead;
 * each once per transport (a client's http:// and https:// requests may
 * go through different ones) */
static int variant_of(int http_version, const ll_client_opts *opts, const ll_transport *tp) {
    int v = http_version < 0 || http_version == opts->http_version ? 0
          : http_version == LL_HTTP_1_1 ? 1 : http_version == LL_HTTP_2 ? 2 : 3;
    return v + 4 * tp->ops->slot;
}

static void lanes_grow(ll_http_vu *hv, int lane) {
    if (lane < hv->nlanes) return;
    hv->lanes = ll_xrealloc(hv->lanes, (size_t)(lane + 1) * sizeof(*hv->lanes));
    memset(hv->lanes + hv->nlanes, 0, (size_t)(lane + 1 - hv->nlanes) * sizeof(*hv->lanes));
    hv->nlanes = lane + 1;
}

int ll_http_vu_lane_take(ll_http_vu *hv) {
    int lane = 0;
    while (lane < hv->nlanes && hv->lanes[lane].busy) lane++;
    lanes_grow(hv, lane);
    hv->lanes[lane].busy = 1;
    return lane;
}

void ll_http_vu_lane_give(ll_http_vu *hv, int lane) {
    if (lane >= 0 && lane < hv->nlanes) hv->lanes[lane].busy = 0;
}

ll_transfer *ll_http_vu_transfer(ll_http_vu *hv, ll_transport *tp, int vu_index, int lane, int client_slot,
                                 uint64_t uid, int http_version, const ll_client_opts *opts) {
    int variant = variant_of(http_version, opts, tp);
    int slot = client_slot * LL_HTTP_VARIANTS + variant;
    lanes_grow(hv, lane);
    ll_http_lane *ln = &hv->lanes[lane];
    if (slot >= ln->n) {
        int n = slot + 4;
        ln->xfers = ll_xrealloc(ln->xfers, (size_t)n * sizeof(*ln->xfers));
        ln->owners = ll_xrealloc(ln->owners, (size_t)n * sizeof(*ln->owners));
        ln->per_iteration = ll_xrealloc(ln->per_iteration, (size_t)n);
        for (int i = ln->n; i < n; i++) {
            ln->xfers[i] = NULL;
            ln->owners[i] = 0;
            ln->per_iteration[i] = 0;
        }
        ln->n = n;
    }
    /* a collected client's, or the same client's on another transport */
    if (ln->xfers[slot] && (ln->owners[slot] != uid || ln->xfers[slot]->tp != tp)) drop(ln, slot);
    if (!ln->xfers[slot]) { /* the client's options, with the VU's source address */
        ll_client_opts o = *opts;
        if (hv->local.len) o.local_addr = &hv->local;
        if (variant % 4) { /* and with that version */
            ll_client_opts ov = o;
            ov.http_version = http_version;
            ln->xfers[slot] = tp->ops->transfer_new(tp, vu_index, uid * LL_HTTP_VARIANTS + (uint64_t)variant, &ov);
        }
        if (!ln->xfers[slot]) ln->xfers[slot] = tp->ops->transfer_new(tp, vu_index, uid * LL_HTTP_VARIANTS, &o);
        ln->owners[slot] = uid;
        ln->per_iteration[slot] = (char)opts->no_vu_reuse;
    }
    return ln->xfers[slot];
}

void ll_http_vu_close_client(ll_http_vu *hv, int client_slot, uint64_t uid) {
    for (int l = 0; l < hv->nlanes; l++) {
        ll_http_lane *ln = &hv->lanes[l];
        if (ln->busy) continue; /* a request in flight keeps its connection */
        for (int v = 0; v < LL_HTTP_VARIANTS; v++) {
            int slot = client_slot * LL_HTTP_VARIANTS + v;
            if (slot < ln->n && ln->owners[slot] == uid) drop(ln, slot);
        }
    }
}

/* A cleared, initialised scratch request in *slot, made on first use. */
ll_http_req *ll_http_scratch(ll_http_req **slot) {
    if (!*slot) *slot = ll_xcalloc(1, sizeof(**slot));
    ll_http_req_clear(*slot);
    ll_http_req_init(*slot);
    return *slot;
}

void ll_http_scratch_free(ll_http_req **slot) {
    if (*slot) ll_http_req_clear(*slot);
    free(*slot);
    *slot = NULL;
}

void ll_http_call_free(ll_http_call *c) {
    ll_http_scratch_free(&c->hops[0]);
    ll_http_scratch_free(&c->hops[1]);
}

ll_http_req *ll_http_vu_oneoff(ll_http_vu *hv) { return ll_http_scratch(&hv->oneoff); }

ll_http_req *ll_http_vu_hop(ll_http_call *call, const ll_http_req *current) {
    return ll_http_scratch(&call->hops[call->hops[0] && call->hops[0] == current ? 1 : 0]);
}

void ll_http_vu_batch(ll_http_vu *hv, int n) {
    if (n > hv->cap_batch) {
        hv->batch = ll_xrealloc(hv->batch, (size_t)n * sizeof(*hv->batch));
        hv->batch_reqs = ll_xrealloc(hv->batch_reqs, (size_t)n * sizeof(*hv->batch_reqs));
        memset(hv->batch + hv->cap_batch, 0, (size_t)(n - hv->cap_batch) * sizeof(*hv->batch));
        for (int i = hv->cap_batch; i < n; i++) ll_http_req_init(&hv->batch_reqs[i]);
        hv->cap_batch = n;
    }
    for (int i = 0; i < n; i++) {
        ll_http_req_clear(&hv->batch_reqs[i]);
        ll_http_req_init(&hv->batch_reqs[i]);
    }
    hv->nbatch = n;
}

void ll_http_vu_new_iteration(ll_http_vu *hv) {
    ll_cookie_jar_reset(&hv->jar);
    for (int l = 0; l < hv->nlanes; l++) {
        ll_http_lane *ln = &hv->lanes[l];
        for (int i = 0; i < ln->n; i++)
            if (ln->per_iteration[i]) drop(ln, i); /* its pool, and the connection, go with it */
    }
}

const char *ll_http_vu_cookie(ll_http_vu *hv, const ll_http_req *req, int64_t now) {
    free(hv->cookie);
    hv->cookie = NULL;
    ll_url u;
    if (hv->jar.n == 0 || ll_url_parse(&u, req->url) < 0) return NULL;
    ll_cookie_jar_header(&hv->jar, &u, now, (const char *const *)req->replace_cookies, &hv->cookie);
    ll_url_free(&u);
    return hv->cookie;
}

void ll_http_vu_store_cookies(ll_http_vu *hv, const char *url, const ll_http_res *r, int64_t now) {
    size_t pos = 0, len = 0;
    const char *v;
    ll_url u;
    int parsed = 0;
    if (r->no_cookies) return;
    while ((v = ll_http_header_next(r->headers, r->headers_len, "Set-Cookie", &pos, &len))) {
        if (!parsed && ll_url_parse(&u, url) < 0) return;
        parsed = 1;
        ll_cookie_jar_store(&hv->jar, v, len, &u, now);
    }
    if (parsed) ll_url_free(&u);
}

void ll_http_vu_free(ll_http_vu *hv) {
    for (int i = 0; i < hv->nlanes; i++) lane_free(&hv->lanes[i]);
    free(hv->lanes);
    ll_http_scratch_free(&hv->oneoff);
    ll_http_call_free(&hv->call);
    for (int i = 0; i < hv->cap_batch; i++) {
        ll_http_call_free(&hv->batch[i]);
        ll_http_req_clear(&hv->batch_reqs[i]);
    }
    free(hv->batch);
    free(hv->batch_reqs);
    ll_cookie_jar_free(&hv->jar);
    free(hv->cookie);
    memset(hv, 0, sizeof(*hv));
}
