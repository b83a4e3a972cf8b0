/* fuzz_h1.c -- libFuzzer target for the native transport's HTTP/1.1
 * response reader (src/core/http/h1_parse.c on http-parser, with the
 * chunked decoder and the Content-Encoding decoders of body_decode.c):
 * what a misbehaving server controls. The first byte picks the request
 * kind (HEAD or not), the body limit and how the rest is cut into reads;
 * the rest is the server's bytes, then its close. Checks that the reader
 * ends at most once, within its limits, with a well-formed header block,
 * and never reads past what it was given; and that the fast path for a
 * head that arrives whole (h1_head.c) reads every response exactly as
 * http-parser does, the first time and again from its memo of the last
 * head (for the same kind of request, and after one of the other kind). */
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
static void read_response(ll_h1_parse *hp, const uint8_t *data, size_t size, size_t first, size_t piece, int head,
                          int64_t limit, int no_fast, outcome *o) {
    memset(o, 0, sizeof(*o));
    ll_h1_parse_start(hp, &o->hdrs, &o->body, limit, head);
    hp->no_fast = no_fast;
    int rc = LL_H1_MORE;
    for (size_t at = 0, want = first ? first : piece; rc == LL_H1_MORE && at < size; at += want, want = piece) {
        size_t n = size - at < want ? size - at : want, used = 0;
        char *copy = malloc(n); /* exactly n bytes: ASan sees any read past them */
        memcpy(copy, data + at, n);
        rc = ll_h1_parse_feed(hp, copy, n, &used);
        free(copy);
        CHECK(rc != LL_H1_DONE || used <= n);
        CHECK(rc != LL_H1_ERROR || hp->err);
        o->consumed = at + used;
    }
    if (rc == LL_H1_MORE) {
        size_t used = 0;
        rc = ll_h1_parse_feed(hp, "", 0, &used); /* the server closes */
        CHECK(rc != LL_H1_MORE);
    }
    if (rc == LL_H1_DONE) check_done(hp, &o->hdrs, &o->body);
    o->rc = rc;
    o->status = hp->status;
    o->minor = hp->minor;
    o->keep_alive = hp->keep_alive;
    o->err = rc == LL_H1_ERROR ? hp->err : NULL;
    ll_h1_parse_reset(hp);
}

static void outcome_free(outcome *o) {
    ll_buf_free(&o->hdrs);
    ll_buf_free(&o->body);
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

/* Reads data on parser fast_h (its memo as earlier reads left it) and on
 * a parser of its own with http-parser alone: both must read the same. */
static void compare_on(ll_h1_parse *fast_h, const uint8_t *data, size_t size, size_t first, size_t piece, int head,
                       int64_t limit) {
    ll_h1_parse slow_h;
    outcome fast, slow;
    memset(&slow_h, 0, sizeof(slow_h));
    read_response(fast_h, data, size, first, piece, head, limit, 0, &fast);
    read_response(&slow_h, data, size, first, piece, head, limit, 1, &slow);
    check_same(&fast, &slow);
    outcome_free(&fast);
    outcome_free(&slow);
}

/* The input on one parser: as asked, the same again (from the memo), as
 * the other kind of request (HEAD or not), then with one byte of it
 * changed (so the memo no longer matches). */
static void compare(const uint8_t *data, size_t size, size_t first, size_t piece, int head, int64_t limit) {
    ll_h1_parse h;
    memset(&h, 0, sizeof(h));
    compare_on(&h, data, size, first, piece, head, limit);
    compare_on(&h, data, size, first, piece, head, limit);
    compare_on(&h, data, size, first, piece, !head, limit);
    if (size == 0) return;
    uint8_t *changed = malloc(size);
    memcpy(changed, data, size);
    changed[(piece * 7) % size] ^= 0x20; /* a letter's case, or a space, or a control byte */
    compare_on(&h, changed, size, first, piece, !head, limit);
    free(changed);
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
