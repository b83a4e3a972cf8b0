/* fuzz_hdr.c -- libFuzzer target for src/core/metrics/hdr_codec.c, the
 * HdrHistogram V2 decoder luaload merge feeds with the lines of a part's
 * log (what a damaged or hostile file controls). Each input is tried twice:
 * as the base64 text of a line, and as the inner V2 payload, wrapped in a
 * valid compressed envelope so that the fuzzer reaches the header and the
 * counts. A histogram that decodes must hold counts that add up to its
 * total, and encode and decode again to the same counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"
#include "hdr_codec.h"

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(const uint8_t *p, size_t n, size_t *len) {
    char *out = malloc((n + 2) / 3 * 4 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        out[o++] = B64[v >> 18 & 63];
        out[o++] = B64[v >> 12 & 63];
        out[o++] = i + 1 < n ? B64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? B64[v & 63] : '=';
    }
    out[o] = 0;
    *len = o;
    return out;
}

static void check_decoded(const ll_histogram *h) {
    int64_t total = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        CHECK(h->counts[i] >= 0);
        total += h->counts[i];
    }
    CHECK(total == h->total_count);
    char *again = ll_hdr_codec_encode(h);
    CHECK(again != NULL);
    char err[256];
    ll_histogram *h2 = ll_hdr_codec_decode(again, strlen(again), NULL, err, sizeof(err));
    CHECK(h2 != NULL && h2->counts_len == h->counts_len && h2->total_count == h->total_count);
    CHECK(memcmp(h2->counts, h->counts, (size_t)h->counts_len * sizeof(int64_t)) == 0);
    ll_histogram_free(h2);
    free(again);
}

static void try_text(const char *b64, size_t len) {
    char err[256] = "";
    ll_histogram *h = ll_hdr_codec_decode(b64, len, NULL, err, sizeof(err));
    if (h) check_decoded(h);
    else CHECK(err[0] != 0);
    ll_histogram_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees any read past them */
    memcpy(copy, data, size);
    try_text(copy, size);
    free(copy);

    uLongf zlen = compressBound((uLong)size);
    uint8_t *env = malloc(8 + zlen);
    if (compress2(env + 8, &zlen, data, (uLong)size, Z_DEFAULT_COMPRESSION) == Z_OK) {
        const uint8_t head[8] = {0x1c, 0x84, 0x93, 0x14, (uint8_t)(zlen >> 24), (uint8_t)(zlen >> 16),
                                 (uint8_t)(zlen >> 8), (uint8_t)zlen};
        memcpy(env, head, 8);
        size_t len;
        char *b64 = base64(env, 8 + zlen, &len);
        try_text(b64, len);
        free(b64);
    }
    free(env);
    return 0;
}
