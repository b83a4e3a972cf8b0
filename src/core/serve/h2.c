/* h2.c -- `luaload serve`'s HTTP/2 with prior knowledge (h2c), framed by
 * nghttp2's server session.
 *
 * Owns: telling a connection's first bytes apart (HTTP/2's preface
 * "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", or HTTP/1.x), and each HTTP/2
 * connection after that: its nghttp2 session (SETTINGS: 128 concurrent
 * streams, 1 MiB windows), fed from the connection's rbuf with
 * nghttp2_session_mem_recv, its frames appended to the output queue from
 * nghttp2_session_mem_send (conn.c reads and writes the socket, as for
 * HTTP/1.1 and WebSocket: no thread, no framing of its own), and its
 * streams: the request headers that matter (:method, :path, content-type,
 * x-echo-status), then the answer. A POST whose content-type is
 * application/grpc (or application/grpc+..., application/grpc;...) is a
 * gRPC call: 200, content-type application/grpc, and grpc_echo.c's
 * messages and trailers as the data provider. Anything else gets a 404
 * with a short text body. A response that ends before the client's side
 * of the stream is followed by RST_STREAM(NO_ERROR), as RFC 9113 8.1
 * says, so a client still sending stops.
 *
 * Memory is bounded: the session reads no input while the output queue and
 * the echoes waiting to be sent hold OUT_HIGH or more, so a client that
 * does not read its answers stalls on flow control and TCP. A connection
 * that ends mid-stream frees the session and every stream's state. */
#include "xmalloc.h"
#include "serve_h2.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define H2_MAX_STREAMS 128
#define H2_WINDOW (1 << 20)             /* each stream's receive window */
#define H2_CONN_WINDOW (16 << 20)       /* the connection's */
#define H2_PATH_MAX 1024
#define H2_STATUS_MAX 8                 /* x-echo-status's value kept (longer: refused by grpc_echo.c) */
#define NOT_GRPC "luaload serve: HTTP/2 answers gRPC only (POST, content-type application/grpc)\n"

typedef struct h2_stream {
    int32_t id;
    int method;           /* METHOD_* */
    int grpc_type;        /* content-type is application/grpc */
    size_t plen, slen;
    int has_status;       /* x-echo-status was sent */
    char path[H2_PATH_MAX];
    char echo_status[H2_STATUS_MAX + 1];
    grpc_echo *g;         /* a gRPC call's echo */
    size_t body_off;      /* the 404's body sent so far */
    struct h2_stream *prev, *next;
} h2_stream;

struct h2_session {
    nghttp2_session *ng;
    conn *c;
    h2_stream *streams;   /* every stream with state, freed with the session */
};

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE}

int ll_h2_preface(const conn *c) {
    size_t n = c->rlen - c->rpos;
    if (n > H2_PREFACE_LEN) n = H2_PREFACE_LEN;
    if (memcmp(c->rbuf + c->rpos, H2_PREFACE, n) != 0) return H2_NO;
    return n == H2_PREFACE_LEN ? H2_YES : H2_MORE;
}

static h2_stream *stream_of(nghttp2_session *ng, int32_t id) {
    return nghttp2_session_get_stream_user_data(ng, id);
}

static void stream_free(h2_stream *st) {
    ll_grpc_echo_free(st->g);
    free(st);
}

/* ---- the answers ---- */

static ssize_t not_grpc_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                             nghttp2_data_source *src, void *ud) {
    h2_stream *st = src->ptr;
    size_t n = sizeof(NOT_GRPC) - 1 - st->body_off;
    (void)ng, (void)id, (void)ud;
    if (n > len) n = len;
    memcpy(buf, &NOT_GRPC[st->body_off], n);
    st->body_off += n;
    if (st->body_off == sizeof(NOT_GRPC) - 1) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* The request headers are in: counts the request and submits its answer. */
static void respond(h2_session *s, h2_stream *st) {
    conn *c = s->c;
    worker *w = c->w;
    int grpc = st->method == METHOD_POST && st->grpc_type;
    int rc;
    ll_stats_add(&w->stats.routes[grpc ? ROUTE_GRPC : ROUTE_ERROR], 1);
    ll_stats_add(&w->stats.methods[st->method], 1);
    ll_stats_add(&w->stats.h2_streams, 1);
    if (c->used) ll_stats_add(&w->stats.reused, 1);
    c->used = 1;
    if (grpc) {
        static const nghttp2_nv head[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
        st->g = ll_grpc_echo_new(c, s->ng, st->id, st->path, st->plen, st->has_status ? st->echo_status : NULL,
                                 st->slen);
        nghttp2_data_provider prd = {{.ptr = st->g}, ll_grpc_echo_read};
        rc = nghttp2_submit_response(s->ng, st->id, head, 2, &prd);
    } else {
        static const nghttp2_nv head[] = {NV(":status", "404"), NV("content-type", "text/plain")};
        nghttp2_data_provider prd = {{.ptr = st}, not_grpc_read};
        rc = nghttp2_submit_response(s->ng, st->id, head, 2, st->method == METHOD_HEAD ? NULL : &prd);
    }
    if (rc != 0) nghttp2_submit_rst_stream(s->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
}

/* ---- nghttp2's callbacks ---- */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud) {
    h2_session *s = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    h2_stream *st = ll_xcalloc(1, sizeof(*st));
    st->id = f->hd.stream_id;
    st->next = s->streams;
    if (s->streams) s->streams->prev = st;
    s->streams = st;
    nghttp2_session_set_stream_user_data(ng, st->id, st);
    return 0;
}

static int is(const uint8_t *name, size_t n, const char *want) {
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

/* nghttp2 checked the field (lowercase names, no bad characters). */
static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *v, size_t vlen, uint8_t flags, void *ud) {
    h2_stream *st = stream_of(ng, f->hd.stream_id);
    (void)flags, (void)ud;
    if (!st || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    if (is(name, nlen, ":method")) {
        st->method = ll_request_method((const char *)v, vlen);
    } else if (is(name, nlen, ":path")) {
        st->plen = vlen < H2_PATH_MAX ? vlen : 0; /* a longer one is no method's */
        memcpy(st->path, v, st->plen);
    } else if (is(name, nlen, "content-type")) {
        st->grpc_type = vlen >= 16 && memcmp(v, "application/grpc", 16) == 0 &&
                        (vlen == 16 || v[16] == '+' || v[16] == ';');
    } else if (is(name, nlen, "x-echo-status")) {
        st->has_status = 1;
        st->slen = vlen < H2_STATUS_MAX ? vlen : H2_STATUS_MAX;
        memcpy(st->echo_status, v, st->slen);
        if (vlen > H2_STATUS_MAX) st->echo_status[0] = '-'; /* no number grpc_echo.c takes */
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud) {
    h2_stream *st = stream_of(ng, f->hd.stream_id);
    if (!st || (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)) return 0;
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST) respond(ud, st);
    if ((f->hd.flags & NGHTTP2_FLAG_END_STREAM) && st->g) ll_grpc_echo_end(st->g);
    return 0;
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *p, size_t n, void *ud) {
    h2_stream *st = stream_of(ng, id);
    (void)flags, (void)ud;
    if (st && st->g) ll_grpc_echo_data(st->g, p, n);
    return 0;
}

/* Our side of a stream ended while the client's is open: it may stop. */
static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *ud) {
    int32_t id = f->hd.stream_id;
    (void)ud;
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
        nghttp2_session_get_stream_remote_close(ng, id) == 0)
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_NO_ERROR);
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t err, void *ud) {
    h2_session *s = ud;
    h2_stream *st = stream_of(ng, id);
    (void)err;
    if (!st) return 0;
    if (st->prev) st->prev->next = st->next;
    else s->streams = st->next;
    if (st->next) st->next->prev = st->prev;
    stream_free(st);
    return 0;
}

/* ---- the session ---- */

void ll_h2_start(conn *c) {
    nghttp2_session_callbacks *cb;
    h2_session *s = ll_xcalloc(1, sizeof(*s));
    nghttp2_settings_entry set[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW},
    };
    s->c = c;
    if (nghttp2_session_callbacks_new(&cb) != 0) {
        free(s);
        c->failed = 1;
        return;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    int rc = nghttp2_session_server_new(&s->ng, cb, s);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0 || nghttp2_submit_settings(s->ng, NGHTTP2_FLAG_NONE, set, 2) != 0 ||
        nghttp2_session_set_local_window_size(s->ng, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW) != 0) {
        ll_h2_session_free(s);
        c->failed = 1;
        return;
    }
    ll_stats_add(&c->w->stats.h2_connections, 1);
    c->h2 = s;
}

void ll_h2_session_free(h2_session *s) {
    if (!s) return;
    nghttp2_session_del(s->ng); /* calls no callback: the streams are freed here */
    while (s->streams) {
        h2_stream *st = s->streams;
        s->streams = st->next;
        stream_free(st);
    }
    free(s);
}

/* The output queue and the echoes waiting to be sent hold enough. */
static int backed_up(const conn *c) {
    uint64_t held = c->out_pending;
    for (const h2_stream *st = c->h2->streams; st && held < OUT_HIGH; st = st->next)
        if (st->g) held += ll_grpc_echo_held(st->g);
    return held >= OUT_HIGH;
}

int ll_h2_pump(conn *c) {
    nghttp2_session *ng = c->h2->ng;
    if (c->rpos < c->rlen && !backed_up(c)) {
        ssize_t n = nghttp2_session_mem_recv(ng, (const uint8_t *)c->rbuf + c->rpos, c->rlen - c->rpos);
        if (n < 0) return H2_DONE; /* fatal: out of memory, a flood (protocol errors send GOAWAY) */
        c->rpos += (size_t)n;
    }
    while (c->out_pending < OUT_HIGH && !c->failed) {
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(ng, &p);
        if (n < 0) return H2_DONE;
        if (n == 0) break;
        ll_conn_out_bytes(c, (const char *)p, (size_t)n);
    }
    if (c->failed || (!nghttp2_session_want_read(ng) && !nghttp2_session_want_write(ng))) return H2_DONE;
    if (c->eof && c->rpos == c->rlen) return H2_DONE; /* the peer is gone */
    return H2_OPEN;
}

int ll_h2_wants_read(const conn *c) { return nghttp2_session_want_read(c->h2->ng) && !backed_up(c); }

int ll_h2_ready(const conn *c) {
    if (backed_up(c)) return 0;
    return c->rpos < c->rlen || nghttp2_session_want_write(c->h2->ng);
}
