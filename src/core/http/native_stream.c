/* native_stream.c -- a request on a stream of a multiplexed native
 * connection, HTTP/2 (native_h2.c) or HTTP/3 (native_h3.c): its header
 * list -- the pseudo-headers and the request's headers in lower case,
 * the connection-specific ones left out (RFC 9113, RFC 9114) -- and the
 * callbacks of its stream (h2_session.h's table, which h3_session.c
 * calls too): the response's headers rebuilt as a header block
 * ("HTTP/2 200\r\nname: value\r\n..."), its body decoded like an
 * HTTP/1.1 one, its trailers, its end. A stream that ends inside the
 * library's callbacks is only marked done there; the connection hands it
 * to its owner after the callbacks returned (native_done_streams), so an
 * owner that starts its next request or goes away cannot pull the
 * session from under the library. Bytes sent and received are counted
 * before header compression, plus the frame headers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "native.h"
#include "xmalloc.h"

#define FRAME_HEADER 9

/* ---- the request's header list ---- */

static int skip_header(const char *name) {
    static const char *const hop[] = {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                                      "upgrade", "host", NULL};
    for (int i = 0; hop[i]; i++)
        if (strcasecmp(name, hop[i]) == 0) return 1;
    return 0;
}

typedef struct hlist {
    ll_h2_header v[128];
    size_t n;
    ll_buf lower;              /* the lower-cased names, NUL-separated */
    size_t at[128];            /* where each name starts in lower, or (size_t)-1 */
} hlist;

static void add(hlist *l, const char *name, const char *value, int lower) {
    if (l->n == sizeof(l->v) / sizeof(l->v[0])) return;
    ll_h2_header *h = &l->v[l->n];
    h->name = name;
    h->nlen = strlen(name);
    h->value = value;
    h->vlen = strlen(value);
    h->static_name = !lower; /* the names not lower-cased here are literals */
    l->at[l->n] = (size_t)-1;
    if (lower) {
        l->at[l->n] = l->lower.len;
        for (size_t i = 0; i < h->nlen; i++) {
            char c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
            ll_buf_append(&l->lower, &c, 1);
        }
        ll_buf_append(&l->lower, "", 1);
    }
    l->n++;
}

int native_stream_submit(native_conn *c, native_transfer *x) {
    const ll_http_req *req = x->base.req;
    hlist list, *l = &list; /* not zeroed: add() writes what it counts */
    l->n = 0;
    memset(&l->lower, 0, sizeof(l->lower));
    char auth_small[320], path[4096 + 2], len[32], *auth = auth_small;
    size_t an = ll_url_authority(&x->url, auth, sizeof(auth_small) - 1); /* :authority as Host would be */
    if (an >= sizeof(auth_small)) ll_url_authority(&x->url, auth = ll_xmalloc(an + 1), an);
    auth[an] = 0;
    const char *host = NULL, *cookie = NULL;
    int has_ua = 0, has_type = 0, has_len = 0;
    for (int i = 0; i < req->nheaders; i++) {
        const char *n = req->headers[i].name;
        if (strcasecmp(n, "Host") == 0) host = req->headers[i].value;
        if (strcasecmp(n, "Cookie") == 0 && !cookie) cookie = req->headers[i].value;
        has_ua |= strcasecmp(n, "User-Agent") == 0;
        has_type |= strcasecmp(n, "Content-Type") == 0;
        has_len |= strcasecmp(n, "Content-Length") == 0;
    }
    char *path_dyn = NULL;
    const char *p = x->url.path;
    if (x->url.query) {
        size_t need = strlen(x->url.path) + strlen(x->url.query) + 2;
        char *dst = need <= sizeof(path) ? path : (path_dyn = ll_xmalloc(need));
        snprintf(dst, need, "%s?%s", x->url.path, x->url.query);
        p = dst;
    }
    add(l, ":method", x->base.method, 0);
    add(l, ":scheme", x->url.scheme, 0);
    add(l, ":authority", host ? host : auth, 0);
    add(l, ":path", p, 0);
    /* the request's Cookie with the jar's after it, as one header */
    char *cookies = NULL;
    if (x->cookie_applied) {
        size_t need = (cookie ? strlen(cookie) + 2 : 0) + strlen(x->cookie_applied) + 1;
        cookies = ll_xmalloc(need);
        snprintf(cookies, need, "%s%s%s", cookie ? cookie : "", cookie && *cookie ? "; " : "", x->cookie_applied);
    }
    int cookie_done = 0;
    for (int i = 0; i < req->nheaders; i++) {
        const ll_header *h = &req->headers[i];
        if (skip_header(h->name)) continue;
        if (strcasecmp(h->name, "Cookie") == 0) {
            if (cookie_done) {
                add(l, h->name, h->value, 1);
                continue;
            }
            cookie_done = 1;
            add(l, "cookie", cookies ? cookies : h->value, 0);
            continue;
        }
        add(l, h->name, h->value, 1);
    }
    if (cookies && !cookie_done) add(l, "cookie", cookies, 0);
    if (!has_ua) add(l, "user-agent", x->user_agent, 0);
    if (x->in.content_type && !has_type) add(l, "content-type", x->in.content_type, 0);
    int needs_zero = !x->in.has_body && (strcmp(x->base.method, "POST") == 0 || strcmp(x->base.method, "PUT") == 0 ||
                                         strcmp(x->base.method, "PATCH") == 0);
    if (!has_len && (x->in.has_body || needs_zero) && x->in.body_len != LL_BODY_LEN_UNKNOWN) {
        snprintf(len, sizeof(len), "%llu", (unsigned long long)x->in.body_len);
        add(l, "content-length", len, 0);
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->at[i] != (size_t)-1) l->v[i].name = l->lower.p + l->at[i];
    int64_t out = FRAME_HEADER;
    for (size_t i = 0; i < l->n; i++) out += (int64_t)(l->v[i].nlen + l->v[i].vlen + 2);
    x->h2_body_pos = 0;
    int64_t id = -1;
    if (!l->lower.failed)
        id = c->h3 ? ll_h3_submit(c->h3, l->v, l->n, x->in.has_body, x)
                   : ll_h2_submit(c->h2, l->v, l->n, x->in.has_body, x);
    ll_buf_free(&l->lower);
    free(cookies);
    free(path_dyn);
    if (auth != auth_small) free(auth);
    if (id < 0) return -1;
    if (c->h3) x->qstream = id;
    else x->stream = (int32_t)id;
    x->bytes_out = out;
    return 0;
}

/* ---- the stream's events ---- */

/* Appends "name: value\r\n" to the head x keeps, in one go. */
static int put_header(ll_buf *h, const char *name, size_t nlen, const char *value, size_t vlen) {
    if (ll_buf_reserve(h, nlen + vlen + 4) < 0) return -1;
    char *w = h->p + h->len;
    memcpy(w, name, nlen);
    w += nlen;
    *w++ = ':';
    *w++ = ' ';
    memcpy(w, value, vlen);
    w += vlen;
    *w++ = '\r';
    *w++ = '\n';
    *w = 0;
    h->len = (size_t)(w - h->p);
    return 0;
}

static int on_header(void *ud, const char *name, size_t nlen, const char *value, size_t vlen) {
    native_transfer *x = ud;
    if (!x->t_first) x->t_first = ll_loop_now_ns();
    x->bytes_in += (int64_t)(nlen + vlen + 2);
    ll_buf *h = x->parse.headers_done ? &x->trailers : &x->hdrs; /* a HEADERS after the final one: trailers */
    if (nlen == 7 && memcmp(name, ":status", 7) == 0) {
        h->len = 0;
        x->h2_status = atoi(value); /* nghttp2 took only digits */
        char line[24] = "HTTP/2 "; /* the head kept (--http-debug's) says the version */
        if (x->conn && x->conn->h3) line[5] = '3';
        size_t n = 7, d = 0;
        char digits[12];
        for (unsigned v = (unsigned)x->h2_status; d == 0 || v; v /= 10) digits[d++] = (char)('0' + v % 10);
        while (d) line[n++] = digits[--d];
        line[n++] = '\r';
        line[n++] = '\n';
        return ll_buf_append(h, line, n);
    }
    if (nlen == 16 && memcmp(name, "content-encoding", 16) == 0) x->parse.encoding = ll_decode_kind_of(value, vlen);
    if (nlen == 10 && memcmp(name, "set-cookie", 10) == 0) x->parse.set_cookie = 1; /* nghttp2's names are lower case */
    return put_header(h, name, nlen, value, vlen);
}

static int on_headers_done(void *ud, int final) {
    native_transfer *x = ud;
    (void)final;
    x->bytes_in += FRAME_HEADER;
    if (x->h2_status < 200 || x->parse.headers_done) { /* an interim response, or trailers */
        if (!x->parse.headers_done) x->parse.encoding = -1;
        return 0;
    }
    x->parse.headers_done = 1;
    if (ll_buf_append(&x->hdrs, "\r\n", 2) < 0) return -1;
    if (x->parse.encoding > LL_DECODE_IDENTITY && x->limit > 0 && strcmp(x->base.method, "HEAD") != 0) {
        x->parse.dec = ll_body_decoder_new(x->parse.encoding);
        if (!x->parse.dec) return -1;
    }
    return 0;
}

/* The body so far to on_chunk (when streamed): 0 to go on, else the
 * stream is reset (CANCEL) and closes; a clean stop (parse.stopped) then
 * completes as the response it was. */
static int chunk_out(native_transfer *x) {
    int rc = ll_body_chunk_out(x->parse.on_chunk, x->parse.chunk_ud, x->h2_status, &x->body, &x->parse.err);
    if (rc == 1) x->parse.stopped = 1;
    return rc;
}

static int on_data(void *ud, const char *p, size_t n) {
    native_transfer *x = ud;
    x->bytes_in += (int64_t)n;
    if (x->limit == 0) return 0;
    if (x->parse.dec) {
        const char *err = NULL;
        int rc = ll_body_decoder_feed(x->parse.dec, p, n, &x->body, x->limit, &err);
        if (rc == -2) x->parse.too_big = 1;
        if (rc == -1) x->parse.err = err;
        if (rc == 0) rc = chunk_out(x);
        return rc ? -1 : 0;
    }
    if ((int64_t)(x->body.len + n) > x->limit) {
        x->parse.too_big = 1;
        return -1;
    }
    if (ll_buf_append(&x->body, p, n) < 0) return -1;
    return chunk_out(x);
}

static void on_sent(void *ud) {
    native_transfer *x = ud;
    x->t_sent = ll_loop_now_ns();
    x->attempts = 1;
}

/* The name of a reset's code: HTTP/2's (RFC 9113) or HTTP/3's (RFC 9114). */
static const char *reset_name(uint32_t code) {
    switch (code) {
    case 1: return "PROTOCOL_ERROR";
    case 2: return "INTERNAL_ERROR";
    case 7: return "REFUSED_STREAM";
    case 8: return "CANCEL";
    case 0x101: return "H3_GENERAL_PROTOCOL_ERROR";
    case 0x102: return "H3_INTERNAL_ERROR";
    case 0x10b: return "H3_REQUEST_REJECTED";
    case 0x10c: return "H3_REQUEST_CANCELLED";
    case 0x10d: return "H3_REQUEST_INCOMPLETE";
    case 0x10e: return "H3_MESSAGE_ERROR";
    default: return "reset by the server";
    }
}

/* The stream is over: its result waits in x until the connection hands
 * it over (native_done_streams). */
static void on_close(void *ud, uint32_t code) {
    native_transfer *x = ud;
    if (code == LL_H3_RESTART) { /* sent as 0-RTT, refused unread: again after the handshake */
        x->qstream = -1;
        x->early_sent = 0;
        x->st = X_WAIT;
        return;
    }
    x->t_last = ll_loop_now_ns();
    x->fail_code = 0;
    x->errbuf[0] = 0;
    const char *err = NULL;
    if (x->parse.stopped) {
        /* its on_chunk had what it wanted: the CANCEL is ours, not an error */
    } else if (x->parse.too_big) {
        x->fail_code = 1000;
        snprintf(x->errbuf, sizeof(x->errbuf), "the response body is over max_response_body (%lld bytes)",
                 (long long)x->limit);
    } else if (x->parse.err) {
        x->fail_code = 1000;
        snprintf(x->errbuf, sizeof(x->errbuf), "%s", x->parse.err);
    } else if (code) {
        x->fail_code = 1600;
        snprintf(x->errbuf, sizeof(x->errbuf), "stream error: stream ID %lld; %s",
                 (long long)(x->qstream >= 0 ? x->qstream : x->stream), reset_name(code));
    } else if (!x->parse.headers_done) {
        x->fail_code = 1000;
        snprintf(x->errbuf, sizeof(x->errbuf), "the stream ended without a response");
    } else if (x->parse.dec && ll_body_decoder_finish(x->parse.dec, &err) < 0) {
        x->fail_code = 1000;
        snprintf(x->errbuf, sizeof(x->errbuf), "%s", err);
    }
    ll_body_decoder_free(x->parse.dec);
    x->parse.dec = NULL;
    x->parse.status = x->h2_status;
    x->stream = 0;
    x->qstream = -1;
    x->st = X_DONE;
}

static ssize_t read_body(void *ud, char *buf, size_t n) {
    native_transfer *x = ud;
    ssize_t r = x->has_form ? ll_form_wire_read(&x->form, x->h2_body_pos, buf, n)
                            : ll_body_read(&x->base.req->body, x->h2_body_pos, buf, n);
    if (r > 0) {
        x->h2_body_pos += (uint64_t)r;
        x->bytes_out += r + FRAME_HEADER;
    }
    return r;
}

const ll_h2_stream_ops native_stream_ops = {
    .on_header = on_header,
    .on_headers_done = on_headers_done,
    .on_data = on_data,
    .on_sent = on_sent,
    .on_close = on_close,
    .read_body = read_body,
};

/* Hands the streams that ended to their owners, one at a time (each may
 * start its next request, or free transfers); stops if c closes. */
void native_done_streams(native_conn *c) {
    int ended = 0;
    while (!c->dead) {
        native_transfer *x = c->users;
        while (x && x->st != X_DONE) x = x->next;
        if (!x) break;
        native_conn_leave(c, x);
        ended = 1;
        int keep = !x->no_reuse && !x->base.req->disable_keep_alive;
        if ((!keep || c->stale) && c->nusers == 0) { /* noConnectionReuse, or stale (native_h3.c): it ends */
            native_conn_close(c, 0, NULL);
            native_complete(x, x->fail_code, x->errbuf);
            return;
        }
        native_complete(x, x->fail_code, x->errbuf);
    }
    if (ended && !c->dead) native_group_wake(c->g);
}
