/* body_decode.c -- response body decoding (see body_decode.h): gzip and
 * deflate with zlib's inflate, br with brotli's streaming decoder, zstd
 * with a zstd DStream. Each feed runs the library over the input through
 * a 16 KiB buffer on the stack and appends that to the output, so nothing
 * is allocated per call but the output itself; the library state is made
 * in ll_body_decoder_new (the libraries add their windows on first use).
 *
 * "deflate" is taken as browsers take it: the zlib format (RFC 1950) when
 * the body starts with a zlib header, else raw deflate (RFC 1951). gzip
 * members and zstd frames that follow one another are all decoded; other
 * bytes after the end of the stream are ignored. zstd frames may ask for a
 * window of at most 8 MB, the limit RFC 9659 sets for HTTP (a larger one
 * is refused as corrupt), so a decoder never holds more than that. */
#include "body_decode.h"

#include <brotli/decode.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define LL_DECODE_CHUNK (16 * 1024)
#define LL_DECODE_ZSTD_WINDOW_LOG_MAX 23 /* 8 MB (RFC 9659) */

/* Where a decoder is in the body. */
enum {
    LL_DEC_HEAD,   /* deflate: waiting for the 2 bytes that tell zlib from raw deflate */
    LL_DEC_RUN,    /* inside the compressed stream */
    LL_DEC_GAP,    /* gzip, zstd: a member or frame ended; another may follow */
    LL_DEC_END,    /* the stream ended: the rest of the body is ignored */
    LL_DEC_FAILED, /* feed returned fail_rc (-1 or -2) with err; nothing more is decoded */
};

struct ll_body_decoder {
    int kind, state;
    int fed;                /* some bytes were fed */
    int fail_rc;            /* LL_DEC_FAILED: what feed returned */
    const char *err;        /* LL_DEC_FAILED: its message */
    unsigned char hold[4];  /* HEAD, GAP: the first bytes of what comes next, until they tell */
    size_t nhold;
    union {
        z_stream zs;
        BrotliDecoderState *br;
        ZSTD_DStream *zstd;
    } u;
};

static const char *const ll_decode_names[] = {"identity", "gzip", "deflate", "br", "zstd"};
static const char *const ll_decode_corrupt[] = {
    "the response body is corrupt", "the gzip-encoded response body is corrupt",
    "the deflate-encoded response body is corrupt", "the br-encoded response body is corrupt",
    "the zstd-encoded response body is corrupt"};
static const char *const ll_decode_truncated[] = {
    "the response body is truncated", "the gzip-encoded response body is truncated",
    "the deflate-encoded response body is truncated", "the br-encoded response body is truncated",
    "the zstd-encoded response body is truncated"};
static const char *const ll_decode_oom = "out of memory decoding the response body";
static const char *const ll_decode_over = "the decoded response body is larger than the limit";

int ll_decode_kind_of(const char *value, size_t len) {
    while (len > 0 && (value[0] == ' ' || value[0] == '\t')) {
        value++;
        len--;
    }
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t')) len--;
    if (len == 0) return LL_DECODE_IDENTITY;
    if (len == 6 && strncasecmp(value, "x-gzip", 6) == 0) return LL_DECODE_GZIP; /* RFC 9110 8.4.1.3 */
    for (int i = LL_DECODE_IDENTITY; i <= LL_DECODE_ZSTD; i++) {
        if (strlen(ll_decode_names[i]) == len && strncasecmp(value, ll_decode_names[i], len) == 0) return i;
    }
    return -1;
}

ll_body_decoder *ll_body_decoder_new(int kind) {
    if (kind <= LL_DECODE_IDENTITY || kind > LL_DECODE_ZSTD) return NULL;
    ll_body_decoder *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->kind = kind;
    d->state = kind == LL_DECODE_DEFLATE ? LL_DEC_HEAD : LL_DEC_RUN;
    int ok = 0;
    switch (kind) {
    case LL_DECODE_GZIP: ok = inflateInit2(&d->u.zs, 16 + 15) == Z_OK; break;
    case LL_DECODE_DEFLATE: ok = inflateInit2(&d->u.zs, 15) == Z_OK; break; /* raw deflate is a reset away */
    case LL_DECODE_BR:
        d->u.br = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        ok = d->u.br != NULL;
        break;
    case LL_DECODE_ZSTD:
        d->u.zstd = ZSTD_createDStream();
        ok = d->u.zstd != NULL &&
             !ZSTD_isError(ZSTD_DCtx_setParameter(d->u.zstd, ZSTD_d_windowLogMax, LL_DECODE_ZSTD_WINDOW_LOG_MAX));
        if (!ok) ZSTD_freeDStream(d->u.zstd); /* NULL is fine */
        break;
    }
    if (!ok) {
        free(d);
        return NULL;
    }
    return d;
}

void ll_body_decoder_free(ll_body_decoder *d) {
    if (!d) return;
    switch (d->kind) {
    case LL_DECODE_GZIP:
    case LL_DECODE_DEFLATE: inflateEnd(&d->u.zs); break;
    case LL_DECODE_BR: BrotliDecoderDestroyInstance(d->u.br); break;
    case LL_DECODE_ZSTD: ZSTD_freeDStream(d->u.zstd); break;
    }
    free(d);
}

/* Appends n decoded bytes at p to out, as many as fit under limit: 0, -2
 * when some did not fit, -1 when out of memory. */
static int ll_decode_put(ll_buf *out, const unsigned char *p, size_t n, int64_t limit, const char **err) {
    size_t take = 0;
    if (limit > 0 && (uint64_t)limit > out->len) {
        uint64_t room = (uint64_t)limit - out->len;
        take = room < n ? (size_t)room : n;
    }
    if (take > 0 && ll_buf_append(out, p, take) != 0) {
        *err = ll_decode_oom;
        return -1;
    }
    return take < n ? -2 : 0;
}

/* inflate of n bytes at p (gzip or deflate). Stops at the end of input or
 * of the stream; *used: the bytes inflate took. */
static int ll_decode_zlib(ll_body_decoder *d, const unsigned char *p, size_t n, size_t *used, ll_buf *out,
                          int64_t limit, const char **err) {
    z_stream *zs = &d->u.zs;
    unsigned char buf[LL_DECODE_CHUNK];
    size_t pos = 0;
    for (;;) {
        size_t left = n - pos;
        zs->next_in = (Bytef *)(p + pos);
        zs->avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
        zs->next_out = buf;
        zs->avail_out = sizeof(buf);
        uInt given = zs->avail_in;
        int rc = inflate(zs, Z_NO_FLUSH);
        pos += given - zs->avail_in;
        *used = pos;
        if (rc == Z_MEM_ERROR) {
            *err = ll_decode_oom;
            return -1;
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) { /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
            *err = ll_decode_corrupt[d->kind];
            return -1;
        }
        int put = ll_decode_put(out, buf, sizeof(buf) - zs->avail_out, limit, err);
        if (rc == Z_STREAM_END) d->state = d->kind == LL_DECODE_GZIP ? LL_DEC_GAP : LL_DEC_END;
        if (put != 0 || rc == Z_STREAM_END) return put;
        if (pos == n && zs->avail_out != 0) return 0; /* all taken, all given out */
    }
}

/* The brotli decoder over n bytes at p, as ll_decode_zlib. */
static int ll_decode_br(ll_body_decoder *d, const unsigned char *p, size_t n, size_t *used, ll_buf *out,
                        int64_t limit, const char **err) {
    unsigned char buf[LL_DECODE_CHUNK];
    const uint8_t *next_in = p;
    size_t avail_in = n;
    for (;;) {
        uint8_t *next_out = buf;
        size_t avail_out = sizeof(buf);
        BrotliDecoderResult rc =
            BrotliDecoderDecompressStream(d->u.br, &avail_in, &next_in, &avail_out, &next_out, NULL);
        *used = n - avail_in;
        if (rc == BROTLI_DECODER_RESULT_ERROR) {
            BrotliDecoderErrorCode code = BrotliDecoderGetErrorCode(d->u.br);
            int oom = code <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
                      code >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES; /* the _ERROR_ALLOC_ codes, -21 to -30 */
            *err = oom ? ll_decode_oom : ll_decode_corrupt[d->kind];
            return -1;
        }
        int put = ll_decode_put(out, buf, sizeof(buf) - avail_out, limit, err);
        if (rc == BROTLI_DECODER_RESULT_SUCCESS) d->state = LL_DEC_END;
        if (put != 0 || rc != BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) return put; /* the end, or all input taken */
    }
}

/* The zstd decoder over n bytes at p, as ll_decode_zlib. */
static int ll_decode_zstd(ll_body_decoder *d, const unsigned char *p, size_t n, size_t *used, ll_buf *out,
                          int64_t limit, const char **err) {
    unsigned char buf[LL_DECODE_CHUNK];
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer o = {buf, sizeof(buf), 0};
        size_t rc = ZSTD_decompressStream(d->u.zstd, &o, &in);
        *used = in.pos;
        if (ZSTD_isError(rc)) {
            int oom = ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation;
            *err = oom ? ll_decode_oom : ll_decode_corrupt[d->kind];
            return -1;
        }
        int put = ll_decode_put(out, buf, o.pos, limit, err);
        if (rc == 0) d->state = LL_DEC_GAP; /* a frame ended and is all given out */
        if (put != 0 || rc == 0) return put;
        if (in.pos == in.size && o.pos < o.size) return 0;
    }
}

static int ll_decode_run(ll_body_decoder *d, const unsigned char *p, size_t n, size_t *used, ll_buf *out,
                         int64_t limit, const char **err) {
    switch (d->kind) {
    case LL_DECODE_BR: return ll_decode_br(d, p, n, used, out, limit, err);
    case LL_DECODE_ZSTD: return ll_decode_zstd(d, p, n, used, out, limit, err);
    default: return ll_decode_zlib(d, p, n, used, out, limit, err);
    }
}

/* Whether the held bytes start another gzip member or zstd frame (a
 * skippable one too): 1, 0, or -1 when more bytes are needed to tell. */
static int ll_decode_next_starts(const ll_body_decoder *d) {
    static const unsigned char gzip_magic[] = {0x1f, 0x8b};
    static const unsigned char zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
    static const unsigned char skip_magic[] = {0x50, 0x2a, 0x4d, 0x18}; /* 0x184D2A5?, little-endian */
    if (d->kind == LL_DECODE_GZIP) {
        if (memcmp(d->hold, gzip_magic, d->nhold) != 0) return 0;
        return d->nhold == sizeof(gzip_magic) ? 1 : -1;
    }
    int frame = memcmp(d->hold, zstd_magic, d->nhold) == 0;
    int skip = (d->hold[0] & 0xf0) == skip_magic[0] && memcmp(d->hold + 1, skip_magic + 1, d->nhold - 1) == 0;
    if (!frame && !skip) return 0;
    return d->nhold == sizeof(zstd_magic) ? 1 : -1;
}

/* Whether the 2 held bytes are a zlib header (RFC 1950: deflate, a window
 * of at most 32 KiB, the check bits). */
static int ll_decode_is_zlib(const unsigned char *h) {
    return (h[0] & 0x0f) == Z_DEFLATED && (h[0] >> 4) <= 7 && (h[0] * 256 + h[1]) % 31 == 0;
}

/* HEAD and GAP: holds the first bytes of what comes next, up to as many as
 * tell what it is; then goes on decoding from them, or ends. */
static int ll_decode_head(ll_body_decoder *d, const unsigned char *p, size_t n, size_t *used, ll_buf *out,
                          int64_t limit, const char **err) {
    size_t want = d->kind == LL_DECODE_ZSTD ? 4 : 2, take = want - d->nhold;
    if (take > n) take = n;
    memcpy(d->hold + d->nhold, p, take);
    d->nhold += take;
    *used = take;
    if (d->state == LL_DEC_HEAD) {
        if (d->nhold < want) return 0;
        if (!ll_decode_is_zlib(d->hold) && inflateReset2(&d->u.zs, -15) != Z_OK) {
            *err = ll_decode_corrupt[d->kind];
            return -1;
        }
    } else {
        int starts = ll_decode_next_starts(d);
        if (starts < 0) return 0;
        if (starts == 0) {
            d->state = LL_DEC_END;
            return 0;
        }
        if (d->kind == LL_DECODE_GZIP && inflateReset(&d->u.zs) != Z_OK) {
            *err = ll_decode_corrupt[d->kind];
            return -1;
        }
    }
    d->state = LL_DEC_RUN;
    size_t nhold = d->nhold, held_used = 0;
    d->nhold = 0;
    return ll_decode_run(d, d->hold, nhold, &held_used, out, limit, err);
}

int ll_body_decoder_feed(ll_body_decoder *d, const char *p, size_t n, ll_buf *out, int64_t limit, const char **err) {
    if (d->state == LL_DEC_FAILED) {
        *err = d->err;
        return d->fail_rc;
    }
    const unsigned char *q = (const unsigned char *)p;
    size_t pos = 0;
    if (n > 0) d->fed = 1;
    while (pos < n && d->state != LL_DEC_END) {
        size_t used = 0;
        int rc = d->state == LL_DEC_RUN ? ll_decode_run(d, q + pos, n - pos, &used, out, limit, err)
                                        : ll_decode_head(d, q + pos, n - pos, &used, out, limit, err);
        pos += used;
        if (rc != 0) {
            if (rc == -2) *err = ll_decode_over;
            d->state = LL_DEC_FAILED;
            d->fail_rc = rc;
            d->err = *err;
            return rc;
        }
    }
    return 0;
}

int ll_body_decoder_finish(ll_body_decoder *d, const char **err) {
    switch (d->state) {
    case LL_DEC_FAILED: *err = d->err; return -1;
    case LL_DEC_GAP:
    case LL_DEC_END: return 0; /* held bytes in a gap are trailing data */
    default:
        if (!d->fed) return 0; /* an empty body: nothing was encoded */
        *err = ll_decode_truncated[d->kind];
        return -1;
    }
}

int ll_body_chunk_out(ll_body_chunk_fn *fn, void *ud, int status, ll_buf *body, const char **err) {
    if (!fn || body->len == 0) return 0;
    int rc = fn(ud, status, body->p, body->len);
    body->len = 0;
    if (rc == LL_CHUNK_GO) return 0;
    if (rc == LL_CHUNK_STOP) return 1;
    *err = "the response body was stopped by its on_chunk function";
    return -1;
}
