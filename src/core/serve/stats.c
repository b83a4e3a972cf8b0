/* stats.c -- `luaload serve`'s request accounting, as JSON.
 *
 * Owns: summing every worker's counters (serve_stats, which the owning
 * thread bumps with ll_stats_add) with relaxed loads, and the JSON object
 * GET /stats returns and the exit line prints:
 *   {"requests":N,"bytes_received":N,"bytes_sent":N,
 *    "routes":{"default":N,...},"faults":{"reset":N,...},
 *    "methods":{"GET":N,...},"connections":N,"reused":N,
 *    "websocket":{"sessions":N,"messages_received":N,"messages_sent":N},
 *    "sse":{"streams":N,"events":N},"http2":{"connections":N,"streams":N},
 *    "grpc":{"messages_received":N,"messages_sent":N},"headers":{...}}
 * with only the nonzero routes, faults and methods listed. requests is the
 * sum of the routes; /stats itself is in none of them. A WebSocket
 * upgrade and an /sse request are one request each (routes ws_echo,
 * ws_send, sse; a refused upgrade is an "error"), however long they last;
 * what happens after is in "websocket" and "sse". An HTTP/2 stream's
 * request is one request too (route grpc, or error for the 404 to what
 * is no gRPC call); "http2" and "grpc" count the rest. The "headers" object is
 * headers.c's. */
#include "serve_internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

typedef struct stats_sum {
    uint64_t requests, bytes_received, bytes_sent;
    uint64_t routes[ROUTE_COUNT];
    uint64_t faults[FAULT_COUNT];
    uint64_t methods[METHOD_COUNT];
    uint64_t connections, reused;
    uint64_t ws_sessions, ws_msgs_received, ws_msgs_sent, sse_streams, sse_events;
    uint64_t h2_connections, h2_streams, grpc_msgs_received, grpc_msgs_sent;
} stats_sum;

static uint64_t load(const _Atomic uint64_t *counter) {
    return atomic_load_explicit(counter, memory_order_relaxed);
}

static void sum_workers(stats_sum *s, const worker *ws, int n) {
    *s = (stats_sum){0};
    for (int i = 0; i < n; i++) {
        const serve_stats *st = &ws[i].stats;
        s->bytes_received += load(&st->bytes_received);
        s->bytes_sent += load(&st->bytes_sent);
        for (int r = 0; r < ROUTE_COUNT; r++) s->routes[r] += load(&st->routes[r]);
        for (int f = 0; f < FAULT_COUNT; f++) s->faults[f] += load(&st->faults[f]);
        for (int m = 0; m < METHOD_COUNT; m++) s->methods[m] += load(&st->methods[m]);
        s->connections += load(&st->connections);
        s->reused += load(&st->reused);
        s->ws_sessions += load(&st->ws_sessions);
        s->ws_msgs_received += load(&st->ws_msgs_received);
        s->ws_msgs_sent += load(&st->ws_msgs_sent);
        s->sse_streams += load(&st->sse_streams);
        s->sse_events += load(&st->sse_events);
        s->h2_connections += load(&st->h2_connections);
        s->h2_streams += load(&st->h2_streams);
        s->grpc_msgs_received += load(&st->grpc_msgs_received);
        s->grpc_msgs_sent += load(&st->grpc_msgs_sent);
    }
    s->routes[ROUTE_STATS] = 0;
    for (int r = 0; r < ROUTE_COUNT; r++) s->requests += s->routes[r];
}

/* ,"name":N (no comma before the first) */
static void put_count(ll_buf *b, int first, const char *name, uint64_t v) {
    char num[32];
    snprintf(num, sizeof(num), "%" PRIu64, v);
    if (!first) ll_buf_puts(b, ",");
    ll_buf_puts(b, "\"");
    ll_buf_puts(b, name);
    ll_buf_puts(b, "\":");
    ll_buf_puts(b, num);
}

void ll_stats_json(ll_buf *b, const worker *ws, int n) {
    stats_sum s;
    int first = 1;
    sum_workers(&s, ws, n);
    ll_buf_puts(b, "{");
    put_count(b, 1, "requests", s.requests);
    put_count(b, 0, "bytes_received", s.bytes_received);
    put_count(b, 0, "bytes_sent", s.bytes_sent);
    ll_buf_puts(b, ",\"routes\":{");
    for (int r = 0; r < ROUTE_COUNT; r++) {
        if (s.routes[r] == 0) continue;
        put_count(b, first, ll_routes_name(r), s.routes[r]);
        first = 0;
    }
    ll_buf_puts(b, "},\"faults\":{");
    first = 1;
    for (int f = FAULT_NONE + 1; f < FAULT_COUNT; f++) {
        if (s.faults[f] == 0) continue;
        put_count(b, first, ll_faults_name(f), s.faults[f]);
        first = 0;
    }
    ll_buf_puts(b, "},\"methods\":{");
    first = 1;
    for (int i = 1; i <= METHOD_COUNT; i++) { /* METHOD_OTHER ("other") last */
        int m = i % METHOD_COUNT;
        if (s.methods[m] == 0) continue;
        put_count(b, first, ll_request_method_name(m), s.methods[m]);
        first = 0;
    }
    ll_buf_puts(b, "}");
    put_count(b, 0, "connections", s.connections);
    put_count(b, 0, "reused", s.reused);
    ll_buf_puts(b, ",\"websocket\":{");
    put_count(b, 1, "sessions", s.ws_sessions);
    put_count(b, 0, "messages_received", s.ws_msgs_received);
    put_count(b, 0, "messages_sent", s.ws_msgs_sent);
    ll_buf_puts(b, "},\"sse\":{");
    put_count(b, 1, "streams", s.sse_streams);
    put_count(b, 0, "events", s.sse_events);
    ll_buf_puts(b, "},\"http2\":{");
    put_count(b, 1, "connections", s.h2_connections);
    put_count(b, 0, "streams", s.h2_streams);
    ll_buf_puts(b, "},\"grpc\":{");
    put_count(b, 1, "messages_received", s.grpc_msgs_received);
    put_count(b, 0, "messages_sent", s.grpc_msgs_sent);
    ll_buf_puts(b, "}");
    ll_buf_puts(b, ",\"headers\":");
    ll_headers_json(b, ws, n);
    ll_buf_puts(b, "}");
}
