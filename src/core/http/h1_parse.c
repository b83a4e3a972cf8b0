/* h1_parse.c -- an HTTP/1.1 response read as it arrives, on http-parser
 * (see h1_parse.h). The header block is rebuilt from the parser's
 * callbacks, so a header split across reads needs no copy of the input;
 * the body goes to the buffer as it is parsed, decoded on the way when
 * its Content-Encoding is one luaload decodes. */
#include "h1_parse.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "h1_head.h"

static ll_h1_parse *of(http_parser *p) { return p->data; }

static int put(ll_h1_parse *h, const char *s, size_t n) {
    if (ll_buf_append(h->hdrs, s, n) == 0) return 0;
    h->err = "out of memory reading the response headers";
    return -1;
}

/* The status line up to its reason phrase, written once per response. */
static int status_line(ll_h1_parse *h) {
    if (h->hdrs->len) return 0;
    /* by hand: snprintf was a fifth of the parse (callgrind) */
    unsigned code = h->p.status_code;
    char line[13] = {'H', 'T', 'T', 'P', '/', (char)('0' + h->p.http_major % 10), '.',
                     (char)('0' + h->p.http_minor % 10), ' ', (char)('0' + code / 100 % 10),
                     (char)('0' + code / 10 % 10), (char)('0' + code % 10), ' '};
    return put(h, line, sizeof(line));
}

/* The header whose value just ended: the one luaload acts on is
 * Content-Encoding (decoded when it names one encoding luaload knows). */
static void header_end(ll_h1_parse *h) {
    const char *name = h->hdrs->p + h->field_at;
    size_t nl = h->value_at - 2 - h->field_at;
    if (nl != 16 || strncasecmp(name, "content-encoding", 16) != 0) return;
    h->encoding = ll_decode_kind_of(h->hdrs->p + h->value_at, h->hdrs->len - h->value_at);
}

static int on_begin(http_parser *p) {
    ll_h1_parse *h = of(p);
    h->hdrs->len = 0;
    h->body->len = 0;
    h->in = 0;
    h->encoding = -1;
    return 0;
}

static int on_status(http_parser *p, const char *at, size_t n) {
    ll_h1_parse *h = of(p);
    return status_line(h) < 0 || put(h, at, n) < 0;
}

static int on_field(http_parser *p, const char *at, size_t n) {
    ll_h1_parse *h = of(p);
    if (h->headers_done) return 0; /* a chunked body's trailers: not headers of the response */
    if (h->in != 1) {
        if (h->in == 0 && status_line(h) < 0) return 1;
        if (h->in == 2) header_end(h);
        if (put(h, "\r\n", 2) < 0) return 1;
        h->field_at = h->hdrs->len;
        h->in = 1;
    }
    return put(h, at, n) < 0;
}

static int on_value(http_parser *p, const char *at, size_t n) {
    ll_h1_parse *h = of(p);
    if (h->headers_done) return 0;
    if (h->in == 1) {
        if (put(h, ": ", 2) < 0) return 1;
        h->value_at = h->hdrs->len;
        h->in = 2;
    }
    return put(h, at, n) < 0;
}

static int on_headers(http_parser *p) {
    ll_h1_parse *h = of(p);
    if (h->in == 0 && status_line(h) < 0) return -1;
    if (h->in == 2) header_end(h);
    if (put(h, "\r\n\r\n", 4) < 0) return -1;
    h->status = p->status_code;
    h->minor = p->http_minor;
    if (h->status < 200 && h->status != 101) return 0; /* an interim response: the final one follows */
    h->headers_done = 1;
    /* no body follows a HEAD's response, nor a 204 or 304 even when it gives a
     * Content-Length (RFC 9110 6.4.1; http-parser would wait for one) */
    int bodiless = h->head || h->status == 204 || h->status == 304;
    if (h->encoding > LL_DECODE_IDENTITY && !h->head && h->limit > 0) {
        h->dec = ll_body_decoder_new(h->encoding);
        if (!h->dec) {
            h->err = "out of memory decoding the response body";
            return -1;
        }
    } else if ((p->flags & F_CONTENTLENGTH) && h->limit > 0 && !bodiless && p->content_length > (uint64_t)h->limit) {
        h->too_big = 1; /* known to be over before reading it */
        return -1;
    }
    return bodiless; /* 1: http-parser skips the body */
}

/* What the body came to so far, to on_chunk (when streamed): 0 to go on,
 * 1 when it stopped the body (stopped tells a clean stop from a failure). */
static int chunk_out(ll_h1_parse *h) {
    int rc = ll_body_chunk_out(h->on_chunk, h->chunk_ud, h->status, h->body, &h->err);
    if (rc == 1) h->stopped = 1;
    return rc != 0;
}

/* Takes n bytes of the body: counted, decoded and kept up to the limit.
 * 0, or 1 when the body is over the limit, corrupt, out of memory, or
 * stopped by on_chunk. */
static int body_put(ll_h1_parse *h, const char *at, size_t n) {
    h->body_wire += n;
    if (h->limit == 0) return 0;
    if (h->dec) {
        int rc = ll_body_decoder_feed(h->dec, at, n, h->body, h->limit, &h->err);
        if (rc == -2) h->too_big = 1;
        return rc != 0 || chunk_out(h);
    }
    if ((int64_t)(h->body->len + n) > h->limit) {
        h->too_big = 1;
        return 1;
    }
    if (ll_buf_append(h->body, at, n) == 0) return chunk_out(h);
    h->err = "out of memory reading the response body";
    return 1;
}

static int on_body(http_parser *p, const char *at, size_t n) { return body_put(of(p), at, n); }

static int on_complete(http_parser *p) {
    ll_h1_parse *h = of(p);
    if (!h->headers_done) return 0; /* the interim response ended */
    if (h->dec && ll_body_decoder_finish(h->dec, &h->err) < 0) return 1;
    h->done = 1;
    h->keep_alive = http_should_keep_alive(p);
    http_parser_pause(p, 1); /* execute returns here: what follows is not ours */
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_status = on_status,
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

void ll_h1_parse_reset(ll_h1_parse *h) {
    ll_body_decoder_free(h->dec);
    h->dec = NULL;
}

/* http-parser's default is 80 KiB */
static void set_limits(void) { http_parser_set_max_header_size(LL_H1_MAX_HEAD); }

void ll_h1_parse_start(ll_h1_parse *h, ll_buf *hdrs, ll_buf *body, int64_t limit, int head) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, set_limits);
    ll_h1_parse_reset(h);
    memset(h, 0, offsetof(ll_h1_parse, memo));
    http_parser_init(&h->p, HTTP_RESPONSE);
    h->p.data = h;
    h->hdrs = hdrs;
    h->body = body;
    hdrs->len = body->len = 0;
    h->limit = limit;
    h->head = head;
    h->encoding = -1;
}

/* The end of an LL_H1_ERROR: the decoder freed, the message set. */
static int fail(ll_h1_parse *h, enum http_errno e) {
    ll_h1_parse_reset(h);
    if (h->too_big) h->err = "the response body is over max_response_body";
    else if (e == HPE_OK) h->err = h->fed == 0 ? "the server closed the connection without a response"
                                 : !h->headers_done ? "the server closed the connection in the middle of the response headers"
                                 : "the server closed the connection in the middle of the response body";
    else if (!h->err) h->err = http_errno_description(e);
    return LL_H1_ERROR;
}

/* The end of a response its on_chunk stopped: complete as it is, on a
 * connection that cannot carry another (the rest of the body is unread). */
static int stopped_done(ll_h1_parse *h) {
    ll_h1_parse_reset(h);
    h->done = 1;
    h->keep_alive = 0;
    return LL_H1_DONE;
}

/* The end of a response whose head h1_head.c read. */
static int fast_done(ll_h1_parse *h) {
    if (h->dec && ll_body_decoder_finish(h->dec, &h->err) < 0) return fail(h, HPE_CB_message_complete);
    h->done = 1;
    ll_h1_parse_reset(h);
    return LL_H1_DONE;
}

/* The body of a response whose head h1_head.c read: the next n bytes at
 * p, of which the first h->left are the body's. */
static int fast_body(ll_h1_parse *h, const char *p, size_t n, size_t *used) {
    if (n == 0) return fail(h, HPE_OK);
    size_t take = n < h->left ? n : (size_t)h->left;
    *used = take;
    if (body_put(h, p, take) != 0) return h->stopped ? stopped_done(h) : fail(h, HPE_CB_body);
    h->left -= take;
    return h->left > 0 ? LL_H1_MORE : fast_done(h);
}

/* ll_h1_head_scan, or what it found in the same bytes last time (the
 * scan reads nothing past the head's blank line, so a head equal to the
 * memo's, for the same kind of request, reads the same). */
static int scan_head(ll_h1_parse *h, const char *p, size_t n, ll_h1_scanned *hd) {
    size_t len = h->memo.len;
    if (len && len <= n && h->memo_for_head == h->head && memcmp(p, h->memo_bytes, len) == 0) {
        *hd = h->memo;
        return 1;
    }
    if (!ll_h1_head_scan(p, n, h->head, hd)) return 0;
    h->memo.len = 0;
    if (hd->len <= sizeof(h->memo_bytes)) {
        memcpy(h->memo_bytes, p, hd->len);
        h->memo = *hd;
        h->memo_for_head = h->head;
    }
    return 1;
}

/* A first read that holds the whole head: read by h1_head.c when it is
 * plain. Returns -2 to leave it to http-parser. */
static int fast_head(ll_h1_parse *h, const char *p, size_t n, size_t *used) {
    ll_h1_scanned hd;
    if (!scan_head(h, p, n, &hd)) return -2;
    int decode = hd.encoding > LL_DECODE_IDENTITY && !h->head && h->limit > 0;
    if (!decode && h->limit > 0 && hd.content_length > h->limit) return -2; /* http-parser says it is too big */
    if (ll_h1_head_copy(p, &hd, h->hdrs) < 0) {
        h->err = "out of memory reading the response headers";
        return fail(h, HPE_CB_header_field);
    }
    h->fast = 1;
    h->set_cookie = hd.set_cookie;
    h->status = hd.status;
    h->minor = hd.minor;
    h->keep_alive = hd.keep_alive;
    h->encoding = hd.encoding;
    h->headers_done = 1;
    h->left = hd.content_length > 0 ? (uint64_t)hd.content_length : 0;
    if (decode && !(h->dec = ll_body_decoder_new(hd.encoding))) {
        h->err = "out of memory decoding the response body";
        return fail(h, HPE_CB_headers_complete);
    }
    *used = hd.len;
    if (h->left == 0) return fast_done(h);
    if (hd.len == n) return LL_H1_MORE;
    size_t took = 0;
    int rc = fast_body(h, p + hd.len, n - hd.len, &took);
    *used += took;
    return rc;
}

int ll_h1_parse_feed(ll_h1_parse *h, const char *p, size_t n, size_t *used) {
    int first = h->fed == 0;
    *used = 0;
    h->fed += n;
    if (h->fast) return fast_body(h, p, n, used);
    if (first && n > 0 && !h->no_fast) {
        int rc = fast_head(h, p, n, used);
        if (rc != -2) return rc;
    }
    size_t got = http_parser_execute(&h->p, &settings, n ? p : NULL, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&h->p);
    *used = got;
    if (h->stopped) return stopped_done(h);
    if (e == HPE_PAUSED || (h->done && e == HPE_OK)) {
        http_parser_pause(&h->p, 0);
        ll_h1_parse_reset(h);
        return LL_H1_DONE;
    }
    if (e == HPE_OK && h->p.upgrade && h->headers_done) { /* 101: the connection is no longer HTTP */
        h->done = 1;
        h->keep_alive = 0;
        return LL_H1_DONE;
    }
    if (e == HPE_OK && n > 0) return LL_H1_MORE;
    if (n == 0 && e == HPE_INVALID_EOF_STATE) e = HPE_OK; /* closed early: said as fail() says it */
    return fail(h, e);
}
