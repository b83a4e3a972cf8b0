/* sse.c -- `luaload serve`'s server-sent events route, /sse.
 *
 * Owns: the head of the event stream (text/event-stream, no-cache;
 * chunked over HTTP/1.1, so the connection stays open for the next request
 * and a client can tell a stream that ended from one cut off; over
 * HTTP/1.0 the stream ends with the connection), the text of each event,
 * and stepping through the stream: the events that are due are queued on
 * the connection's output (conn.c sends them), the next one waits on the
 * connection's timer (interval apart, on a fixed schedule from the first),
 * or for the output to drain below OUT_HIGH when interval is 0. Event K
 * (1..n) is
 *
 *   id: K
 *   event: NAME          (with event=NAME)
 *   retry: MS            (the first event, with retry=MS)
 *   data: event K
 *   data: line 2         (lines=L: the data lines 2..L)
 *   (a blank line)
 *
 * so a client joins the data lines into "event K\nline 2\n...". The
 * parameters are routes.c's (stream_params); the request waits in c->req
 * until the stream is over. */
#include "serve_internal.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EVENT_TEXT_MAX 4096 /* an event with SSE_LINES_MAX lines and the longest name fits */

void ll_sse_begin(conn *c) {
    request *r = &c->req;
    char head[256];
    r->sp.chunked = !r->http10;
    if (r->http10) r->keep_alive = 0; /* the stream ends with the connection */
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n%s%s\r\n",
                     r->sp.chunked ? "Transfer-Encoding: chunked\r\n" : "",
                     !r->keep_alive ? "Connection: close\r\n" : "");
    r->head_len = (size_t)n;
    ll_conn_out_bytes(c, head, (size_t)n);
    if (r->head) return; /* the head alone: no stream */
    ll_stats_add(&c->w->stats.sse_streams, 1);
    c->streaming = 1;
}

/* Appends "field: value\n" at b + *len (EVENT_TEXT_MAX bytes in all; the
 * limits on lines and the event name keep an event well inside). */
static void put_line(char *b, size_t *len, const char *field, const char *value) {
    size_t f = strlen(field), v = strlen(value);
    if (*len + f + 2 + v + 1 >= EVENT_TEXT_MAX) return; /* room for the blank line */
    memcpy(b + *len, field, f);
    memcpy(b + *len + f, ": ", 2);
    memcpy(b + *len + f + 2, value, v);
    b[*len + f + 2 + v] = '\n';
    *len += f + 2 + v + 1;
}

/* Queues event k, as one chunk when chunked. */
static void queue_event(conn *c, uint64_t k) {
    const stream_params *sp = &c->req.sp;
    char b[EVENT_TEXT_MAX], text[48];
    size_t len = 0;
    snprintf(text, sizeof(text), "%" PRIu64, k);
    put_line(b, &len, "id", text);
    if (sp->event[0]) put_line(b, &len, "event", sp->event);
    if (sp->has_retry && k == 1) {
        snprintf(text, sizeof(text), "%" PRIu64, sp->retry_ms);
        put_line(b, &len, "retry", text);
    }
    snprintf(text, sizeof(text), "event %" PRIu64, k);
    put_line(b, &len, "data", text);
    for (int j = 2; j <= sp->lines; j++) {
        snprintf(text, sizeof(text), "line %d", j);
        put_line(b, &len, "data", text);
    }
    b[len++] = '\n';
    if (sp->chunked) {
        int n = snprintf(text, sizeof(text), "%zx\r\n", len);
        ll_conn_out_bytes(c, text, (size_t)n);
    }
    ll_conn_out_bytes(c, b, len);
    if (sp->chunked) ll_conn_out_bytes(c, "\r\n", 2);
    ll_stats_add(&c->w->stats.sse_events, 1);
}

int ll_sse_step(conn *c) {
    stream_params *sp = &c->req.sp;
    uint64_t now = ll_loop_now(c->w->loop);
    while (sp->sent < sp->n) {
        if (c->out_pending >= OUT_HIGH) return SSE_FULL;
        if (sp->sent > 0 && sp->interval_us && now < sp->next_ns) {
            ll_loop_timer_at(c->w->loop, &c->timer, sp->next_ns);
            return SSE_WAIT;
        }
        queue_event(c, sp->sent + 1);
        sp->next_ns = (sp->sent == 0 ? now : sp->next_ns) + sp->interval_us * 1000;
        sp->sent++;
    }
    if (sp->chunked) ll_conn_out_bytes(c, "0\r\n\r\n", 5);
    c->streaming = 0;
    return SSE_DONE;
}
