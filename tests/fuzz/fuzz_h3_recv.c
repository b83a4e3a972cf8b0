/* fuzz_h3_recv.c -- libFuzzer target for the native transport's UDP
 * receive path: what reaches an HTTP/3 connection (src/core/http/
 * h3_session.c on ngtcp2 and GnuTLS) from the network while its handshake
 * is under way. The input is a sequence of datagrams, each a 2-byte
 * big-endian length and its bytes; a new client connection (its Initial
 * sent first) takes them in turn, sending what it has after each and
 * running its timers as the fake clock moves. Checks that a failed
 * connection stays failed, that its batches of datagrams stay within the
 * buffer and their count, and that no stream callback runs (no request was
 * made). Version negotiation, Retry, stateless resets, coalesced and
 * truncated packets are among what the fuzzer reaches; a forged Initial
 * cannot be decrypted, so ngtcp2 drops most of it, as it should. */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "h3_session.h"
#include "quic_tls.h"

static int on_header(void *ud, const char *n, size_t nl, const char *v, size_t vl) {
    (void)ud, (void)n, (void)nl, (void)v, (void)vl;
    CHECK(0);
    return -1;
}
static int on_headers_done(void *ud, int final) {
    (void)ud, (void)final;
    CHECK(0);
    return -1;
}
static int on_data(void *ud, const char *p, size_t n) {
    (void)ud, (void)p, (void)n;
    CHECK(0);
    return -1;
}
static void on_sent(void *ud) {
    (void)ud;
    CHECK(0);
}
static void on_close(void *ud, uint32_t code) {
    (void)ud, (void)code;
    CHECK(0);
}
static ssize_t read_body(void *ud, char *buf, size_t n) {
    (void)ud, (void)buf, (void)n;
    CHECK(0);
    return -1;
}

static const ll_h2_stream_ops ops = {on_header, on_headers_done, on_data, on_sent, on_close, read_body};

static ll_quic_tls *tls_ctx(void) {
    static ll_quic_tls *t;
    if (!t) {
        ll_client_opts o;
        memset(&o, 0, sizeof(o));
        o.insecure_skip_verify = 1;
        char err[256];
        t = ll_quic_tls_new(&o, err, sizeof(err));
        CHECK(t != NULL);
    }
    return t;
}

/* Sends what h has: the batches checked, their bytes dropped. */
static int drain(ll_h3 *h, uint64_t now) {
    static uint8_t buf[LL_H3_BATCH * 1500];
    for (int round = 0; round < 8; round++) {
        ll_h3_out out = {.buf = buf, .cap = sizeof(buf)};
        if (ll_h3_send(h, &out, now) < 0) return -1;
        CHECK(out.n >= 0 && out.n <= LL_H3_BATCH);
        for (int i = 0; i < out.n; i++) CHECK(out.off[i] + out.len[i] <= out.cap && out.len[i] > 0);
        if (out.n < LL_H3_BATCH) break;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_port = htons(40000)};
    struct sockaddr_in remote = {.sin_family = AF_INET, .sin_port = htons(443)};
    local.sin_addr.s_addr = remote.sin_addr.s_addr = htonl(0x7f000001);
    char err[256];
    uint8_t tp[LL_QUIC_TP_MAX];
    size_t tplen;
    void *s = ll_quic_tls_session(tls_ctx(), "localhost", "localhost:443", 0, tp, &tplen, err, sizeof(err));
    CHECK(s != NULL);
    const char *e = NULL;
    uint64_t now = 1000000000ull;
    ll_h3 *h = ll_h3_new(&ops, s, (struct sockaddr *)&local, sizeof(local), (struct sockaddr *)&remote,
                         sizeof(remote), NULL, now, &e);
    CHECK(h != NULL);
    int dead = drain(h, now) < 0;
    size_t at = 0;
    while (!dead && at + 2 <= size) {
        size_t n = (size_t)data[at] << 8 | data[at + 1];
        at += 2;
        if (n > size - at) n = size - at;
        now += 1000000; /* 1 ms per datagram */
        if (ll_h3_recv(h, data + at, n, now) < 0) dead = 1;
        at += n;
        if (!dead && drain(h, now) < 0) dead = 1;
        if (!dead && ll_h3_expiry(h) <= now && ll_h3_expire(h, now) < 0) dead = 1;
    }
    if (dead) { /* failed for good: nothing more goes in or out */
        CHECK(!ll_h3_alive(h));
        CHECK(ll_h3_recv(h, data, size, now) < 0);
        ll_h3_end kind;
        CHECK(ll_h3_why(h, &kind) != NULL);
    }
    CHECK(!ll_h3_ready(h) || ll_h3_alive(h));
    ll_h3_free(h);
    return 0;
}
