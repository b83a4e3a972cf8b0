/* body_compress.c -- request body compression (see body_compress.h): a
 * memory body replaced by its gzip (zlib, gzip wrapper), deflate (the zlib
 * format, which is what HTTP's "deflate" coding means), br (brotli) or
 * zstd encoding, each made in one pass into a buffer of the library's
 * worst-case size. Levels: zlib's default (6, as Go's gzip in k6), brotli
 * quality 5, zstd level 3 -- good ratios at a speed a test can afford. */
#include "body_compress.h"

#include <brotli/encode.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

#define LL_COMPRESS_BR_QUALITY 5
#define LL_COMPRESS_ZSTD_LEVEL 3

static const char *const ll_compress_names[] = {"identity", "gzip", "deflate", "br", "zstd"};

int ll_compress_parse(const char *name) {
    if (!name) return -1;
    for (int i = LL_COMPRESS_GZIP; i <= LL_COMPRESS_ZSTD; i++) {
        if (strcasecmp(name, ll_compress_names[i]) == 0) return i; /* content codings are case-insensitive */
    }
    return -1;
}

const char *ll_compress_name(int algo) {
    if (algo < LL_COMPRESS_NONE || algo > LL_COMPRESS_ZSTD) return "";
    return ll_compress_names[algo];
}

/* zlib's deflate of in into *out (malloc'd), windowBits 31 for gzip, 15
 * for the zlib format. Fed in pieces of at most UINT_MAX bytes (zlib's
 * counters are 32-bit). */
static int ll_compress_zlib(const char *in, size_t n, int window_bits, char **out, size_t *outlen, char *err,
                            size_t errlen) {
    z_stream zs = {0};
    int rc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        snprintf(err, errlen, "zlib: deflateInit2 failed (%d)", rc);
        return -1;
    }
    size_t cap = deflateBound(&zs, (uLong)n);
    char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&zs);
        snprintf(err, errlen, "out of memory compressing %zu bytes", n);
        return -1;
    }
    size_t in_pos = 0, out_pos = 0;
    do {
        size_t in_left = n - in_pos, out_left = cap - out_pos;
        zs.next_in = (Bytef *)(in + in_pos);
        zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        zs.next_out = (Bytef *)(buf + out_pos);
        zs.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
        uInt given_in = zs.avail_in, given_out = zs.avail_out;
        rc = deflate(&zs, in_pos + given_in == n ? Z_FINISH : Z_NO_FLUSH);
        in_pos += given_in - zs.avail_in;
        out_pos += given_out - zs.avail_out;
    } while (rc == Z_OK);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        snprintf(err, errlen, "zlib: deflate failed (%d)", rc);
        return -1;
    }
    *out = buf;
    *outlen = out_pos;
    return 0;
}

static int ll_compress_br(const char *in, size_t n, char **out, size_t *outlen, char *err, size_t errlen) {
    size_t cap = BrotliEncoderMaxCompressedSize(n);
    if (cap == 0) {
        snprintf(err, errlen, "brotli: a body of %zu bytes is too large", n);
        return -1;
    }
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "out of memory compressing %zu bytes", n);
        return -1;
    }
    size_t len = cap;
    if (!BrotliEncoderCompress(LL_COMPRESS_BR_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n,
                               (const uint8_t *)in, &len, (uint8_t *)buf)) {
        free(buf);
        snprintf(err, errlen, "brotli: BrotliEncoderCompress failed");
        return -1;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

static int ll_compress_zstd(const char *in, size_t n, char **out, size_t *outlen, char *err, size_t errlen) {
    size_t cap = ZSTD_compressBound(n);
    if (ZSTD_isError(cap)) {
        snprintf(err, errlen, "zstd: a body of %zu bytes is too large", n);
        return -1;
    }
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "out of memory compressing %zu bytes", n);
        return -1;
    }
    size_t len = ZSTD_compress(buf, cap, in, n, LL_COMPRESS_ZSTD_LEVEL);
    if (ZSTD_isError(len)) {
        snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(len));
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

int ll_compress_bytes(const char *in, size_t n, int algo, char **out, size_t *outlen, char *err, size_t errlen) {
    switch (algo) {
    case LL_COMPRESS_GZIP: return ll_compress_zlib(in, n, 31, out, outlen, err, errlen);
    case LL_COMPRESS_DEFLATE: return ll_compress_zlib(in, n, 15, out, outlen, err, errlen);
    case LL_COMPRESS_BR: return ll_compress_br(in, n, out, outlen, err, errlen);
    case LL_COMPRESS_ZSTD: return ll_compress_zstd(in, n, out, outlen, err, errlen);
    default: snprintf(err, errlen, "unknown compression algorithm %d", algo); return -1;
    }
}

int ll_body_compress(ll_body *b, int algo, char *err, size_t errlen) {
    if (b->kind == LL_BODY_NONE) {
        snprintf(err, errlen, "compression needs a body in memory (a string); the request has no body");
        return -1;
    }
    if (b->kind == LL_BODY_FORM) {
        snprintf(err, errlen, "compression needs a body in memory (a string), not a multipart form");
        return -1;
    }
    if (b->kind != LL_BODY_MEMORY) {
        snprintf(err, errlen, "compression needs a body in memory (a string), not a FileStream or a generated body");
        return -1;
    }
    if (algo == LL_COMPRESS_NONE) return 0;
    char *out = NULL;
    size_t outlen = 0;
    int rc = ll_compress_bytes(b->mem, (size_t)b->len, algo, &out, &outlen, err, errlen);
    if (rc != 0) return -1;
    ll_body next = {.kind = LL_BODY_NONE, .fd = -1}; /* b stays as it is if the copy fails */
    rc = ll_body_set_memory(&next, out, outlen);
    free(out);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory keeping a compressed body of %zu bytes", outlen);
        return -1;
    }
    ll_body_clear(b);
    *b = next;
    return 0;
}
