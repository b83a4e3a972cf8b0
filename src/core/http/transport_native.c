/* transport_native.c -- luaload's own HTTP/1.1, HTTP/2 and HTTP/3 transport behind
 * transport.h (see native.h for its files). This one holds the table: the
 * transfers, their requests' lifetimes and results, and the choice of the
 * connection a request goes on.
 *
 * A request's head is written once per prepared request (h1_request.c)
 * and patched when only its dyn_header changed; over HTTP/2 its header
 * list is made at each send. Every start goes through the loop: a
 * request on a ready connection is sent at the next turn, so one whose
 * wait is refused never reaches the wire, and a completion is never
 * called from inside start(). Nothing is retried behind the script's
 * back. */
#include "transport_native.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_debug.h"
#include "http_error.h"
#include "native.h"
#include "redirect.h"
#include "tls_ocsp.h"
#include "xmalloc.h"

#define KEEP_BUFFER_BYTES (256u << 10) /* bigger response buffers go after each response */
#define MAX_STREAMS_DEFAULT 100

ll_loop *native_loop(native_transfer *x) { return x->base.tp->loop; }
static native_transport *tp_of(native_transfer *x) { return (native_transport *)x->base.tp; }

/* ---- pools: a client's TLS settings ---- */

static char *dup_or_null(const char *s) { return s ? ll_xstrdup(s) : NULL; }

static native_pool *pool_of(native_transport *tp, uint64_t id, const ll_client_opts *o) {
    for (int i = 0; i < tp->npools; i++)
        if (tp->pools[i]->id == id) {
            tp->pools[i]->refs++;
            return tp->pools[i];
        }
    native_pool *p = ll_xcalloc(1, sizeof(*p));
    p->id = id;
    p->refs = 1;
    p->tls.insecure_skip_verify = o->insecure_skip_verify;
    p->tls.tls_min = o->tls_min;
    p->tls.tls_max = o->tls_max;
    p->tls.ca = dup_or_null(o->ca);
    p->tls.certificate = dup_or_null(o->certificate);
    p->tls.private_key = dup_or_null(o->private_key);
    p->tls.ciphers = dup_or_null(o->ciphers);
    if (tp->npools == tp->cap_pools) {
        tp->cap_pools = tp->cap_pools ? 2 * tp->cap_pools : 8;
        tp->pools = ll_xrealloc(tp->pools, (size_t)tp->cap_pools * sizeof(*tp->pools));
    }
    tp->pools[tp->npools++] = p;
    return p;
}

static void pool_unref(native_transport *tp, native_pool *p) {
    if (--p->refs > 0) return;
    for (int i = 0; i < tp->npools; i++)
        if (tp->pools[i] == p) {
            tp->pools[i] = tp->pools[--tp->npools];
            break;
        }
    ll_tls_ctx_free(p->ctx);
    ll_quic_tls_free(p->qtls);
    free(p->alt);
    free(p->tls.ca);
    free(p->tls.certificate);
    free(p->tls.private_key);
    free(p->tls.ciphers);
    free(p);
}

ll_tls_ctx *native_pool_tls(native_pool *p) {
    if (!p->ctx && !p->err[0]) p->ctx = ll_tls_ctx_new(&p->tls, p->err, sizeof(p->err));
    return p->ctx;
}

ll_quic_tls *native_pool_quic_tls(native_pool *p) {
    if (!p->qtls && !p->err[0]) p->qtls = ll_quic_tls_new(&p->tls, p->err, sizeof(p->err));
    return p->qtls;
}

/* ---- groups: the connections transfers share ---- */

/* A transfer's own group, or the worker's shared one of a multiplexing
 * client. */
static native_group *group_of(native_transport *tp, native_pool *pool, uint64_t id, const ll_client_opts *o) {
    if (o->multiplex)
        for (int i = 0; i < tp->ngroups; i++)
            if (tp->groups[i]->id == id) {
                tp->groups[i]->refs++;
                return tp->groups[i];
            }
    native_group *g = ll_xcalloc(1, sizeof(*g));
    g->tp = tp;
    g->pool = pool;
    g->refs = 1;
    g->max_streams = 1;
    if (!o->multiplex) return g;
    g->id = id;
    g->max_streams = o->max_streams > 0 ? o->max_streams : MAX_STREAMS_DEFAULT;
    g->max_conns = o->max_conns_per_host;
    if (tp->ngroups == tp->cap_groups) {
        tp->cap_groups = tp->cap_groups ? 2 * tp->cap_groups : 8;
        tp->groups = ll_xrealloc(tp->groups, (size_t)tp->cap_groups * sizeof(*tp->groups));
    }
    tp->groups[tp->ngroups++] = g;
    return g;
}

static void group_unref(native_group *g) {
    if (--g->refs > 0 || g->dying) return;
    g->dying = 1;
    native_transport *tp = g->tp;
    for (int i = 0; g->id && i < tp->ngroups; i++)
        if (tp->groups[i] == g) {
            tp->groups[i] = tp->groups[--tp->ngroups];
            break;
        }
    while (g->nconns) native_conn_close(g->conns[g->nconns - 1], 0, NULL); /* their users went first */
    free(g->conns);
    free(g);
}

void native_group_hold(native_group *g) { g->refs++; }
void native_group_release(native_group *g) { group_unref(g); }

static void queue_remove(native_group *g, native_transfer *x) {
    native_transfer *prev = NULL;
    for (native_transfer *q = g->queue; q; prev = q, q = q->next) {
        if (q != x) continue;
        if (prev) prev->next = x->next;
        else g->queue = x->next;
        if (g->queue_tail == x) g->queue_tail = prev;
        break;
    }
    x->next = NULL;
}

/* How x's request goes: TLS or not, HTTP/2 only, h2 offered, HTTP/3. */
typedef struct target {
    int tls, h2_only, offer, h3;
} target;

static target target_of(const native_transfer *x) {
    target t;
    t.tls = strcmp(x->url.scheme, "https") == 0;
    t.h2_only = x->version == LL_HTTP_2;
    t.h3 = x->version == LL_HTTP_3;
    t.offer = x->version == LL_HTTP_2 || (x->version == LL_HTTP_DEFAULT && t.tls);
    return t;
}

/* 1 when c goes where x's request goes, the same way */
static int same_target(const native_conn *c, const native_transfer *x, target t) {
    return c->tls == t.tls && c->port == x->url.port && c->h2_only == t.h2_only && c->h2_offer == t.offer &&
           c->h3_only == t.h3 && c->alt_port == x->alt_port && strcmp(c->host, x->url.host) == 0;
}

static void start_soon(native_transfer *x) {
    x->st = X_START;
    ll_loop_timer_start(native_loop(x), &x->soon, 0);
}

/* The timeout timer is left armed between requests and only moved to an
 * earlier due: a keep-alive request then costs no heap operation, and
 * on_timer re-arms it when it fires before x's own due. */
static void arm_due(native_transfer *x, uint64_t due) {
    x->due_ns = due;
    if (!due) return;
    if (ll_loop_timer_armed(&x->timer) && x->timer.deadline_ns <= due) return;
    ll_loop_timer_at(native_loop(x), &x->timer, due);
}

/* Puts x's request on a connection of its group with room, or a new one,
 * or (the group at its limit) in the group's queue. queue: may it wait.
 * 1: placed; 0: no room and not queued; -1: a new connection failed
 * (x->fail_code, x->errbuf). */
static int place(native_transfer *x, uint64_t now, int queue) {
    native_group *g = x->g;
    target t = target_of(x);
    native_conn *c = g->room; /* where a request just ended: likely room, without a scan */
    if (c && !native_conn_idle(c) && same_target(c, x, t) && native_conn_has_room(c)) {
        native_conn_join(c, x);
        if (native_conn_startable(c)) start_soon(x);
        else x->st = X_WAIT;
        return 1;
    }
    for (int i = g->nconns - 1; i >= 0; i--) { /* a busy one with room (HTTP/2): no host compared without room */
        c = g->conns[i];
        if (native_conn_idle(c) || !native_conn_has_room(c) || !same_target(c, x, t)) continue;
        native_conn_join(c, x);
        if (native_conn_startable(c)) start_soon(x);
        else x->st = X_WAIT;
        return 1;
    }
    int count = 0;
    for (int i = g->nconns - 1; i >= 0; i--) {
        c = g->conns[i];
        int idle = native_conn_idle(c);
        if (!same_target(c, x, t)) {
            if (!g->id && idle) native_conn_close(c, 0, NULL); /* a VU's own keeps one */
            continue;
        }
        if (idle && x->max_conn_s > 0 && now - c->born_ns >= (uint64_t)x->max_conn_s * 1000000000ull) {
            native_conn_close(c, 0, NULL);
            continue;
        }
        count++;
        if (!native_conn_has_room(c)) continue;
        native_conn_join(c, x);
        if (native_conn_startable(c)) start_soon(x);
        else x->st = X_WAIT;
        return 1;
    }
    if (g->max_conns > 0 && count >= g->max_conns) {
        if (!queue) return 0;
        x->st = X_QUEUED;
        x->next = NULL;
        if (g->queue_tail) g->queue_tail->next = x;
        else g->queue = x;
        g->queue_tail = x;
        return 1;
    }
    return native_conn_open(g, x, now) < 0 ? -1 : 1;
}

static void fail_later(native_transfer *x, int code, const char *msg);

void native_group_wake(native_group *g) {
    while (g->queue) {
        native_transfer *x = g->queue;
        g->queue = x->next;
        if (!g->queue) g->queue_tail = NULL;
        x->next = NULL;
        int rc = place(x, ll_loop_now_ns(), 0);
        if (rc < 0) {
            fail_later(x, x->fail_code, x->errbuf);
            continue;
        }
        if (rc == 1) continue;
        x->next = g->queue; /* still no room: back at the head */
        g->queue = x;
        if (!g->queue_tail) g->queue_tail = x;
        break;
    }
}

/* ---- results ---- */

static void fill_result(native_transfer *x, int code, const char *err) {
    ll_http_res *r = &x->res;
    uint64_t t_end = x->t_last ? x->t_last : ll_loop_now_ns();
    uint64_t t_pre = x->t_pre ? x->t_pre : t_end;
    uint64_t t_sent = x->t_sent ? x->t_sent : t_end;
    uint64_t t_first = x->t_first ? x->t_first : t_end;
    if (t_sent < t_pre) t_sent = t_pre;
    if (t_first < t_sent) t_first = t_sent;
    if (t_end < t_first) t_end = t_first;
    r->t.connecting = x->t_connected && x->t_dial ? (int64_t)(x->t_connected - x->t_dial) / 1000 : 0;
    r->t.tls_handshaking = x->t_tls && x->t_connected ? (int64_t)(x->t_tls - x->t_connected) / 1000 : 0;
    if (x->version == LL_HTTP_3) /* connecting is QUIC's whole handshake, TLS's part of it inside */
        r->t.connecting = x->t_tls && x->t_dial ? (int64_t)(x->t_tls - x->t_dial) / 1000 : 0;
    r->t.blocked = (int64_t)(t_pre - x->t_start) / 1000;
    r->t.sending = (int64_t)(t_sent - t_pre) / 1000;
    r->t.waiting = (int64_t)(t_first - t_sent) / 1000;
    r->t.receiving = (int64_t)(t_end - t_first) / 1000;
    r->t.duration = r->t.sending + r->t.waiting + r->t.receiving;
    r->status = code ? 0 : x->parse.status;
    r->proto = !r->status ? "" : x->proto ? x->proto : x->parse.minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
    r->body = x->body.p ? x->body.p : "";
    r->body_len = r->status ? x->body.len : 0;
    r->headers = x->hdrs.p ? x->hdrs.p : "";
    r->headers_len = code ? 0 : x->hdrs.len;
    r->trailers = x->trailers.p;
    r->trailers_len = code || !x->proto ? 0 : x->trailers.len;
    /* the fast HTTP/1.1 head reader and HTTP/2's header callback note a
     * Set-Cookie: without one, the jar has nothing to look for */
    r->no_cookies = code || ((x->parse.fast || x->proto) && !x->parse.set_cookie);
    r->bytes_sent = x->bytes_out;
    r->bytes_received = x->bytes_in;
    r->error_code = code ? code : r->status >= 400 ? 1000 + r->status : 0;
    r->error = code ? err : "";
    /* a failed lookup says why in its own words ("lookup HOST: i/o timeout") */
    const char *common =
        code && code != 1100
            ? ll_http_error_text(code, x->base.req->url, x->version == LL_HTTP_3, x->errbuf, sizeof(x->errbuf))
            : NULL;
    if (common) r->error = common;
    r->retries = 0;
    r->effective_url = x->base.req->url;
    r->tls_version = x->tls_version;
    r->tls_cipher_suite = x->tls_cipher;
    r->ocsp = &x->ocsp;
    r->stopped = !code && x->parse.stopped;
    r->zero_rtt = !code && x->early_sent;
}

/* With the alt_svc option, a request that leaves the HTTP version to the
 * client goes over HTTP/3 to the alternative its https:// origin
 * advertised, while that holds. */
static void alt_svc_pick(native_transfer *x, uint64_t now) {
    x->alt_port = 0;
    x->alt_host[0] = 0;
    if (!x->alt_svc || !x->pool->alt || x->version != LL_HTTP_DEFAULT || strcmp(x->url.scheme, "https") != 0) return;
    const ll_alt_svc_entry *e = ll_alt_svc_find(x->pool->alt, x->url.host, x->url.port, now);
    if (!e) return;
    x->version = LL_HTTP_3;
    x->alt_port = e->port;
    snprintf(x->alt_host, sizeof(x->alt_host), "%s", e->host);
}

/* With the alt_svc option: the Alt-Svc headers of an https:// response
 * are remembered; a request that failed on an alternative forgets it (the
 * origin's next request goes as before, over TCP: nothing is retried). */
static void alt_svc_heard(native_transfer *x, int code) {
    if (!x->alt_svc || strcmp(x->url.scheme, "https") != 0) return;
    if (code) {
        if (x->alt_port && x->pool->alt) ll_alt_svc_forget(x->pool->alt, x->url.host, x->url.port);
        return;
    }
    size_t pos = 0, vlen;
    const char *v;
    while (x->hdrs.p && (v = ll_http_header_next(x->hdrs.p, x->hdrs.len, "alt-svc", &pos, &vlen))) {
        if (!x->pool->alt) x->pool->alt = ll_xcalloc(1, sizeof(ll_alt_svc));
        ll_alt_svc_heard(x->pool->alt, x->url.host, x->url.port, v, vlen, ll_loop_now_ns());
    }
}

/* Lets go of x's connection or queue place: a request cut off mid-way
 * closes an HTTP/1.1 connection (it cannot carry another) and resets an
 * HTTP/2 or HTTP/3 stream; an HTTP/3 connection gone stale (native_h3.c)
 * closes with its last user. */
static void detach(native_transfer *x) {
    native_conn *c = x->conn;
    if (x->st == X_QUEUED) queue_remove(x->g, x);
    if (!c) return;
    int cut = x->st == X_SENDING || x->st == X_RECEIVING;
    if (c->h2) native_h2_cancel(x);
    if (c->h3) native_h3_cancel(x);
    native_conn_leave(c, x);
    if ((cut && !c->h2 && !c->h3) || ((c->st != C_READY || c->stale) && c->nusers == 0)) {
        native_conn_close(c, 0, NULL);
        return;
    }
    x->g->room = c;
    native_group_wake(x->g);
}

void native_complete(native_transfer *x, int code, const char *msg) {
    ll_loop_timer_stop(native_loop(x), &x->soon);
    x->due_ns = 0;
    detach(x);
    native_h1_drop(x);
    fill_result(x, code, msg);
    alt_svc_heard(x, code);
    x->st = X_IDLE;
    x->active = 0;
    x->fn(&x->base, &x->res, x->ud);
}

/* A failure found inside start(): delivered from the loop, as every
 * completion is. */
static void fail_later(native_transfer *x, int code, const char *msg) {
    if (msg != x->errbuf) snprintf(x->errbuf, sizeof(x->errbuf), "%s", msg);
    x->fail_code = code;
    x->st = X_FAILED;
    ll_loop_timer_start(native_loop(x), &x->soon, 0);
}

void native_fail(native_transfer *x, int code, const char *msg) {
    if (x->in_start) return fail_later(x, code, msg);
    if (msg != x->errbuf) snprintf(x->errbuf, sizeof(x->errbuf), "%s", msg);
    native_complete(x, code, x->errbuf);
}

/* ---- the request's course ---- */

void native_begin(native_transfer *x, uint64_t now) {
    native_conn *c = x->conn;
    if (c->h3 && native_h3_too_early(x)) { /* it begins when the handshake is over */
        x->st = X_WAIT;
        return;
    }
    x->t_pre = now;
    x->reused = c->used++ > 0;
    if (c->h3) {
        x->tls_version = "tls1.3"; /* QUIC's only */
        x->tls_cipher = ll_h3_cipher(c->h3);
        x->proto = "HTTP/3.0";
        return native_h3_begin(x);
    }
    x->tls_version = ll_net_tls_version(&c->net);
    x->tls_cipher = ll_net_tls_cipher(&c->net);
    if (!c->ocsp_read) { /* once per connection, after its handshake */
        ll_tls_ocsp_read(c->net.ssl, &c->ocsp);
        c->ocsp_read = 1;
    }
    x->ocsp = c->ocsp;
    x->proto = c->h2 ? "HTTP/2.0" : NULL;
    if (c->h2) native_h2_begin(x);
    else native_h1_begin(x);
}

/* the next turn: a start, or a failure found in start() */
static void on_soon(ll_loop *loop, void *ud) {
    (void)loop;
    native_transfer *x = ud;
    if (x->st == X_FAILED) return native_complete(x, x->fail_code, x->errbuf);
    if (x->st != X_START) return;
    arm_due(x, x->deadline_ns); /* from the dial timeout to the request's */
    native_begin(x, ll_loop_now_ns());
}

static void on_timer(ll_loop *loop, void *ud) {
    native_transfer *x = ud;
    if (!x->active || !x->due_ns) return; /* armed for a request that is over */
    if (ll_loop_now(loop) < x->due_ns) return ll_loop_timer_at(loop, &x->timer, x->due_ns);
    /* still looking the name up: the request's timeout (k6's 1050), or
     * the client's dial timeout run out in the lookup */
    if (x->st == X_WAIT && x->conn && x->conn->st == C_RESOLVING) {
        if (x->due_ns == x->deadline_ns) return native_complete(x, 1050, "request timeout");
        snprintf(x->errbuf, sizeof(x->errbuf), "lookup %s: i/o timeout", x->url.host);
        return native_complete(x, 1100, x->errbuf);
    }
    /* before the request went out it is a dial timeout */
    if (x->st == X_QUEUED || x->st == X_WAIT) return native_complete(x, 1211, "dial timeout");
    native_complete(x, 1050, "request timeout");
}

/* ---- the table ---- */

static ll_transport *native_transport_new(ll_loop *loop, const ll_dns_config *dns) {
    native_transport *tp = ll_xcalloc(1, sizeof(*tp));
    tp->base.ops = &ll_transport_native;
    tp->base.loop = loop;
    tp->dns = ll_resolver_new(loop, dns);
    return &tp->base;
}

ll_resolver *ll_transport_native_dns(ll_transport *tp) { return ((native_transport *)tp)->dns; }

static void native_transport_free(ll_transport *base) {
    native_transport *tp = (native_transport *)base;
    if (!tp) return;
    ll_resolver_free(tp->dns);
    free(tp->pools); /* their transfers went first */
    free(tp->groups);
    free(tp);
}

static char **copy_list(char *const *l) {
    if (!l) return NULL;
    int n = 0;
    while (l[n]) n++;
    char **c = ll_xcalloc((size_t)n + 1, sizeof(*c));
    for (int i = 0; i < n; i++) c[i] = ll_xstrdup(l[i]);
    return c;
}

static ll_transfer *native_transfer_new(ll_transport *base, int vu_index, uint64_t pool, const ll_client_opts *o) {
    (void)vu_index;
    native_transport *tp = (native_transport *)base;
    native_transfer *x = ll_xcalloc(1, sizeof(*x));
    x->base.tp = base;
    x->pool = pool_of(tp, pool, o);
    x->g = group_of(tp, x->pool, pool, o);
    x->tls_version = x->tls_cipher = "";
    ll_loop_timer_init(&x->timer, on_timer, x);
    ll_loop_timer_init(&x->soon, on_soon, x);
    x->qstream = -1;
    x->timeout_default = o->timeout_ms;
    x->dial_timeout = o->dial_timeout_ms;
    x->limit_default = o->max_response_body > 0 ? o->max_response_body : LL_MAX_RESPONSE_BODY_DEFAULT;
    x->no_reuse = o->disable_keep_alive;
    x->discard = o->discard_bodies;
    x->max_conn_s = o->max_conn_duration_s;
    x->version_default = o->http_version;
    x->user_agent = ll_xstrdup(o->user_agent ? o->user_agent : "luaload/" LUALOAD_VERSION);
    x->server_name = dup_or_null(o->server_name);
    x->qlog_dir = dup_or_null(o->qlog_dir);
    x->alt_svc = o->alt_svc;
    x->zero_rtt = o->zero_rtt;
    x->http_debug = o->http_debug;
    x->connect_to = copy_list(o->connect_to);
    if (o->local_addr) x->local = *o->local_addr;
    return &x->base;
}

static int native_cancel(ll_transfer *base, int64_t *bytes_sent) {
    native_transfer *x = (native_transfer *)base;
    *bytes_sent = 0;
    if (!x->active) return 0;
    *bytes_sent = x->bytes_out;
    ll_loop_timer_stop(native_loop(x), &x->soon);
    x->due_ns = 0;
    detach(x);
    native_h1_drop(x);
    x->st = X_IDLE;
    x->active = 0;
    return x->attempts;
}

static const char *native_phase(ll_transfer *base, uint64_t *since_ns) {
    native_transfer *x = (native_transfer *)base;
    if (!x->active) return NULL;
    *since_ns = x->t_start;
    switch (x->st) {
    case X_QUEUED: return "waiting for a free connection";
    case X_WAIT:
        if (!x->conn) return "waiting for a connection";
        return x->conn->st == C_RESOLVING    ? "looking up the host's name"
               : x->conn->st == C_CONNECTING ? "connecting"
               : x->conn->st == C_HANDSHAKE  ? "in the TLS handshake"
                                             : "waiting for a connection";
    case X_START:
    case X_SENDING: return "sending the request";
    case X_RECEIVING:
    case X_STREAM: return x->t_first ? "reading the response" : "waiting for the response";
    default: return "finishing";
    }
}

static void native_transfer_free(ll_transfer *base) {
    native_transfer *x = (native_transfer *)base;
    if (!x) return;
    int64_t sent;
    native_cancel(base, &sent);
    ll_loop_timer_stop(native_loop(x), &x->timer);
    group_unref(x->g);
    pool_unref(tp_of(x), x->pool);
    ll_url_free(&x->url);
    free(x->url_text);
    ll_h1_head_free(&x->head);
    if (x->has_form) ll_form_wire_free(&x->form);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    ll_buf_free(&x->trailers);
    free(x->cookie_applied);
    free(x->user_agent);
    free(x->server_name);
    free(x->qlog_dir);
    for (int i = 0; x->connect_to && x->connect_to[i]; i++) free(x->connect_to[i]);
    free(x->connect_to);
    free(x);
}

static void native_release(ll_transfer *base) {
    native_transfer *x = (native_transfer *)base;
    if (x->body.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->body);
    if (x->hdrs.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->hdrs);
    if (x->trailers.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->trailers);
    x->res.body = x->res.headers = "";
    x->res.body_len = x->res.headers_len = x->res.trailers_len = 0;
}

/* Takes the request apart and writes its head. -1 with *err. */
static int apply(native_transfer *x, const ll_http_req *req, const char *method, const char *cookie, const char **err) {
    /* a new request to the URL parsed last (a gRPC call, a fresh
     * http.get of the same URL) keeps its parts: parsing is libcurl's */
    if (!x->url_text || strcmp(x->url_text, req->url) != 0) {
        free(x->url_text);
        x->url_text = NULL;
        ll_url_free(&x->url);
        if (ll_url_parse(&x->url, req->url) < 0) {
            *err = "invalid URL";
            return -1;
        }
        x->url_text = ll_xstrdup(req->url);
    }
    if (x->has_form) ll_form_wire_free(&x->form);
    x->has_form = 0;
    free(x->cookie_applied);
    x->cookie_applied = cookie ? ll_xstrdup(cookie) : NULL;
    ll_h1_head_in *in = &x->in;
    memset(in, 0, sizeof(*in));
    in->req = req;
    in->method = method;
    in->url = &x->url;
    in->cookie = x->cookie_applied;
    in->user_agent = x->user_agent;
    in->has_body = req->body.kind != LL_BODY_NONE && strcmp(method, "HEAD") != 0;
    in->body_len = req->body.len;
    if (req->body.kind == LL_BODY_FORM) {
        if (ll_form_wire_init(&x->form, req->body.form) < 0) {
            *err = "out of memory building the form";
            return -1;
        }
        x->has_form = 1;
        in->content_type = ll_form_wire_content_type(&x->form);
        in->body_len = x->form.len;
    }
    if (ll_h1_head_build(&x->head, in) < 0) {
        *err = "out of memory building the request";
        return -1;
    }
    x->req_id = req->id;
    x->applied_method = method;
    x->dyn_gen = req->dyn_gen;
    return 0;
}

static int native_start(ll_transfer *base, const ll_http_req *req, const char *method, const char *cookie,
                        ll_transfer_done_fn *fn, void *ud, const char **err) {
    native_transfer *x = (native_transfer *)base;
    int changed = ll_transfer_begin(x->active, x->req_id, x->applied_method, x->cookie_applied, req, method, cookie, err);
    if (changed < 0) return -1;
    if (changed && apply(x, req, method, cookie, err) < 0) {
        x->req_id = 0;
        return -1;
    }
    if (!changed && req->dyn_header >= 0 && x->dyn_gen != req->dyn_gen) {
        const char *v = req->headers[req->dyn_header].value;
        if (ll_h1_head_patch(&x->head, &x->in, v, strlen(v)) < 0) {
            x->req_id = 0;
            *err = "out of memory building the request";
            return -1;
        }
        x->dyn_gen = req->dyn_gen;
    }
    if (x->http_debug) ll_http_debug_head(x->http_debug, x->head.buf.p, x->head.buf.len, req);
    uint64_t now = ll_loop_now_ns();
    x->base.req = req;
    x->base.method = method;
    x->fn = fn;
    x->ud = ud;
    x->active = 1;
    x->t_start = now;
    x->t_dial = x->t_connected = x->t_tls = x->t_pre = x->t_sent = x->t_first = x->t_last = 0;
    x->bytes_out = x->bytes_in = 0;
    x->attempts = 0;
    x->head_off = 0;
    x->body_off = 0;
    x->streamed = x->has_form || req->body.kind == LL_BODY_FILE || req->body.kind == LL_BODY_GENERATOR ||
                  (req->body.kind == LL_BODY_MEMORY && x->head.chunked);
    x->body_len = x->head.body_inline || !x->in.has_body ? 0 : req->body.len;
    x->body_eof = !x->in.has_body || x->head.body_inline;
    x->stage_len = x->stage_off = 0;
    x->tls_version = x->tls_cipher = "";
    x->ocsp.status = LL_OCSP_NONE; /* until a connection is begun on */
    x->proto = NULL;
    x->h3_blocked = 0;
    x->early_sent = 0;
    x->errbuf[0] = 0;
    x->version = req->http_version >= 0 ? req->http_version : x->version_default;
    if (x->version == LL_HTTP_3 && strcmp(x->url.scheme, "https") != 0) {
        *err = "HTTP/3 needs an https:// URL";
        x->active = 0;
        return -1;
    }
    alt_svc_pick(x, now);
    int none = !req->on_chunk && (req->response_type == LL_RESPONSE_NONE ||
                                  (req->response_type == LL_RESPONSE_DEFAULT && x->discard));
    x->limit = none ? 0 : req->max_response_body > 0 ? req->max_response_body : x->limit_default;
    ll_h1_parse_start(&x->parse, &x->hdrs, &x->body, x->limit, strcmp(method, "HEAD") == 0);
    x->parse.on_chunk = req->on_chunk; /* streamed: the limit is then a chunk's */
    x->parse.chunk_ud = req->chunk_ud;
    long t = req->timeout_ms > 0 ? req->timeout_ms : x->timeout_default;
    x->deadline_ns = t > 0 ? now + (uint64_t)t * 1000000ull : 0;
    x->in_start = 1;
    if (place(x, now, 1) < 0) {
        fail_later(x, x->fail_code, x->errbuf);
    } else if (x->st == X_WAIT || x->st == X_QUEUED) {
        long dial = x->dial_timeout > 0 && (t <= 0 || x->dial_timeout < t) ? x->dial_timeout : t;
        arm_due(x, dial > 0 ? now + (uint64_t)dial * 1000000ull : 0);
    }
    x->in_start = 0;
    return 0;
}

static int native_supports(int v) {
    (void)v;
    return 1;
}

static void native_resume(ll_transfer *base) {
    native_transfer *x = (native_transfer *)base;
    if (!x->active || x->st != X_STREAM || !x->conn) return;
    if (x->conn->h3) native_h3_resume(x);
    else native_h2_resume(x);
}

const ll_transport_ops ll_transport_native = {
    .name = "native",
    .slot = 0,
    .transport_new = native_transport_new,
    .transport_free = native_transport_free,
    .transfer_new = native_transfer_new,
    .transfer_free = native_transfer_free,
    .start = native_start,
    .cancel = native_cancel,
    .release = native_release,
    .supports = native_supports,
    .phase = native_phase,
    .resume = native_resume,
};
