/* test_sse_parse.c -- the event-stream parser (sse_parse.c) against the
 * WHATWG rules: data lines joined with "\n", event and id fields, the last
 * event ID kept across events, retry, comments, CRLF/CR/LF endings (a CRLF
 * split across reads), a BOM (split too), a field without a colon, a
 * space after the colon taken once, an event without data not dispatched,
 * a stream ending mid-event; the counted errors (unknown field, bad retry,
 * an event over the bound, which drops it alone); a stop from the sink;
 * and every input fed whole, one byte at a time and in random pieces
 * giving the same events. */
/* links: ll_http */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse_parse.h"
#include "test_util.h"

/* what the sink saw, as text: "name|id|last_id|data;" per event, "!" per error */
typedef struct seen {
    char out[4096];
    size_t len;
    int stop_after; /* events; 0: never stop */
    int nevents;
} seen;

static void put(seen *s, const char *p, size_t n) {
    if (s->len + n >= sizeof(s->out)) n = sizeof(s->out) - 1 - s->len;
    memcpy(s->out + s->len, p, n);
    s->len += n;
    s->out[s->len] = 0;
}

static int on_event(void *ud, const ll_sse_event *e) {
    seen *s = ud;
    put(s, e->name, e->name_len);
    put(s, "|", 1);
    put(s, e->id, e->id_len);
    put(s, "|", 1);
    put(s, e->last_id, e->last_id_len);
    put(s, "|", 1);
    put(s, e->data, e->data_len);
    put(s, ";", 1);
    s->nevents++;
    return s->stop_after && s->nevents >= s->stop_after;
}

static int on_error(void *ud, const char *what) {
    (void)what;
    put(ud, "!", 1);
    return 0;
}

/* Parses in in pieces: piece 0 whole, 1 one byte at a time, -1 random. */
static void run(const char *in, size_t n, int piece, size_t max, seen *s, ll_sse_parse *p) {
    ll_sse_sink sink = {on_event, on_error, s};
    ll_sse_parse_init(p, &sink, max);
    size_t at = 0;
    while (at < n) {
        size_t k = piece == 0 ? n - at : piece == 1 ? 1 : 1 + (size_t)(tu_rand() % 7);
        if (k > n - at) k = n - at;
        if (ll_sse_parse_feed(p, in + at, k) != 0) break;
        at += k;
    }
}

static void expect(const char *what, const char *in, size_t max, const char *want) {
    size_t n = strlen(in);
    for (int piece = 0; piece < 3; piece++) {
        seen s = {.len = 0};
        ll_sse_parse p;
        run(in, n, piece == 2 ? -1 : piece, max, &s, &p);
        tu_check(strcmp(s.out, want) == 0, "%s (%s): got '%s', want '%s'", what,
                 piece == 0 ? "whole" : piece == 1 ? "byte by byte" : "random pieces", s.out, want);
        ll_sse_parse_free(&p);
    }
}

int main(void) {
    expect("one event", "data: hello\n\n", 0, "message|||hello;");
    expect("data lines joined", "data: a\ndata: b\ndata\n\n", 0, "message|||a\nb\n;");
    expect("named, with an id", "event: tick\nid: 7\ndata: x\n\n", 0, "tick|7|7|x;");
    expect("the last id is kept, the own id not", "id: 1\ndata: a\n\ndata: b\n\n", 0, "message|1|1|a;message||1|b;");
    expect("an empty id resets the last one", "id: 1\ndata: a\n\nid\ndata: b\n\n", 0, "message|1|1|a;message|||b;");
    expect("CRLF", "event: e\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", 0, "e|||1;message|||2;");
    expect("CR alone", "data: 1\rdata: 2\r\r", 0, "message|||1\n2;");
    expect("mixed endings", "data: 1\r\n\ndata: 2\r\rdata: 3\n\r\n", 0, "message|||1;message|||2;message|||3;");
    expect("a BOM", "\xEF\xBB\xBF" "data: b\n\n", 0, "message|||b;");
    expect("not a BOM", "\xEF\xBB" "data: b\n\n", 0, "!");
    expect("comments", ": hi\n:\ndata: c\n: between\n\n", 0, "message|||c;");
    expect("one space taken", "data:  two\ndata:none\n\n", 0, "message||| two\nnone;");
    expect("no data: nothing", "event: e\nid: 3\n\ndata: d\n\n", 0, "message||3|d;");
    expect("the event name does not carry over", "event: e\ndata: 1\n\ndata: 2\n\n", 0, "e|||1;message|||2;");
    expect("empty data is an event", "data\n\n", 0, "message|||;");
    expect("an unfinished event is dropped", "data: a\n\ndata: b\n", 0, "message|||a;");
    expect("an unknown field: counted, ignored", "foo: bar\ndata: a\n\n", 0, "!message|||a;");
    expect("a bad retry: counted", "retry: 1x\ndata: a\n\n", 0, "!message|||a;");
    expect("over the bound: dropped alone", "data: 0123456789abcdef\n\ndata: ok\n\n", 16, "!message|||ok;");
    expect("a long line over the bound", "data: short\ndata: 0123456789abcdef0123\ndata: x\n\ndata: ok\n\n", 16,
           "!message|||ok;");

    /* retry and the parse's counts */
    ll_sse_parse p;
    seen s = {.len = 0};
    const char *in = "retry: 2500\ndata: a\n\nretry: x\nfoo\ndata: b\n\n";
    run(in, strlen(in), 0, 0, &s, &p);
    tu_check(p.retry_ms == 2500, "retry: 2500 kept (got %lld)", (long long)p.retry_ms);
    tu_check(p.events == 2 && p.errors == 2, "2 events, 2 errors (got %llu, %llu)", (unsigned long long)p.events,
             (unsigned long long)p.errors);
    /* a reconnection keeps the last id and the retry, drops the partial event */
    const char *more = "id: 9\ndata: c\n\ndata: half";
    ll_sse_parse_feed(&p, more, strlen(more));
    ll_sse_parse_restart(&p);
    s.len = 0;
    s.out[0] = 0;
    ll_sse_parse_feed(&p, "data: d\n\n", 9);
    tu_check(strcmp(s.out, "message||9|d;") == 0, "restart: the last id kept, the half event gone (got '%s')", s.out);
    tu_check(p.retry_ms == 2500, "restart: retry kept");
    ll_sse_parse_free(&p);

    /* a sink that stops: the rest is not read */
    seen st = {.len = 0, .stop_after = 1};
    ll_sse_sink sink = {on_event, on_error, &st};
    ll_sse_parse_init(&p, &sink, 0);
    const char *two = "data: 1\n\ndata: 2\n\n";
    int rc = ll_sse_parse_feed(&p, two, strlen(two));
    tu_check(rc == 1 && st.nevents == 1, "stop: feed returns 1 after the first event (rc %d, %d events)", rc,
             st.nevents);
    ll_sse_parse_free(&p);

    /* a big event within the bound, in random pieces */
    size_t big = 200000;
    char *b = malloc(big + 32);
    memcpy(b, "data: ", 6);
    for (size_t i = 6; i < big; i++) b[i] = (char)('a' + i % 26);
    memcpy(b + big, "\r\n\r\n", 5);
    seen sb = {.len = 0};
    run(b, big + 4, -1, 0, &sb, &p);
    tu_check(p.events == 1 && p.errors == 0, "a 200 kB event in pieces: one event");
    ll_sse_parse_free(&p);
    free(b);
    return tu_summary();
}
