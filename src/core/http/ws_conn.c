/* ws_conn.c -- a WebSocket client connection on the worker's loop (see
 * ws_conn.h and ws_conn_internal.h): the caller's calls, the loop's events, and once
 * ws_open.c has opened it, frames through wslay's event API over net.h,
 * the close handshake, errors and the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rng.h"
#include "ws_conn_internal.h"
#include "xmalloc.h"

static void on_fd(ll_loop *loop, int fd, int events, void *ud);

void ws_conn_watch(ll_ws *ws, int events) {
    if (ws->watching == events || ws->net.fd < 0) return;
    if (ll_loop_watch(ws->loop, ws->net.fd, events, on_fd, ws) == 0) ws->watching = events;
}

void ws_conn_close_fd(ll_ws *ws) {
    if (ws->net.fd < 0) return;
    ll_loop_forget(ws->loop, ws->net.fd);
    ws->net.ops->close(&ws->net);
    ws->net.fd = -1;
    ws->watching = 0;
}

/* Everything stops: the socket, the timers, the lookup. */
static void ws_stop(ll_ws *ws) {
    ws_conn_close_fd(ws);
    ll_loop_timer_stop(ws->loop, &ws->timer);
    ll_loop_timer_stop(ws->loop, &ws->soon);
    ws_open_free(ws);
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
void ws_conn_hold(ll_ws *ws) { ws->depth++; }
void ws_conn_release(ll_ws *ws) {
    if (--ws->depth == 0 && ws->dead) ws_destroy(ws);
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
    ws_conn_watch(ws, (r ? LL_READABLE : 0) | (w ? LL_WRITABLE : 0));
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

/* wslay hands a frame's header (flagged WSLAY_MSG_MORE), then its
 * payload: the header is held and goes with the payload's first bytes in
 * one write. */
static ssize_t wc_send(wslay_event_context_ptr wc, const uint8_t *data, size_t len, int flags, void *ud) {
    ll_ws *ws = ud;
    if (ws->dead || ws->net.fd < 0) {
        wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if ((flags & WSLAY_MSG_MORE) && ws->hold_len == 0 && len <= sizeof(ws->hold)) {
        memcpy(ws->hold, data, len);
        ws->hold_len = len;
        return (ssize_t)len;
    }
    const char *p = (const char *)data;
    size_t n = len;
    char joined[4096];
    if (ws->hold_len) { /* the held header, then as much of this as fits */
        n = len < sizeof(joined) - ws->hold_len ? len : sizeof(joined) - ws->hold_len;
        memcpy(joined, ws->hold, ws->hold_len);
        memcpy(joined + ws->hold_len, data, n);
        p = joined;
        n += ws->hold_len;
    }
    size_t wrote = 0;
    ll_net_status st = ws->net.ops->write(&ws->net, p, n, &wrote);
    if (st == LL_NET_OK) {
        ws->sent += (int64_t)wrote;
        if (ws->hold_len) {
            if (wrote < ws->hold_len) { /* part of the header: the rest stays held */
                memmove(ws->hold, ws->hold + wrote, ws->hold_len - wrote);
                ws->hold_len -= wrote;
                wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
                return -1;
            }
            wrote -= ws->hold_len;
            ws->hold_len = 0;
            if (wrote == 0) {
                wslay_event_set_error(wc, WSLAY_ERR_WOULDBLOCK);
                return -1;
            }
        }
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

int ws_conn_begin(ll_ws *ws, const char *rest, size_t rest_len, int deflate, int reset) {
    static const struct wslay_event_callbacks cbs = {
        .recv_callback = wc_recv,
        .send_callback = wc_send,
        .genmask_callback = wc_genmask,
        .on_msg_recv_callback = wc_msg,
    };
    if (deflate && !(ws->inflater = ll_ws_deflate_inflater_new(reset))) return -1;
    if (wslay_event_context_client_init(&ws->wc, &cbs, ws) != 0) return -1;
    wslay_event_config_set_max_recv_msg_length(ws->wc, ws->max_message);
    if (ws->inflater) wslay_event_config_set_allowed_rsv_bits(ws->wc, WSLAY_RSV1_BIT);
    if (rest_len) {
        if (!(ws->rest = malloc(rest_len))) return -1;
        memcpy(ws->rest, rest, rest_len);
        ws->rest_len = rest_len;
    }
    return 0;
}

void ws_conn_go(ll_ws *ws) {
    if (ws->rest) return ws_read(ws);
    ws_after(ws);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    (void)fd;
    ll_ws *ws = ud;
    ws_conn_hold(ws);
    if (ws->st == W_OPEN && (events & LL_READABLE)) ws_read(ws);
    else if (ws->st == W_OPEN) ws_after(ws);
    else if (ws->st != W_DONE) ws_open_event(ws);
    ws_conn_release(ws);
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    ll_ws *ws = ud;
    ws_conn_hold(ws);
    if (ws->st == W_OPEN && ws->failing) ws_end_failed(ws);
    else if (ws->st == W_OPEN) ws_finish(ws); /* the server did not answer the close in time */
    else if (ws->st != W_DONE) ws_open_timeout(ws);
    ws_conn_release(ws);
}

static void on_soon(ll_loop *loop, void *ud) {
    (void)loop;
    ll_ws *ws = ud;
    ws_conn_hold(ws);
    if (ws->pending_code && ws->st != W_DONE) ws_open_fail(ws, ws->pending_code, ws->msg);
    else ws_after(ws);
    ws_conn_release(ws);
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
    ws->t_start = ll_loop_now_ns();
    int rc = ws_open_start(ws, &u, opts, err, errlen);
    ll_url_free(&u);
    if (rc < 0) {
        ws_destroy(ws);
        return NULL;
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
        if (!ws->pending_code) ws_open_later(ws, 1000, "websocket: closed before the opening handshake completed");
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
