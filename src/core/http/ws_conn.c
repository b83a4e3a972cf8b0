/* ws_conn.c -- a WebSocket client connection on the worker's loop (see
 * ws_conn.h): opening (lookup, connect, TLS, the HTTP/1.1 handshake), then
 * wslay's event API over net.h, and the end (close handshake, errors,
 * cancel).
 *
 * Reentrancy: every entry from the loop holds the connection (depth); a
 * callback may call ll_ws_free, which then only marks it dead, and the
 * entry frees it on its way out. No callback runs once it is dead, and
 * none runs inside an ll_ws_* call: what those calls start goes on at the
 * loop's next turn (the soon timer). */
#include "ws_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#include "h1_parse.h"
#include "http_error.h"
#include "net.h"
#include "rng.h"
#include "url.h"
#include "ws_deflate.h"
#include "ws_handshake.h"
#include "xmalloc.h"

/* W_RESOLVING .. W_READING: opening; W_OPEN: frames (closing too); W_DONE:
 * over, its last callback given */
typedef enum { W_RESOLVING, W_CONNECTING, W_TLS, W_SENDING, W_READING, W_OPEN, W_DONE } ws_st;

/* What only the open needs, freed once it is over. */
typedef struct ws_opening {
    ll_resolve_wait wait;
    ll_addr *addrs;
    int naddrs, next_addr;
    ll_addr local;
    char *host;
    int port;
    char session_key[280];
    char *server_name;         /* SNI and the name checked; NULL: the host */
    char *tls_err;             /* why the own TLS context could not be made */
    ll_h1_head head;
    size_t head_off;
    ll_h1_parse parse;
    ll_buf hdrs, body;
    char key[LL_WS_KEY_LEN];
    char **protocols;          /* offered (copies), for the check */
    int nprotocols;
    char *protocol_header;     /* a Sec-WebSocket-Protocol header of the caller's */
    int deflate;               /* permessage-deflate offered */
    uint64_t deadline_ns, dial_deadline_ns;
    int fail_errno;
    char fail_msg[200];
} ws_opening;

struct ll_ws {
    ll_loop *loop;
    ll_ws_callbacks cb;
    void *ud;
    ws_st st;
    ll_net_conn net;
    int watching;
    int tls;                   /* wss */
    ll_tls_ctx *ctx;
    int own_ctx;
    ws_opening *o;
    char *http_url;            /* the URL as http(s), for k6's error texts */
    wslay_event_context_ptr wc;
    ll_ws_deflate_inflater *inflater; /* permessage-deflate is on */
    uint64_t rng[4];           /* frame masks */
    uint64_t max_message;
    long close_timeout_ms;
    ll_timer timer;            /* the open's deadline, then the close's */
    ll_timer soon;             /* a send or a failure, at the next turn */
    char *rest;                /* bytes read after the 101's head: frames already */
    size_t rest_len, rest_off;
    uint64_t t_start, t_dns, t_dial, t_connected, t_tls, t_sent, t_head;
    int64_t sent, received;
    int depth, dead;
    int pending_code;          /* a failure to give at the next turn */
    int failing;               /* wslay refused a frame: an error, then the end */
    int fail_close;            /* or this file did, with this close code (its error in msg) */
    int net_code;              /* the socket failed under wslay (k6 code) */
    char net_msg[200];
    int eof;                   /* the server closed the connection */
    uint16_t recv_code;        /* of the close frame received, 0: none */
    char reason[124];
    size_t reason_len;
    char msg[320];
};

static void on_fd(ll_loop *loop, int fd, int events, void *ud);

static uint64_t ms_ns(long ms) { return (uint64_t)ms * 1000000ull; }

static void ws_watch(ll_ws *ws, int events) {
    if (ws->watching == events || ws->net.fd < 0) return;
    if (ll_loop_watch(ws->loop, ws->net.fd, events, on_fd, ws) == 0) ws->watching = events;
}

static void ws_close_fd(ll_ws *ws) {
    if (ws->net.fd < 0) return;
    ll_loop_forget(ws->loop, ws->net.fd);
    ws->net.ops->close(&ws->net);
    ws->net.fd = -1;
    ws->watching = 0;
}

static void opening_free(ll_ws *ws) {
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

/* Everything stops: the socket, the timers, the lookup. */
static void ws_stop(ll_ws *ws) {
    ws_close_fd(ws);
    ll_loop_timer_stop(ws->loop, &ws->timer);
    ll_loop_timer_stop(ws->loop, &ws->soon);
    opening_free(ws);
    ws->st = W_DONE;
}

static void ws_destroy(ll_ws *ws) {
    ws_stop(ws);
    if (ws->wc) wslay_event_context_free(ws->wc);
    ll_ws_deflate_inflater_free(ws->inflater);
    if (ws->own_ctx) ll_tls_ctx_free(ws->ctx);
    free(ws->rest);
    free(ws->http_url);
    free(ws);
}

/* An entry from the loop holds ws; the last one out frees a dead one. */
static void ws_hold(ll_ws *ws) { ws->depth++; }
static void ws_release(ll_ws *ws) {
    if (--ws->depth == 0 && ws->dead) ws_destroy(ws);
}

static int64_t span_us(uint64_t from, uint64_t to) { return from && to > from ? (int64_t)((to - from) / 1000) : 0; }

/* ---- the open's end ---- */

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
        ws_close_fd(ws);
        ll_loop_timer_stop(ws->loop, &ws->timer);
        ll_loop_timer_stop(ws->loop, &ws->soon);
        ll_resolve_cancel(&o->wait);
        ws->st = W_DONE;
    }
    if (ws->cb.open) ws->cb.open(ws, &r, ws->ud);
    if (code && !ws->dead) opening_free(ws);
}

/* The open failed: the open callback says why, and nothing follows. */
static void open_fail(ll_ws *ws, int code, const char *msg) {
    char m[320];
    /* k6's words for a lookup, a dial or a reset (not for the handshake's timeout) */
    const char *k6 = code == 1050 ? NULL : ll_http_error_text(code, ws->http_url, m, sizeof(m));
    if (k6 != m) snprintf(m, sizeof(m), "%s", k6 ? k6 : msg);
    open_result(ws, code, m, NULL, 0, NULL, 0);
}

/* A failure found inside an ll_ws_* call, given from the loop. */
static void fail_later(ll_ws *ws, int code, const char *msg) {
    ws->pending_code = code;
    snprintf(ws->msg, sizeof(ws->msg), "%s", msg);
    ll_loop_timer_start(ws->loop, &ws->soon, 0);
}

/* ---- the end of an open connection ---- */

/* The last callback. */
static void ws_finish(ll_ws *ws) {
    int code = ws->recv_code ? ws->recv_code : LL_WS_CLOSE_ABNORMAL;
    if (!ws->recv_code && wslay_event_get_close_sent(ws->wc)) code = wslay_event_get_status_code_sent(ws->wc);
    if (ws->eof && !ws->recv_code && !ws->failing) code = LL_WS_CLOSE_ABNORMAL;
    char reason[124];
    size_t rlen = ws->reason_len;
    memcpy(reason, ws->reason, rlen);
    reason[rlen] = 0;
    ws_stop(ws);
    if (ws->cb.close) ws->cb.close(ws, code, reason, rlen, ws->ud);
}

static void ws_error(ll_ws *ws, int code, const char *msg) {
    if (ws->cb.error) ws->cb.error(ws, code, msg, ws->ud);
}

/* Why wslay refused what the server sent, by the close code it answered with. */
static void ws_protocol_error(ll_ws *ws) {
    if (ws->fail_close) return ws_error(ws, 1000, ws->msg);
    int sent = wslay_event_get_close_sent(ws->wc) ? wslay_event_get_status_code_sent(ws->wc) : 1002;
    char m[320];
    if (sent == 1009)
        snprintf(m, sizeof(m), "websocket: the server sent a message over the maximum size of %llu bytes (close 1009)",
                 (unsigned long long)ws->max_message);
    else if (sent == 1007)
        snprintf(m, sizeof(m), "websocket: the server sent text that is not valid UTF-8 (close 1007)");
    else
        snprintf(m, sizeof(m), "websocket: the server sent a malformed frame (a reserved bit or opcode, a masked "
                 "frame, a bad control frame or continuation; close 1002)");
    ws_error(ws, 1000, m);
}

/* The connection failed under wslay (the socket, or a frame refused):
 * the error, then the close. */
static void ws_end_failed(ll_ws *ws) {
    if (ws->failing) ws_protocol_error(ws);
    else if (ws->net_code) ws_error(ws, ws->net_code, ws->net_msg);
    if (!ws->dead) ws_finish(ws);
}

/* After wslay read or was given something to send: send, watch, or end. */
static void ws_after(ll_ws *ws) {
    if (ws->st != W_OPEN) return;
    int got_close = wslay_event_get_close_received(ws->wc);
    if (ws->eof && !got_close && !ws->failing && !ws->net_code) {
        ws->net_code = 1000;
        snprintf(ws->net_msg, sizeof(ws->net_msg), "websocket: close 1006 (abnormal closure): unexpected EOF");
    }
    if (!ws->net_code && !ws->eof && wslay_event_want_write(ws->wc) && wslay_event_send(ws->wc) < 0 && !ws->net_code) {
        ws->net_code = 1000;
        snprintf(ws->net_msg, sizeof(ws->net_msg), "websocket: out of memory sending");
    }
    if (ws->net_code && !(got_close && !ws->failing)) return ws_end_failed(ws);
    if (ws->failing && ws->eof) return ws_end_failed(ws);
    int r = wslay_event_want_read(ws->wc) && !ws->eof;
    int w = wslay_event_want_write(ws->wc) && !ws->net_code && !ws->eof;
    if (!r && !w) return ws->failing ? ws_end_failed(ws) : ws_finish(ws);
    ws_watch(ws, (r ? LL_READABLE : 0) | (w ? LL_WRITABLE : 0));
}

/* ---- wslay's callbacks: bytes through net.h, frames to the caller ---- */

static ssize_t wc_recv(wslay_event_context_ptr wc, uint8_t *buf, size_t len, int flags, void *ud) {
    (void)flags;
    ll_ws *ws = ud;
    if (ws->dead) {
        wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (ws->rest) { /* what came after the 101's head first */
        size_t n = ws->rest_len - ws->rest_off < len ? ws->rest_len - ws->rest_off : len;
        memcpy(buf, ws->rest + ws->rest_off, n);
        ws->rest_off += n;
        if (ws->rest_off == ws->rest_len) {
            free(ws->rest);
            ws->rest = NULL;
        }
        return (ssize_t)n;
    }
    size_t got = 0;
    ll_net_status st = ws->net.ops->read(&ws->net, (char *)buf, len, &got);
    if (st == LL_NET_OK) {
        ws->received += (int64_t)got;
        return (ssize_t)got;
    }
    if (st == LL_NET_WANT_READ || st == LL_NET_WANT_WRITE) {
        wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (st == LL_NET_EOF) ws->eof = 1;
    else {
        ws->net_code = ws->net.os_errno == ECONNRESET ? 1220 : 1000;
        snprintf(ws->net_msg, sizeof(ws->net_msg), "%s",
                 ws->net_code == 1220 ? "read: connection reset by peer" : ws->net.err);
    }
    wslay_event_set_error(wc, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static ssize_t wc_send(wslay_event_context_ptr wc, const uint8_t *data, size_t len, int flags, void *ud) {
    (void)flags;
    ll_ws *ws = ud;
    if (ws->dead || ws->net.fd < 0) {
        wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t wrote = 0;
    ll_net_status st = ws->net.ops->write(&ws->net, (const char *)data, len, &wrote);
    if (st == LL_NET_OK) {
        ws->sent += (int64_t)wrote;
        return (ssize_t)wrote;
    }
    if (st == LL_NET_WANT_READ || st == LL_NET_WANT_WRITE) {
        wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    ws->net_code = ws->net.os_errno == ECONNRESET || ws->net.os_errno == EPIPE ? 1220 : 1000;
    snprintf(ws->net_msg, sizeof(ws->net_msg), "write: %s", ws->net.err ? ws->net.err : "failed");
    wslay_event_set_error(wc, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static int wc_genmask(wslay_event_context_ptr wc, uint8_t *buf, size_t len, void *ud) {
    (void)wc;
    ll_ws *ws = ud;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t r = ll_rng_next(ws->rng);
        memcpy(buf + i, &r, len - i < 8 ? len - i : 8);
    }
    return 0;
}

/* This file refuses what the server sent (wslay took it): close with
 * code, the error msg. */
static void ws_refuse(ll_ws *ws, int code, const char *msg) {
    ws->failing = 1;
    ws->fail_close = code;
    snprintf(ws->msg, sizeof(ws->msg), "%s", msg);
    wslay_event_shutdown_read(ws->wc);
    wslay_event_queue_close(ws->wc, (uint16_t)code, NULL, 0);
    ll_loop_timer_start(ws->loop, &ws->timer, (uint64_t)ws->close_timeout_ms * 1000u);
}

/* A data message: inflated when compressed, then the caller's. */
static void ws_data(ll_ws *ws, const struct wslay_event_on_msg_recv_arg *a) {
    const char *p = (const char *)a->msg;
    size_t n = a->msg_length;
    int op = a->opcode == WSLAY_TEXT_FRAME ? LL_WS_TEXT : LL_WS_BINARY;
    ll_buf plain = {0};
    if (wslay_get_rsv1(a->rsv) && ws->inflater) {
        const char *why = NULL;
        int rc = ll_ws_deflate_inflate(ws->inflater, p, n, ws->max_message, &plain, &why);
        char m[320];
        if (rc == -2)
            snprintf(m, sizeof(m), "websocket: the server sent a message over the maximum size of %llu bytes once "
                     "inflated (close 1009)", (unsigned long long)ws->max_message);
        else if (rc < 0)
            snprintf(m, sizeof(m), "websocket: the server sent a compressed message that does not inflate: %s "
                     "(close 1007)", why);
        else if (op == LL_WS_TEXT && !ll_ws_deflate_utf8_ok(plain.p, plain.len))
            snprintf(m, sizeof(m), "websocket: the server sent text that is not valid UTF-8 (close 1007)"), rc = -3;
        if (rc < 0) {
            ll_buf_free(&plain);
            return ws_refuse(ws, rc == -2 ? 1009 : 1007, m);
        }
        p = plain.p ? plain.p : "";
        n = plain.len;
    }
    if (ws->cb.message) ws->cb.message(ws, op, p, n, ws->ud);
    ll_buf_free(&plain);
}

static void wc_msg(wslay_event_context_ptr wc, const struct wslay_event_on_msg_recv_arg *a, void *ud) {
    (void)wc;
    ll_ws *ws = ud;
    if (ws->dead || ws->st != W_OPEN || ws->failing) return;
    const char *p = (const char *)a->msg;
    size_t n = a->msg_length;
    if (a->opcode == WSLAY_TEXT_FRAME || a->opcode == WSLAY_BINARY_FRAME) {
        ws_data(ws, a);
    } else if (a->opcode == WSLAY_PING) {
        if (ws->cb.ping) ws->cb.ping(ws, p, n, ws->ud);
    } else if (a->opcode == WSLAY_PONG) {
        if (ws->cb.pong) ws->cb.pong(ws, p, n, ws->ud);
    } else if (a->opcode == WSLAY_CONNECTION_CLOSE) {
        ws->recv_code = a->status_code ? a->status_code : 1005;
        ws->reason_len = n > 2 ? (n - 2 < sizeof(ws->reason) - 1 ? n - 2 : sizeof(ws->reason) - 1) : 0;
        if (ws->reason_len) memcpy(ws->reason, p + 2, ws->reason_len);
    }
}

/* The frames readable now (and what the 101's read held after its head). */
static void ws_read(ll_ws *ws) {
    int rc = wslay_event_recv(ws->wc);
    if (ws->dead) return;
    if (rc == WSLAY_ERR_NOMEM && !ws->net_code) {
        ws->net_code = 1000;
        snprintf(ws->net_msg, sizeof(ws->net_msg), "websocket: out of memory reading a message");
    }
    /* wslay stops reading and queues its close when it refuses a frame */
    if (!ws->failing && !ws->net_code && !ws->eof && !wslay_event_get_read_enabled(ws->wc) &&
        !wslay_event_get_close_received(ws->wc)) {
        ws->failing = 1; /* its close may not get out: the close timeout bounds the wait */
        ll_loop_timer_start(ws->loop, &ws->timer, (uint64_t)ws->close_timeout_ms * 1000u);
    }
    ws_after(ws);
}

/* The 101 checked: wslay takes over. */
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
        return open_fail(ws, 1000, err);
    if (elen && !(ws->inflater = ll_ws_deflate_inflater_new(reset)))
        return open_fail(ws, 1000, "websocket: out of memory");
    static const struct wslay_event_callbacks cbs = {
        .recv_callback = wc_recv, .send_callback = wc_send, .genmask_callback = wc_genmask, .on_msg_recv_callback = wc_msg};
    if (wslay_event_context_client_init(&ws->wc, &cbs, ws) != 0) return open_fail(ws, 1000, "websocket: out of memory");
    wslay_event_config_set_max_recv_msg_length(ws->wc, ws->max_message);
    if (ws->inflater) wslay_event_config_set_allowed_rsv_bits(ws->wc, WSLAY_RSV1_BIT);
    if (rest_len) {
        ws->rest = malloc(rest_len);
        if (!ws->rest) return open_fail(ws, 1000, "websocket: out of memory");
        memcpy(ws->rest, rest, rest_len);
        ws->rest_len = rest_len;
    }
    ll_loop_timer_stop(ws->loop, &ws->timer);
    ws->st = W_OPEN;
    open_result(ws, 0, NULL, proto, plen, ext, elen);
    opening_free(ws);
    if (ws->dead || ws->st != W_OPEN) return;
    if (ws->rest) return ws_read(ws);
    ws_after(ws);
}

/* ---- the open: the request out, the answer in ---- */

static void ws_write_head(ll_ws *ws) {
    ws_opening *o = ws->o;
    while (o->head_off < o->head.buf.len) {
        size_t n = 0;
        ll_net_status st = ws->net.ops->write(&ws->net, o->head.buf.p + o->head_off, o->head.buf.len - o->head_off, &n);
        if (st == LL_NET_WANT_WRITE) return ws_watch(ws, LL_WRITABLE);
        if (st == LL_NET_WANT_READ) return ws_watch(ws, LL_READABLE);
        if (st != LL_NET_OK) return open_fail(ws, 1000, ws->net.err);
        o->head_off += n;
        ws->sent += (int64_t)n;
    }
    ws->t_sent = ll_loop_now_ns();
    ws->st = W_READING;
    ws_watch(ws, LL_READABLE);
}

static void ws_read_head(ll_ws *ws) {
    ws_opening *o = ws->o;
    char buf[16384];
    for (;;) {
        size_t got = 0, used = 0;
        ll_net_status st = ws->net.ops->read(&ws->net, buf, sizeof(buf), &got);
        if (st == LL_NET_WANT_READ) return ws_watch(ws, LL_READABLE);
        if (st == LL_NET_WANT_WRITE) return ws_watch(ws, LL_WRITABLE);
        if (st == LL_NET_ERROR)
            return open_fail(ws, ws->net.os_errno == ECONNRESET ? 1220 : 1000,
                             ws->net.os_errno == ECONNRESET ? "read: connection reset by peer" : ws->net.err);
        ws->received += (int64_t)got;
        int rc = ll_h1_parse_feed(&o->parse, buf, st == LL_NET_EOF ? 0 : got, &used);
        if (rc == LL_H1_MORE) continue;
        ws->t_head = ll_loop_now_ns();
        if (rc == LL_H1_ERROR && !o->parse.headers_done) {
            char m[300];
            snprintf(m, sizeof(m), "websocket: bad handshake: %s", o->parse.err);
            return open_fail(ws, 1000, m);
        }
        if (o->parse.status != 101) {
            char m[120];
            snprintf(m, sizeof(m), "websocket: bad handshake: the server answered %d, not 101", o->parse.status);
            return open_fail(ws, 1000, m);
        }
        return ws_opened(ws, buf + used, got - used);
    }
}

/* ---- the open: lookup, connect, TLS ---- */

static void ws_handshake_tls(ll_ws *ws) {
    ll_net_status st = ws->net.ops->handshake(&ws->net);
    if (st == LL_NET_WANT_READ) return ws_watch(ws, LL_READABLE);
    if (st == LL_NET_WANT_WRITE) return ws_watch(ws, LL_WRITABLE);
    if (st == LL_NET_ERROR) return open_fail(ws, ws->net.tls_error == LL_TLS_ERR_VERIFY ? 1310 : 1300, ws->net.err);
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
    if (!ws->ctx) return open_fail(ws, 1300, o->tls_err ? o->tls_err : "no TLS context");
    const char *name = o->server_name ? o->server_name : o->host;
    if (ll_net_tls_start(&ws->net, ws->ctx, name, o->session_key, 0) < 0)
        return open_fail(ws, 1300, "out of memory starting TLS");
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
        ws_watch(ws, LL_WRITABLE);
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
    if (later) return fail_later(ws, dial_code(o->fail_errno), m);
    open_fail(ws, dial_code(o->fail_errno), m);
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
    ws_hold(ws);
    if (!addrs) {
        char m[320];
        snprintf(m, sizeof(m), "lookup %s: %s", ws->o->host, err);
        open_fail(ws, code, m);
    } else {
        ws_dial(ws, addrs, n, 0);
    }
    ws_release(ws);
}

/* The connect in flight became writable: up, or on to the next address. */
static void ws_dial_event(ll_ws *ws) {
    if (ll_net_connected(&ws->net) == 0) return ws_connected(ws);
    ws_opening *o = ws->o;
    o->fail_errno = ws->net.os_errno;
    snprintf(o->fail_msg, sizeof(o->fail_msg), "%s", ws->net.err);
    ws_close_fd(ws);
    if (!ws_dial_next(ws)) ws_dial_failed(ws, 0);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    (void)fd;
    ll_ws *ws = ud;
    ws_hold(ws);
    switch (ws->st) {
    case W_CONNECTING: ws_dial_event(ws); break;
    case W_TLS: ws_handshake_tls(ws); break;
    case W_SENDING: ws_write_head(ws); break;
    case W_READING: ws_read_head(ws); break;
    case W_OPEN:
        if (events & LL_READABLE) ws_read(ws);
        else ws_after(ws);
        break;
    default: break;
    }
    ws_release(ws);
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    ll_ws *ws = ud;
    ws_hold(ws);
    if (ws->st == W_OPEN) {
        if (ws->failing) ws_end_failed(ws);
        else ws_finish(ws); /* the server did not answer the close in time */
    } else if (ws->st != W_DONE) {
        ws_opening *o = ws->o;
        char m[320];
        if (ws->st == W_CONNECTING && o->dial_deadline_ns && ll_loop_now_ns() < o->deadline_ns) {
            snprintf(m, sizeof(m), "dial tcp %s:%d: i/o timeout", o->host, o->port);
            open_fail(ws, 1211, m);
        } else {
            open_fail(ws, 1050, "websocket: the opening handshake timed out");
        }
    }
    ws_release(ws);
}

static void on_soon(ll_loop *loop, void *ud) {
    (void)loop;
    ll_ws *ws = ud;
    ws_hold(ws);
    if (ws->pending_code && ws->st != W_DONE) open_fail(ws, ws->pending_code, ws->msg);
    else ws_after(ws);
    ws_release(ws);
}

/* ---- the caller's calls ---- */

/* "ws://..." as "http://..." (wss: https), malloc'd; NULL when url is not ws(s). */
static char *ws_http_url(const char *url) {
    int tls = strncasecmp(url, "wss://", 6) == 0;
    if (!tls && strncasecmp(url, "ws://", 5) != 0) return NULL;
    const char *rest = url + (tls ? 6 : 5);
    size_t n = strlen(rest);
    char *s = malloc(n + 9);
    if (s) snprintf(s, n + 9, "%s://%s", tls ? "https" : "http", rest);
    return s;
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

ll_ws *ll_ws_open(ll_loop *loop, const char *url, const ll_ws_opts *opts, const ll_ws_callbacks *cb, void *ud,
                  char *err, size_t errlen) {
    char *http = ws_http_url(url);
    ll_url u;
    if (!http || ll_url_parse(&u, http) < 0) {
        snprintf(err, errlen, "websocket: \"%.200s\" is not a ws:// or wss:// URL", url);
        free(http);
        return NULL;
    }
    ll_ws *ws = ll_xcalloc(1, sizeof(*ws));
    ws->http_url = http;
    ws->loop = loop;
    ws->cb = *cb;
    ws->ud = ud;
    ws->net.fd = -1;
    ws->net.ops = &ll_net_plain;
    ws->tls = strcmp(u.scheme, "https") == 0;
    ws->ctx = opts->tls;
    ws->max_message = opts->max_message ? opts->max_message : LL_WS_MAX_MESSAGE_DEFAULT;
    ws->close_timeout_ms = opts->close_timeout_ms > 0 ? opts->close_timeout_ms : LL_WS_CLOSE_TIMEOUT_MS_DEFAULT;
    static uint64_t streams;
    ll_rng_seed(ws->rng, ll_rng_entropy_seed(), __atomic_add_fetch(&streams, 1, __ATOMIC_RELAXED));
    ll_loop_timer_init(&ws->timer, on_timer, ws);
    ll_loop_timer_init(&ws->soon, on_soon, ws);
    ws->o = ll_xcalloc(1, sizeof(*ws->o));
    ws->t_start = ll_loop_now_ns();
    ws->st = W_RESOLVING;
    if (ws_prepare(ws, &u, opts, err, errlen) < 0) {
        ll_url_free(&u);
        ws_destroy(ws);
        return NULL;
    }
    ws_opening *o = ws->o;
    ll_addr *addrs = NULL;
    int n = 0, code = 0;
    const char *why = NULL;
    char *const *connect_to = opts->client ? opts->client->connect_to : NULL;
    int rc = ll_resolve(opts->dns, connect_to, u.host, u.port, &o->wait, on_resolved, ws, &addrs, &n, &code, &why);
    ll_url_free(&u);
    if (rc < 0) {
        char m[320];
        snprintf(m, sizeof(m), "lookup %s: %s", o->host, why);
        fail_later(ws, code, m);
    } else if (rc == 0) {
        ws_dial(ws, addrs, n, 1);
    } else {
        ws_arm(ws, o->deadline_ns);
    }
    return ws;
}

int ll_ws_send(ll_ws *ws, int opcode, const void *data, size_t len) {
    if (ws->st != W_OPEN || ws->dead || !wslay_event_get_write_enabled(ws->wc) || ws->failing) return -1;
    struct wslay_event_msg m = {opcode == LL_WS_BINARY ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME, data, len};
    ll_buf z = {0};
    if (ws->inflater) { /* permessage-deflate: every data message compressed */
        if (len > UINT32_MAX || ll_ws_deflate_compress(data, len, &z) < 0) {
            ll_buf_free(&z);
            return -1;
        }
        m.msg = (const uint8_t *)(z.p ? z.p : "");
        m.msg_length = z.len;
    }
    int rc = wslay_event_queue_msg_ex(ws->wc, &m, ws->inflater ? WSLAY_RSV1_BIT : WSLAY_RSV_NONE);
    ll_buf_free(&z);
    if (rc != 0) return -1;
    ll_loop_timer_start(ws->loop, &ws->soon, 0);
    return 0;
}

int ll_ws_ping(ll_ws *ws, const void *data, size_t len) {
    if (ws->st != W_OPEN || ws->dead || len > 125 || !wslay_event_get_write_enabled(ws->wc) || ws->failing) return -1;
    struct wslay_event_msg m = {WSLAY_PING, data, len};
    if (wslay_event_queue_msg(ws->wc, &m) != 0) return -1;
    ll_loop_timer_start(ws->loop, &ws->soon, 0);
    return 0;
}

static int close_code_ok(int code) {
    return code == 0 || (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

int ll_ws_close(ll_ws *ws, int code, const char *reason, size_t len) {
    if (!close_code_ok(code) || len > 123 || (code == 0 && len > 0)) return -1;
    if (ws->dead || ws->st == W_DONE) return 0;
    if (ws->st != W_OPEN) {
        if (!ws->pending_code) fail_later(ws, 1000, "websocket: closed before the opening handshake completed");
        return 0;
    }
    if (ws->failing || wslay_event_get_close_sent(ws->wc) || !wslay_event_get_write_enabled(ws->wc)) return 0;
    int rc = wslay_event_queue_close(ws->wc, (uint16_t)code, (const uint8_t *)reason, len);
    if (rc == WSLAY_ERR_NO_MORE_MSG) return 0; /* a close is queued already */
    if (rc != 0) return -1;
    ll_loop_timer_start(ws->loop, &ws->timer, (uint64_t)ws->close_timeout_ms * 1000u);
    ll_loop_timer_start(ws->loop, &ws->soon, 0);
    return 0;
}

size_t ll_ws_buffered(const ll_ws *ws) { return ws->wc ? wslay_event_get_queued_msg_length(ws->wc) : 0; }

ll_ws_state ll_ws_ready_state(const ll_ws *ws) {
    if (ws->st == W_DONE || ws->dead) return LL_WS_CLOSED;
    if (ws->st != W_OPEN) return LL_WS_CONNECTING;
    return wslay_event_get_close_sent(ws->wc) || wslay_event_get_close_received(ws->wc) || ws->failing ||
                   ll_loop_timer_armed(&ws->timer)
               ? LL_WS_CLOSING
               : LL_WS_OPEN;
}

void ll_ws_bytes(const ll_ws *ws, int64_t *sent, int64_t *received) {
    *sent = ws->sent;
    *received = ws->received;
}

void ll_ws_free(ll_ws *ws) {
    if (!ws || ws->dead) return;
    ws->dead = 1;
    ws_stop(ws);
    if (ws->depth == 0) ws_destroy(ws);
}
