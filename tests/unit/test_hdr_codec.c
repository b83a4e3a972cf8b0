/* test_hdr_codec.c -- checks the HdrHistogram compressed V2 codec: round
 * trips slot for slot (empty, one value, bucket 0, the whole range with
 * clamped values and 9-byte counts, other parameters), a vector written by
 * Java's HdrHistogram 2.1.11, one refusal per class of bad input, every
 * prefix and random mutations of valid input, and subtract. */
/* links: ll_metrics */
#include "hdr_codec.h"
#include "histogram.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LOWEST 1
#define HIGHEST 3600000000LL
#define SIG 3

/* Java: new Histogram(1, 3600000000L, 3) recording 1, 1000, 1000, 123456 and
 * 3600000000, encodeIntoCompressedByteBuffer, java.util.Base64. Java reads
 * it back with getMaxValue() 3600809983 and getMean() 719977379.4. */
static const char java_vector[] = "HISTFAAAACt4nJNpmSzMwMDAwwABzFCaEURcm7yEwf4DVITpND/L/jymy28YmQCf4Ahk";

static int64_t slot_lowest(const ll_histogram *h, int32_t i, int64_t *width) {
    int bucket = (i >> h->sub_bucket_half_count_magnitude) - 1;
    int64_t sub = (i & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (bucket < 0) {
        sub -= h->sub_bucket_half_count;
        bucket = 0;
    }
    *width = (int64_t)1 << (bucket + h->unit_magnitude);
    return sub << (bucket + h->unit_magnitude);
}

static int same_counts(const ll_histogram *a, const ll_histogram *b) {
    if (a->lowest != b->lowest || a->highest != b->highest || a->sig_digits != b->sig_digits ||
        a->counts_len != b->counts_len || a->total_count != b->total_count)
        return 0;
    return memcmp(a->counts, b->counts, (size_t)a->counts_len * sizeof(int64_t)) == 0;
}

/* min/max/sum as hdr_codec.h documents them for a decoded histogram */
static int stats_from_buckets(const ll_histogram *h) {
    int64_t min = INT64_MAX, max = 0;
    double sum = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        if (!h->counts[i]) continue;
        int64_t w, lo = slot_lowest(h, i, &w);
        if (min == INT64_MAX) min = lo;
        max = lo + (w - 1);
        sum += (double)h->counts[i] * (double)(lo + w / 2);
    }
    return h->min == min && h->max == max && h->sum == sum;
}

/* Encodes, decodes from an unterminated copy, compares; the decoded
 * histogram (caller frees) or NULL. */
static ll_histogram *roundtrip(const ll_histogram *h, const char *name) {
    char *s = ll_hdr_codec_encode(h), err[256] = "";
    if (!tu_check(s != NULL && strncmp(s, "HISTF", 5) == 0, "%s: encodes to HISTF...", name)) {
        free(s);
        return NULL;
    }
    size_t len = strlen(s);
    char *copy = malloc(len); /* no NUL: the decoder must stay within len */
    memcpy(copy, s, len);
    ll_histogram *d = ll_hdr_codec_decode(copy, len, NULL, err, sizeof(err));
    tu_check(d != NULL, "%s: decodes (%zu base64 chars) %s", name, len, err);
    if (d) {
        tu_check(same_counts(h, d), "%s: same parameters and counts slot by slot (total %lld)", name,
                 (long long)d->total_count);
        tu_check(stats_from_buckets(d), "%s: min/max/sum from the buckets", name);
        char *again = ll_hdr_codec_encode(d);
        tu_check(again && strcmp(again, s) == 0, "%s: re-encoding gives the same text", name);
        free(again);
    }
    free(copy);
    free(s);
    return d;
}

static void test_empty_and_one(void) {
    ll_histogram *h = ll_histogram_new(LOWEST, HIGHEST, SIG);
    ll_histogram *d = roundtrip(h, "empty");
    if (d) tu_check(d->total_count == 0 && d->min == INT64_MAX && d->max == 0 && d->sum == 0,
                    "empty: total 0, min INT64_MAX, max 0, sum 0");
    ll_histogram_free(d);

    ll_histogram_record(h, 123457);
    d = roundtrip(h, "one value");
    if (d) tu_check(d->total_count == 1 && d->min <= 123457 && d->max >= 123457 && d->max - d->min < 128,
                    "one value: min %lld <= 123457 <= max %lld", (long long)d->min, (long long)d->max);
    ll_histogram_free(d);

    ll_histogram_reset(h);
    for (int64_t v = 0; v < h->sub_bucket_count; v++) ll_histogram_record_n(h, v, v + 1);
    d = roundtrip(h, "bucket 0 (every value 0..2047)");
    if (d) tu_check(d->min == 0 && d->max == h->sub_bucket_count - 1, "bucket 0: min 0, max %lld",
                    (long long)d->max);
    ll_histogram_free(d);
    ll_histogram_free(h);
}

static void test_whole_range(void) {
    ll_histogram *h = ll_histogram_new(LOWEST, HIGHEST, SIG);
    for (int i = 0; i < 200000; i++) {
        double e = (double)(tu_rand() >> 11) / 9007199254740992.0 * log((double)HIGHEST);
        int64_t v = (int64_t)exp(e);
        int64_t n = tu_rand() % 10 == 0 ? 1 + (int64_t)(tu_rand() % (1u << 30)) : 1;
        ll_histogram_record_n(h, v, n);
    }
    ll_histogram_record(h, 0);
    ll_histogram_record(h, HIGHEST);
    ll_histogram_record(h, HIGHEST + 1); /* clamped */
    ll_histogram_record(h, INT64_MAX);   /* clamped */
    ll_histogram_record_n(h, 7, (int64_t)1 << 62); /* zigzag 2^63: a 9-byte varint */
    ll_histogram *d = roundtrip(h, "whole range, clamped values, 2^62 count");
    if (d) tu_check(d->max >= HIGHEST && d->min == 0, "whole range: min 0, max %lld >= highest", (long long)d->max);
    ll_histogram_free(d);
    ll_histogram_free(h);

    static const struct { int64_t lo, hi; int sig; } params[] = {
        {1000, 1000000000000LL, 2}, {1, INT64_MAX, 1}, {7, 100000, 5}, {1, 2, 1}};
    for (size_t p = 0; p < sizeof(params) / sizeof(params[0]); p++) {
        char name[96];
        snprintf(name, sizeof(name), "lowest %lld highest %lld sig %d", (long long)params[p].lo,
                 (long long)params[p].hi, params[p].sig);
        h = ll_histogram_new(params[p].lo, params[p].hi, params[p].sig);
        for (int i = 0; i < 20000; i++) ll_histogram_record(h, (int64_t)(tu_rand() >> (tu_rand() % 64)));
        ll_histogram_record(h, params[p].hi);
        ll_histogram_free(roundtrip(h, name));
        ll_histogram_free(h);
    }
}

static void test_java_vector(void) {
    char err[256] = "";
    ll_histogram *d = ll_hdr_codec_decode(java_vector, strlen(java_vector), NULL, err, sizeof(err));
    if (!tu_check(d != NULL, "java vector: decodes %s", err)) return;
    ll_histogram *want = ll_histogram_new(LOWEST, HIGHEST, SIG);
    int64_t values[] = {1, 1000, 1000, 123456, 3600000000LL};
    for (int i = 0; i < 5; i++) ll_histogram_record(want, values[i]);
    tu_check(same_counts(d, want), "java vector: counts of 1, 1000 x2, 123456, 3600000000 slot by slot");
    tu_check(d->min == 1 && d->max == 3600809983LL, "java vector: min 1, max %lld (Java: 3600809983)",
             (long long)d->max);
    tu_check(fabs(ll_histogram_mean(d) - 719977379.4) < 1e-6, "java vector: mean %.3f (Java: 719977379.400)",
             ll_histogram_mean(d));
    char *ours = ll_hdr_codec_encode(want);
    printf("info java vector: our encoding is %s Java's\n", strcmp(ours, java_vector) ? "not byte-identical to"
                                                                                     : "byte-identical to");
    free(ours);
    ll_histogram_free(want);
    ll_histogram_free(d);
}

/* -- crafted inputs -- */

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static size_t varint(uint8_t *p, int64_t v) { /* zigzag LEB128, short values only */
    uint64_t z = v < 0 ? 2 * (uint64_t)(-v) - 1 : 2 * (uint64_t)v;
    size_t n = 0;
    for (; z >= 0x80; z >>= 7) p[n++] = (uint8_t)(z | 0x80);
    p[n++] = (uint8_t)z;
    return n;
}

static char *b64(const uint8_t *p, size_t n) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(n / 3 * 4 + 5), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *o++ = a[v >> 18];
        *o++ = a[(v >> 12) & 63];
        *o++ = i + 1 < n ? a[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? a[v & 63] : '=';
    }
    *o = 0;
    return out;
}

typedef struct {
    uint32_t cookie;
    int64_t plen; /* REAL_PLEN: the length of the counts given */
    int32_t offset, sig;
    int64_t lo, hi;
    double ratio;
} header;

#define REAL_PLEN INT64_MAX
static const header good = {0x1c849313u, REAL_PLEN, 0, SIG, LOWEST, HIGHEST, 1.0};

/* 40-byte header + counts bytes in raw; returns its length */
static size_t raw_payload(uint8_t *raw, header hd, const uint8_t *counts, size_t n) {
    double r = hd.ratio;
    uint64_t bits;
    memcpy(&bits, &r, sizeof(bits));
    put32(raw, hd.cookie);
    put32(raw + 4, (uint32_t)(hd.plen == REAL_PLEN ? (int64_t)n : hd.plen));
    put32(raw + 8, (uint32_t)hd.offset);
    put32(raw + 12, (uint32_t)hd.sig);
    put64(raw + 16, (uint64_t)hd.lo);
    put64(raw + 24, (uint64_t)hd.hi);
    put64(raw + 32, bits);
    memcpy(raw + 40, counts, n);
    return 40 + n;
}

/* base64 of cookie, length (+len_delta), zlib(raw), extra bytes */
static char *wrap(uint32_t cookie, const uint8_t *raw, size_t n, int len_delta, size_t extra) {
    uLongf zlen = compressBound(n);
    uint8_t *z = malloc(8 + zlen + extra);
    compress2(z + 8, &zlen, raw, n, Z_DEFAULT_COMPRESSION);
    memset(z + 8 + zlen, 0, extra);
    put32(z, cookie);
    put32(z + 4, (uint32_t)((int64_t)zlen + (int64_t)extra + len_delta));
    char *s = b64(z, 8 + zlen + extra);
    free(z);
    return s;
}

static char *craft(header hd, const uint8_t *counts, size_t n) {
    uint8_t raw[4096];
    return wrap(0x1c849314u, raw, raw_payload(raw, hd, counts, n), 0, 0);
}

static void refuse(char *s, const char *name, const char *want) {
    char err[256] = "";
    ll_histogram *d = ll_hdr_codec_decode(s, strlen(s), NULL, err, sizeof(err));
    tu_check(d == NULL && strstr(err, want) && !strchr(err, '\n'), "refuses %s: %s", name, err);
    ll_histogram_free(d);
    free(s);
}

static void test_refusals(void) {
    static const uint8_t one[] = {2}; /* a count of 1 in slot 0 */
    char *ok = craft(good, one, 1), err[256] = "";
    ll_histogram *d = ll_hdr_codec_decode(ok, strlen(ok), NULL, err, sizeof(err));
    tu_check(d && d->total_count == 1 && d->counts[0] == 1, "crafted: a count of 1 in slot 0 decodes %s", err);
    ll_histogram_free(d);

    refuse(strdup(""), "empty text", "base64 length 0");
    refuse(strdup("HISTF"), "length 5", "multiple of 4");
    char *s = strdup(ok);
    s[9] = '*';
    refuse(s, "a non-base64 character", "invalid base64 character at offset 9");
    s = strdup(ok);
    s[12] = ' ';
    refuse(s, "a space", "invalid base64");
    refuse(strdup("HISTAA==AAAA"), "'=' inside", "invalid base64");
    refuse(strdup("AB=="), "bits set under the padding", "stray bits");
    refuse(strdup("AAAA"), "3 bytes", "too short");
    free(ok);

    uint8_t raw[4096];
    size_t n = raw_payload(raw, good, one, 1);
    refuse(wrap(0x1c849382u, raw, n, 0, 0), "the V1 compressed cookie", "cookie 0x1c849382");
    refuse(b64(raw, n), "the uncompressed V2 cookie", "cookie 0x1c849313");
    refuse(wrap(0x1c849314u, raw, n, 1, 0), "a compressed length 1 too long", "compressed length");
    refuse(wrap(0x1c849314u, raw, n, -1, 0), "a compressed length 1 too short", "compressed length");
    refuse(wrap(0x1c849314u, raw, n, 0, 3), "bytes after the zlib stream", "bytes after the end");
    refuse(wrap(0x1c849314u, raw, 20, 0, 0), "a payload cut inside its header", "truncated in the header");
    uint8_t junk[32];
    for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)(0x5a ^ i * 37);
    put32(junk, 0x1c849314u);
    put32(junk + 4, sizeof(junk) - 8);
    refuse(b64(junk, sizeof(junk)), "data that is not zlib", "zlib: incorrect header check");

    /* a stream whose adler32 trailer is cut off */
    uLongf zlen = compressBound(n);
    uint8_t *z = malloc(8 + zlen);
    compress2(z + 8, &zlen, raw, n, 9);
    put32(z, 0x1c849314u);
    put32(z + 4, (uint32_t)zlen - 4);
    refuse(b64(z, 8 + zlen - 4), "a zlib stream cut short", "data truncated");
    free(z);

    header hd = good;
    hd.cookie = 0x1c849303u;
    refuse(craft(hd, one, 1), "a payload cookie without word size", "payload cookie 0x1c849303");
    hd = good;
    hd.offset = 5;
    refuse(craft(hd, one, 1), "a normalizing index offset", "normalizing index offset 5");
    hd = good;
    hd.ratio = 2.0;
    refuse(craft(hd, one, 1), "a conversion ratio of 2", "conversion ratio 2");
    hd.ratio = NAN;
    refuse(craft(hd, one, 1), "a conversion ratio NaN", "conversion ratio");
    hd = good;
    hd.sig = 0;
    refuse(craft(hd, one, 1), "0 significant digits", "bad parameters");
    hd.sig = 6;
    refuse(craft(hd, one, 1), "6 significant digits", "significant digits=6");
    hd = good;
    hd.lo = 0;
    refuse(craft(hd, one, 1), "lowest 0", "lowest=0");
    hd.lo = -5;
    refuse(craft(hd, one, 1), "lowest -5", "lowest=-5");
    hd = good;
    hd.hi = 1;
    refuse(craft(hd, one, 1), "highest < 2 * lowest", "highest=1");
    hd = good;
    hd.plen = -1 - 0x7fffffff;
    refuse(craft(hd, one, 1), "a negative counts length", "counts length -2147483648");
    hd.plen = 0x7fffffff;
    refuse(craft(hd, one, 1), "a counts length beyond 9 bytes per slot", "out of range");
    hd.plen = 5;
    refuse(craft(hd, one, 1), "a counts length longer than the data", "data shorter than the counts length");
    static const uint8_t three[] = {2, 4, 6};
    hd.plen = 2;
    refuse(craft(hd, three, 3), "a counts length shorter than the data", "data longer than the counts length");

    static const uint8_t cut[] = {2, 0x80};
    refuse(craft(good, cut, 2), "a varint cut off", "count truncated at payload byte 1");
    static const uint8_t nine[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    refuse(craft(good, nine, 9), "a 9-byte run of 2^63 empty slots", "run past");

    ll_histogram *shape = ll_histogram_new(LOWEST, HIGHEST, SIG);
    uint8_t buf[32];
    size_t k = varint(buf, -(int64_t)shape->counts_len);
    buf[k++] = 2;
    refuse(craft(good, buf, k), "a count after every slot", "more counts than its");
    k = varint(buf, 2);
    k += varint(buf + k, -(int64_t)shape->counts_len);
    refuse(craft(good, buf, k), "empty slots past the last", "run past");
    ll_histogram_free(shape);

    /* INT64_MAX then 1: zigzag 2^64-2 is fe ff ff ff ff ff ff ff ff */
    static const uint8_t big[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2};
    refuse(craft(good, big, 10), "a total count beyond INT64_MAX", "total count overflows");
    d = NULL;
    s = craft(good, big, 9);
    d = ll_hdr_codec_decode(s, strlen(s), NULL, err, sizeof(err));
    tu_check(d && d->counts[0] == INT64_MAX, "a count of INT64_MAX alone decodes %s", err);
    ll_histogram_free(d);
    free(s);
}

/* Every prefix of a valid text, and random mutations of the text and of the
 * uncompressed payload: refused with a message or decoded, never a crash
 * (the ASan build reads outside nothing). */
static void test_damage(void) {
    ll_histogram *h = ll_histogram_new(LOWEST, HIGHEST, SIG);
    for (int i = 0; i < 3000; i++) ll_histogram_record(h, (int64_t)(tu_rand() % 5000000));
    char *s = ll_hdr_codec_encode(h), err[256];
    size_t len = strlen(s);
    int bad = 0;
    for (size_t n = 0; n < len; n++) {
        err[0] = 0;
        ll_histogram *d = ll_hdr_codec_decode(s, n, NULL, err, sizeof(err));
        if (d || !err[0]) bad++;
        ll_histogram_free(d);
    }
    tu_check(bad == 0, "all %zu proper prefixes refused with a message (%d not)", len, bad);

    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    int decoded = 0;
    bad = 0;
    for (int i = 0; i < 3000; i++) {
        char *m = strdup(s);
        for (int j = 1 + (int)(tu_rand() % 3); j > 0; j--) m[tu_rand() % len] = alphabet[tu_rand() % 65];
        err[0] = 0;
        ll_histogram *d = ll_hdr_codec_decode(m, len, NULL, err, sizeof(err));
        if (!d && !err[0]) bad++;
        decoded += d != NULL;
        ll_histogram_free(d);
        free(m);
    }
    tu_check(bad == 0, "3000 mutated texts: %d decoded, the rest refused with a message", decoded);

    /* mutations of the payload under a valid zlib stream reach the parser */
    uint8_t raw[1 << 16];
    uint8_t counts[1 << 15];
    size_t n = 0;
    for (int i = 0; i < 400; i++) counts[n++] = (uint8_t)(tu_rand() % 256) & 0x7e; /* small counts, runs */
    size_t rawlen = raw_payload(raw, good, counts, n);
    decoded = 0;
    bad = 0;
    for (int i = 0; i < 3000; i++) {
        uint8_t m[sizeof(raw)];
        memcpy(m, raw, rawlen);
        for (int j = 1 + (int)(tu_rand() % 4); j > 0; j--) m[tu_rand() % rawlen] ^= (uint8_t)(1u << (tu_rand() % 8));
        if (tu_rand() % 4 == 0) m[tu_rand() % rawlen] = 0xff; /* long varints */
        char *t = wrap(0x1c849314u, m, tu_rand() % 8 == 0 ? rawlen - 1 - tu_rand() % 50 : rawlen, 0, 0);
        err[0] = 0;
        ll_histogram *d = ll_hdr_codec_decode(t, strlen(t), NULL, err, sizeof(err));
        if (!d && !err[0]) bad++;
        if (d) {
            decoded++;
            int64_t total = 0;
            for (int32_t k = 0; k < d->counts_len; k++) total += d->counts[k];
            if (total != d->total_count) bad++;
        }
        ll_histogram_free(d);
        free(t);
    }
    tu_check(bad == 0, "3000 mutated payloads: %d decoded with consistent totals, the rest refused", decoded);
    free(s);
    ll_histogram_free(h);
}

static void test_subtract(void) {
    ll_histogram *a = ll_histogram_new(LOWEST, HIGHEST, SIG), *b = ll_histogram_new(LOWEST, HIGHEST, SIG);
    ll_histogram *want = ll_histogram_new(LOWEST, HIGHEST, SIG), *dst = ll_histogram_new(LOWEST, HIGHEST, SIG);
    for (int i = 0; i < 50000; i++) {
        int64_t v = (int64_t)(tu_rand() % 100000000);
        ll_histogram_record(a, v);
        ll_histogram_record(b, v);
    }
    for (int i = 0; i < 20000; i++) {
        int64_t v = 5000 + (int64_t)(tu_rand() % 3000000);
        ll_histogram_record(a, v);
        ll_histogram_record(want, v);
    }
    tu_check(ll_hdr_codec_subtract(dst, a, b) == 0, "subtract: a later snapshot minus an earlier one");
    tu_check(same_counts(dst, want), "subtract: counts of the interval alone, total %lld", (long long)dst->total_count);
    int64_t mw, first = INT64_MAX, last = 0;
    for (int32_t i = 0; i < dst->counts_len; i++) {
        if (!dst->counts[i]) continue;
        int64_t l = slot_lowest(dst, i, &mw);
        if (first == INT64_MAX) first = l;
        last = l + mw - 1;
    }
    tu_check(dst->min == first && dst->max == last && dst->min <= want->min && dst->max >= want->max,
             "subtract: min %lld max %lld from the buckets (exact %lld..%lld)", (long long)dst->min,
             (long long)dst->max, (long long)want->min, (long long)want->max);
    tu_check(dst->sum == a->sum - b->sum, "subtract: sum is a.sum - b.sum");

    tu_check(ll_hdr_codec_subtract(a, a, b) == 0 && same_counts(a, want), "subtract: in place (dst == a)");
    tu_check(ll_hdr_codec_subtract(dst, a, a) == 0 && dst->total_count == 0 && dst->min == INT64_MAX &&
                 dst->max == 0 && dst->sum == 0,
             "subtract: a - a is empty (min INT64_MAX, max 0, sum 0)");

    ll_histogram_reset(dst);
    ll_histogram_record(dst, 42);
    ll_histogram_record(b, 99999999999LL); /* a slot of b above a's */
    tu_check(ll_hdr_codec_subtract(dst, a, b) == -1 && dst->total_count == 1 && dst->max == 42,
             "subtract: refuses a slot that would go negative, dst untouched");
    ll_histogram *other = ll_histogram_new(LOWEST, HIGHEST, 2);
    tu_check(ll_hdr_codec_subtract(dst, a, other) == -1, "subtract: refuses b with other parameters");
    tu_check(ll_hdr_codec_subtract(other, a, want) == -1, "subtract: refuses dst with other parameters");
    ll_histogram_free(other);
    ll_histogram_free(a);
    ll_histogram_free(b);
    ll_histogram_free(want);
    ll_histogram_free(dst);
}

/* With an expected layout, another one is refused before its counts are made. */
static void test_like(void) {
    ll_histogram *h = ll_histogram_new(1, 3600000000ll, 3), *like = ll_histogram_new(1, 3600000000ll, 3);
    ll_histogram *other = ll_histogram_new(1, 1000, 2);
    ll_histogram_record(h, 1234);
    char *s = ll_hdr_codec_encode(h), err[256] = "";
    ll_histogram *d = ll_hdr_codec_decode(s, strlen(s), like, err, sizeof(err));
    tu_check(d && d->total_count == 1, "like: the same layout decodes %s", err);
    ll_histogram_free(d);
    d = ll_hdr_codec_decode(s, strlen(s), other, err, sizeof(err));
    tu_check(!d && strstr(err, "expected 1, 1000, 2"), "like: another layout is refused: %s", err);
    ll_histogram_free(d);
    free(s);
    ll_histogram_free(h);
    ll_histogram_free(like);
    ll_histogram_free(other);
}

int main(void) {
    test_like();
    test_empty_and_one();
    test_whole_range();
    test_java_vector();
    test_refusals();
    test_damage();
    test_subtract();
    return tu_summary();
}
