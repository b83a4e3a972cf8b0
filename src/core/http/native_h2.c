/* native_h2.c -- HTTP/2 on a native connection (see native.h), framed by
 * h2_session.c on nghttp2: the connection's side -- the session's bytes
 * written and read, its streams handed over as they end -- while each
 * request's stream is native_stream.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "xmalloc.h"

/* ---- the connection ---- */

int native_h2_start(native_conn *c) {
    c->h2 = ll_h2_new(&native_stream_ops);
    return c->h2 ? 0 : -1;
}

/* Writes what the session has to send. 0, or -1 when the connection
 * failed (closed, its users failed). */
int native_h2_flush(native_conn *c) {
    const char *err = NULL;
    for (;;) {
        if (c->out_off == c->out.len) {
            c->out.len = c->out_off = 0;
            if (ll_h2_send(c->h2, &c->out, &err) < 0) {
                native_conn_close(c, 1600, err);
                return -1;
            }
            if (c->out.len == 0) break;
        }
        size_t w = 0;
        ll_net_status st = c->net.ops->write(&c->net, c->out.p + c->out_off, c->out.len - c->out_off, &w);
        c->out_off += w;
        if (st == LL_NET_WANT_WRITE || st == LL_NET_WANT_READ) {
            native_conn_watch(c, LL_READABLE | LL_WRITABLE);
            return 0;
        }
        if (st != LL_NET_OK) {
            native_conn_close(c, c->net.os_errno == ECONNRESET ? 1220 : 1200, c->net.err);
            return -1;
        }
    }
    native_conn_watch(c, LL_READABLE);
    if (c->out.cap > (256u << 10)) ll_buf_free(&c->out);
    return 0;
}

void native_h2_event(native_conn *c, int events) {
    char *rbuf = c->g->tp->rbuf;
    while (events & LL_READABLE) {
        size_t got = 0;
        ll_net_status st = c->net.ops->read(&c->net, rbuf, NATIVE_READ_BUFFER, &got);
        if (st == LL_NET_WANT_READ || st == LL_NET_WANT_WRITE) break;
        if (st == LL_NET_EOF || st == LL_NET_ERROR) {
            native_done_streams(c);
            return native_conn_close(c, st == LL_NET_EOF ? 1000 : c->net.os_errno == ECONNRESET ? 1220 : 1200,
                                     st == LL_NET_EOF ? "the server closed the HTTP/2 connection" : c->net.err);
        }
        const char *err = NULL;
        if (ll_h2_recv(c->h2, rbuf, got, &err) < 0) {
            native_done_streams(c);
            return native_conn_close(c, 1600, err);
        }
        if (got < NATIVE_READ_BUFFER && !ll_net_pending(&c->net)) break;
    }
    native_done_streams(c);
    if (c->dead || native_h2_flush(c) < 0) return;
    if (!ll_h2_alive(c->h2)) native_conn_close(c, 1600, "the server ended the HTTP/2 connection (GOAWAY)");
}

void native_h2_begin(native_transfer *x) {
    native_conn *c = x->conn;
    x->st = X_STREAM;
    x->h2_status = 0;
    x->hdrs.len = x->body.len = x->trailers.len = 0;
    if (native_stream_submit(c, x) < 0) return native_fail(x, 1600, "cannot open an HTTP/2 stream");
    /* the frames go at the next turn, with those of the other streams
     * begun meanwhile: one TLS record and one send for all of them */
    if (!ll_loop_timer_armed(&c->flush)) ll_loop_timer_start(c->g->tp->base.loop, &c->flush, 0);
}

void native_h2_resume(native_transfer *x) {
    native_conn *c = x->conn;
    if (!x->stream || !c || !c->h2) return; /* not begun yet: read when it is */
    ll_h2_resume(c->h2, x->stream);
    if (!ll_loop_timer_armed(&c->flush)) ll_loop_timer_start(c->g->tp->base.loop, &c->flush, 0);
}

void native_h2_cancel(native_transfer *x) {
    native_conn *c = x->conn;
    if (x->stream && c->h2) ll_h2_cancel(c->h2, x->stream);
    x->stream = 0;
    ll_body_decoder_free(x->parse.dec);
    x->parse.dec = NULL;
}
