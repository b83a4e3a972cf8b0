/* test_grpc_wire.c -- grpc_wire.h: messages framed and found again in a
 * body cut at every byte, compressed ones, the limits (max_receive_size,
 * a compressed message that inflates past it), bad flag bytes, a body cut
 * inside a message, grpc-timeout's units and rounding, status names and
 * the grpc-message trailer's percent-encoding. */
/* links: ll_http */
#include <stdlib.h>
#include <string.h>

#include "grpc_wire.h"
#include "test_util.h"

typedef struct got {
    int n;
    char msgs[8][64];
    size_t lens[8];
    int stop_at; /* stop the reader at this message (1-based), 0: never */
} got;

static int on_msg(const char *msg, size_t len, void *ud) {
    got *g = ud;
    if (g->n < 8 && len < 64) {
        memcpy(g->msgs[g->n], msg, len);
        g->lens[g->n] = len;
    }
    g->n++;
    return g->stop_at && g->n == g->stop_at ? 7 : 0;
}

static void test_frames(void) {
    ll_buf body = {0};
    char err[200] = "";
    int rc = ll_grpc_frame(&body, "hello", 5, 0, err, sizeof(err));
    rc |= ll_grpc_frame(&body, "", 0, 0, err, sizeof(err));
    rc |= ll_grpc_frame(&body, "world, squeezed", 15, 1, err, sizeof(err));
    tu_check(rc == 0, "frame: three messages, the last gzip-compressed (%s)", err);
    tu_check(body.len > 10 && memcmp(body.p, "\0\0\0\0\5hello", 10) == 0, "frame: flag 0, length 5 big-endian, the bytes");
    tu_check((unsigned char)body.p[10] == 0 && body.p[14] == 0, "frame: an empty message is a bare prefix");
    tu_check((unsigned char)body.p[15] == 1, "frame: a compressed message has flag 1");
    /* the body cut at every byte, fed one piece after another */
    int all_ok = 1;
    for (size_t cut = 0; cut <= body.len; cut++) {
        ll_grpc_reader r;
        ll_grpc_reader_init(&r, 1024, 1);
        got g = {0};
        int status = -1;
        rc = ll_grpc_reader_feed(&r, body.p, cut, on_msg, &g, &status, err, sizeof(err));
        rc |= ll_grpc_reader_feed(&r, body.p + cut, body.len - cut, on_msg, &g, &status, err, sizeof(err));
        rc |= ll_grpc_reader_end(&r, err, sizeof(err));
        if (rc != 0 || g.n != 3 || g.lens[0] != 5 || memcmp(g.msgs[0], "hello", 5) != 0 || g.lens[1] != 0 ||
            g.lens[2] != 15 || memcmp(g.msgs[2], "world, squeezed", 15) != 0 || r.messages != 3)
            all_ok = 0;
        ll_grpc_reader_free(&r);
    }
    tu_check(all_ok, "reader: the three messages, wherever the body is cut");
    /* one byte at a time */
    ll_grpc_reader r;
    ll_grpc_reader_init(&r, 1024, 1);
    got g = {0};
    int status = 0;
    rc = 0;
    for (size_t i = 0; i < body.len; i++) rc |= ll_grpc_reader_feed(&r, body.p + i, 1, on_msg, &g, &status, err, sizeof(err));
    tu_check(rc == 0 && g.n == 3, "reader: one byte at a time (%d)", g.n);
    ll_grpc_reader_free(&r);
    /* the callback stops it */
    ll_grpc_reader_init(&r, 1024, 1);
    got stop = {.stop_at = 1};
    rc = ll_grpc_reader_feed(&r, body.p, body.len, on_msg, &stop, &status, err, sizeof(err));
    tu_check(rc == 7 && stop.n == 1, "reader: stops with what the callback returned (%d, %d)", rc, stop.n);
    ll_grpc_reader_free(&r);
    /* cut inside a message */
    ll_grpc_reader_init(&r, 1024, 1);
    got h = {0};
    ll_grpc_reader_feed(&r, body.p, 7, on_msg, &h, &status, err, sizeof(err));
    rc = ll_grpc_reader_end(&r, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "ended inside a message"), "reader: a body cut inside a message (%s)", err);
    ll_grpc_reader_free(&r);
    ll_buf_free(&body);
}

static void test_limits(void) {
    char err[200] = "";
    int status = 0;
    ll_buf body = {0};
    char big[100];
    memset(big, 'a', sizeof(big));
    ll_grpc_frame(&body, big, sizeof(big), 0, err, sizeof(err));
    ll_grpc_reader r;
    ll_grpc_reader_init(&r, 99, 0);
    got g = {0};
    int rc = ll_grpc_reader_feed(&r, body.p, 3, on_msg, &g, &status, err, sizeof(err));
    rc |= ll_grpc_reader_feed(&r, body.p + 3, body.len - 3, on_msg, &g, &status, err, sizeof(err));
    tu_check(rc == -1 && status == LL_GRPC_RESOURCE_EXHAUSTED && strstr(err, "100 bytes is over max_receive_size (99)"),
             "limit: a message over max_receive_size is refused by its prefix (%s)", err);
    tu_check(r.pending.len <= LL_GRPC_PREFIX, "limit: nothing of it was kept (%zu)", r.pending.len);
    ll_grpc_reader_free(&r);
    /* compressed: small on the wire, over the limit once inflated */
    ll_buf packed = {0};
    char zeros[5000] = {0};
    ll_grpc_frame(&packed, zeros, sizeof(zeros), 1, err, sizeof(err));
    ll_grpc_reader_init(&r, 1000, 1);
    rc = ll_grpc_reader_feed(&r, packed.p, packed.len, on_msg, &g, &status, err, sizeof(err));
    tu_check(packed.len < 1000 && rc == -1 && status == LL_GRPC_RESOURCE_EXHAUSTED && strstr(err, "inflates to over 1000"),
             "limit: a compressed message that inflates past it (%s)", err);
    ll_grpc_reader_free(&r);
    /* compressed, but the response named no grpc-encoding */
    ll_grpc_reader_init(&r, 100000, 0);
    rc = ll_grpc_reader_feed(&r, packed.p, packed.len, on_msg, &g, &status, err, sizeof(err));
    tu_check(rc == -1 && status == LL_GRPC_INTERNAL && strstr(err, "no grpc-encoding"), "reader: compressed without grpc-encoding (%s)", err);
    ll_grpc_reader_free(&r);
    /* flag 1 and bytes that are no gzip */
    ll_grpc_reader_init(&r, 100000, 1);
    rc = ll_grpc_reader_feed(&r, "\1\0\0\0\3abc", 8, on_msg, &g, &status, err, sizeof(err));
    tu_check(rc == -1 && status == LL_GRPC_INTERNAL && strstr(err, "does not inflate"), "reader: corrupt gzip (%s)", err);
    ll_grpc_reader_free(&r);
    ll_grpc_reader_init(&r, 100000, 1);
    rc = ll_grpc_reader_feed(&r, "\2\0\0\0\0", 5, on_msg, &g, &status, err, sizeof(err));
    tu_check(rc == -1 && status == LL_GRPC_INTERNAL && strstr(err, "flag byte 2"), "reader: a flag byte past 1 (%s)", err);
    ll_grpc_reader_free(&r);
    ll_buf_free(&body);
    ll_buf_free(&packed);
}

static void test_headers(void) {
    char b[16];
    ll_grpc_timeout(0, b, sizeof(b));
    tu_check(strcmp(b, "0u") == 0, "timeout: 0 (%s)", b);
    ll_grpc_timeout(1500, b, sizeof(b));
    tu_check(strcmp(b, "1500u") == 0, "timeout: 1.5 ms in microseconds (%s)", b);
    ll_grpc_timeout(120000000, b, sizeof(b));
    tu_check(strcmp(b, "120000m") == 0, "timeout: 2 minutes in milliseconds, 8 digits at most (%s)", b);
    ll_grpc_timeout(100000000001ull, b, sizeof(b));
    tu_check(strcmp(b, "100001S") == 0, "timeout: rounded up, never less than asked (%s)", b);
    tu_check(strcmp(ll_grpc_status_name(0), "OK") == 0 && strcmp(ll_grpc_status_name(1), "Canceled") == 0 &&
                 strcmp(ll_grpc_status_name(16), "Unauthenticated") == 0 && ll_grpc_status_name(17) == NULL,
             "status: k6's names, 0 to 16");
    tu_check(ll_grpc_status_parse("14", 2) == 14 && ll_grpc_status_parse("", 0) == -1 &&
                 ll_grpc_status_parse("1x", 2) == -1 && ll_grpc_status_parse("99", 2) == 99,
             "status: grpc-status parsed, a code past 16 kept as sent");
    ll_buf m = {0};
    const char *v = "caf%C3%A9 not found%2"; /* a cut-short escape kept */
    ll_grpc_message_decode(v, strlen(v), &m);
    tu_check(m.p && strcmp(m.p, "caf\xc3\xa9 not found%2") == 0, "grpc-message: percent-decoded (%s)", m.p ? m.p : "");
    ll_buf_free(&m);
}

int main(void) {
    test_frames();
    test_limits();
    test_headers();
    return tu_summary();
}
