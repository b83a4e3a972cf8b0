/* transport_native.c -- luaload's own HTTP/1.1 transport behind transport.h,
 * on its own non-blocking sockets (net.h: plain TCP or OpenSSL).
 *
 * Each transfer is one VU's connection for one Client, kept alive across
 * requests. The request head is written once per prepared request
 * (h1_request.c) and patched when only its dyn_header changed; a small
 * body rides in the same buffer, so a keep-alive request is one send. The
 * response is parsed from one read buffer the worker's transfers share
 * (h1_parse.c, http-parser), usually one read per response, and nothing is
 * retried behind the script's back: a request that went out on a
 * connection the server had closed is a failed request. An idle
 * connection stays registered for reading, so a server that closes it is
 * noticed before the next request and costs no system call otherwise. */
#include "transport_native.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "form_wire.h"
#include "http_error.h"
#include "h1_parse.h"
#include "h1_request.h"
#include "net.h"
#include "resolve.h"
#include "tls_ctx.h"
#include "xmalloc.h"

#define READ_BUFFER (64u << 10)
#define STAGE_BUFFER (64u << 10)    /* a streamed body's bytes on their way out */
#define KEEP_BUFFER_BYTES (256u << 10) /* bigger response buffers go after each response */

/* One Client's TLS settings in a worker, shared by its transfers; the
 * OpenSSL context is made on the first https:// request. */
typedef struct native_pool {
    uint64_t id;
    int refs;
    ll_client_opts tls;        /* the TLS fields, copied */
    ll_tls_ctx *ctx;
    char err[256];             /* why the context could not be made */
} native_pool;

typedef struct native_transport {
    ll_transport base;
    ll_resolver *dns;
    native_pool **pools;
    int npools, cap_pools;
    char rbuf[READ_BUFFER];
} native_transport;

/* X_START: on a kept-alive connection, to be sent at the loop's next turn
 * (a request whose wait is refused never reaches the wire) */
typedef enum { X_IDLE, X_START, X_CONNECTING, X_HANDSHAKE, X_SENDING, X_RECEIVING, X_FAILED } xstate;

typedef struct native_transfer {
    ll_transfer base;
    native_pool *pool;
    ll_net_conn conn;              /* conn.fd < 0: no connection */
    int conn_port, conn_tls;
    char *conn_host;           /* where the open connection goes */
    uint64_t conn_born_ns;
    int watching;              /* LL_* events registered for conn.fd */
    ll_timer timer;            /* the request's timeout, or a failure to deliver */
    xstate st;
    int active;
    int in_start;              /* inside start(): a failure is delivered later */
    uint64_t deadline_ns;      /* of the whole request, 0: none */
    int dial_armed;            /* the timer holds the dial timeout */
    ll_transfer_done_fn *fn;
    void *ud;
    /* the request applied */
    uint64_t req_id;
    const char *applied_method;
    char *cookie_applied;
    uint64_t dyn_gen;
    ll_url url;
    ll_h1_head head;
    ll_form_wire form;
    int has_form;
    ll_h1_head_in in;
    /* sending */
    size_t head_off;
    uint64_t body_off, body_len; /* of the body not inline */
    int streamed;              /* the body comes through ll_body_read / the form */
    char *stage;               /* streamed bytes (framed when chunked) */
    size_t stage_len, stage_off;
    int body_eof;
    int attempts;              /* 1 once a byte of the request went out */
    int reused;                /* the request went on a kept-alive connection */
    /* receiving */
    ll_h1_parse parse;
    ll_buf body, hdrs;
    int64_t bytes_out, bytes_in;
    int64_t limit;
    /* the client's options */
    long timeout_default, dial_timeout;
    int64_t limit_default;
    int no_reuse, discard;
    long max_conn_s;
    char *user_agent, *server_name;
    char **connect_to;
    /* phases, on ll_loop_now_ns */
    uint64_t t_start, t_dial, t_connected, t_tls, t_pre, t_sent, t_first, t_last;
    int fail_code;
    const char *fail_msg;
    const char *tls_version, *tls_cipher;
    ll_http_res res;
    char errbuf[320];
} native_transfer;

static ll_loop *loop_of(native_transfer *x) { return x->base.tp->loop; }
static native_transport *tp_of(native_transfer *x) { return (native_transport *)x->base.tp; }

/* ---- pools ---- */

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
    free(p->tls.ca);
    free(p->tls.certificate);
    free(p->tls.private_key);
    free(p->tls.ciphers);
    free(p);
}

static ll_tls_ctx *pool_tls(native_pool *p) {
    if (!p->ctx && !p->err[0]) p->ctx = ll_tls_ctx_new(&p->tls, 0, p->err, sizeof(p->err));
    return p->ctx;
}

/* ---- the connection ---- */

static void watch(native_transfer *x, int events);

static void conn_close(native_transfer *x) {
    if (x->conn.fd < 0) return;
    ll_loop_forget(loop_of(x), x->conn.fd);
    x->conn.ops->close(&x->conn);
    x->conn.fd = -1;
    x->watching = 0;
    free(x->conn_host);
    x->conn_host = NULL;
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud);

static void watch(native_transfer *x, int events) {
    if (x->watching == events) return;
    if (ll_loop_watch(loop_of(x), x->conn.fd, events, on_fd, x) == 0) x->watching = events;
}

/* ---- completion ---- */

/* k6's error code of a failed socket call (k6 lib/netext/httpext/error_codes.go) */
static int io_code(int os_errno) { return os_errno == ECONNRESET || os_errno == EPIPE ? 1220 : 1200; }

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
    r->t.blocked = (int64_t)(t_pre - x->t_start) / 1000;
    r->t.sending = (int64_t)(t_sent - t_pre) / 1000;
    r->t.waiting = (int64_t)(t_first - t_sent) / 1000;
    r->t.receiving = (int64_t)(t_end - t_first) / 1000;
    r->t.duration = r->t.sending + r->t.waiting + r->t.receiving;
    r->status = code ? 0 : x->parse.status;
    r->proto = !r->status ? "" : x->parse.minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
    r->body = x->body.p ? x->body.p : "";
    r->body_len = r->status ? x->body.len : 0;
    r->headers = x->hdrs.p ? x->hdrs.p : "";
    r->headers_len = code ? 0 : x->hdrs.len;
    r->bytes_sent = x->bytes_out;
    r->bytes_received = x->bytes_in;
    r->error_code = code ? code : r->status >= 400 ? 1000 + r->status : 0;
    r->error = code ? err : "";
    const char *common = code ? ll_http_error_text(code, x->base.req->url, x->errbuf, sizeof(x->errbuf)) : NULL;
    if (common) r->error = common;
    r->retries = 0;
    r->effective_url = x->base.req->url;
    r->tls_version = x->tls_version;
    r->tls_cipher_suite = x->tls_cipher;
}

static void stage_drop(native_transfer *x) {
    free(x->stage);
    x->stage = NULL;
    x->stage_len = x->stage_off = 0;
}

/* The request is over: the callback gets it, and the connection stays
 * only when both sides keep it. The last thing a caller does. */
static void complete(native_transfer *x, int code, const char *err) {
    ll_loop_timer_stop(loop_of(x), &x->timer);
    fill_result(x, code, err);
    stage_drop(x);
    ll_h1_parse_reset(&x->parse);
    int keep = !code && x->parse.keep_alive && !x->no_reuse && !x->base.req->disable_keep_alive &&
               x->body_eof;
    if (!keep) conn_close(x);
    else watch(x, LL_READABLE); /* a close while idle is noticed */
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
    ll_loop_timer_start(loop_of(x), &x->timer, 0);
}

static void fail(native_transfer *x, int code, const char *msg) {
    if (x->in_start) return fail_later(x, code, msg);
    if (msg != x->errbuf) snprintf(x->errbuf, sizeof(x->errbuf), "%s", msg);
    complete(x, code, x->errbuf);
}

/* ---- sending ---- */

static ssize_t source_read(native_transfer *x, uint64_t pos, char *buf, size_t n) {
    if (x->has_form) return ll_form_wire_read(&x->form, pos, buf, n);
    return ll_body_read(&x->base.req->body, pos, buf, n);
}

/* Refills the stage with the next bytes of a streamed body, chunk-framed
 * when the script asked for chunked (the last chunk: "0\r\n\r\n"). At
 * the end of the source body_eof is set; the stage may still hold bytes.
 * 0, or -1 on a source error. */
static int stage_fill(native_transfer *x) {
    if (!x->stage) x->stage = ll_xmalloc(STAGE_BUFFER);
    size_t at = x->head.chunked ? 16 : 0, room = STAGE_BUFFER - at - 2, got = 0;
    while (got < room) {
        ssize_t r = source_read(x, x->body_off + got, x->stage + at + got, room - got);
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    x->body_off += got;
    x->stage_off = 0;
    x->stage_len = got;
    if (got == 0) x->body_eof = 1;
    if (!x->head.chunked) return 0;
    if (got == 0) {
        memcpy(x->stage, "0\r\n\r\n", 5);
        x->stage_len = 5;
        return 0;
    }
    char frame[16];
    int fl = snprintf(frame, sizeof(frame), "%zx\r\n", got);
    x->stage_off = at - (size_t)fl;
    memcpy(x->stage + x->stage_off, frame, (size_t)fl);
    memcpy(x->stage + at + got, "\r\n", 2);
    x->stage_len = at + got + 2;
    return 0;
}

/* Writes what is left of the request. 1: all of it went; 0: the socket
 * is full (watching for it); -1: failed (completed). */
static int send_more(native_transfer *x) {
    const ll_body *b = &x->base.req->body;
    for (;;) {
        const char *p = NULL;
        size_t n = 0;
        int from_stage = 0;
        if (x->head_off < x->head.buf.len) {
            p = x->head.buf.p + x->head_off;
            n = x->head.buf.len - x->head_off;
        } else if (x->stage_off < x->stage_len) {
            p = x->stage + x->stage_off;
            n = x->stage_len - x->stage_off;
            from_stage = 1;
        } else if (!x->body_eof && !x->streamed) { /* a big body in memory, straight from it */
            if (x->body_off >= x->body_len) {
                x->body_eof = 1;
                continue;
            }
            p = b->mem + x->body_off;
            n = (size_t)(x->body_len - x->body_off);
        } else if (!x->body_eof) {
            if (stage_fill(x) == 0) continue;
            snprintf(x->errbuf, sizeof(x->errbuf), "cannot read the request body: %s", strerror(errno));
            fail(x, 1000, x->errbuf);
            return -1;
        } else {
            x->t_sent = ll_loop_now_ns();
            return 1;
        }
        size_t w = 0;
        ll_net_status st = x->conn.ops->write(&x->conn, p, n, &w);
        if (w) {
            x->attempts = 1;
            x->bytes_out += (int64_t)w;
            if (x->head_off < x->head.buf.len) x->head_off += w;
            else if (from_stage) x->stage_off += w;
            else x->body_off += w;
        }
        if (st == LL_NET_OK) continue;
        if (st == LL_NET_WANT_WRITE || st == LL_NET_WANT_READ) {
            watch(x, LL_READABLE | (st == LL_NET_WANT_WRITE ? LL_WRITABLE : 0));
            return 0;
        }
        fail(x, io_code(x->conn.os_errno), x->conn.err);
        return -1;
    }
}

/* ---- receiving ---- */

static void parse_failed(native_transfer *x) {
    const char *e = x->parse.err ? x->parse.err : "malformed response";
    if (x->parse.too_big) {
        snprintf(x->errbuf, sizeof(x->errbuf), "the response body is over max_response_body (%lld bytes)",
                 (long long)x->limit);
    } else if (x->parse.fed && strncmp(e, "the server closed", 17) != 0 && strncmp(e, "out of memory", 13) != 0 &&
               strncmp(e, "the ", 4) != 0) {
        snprintf(x->errbuf, sizeof(x->errbuf), "malformed HTTP response: %s", e);
    } else {
        snprintf(x->errbuf, sizeof(x->errbuf), "%s", e);
    }
    fail(x, 1000, x->errbuf);
}

/* Reads what the socket has. Returns 1 when the request completed (x may
 * be gone then), 0 when more is to come. */
static int receive(native_transfer *x) {
    native_transport *tp = tp_of(x);
    int more = x->st == X_SENDING ? LL_WRITABLE : 0;
    for (;;) {
        size_t got = 0;
        ll_net_status st = x->conn.ops->read(&x->conn, tp->rbuf, sizeof(tp->rbuf), &got);
        if (st == LL_NET_WANT_READ || st == LL_NET_WANT_WRITE) {
            watch(x, LL_READABLE | (st == LL_NET_WANT_WRITE ? LL_WRITABLE : more));
            return 0;
        }
        if (st == LL_NET_ERROR) {
            fail(x, io_code(x->conn.os_errno), x->conn.err);
            return 1;
        }
        uint64_t now = ll_loop_now_ns();
        if (got && !x->t_first) {
            x->t_first = now;
            if (!x->t_sent) x->t_sent = now; /* the server answered before taking the whole body */
        }
        x->bytes_in += (int64_t)got;
        size_t used = 0;
        int rc = ll_h1_parse_feed(&x->parse, tp->rbuf, got, &used);
        if (rc == LL_H1_ERROR && st == LL_NET_EOF && x->reused && x->parse.fed == 0)
            fail(x, 1000, "the server closed the kept-alive connection before responding (the request is not sent again)");
        else if (rc == LL_H1_ERROR)
            parse_failed(x);
        if (rc == LL_H1_ERROR) return 1;
        if (rc == LL_H1_DONE) {
            x->t_last = now;
            if (used < got || x->st == X_SENDING) x->parse.keep_alive = 0; /* not ours, or the body is still going */
            complete(x, 0, "");
            return 1;
        }
        if (got < sizeof(tp->rbuf) && !ll_net_pending(&x->conn)) {
            watch(x, LL_READABLE | more);
            return 0;
        }
    }
}

/* ---- the state machine ---- */

/* The connection is ready: the request goes out, under the request's own
 * deadline from now on. */
static void begin_send(native_transfer *x) {
    x->st = X_SENDING;
    x->t_pre = ll_loop_now_ns();
    if (x->reused) {
        x->tls_version = ll_net_tls_version(&x->conn);
        x->tls_cipher = ll_net_tls_cipher(&x->conn);
    }
    if (x->dial_armed) {
        x->dial_armed = 0;
        if (x->deadline_ns) {
            uint64_t left = x->deadline_ns > x->t_pre ? (x->deadline_ns - x->t_pre) / 1000 : 0;
            ll_loop_timer_start(loop_of(x), &x->timer, left);
        } else {
            ll_loop_timer_stop(loop_of(x), &x->timer);
        }
    }
    if (send_more(x) != 1) return;
    x->st = X_RECEIVING;
    watch(x, LL_READABLE);
}

static void handshake(native_transfer *x) {
    ll_net_status st = x->conn.ops->handshake(&x->conn);
    if (st == LL_NET_WANT_READ) return watch(x, LL_READABLE);
    if (st == LL_NET_WANT_WRITE) return watch(x, LL_WRITABLE);
    if (st == LL_NET_ERROR)
        return fail(x, x->conn.tls_error == LL_TLS_ERR_VERIFY ? 1310 : x->conn.tls_error ? 1300 : io_code(x->conn.os_errno),
                    x->conn.err);
    x->t_tls = ll_loop_now_ns();
    x->tls_version = ll_net_tls_version(&x->conn);
    x->tls_cipher = ll_net_tls_cipher(&x->conn);
    begin_send(x);
}

static void connected(native_transfer *x) {
    if (ll_net_connected(&x->conn) < 0) {
        int e = x->conn.os_errno;
        return fail(x, e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210, x->conn.err);
    }
    x->t_connected = ll_loop_now_ns();
    if (!x->conn_tls) return begin_send(x);
    ll_tls_ctx *ctx = pool_tls(x->pool);
    if (!ctx) return fail(x, 1300, x->pool->err);
    if (ll_net_tls_start(&x->conn, ctx, x->server_name ? x->server_name : x->url.host) < 0)
        return fail(x, 1300, "out of memory starting TLS");
    x->st = X_HANDSHAKE;
    handshake(x);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    (void)fd;
    native_transfer *x = ud;
    switch (x->st) {
    case X_IDLE: { /* the server closed (or wrote to) an idle connection */
        char c;
        size_t got = 0;
        ll_net_status st = x->conn.ops->read(&x->conn, &c, 1, &got);
        if (st != LL_NET_WANT_READ) conn_close(x);
        return;
    }
    case X_CONNECTING: return connected(x);
    case X_HANDSHAKE: return handshake(x);
    case X_SENDING:
        if ((events & LL_READABLE) && receive(x)) return; /* an early answer (413, 401), or a close */
        if (send_more(x) != 1) return;
        x->st = X_RECEIVING;
        return watch(x, LL_READABLE);
    case X_RECEIVING: receive(x); return;
    case X_START:
    case X_FAILED: return;
    }
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    native_transfer *x = ud;
    if (x->st == X_FAILED) return complete(x, x->fail_code, x->errbuf);
    if (x->st == X_START) {
        uint64_t now = ll_loop_now_ns();
        if (x->deadline_ns) ll_loop_timer_start(loop_of(x), &x->timer, x->deadline_ns > now ? (x->deadline_ns - now) / 1000 : 0);
        return begin_send(x);
    }
    /* a timeout: before the request went out it is a dial timeout */
    if (x->t_pre == 0) return fail(x, 1211, "dial timeout: no connection within the time allowed");
    fail(x, 1050, "request timeout");
}

/* ---- the table ---- */

static ll_transport *native_transport_new(ll_loop *loop) {
    native_transport *tp = ll_xcalloc(1, sizeof(*tp));
    tp->base.ops = &ll_transport_native;
    tp->base.loop = loop;
    tp->dns = ll_resolver_new();
    if (!tp->dns) {
        free(tp);
        return NULL;
    }
    return &tp->base;
}

static void native_transport_free(ll_transport *base) {
    native_transport *tp = (native_transport *)base;
    if (!tp) return;
    ll_resolver_free(tp->dns);
    free(tp->pools); /* their transfers went first */
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
    x->conn.fd = -1;
    x->tls_version = x->tls_cipher = "";
    ll_loop_timer_init(&x->timer, on_timer, x);
    x->timeout_default = o->timeout_ms;
    x->dial_timeout = o->dial_timeout_ms;
    x->limit_default = o->max_response_body > 0 ? o->max_response_body : LL_MAX_RESPONSE_BODY_DEFAULT;
    x->no_reuse = o->disable_keep_alive;
    x->discard = o->discard_bodies;
    x->max_conn_s = o->max_conn_duration_s;
    char ua[512];
    snprintf(ua, sizeof(ua), "%s", o->user_agent ? o->user_agent : "luaload/" LUALOAD_VERSION);
    x->user_agent = ll_xstrdup(ua);
    x->server_name = dup_or_null(o->server_name);
    x->connect_to = copy_list(o->connect_to);
    return &x->base;
}

static int native_cancel(ll_transfer *base, int64_t *bytes_sent) {
    native_transfer *x = (native_transfer *)base;
    *bytes_sent = 0;
    if (!x->active) return 0;
    *bytes_sent = x->bytes_out;
    ll_loop_timer_stop(loop_of(x), &x->timer);
    conn_close(x); /* mid-request: the connection cannot carry another */
    ll_h1_parse_reset(&x->parse);
    stage_drop(x);
    x->st = X_IDLE;
    x->active = 0;
    return x->attempts;
}

static void native_transfer_free(ll_transfer *base) {
    native_transfer *x = (native_transfer *)base;
    if (!x) return;
    int64_t sent;
    native_cancel(base, &sent);
    conn_close(x);
    pool_unref(tp_of(x), x->pool);
    ll_url_free(&x->url);
    ll_h1_head_free(&x->head);
    if (x->has_form) ll_form_wire_free(&x->form);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    free(x->cookie_applied);
    free(x->user_agent);
    free(x->server_name);
    for (int i = 0; x->connect_to && x->connect_to[i]; i++) free(x->connect_to[i]);
    free(x->connect_to);
    free(x);
}

static void native_release(ll_transfer *base) {
    native_transfer *x = (native_transfer *)base;
    if (x->body.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->body);
    if (x->hdrs.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->hdrs);
    x->res.body = x->res.headers = "";
    x->res.body_len = x->res.headers_len = 0;
}

/* Takes the request apart and writes its head. -1 with *err. */
static int apply(native_transfer *x, const ll_http_req *req, const char *method, const char *cookie, const char **err) {
    ll_url_free(&x->url);
    if (ll_url_parse(&x->url, req->url) < 0) {
        *err = "invalid URL";
        return -1;
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

static int cookie_changed(const native_transfer *x, const char *cookie) {
    if (!cookie || !x->cookie_applied) return cookie != x->cookie_applied;
    return strcmp(cookie, x->cookie_applied) != 0;
}

/* Opens the connection the request needs, or keeps the open one. 0, or
 * -1 with the error code and message in x. */
static int open_conn(native_transfer *x, uint64_t now) {
    int tls = strcmp(x->url.scheme, "https") == 0;
    if (x->conn.fd >= 0) {
        int same = x->conn_tls == tls && x->conn_port == x->url.port && strcmp(x->conn_host, x->url.host) == 0;
        int old = x->max_conn_s > 0 && now - x->conn_born_ns >= (uint64_t)x->max_conn_s * 1000000000ull;
        if (same && !old) {
            x->reused = 1;
            return 0;
        }
        conn_close(x);
    }
    ll_addr a;
    const char *err = NULL;
    if (ll_resolve(tp_of(x)->dns, x->connect_to, x->url.host, x->url.port, now / 1000000000ull, &a, &err) < 0) {
        snprintf(x->errbuf, sizeof(x->errbuf), "lookup %s: %s", x->url.host, err);
        x->fail_code = 1100;
        return -1;
    }
    x->t_dial = ll_loop_now_ns();
    if (ll_net_open(&x->conn, (struct sockaddr *)&a.ss, a.len) < 0) {
        int e = x->conn.os_errno;
        snprintf(x->errbuf, sizeof(x->errbuf), "dial tcp %s:%d: %s", x->url.host, x->url.port, x->conn.err);
        x->fail_code = e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210;
        return -1;
    }
    x->conn_host = ll_xstrdup(x->url.host);
    x->conn_port = x->url.port;
    x->conn_tls = tls;
    x->conn_born_ns = now;
    x->reused = 0;
    return 0;
}

static int native_start(ll_transfer *base, const ll_http_req *req, const char *method, const char *cookie,
                        ll_transfer_done_fn *fn, void *ud, const char **err) {
    native_transfer *x = (native_transfer *)base;
    if (x->active) {
        *err = "a request is already in flight on this connection";
        return -1;
    }
    int changed = x->req_id != req->id || x->applied_method != method || cookie_changed(x, cookie);
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
    x->errbuf[0] = 0;
    int none = req->response_type == LL_RESPONSE_NONE || (req->response_type == LL_RESPONSE_DEFAULT && x->discard);
    x->limit = none ? 0 : req->max_response_body > 0 ? req->max_response_body : x->limit_default;
    ll_h1_parse_start(&x->parse, &x->hdrs, &x->body, x->limit, strcmp(method, "HEAD") == 0);
    long t = req->timeout_ms > 0 ? req->timeout_ms : x->timeout_default;
    x->deadline_ns = t > 0 ? now + (uint64_t)t * 1000000ull : 0;
    x->dial_armed = 0;
    x->in_start = 1;
    if (open_conn(x, now) < 0) {
        fail_later(x, x->fail_code, x->errbuf);
    } else if (x->reused) {
        x->st = X_START;
        ll_loop_timer_start(loop_of(x), &x->timer, 0);
    } else {
        long dial = x->dial_timeout > 0 && (t <= 0 || x->dial_timeout < t) ? x->dial_timeout : t;
        if (dial > 0) ll_loop_timer_start(loop_of(x), &x->timer, (uint64_t)dial * 1000);
        x->dial_armed = dial > 0;
        x->st = X_CONNECTING;
        watch(x, LL_WRITABLE);
    }
    x->in_start = 0;
    return 0;
}

static int native_supports(int v) { return v == LL_HTTP_1_1 || v == LL_HTTP_DEFAULT; }

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
};
