/* grpc_wire.c -- gRPC's framing over HTTP/2 (grpc_wire.h): messages
 * framed and found again in a body that arrives in pieces, compressed
 * ones through body_compress.c and body_decode.c (zlib), the grpc-timeout
 * header, status names and the grpc-message trailer. */
#include "grpc_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body_compress.h"
#include "body_decode.h"
#include "errmsg.h"

static const char *const STATUS_NAMES[LL_GRPC_NSTATUS] = {
    "OK",           "Canceled",         "Unknown",           "InvalidArgument",    "DeadlineExceeded",
    "NotFound",     "AlreadyExists",    "PermissionDenied",  "ResourceExhausted",  "FailedPrecondition",
    "Aborted",      "OutOfRange",       "Unimplemented",     "Internal",           "Unavailable",
    "DataLoss",     "Unauthenticated",
};

const char *ll_grpc_status_name(int code) {
    return code >= 0 && code < LL_GRPC_NSTATUS ? STATUS_NAMES[code] : NULL;
}

int ll_grpc_status_parse(const char *value, size_t len) {
    if (len == 0 || len > 9) return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (value[i] < '0' || value[i] > '9') return -1;
        v = v * 10 + (value[i] - '0');
    }
    return v;
}

static void put_prefix(unsigned char *p, int compressed, uint32_t len) {
    p[0] = (unsigned char)compressed;
    p[1] = (unsigned char)(len >> 24);
    p[2] = (unsigned char)(len >> 16);
    p[3] = (unsigned char)(len >> 8);
    p[4] = (unsigned char)len;
}

int ll_grpc_frame(ll_buf *out, const void *msg, size_t len, int gzip, char *err, size_t errlen) {
    char *packed = NULL;
    size_t plen = len;
    if (gzip && ll_compress_bytes(msg, len, LL_COMPRESS_GZIP, &packed, &plen, err, errlen) != 0) return -1;
    const void *body = gzip ? packed : msg;
    int rc = -1;
    unsigned char prefix[LL_GRPC_PREFIX];
    if (plen > UINT32_MAX) {
        ll_errmsg(err, errlen, "a message of %zu bytes is over gRPC's 4 GiB", plen);
        goto out;
    }
    put_prefix(prefix, gzip != 0, (uint32_t)plen);
    if (ll_buf_append(out, prefix, sizeof(prefix)) != 0 || ll_buf_append(out, body, plen) != 0) {
        ll_errmsg(err, errlen, "out of memory framing a message of %zu bytes", plen);
        goto out;
    }
    rc = 0;
out:
    free(packed);
    return rc;
}

void ll_grpc_reader_init(ll_grpc_reader *r, uint64_t max, int gzip) {
    memset(r, 0, sizeof(*r));
    r->max = max;
    r->gzip = gzip;
}

void ll_grpc_reader_free(ll_grpc_reader *r) { ll_buf_free(&r->pending); }

static uint32_t prefix_len(const unsigned char *p) {
    return (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
}

/* One whole message (prefix at p): checked, inflated when compressed, handed to fn. */
static int deliver(ll_grpc_reader *r, const unsigned char *p, ll_grpc_message_fn *fn, void *ud, int *status,
                   char *err, size_t errlen) {
    uint32_t len = prefix_len(p);
    const char *msg = (const char *)p + LL_GRPC_PREFIX;
    if (p[0] == 0) {
        r->messages++;
        return fn(msg, len, ud);
    }
    if (p[0] != 1 || !r->gzip) {
        *status = LL_GRPC_INTERNAL;
        ll_errmsg(err, errlen, p[0] == 1 ? "a compressed message, but the response named no grpc-encoding"
                                         : "a message with flag byte %u (expected 0 or 1)", p[0]);
        return -1;
    }
    ll_body_decoder *d = ll_body_decoder_new(LL_DECODE_GZIP);
    ll_buf plain = {0};
    const char *why = NULL;
    int rc = d ? ll_body_decoder_feed(d, msg, len, &plain, (int64_t)r->max, &why) : -1;
    if (rc == 0) rc = ll_body_decoder_finish(d, &why);
    if (rc == -2) {
        *status = LL_GRPC_RESOURCE_EXHAUSTED;
        ll_errmsg(err, errlen, "a compressed message inflates to over %llu bytes (max_receive_size)",
                  (unsigned long long)r->max);
        rc = -1;
    } else if (rc != 0) {
        *status = LL_GRPC_INTERNAL;
        ll_errmsg(err, errlen, "a gzip-compressed message does not inflate (%s)", why ? why : "out of memory");
        rc = -1;
    } else {
        r->messages++;
        rc = fn(plain.p ? plain.p : "", plain.len, ud);
    }
    ll_body_decoder_free(d);
    ll_buf_free(&plain);
    return rc;
}

int ll_grpc_reader_feed(ll_grpc_reader *r, const char *p, size_t n, ll_grpc_message_fn *fn, void *ud, int *status,
                        char *err, size_t errlen) {
    *status = LL_GRPC_OK;
    while (n > 0) {
        /* the whole message is in p: no copy */
        if (r->pending.len == 0 && n >= LL_GRPC_PREFIX) {
            uint32_t len = prefix_len((const unsigned char *)p);
            if (len > r->max) goto too_big;
            if (n - LL_GRPC_PREFIX >= len) {
                int rc = deliver(r, (const unsigned char *)p, fn, ud, status, err, errlen);
                if (rc != 0) return rc;
                p += LL_GRPC_PREFIX + len, n -= LL_GRPC_PREFIX + len;
                continue;
            }
        }
        /* else gather it in pending: its prefix first, then the rest */
        size_t want = LL_GRPC_PREFIX;
        if (r->pending.len >= LL_GRPC_PREFIX) want += prefix_len((const unsigned char *)r->pending.p);
        size_t take = want - r->pending.len < n ? want - r->pending.len : n;
        if (ll_buf_append(&r->pending, p, take) != 0) {
            *status = LL_GRPC_RESOURCE_EXHAUSTED;
            ll_errmsg(err, errlen, "out of memory receiving a message");
            return -1;
        }
        p += take, n -= take;
        if (r->pending.len == LL_GRPC_PREFIX && prefix_len((const unsigned char *)r->pending.p) > r->max) goto too_big;
        if (r->pending.len < LL_GRPC_PREFIX ||
            r->pending.len < LL_GRPC_PREFIX + prefix_len((const unsigned char *)r->pending.p))
            continue;
        int rc = deliver(r, (const unsigned char *)r->pending.p, fn, ud, status, err, errlen);
        r->pending.len = 0;
        if (rc != 0) return rc;
    }
    return 0;
too_big:
    *status = LL_GRPC_RESOURCE_EXHAUSTED;
    ll_errmsg(err, errlen, "a message of %u bytes is over max_receive_size (%llu)",
              prefix_len(r->pending.len >= LL_GRPC_PREFIX ? (const unsigned char *)r->pending.p
                                                          : (const unsigned char *)p),
              (unsigned long long)r->max);
    return -1;
}

int ll_grpc_reader_end(const ll_grpc_reader *r, char *err, size_t errlen) {
    if (r->pending.len == 0) return 0;
    ll_errmsg(err, errlen, "the response ended inside a message (%zu bytes of it came)", r->pending.len);
    return -1;
}

void ll_grpc_timeout(uint64_t us, char *buf, size_t len) {
    /* the finest unit whose count fits in 8 digits, rounded up */
    static const struct {
        char unit;
        uint64_t us;
    } UNITS[] = {{'u', 1}, {'m', 1000}, {'S', 1000000}, {'M', 60000000}, {'H', 3600000000ull}};
    for (size_t i = 0; i < sizeof(UNITS) / sizeof(UNITS[0]); i++) {
        uint64_t n = (us + UNITS[i].us - 1) / UNITS[i].us;
        if (n <= 99999999) {
            snprintf(buf, len, "%llu%c", (unsigned long long)n, UNITS[i].unit);
            return;
        }
    }
    snprintf(buf, len, "99999999H");
}

static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ll_grpc_message_decode(const char *value, size_t len, ll_buf *out) {
    for (size_t i = 0; i < len; i++) {
        char c = value[i];
        if (c == '%' && i + 2 < len && hex(value[i + 1]) >= 0 && hex(value[i + 2]) >= 0) {
            c = (char)(hex(value[i + 1]) << 4 | hex(value[i + 2]));
            i += 2;
        }
        if (ll_buf_append(out, &c, 1) != 0) return -1;
    }
    return 0;
}
