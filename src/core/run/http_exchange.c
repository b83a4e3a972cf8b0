/* http_exchange.c -- one HTTP request of a VU on the wire, whoever made
 * it (a script's http call, quick mode's native loop): the transfer it
 * goes on, k6's HTTP metrics of each response with their tags (and a
 * failed request counted by message in its worker's table), and the next
 * hop of a redirect. */
#include "http_exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_debug.h"
#include "http_error.h"
#include "redirect.h"
#include "auth_digest.h"
#include "worker.h"

ll_transfer *ll_http_exchange_transfer(ll_vu *vu, int lane, int slot, uint64_t uid, const ll_http_req *req,
                                       const ll_client_opts *opts) {
    const ll_transport_ops *ops = ll_transport_pick(opts, req, vu->w->run->transport);
    ll_transport *tp = ll_http_worker_transport(&vu->w->http, ops);
    return tp ? ll_http_vu_transfer(&vu->http, tp, vu->index, lane, slot, uid, req->http_version, opts) : NULL;
}

/* The tags of an HTTP sample, k6's names: the request's own tags first,
 * then method, status, url, name (the URL unless tagged), proto, group,
 * expected_response and error_code. */
typedef struct http_sample {
    const ll_http_req *req;
    const char *method;
    const ll_http_res *res;
    const ll_vu *vu;
    int failed;                 /* not an expected status */
    int counted;                /* a response callback is in force (k6's
                                 * setResponseCallback(nil) turns it off) */
} http_sample;

/* Whether r is a failed request: outside e's statuses, or without e
 * k6's default (a status from 200 to 399). */
static int http_failed(const ll_http_expected *e, const ll_http_res *r) {
    if (e) return !ll_http_expected_has(e, r->status);
    return r->status < 200 || r->status >= 400;
}

static const char *http_tag(const void *ctx, const char *key, char *buf, size_t len) {
    const http_sample *h = ctx;
    const char *user = ll_http_req_tag(h->req, key);
    if (user) return user;
    const ll_http_res *r = h->res;
    switch (key[0]) { /* a system tag? by its first letter, then the whole name */
    case 'm':
        if (strcmp(key, "method") == 0) return h->method;
        break;
    case 'u':
    case 'n':
        if (strcmp(key, "url") == 0 || strcmp(key, "name") == 0) return h->req->url;
        break;
    case 'p':
        if (strcmp(key, "proto") == 0) return r->proto;
        break;
    case 'g':
        if (strcmp(key, "group") == 0) return h->vu->group_path;
        break;
    case 's':
        if (strcmp(key, "status") != 0) break;
        snprintf(buf, len, "%d", r->status);
        return buf;
    case 'e':
        if (strcmp(key, "expected_response") == 0) return !h->counted ? NULL : h->failed ? "false" : "true";
        if (strcmp(key, "error_code") != 0 || !r->error_code) break;
        snprintf(buf, len, "%d", r->error_code);
        return buf;
    default:
        break;
    }
    return ll_vu_tag(h->vu, key);
}

static void http_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    static const char *const keys[] = {"method", "status", "url", "name", "proto", "group", "expected_response",
                                       "error_code"};
    const http_sample *h = ctx;
    char buf[32];
    for (int i = 0; i < h->req->ntags; i++) fn(ud, h->req->tags[2 * i], h->req->tags[2 * i + 1]);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (ll_http_req_tag(h->req, keys[i])) continue;
        const char *v = http_tag(ctx, keys[i], buf, sizeof(buf));
        /* group "" outside groups, as k6's samples carry it */
        if (v && (*v || strcmp(keys[i], "group") == 0)) fn(ud, keys[i], v);
    }
    ll_vu_tags(h->vu, fn, ud);
}

/* Requests that reached the server without a response of their own: each
 * is one failed request with error_code (no timings); bytes_sent of them
 * went out (a request cut off mid-upload) and count in data_sent. */
void ll_http_exchange_lost(ll_vu *vu, const ll_http_req *req, const char *method, const ll_http_res *r, int n,
                           int error_code, int64_t bytes_sent, const ll_http_judge *j) {
    ll_http_res lost = *r;
    lost.status = 0;
    lost.proto = "";
    lost.error_code = error_code;
    http_sample h = {req, method, &lost, vu, 1, j->counted};
    h.failed = http_failed(j->expected, &lost);
    ll_tag_source t = {http_tag, http_list, &h, -1, 0};
    const char *name = vu->w->run->tally_names ? ll_http_req_tag(req, "name") : NULL;
    for (int i = 0; i < n; i++) {
        ll_worker_count_response(vu->w, 0, error_code);
        if (vu->w->run->tally_names) ll_tally_name_add(&vu->w->tally, name ? name : req->url, h.counted && h.failed, -1);
        ll_shard_add(vu->w->shard, LL_M_HTTP_REQS, 1, &t);
        if (h.counted) ll_shard_rate(vu->w->shard, LL_M_HTTP_REQ_FAILED, 1, &t);
    }
    if (bytes_sent > 0) ll_shard_add(vu->w->shard, LL_M_DATA_SENT, (double)bytes_sent, &t);
}

/* A request of setup() or teardown() that got no response, told at once
 * (k6's "Request Failed" warning): the run's end may come from the script's
 * own error about it, which would hide the cause. The first few only. */
static void warn_call_failed(ll_worker *w, const char *method, const ll_http_req *req, const ll_http_res *r) {
    if (++w->call_failed_reqs > LL_WORKER_CALL_WARNINGS) return;
    fprintf(stderr, "luaload: WARN %s(): request failed: %s %s: %s (error_code %d)\n",
            w->call_name ? w->call_name : "setup", method, req->url, *r->error ? r->error : "no response",
            r->error_code);
}

/* A failed request in its worker's table of errors by message (for the
 * report at the end): the transport's error, or the status. Only failed
 * requests come here. */
static void count_failed(ll_worker *w, const ll_http_res *r) {
    char msg[320], why[256];
    if (r->status) {
        snprintf(msg, sizeof(msg), "HTTP %d", r->status);
    } else {
        ll_http_error_normalize(why, sizeof(why), *r->error ? r->error : "request failed");
        snprintf(msg, sizeof(msg), "%s (error_code %d)", why, r->error_code);
    }
    ll_errors_count(&w->http_errors, msg, 1, LL_WORKER_HTTP_ERRORS_MAX);
}

void ll_http_exchange_record(ll_vu *vu, const ll_http_req *req, const char *method, const ll_http_res *r,
                             const ll_http_judge *j) {
    ll_shard *s = vu->w->shard;
    http_sample h = {req, method, r, vu, 1, j->counted};
    int failed = h.failed = http_failed(j->expected, r);
    ll_tag_source t = {http_tag, http_list, &h, -1, 0};
    ll_worker_count_response(vu->w, r->status, r->error_code);
    if (vu->w->run->http_debug) ll_http_debug_response(vu->w->run->http_debug, r);
    if (vu->w->run->tally_names) {
        const char *name = ll_http_req_tag(req, "name");
        ll_tally_name_add(&vu->w->tally, name ? name : req->url, h.counted && failed, r->t.duration);
    }
    ll_shard_add(s, LL_M_HTTP_REQS, 1, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_DURATION, r->t.duration, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_BLOCKED, r->t.blocked, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_CONNECTING, r->t.connecting, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_TLS_HANDSHAKING, r->t.tls_handshaking, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_SENDING, r->t.sending, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_WAITING, r->t.waiting, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_RECEIVING, r->t.receiving, &t);
    if (h.counted) ll_shard_rate(s, LL_M_HTTP_REQ_FAILED, failed, &t);
    ll_shard_add(s, LL_M_DATA_SENT, (double)r->bytes_sent, &t);
    ll_shard_add(s, LL_M_DATA_RECEIVED, (double)r->bytes_received, &t);
    if (r->zero_rtt) ll_shard_add(s, LL_M_HTTP_REQ_ZERO_RTT, 1, &t);
    if (failed && (h.counted || r->status == 0)) count_failed(vu->w, r);
    if (r->status == 0 && vu->w->single) warn_call_failed(vu->w, method, req, r);
    /* attempts the transport sent again on a fresh connection after the
     * server closed the reused one: k6's 1220, connection reset */
    if (!r->retries) return;
    ll_http_exchange_lost(vu, req, method, r, r->retries, 1220, 0, j);
    ll_errors_count(&vu->w->http_errors,
                    "the server closed a reused connection before the response; sent again (error_code 1220)",
                    r->retries, LL_WORKER_HTTP_ERRORS_MAX);
}

/* Sends the next hop when r, the response to req, is a redirect the
 * request may still follow; 1 when it went. */
int ll_http_exchange_follow(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_req *req,
                            const char *method, const ll_http_res *r, ll_transfer_done_fn *on_done) {
    if (!ll_redirect_status(r->status) || call->redirects_left <= 0) return 0;
    ll_http_req *next = ll_http_vu_hop(call, req);
    const char *m = NULL, *err = NULL;
    if (ll_redirect_next(req, method, r, next, &m) <= 0) return 0; /* no Location: the 3xx is the answer */
    call->redirects_left--;
    x->tp->ops->release(x);
    const char *cookie = ll_http_vu_cookie(&vu->http, next, (int64_t)time(NULL));
    if (x->tp->ops->start(x, next, m, cookie, on_done, call, &err) < 0) return 0;
    call->x = x;
    return 1;
}


/* What x, cut off, was doing, in its worker's table for the end of the run
 * ("a request to URL, in the TLS handshake"), and for how long. */
static void note_cut(ll_worker *w, ll_transfer *x) {
    uint64_t since = 0;
    const char *phase = x->tp->ops->phase ? x->tp->ops->phase(x, &since) : NULL;
    if (!phase || !x->req) return;
    char msg[400];
    snprintf(msg, sizeof(msg), "%s %.300s, %s", x->method ? x->method : "GET", x->req->url, phase);
    ll_errors_count(&w->cut_waits, msg, 1, LL_WORKER_HTTP_ERRORS_MAX);
    uint64_t now = ll_loop_now_ns();
    if (since && now > since && now - since > w->cut_longest_ns) w->cut_longest_ns = now - since;
}

void ll_http_exchange_cancel(ll_vu *vu, ll_http_call *call, const ll_http_judge *j) {
    ll_transfer *x = call->x;
    if (!x) return;
    call->x = NULL;
    note_cut(vu->w, x);
    int64_t bytes = 0;
    int sent = x->tp->ops->cancel(x, &bytes);
    if (sent <= 0) return;
    ll_http_res none;
    memset(&none, 0, sizeof(none));
    none.proto = none.error = none.tls_version = none.tls_cipher_suite = "";
    ll_http_exchange_lost(vu, x->req, x->method, &none, sent, 1000, bytes, j);
    ll_errors_count(&vu->w->http_errors, "cut off at the end of the test, after it was sent (error_code 1000)", sent,
                    LL_WORKER_HTTP_ERRORS_MAX);
}

const ll_http_expected ll_http_exchange_challenge_expected = {1, {401}, {401}};

int ll_http_exchange_challenged(const ll_http_call *call, const ll_http_req *req, const ll_http_res *r,
                                const char **ch, size_t *chlen) {
    if (r->status != 401 || req->auth != LL_AUTH_DIGEST || !req->user || call->challenged) return 0;
    *ch = ll_auth_digest_challenge(r->headers, r->headers_len, chlen);
    return *ch != NULL;
}

int ll_http_exchange_answer(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_req *req,
                            const char *method, const char *ch, size_t chlen, ll_transfer_done_fn *on_done) {
    char *value = ll_auth_digest_for(req, method, ch, chlen);
    if (!value) return 0; /* a challenge it cannot answer: the 401 is the answer */
    ll_http_req *next = ll_http_vu_hop(call, req);
    int ok = ll_http_req_copy(next, req) == 0;
    if (ok) {
        ll_http_req_remove_header(next, "Authorization");
        ok = ll_http_req_add_header(next, "Authorization", value) == 0;
    }
    free(value);
    if (!ok) return 0;
    /* the method a transfer sends outlives it: a literal or the request's own */
    const char *m = method;
    if (req->method && method == req->method) m = next->method;
    call->challenged = 1;
    x->tp->ops->release(x);
    const char *cookie = ll_http_vu_cookie(&vu->http, next, (int64_t)time(NULL));
    const char *err = NULL;
    if (x->tp->ops->start(x, next, m, cookie, on_done, call, &err) < 0) return 0;
    call->x = x;
    return 1;
}
