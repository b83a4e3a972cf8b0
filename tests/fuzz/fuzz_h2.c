/* fuzz_h2.c -- libFuzzer target for the native transport's HTTP/2 glue
 * (src/core/http/h2_session.c on nghttp2): what a misbehaving server
 * controls. Two requests are submitted (one with a body), then the input
 * is fed as the server's bytes in pieces the first byte sizes, with the
 * client's output drained between them. Checks that each stream closes at
 * most once, that no callback reaches a stream after its close, and that
 * the bytes to send stay bounded. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_session.h"
#include "fuzz_check.h"

typedef struct stream {
    int closed;
    size_t headers, data;
    uint64_t body_pos, body_len;
} stream;

static int on_header(void *ud, const char *name, size_t nlen, const char *value, size_t vlen) {
    stream *s = ud;
    CHECK(!s->closed);
    CHECK(name && value);
    s->headers += nlen + vlen;
    return 0;
}

static int on_headers_done(void *ud, int final) {
    stream *s = ud;
    (void)final;
    CHECK(!s->closed);
    return 0;
}

static int on_data(void *ud, const char *p, size_t n) {
    stream *s = ud;
    CHECK(!s->closed);
    CHECK(p || n == 0);
    s->data += n;
    return s->data > (1u << 20) ? -1 : 0; /* a body limit: the stream is reset */
}

static void on_sent(void *ud) { CHECK(!((stream *)ud)->closed); }

static void on_close(void *ud, uint32_t code) {
    stream *s = ud;
    (void)code;
    CHECK(!s->closed);
    s->closed = 1;
}

static ssize_t read_body(void *ud, char *buf, size_t n) {
    stream *s = ud;
    CHECK(!s->closed);
    size_t left = (size_t)(s->body_len - s->body_pos), k = left < n ? left : n;
    memset(buf, 'b', k);
    s->body_pos += k;
    return (ssize_t)k;
}

static const ll_h2_stream_ops OPS = {on_header, on_headers_done, on_data, on_sent, on_close, read_body};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t piece = (size_t)data[0] * 4 + 1;
    data++;
    size--;
    ll_h2 *h = ll_h2_new(&OPS);
    CHECK(h);
    stream a = {0}, b = {.body_len = 70000};
    /* literal names, as native_h2.c's are (not copied); one copied */
    const ll_h2_header hv[] = {{":method", "GET", 7, 3, 1}, {":scheme", "https", 7, 5, 1},
                               {":authority", "a", 10, 1, 1}, {":path", "/", 5, 1, 1}};
    const ll_h2_header pv[] = {{":method", "POST", 7, 4, 1}, {":scheme", "https", 7, 5, 1},
                               {":authority", "a", 10, 1, 1}, {":path", "/p", 5, 2, 1},
                               {"Content-Length", "70000", 14, 5, 0}};
    CHECK(ll_h2_submit(h, hv, 4, 0, &a) > 0);
    CHECK(ll_h2_submit(h, pv, 5, 1, &b) > 0);
    ll_buf out = {0};
    const char *err = NULL;
    int alive = ll_h2_send(h, &out, &err) == 0;
    for (size_t at = 0; alive && at < size; at += piece) {
        size_t n = size - at < piece ? size - at : piece;
        char *copy = malloc(n); /* exactly n bytes: ASan sees any read past them */
        memcpy(copy, data + at, n);
        alive = ll_h2_recv(h, copy, n, &err) == 0;
        free(copy);
        CHECK(alive || err);
        out.len = 0;
        if (alive) alive = ll_h2_send(h, &out, &err) == 0;
        CHECK(out.len < (1u << 20));
    }
    ll_h2_free(h);
    ll_buf_free(&out);
    return 0;
}
