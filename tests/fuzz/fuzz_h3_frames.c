/* fuzz_h3_frames.c -- libFuzzer target for the native transport's HTTP/3
 * glue (src/core/http/h3_session.c on nghttp3): the frames and QPACK a
 * misbehaving server sends on its streams, read through this file's
 * callbacks, without QUIC (ll_h3_new_unbound: no handshake to get past).
 * Two requests are submitted (stream 0 without a body, stream 4 with one);
 * the input is a sequence of records, each a selector byte, a length byte
 * and that many bytes:
 *   selector & 7: 0, 1 the request streams 0 and 4; 2, 3, 4 server
 *   unidirectional streams 3, 7, 11 (their first bytes say what they are:
 *   control 0x00, QPACK encoder 0x02, decoder 0x03); 5 QUIC closes
 *   request stream 0 or 4 (the first byte's low bit) with the code in the
 *   second; 6 the owner cancels stream 0; 7 a server uni stream 15.
 *   selector & 8: the bytes are the stream's last (fin).
 * Checks that each stream closes at most once, that no callback reaches a
 * stream after its close (or its cancel), and that a failed session stays
 * failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "h3_session.h"

typedef struct stream {
    int closed, cancelled;
    size_t headers, data;
} stream;

static void live(const stream *s) { CHECK(!s->closed && !s->cancelled); }

static int on_header(void *ud, const char *name, size_t nlen, const char *value, size_t vlen) {
    stream *s = ud;
    live(s);
    CHECK(name && value);
    s->headers += nlen + vlen;
    return s->headers > (64u << 10) ? -1 : 0; /* a header limit: the stream is cancelled */
}

static int on_headers_done(void *ud, int final) {
    (void)final;
    live(ud);
    return 0;
}

static int on_data(void *ud, const char *p, size_t n) {
    stream *s = ud;
    live(s);
    CHECK(p || n == 0);
    s->data += n;
    return s->data > (256u << 10) ? -1 : 0; /* a body limit */
}

static void on_sent(void *ud) { live(ud); }

static void on_close(void *ud, uint32_t code) {
    stream *s = ud;
    (void)code;
    live(s);
    s->closed = 1;
}

static ssize_t read_body(void *ud, char *buf, size_t n) {
    live(ud);
    size_t k = n < 5 ? n : 5;
    memset(buf, 'b', k);
    return (ssize_t)k;
}

static const ll_h2_stream_ops OPS = {on_header, on_headers_done, on_data, on_sent, on_close, read_body};

static const ll_h2_header REQ[] = {
    {":method", "GET", 7, 3, 1},      {":scheme", "https", 7, 5, 1},
    {":authority", "localhost", 10, 9, 1}, {":path", "/", 5, 1, 1},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ll_h3 *h = ll_h3_new_unbound(&OPS);
    CHECK(h);
    stream a = {0}, b = {0};
    int64_t ida = ll_h3_submit(h, REQ, 4, 0, &a), idb = ll_h3_submit(h, REQ, 4, 1, &b);
    CHECK(ida == 0 && idb == 4);
    static const int64_t UNI[] = {3, 7, 11};
    size_t i = 0;
    int failed = 0;
    while (i + 2 <= size) {
        uint8_t sel = data[i], len = data[i + 1];
        i += 2;
        if (len > size - i) len = (uint8_t)(size - i);
        const uint8_t *p = data + i;
        i += len;
        int fin = (sel & 8) != 0, rc = 0, fed = 1;
        switch (sel & 7) {
        case 0: rc = ll_h3_feed(h, 0, p, len, fin); break;
        case 1: rc = ll_h3_feed(h, 4, p, len, fin); break;
        case 2: case 3: case 4: rc = ll_h3_feed(h, UNI[(sel & 7) - 2], p, len, fin); break;
        case 5: rc = ll_h3_feed_close(h, len && (p[0] & 1) ? 4 : 0, len > 1 ? p[1] : 0x100); break;
        case 6:
            if (!a.closed && !a.cancelled) {
                ll_h3_cancel(h, 0);
                a.cancelled = 1;
            }
            fed = 0;
            break;
        default: rc = ll_h3_feed(h, 15, p, len, fin); break;
        }
        if (failed && fed) CHECK(rc < 0); /* a failed session stays failed */
        if (rc < 0) failed = 1;
    }
    ll_h3_free(h); /* no callback from here: a free tells no owner */
    return 0;
}
