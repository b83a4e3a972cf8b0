/* fuzz_sse.c -- libFuzzer target for src/core/http/sse_parse.c, what a
 * server's event stream controls: the input is fed whole and then again
 * in pieces whose sizes the input's first byte picks (CRLF and BOMs split
 * across reads), with a small event bound so that the oversize path runs.
 * Checks that both feedings give the same events and errors, that no
 * event goes over the bound, that names and ids have no CR or LF, and
 * that a retry stays within a day. */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "sse_parse.h"

#define MAX_EVENT 256

typedef struct tally {
    uint64_t hash;
    unsigned events, errors;
} tally;

static uint64_t mix(uint64_t h, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

static int on_event(void *ud, const ll_sse_event *e) {
    tally *t = ud;
    CHECK(e->data_len + e->id_len <= MAX_EVENT && e->name_len <= MAX_EVENT); /* a default name is "message" */
    CHECK(!memchr(e->name, '\r', e->name_len) && !memchr(e->name, '\n', e->name_len));
    CHECK(!memchr(e->id, '\n', e->id_len) && !memchr(e->id, 0, e->id_len));
    CHECK(!memchr(e->last_id, '\r', e->last_id_len));
    t->hash = mix(mix(mix(mix(t->hash, e->name, e->name_len), e->id, e->id_len), e->last_id, e->last_id_len), e->data,
                  e->data_len);
    t->events++;
    return 0;
}

static int on_error(void *ud, const char *what) {
    tally *t = ud;
    t->hash = mix(t->hash, what, strlen(what));
    t->errors++;
    return 0;
}

static void parse(const uint8_t *data, size_t size, size_t piece, tally *t, int64_t *retry) {
    ll_sse_sink sink = {on_event, on_error, t};
    ll_sse_parse p;
    ll_sse_parse_init(&p, &sink, MAX_EVENT);
    for (size_t at = 0; at < size;) {
        size_t k = piece && piece < size - at ? piece : size - at;
        CHECK(ll_sse_parse_feed(&p, (const char *)data + at, k) == 0);
        at += k;
    }
    *retry = p.retry_ms;
    CHECK(p.events == t->events && p.errors == t->errors);
    ll_sse_parse_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t piece = 1 + data[0] % 5;
    tally whole = {0, 0, 0}, split = {0, 0, 0};
    int64_t r1, r2;
    parse(data + 1, size - 1, 0, &whole, &r1);
    parse(data + 1, size - 1, piece, &split, &r2);
    CHECK(whole.hash == split.hash && whole.events == split.events && whole.errors == split.errors);
    CHECK(r1 == r2 && r1 >= -1 && r1 <= 86400000);
    return 0;
}
