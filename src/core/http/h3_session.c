/* h3_session.c -- one HTTP/3 client connection on ngtcp2 and nghttp3 (see
 * h3_session.h). ngtcp2 carries the QUIC packets and hands each stream's
 * bytes to nghttp3, which frames requests and responses and runs QPACK;
 * nghttp3's control and QPACK streams are opened once the handshake
 * completed. A request body is read through the owner's read_body into
 * chunks of the stream's own, kept until the server acknowledged them
 * (nghttp3 does not copy what it sends). Flow-control credit goes back as
 * the bytes are consumed. The session keeps a list of its streams, so
 * that one freed with streams open frees their chunks too. */
#include "h3_session.h"
#include "body.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_WINDOW (4u << 20)   /* per stream, as over HTTP/2 (Go's) */
#define CONN_WINDOW (16u << 20)
#define IDLE_TIMEOUT (30 * NGTCP2_SECONDS)
#define CHUNK 16384                /* a request body's bytes, read at a time */

typedef struct chunk {
    struct chunk *next;
    size_t len;
    uint8_t data[CHUNK];
} chunk;

typedef struct h3_stream {
    struct h3_stream *prev, *next;
    int64_t id;
    void *ud;                   /* its owner, NULL once cancelled */
    chunk *head, *tail;         /* body bytes given to nghttp3, not yet acknowledged */
    size_t acked;               /* of head's bytes */
    int sent;                   /* on_sent was told */
} h3_stream;

/* What the HTTP/3 side (nghttp3 and its callbacks) asks of QUIC: ngtcp2's
 * connection (NGTCP2_QUIC), or nothing at all in an unbound session
 * (ll_h3_new_unbound: the fuzzer feeds stream bytes to nghttp3 itself). */
typedef struct quic_ops {
    int (*open_bidi)(ll_h3 *h, int64_t *id);
    int (*open_uni)(ll_h3 *h, int64_t *id);
    uint64_t (*uni_left)(ll_h3 *h);
    /* n bytes of stream id read (id -1: of a stream that is gone): its
     * window and the connection's open again */
    void (*consumed)(ll_h3 *h, int64_t id, size_t n);
    int (*shutdown)(ll_h3 *h, int64_t id, uint64_t code);       /* both ways */
    int (*shutdown_read)(ll_h3 *h, int64_t id, uint64_t code);  /* STOP_SENDING */
    int (*shutdown_write)(ll_h3 *h, int64_t id, uint64_t code); /* RESET_STREAM */
    void (*uni_closed)(ll_h3 *h);                               /* a peer's uni stream nghttp3 did not know */
} quic_ops;

struct ll_h3 {
    const quic_ops *qops;
    int64_t next_bidi, next_uni; /* an unbound session's stream ids */
    ngtcp2_conn *q;
    nghttp3_conn *h;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    ngtcp2_path_storage path;
    const ll_h2_stream_ops *ops;
    h3_stream *streams, *last;
    ngtcp2_ccerr err;           /* what a CONNECTION_CLOSE of ours says */
    int failed, goaway, idle, reset;
    ll_h3_early_state early;    /* 0-RTT: none, under way, accepted or refused */
    int handshake_done;
    int liberr;                 /* ngtcp2's error that ended it, 0: none */
    FILE *qlog;                 /* ngtcp2's qlog of it, NULL: none */
    void (*ticket_fn)(void *ud, void *tls);
    void *ticket_ud;
    uint64_t now;               /* of the datagram being read */
    uint64_t heard;             /* when the server last acknowledged or sent stream data */
    char why[256];
    const char *cipher;         /* GnuTLS's static name of the suite: it outlives the
                                 * connection, as a response's tls_cipher_suite must */
};

/* ---- QUIC: ngtcp2's connection, or none ---- */

static int q_open_bidi(ll_h3 *h, int64_t *id) { return ngtcp2_conn_open_bidi_stream(h->q, id, NULL); }
static int q_open_uni(ll_h3 *h, int64_t *id) { return ngtcp2_conn_open_uni_stream(h->q, id, NULL); }
static uint64_t q_uni_left(ll_h3 *h) { return ngtcp2_conn_get_streams_uni_left(h->q); }
static void q_consumed(ll_h3 *h, int64_t id, size_t n) {
    if (id >= 0) ngtcp2_conn_extend_max_stream_offset(h->q, id, n);
    ngtcp2_conn_extend_max_offset(h->q, n);
}
static int q_shutdown(ll_h3 *h, int64_t id, uint64_t code) { return ngtcp2_conn_shutdown_stream(h->q, 0, id, code); }
static int q_shutdown_read(ll_h3 *h, int64_t id, uint64_t code) {
    return ngtcp2_conn_shutdown_stream_read(h->q, 0, id, code);
}
static int q_shutdown_write(ll_h3 *h, int64_t id, uint64_t code) {
    return ngtcp2_conn_shutdown_stream_write(h->q, 0, id, code);
}
static void q_uni_closed(ll_h3 *h) { ngtcp2_conn_extend_max_streams_uni(h->q, 1); }

static const quic_ops NGTCP2_QUIC = {q_open_bidi, q_open_uni, q_uni_left, q_consumed,
                                     q_shutdown,  q_shutdown_read, q_shutdown_write, q_uni_closed};

/* An unbound session's QUIC: stream ids handed out in order, nothing else */
static int u_open_bidi(ll_h3 *h, int64_t *id) {
    *id = h->next_bidi;
    h->next_bidi += 4;
    return 0;
}
static int u_open_uni(ll_h3 *h, int64_t *id) {
    *id = h->next_uni;
    h->next_uni += 4;
    return 0;
}
static uint64_t u_uni_left(ll_h3 *h) { return h->next_uni < 14 ? 3 : 0; }
static void u_consumed(ll_h3 *h, int64_t id, size_t n) { (void)h, (void)id, (void)n; }
static int u_shutdown(ll_h3 *h, int64_t id, uint64_t code) { return (void)h, (void)id, (void)code, 0; }
static void u_uni_closed(ll_h3 *h) { (void)h; }

static const quic_ops UNBOUND = {u_open_bidi, u_open_uni, u_uni_left, u_consumed,
                                 u_shutdown,  u_shutdown,  u_shutdown,  u_uni_closed};

/* ---- streams ---- */

static h3_stream *stream_new(ll_h3 *h, int64_t id, void *ud) {
    h3_stream *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->id = id;
    s->ud = ud;
    s->next = h->streams;
    if (h->streams) h->streams->prev = s;
    h->streams = s;
    return s;
}

/* The stream of id, or NULL (the list holds the open requests, at most
 * max_streams; the last one found is looked at first). */
static h3_stream *stream_find(ll_h3 *h, int64_t id) {
    if (h->last && h->last->id == id) return h->last;
    for (h3_stream *s = h->streams; s; s = s->next)
        if (s->id == id) return h->last = s;
    return NULL;
}

static void stream_free(ll_h3 *h, h3_stream *s) {
    if (h->last == s) h->last = NULL;
    if (s->prev) s->prev->next = s->next;
    else h->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    while (s->head) {
        chunk *c = s->head;
        s->head = c->next;
        free(c);
    }
    free(s);
}

/* A stream's owner is told it is over: it hears nothing more. */
static void stream_end(ll_h3 *h, h3_stream *s, uint32_t code) {
    void *ud = s->ud;
    s->ud = NULL;
    if (ud) h->ops->on_close(ud, code);
}

static void fail(ll_h3 *h, const char *what, int rv) {
    if (h->failed) return;
    h->failed = 1;
    snprintf(h->why, sizeof(h->why), "%s: %s", what, rv ? ngtcp2_strerror(rv) : "failed");
}

/* ---- nghttp3's callbacks ---- */

static int h3_acked(nghttp3_conn *c, int64_t id, uint64_t n, void *user, void *sud) {
    (void)c;
    (void)id;
    (void)user;
    h3_stream *s = sud;
    if (!s) return 0;
    while (n > 0 && s->head) {
        size_t left = s->head->len - s->acked;
        size_t take = n < left ? (size_t)n : left;
        s->acked += take;
        n -= take;
        if (s->acked < s->head->len) break;
        chunk *done = s->head;
        s->head = done->next;
        if (!s->head) s->tail = NULL;
        s->acked = 0;
        free(done);
    }
    return 0;
}

static int h3_stream_close(nghttp3_conn *c, int64_t id, uint64_t code, void *user, void *sud) {
    (void)c;
    (void)id;
    ll_h3 *h = user;
    h3_stream *s = sud;
    if (!s) return 0;
    stream_end(h, s, code == NGHTTP3_H3_NO_ERROR ? 0 : (uint32_t)code);
    stream_free(h, s);
    return 0;
}

static void consume(ll_h3 *h, int64_t id, size_t n) { h->qops->consumed(h, id, n); }

/* The owner refused what came: the stream is cancelled and it is told. */
static int refuse(ll_h3 *h, h3_stream *s) {
    h->qops->shutdown(h, s->id, NGHTTP3_H3_REQUEST_CANCELLED);
    stream_end(h, s, NGHTTP3_H3_REQUEST_CANCELLED);
    return 0;
}

static int h3_recv_data(nghttp3_conn *c, int64_t id, const uint8_t *p, size_t n, void *user, void *sud) {
    (void)c;
    ll_h3 *h = user;
    h3_stream *s = sud;
    consume(h, id, n);
    if (!s || !s->ud) return 0;
    if (h->ops->on_data(s->ud, (const char *)p, n) != 0) return refuse(h, s);
    return 0;
}

static int h3_deferred_consume(nghttp3_conn *c, int64_t id, size_t n, void *user, void *sud) {
    (void)c;
    (void)sud;
    consume(user, id, n);
    return 0;
}

static int h3_header(nghttp3_conn *c, int64_t id, int32_t token, nghttp3_rcbuf *name, nghttp3_rcbuf *value,
                     uint8_t flags, void *user, void *sud) {
    (void)c;
    (void)id;
    (void)token;
    (void)flags;
    ll_h3 *h = user;
    h3_stream *s = sud;
    if (!s || !s->ud) return 0;
    nghttp3_vec nv = nghttp3_rcbuf_get_buf(name), vv = nghttp3_rcbuf_get_buf(value);
    if (h->ops->on_header(s->ud, (const char *)nv.base, nv.len, (const char *)vv.base, vv.len) != 0)
        return refuse(h, s);
    return 0;
}

static int h3_end_headers(nghttp3_conn *c, int64_t id, int fin, void *user, void *sud) {
    (void)c;
    (void)id;
    (void)fin;
    ll_h3 *h = user;
    h3_stream *s = sud;
    if (!s || !s->ud) return 0;
    if (h->ops->on_headers_done(s->ud, 1) != 0) return refuse(h, s);
    return 0;
}

static int h3_stop_sending(nghttp3_conn *c, int64_t id, uint64_t code, void *user, void *sud) {
    (void)c;
    (void)sud;
    ll_h3 *h = user;
    return h->qops->shutdown_read(h, id, code) == 0 ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int h3_reset_stream(nghttp3_conn *c, int64_t id, uint64_t code, void *user, void *sud) {
    (void)c;
    (void)sud;
    ll_h3 *h = user;
    return h->qops->shutdown_write(h, id, code) == 0 ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int h3_shutdown(nghttp3_conn *c, int64_t id, void *user) {
    (void)c;
    (void)id;
    ((ll_h3 *)user)->goaway = 1;
    return 0;
}

/* A request body: the next bytes read into a chunk of the stream's. */
static nghttp3_ssize h3_read_body(nghttp3_conn *c, int64_t id, nghttp3_vec *vec, size_t veccnt, uint32_t *flags,
                                  void *user, void *sud) {
    (void)c;
    (void)id;
    (void)veccnt;
    ll_h3 *h = user;
    h3_stream *s = sud;
    if (!s || !s->ud) {
        *flags |= NGHTTP3_DATA_FLAG_EOF;
        return 0;
    }
    chunk *k = malloc(sizeof(*k));
    if (!k) return NGHTTP3_ERR_CALLBACK_FAILURE;
    ssize_t r = h->ops->read_body(s->ud, (char *)k->data, CHUNK);
    if (r == LL_BODY_LATER) {
        free(k);
        return NGHTTP3_ERR_WOULDBLOCK; /* ll_h3_resume when there is more */
    }
    if (r <= 0) {
        free(k);
        *flags |= NGHTTP3_DATA_FLAG_EOF;
        if (r < 0) refuse(h, s); /* the source failed: the stream goes */
        return 0;
    }
    k->next = NULL;
    k->len = (size_t)r;
    if (s->tail) s->tail->next = k;
    else s->head = k;
    s->tail = k;
    vec[0].base = k->data;
    vec[0].len = k->len;
    return 1;
}

/* ---- ngtcp2's callbacks ---- */

/* A malformed response (a body short of its Content-Length, a bad header)
 * is an error of its stream alone (RFC 9114 4.1.2): the stream is reset
 * with H3_MESSAGE_ERROR and its owner told; the connection and its other
 * streams go on. The n bytes that came on it are given back to the
 * connection's flow control window (some may have been already: the
 * server gets a little more room, never less). */
static int malformed(ll_h3 *h, int64_t id, size_t n) {
    h->qops->consumed(h, -1, n);
    nghttp3_conn_shutdown_stream_read(h->h, id);
    h->qops->shutdown(h, id, NGHTTP3_H3_MESSAGE_ERROR);
    h3_stream *s = stream_find(h, id);
    if (s) stream_end(h, s, NGHTTP3_H3_MESSAGE_ERROR); /* freed when nghttp3 closes it */
    return 0;
}

/* n bytes of stream id from the server (fin: its last). 0, or -1 when
 * HTTP/3 failed the connection (why and the CONNECTION_CLOSE's code set). */
static int stream_bytes(ll_h3 *h, int64_t id, const uint8_t *p, size_t n, int fin) {
    if (!h->h) return 0;
    nghttp3_ssize used = nghttp3_conn_read_stream(h->h, id, p, n, fin);
    if ((used == NGHTTP3_ERR_MALFORMED_HTTP_MESSAGING || used == NGHTTP3_ERR_MALFORMED_HTTP_HEADER) &&
        ngtcp2_is_bidi_stream(id))
        return malformed(h, id, n);
    if (used < 0) {
        ngtcp2_ccerr_set_application_error(&h->err, nghttp3_err_infer_quic_app_error_code((int)used), NULL, 0);
        snprintf(h->why, sizeof(h->why), "HTTP/3: %s", nghttp3_strerror((int)used));
        h->failed = 1;
        return -1;
    }
    consume(h, id, (size_t)used);
    return 0;
}

static int q_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t offset, const uint8_t *p,
                              size_t n, void *user, void *sud) {
    (void)q;
    (void)offset;
    (void)sud;
    ll_h3 *h = user;
    h->heard = h->now;
    return stream_bytes(h, id, p, n, flags & NGTCP2_STREAM_DATA_FLAG_FIN) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_acked(ngtcp2_conn *q, int64_t id, uint64_t offset, uint64_t n, void *user, void *sud) {
    (void)q;
    (void)offset;
    (void)sud;
    ll_h3 *h = user;
    h->heard = h->now;
    if (h->h && nghttp3_conn_add_ack_offset(h->h, id, n) != 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

/* Stream id is closed both ways, with code. 0, or -1. */
static int stream_closed(ll_h3 *h, int64_t id, uint64_t code) {
    if (!h->h) return 0;
    int rv = nghttp3_conn_close_stream(h->h, id, code);
    if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND) {
        if (!ngtcp2_is_bidi_stream(id)) h->qops->uni_closed(h);
        return 0;
    }
    return rv == 0 ? 0 : -1;
}

static int q_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t code, void *user, void *sud) {
    (void)q;
    (void)sud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET)) code = NGHTTP3_H3_NO_ERROR;
    return stream_closed(user, id, code) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_stream_reset(ngtcp2_conn *q, int64_t id, uint64_t size, uint64_t code, void *user, void *sud) {
    (void)q;
    (void)size;
    (void)code;
    (void)sud;
    ll_h3 *h = user;
    return !h->h || nghttp3_conn_shutdown_stream_read(h->h, id) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_stop_sending(ngtcp2_conn *q, int64_t id, uint64_t code, void *user, void *sud) {
    (void)q;
    (void)code;
    (void)sud;
    ll_h3 *h = user;
    return !h->h || nghttp3_conn_shutdown_stream_read(h->h, id) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int q_extend_stream(ngtcp2_conn *q, int64_t id, uint64_t max, void *user, void *sud) {
    (void)q;
    (void)max;
    (void)sud;
    ll_h3 *h = user;
    return !h->h || nghttp3_conn_unblock_stream(h->h, id) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* HTTP/3's control and QPACK streams open: when the handshake is over,
 * or at once with 0-RTT. 0, or -1 with why. */
static int open_http(ll_h3 *h) {
    nghttp3_callbacks cb = {
        .acked_stream_data = h3_acked,
        .stream_close = h3_stream_close,
        .recv_data = h3_recv_data,
        .deferred_consume = h3_deferred_consume,
        .recv_header = h3_header,
        .end_headers = h3_end_headers,
        .recv_trailer = h3_header,
        .end_trailers = h3_end_headers,
        .stop_sending = h3_stop_sending,
        .reset_stream = h3_reset_stream,
        .shutdown = h3_shutdown,
    };
    nghttp3_settings settings;
    nghttp3_settings_default(&settings);
    settings.qpack_max_dtable_capacity = 4096;
    settings.qpack_blocked_streams = 100;
    int64_t ctrl, enc, dec;
    if (h->qops->uni_left(h) < 3) {
        snprintf(h->why, sizeof(h->why), "HTTP/3: the server allows fewer than 3 unidirectional streams");
        return -1;
    }
    if (nghttp3_conn_client_new(&h->h, &cb, &settings, nghttp3_mem_default(), h) != 0 ||
        h->qops->open_uni(h, &ctrl) != 0 || nghttp3_conn_bind_control_stream(h->h, ctrl) != 0 ||
        h->qops->open_uni(h, &enc) != 0 || h->qops->open_uni(h, &dec) != 0 ||
        nghttp3_conn_bind_qpack_streams(h->h, enc, dec) != 0) {
        snprintf(h->why, sizeof(h->why), "HTTP/3: cannot open the control streams");
        return -1;
    }
    return 0;
}

/* The server refused our 0-RTT (ngtcp2 forgot its streams): HTTP/3
 * starts over, and each request sent early is handed back to its owner
 * with LL_H3_EARLY_REFUSED, to submit again now that the handshake is
 * over, as QUIC requires (RFC 9001 section 4.6.2). */
static int q_early_rejected(ngtcp2_conn *q, void *user) {
    (void)q;
    ll_h3 *h = user;
    h->early = LL_H3_EARLY_REFUSED;
    nghttp3_conn_del(h->h);
    h->h = NULL;
    while (h->streams) {
        h3_stream *s = h->streams;
        stream_end(h, s, LL_H3_RESTART);
        stream_free(h, s);
    }
    return 0;
}

/* The handshake is over: HTTP/3's streams open (unless 0-RTT opened them
 * and the server took it). */
static int q_handshake_completed(ngtcp2_conn *q, void *user) {
    ll_h3 *h = user;
    if (h->early == LL_H3_EARLY_SENT) {
        if (gnutls_session_get_flags(h->tls) & GNUTLS_SFLAGS_EARLY_DATA) h->early = LL_H3_EARLY_ACCEPTED;
        else if (ngtcp2_conn_tls_early_data_rejected(q) != 0) return NGTCP2_ERR_CALLBACK_FAILURE; /* q_early_rejected */
    }
    if (!h->h && open_http(h) < 0) return NGTCP2_ERR_CALLBACK_FAILURE;
    h->handshake_done = 1;
    h->cipher = gnutls_ciphersuite_get(h->tls);
    return 0;
}

int ll_h3_early(ll_h3 *h, const uint8_t *tp, size_t n) {
    if (h->h || !tp || !n || ngtcp2_conn_decode_and_set_0rtt_transport_params(h->q, tp, n) != 0) return -1;
    if (open_http(h) < 0) {
        nghttp3_conn_del(h->h);
        h->h = NULL;
        h->why[0] = 0;
        return -1;
    }
    h->early = LL_H3_EARLY_SENT;
    return 0;
}

ll_h3_early_state ll_h3_early_of(const ll_h3 *h) { return h->early; }

int ll_h3_early_params(ll_h3 *h, uint8_t *buf, size_t cap) {
    if (!h->handshake_done) return -1;
    ngtcp2_ssize n = ngtcp2_conn_encode_0rtt_transport_params(h->q, buf, cap);
    return n < 0 ? -1 : (int)n;
}

int ll_h3_handshake_done(const ll_h3 *h) { return h->handshake_done; }

static void q_rand(uint8_t *dest, size_t n, const ngtcp2_rand_ctx *ctx) {
    (void)ctx;
    (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, n);
}

static int q_new_cid(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t len, void *user) {
    (void)q;
    (void)user;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, len) != 0 ||
        gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = len;
    return 0;
}

static int q_stateless_reset(ngtcp2_conn *q, const ngtcp2_pkt_stateless_reset *sr, void *user) {
    (void)q;
    (void)sr;
    ll_h3 *h = user;
    h->reset = 1;
    snprintf(h->why, sizeof(h->why), "the server reset the QUIC connection (stateless reset)");
    return 0;
}

static void q_qlog(void *user, uint32_t flags, const void *p, size_t n) {
    ll_h3 *h = user;
    if (!h->qlog) return;
    if (n) fwrite(p, 1, n, h->qlog);
    if (flags & NGTCP2_QLOG_WRITE_FLAG_FIN) {
        fclose(h->qlog);
        h->qlog = NULL;
    }
}

/* DIR/<the connection's first destination id, hex>.sqlog, for qlog's
 * tools (qvis) */
static void qlog_open(ll_h3 *h, const char *dir, const ngtcp2_cid *dcid) {
    char path[4096], hex[2 * NGTCP2_MAX_CIDLEN + 1];
    for (size_t i = 0; i < dcid->datalen; i++) snprintf(hex + 2 * i, 3, "%02x", dcid->data[i]);
    hex[2 * dcid->datalen] = 0;
    snprintf(path, sizeof(path), "%s/%s.sqlog", dir, hex);
    h->qlog = fopen(path, "w");
}

/* GnuTLS's hook after each handshake message: a session ticket is kept */
static int on_handshake_msg(gnutls_session_t s, unsigned type, unsigned when, unsigned incoming,
                            const gnutls_datum_t *msg) {
    (void)when;
    (void)incoming;
    (void)msg;
    if (type != GNUTLS_HANDSHAKE_NEW_SESSION_TICKET) return 0;
    ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(s);
    ll_h3 *h = ref ? ref->user_data : NULL;
    if (h && h->ticket_fn) h->ticket_fn(h->ticket_ud, s);
    return 0;
}

void ll_h3_on_ticket(ll_h3 *h, void (*fn)(void *ud, void *tls), void *ud) {
    h->ticket_fn = fn;
    h->ticket_ud = ud;
}

int ll_h3_resumed(const ll_h3 *h) { return gnutls_session_is_resumed(h->tls) != 0; }

static ngtcp2_conn *conn_of(ngtcp2_crypto_conn_ref *ref) { return ((ll_h3 *)ref->user_data)->q; }

/* ---- the session ---- */

ll_h3 *ll_h3_new(const ll_h2_stream_ops *ops, void *tls, const struct sockaddr *local, socklen_t local_len,
                 const struct sockaddr *remote, socklen_t remote_len, const char *qlog_dir, uint64_t now,
                 const char **err) {
    ll_h3 *h = calloc(1, sizeof(*h));
    if (!h) {
        gnutls_deinit(tls);
        *err = "out of memory";
        return NULL;
    }
    h->ops = ops;
    h->qops = &NGTCP2_QUIC;
    h->tls = tls;
    h->ref.get_conn = conn_of;
    h->ref.user_data = h;
    gnutls_session_set_ptr(h->tls, &h->ref);
    gnutls_handshake_set_hook_function(h->tls, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET, GNUTLS_HOOK_POST,
                                       on_handshake_msg);
    ngtcp2_ccerr_default(&h->err);
    ngtcp2_path_storage_init(&h->path, local, local_len, remote, remote_len, NULL);
    ngtcp2_callbacks cb = {
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .encrypt = ngtcp2_crypto_encrypt_cb,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = ngtcp2_crypto_hp_mask_cb,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .update_key = ngtcp2_crypto_update_key_cb,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
        .handshake_completed = q_handshake_completed,
        .tls_early_data_rejected = q_early_rejected,
        .recv_stream_data = q_recv_stream_data,
        .acked_stream_data_offset = q_acked,
        .stream_close = q_stream_close,
        .stream_reset = q_stream_reset,
        .stream_stop_sending = q_stop_sending,
        .extend_max_stream_data = q_extend_stream,
        .recv_stateless_reset = q_stateless_reset,
        .rand = q_rand,
        .get_new_connection_id = q_new_cid,
    };
    ngtcp2_cid dcid, scid;
    dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
    scid.datalen = 8;
    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = now;
    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    params.initial_max_streams_uni = 3;
    params.initial_max_stream_data_bidi_local = STREAM_WINDOW;
    params.initial_max_stream_data_uni = STREAM_WINDOW;
    params.initial_max_data = CONN_WINDOW;
    params.max_idle_timeout = IDLE_TIMEOUT;
    int rv = NGTCP2_ERR_CALLBACK_FAILURE;
    int ids = gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen) == 0 &&
              gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) == 0;
    if (ids && qlog_dir) {
        qlog_open(h, qlog_dir, &dcid);
        if (h->qlog) settings.qlog_write = q_qlog;
    }
    if (ids)
        rv = ngtcp2_conn_client_new(&h->q, &dcid, &scid, &h->path.path, NGTCP2_PROTO_VER_V1, &cb, &settings,
                                    &params, NULL, h);
    if (rv != 0) {
        *err = ngtcp2_strerror(rv);
        if (h->qlog) fclose(h->qlog);
        gnutls_deinit(h->tls);
        free(h);
        return NULL;
    }
    ngtcp2_conn_set_tls_native_handle(h->q, h->tls);
    return h;
}

void ll_h3_free(ll_h3 *h) {
    if (!h) return;
    while (h->streams) stream_free(h, h->streams);
    nghttp3_conn_del(h->h);
    if (h->q) ngtcp2_conn_del(h->q);
    if (h->qlog) fclose(h->qlog);
    if (h->tls) gnutls_deinit(h->tls);
    free(h);
}

ll_h3 *ll_h3_new_unbound(const ll_h2_stream_ops *ops) {
    ll_h3 *h = calloc(1, sizeof(*h));
    if (!h) return NULL;
    h->ops = ops;
    h->qops = &UNBOUND;
    h->next_bidi = 0;
    h->next_uni = 2;
    ngtcp2_ccerr_default(&h->err);
    if (open_http(h) < 0) {
        ll_h3_free(h);
        return NULL;
    }
    h->handshake_done = 1;
    return h;
}

int ll_h3_feed(ll_h3 *h, int64_t id, const uint8_t *p, size_t n, int fin) {
    if (h->failed) return -1;
    return stream_bytes(h, id, p, n, fin);
}

int ll_h3_feed_close(ll_h3 *h, int64_t id, uint64_t code) {
    if (h->failed) return -1;
    if (stream_closed(h, id, code) < 0) h->failed = 1;
    return h->failed ? -1 : 0;
}

int ll_h3_recv(ll_h3 *h, const uint8_t *p, size_t n, uint64_t now) {
    if (h->failed) return -1;
    ngtcp2_pkt_info pi = {0};
    h->now = now;
    int rv = ngtcp2_conn_read_pkt(h->q, &h->path.path, &pi, p, n, now);
    if (rv == 0) return 0;
    h->liberr = rv;
    if (rv == NGTCP2_ERR_CRYPTO) ngtcp2_ccerr_set_tls_alert(&h->err, ngtcp2_conn_get_tls_alert(h->q), NULL, 0);
    else if (rv != NGTCP2_ERR_CALLBACK_FAILURE) ngtcp2_ccerr_set_liberr(&h->err, rv, NULL, 0);
    if (!h->failed && !h->why[0]) fail(h, "QUIC", rv);
    h->failed = 1;
    return -1;
}

/* After a stream's bytes went out: n body bytes more written; once all
 * the body and its end are, the owner hears the request was sent. */
static void written(ll_h3 *h, int64_t id, size_t n, int fin_sent) {
    if (id < 0) return;
    if (h->h) nghttp3_conn_add_write_offset(h->h, id, n);
    if (!fin_sent || !ngtcp2_is_bidi_stream(id)) return;
    h3_stream *s = stream_find(h, id);
    if (s && s->ud && !s->sent) {
        s->sent = 1;
        h->ops->on_sent(s->ud);
    }
}

int ll_h3_send(ll_h3 *h, ll_h3_out *out, uint64_t now) {
    out->n = 0;
    if (h->failed) return -1;
    size_t used = 0, mtu = ngtcp2_conn_get_max_tx_udp_payload_size(h->q);
    ngtcp2_pkt_info pi;
    while (out->n < LL_H3_BATCH && out->cap - used >= mtu) {
        int64_t id = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        if (h->h && ngtcp2_conn_get_max_data_left(h->q)) {
            nvec = nghttp3_conn_writev_stream(h->h, &id, &fin, vec, sizeof(vec) / sizeof(vec[0]));
            if (nvec < 0) {
                ngtcp2_ccerr_set_application_error(&h->err, nghttp3_err_infer_quic_app_error_code((int)nvec),
                                                   NULL, 0);
                snprintf(h->why, sizeof(h->why), "HTTP/3: %s", nghttp3_strerror((int)nvec));
                h->failed = 1;
                return -1;
            }
        }
        size_t total = 0;
        for (nghttp3_ssize i = 0; i < nvec; i++) total += vec[i].len;
        ngtcp2_ssize took = -1;
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize w = ngtcp2_conn_writev_stream(h->q, NULL, &pi, out->buf + used, mtu, &took, flags, id,
                                                   (const ngtcp2_vec *)vec, (size_t)nvec, now);
        if (w == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(h->h, id);
            continue;
        }
        if (w == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(h->h, id);
            continue;
        }
        if (w == NGTCP2_ERR_WRITE_MORE) {
            written(h, id, (size_t)took, fin && (size_t)took == total);
            continue;
        }
        if (w < 0) {
            ngtcp2_ccerr_set_liberr(&h->err, (int)w, NULL, 0);
            fail(h, "QUIC", (int)w);
            return -1;
        }
        if (took >= 0) written(h, id, (size_t)took, fin && (size_t)took == total);
        if (w == 0) break;
        out->off[out->n] = used;
        out->len[out->n++] = (size_t)w;
        used += (size_t)w;
    }
    ngtcp2_conn_update_pkt_tx_time(h->q, now);
    return 0;
}

uint64_t ll_h3_expiry(ll_h3 *h) { return h->failed ? UINT64_MAX : ngtcp2_conn_get_expiry(h->q); }

int ll_h3_expire(ll_h3 *h, uint64_t now) {
    if (h->failed) return -1;
    int rv = ngtcp2_conn_handle_expiry(h->q, now);
    if (rv == 0) return 0;
    h->liberr = rv;
    if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        h->idle = 1;
        snprintf(h->why, sizeof(h->why), "the QUIC connection went idle (no answer from the server)");
    } else {
        ngtcp2_ccerr_set_liberr(&h->err, rv, NULL, 0);
        fail(h, "QUIC", rv);
    }
    h->failed = 1;
    return -1;
}

int ll_h3_ready(const ll_h3 *h) { return h->h != NULL && !h->failed; }

int64_t ll_h3_submit(ll_h3 *h, const ll_h2_header *hv, size_t n, int has_body, void *ud) {
    if (!h->h || h->failed || n == 0) return -1;
    int64_t id;
    if (h->qops->open_bidi(h, &id) != 0) return -1;
    nghttp3_nv nv[128];
    nghttp3_nv *v = n <= sizeof(nv) / sizeof(nv[0]) ? nv : malloc(n * sizeof(*v));
    h3_stream *s = v ? stream_new(h, id, ud) : NULL;
    if (!s) {
        if (v && v != nv) free(v);
        h->qops->shutdown(h, id, NGHTTP3_H3_REQUEST_CANCELLED);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        v[i].name = (uint8_t *)hv[i].name;
        v[i].namelen = hv[i].nlen;
        v[i].value = (uint8_t *)hv[i].value;
        v[i].valuelen = hv[i].vlen;
        v[i].flags = NGHTTP3_NV_FLAG_NONE; /* nghttp3 copies them */
    }
    nghttp3_data_reader dr = {.read_data = h3_read_body};
    int rv = nghttp3_conn_submit_request(h->h, id, v, n, has_body ? &dr : NULL, s);
    if (v != nv) free(v);
    if (rv != 0) {
        stream_free(h, s);
        h->qops->shutdown(h, id, NGHTTP3_H3_REQUEST_CANCELLED);
        return -1;
    }
    return id;
}

void ll_h3_cancel(ll_h3 *h, int64_t id) {
    if (id < 0 || !h->h) return;
    h3_stream *s = stream_find(h, id);
    if (s) s->ud = NULL; /* freed when nghttp3 closes the stream */
    if (!h->failed) h->qops->shutdown(h, id, NGHTTP3_H3_REQUEST_CANCELLED);
}

void ll_h3_resume(ll_h3 *h, int64_t id) {
    if (h->h && !h->failed) nghttp3_conn_resume_stream(h->h, id);
}

int ll_h3_can_submit(const ll_h3 *h, int open, int max) {
    if (!h->h || h->failed || h->goaway) return 0;
    return max <= 0 || open < max;
}

int ll_h3_streams_left(const ll_h3 *h) {
    if (!h->h || h->failed) return 0;
    uint64_t n = ngtcp2_conn_get_streams_bidi_left(h->q);
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

uint64_t ll_h3_heard(const ll_h3 *h) { return h->heard; }

int ll_h3_alive(const ll_h3 *h) { return !h->failed; }

const char *ll_h3_why(ll_h3 *h, ll_h3_end *kind) {
    *kind = h->idle ? LL_H3_END_IDLE : h->reset ? LL_H3_END_RESET : LL_H3_END_OTHER;
    if (h->liberr == NGTCP2_ERR_CRYPTO) {
        unsigned st = gnutls_session_get_verify_cert_status(h->tls);
        *kind = st ? LL_H3_END_VERIFY : LL_H3_END_TLS;
        if (st) {
            gnutls_datum_t d = {0};
            if (gnutls_certificate_verification_status_print(st, GNUTLS_CRT_X509, &d, 0) == 0) {
                snprintf(h->why, sizeof(h->why), "tls: failed to verify certificate: %s", d.data);
                gnutls_free(d.data);
            } else {
                snprintf(h->why, sizeof(h->why), "tls: failed to verify certificate");
            }
        } else {
            uint8_t alert = ngtcp2_conn_get_tls_alert(h->q);
            snprintf(h->why, sizeof(h->why), "tls: the QUIC handshake failed (%s)",
                     alert ? gnutls_alert_get_strname((gnutls_alert_description_t)alert) : "no alert");
        }
        return h->why;
    }
    const ngtcp2_ccerr *peer = ngtcp2_conn_get_ccerr(h->q);
    if (h->liberr == NGTCP2_ERR_DRAINING && peer) {
        if (peer->type == NGTCP2_CCERR_TYPE_TRANSPORT && peer->error_code >= 0x100 && peer->error_code < 0x200) {
            const char *alert = gnutls_alert_get_name((gnutls_alert_description_t)(peer->error_code & 0xff));
            *kind = LL_H3_END_TLS;
            snprintf(h->why, sizeof(h->why), "tls: the server closed the QUIC connection with TLS alert %d (%s)",
                     (int)(peer->error_code & 0xff), alert ? alert : "unknown");
        } else if (!h->why[0] || strstr(h->why, "QUIC: "))
            snprintf(h->why, sizeof(h->why), "the server closed the QUIC connection (%s error 0x%llx%s%.*s)",
                     peer->type == NGTCP2_CCERR_TYPE_APPLICATION ? "application" : "transport",
                     (unsigned long long)peer->error_code, peer->reasonlen ? ": " : "", (int)peer->reasonlen,
                     peer->reason ? (const char *)peer->reason : "");
    }
    if (!h->why[0]) snprintf(h->why, sizeof(h->why), "the QUIC connection closed");
    return h->why;
}

const char *ll_h3_cipher(const ll_h3 *h) { return h->cipher ? h->cipher : ""; }

void ll_h3_close(ll_h3 *h, ll_h3_out *out, uint64_t now) {
    out->n = 0;
    if (ngtcp2_conn_in_closing_period(h->q) || ngtcp2_conn_in_draining_period(h->q) || h->liberr == NGTCP2_ERR_IDLE_CLOSE)
        return;
    if (h->h && !h->failed) ngtcp2_ccerr_set_application_error(&h->err, NGHTTP3_H3_NO_ERROR, NULL, 0);
    ngtcp2_pkt_info pi;
    ngtcp2_ssize w = ngtcp2_conn_write_connection_close(h->q, NULL, &pi, out->buf, out->cap, &h->err, now);
    if (w <= 0) return;
    out->off[0] = 0;
    out->len[0] = (size_t)w;
    out->n = 1;
}
