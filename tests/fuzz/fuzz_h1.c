/* fuzz_h1.c -- libFuzzer target for the native transport's HTTP/1.1
 * response reader (src/core/http/h1_parse.c on http-parser, with the
 * chunked decoder and the Content-Encoding decoders of body_decode.c):
 * what a misbehaving server controls. The first byte picks the request
 * kind (HEAD or not), the body limit and how the rest is cut into reads;
 * the rest is the server's bytes, then its close. Checks that the reader
 * ends at most once, within its limits, with a well-formed header block,
 * and never reads past what it was given; and that the fast path for a
 * head that arrives whole (h1_head.c) reads every response exactly as
 * http-parser does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h1_parse.h"
#include "fuzz_check.h"

static const int64_t LIMITS[4] = {0, 1, 64, 1 << 20};

/* What reading one response came to. */
typedef struct outcome {
    int rc, status, minor, keep_alive;
    size_t consumed; /* bytes of the input that were the response's */
    const char *err;
    ll_buf hdrs, body;
} outcome;

static void check_done(const ll_h1_parse *h, const ll_buf *hdrs, const ll_buf *body) {
    CHECK(h->status >= 100 && h->status <= 999);
    CHECK(hdrs->len >= 4 && memcmp(hdrs->p, "HTTP/", 5) == 0);
    CHECK(memcmp(hdrs->p + hdrs->len - 4, "\r\n\r\n", 4) == 0);
    CHECK((int64_t)body->len <= h->limit);
    CHECK(!h->head || body->len == 0);
}

/* Reads data as a server's bytes cut into reads: the first of first bytes
 * (0: of piece bytes), the others of piece bytes, then the close. */
static void read_response(const uint8_t *data, size_t size, size_t first, size_t piece, int head, int64_t limit,
                          int no_fast, outcome *o) {
    memset(o, 0, sizeof(*o));
    ll_h1_parse h;
    memset(&h, 0, sizeof(h));
    ll_h1_parse_start(&h, &o->hdrs, &o->body, limit, head);
    h.no_fast = no_fast;
    int rc = LL_H1_MORE;
    for (size_t at = 0, want = first ? first : piece; rc == LL_H1_MORE && at < size; at += want, want = piece) {
        size_t n = size - at < want ? size - at : want, used = 0;
        char *copy = malloc(n); /* exactly n bytes: ASan sees any read past them */
        memcpy(copy, data + at, n);
        rc = ll_h1_parse_feed(&h, copy, n, &used);
        free(copy);
        CHECK(rc != LL_H1_DONE || used <= n);
        CHECK(rc != LL_H1_ERROR || h.err);
        o->consumed = at + used;
    }
    if (rc == LL_H1_MORE) {
        size_t used = 0;
        rc = ll_h1_parse_feed(&h, "", 0, &used); /* the server closes */
        CHECK(rc != LL_H1_MORE);
    }
    if (rc == LL_H1_DONE) check_done(&h, &o->hdrs, &o->body);
    o->rc = rc;
    o->status = h.status;
    o->minor = h.minor;
    o->keep_alive = h.keep_alive;
    o->err = rc == LL_H1_ERROR ? h.err : NULL;
    ll_h1_parse_reset(&h);
}

static int same_buf(const ll_buf *a, const ll_buf *b) {
    return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* The fast path (h1_head.c) must read a response exactly as http-parser
 * does, whenever it takes it. */
static void check_same(const outcome *fast, const outcome *slow) {
    CHECK(fast->rc == slow->rc);
    if (slow->rc == LL_H1_ERROR) CHECK(strcmp(fast->err, slow->err) == 0);
    if (slow->rc != LL_H1_DONE) return;
    CHECK(fast->status == slow->status && fast->minor == slow->minor);
    CHECK(fast->keep_alive == slow->keep_alive);
    CHECK(fast->consumed == slow->consumed);
    CHECK(same_buf(&fast->hdrs, &slow->hdrs));
    CHECK(same_buf(&fast->body, &slow->body));
}

static void compare(const uint8_t *data, size_t size, size_t first, size_t piece, int head, int64_t limit) {
    outcome fast, slow;
    read_response(data, size, first, piece, head, limit, 0, &fast);
    read_response(data, size, first, piece, head, limit, 1, &slow);
    check_same(&fast, &slow);
    ll_buf_free(&fast.hdrs);
    ll_buf_free(&fast.body);
    ll_buf_free(&slow.hdrs);
    ll_buf_free(&slow.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int head = data[0] & 1;
    int64_t limit = LIMITS[(data[0] >> 1) & 3];
    size_t piece = (size_t)(data[0] >> 3) + 1; /* 1..32 bytes per read */
    data++;
    size--;
    compare(data, size, 0, piece, head, limit);  /* small reads: http-parser reads the head */
    compare(data, size, size, 1, head, limit);   /* one read: the fast path's case */
    const uint8_t *blank = size >= 4 ? memmem(data, size, "\r\n\r\n", 4) : NULL;
    if (blank) compare(data, size, (size_t)(blank + 4 - data), piece, head, limit); /* the head, then the body in pieces */
    return 0;
}
