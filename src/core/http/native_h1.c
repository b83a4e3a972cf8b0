/* native_h1.c -- one HTTP/1.1 exchange of the native transport on its
 * connection (see native.h): the head written once (h1_request.c), a
 * small body in the same write, a bigger one straight from memory, a
 * streamed one through a staging buffer (chunk-framed when the script
 * asked for chunked); the response read from the worker's read buffer by
 * http-parser (h1_parse.c), usually in one read. An early answer while
 * the body is still going (413, 401) ends the exchange. Nothing is sent
 * again: a request that went out on a connection the server had closed
 * is a failed request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "xmalloc.h"

#define STAGE_BUFFER (64u << 10) /* a streamed body's bytes on their way out */

/* k6's error code of a failed socket call (k6 lib/netext/httpext/error_codes.go) */
static int io_code(int os_errno) { return os_errno == ECONNRESET || os_errno == EPIPE ? 1220 : 1200; }

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
    native_conn *c = x->conn;
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
            native_fail(x, 1000, x->errbuf);
            return -1;
        } else {
            x->t_sent = ll_loop_now_ns();
            return 1;
        }
        size_t w = 0;
        ll_net_status st = c->net.ops->write(&c->net, p, n, &w);
        if (w) {
            x->attempts = 1;
            x->bytes_out += (int64_t)w;
            if (x->head_off < x->head.buf.len) x->head_off += w;
            else if (from_stage) x->stage_off += w;
            else x->body_off += w;
        }
        if (st == LL_NET_OK) continue;
        if (st == LL_NET_WANT_WRITE || st == LL_NET_WANT_READ) {
            native_conn_watch(c, LL_READABLE | (st == LL_NET_WANT_WRITE ? LL_WRITABLE : 0));
            return 0;
        }
        native_fail(x, io_code(c->net.os_errno), c->net.err);
        return -1;
    }
}

static void parse_failed(native_transfer *x) {
    const char *e = x->parse.err ? x->parse.err : "malformed response";
    if (x->parse.too_big)
        snprintf(x->errbuf, sizeof(x->errbuf), "the response body is over max_response_body (%lld bytes)",
                 (long long)x->limit);
    else if (strncmp(e, "the ", 4) != 0 && strncmp(e, "out of memory", 13) != 0)
        snprintf(x->errbuf, sizeof(x->errbuf), "malformed HTTP response: %s", e);
    else
        snprintf(x->errbuf, sizeof(x->errbuf), "%s", e);
    native_fail(x, 1000, x->errbuf);
}

/* The response is in: the connection stays for the next request only
 * when both sides keep it. */
static void done(native_transfer *x) {
    native_conn *c = x->conn;
    int keep = x->parse.keep_alive && !x->no_reuse && !x->base.req->disable_keep_alive && x->body_eof;
    native_conn_leave(c, x);
    if (keep) native_conn_watch(c, LL_READABLE); /* a close while idle is noticed */
    else native_conn_close(c, 0, NULL);
    native_group_wake(x->g);
    native_complete(x, 0, "");
}

/* Reads what the socket has. Returns 1 when the request completed (x may
 * be gone then), 0 when more is to come. */
static int receive(native_transfer *x) {
    native_conn *c = x->conn;
    char *rbuf = c->g->tp->rbuf;
    int more = x->st == X_SENDING ? LL_WRITABLE : 0;
    for (;;) {
        size_t got = 0;
        ll_net_status st = c->net.ops->read(&c->net, rbuf, NATIVE_READ_BUFFER, &got);
        if (st == LL_NET_WANT_READ || st == LL_NET_WANT_WRITE) {
            native_conn_watch(c, LL_READABLE | (st == LL_NET_WANT_WRITE ? LL_WRITABLE : more));
            return 0;
        }
        if (st == LL_NET_ERROR) {
            native_fail(x, io_code(c->net.os_errno), c->net.err);
            return 1;
        }
        uint64_t now = ll_loop_now_ns();
        if (got && !x->t_first) {
            x->t_first = now;
            if (!x->t_sent) x->t_sent = now; /* the server answered before taking the whole body */
        }
        x->bytes_in += (int64_t)got;
        size_t used = 0;
        int rc = ll_h1_parse_feed(&x->parse, rbuf, got, &used);
        if (rc == LL_H1_ERROR && st == LL_NET_EOF && x->reused && x->parse.fed == 0)
            native_fail(x, 1000, "the server closed the kept-alive connection before responding (the request is not sent again)");
        else if (rc == LL_H1_ERROR)
            parse_failed(x);
        if (rc == LL_H1_ERROR) return 1;
        if (rc == LL_H1_DONE) {
            x->t_last = now;
            if (used < got || x->st == X_SENDING) x->parse.keep_alive = 0; /* not ours, or the body is still going */
            done(x);
            return 1;
        }
        if (got < NATIVE_READ_BUFFER && !ll_net_pending(&c->net)) {
            native_conn_watch(c, LL_READABLE | more);
            return 0;
        }
    }
}

void native_h1_begin(native_transfer *x) {
    x->st = X_SENDING;
    if (send_more(x) != 1) return;
    x->st = X_RECEIVING;
    native_conn_watch(x->conn, LL_READABLE);
}

void native_h1_event(native_transfer *x, int events) {
    if (x->st == X_SENDING) {
        if ((events & LL_READABLE) && receive(x)) return; /* an early answer (413, 401), or a close */
        if (send_more(x) != 1) return;
        x->st = X_RECEIVING;
        native_conn_watch(x->conn, LL_READABLE);
        return;
    }
    if (x->st == X_RECEIVING) receive(x);
}

void native_h1_idle_event(native_conn *c) {
    char b;
    size_t got = 0;
    ll_net_status st = c->net.ops->read(&c->net, &b, 1, &got);
    if (st != LL_NET_WANT_READ) native_conn_close(c, 0, NULL);
}

void native_h1_drop(native_transfer *x) {
    ll_h1_parse_reset(&x->parse);
    free(x->stage);
    x->stage = NULL;
    x->stage_len = x->stage_off = 0;
}
