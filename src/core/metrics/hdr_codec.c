/* hdr_codec.c -- HdrHistogram's compressed V2 encoding (see hdr_codec.h).
 *
 * Owns: the byte layout, the ZigZag LEB128 counts, the base64 text, and the
 * slot-wise subtraction of two snapshots. ll_histogram's counts[] is
 * HdrHistogram's counts array slot for slot, so nothing is re-indexed.
 *
 * base64( compressed:  int32 0x1c849314, int32 N, N bytes of zlib (RFC 1950)
 *         of payload:  int32 0x1c849313, int32 counts length in bytes,
 *                      int32 normalizingIndexOffset (0), int32 significant digits,
 *                      int64 lowest, int64 highest, double conversion ratio (1.0),
 *                      counts: ZigZag LEB128 varints, a negative -n = n empty slots )
 * All integers big-endian. A varint is at most 9 bytes: 7 bits in each of
 * the first 8 (high bit = more follows), all 8 bits of the 9th. Counts run
 * to the last non-empty slot (one slot when empty), as Java writes them. */
#include "hdr_codec.h"
#include "base64.h"
#include "xmalloc.h"
#include "errmsg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define COOKIE_PAYLOAD 0x1c849313u /* V2 encoding 0x1c849303, word size 1 (LEB128) */
#define COOKIE_ZLIB 0x1c849314u    /* V2 compressed 0x1c849304, word size 1 */
#define HEADER_LEN 40
#define VARINT_MAX 9

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p) {
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static size_t put_varint(uint8_t *p, int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63)); /* ZigZag */
    size_t n = 0;
    while (n < VARINT_MAX - 1 && z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z; /* after 8 bytes 8 bits are left, and the 9th holds them all */
    return n;
}

/* Reads one ZigZag-encoded varint of at most avail bytes into *z (still
 * zigzagged); the number of bytes, 0 if it runs past avail. */
static size_t get_varint(const uint8_t *p, size_t avail, uint64_t *z) {
    *z = 0;
    for (size_t i = 0; i < VARINT_MAX && i < avail; i++) {
        if (i == VARINT_MAX - 1) {
            *z |= (uint64_t)p[i] << 56;
            return i + 1;
        }
        *z |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) return i + 1;
    }
    return 0;
}

/* Slot i holds [lowest, lowest + width). */
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

/* min and max from the first and last non-empty slots; returns the sum of
 * count * median equivalent value (Java's getMean numerator). */
static double stats_from_counts(ll_histogram *h) {
    double sum = 0;
    h->min = INT64_MAX;
    h->max = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        if (h->counts[i] == 0) continue;
        int64_t width, lo = slot_lowest(h, i, &width);
        if (h->min == INT64_MAX) h->min = lo;
        h->max = lo + (width - 1);
        sum += (double)h->counts[i] * (double)(lo + width / 2);
    }
    return sum;
}

char *ll_hdr_codec_encode(const ll_histogram *h) {
    int32_t limit = h->counts_len;
    while (limit > 1 && h->counts[limit - 1] == 0) limit--;

    uint8_t *raw = ll_xmalloc(HEADER_LEN + (size_t)limit * VARINT_MAX);
    size_t n = HEADER_LEN;
    for (int32_t i = 0; i < limit;) {
        int64_t count = h->counts[i++];
        if (count > 0) {
            n += put_varint(raw + n, count);
            continue;
        }
        int64_t zeros = 1; /* a negative count cannot be recorded; it would be read as empty */
        while (i < limit && h->counts[i] <= 0) {
            zeros++;
            i++;
        }
        n += put_varint(raw + n, zeros > 1 ? -zeros : 0); /* one empty slot is a 0, as in Java */
    }
    double ratio = 1.0;
    uint64_t ratio_bits;
    memcpy(&ratio_bits, &ratio, sizeof(ratio_bits));
    put32(raw, COOKIE_PAYLOAD);
    put32(raw + 4, (uint32_t)(n - HEADER_LEN));
    put32(raw + 8, 0);
    put32(raw + 12, (uint32_t)h->sig_digits);
    put64(raw + 16, (uint64_t)h->lowest);
    put64(raw + 24, (uint64_t)h->highest);
    put64(raw + 32, ratio_bits);

    uLongf zlen = compressBound(n);
    uint8_t *z = ll_xmalloc(8 + zlen);
    int rc = compress2(z + 8, &zlen, raw, n, Z_DEFAULT_COMPRESSION);
    free(raw);
    if (rc != Z_OK) {
        free(z);
        return NULL;
    }
    put32(z, COOKIE_ZLIB);
    put32(z + 4, (uint32_t)zlen);
    char *out = ll_base64_encode(z, 8 + zlen, NULL);
    free(z);
    return out;
}

/* why for a stream that ended or stopped where it should not; zlib's own
 * message for corrupt data. */
static const char *zmsg(int rc, const z_stream *zs, const char *why) {
    if (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) return why;
    return zs->msg ? zs->msg : zError(rc);
}

/* Reads the counts varints of p[0..n) into h; -1 with err set if they are bad. */
static int read_counts(ll_histogram *h, const uint8_t *p, size_t n, char *err, size_t errlen) {
    uint64_t slot = 0, slots = (uint64_t)h->counts_len, total = 0;
    for (size_t pos = 0; pos < n;) {
        uint64_t z;
        size_t len = get_varint(p + pos, n - pos, &z);
        if (len == 0) {
            ll_errmsg(err, errlen, "histogram: count truncated at payload byte %zu", pos);
            return -1;
        }
        pos += len;
        if (z & 1) { /* negative: (z >> 1) + 1 empty slots */
            uint64_t run = (z >> 1) + 1;
            if (run > slots - slot) {
                ll_errmsg(err, errlen, "histogram: %llu empty slots from slot %llu run past the %llu slots",
                       (unsigned long long)run, (unsigned long long)slot, (unsigned long long)slots);
                return -1;
            }
            slot += run;
            continue;
        }
        if (slot >= slots) {
            ll_errmsg(err, errlen, "histogram: more counts than its %llu slots", (unsigned long long)slots);
            return -1;
        }
        uint64_t count = z >> 1;
        if (count > (uint64_t)INT64_MAX - total) {
            ll_errmsg(err, errlen, "histogram: total count overflows at slot %llu", (unsigned long long)slot);
            return -1;
        }
        total += count;
        h->counts[slot++] = (int64_t)count;
    }
    h->total_count = (int64_t)total;
    return 0;
}

ll_histogram *ll_hdr_codec_decode(const char *b64, size_t len, const ll_histogram *like, char *err, size_t errlen) {
    size_t n = 0;
    char why[160];
    uint8_t *bin = ll_base64_decode(b64, len, &n, why, sizeof(why));
    if (!bin) {
        ll_errmsg(err, errlen, "histogram: %s", why);
        return NULL;
    }

    ll_histogram *h = NULL;
    uint8_t hdr[HEADER_LEN], *payload = NULL;
    z_stream zs;
    memset(&zs, 0, sizeof(zs)); /* inflateEnd on a zeroed stream is a no-op */

    if (n < 8) {
        ll_errmsg(err, errlen, "histogram: %zu bytes, too short", n);
        goto fail;
    }
    uint32_t cookie = get32(bin);
    if (cookie != COOKIE_ZLIB) {
        ll_errmsg(err, errlen, "histogram: cookie 0x%08x is not HdrHistogram's compressed V2 (0x%08x)",
               cookie, COOKIE_ZLIB);
        goto fail;
    }
    uint32_t zlen = get32(bin + 4);
    if ((uint64_t)zlen != n - 8) {
        ll_errmsg(err, errlen, "histogram: compressed length %u, but %zu bytes follow", zlen, n - 8);
        goto fail;
    }
    if (inflateInit(&zs) != Z_OK) {
        ll_errmsg(err, errlen, "histogram: zlib inflateInit failed");
        goto fail;
    }
    zs.next_in = bin + 8;
    zs.avail_in = zlen;
    zs.next_out = hdr;
    zs.avail_out = HEADER_LEN;
    int rc = inflate(&zs, Z_SYNC_FLUSH);
    if ((rc != Z_OK && rc != Z_STREAM_END) || zs.avail_out != 0) {
        ll_errmsg(err, errlen, "histogram: zlib: %s", zmsg(rc, &zs, "data truncated in the header"));
        goto fail;
    }

    int32_t plen = (int32_t)get32(hdr + 4), offset = (int32_t)get32(hdr + 8);
    int32_t sig = (int32_t)get32(hdr + 12);
    int64_t lowest = (int64_t)get64(hdr + 16), highest = (int64_t)get64(hdr + 24);
    uint64_t ratio_bits = get64(hdr + 32);
    double ratio;
    memcpy(&ratio, &ratio_bits, sizeof(ratio));
    if (get32(hdr) != COOKIE_PAYLOAD) {
        ll_errmsg(err, errlen, "histogram: payload cookie 0x%08x is not V2's (0x%08x)", get32(hdr), COOKIE_PAYLOAD);
        goto fail;
    }
    if (offset != 0) {
        ll_errmsg(err, errlen, "histogram: normalizing index offset %d is not supported", offset);
        goto fail;
    }
    if (ratio != 1.0) {
        ll_errmsg(err, errlen, "histogram: integer to double conversion ratio %g is not 1", ratio);
        goto fail;
    }
    if (like && (lowest != like->lowest || highest != like->highest || sig != like->sig_digits)) {
        ll_errmsg(err, errlen, "histogram: layout lowest=%lld highest=%lld significant digits=%d, expected %lld, %lld, %d",
               (long long)lowest, (long long)highest, sig, (long long)like->lowest, (long long)like->highest,
               like->sig_digits);
        goto fail;
    }
    if (!(h = ll_histogram_new(lowest, highest, sig))) {
        ll_errmsg(err, errlen, "histogram: bad parameters lowest=%lld highest=%lld significant digits=%d",
               (long long)lowest, (long long)highest, sig);
        goto fail;
    }
    if (plen < 0 || (uint64_t)plen > (uint64_t)h->counts_len * VARINT_MAX) {
        ll_errmsg(err, errlen, "histogram: counts length %d is out of range for %d slots", plen, h->counts_len);
        goto fail;
    }

    payload = ll_xmalloc((size_t)plen + 1);
    zs.next_out = payload;
    zs.avail_out = (uInt)plen + 1; /* one byte more, where a longer stream shows */
    if (rc != Z_STREAM_END) rc = inflate(&zs, Z_FINISH);
    if (rc != Z_STREAM_END || zs.avail_out != 1 || zs.avail_in != 0) {
        const char *why = zs.avail_out == 0 ? "data longer than the counts length"
                          : rc != Z_STREAM_END ? "data truncated"
                          : zs.avail_out > 1 ? "data shorter than the counts length"
                                             : "bytes after the end of the data";
        ll_errmsg(err, errlen, "histogram: zlib: %s", zmsg(rc, &zs, why));
        goto fail;
    }
    if (read_counts(h, payload, (size_t)plen, err, errlen) != 0) goto fail;
    h->sum = stats_from_counts(h);
    inflateEnd(&zs);
    free(payload);
    free(bin);
    return h;

fail:
    inflateEnd(&zs);
    free(payload);
    free(bin);
    ll_histogram_free(h);
    return NULL;
}

int ll_hdr_codec_subtract(ll_histogram *dst, const ll_histogram *a, const ll_histogram *b) {
    if (a->lowest != b->lowest || a->highest != b->highest || a->sig_digits != b->sig_digits ||
        dst->lowest != a->lowest || dst->highest != a->highest || dst->sig_digits != a->sig_digits)
        return -1;
    for (int32_t i = 0; i < a->counts_len; i++)
        if (b->counts[i] > a->counts[i]) return -1;
    double sum = a->sum - b->sum; /* read before dst (which may be a or b) is written */
    int64_t total = 0;
    for (int32_t i = 0; i < a->counts_len; i++) {
        dst->counts[i] = a->counts[i] - b->counts[i];
        total += dst->counts[i];
    }
    dst->total_count = total;
    stats_from_counts(dst);
    dst->sum = sum;
    return 0;
}
