/* transport_curl.c -- the libcurl transport behind transport.h: its table,
 * the transport (one per worker) and its transfers, made, started,
 * cancelled and freed.
 *
 * Each worker's transport owns its multi handles, one per 16 VUs
 * (LL_CURL_VUS_PER_MULTI: libcurl's connection-pool lookup is linear in the
 * connections of one multi handle), made as VUs first ask for them and all
 * driven by the worker's one epoll loop (curl_pool.c). Each transfer keeps
 * its easy handle, so a VU keeps its keep-alive connection; per-request
 * options are only re-applied when the VU sends a different prepared
 * request than last time (curl_request.c); the response is read by
 * curl_response.c. curl_global_init is called once for the process, here. */
#include "transport_curl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>

#include "http_debug.h"
#include "curl_internal.h"
#include "xmalloc.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

const char *ll_transport_curl_version(void) { return curl_version(); }

static ll_transport *curl_transport_new(ll_loop *loop, const ll_dns_config *dns) {
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) return NULL;
    curl_transport *tp = ll_xcalloc(1, sizeof(*tp));
    tp->base.ops = &ll_transport_curl;
    tp->base.loop = loop;
    tp->dns = dns;
    return &tp->base;
}

static void curl_transport_free(ll_transport *base) {
    curl_transport *tp = (curl_transport *)base;
    if (!tp) return;
    for (int i = 0; i < tp->nmultis; i++) curl_pool_free(tp, tp->multis[i]); /* transfers went first */
    free(tp->multis);
    free(tp->socks);
    free(tp);
}

/* ---- transfers ---- */

/* Buffers over this size are freed once their response was copied out. */
#define KEEP_BUFFER_BYTES (256u << 10)

static void curl_transfer_release(ll_transfer *base) {
    curl_transfer *x = (curl_transfer *)base;
    if (x->body.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->body);
    if (x->hdrs.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->hdrs);
    x->res.body = x->res.headers = "";
    x->res.body_len = x->res.headers_len = 0;
}

static int curl_transfer_cancel(ll_transfer *base, int64_t *bytes_sent) {
    curl_transfer *x = (curl_transfer *)base;
    *bytes_sent = 0;
    if (!x->active) return 0;
    long req_size = 0; /* grows as the request goes out */
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);
    *bytes_sent = x->attempts ? req_size : 0;
    curl_multi_remove_handle(x->mc->multi, x->easy);
    x->active = 0;
    return x->attempts;
}

static void curl_transfer_free(ll_transfer *base) {
    curl_transfer *x = (curl_transfer *)base;
    if (!x) return;
    int64_t sent;
    curl_transfer_cancel(base, &sent);
    if (x->easy) curl_easy_cleanup(x->easy);
    curl_mime_free(x->mime); /* after the handle that used it */
    free(x->cursors);
    curl_pool_unref((curl_transport *)base->tp, x->mc);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    curl_slist_free_all(x->ua);
    curl_slist_free_all(x->ua_body);
    curl_slist_free_all(x->hlist);
    curl_slist_free_all(x->connect_to);
    curl_slist_free_all(x->sni_route);
    free(x->server_name);
    curl_free(x->sni_url);
    free(x->sni_host);
    free(x->cookie_applied);
    free(x);
}

static ll_transfer *curl_transfer_new(ll_transport *base, int vu_index, uint64_t pool, const ll_client_opts *o) {
    curl_transport *tp = (curl_transport *)base;
    int group = o->multiplex ? 0 : o->no_vu_reuse ? vu_index : vu_index / LL_CURL_VUS_PER_MULTI;
    multi_ctx *mc = curl_pool_of(tp, pool, group, o);
    if (!mc) return NULL;
    curl_transfer *x = ll_xcalloc(1, sizeof(*x));
    x->base.tp = base;
    x->mc = mc;
    x->tls_version = x->tls_cipher = "";
    x->version_applied = -1;
    x->easy = curl_easy_init();
    if (!x->easy) {
        curl_pool_unref(tp, mc);
        free(x);
        return NULL;
    }
    if (curl_request_init(x, o, tp->dns) != 0) { /* out of memory */
        curl_transfer_free(&x->base);
        return NULL;
    }
    return &x->base;
}

/* 1 when the jar's cookie differs from the one in the header list */
static int curl_transfer_start(ll_transfer *base, const ll_http_req *req, const char *method, const char *cookie,
                               ll_transfer_done_fn *fn, void *ud, const char **err) {
    curl_transfer *x = (curl_transfer *)base;
    int changed = ll_transfer_begin(x->active, x->req_id, x->applied_method, x->cookie_applied, req, method, cookie, err);
    if (changed < 0) return -1;
    if (changed && curl_request_apply(x, req, method, cookie) < 0) {
        x->req_id = 0;
        *err = "out of memory building the request headers";
        return -1;
    }
    if (!changed && x->dyn_node && x->dyn_gen != req->dyn_gen && curl_request_update_dyn(x, req) < 0) {
        x->req_id = 0;
        *err = "out of memory building the request headers";
        return -1;
    }
    if (x->http_debug && x->ua) ll_http_debug_request(x->http_debug, req, method, cookie, x->ua->data + 12);
    x->base.req = req;
    x->base.method = method;
    x->fn = fn;
    x->ud = ud;
    x->body.len = 0;
    x->hdrs.len = 0;
    x->body_bytes = 0;
    x->header_bytes = 0;
    x->body_pos = 0;
    for (int i = 0; x->mime && i < x->ncursors; i++) x->cursors[i].pos = 0;
    x->errbuf[0] = 0;
    x->t_pre = x->t_first = x->t_last = 0;
    x->attempts = 0;
    x->too_big = 0;
    x->chunk_stopped = NULL;
    x->chunk_done = 0;
    x->head_open = 0;
    x->tls_version = x->tls_cipher = "";
    x->t_start = ll_loop_now_ns();
    CURLMcode mc = curl_multi_add_handle(x->mc->multi, x->easy);
    if (mc != CURLM_OK) {
        *err = curl_multi_strerror(mc);
        return -1;
    }
    x->active = 1;
    return 0;
}

static int curl_supports(int v) {
    const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);
    if (v == LL_HTTP_3) return (d->features & CURL_VERSION_HTTP3) != 0;
    if (v == LL_HTTP_2) return (d->features & CURL_VERSION_HTTP2) != 0;
    return 1;
}

/* libcurl does not say where a transfer stands; its own clock does: the
 * first byte of the response, or the request about to go out. */
static const char *curl_transfer_phase(ll_transfer *base, uint64_t *since_ns) {
    curl_transfer *x = (curl_transfer *)base;
    if (!x->active) return NULL;
    *since_ns = x->t_start;
    return x->t_first ? "reading the response" : x->t_pre ? "waiting for the response" : "connecting";
}

const ll_transport_ops ll_transport_curl = {
    .name = "curl",
    .slot = 1,
    .transport_new = curl_transport_new,
    .transport_free = curl_transport_free,
    .transfer_new = curl_transfer_new,
    .transfer_free = curl_transfer_free,
    .start = curl_transfer_start,
    .cancel = curl_transfer_cancel,
    .release = curl_transfer_release,
    .supports = curl_supports,
    .phase = curl_transfer_phase,
};
