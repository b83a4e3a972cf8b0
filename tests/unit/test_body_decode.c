/* test_body_decode.c -- response body decoding (body_decode.c): the
 * Content-Encoding values, a round trip of each kind through the request
 * side's encoders (body_compress.c) fed whole, one byte at a time and in
 * random pieces; raw deflate, gzip members and zstd frames one after
 * another, and trailing bytes (made with zlib and zstd directly); the size
 * limit; corrupt, truncated and empty bodies. */
/* links: ll_http */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "body.h"
#include "body_compress.h"
#include "body_decode.h"
#include "buf.h"
#include "test_util.h"

static const char *const kind_names[] = {"identity", "gzip", "deflate", "br", "zstd"};

/* The request side's encoding of n bytes at src by kind, appended to enc. */
static int encode(int kind, const char *src, size_t n, ll_buf *enc) {
    static const int algos[] = {LL_COMPRESS_NONE, LL_COMPRESS_GZIP, LL_COMPRESS_DEFLATE, LL_COMPRESS_BR,
                                LL_COMPRESS_ZSTD};
    ll_body b = {.kind = LL_BODY_NONE, .fd = -1};
    char err[256] = "";
    int rc = ll_body_set_memory(&b, src, n);
    if (rc == 0) rc = ll_body_compress(&b, algos[kind], err, sizeof(err));
    if (rc == 0) rc = ll_buf_append(enc, b.mem, (size_t)b.len);
    if (rc != 0) printf("#    encoding %zu bytes with %s failed: %s\n", n, kind_names[kind], err);
    ll_body_clear(&b);
    return rc;
}

/* zlib's deflate of n bytes at src (window_bits 31: gzip, 15: zlib, -15:
 * raw deflate), appended to enc. */
static int zlib_encode(const char *src, size_t n, int window_bits, ll_buf *enc) {
    z_stream zs = {0};
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t cap = deflateBound(&zs, (uLong)n);
    char *buf = malloc(cap);
    zs.next_in = (Bytef *)src;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)buf;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH) == Z_STREAM_END ? ll_buf_append(enc, buf, zs.total_out) : -1;
    deflateEnd(&zs);
    free(buf);
    return rc;
}

/* A zstd frame of n bytes at src (with its optional checksum when
 * checksum), appended to enc. */
static int zstd_encode(const char *src, size_t n, int checksum, ll_buf *enc) {
    size_t cap = ZSTD_compressBound(n);
    char *buf = malloc(cap);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum);
    size_t len = ZSTD_compress2(cctx, buf, cap, src, n);
    int rc = ZSTD_isError(len) ? -1 : ll_buf_append(enc, buf, len);
    ZSTD_freeCCtx(cctx);
    free(buf);
    return rc;
}

/* What decoding a body gave. */
typedef struct {
    ll_buf out;
    int feed_rc, finish_rc; /* finish_rc: only when feed_rc is 0 */
    const char *err;
} decoded;

/* Decodes n bytes at p as kind, fed in pieces of step bytes (0: all at
 * once, -1: random sizes up to 5000), with the output limited to limit. */
static decoded decode(int kind, const char *p, size_t n, long step, int64_t limit) {
    decoded r = {.out = {0}, .feed_rc = 0, .finish_rc = -1, .err = ""};
    ll_body_decoder *d = ll_body_decoder_new(kind);
    if (!d) {
        r.feed_rc = -3;
        return r;
    }
    size_t pos = 0;
    while (pos < n && r.feed_rc == 0) {
        size_t len = step == 0 ? n : step < 0 ? 1 + tu_rand() % 5000 : (size_t)step;
        if (len > n - pos) len = n - pos;
        r.feed_rc = ll_body_decoder_feed(d, p + pos, len, &r.out, limit, &r.err);
        pos += len;
    }
    if (r.feed_rc == 0) r.finish_rc = ll_body_decoder_finish(d, &r.err);
    ll_body_decoder_free(d);
    return r;
}

/* r must be a clean decoding to the n bytes at want. */
static void expect(decoded *r, const char *want, size_t n, const char *what) {
    tu_check(r->feed_rc == 0 && r->finish_rc == 0, "%s: decodes (feed %d, finish %d: %s)", what, r->feed_rc,
             r->finish_rc, r->feed_rc || r->finish_rc ? r->err : "ok");
    tu_check(r->out.len == n && (n == 0 || memcmp(r->out.p, want, n) == 0), "%s: to the %zu bytes (got %zu)", what,
             n, r->out.len);
    ll_buf_free(&r->out);
}

static void test_kind_of(void) {
    struct {
        const char *value;
        int kind;
    } cases[] = {
        {"gzip", LL_DECODE_GZIP},       {" GZip ", LL_DECODE_GZIP},         {"x-gzip", LL_DECODE_GZIP},
        {"\tX-GZIP\t", LL_DECODE_GZIP}, {"deflate", LL_DECODE_DEFLATE},     {"Deflate", LL_DECODE_DEFLATE},
        {"br", LL_DECODE_BR},           {"BR ", LL_DECODE_BR},              {"zstd", LL_DECODE_ZSTD},
        {"identity", LL_DECODE_IDENTITY}, {"", LL_DECODE_IDENTITY},         {" \t ", LL_DECODE_IDENTITY},
        {"gzip, br", -1},               {"gzip,gzip", -1},                  {"compress", -1},
        {"gz", -1},                     {"gzipp", -1},                      {"x-deflate", -1},
        {"g zip", -1},                  {"br;q=1", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = ll_decode_kind_of(cases[i].value, strlen(cases[i].value));
        tu_check(got == cases[i].kind, "kind_of \"%s\": %d (got %d)", cases[i].value, cases[i].kind, got);
    }
    tu_check(ll_decode_kind_of("gzip, br", 4) == LL_DECODE_GZIP && ll_decode_kind_of("brotli", 2) == LL_DECODE_BR,
             "kind_of reads len bytes only (no NUL needed)");
    tu_check(ll_decode_kind_of(NULL, 0) == LL_DECODE_IDENTITY, "kind_of (NULL, 0): identity");
    tu_check(ll_body_decoder_new(LL_DECODE_IDENTITY) == NULL && ll_body_decoder_new(42) == NULL &&
                 ll_body_decoder_new(-1) == NULL,
             "no decoder for identity or an unknown kind");
    ll_body_decoder_free(NULL);
}

/* n bytes at src encoded by kind, then decoded whole, byte by byte and in
 * random pieces. */
static void round_trip(int kind, const char *src, size_t n, const char *what) {
    char name[160];
    ll_buf enc = {0};
    if (!tu_check(encode(kind, src, n, &enc) == 0, "%s %s: encoded (%zu bytes)", kind_names[kind], what, enc.len))
        return;
    const long steps[] = {0, 1, -1};
    const char *how[] = {"whole", "one byte at a time", "in random pieces"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "%s %s (%zu bytes encoded), fed %s", kind_names[kind], what, enc.len, how[i]);
        decoded r = decode(kind, enc.p, enc.len, steps[i], INT64_MAX);
        expect(&r, src, n, name);
    }
    ll_buf_free(&enc);
}

/* deflate without the zlib wrapper (RFC 1951), as some servers send it */
static void test_raw_deflate(const char *src, size_t n) {
    ll_buf enc = {0};
    tu_check(zlib_encode(src, n, -15, &enc) == 0, "raw deflate: encoded (%zu bytes)", enc.len);
    decoded r = decode(LL_DECODE_DEFLATE, enc.p, enc.len, 0, INT64_MAX);
    expect(&r, src, n, "raw deflate, fed whole");
    r = decode(LL_DECODE_DEFLATE, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, src, n, "raw deflate, fed one byte at a time");
    ll_buf_free(&enc);

    zlib_encode("", 0, -15, &enc); /* 03 00 */
    r = decode(LL_DECODE_DEFLATE, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, "", 0, "raw deflate of nothing (2 bytes), fed one byte at a time");
    ll_buf_free(&enc);

    zlib_encode("raw", 3, 15, &enc);
    r = decode(LL_DECODE_DEFLATE, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, "raw", 3, "zlib-wrapped deflate made by zlib itself, fed one byte at a time");
    ll_buf_free(&enc);
}

/* Several gzip members (RFC 1952 2.2) or zstd frames, one after another,
 * all decode; other bytes after the stream are ignored. */
static void test_concatenated(const char *big, size_t big_n) {
    ll_buf enc = {0}, want = {0};
    zlib_encode("first member, ", 14, 31, &enc);
    zlib_encode(big, big_n, 31, &enc);
    zlib_encode("", 0, 31, &enc);
    zlib_encode("last member", 11, 31, &enc);
    ll_buf_append(&want, "first member, ", 14);
    ll_buf_append(&want, big, big_n);
    ll_buf_append(&want, "last member", 11);
    for (long step = 0; step <= 1; step++) {
        decoded r = decode(LL_DECODE_GZIP, enc.p, enc.len, step, INT64_MAX);
        expect(&r, want.p, want.len, step ? "4 gzip members, fed one byte at a time" : "4 gzip members, fed whole");
    }
    decoded r = decode(LL_DECODE_GZIP, enc.p, enc.len, -1, INT64_MAX);
    expect(&r, want.p, want.len, "4 gzip members, fed in random pieces");
    ll_buf_free(&enc);
    ll_buf_free(&want);

    const char *trails[] = {"\0\0\0\0", "garbage after the member", "\x1f", "\x1f\x8c more", "\n"};
    const size_t trail_n[] = {4, 24, 1, 7, 1};
    for (int i = 0; i < 5; i++) {
        zlib_encode("one member", 10, 31, &enc);
        ll_buf_append(&enc, trails[i], trail_n[i]);
        for (long step = 0; step <= 1; step++) {
            char name[96];
            snprintf(name, sizeof(name), "gzip and %zu trailing bytes (%d), fed %s", trail_n[i], i,
                     step ? "one byte at a time" : "whole");
            r = decode(LL_DECODE_GZIP, enc.p, enc.len, step, INT64_MAX);
            expect(&r, "one member", 10, name);
        }
        ll_buf_free(&enc);
    }

    zlib_encode("zlib", 4, 15, &enc);
    ll_buf_append(&enc, "trailing", 8);
    r = decode(LL_DECODE_DEFLATE, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, "zlib", 4, "deflate and trailing bytes");
    ll_buf_free(&enc);
    encode(LL_DECODE_BR, "brotli", 6, &enc);
    ll_buf_append(&enc, "trailing", 8);
    r = decode(LL_DECODE_BR, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, "brotli", 6, "br and trailing bytes");
    ll_buf_free(&enc);

    zstd_encode("frame one, ", 11, 0, &enc);
    ll_buf_append(&enc, "\x50\x2a\x4d\x18\x03\x00\x00\x00" "abc", 11); /* a skippable frame */
    zstd_encode(big, big_n, 1, &enc);
    ll_buf_append(&want, "frame one, ", 11);
    ll_buf_append(&want, big, big_n);
    for (long step = 0; step <= 1; step++) {
        r = decode(LL_DECODE_ZSTD, enc.p, enc.len, step, INT64_MAX);
        expect(&r, want.p, want.len, step ? "2 zstd frames and a skippable one, fed one byte at a time"
                                          : "2 zstd frames and a skippable one, fed whole");
    }
    ll_buf_append(&enc, "\x28\xb5 not a frame", 13);
    r = decode(LL_DECODE_ZSTD, enc.p, enc.len, 1, INT64_MAX);
    expect(&r, want.p, want.len, "zstd and trailing bytes");
    ll_buf_free(&enc);
    ll_buf_free(&want);
}

/* The output stops at limit: out holds exactly limit bytes (the start of
 * the body), and the decoder stays stopped. */
static void test_limit(int kind, const char *src, size_t n) {
    ll_buf enc = {0};
    encode(kind, src, n, &enc);
    const int64_t limits[] = {0, 1, 1000, 16 * 1024, 16 * 1024 + 1, (int64_t)n - 1};
    for (int i = 0; i < 6; i++) {
        for (long step = 0; step <= 1; step++) {
            decoded r = decode(kind, enc.p, enc.len, step, limits[i]);
            tu_check(r.feed_rc == -2 && r.out.len == (size_t)limits[i] &&
                         (limits[i] == 0 || memcmp(r.out.p, src, (size_t)limits[i]) == 0),
                     "%s, limit %lld, fed %s: -2 with the first %lld bytes (got %d, %zu bytes)", kind_names[kind],
                     (long long)limits[i], step ? "one byte at a time" : "whole", (long long)limits[i], r.feed_rc,
                     r.out.len);
            ll_buf_free(&r.out);
        }
    }
    char name[64];
    snprintf(name, sizeof(name), "%s, a limit of exactly the body's size", kind_names[kind]);
    decoded r = decode(kind, enc.p, enc.len, 0, (int64_t)n);
    expect(&r, src, n, name);

    /* after -2: the same again, nothing more decoded, finish fails */
    ll_body_decoder *d = ll_body_decoder_new(kind);
    ll_buf out = {0};
    const char *err = "";
    int rc1 = ll_body_decoder_feed(d, enc.p, enc.len / 2, &out, 10, &err);
    int rc2 = ll_body_decoder_feed(d, enc.p + enc.len / 2, enc.len - enc.len / 2, &out, INT64_MAX, &err);
    int rc3 = ll_body_decoder_finish(d, &err);
    tu_check(rc1 == -2 && rc2 == -2 && rc3 == -1 && out.len == 10 && strstr(err, "limit") != NULL,
             "%s: after -2, feed gives -2 again and finish -1 (%d %d %d, %zu bytes: %s)", kind_names[kind], rc1, rc2,
             rc3, out.len, err);
    ll_body_decoder_free(d);
    ll_buf_free(&out);
    ll_buf_free(&enc);
}

/* A message naming the encoding, e.g. "the gzip-encoded response body is corrupt". */
static int says(const char *err, int kind, const char *what) {
    char want[96];
    snprintf(want, sizeof(want), "the %s-encoded response body is %s", kind_names[kind], what);
    return strcmp(err, want) == 0;
}

static void test_corrupt(int kind, const char *src, size_t n) {
    const char *junk = "this is not compressed at all, only some text";
    for (long step = 0; step <= 1; step++) {
        decoded r = decode(kind, junk, strlen(junk), step, INT64_MAX);
        tu_check(r.feed_rc == -1 && says(r.err, kind, "corrupt"), "%s: plain text fed %s is corrupt (%d: %s)",
                 kind_names[kind], step ? "one byte at a time" : "whole", r.feed_rc, r.err);
        ll_buf_free(&r.out);
    }
    ll_buf enc = {0};
    if (kind == LL_DECODE_ZSTD) zstd_encode(src, n, 1, &enc); /* the request side's zstd has no checksum */
    else encode(kind, src, n, &enc);
    if (kind != LL_DECODE_BR) { /* brotli has no checksum: a changed byte may decode to other bytes */
        enc.p[enc.len / 2] ^= 0x55;
        decoded r = decode(kind, enc.p, enc.len, 0, INT64_MAX);
        tu_check(r.feed_rc == -1 && says(r.err, kind, "corrupt"), "%s: a changed byte is corrupt (%d: %s)",
                 kind_names[kind], r.feed_rc, r.err);
        ll_buf_free(&r.out);
        enc.p[enc.len / 2] ^= 0x55;
    }
    /* after -1: the same again */
    ll_body_decoder *d = ll_body_decoder_new(kind);
    ll_buf out = {0};
    const char *err = "";
    int rc1 = ll_body_decoder_feed(d, "\xff\xff\xff\xff\xff\xff", 6, &out, INT64_MAX, &err);
    err = "";
    int rc2 = ll_body_decoder_feed(d, enc.p, enc.len, &out, INT64_MAX, &err);
    int rc2_msg = says(err, kind, "corrupt");
    err = "";
    int rc3 = ll_body_decoder_finish(d, &err);
    tu_check(rc1 == -1 && rc2 == -1 && rc2_msg && rc3 == -1 && says(err, kind, "corrupt") && out.len == 0,
             "%s: after -1, feed and finish give -1 again (%d %d %d: %s)", kind_names[kind], rc1, rc2, rc3, err);
    ll_body_decoder_free(d);
    ll_buf_free(&out);
    ll_buf_free(&enc);
}

static void test_truncated(int kind, const char *src, size_t n) {
    ll_buf enc = {0};
    encode(kind, src, n, &enc);
    const size_t cuts[] = {1, 4, enc.len / 2, enc.len - 1};
    for (int i = 0; i < 4; i++) {
        decoded r = decode(kind, enc.p, cuts[i], 0, INT64_MAX);
        tu_check(r.feed_rc == 0 && r.finish_rc == -1 && says(r.err, kind, "truncated") && r.out.len <= n,
                 "%s: the first %zu of %zu bytes are truncated (%d %d: %s, %zu bytes out)", kind_names[kind],
                 cuts[i], enc.len, r.feed_rc, r.finish_rc, r.err, r.out.len);
        ll_buf_free(&r.out);
    }
    ll_buf_free(&enc);

    char name[64];
    snprintf(name, sizeof(name), "%s: an empty body (no bytes at all)", kind_names[kind]);
    decoded r = decode(kind, "", 0, 0, INT64_MAX);
    expect(&r, "", 0, name);
    ll_body_decoder *d = ll_body_decoder_new(kind);
    ll_buf out = {0};
    const char *err = "";
    int rc1 = ll_body_decoder_feed(d, "", 0, &out, INT64_MAX, &err);
    int rc2 = ll_body_decoder_finish(d, &err);
    tu_check(rc1 == 0 && rc2 == 0 && out.len == 0, "%s: feeding 0 bytes, then the end: an empty body",
             kind_names[kind]);
    ll_body_decoder_free(d);
}

int main(void) {
    test_kind_of();

    size_t big_n = 300 * 1024, flat_n = 2u << 20;
    char *big = malloc(big_n), *flat = malloc(flat_n);
    tu_rng_state = 7;
    for (size_t i = 0; i < big_n; i++) { /* text-like runs with noise: both compressible and not */
        big[i] = (i / 4096) % 3 == 0 ? (char)tu_rand() : (char)('a' + (i * 7 + i / 100) % 26);
    }
    memset(flat, 'z', flat_n); /* a few bytes encoded, many 16 KiB pieces out */
    const char *small = "hello, hello, hello, decoded world";
    for (int k = LL_DECODE_GZIP; k <= LL_DECODE_ZSTD; k++) {
        round_trip(k, small, strlen(small), "a short text");
        round_trip(k, "", 0, "an empty text");
        round_trip(k, big, big_n, "300 KB of text and noise");
        round_trip(k, flat, flat_n, "2 MB of one letter");
    }
    test_raw_deflate(big, big_n);
    test_concatenated(big, big_n);
    for (int k = LL_DECODE_GZIP; k <= LL_DECODE_ZSTD; k++) {
        test_limit(k, big, big_n);
        test_corrupt(k, big, big_n);
        test_truncated(k, big, big_n);
    }
    free(big);
    free(flat);
    return tu_summary();
}
