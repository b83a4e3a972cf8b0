/* fuzz_h1.c -- libFuzzer target for the native transport's HTTP/1.1
 * response reader (src/core/http/h1_parse.c on http-parser, with the
 * chunked decoder and the Content-Encoding decoders of body_decode.c):
 * what a misbehaving server controls. The first byte picks the request
 * kind (HEAD or not), the body limit and how the rest is cut into reads;
 * the rest is the server's bytes, then its close. Checks that the reader
 * ends at most once, within its limits, with a well-formed header block,
 * and never reads past what it was given. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h1_parse.h"
#include "fuzz_check.h"

static const int64_t LIMITS[4] = {0, 1, 64, 1 << 20};

static void check_done(const ll_h1_parse *h, const ll_buf *hdrs, const ll_buf *body) {
    CHECK(h->status >= 100 && h->status <= 999);
    CHECK(hdrs->len >= 4 && memcmp(hdrs->p, "HTTP/", 5) == 0);
    CHECK(memcmp(hdrs->p + hdrs->len - 4, "\r\n\r\n", 4) == 0);
    CHECK((int64_t)body->len <= h->limit);
    CHECK(!h->head || body->len == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int head = data[0] & 1;
    int64_t limit = LIMITS[(data[0] >> 1) & 3];
    size_t piece = (size_t)(data[0] >> 3) + 1; /* 1..32 bytes per read */
    data++;
    size--;
    ll_buf hdrs = {0}, body = {0};
    ll_h1_parse h;
    memset(&h, 0, sizeof(h));
    ll_h1_parse_start(&h, &hdrs, &body, limit, head);
    int rc = LL_H1_MORE;
    for (size_t at = 0; rc == LL_H1_MORE && at < size; at += piece) {
        size_t n = size - at < piece ? size - at : piece, used = 0;
        char *copy = malloc(n); /* exactly n bytes: ASan sees any read past them */
        memcpy(copy, data + at, n);
        rc = ll_h1_parse_feed(&h, copy, n, &used);
        free(copy);
        CHECK(rc != LL_H1_DONE || used <= n);
        CHECK(rc != LL_H1_ERROR || h.err);
    }
    if (rc == LL_H1_MORE) {
        size_t used = 0;
        rc = ll_h1_parse_feed(&h, "", 0, &used); /* the server closes */
        CHECK(rc != LL_H1_MORE);
    }
    if (rc == LL_H1_DONE) check_done(&h, &hdrs, &body);
    ll_h1_parse_reset(&h);
    ll_buf_free(&hdrs);
    ll_buf_free(&body);
    return 0;
}
