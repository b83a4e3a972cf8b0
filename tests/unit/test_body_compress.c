/* test_body_compress.c -- request body compression (body_compress.c): the
 * algorithm names, a round trip of each algorithm (small, empty and 5 MB
 * bodies) through the matching decoder, and the bodies it refuses. gzip
 * and deflate decode with zlib's inflate and zstd with ZSTD_decompress
 * (both libraries come with ll_http); brotli's decoder is not linked into
 * the tests, so it is loaded with dlopen (libbrotlidec.so.1, installed
 * with the encoder), or else the `brotli -d` command decodes a temp file. */
/* links: ll_http */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "body.h"
#include "body_compress.h"
#include "test_util.h"

/* inflate of n bytes at p (windowBits 31: gzip, 15: zlib) into out. */
static int inflate_all(const char *p, size_t n, int window_bits, char *out, size_t cap, size_t *got) {
    z_stream zs = {0};
    if (inflateInit2(&zs, window_bits) != Z_OK) return -1;
    zs.next_in = (Bytef *)p;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    int rc = inflate(&zs, Z_FINISH);
    *got = zs.total_out;
    int ok = rc == Z_STREAM_END && zs.avail_in == 0;
    inflateEnd(&zs);
    return ok ? 0 : -1;
}

typedef int brotli_decompress_fn(size_t, const uint8_t *, size_t *, uint8_t *);

/* brotli -d of a temp file, when the library cannot be loaded */
static int brotli_cli(const char *p, size_t n, char *out, size_t cap, size_t *got) {
    char in_path[] = "/tmp/luaload-test-br-XXXXXX";
    int fd = mkstemp(in_path);
    if (fd < 0) return -1;
    int ok = write(fd, p, n) == (ssize_t)n;
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "brotli -d -c %s 2>/dev/null", in_path);
    FILE *f = ok ? popen(cmd, "r") : NULL;
    *got = f ? fread(out, 1, cap, f) : 0;
    int rc = f ? pclose(f) : -1;
    unlink(in_path);
    return rc == 0 ? 0 : -1;
}

static int brotli_decode(const char *p, size_t n, char *out, size_t cap, size_t *got) {
    static brotli_decompress_fn *fn;
    static int tried;
    if (!tried) {
        tried = 1;
        void *h = dlopen("libbrotlidec.so.1", RTLD_NOW);
        if (h) *(void **)&fn = dlsym(h, "BrotliDecoderDecompress");
        printf("#    brotli decodes with %s\n", fn ? "libbrotlidec (dlopen)" : "the brotli command");
    }
    if (!fn) return brotli_cli(p, n, out, cap, got);
    size_t len = cap;
    if (fn(n, (const uint8_t *)p, &len, (uint8_t *)out) != 1) return -1; /* BROTLI_DECODER_RESULT_SUCCESS */
    *got = len;
    return 0;
}

static int decode(int algo, const char *p, size_t n, char *out, size_t cap, size_t *got) {
    switch (algo) {
    case LL_COMPRESS_GZIP: return inflate_all(p, n, 31, out, cap, got);
    case LL_COMPRESS_DEFLATE: return inflate_all(p, n, 15, out, cap, got);
    case LL_COMPRESS_BR: return brotli_decode(p, n, out, cap, got);
    case LL_COMPRESS_ZSTD: {
        size_t r = ZSTD_decompress(out, cap, p, n);
        if (ZSTD_isError(r)) return -1;
        *got = r;
        return 0;
    }
    default: return -1;
    }
}

/* The format's own mark at the start of the encoding (brotli has none). */
static int has_magic(int algo, const unsigned char *p, size_t n) {
    switch (algo) {
    case LL_COMPRESS_GZIP: return n >= 18 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8;
    case LL_COMPRESS_DEFLATE: return n >= 6 && (p[0] & 0x0f) == 8 && (p[0] * 256 + p[1]) % 31 == 0;
    case LL_COMPRESS_ZSTD: return n >= 9 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
    default: return n >= 1;
    }
}

/* Compresses n bytes at src with algo and decodes them back. */
static void round_trip(int algo, const char *src, size_t n, const char *what) {
    const char *name = ll_compress_name(algo);
    ll_body b = {.kind = LL_BODY_NONE, .fd = -1};
    char err[256] = "";
    if (!tu_check(ll_body_set_memory(&b, src, n) == 0, "%s %s: a memory body", name, what)) return;
    int rc = ll_body_compress(&b, algo, err, sizeof(err));
    if (!tu_check(rc == 0 && b.kind == LL_BODY_MEMORY, "%s %s: compressed (%s)", name, what, rc == 0 ? "ok" : err)) {
        ll_body_clear(&b);
        return;
    }
    tu_check(b.mem[b.len] == 0, "%s %s: the compressed body is NUL-terminated after its length", name, what);
    tu_check(has_magic(algo, (const unsigned char *)b.mem, (size_t)b.len),
             "%s %s: starts as the format does (%llu bytes)", name, what, (unsigned long long)b.len);
    size_t cap = n + 64, got = 0;
    char *out = malloc(cap);
    rc = decode(algo, b.mem, (size_t)b.len, out, cap, &got);
    tu_check(rc == 0 && got == n && memcmp(out, src, n) == 0, "%s %s: decodes back to the %zu bytes (got %zu)", name,
             what, n, got);
    free(out);
    ll_body_clear(&b);
}

/* The fallback decoder works too, where the brotli command is installed. */
static void test_brotli_cli(void) {
    if (system("command -v brotli >/dev/null 2>&1") != 0) {
        printf("#    no brotli command: its fallback is not tried\n");
        return;
    }
    ll_body b = {.kind = LL_BODY_NONE, .fd = -1};
    char err[256] = "", out[64];
    size_t got = 0;
    ll_body_set_memory(&b, "brotli, brotli, brotli", 22);
    int rc = ll_body_compress(&b, LL_COMPRESS_BR, err, sizeof(err));
    rc = rc == 0 ? brotli_cli(b.mem, (size_t)b.len, out, sizeof(out), &got) : rc;
    tu_check(rc == 0 && got == 22 && memcmp(out, "brotli, brotli, brotli", 22) == 0, "br: `brotli -d` decodes it too");
    ll_body_clear(&b);
}

static void test_names(void) {
    tu_check(ll_compress_parse("gzip") == LL_COMPRESS_GZIP && ll_compress_parse("deflate") == LL_COMPRESS_DEFLATE &&
                 ll_compress_parse("br") == LL_COMPRESS_BR && ll_compress_parse("zstd") == LL_COMPRESS_ZSTD,
             "parse: gzip, deflate, br, zstd");
    tu_check(ll_compress_parse("GZip") == LL_COMPRESS_GZIP, "parse: names are case-insensitive (RFC 9110)");
    tu_check(ll_compress_parse("lz4") == -1 && ll_compress_parse("") == -1 && ll_compress_parse(NULL) == -1 &&
                 ll_compress_parse("gzip ") == -1 && ll_compress_parse("identity") == -1,
             "parse: anything else is -1");
    int ok = 1;
    for (int a = LL_COMPRESS_GZIP; a <= LL_COMPRESS_ZSTD; a++) ok &= ll_compress_parse(ll_compress_name(a)) == a;
    tu_check(ok, "name: the Content-Encoding value parses back to its algorithm");
    tu_check(strcmp(ll_compress_name(LL_COMPRESS_NONE), "identity") == 0 && strcmp(ll_compress_name(42), "") == 0,
             "name: none is identity, an unknown value \"\"");
}

static ssize_t gen(void *ud, uint64_t pos, char *buf, size_t n) {
    (void)ud;
    (void)pos;
    memset(buf, 'x', n);
    return (ssize_t)n;
}

/* b must be refused with a message containing want, and left as it was. */
static void refused(ll_body *b, int algo, const char *want, const char *what) {
    ll_body before = *b;
    char err[256] = "";
    int rc = ll_body_compress(b, algo, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, want) != NULL, "%s: refused (%s)", what, err);
    tu_check(memcmp(&before, b, sizeof(before)) == 0, "%s: the body is unchanged", what);
}

static void test_refused(void) {
    ll_body b = {.kind = LL_BODY_NONE, .fd = -1};
    char path[] = "/tmp/luaload-test-compress-XXXXXX";
    int fd = mkstemp(path);
    tu_check(fd >= 0 && write(fd, "0123456789", 10) == 10, "a file to send");
    ll_body_set_file(&b, fd, 0, 10);
    refused(&b, LL_COMPRESS_GZIP, "compression needs a body in memory (a string), not a FileStream or a generated body",
            "a file body (FileStream)");
    ll_body_set_generator(&b, gen, NULL, 100);
    refused(&b, LL_COMPRESS_ZSTD, "not a FileStream or a generated body", "a generated body");
    static char form; /* never read: the body only points at it */
    ll_body_set_form(&b, (const struct ll_form *)&form);
    refused(&b, LL_COMPRESS_DEFLATE, "compression needs a body in memory (a string), not a multipart form",
            "a multipart form");
    ll_body_clear(&b);
    refused(&b, LL_COMPRESS_BR, "the request has no body", "no body");
    close(fd);
    unlink(path);

    ll_body_set_memory(&b, "abc", 3);
    refused(&b, 42, "unknown compression algorithm 42", "an unknown algorithm");
    char err[64] = "";
    tu_check(ll_body_compress(&b, LL_COMPRESS_NONE, err, sizeof(err)) == 0 && b.len == 3 &&
                 memcmp(b.mem, "abc", 3) == 0,
             "none leaves a memory body as it is");
    ll_body_clear(&b);
}

int main(void) {
    test_names();

    const char *small = "hello, hello, hello, compressed world";
    size_t big_n = 5u << 20;
    char *big = malloc(big_n);
    tu_rng_state = 42;
    for (size_t i = 0; i < big_n; i++) { /* text-like runs with noise: both compressible and not */
        big[i] = (i / 4096) % 3 == 0 ? (char)tu_rand() : (char)('a' + (i * 7 + i / 100) % 26);
    }
    for (int a = LL_COMPRESS_GZIP; a <= LL_COMPRESS_ZSTD; a++) {
        round_trip(a, small, strlen(small), "a short text");
        round_trip(a, "", 0, "an empty body");
        round_trip(a, big, big_n, "a 5 MB body");
    }
    free(big);
    test_brotli_cli();

    test_refused();
    return tu_summary();
}
