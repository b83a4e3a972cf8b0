/* ws_open.c -- a WebSocket connection's open (see ws_conn_internal.h):
 * the lookup (resolve.c, waited for on the loop), a non-blocking connect to each
 * address in turn, the TLS handshake with the Client's context, the
 * handshake request (ws_handshake.c on h1_request.c) written, the answer
 * read by h1_parse.c and checked; then ws_conn.c takes over. The open
 * callback gets the result: the status, headers and timings of a 101, or
 * why there is none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_error.h"
#include "ws_conn_internal.h"
#include "xmalloc.h"

static uint64_t ms_ns(long ms) { return (uint64_t)ms * 1000000ull; }

void ws_open_free(ll_ws *ws) {
    ws_opening *o = ws->o;
    if (!o) return;
    ll_resolve_cancel(&o->wait);
    free(o->addrs);
    free(o->host);
    free(o->server_name);
    free(o->tls_err);
    ll_h1_head_free(&o->head);
    ll_h1_parse_reset(&o->parse);
    ll_buf_free(&o->hdrs);
    ll_buf_free(&o->body);
    for (int i = 0; i < o->nprotocols; i++) free(o->protocols[i]);
    free(o->protocols);
    free(o->protocol_header);
    free(o);
    ws->o = NULL;
}

static int64_t span_us(uint64_t from, uint64_t to) { return from && to > from ? (int64_t)((to - from) / 1000) : 0; }

static void open_result(ll_ws *ws, int code, const char *err, const char *proto, size_t plen, const char *ext,
                        size_t elen) {
    ws_opening *o = ws->o;
    uint64_t now = ll_loop_now_ns();
    char p[128], e[256];
    snprintf(p, sizeof(p), "%.*s", (int)plen, proto ? proto : "");
    snprintf(e, sizeof(e), "%.*s", (int)elen, ext ? ext : "");
    ll_ws_open_result r = {
        .status = o && o->parse.headers_done ? o->parse.status : 0,
        .headers = o && o->parse.headers_done ? o->hdrs.p : "",
        .headers_len = o && o->parse.headers_done ? o->hdrs.len : 0,
        .protocol = p,
        .extensions = e,
        .error_code = code,
        .error = err ? err : "",
        .tls_version = ll_net_tls_version(&ws->net),
        .tls_cipher = ll_net_tls_cipher(&ws->net),
    };
    if (ws->net.fd < 0) r.tls_version = r.tls_cipher = "";
    uint64_t after_tcp = ws->t_tls ? ws->t_tls : ws->t_connected;
    r.t.blocked = span_us(ws->t_start, ws->t_dns);
    r.t.connecting = span_us(ws->t_dial, ws->t_connected);
    r.t.tls_handshaking = span_us(ws->t_connected, ws->t_tls);
    r.t.sending = span_us(after_tcp, ws->t_sent);
    r.t.waiting = span_us(ws->t_sent, ws->t_head);
    r.t.duration = span_us(ws->t_start, ws->t_head ? ws->t_head : now);
    if (code) { /* the end: nothing follows (the opening's buffers go after the call) */
        ws_conn_close_fd(ws);
        ll_loop_timer_stop(ws->loop, &ws->timer);
        ll_loop_timer_stop(ws->loop, &ws->soon);
        ll_resolve_cancel(&o->wait);
        ws->st = W_DONE;
    }
    if (ws->cb.open) ws->cb.open(ws, &r, ws->ud);
    if (code && !ws->dead) ws_open_free(ws);
}

void ws_open_fail(ll_ws *ws, int code, const char *msg) {
    char m[320];
    /* k6's words for a lookup, a dial or a reset (not for the handshake's timeout) */
    const char *k6 = code == 1050 ? NULL : ll_http_error_text(code, ws->http_url, 0, m, sizeof(m));
    if (k6 != m) snprintf(m, sizeof(m), "%s", k6 ? k6 : msg);
    open_result(ws, code, m, NULL, 0, NULL, 0);
}

void ws_open_later(ll_ws *ws, int code, const char *msg) {
    ws->pending_code = code;
    snprintf(ws->msg, sizeof(ws->msg), "%s", msg);
    ll_loop_timer_start(ws->loop, &ws->soon, 0);
}

/* The 101 read: checked, then wslay takes over. */
static void ws_opened(ll_ws *ws, const char *rest, size_t rest_len) {
    ws_opening *o = ws->o;
    const char *proto, *ext;
    size_t plen, elen;
    char err[320];
    ll_header own = {(char *)"Sec-WebSocket-Protocol", o->protocol_header};
    ll_ws_handshake_in in = {.protocols = (const char *const *)o->protocols, .nprotocols = o->nprotocols,
                             .headers = &own, .nheaders = o->protocol_header ? 1 : 0,
                             .extensions = o->deflate ? LL_WS_DEFLATE_OFFER : NULL};
    int reset = 0;
    if (ll_ws_handshake_check(o->hdrs.p, o->hdrs.len, o->key, &in, &proto, &plen, &ext, &elen, err, sizeof(err)) < 0 ||
        (elen && ll_ws_deflate_accept(ext, elen, &reset, err, sizeof(err)) < 0))
        return ws_open_fail(ws, 1000, err);
    if (ws_conn_begin(ws, rest, rest_len, elen > 0, reset) < 0)
        return ws_open_fail(ws, 1000, "websocket: out of memory");
    ll_loop_timer_stop(ws->loop, &ws->timer);
    ws->st = W_OPEN;
    open_result(ws, 0, NULL, proto, plen, ext, elen);
    ws_open_free(ws);
    if (!ws->dead && ws->st == W_OPEN) ws_conn_go(ws);
}

/* ---- the open: the request out, the answer in ---- */

static void ws_write_head(ll_ws *ws) {
    ws_opening *o = ws->o;
    while (o->head_off < o->head.buf.len) {
        size_t n = 0;
        ll_net_status st = ws->net.ops->write(&ws->net, o->head.buf.p + o->head_off, o->head.buf.len - o->head_off, &n);
        if (st == LL_NET_WANT_WRITE) return ws_conn_watch(ws, LL_WRITABLE);
        if (st == LL_NET_WANT_READ) return ws_conn_watch(ws, LL_READABLE);
        if (st != LL_NET_OK) return ws_open_fail(ws, 1000, ws->net.err);
        o->head_off += n;
        ws->sent += (int64_t)n;
    }
    ws->t_sent = ll_loop_now_ns();
    ws->st = W_READING;
    ws_conn_watch(ws, LL_READABLE);
}

static void ws_read_head(ll_ws *ws) {
    ws_opening *o = ws->o;
    char buf[16384];
    for (;;) {
        size_t got = 0, used = 0;
        ll_net_status st = ws->net.ops->read(&ws->net, buf, sizeof(buf), &got);
        if (st == LL_NET_WANT_READ) return ws_conn_watch(ws, LL_READABLE);
        if (st == LL_NET_WANT_WRITE) return ws_conn_watch(ws, LL_WRITABLE);
        if (st == LL_NET_ERROR)
            return ws_open_fail(ws, ws->net.os_errno == ECONNRESET ? 1220 : 1000,
                             ws->net.os_errno == ECONNRESET ? "read: connection reset by peer" : ws->net.err);
        ws->received += (int64_t)got;
        int rc = ll_h1_parse_feed(&o->parse, buf, st == LL_NET_EOF ? 0 : got, &used);
        if (rc == LL_H1_MORE) continue;
        ws->t_head = ll_loop_now_ns();
        if (rc == LL_H1_ERROR && !o->parse.headers_done) {
            char m[300];
            snprintf(m, sizeof(m), "websocket: bad handshake: %s", o->parse.err);
            return ws_open_fail(ws, 1000, m);
        }
        if (o->parse.status != 101) {
            char m[120];
            snprintf(m, sizeof(m), "websocket: bad handshake: the server answered %d, not 101", o->parse.status);
            return ws_open_fail(ws, 1000, m);
        }
        return ws_opened(ws, buf + used, got - used);
    }
}

/* ---- the open: lookup, connect, TLS ---- */

static void ws_handshake_tls(ll_ws *ws) {
    ll_net_status st = ws->net.ops->handshake(&ws->net);
    if (st == LL_NET_WANT_READ) return ws_conn_watch(ws, LL_READABLE);
    if (st == LL_NET_WANT_WRITE) return ws_conn_watch(ws, LL_WRITABLE);
    if (st == LL_NET_ERROR) return ws_open_fail(ws, ws->net.tls_error == LL_TLS_ERR_VERIFY ? 1310 : 1300, ws->net.err);
    ws->t_tls = ll_loop_now_ns();
    ws->st = W_SENDING;
    ws_write_head(ws);
}

static void ws_arm(ll_ws *ws, uint64_t at) {
    if (at) ll_loop_timer_at(ws->loop, &ws->timer, at);
    else ll_loop_timer_stop(ws->loop, &ws->timer);
}

/* The TCP connection is up: TLS next, or the request. */
static void ws_connected(ll_ws *ws) {
    ws_opening *o = ws->o;
    ws->t_connected = ll_loop_now_ns();
    ws_arm(ws, o->deadline_ns);
    free(o->addrs);
    o->addrs = NULL;
    if (!ws->tls) {
        ws->st = W_SENDING;
        return ws_write_head(ws);
    }
    if (!ws->ctx) return ws_open_fail(ws, 1300, o->tls_err ? o->tls_err : "no TLS context");
    const char *name = o->server_name ? o->server_name : o->host;
    if (ll_net_tls_start(&ws->net, ws->ctx, name, o->session_key, 0) < 0)
        return ws_open_fail(ws, 1300, "out of memory starting TLS");
    ws->st = W_TLS;
    ws_handshake_tls(ws);
}

/* Starts a connect to the next address. 1: one started; 0: none left. */
static int ws_dial_next(ll_ws *ws) {
    ws_opening *o = ws->o;
    while (o->next_addr < o->naddrs) {
        const ll_addr *a = &o->addrs[o->next_addr++];
        if (o->local.len && a->ss.ss_family != o->local.ss.ss_family) {
            o->fail_errno = EAFNOSUPPORT;
            snprintf(o->fail_msg, sizeof(o->fail_msg), "no address of the IP version of the local address");
            continue;
        }
        const struct sockaddr *local = o->local.len ? (const struct sockaddr *)&o->local.ss : NULL;
        if (ll_net_open(&ws->net, (const struct sockaddr *)&a->ss, a->len, local, o->local.len) < 0) {
            o->fail_errno = ws->net.os_errno;
            snprintf(o->fail_msg, sizeof(o->fail_msg), "%s", ws->net.err);
            continue;
        }
        ws->watching = 0;
        ws_conn_watch(ws, LL_WRITABLE);
        return 1;
    }
    return 0;
}

static int dial_code(int e) { return e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210; }

/* No address left to try: the open fails (now, or from the loop when
 * inside ll_ws_open). */
static void ws_dial_failed(ll_ws *ws, int later) {
    ws_opening *o = ws->o;
    char m[320];
    snprintf(m, sizeof(m), "dial tcp %s:%d: %s", o->host, o->port, o->fail_msg);
    if (later) return ws_open_later(ws, dial_code(o->fail_errno), m);
    ws_open_fail(ws, dial_code(o->fail_errno), m);
}

/* Connects to addrs (ws owns them). later: inside ll_ws_open. */
static void ws_dial(ll_ws *ws, ll_addr *addrs, int n, int later) {
    ws_opening *o = ws->o;
    o->addrs = addrs;
    o->naddrs = n;
    o->next_addr = 0;
    ws->st = W_CONNECTING;
    ws->t_dns = ws->t_dial = ll_loop_now_ns();
    uint64_t at = o->dial_deadline_ns && (!o->deadline_ns || o->dial_deadline_ns < o->deadline_ns) ? o->dial_deadline_ns
                                                                                                   : o->deadline_ns;
    ws_arm(ws, at);
    if (!ws_dial_next(ws)) ws_dial_failed(ws, later);
}

static void on_resolved(void *ud, ll_addr *addrs, int n, int code, const char *err) {
    ll_ws *ws = ud;
    ws_conn_hold(ws);
    if (!addrs) {
        char m[320];
        snprintf(m, sizeof(m), "lookup %s: %s", ws->o->host, err);
        ws_open_fail(ws, code, m);
    } else {
        ws_dial(ws, addrs, n, 0);
    }
    ws_conn_release(ws);
}

/* The connect in flight became writable: up, or on to the next address. */
static void ws_dial_event(ll_ws *ws) {
    if (ll_net_connected(&ws->net) == 0) return ws_connected(ws);
    ws_opening *o = ws->o;
    o->fail_errno = ws->net.os_errno;
    snprintf(o->fail_msg, sizeof(o->fail_msg), "%s", ws->net.err);
    ws_conn_close_fd(ws);
    if (!ws_dial_next(ws)) ws_dial_failed(ws, 0);
}

void ws_open_timeout(ll_ws *ws) {
    ws_opening *o = ws->o;
    char m[320];
    if (ws->st == W_CONNECTING && o->dial_deadline_ns && ll_loop_now_ns() < o->deadline_ns) {
        snprintf(m, sizeof(m), "dial tcp %s:%d: i/o timeout", o->host, o->port);
        ws_open_fail(ws, 1211, m);
    } else {
        ws_open_fail(ws, 1050, "websocket: the opening handshake timed out");
    }
}

void ws_open_event(ll_ws *ws) {
    switch (ws->st) {
    case W_CONNECTING: ws_dial_event(ws); break;
    case W_TLS: ws_handshake_tls(ws); break;
    case W_SENDING: ws_write_head(ws); break;
    case W_READING: ws_read_head(ws); break;
    default: break;
    }
}

/* The opening's copies of what the caller offered, and the request head. */
static int ws_prepare(ll_ws *ws, const ll_url *u, const ll_ws_opts *opts, char *err, size_t errlen) {
    ws_opening *o = ws->o;
    const ll_client_opts *c = opts->client;
    o->protocols = ll_xcalloc((size_t)opts->nprotocols + 1, sizeof(char *));
    for (int i = 0; i < opts->nprotocols; i++) o->protocols[i] = ll_xstrdup(opts->protocols[i]);
    o->nprotocols = opts->nprotocols;
    for (int i = 0; i < opts->nheaders; i++)
        if (strcasecmp(opts->headers[i].name, "Sec-WebSocket-Protocol") == 0 && !o->protocol_header)
            o->protocol_header = ll_xstrdup(opts->headers[i].value);
    if (ll_ws_handshake_key(o->key) < 0) {
        snprintf(err, errlen, "websocket: no entropy for the handshake's key");
        return -1;
    }
    ll_ws_handshake_in in = {.url = u, .headers = opts->headers, .nheaders = opts->nheaders, .cookie = opts->cookie,
                             .protocols = opts->protocols, .nprotocols = opts->nprotocols,
                             .user_agent = c && c->user_agent ? c->user_agent : NULL,
                             .extensions = opts->deflate ? LL_WS_DEFLATE_OFFER : NULL};
    o->deflate = opts->deflate;
    if (ll_ws_handshake_build(&o->head, &in, o->key, err, errlen) < 0) return -1;
    ll_h1_parse_start(&o->parse, &o->hdrs, &o->body, 0, 0);
    o->host = ll_xstrdup(u->host);
    o->port = u->port;
    if (c && c->server_name && *c->server_name) o->server_name = ll_xstrdup(c->server_name);
    snprintf(o->session_key, sizeof(o->session_key), "%.*s:%d", (int)sizeof(o->session_key) - 8,
             o->server_name ? o->server_name : o->host, o->port);
    if (c && c->local_addr) o->local = *c->local_addr;
    uint64_t now = ll_loop_now_ns();
    long t = c && c->timeout_ms > 0 ? c->timeout_ms : LL_WS_OPEN_TIMEOUT_MS_DEFAULT;
    o->deadline_ns = now + ms_ns(t);
    o->dial_deadline_ns = c && c->dial_timeout_ms > 0 ? now + ms_ns(c->dial_timeout_ms) : 0;
    if (ws->tls && !ws->ctx) {
        static const ll_client_opts none;
        char terr[256] = "";
        ws->ctx = ll_tls_ctx_new(c ? c : &none, terr, sizeof(terr));
        ws->own_ctx = ws->ctx != NULL;
        if (!ws->ctx) o->tls_err = ll_xstrdup(terr); /* a failed open, told from the loop */
    }
    return 0;
}

int ws_open_start(ll_ws *ws, const ll_url *u, const ll_ws_opts *opts, char *err, size_t errlen) {
    ws->o = ll_xcalloc(1, sizeof(*ws->o));
    ws->st = W_RESOLVING;
    if (ws_prepare(ws, u, opts, err, errlen) < 0) return -1;
    ws_opening *o = ws->o;
    ll_addr *addrs = NULL;
    int n = 0, code = 0;
    const char *why = NULL;
    char *const *connect_to = opts->client ? opts->client->connect_to : NULL;
    int rc = ll_resolve(opts->dns, connect_to, u->host, u->port, &o->wait, on_resolved, ws, &addrs, &n, &code, &why);
    if (rc < 0) {
        char m[320];
        snprintf(m, sizeof(m), "lookup %s: %s", o->host, why);
        ws_open_later(ws, code, m);
    } else if (rc == 0) {
        ws_dial(ws, addrs, n, 1);
    } else {
        ws_arm(ws, o->deadline_ns);
    }
    return 0;
}
