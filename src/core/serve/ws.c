/* ws.c -- `luaload serve`'s WebSocket routes (RFC 6455), framed by wslay.
 *
 * Owns: the upgrade's header lines (Upgrade, Sec-WebSocket-Key, -Version,
 * -Protocol; request.c hands them over) and their check (a 400 or 426 with
 * a one-line reason), the 101 with Sec-WebSocket-Accept (SHA-1 by OpenSSL,
 * base64 by base64.c) and the first subprotocol offered, and each session
 * after it: a wslay server context whose I/O callbacks read the frames
 * from the connection's rbuf and append its frames to the output queue
 * (conn.c reads and writes the socket, as for HTTP), so wslay never touches
 * the socket. wslay reassembles fragmented messages, answers pings with
 * pongs, echoes a close frame's code and reason, refuses a message above
 * WS_MSG_MAX with 1009 and a protocol error with 1002 (1007 for bad UTF-8).
 *
 *   /ws/echo   every text or binary message comes back as it came (one
 *              frame, however many it arrived in)
 *   /ws/send   n text messages of size bytes ("K xxx...": the message's
 *              number, a space, 'x's, cut to size), interval apart (0:
 *              back to back as the output drains), then a close 1000; the
 *              client's data messages are counted and dropped
 *
 * Memory is bounded: input stops being read while the output queue and
 * wslay's queue hold OUT_HIGH or more, and /ws/send queues no message
 * beyond that mark either. After the server's close frame it waits
 * WS_CLOSE_WAIT_US for the peer's, then the connection ends as an HTTP
 * one does (conn.c: half-close, linger). */
#include "base64.h"
#include "list_token.h"
#include "xmalloc.h"
#include "serve_internal.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_CLOSE_WAIT_US 2000000        /* for the peer's close frame after ours */
#define WS_UPGRADE_HDRS "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"

struct ws_session {
    wslay_event_context_ptr ctx;
    int send;             /* /ws/send, else /ws/echo */
    uint64_t n, sent, size;
    uint64_t interval_ns, next_ns;
    char *msg;            /* /ws/send: the message, size bytes */
    int close_queued;     /* /ws/send: its close 1000 is queued (or the peer's came first) */
    int close_wait;       /* our close frame is out, the timer waits for the peer's */
    int expired;          /* the wait is over */
};

/* ---- the upgrade ---- */

static int header_is(const char *name, size_t n, const char *want) {
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

/* The first token of a Sec-WebSocket-Protocol list, when it is a token of
 * up to WS_PROTO_MAX characters. */
static void keep_protocol(request *r, const char *v, size_t n) {
    size_t e = 0;
    while (e < n && v[e] != ',' && v[e] != ' ' && v[e] != '\t') e++;
    if (r->ws_proto[0] || e == 0 || e > WS_PROTO_MAX) return;
    for (size_t i = 0; i < e; i++)
        if (!ll_request_is_tchar((unsigned char)v[i])) return;
    memcpy(r->ws_proto, v, e);
    r->ws_proto[e] = '\0';
}

void ll_ws_header(request *r, const char *name, size_t nlen, const char *v, size_t vlen) {
    uint64_t ver;
    if (header_is(name, nlen, "upgrade")) {
        if (ll_list_token_has(v, vlen, "websocket", 9)) r->ws_upgrade = 1;
    } else if (header_is(name, nlen, "sec-websocket-key")) {
        r->ws_keys++;
        r->ws_key[0] = '\0';
        if (vlen == WS_KEY_LEN) {
            memcpy(r->ws_key, v, vlen);
            r->ws_key[vlen] = '\0';
        }
    } else if (header_is(name, nlen, "sec-websocket-version")) {
        r->ws_version = ll_request_parse_u64n(v, vlen, &ver) == 0 && ver < 1000 ? (int)ver : -1;
    } else if (header_is(name, nlen, "sec-websocket-protocol")) {
        keep_protocol(r, v, vlen);
    }
}

/* One Sec-WebSocket-Key that is the base64 of 16 bytes. */
static int key_ok(const request *r) {
    char err[128];
    size_t n = 0;
    if (r->ws_keys != 1 || !r->ws_key[0]) return 0;
    uint8_t *raw = ll_base64_decode(r->ws_key, WS_KEY_LEN, &n, err, sizeof(err));
    int ok = raw && n == 16;
    free(raw);
    return ok;
}

void ll_ws_check(request *r) {
    const char *why = NULL;
    int status = 400;
    if (!r->ws_upgrade) {
        status = 426;
        why = "expected a WebSocket upgrade: GET with Upgrade: websocket, Connection: Upgrade, "
              "Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n";
    } else if (r->method != METHOD_GET) {
        why = "expected GET for a WebSocket upgrade\n";
    } else if (r->http10) {
        why = "expected HTTP/1.1 for a WebSocket upgrade\n";
    } else if (!r->conn_upgrade) {
        why = "expected Connection: Upgrade with Upgrade: websocket\n";
    } else if (!key_ok(r)) {
        why = "expected one Sec-WebSocket-Key: the base64 of 16 bytes\n";
    } else if (r->ws_version != 13) {
        status = 426;
        why = "expected Sec-WebSocket-Version: 13\n";
    }
    if (!why) return;
    r->route = ROUTE_ERROR;
    r->status = status;
    r->msg = why;
    r->msg_extra = status == 426 ? WS_UPGRADE_HDRS : NULL;
}

/* ---- wslay's callbacks: rbuf in, the output queue out ---- */

/* The output queue and wslay's hold enough: read no more for now. */
static int backed_up(const conn *c) {
    return c->out_pending + wslay_event_get_queued_msg_length(c->ws->ctx) >= OUT_HIGH;
}

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *ud) {
    conn *c = ud;
    size_t avail = c->rlen - c->rpos;
    (void)flags;
    if (avail == 0 || backed_up(c)) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (len > avail) len = avail;
    memcpy(buf, c->rbuf + c->rpos, len);
    c->rpos += len;
    return (ssize_t)len;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *ud) {
    conn *c = ud;
    (void)flags;
    ll_conn_out_bytes(c, (const char *)data, len);
    if (c->failed) {
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return (ssize_t)len;
}

/* A whole data message (wslay answered a ping or close itself). The echo
 * goes to the output queue at once: wslay sends control frames ahead of
 * queued data, so a close frame read in the same batch would otherwise
 * overtake it and the echo would never be sent. */
static void ws_on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *ud) {
    conn *c = ud;
    if (wslay_is_ctrl_frame(arg->opcode)) return;
    ll_stats_add(&c->w->stats.ws_msgs_received, 1);
    if (c->ws->send) return; /* /ws/send drops what the client sends */
    struct wslay_event_msg m = {arg->opcode, arg->msg, arg->msg_length};
    if (wslay_event_queue_msg(ctx, &m) != 0) return;
    ll_stats_add(&c->w->stats.ws_msgs_sent, 1);
    wslay_event_send(ctx);
}

static const struct wslay_event_callbacks ws_callbacks = {
    ws_recv, ws_send, NULL, NULL, NULL, NULL, ws_on_msg,
};

/* ---- the session ---- */

void ll_ws_accept(conn *c) {
    const request *r = &c->req;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char in[WS_KEY_LEN + sizeof(WS_GUID)], head[512];
    memcpy(in, r->ws_key, WS_KEY_LEN);
    memcpy(in + WS_KEY_LEN, WS_GUID, sizeof(WS_GUID) - 1);
    if (!EVP_Digest(in, WS_KEY_LEN + sizeof(WS_GUID) - 1, md, &mdlen, EVP_sha1(), NULL)) {
        c->failed = 1;
        return;
    }
    char *accept = ll_base64_encode(md, mdlen, NULL);
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n%s%s%s\r\n",
                     accept, r->ws_proto[0] ? "Sec-WebSocket-Protocol: " : "", r->ws_proto,
                     r->ws_proto[0] ? "\r\n" : "");
    free(accept);
    ws_session *s = ll_xcalloc(1, sizeof(*s));
    if (wslay_event_context_server_init(&s->ctx, &ws_callbacks, c) != 0) {
        free(s);
        c->failed = 1;
        return;
    }
    wslay_event_config_set_max_recv_msg_length(s->ctx, WS_MSG_MAX);
    s->send = r->route == ROUTE_WS_SEND;
    s->n = r->sp.n;
    s->size = r->sp.size;
    s->interval_ns = r->sp.interval_us * 1000;
    if (s->send && s->size) {
        s->msg = ll_xmalloc((size_t)s->size);
        memset(s->msg, 'x', (size_t)s->size);
    }
    ll_conn_out_bytes(c, head, (size_t)n);
    ll_stats_add(&c->w->stats.ws_sessions, 1);
    c->ws = s;
}

void ll_ws_session_free(ws_session *s) {
    if (!s) return;
    wslay_event_context_free(s->ctx);
    free(s->msg);
    free(s);
}

/* /ws/send: the next message is due now (or its close). */
static int send_due(const conn *c, uint64_t now) {
    const ws_session *s = c->ws;
    if (!s->send || s->close_queued) return 0;
    if (s->sent >= s->n) return wslay_event_get_queued_msg_count(s->ctx) == 0;
    return s->sent == 0 || s->interval_ns == 0 || now >= s->next_ns;
}

/* /ws/send: queues the messages that are due, up to OUT_HIGH queued; arms
 * the timer for the next one; queues the close after the last. */
static void send_messages(conn *c) {
    ws_session *s = c->ws;
    uint64_t now = ll_loop_now(c->w->loop);
    char num[24];
    while (s->sent < s->n && !s->close_queued) {
        if (backed_up(c)) return; /* resumed as the output drains */
        if (!send_due(c, now)) {
            ll_loop_timer_at(c->w->loop, &c->timer, s->next_ns);
            return;
        }
        int k = snprintf(num, sizeof(num), "%llu ", (unsigned long long)(s->sent + 1));
        memcpy(s->msg, num, (size_t)k < s->size ? (size_t)k : (size_t)s->size);
        struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)s->msg, (size_t)s->size};
        if (wslay_event_queue_msg(s->ctx, &m) != 0) {
            s->close_queued = 1; /* the peer's close came first */
            return;
        }
        ll_stats_add(&c->w->stats.ws_msgs_sent, 1);
        s->next_ns = (s->sent == 0 ? now : s->next_ns) + s->interval_ns;
        s->sent++;
    }
    /* wslay sends control frames ahead of queued data: the close waits
     * until the last message is out of its queue */
    if (!s->close_queued && wslay_event_get_queued_msg_count(s->ctx) == 0) {
        wslay_event_queue_close(s->ctx, WSLAY_CODE_NORMAL_CLOSURE, (const uint8_t *)"done", 4);
        s->close_queued = 1;
    }
}

int ll_ws_pump(conn *c) {
    ws_session *s = c->ws;
    int rc = 0;
    if (wslay_event_want_read(s->ctx)) rc = wslay_event_recv(s->ctx);
    if (rc == 0 && s->send) send_messages(c);
    if (rc == 0) rc = wslay_event_send(s->ctx);
    if (rc != 0 || c->failed || s->expired) return WS_DONE;
    if (!wslay_event_want_read(s->ctx) && !wslay_event_want_write(s->ctx)) return WS_DONE; /* closed */
    if (c->eof && c->rpos == c->rlen) return WS_DONE; /* the peer is gone */
    if (wslay_event_get_close_sent(s->ctx) && !s->close_wait) {
        s->close_wait = 1;
        ll_loop_timer_start(c->w->loop, &c->timer, WS_CLOSE_WAIT_US);
    }
    return WS_OPEN;
}

int ll_ws_wants_read(const conn *c) { return wslay_event_want_read(c->ws->ctx) && !backed_up(c); }

int ll_ws_ready(const conn *c) {
    const ws_session *s = c->ws;
    if (backed_up(c)) return 0;
    if (wslay_event_want_read(s->ctx) && c->rpos < c->rlen) return 1;
    return wslay_event_want_write(s->ctx) || send_due(c, ll_loop_now(c->w->loop));
}

void ll_ws_timer(conn *c) {
    if (c->ws->close_wait) c->ws->expired = 1;
}
