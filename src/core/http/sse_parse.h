/* sse_parse.h -- a text/event-stream read as its bytes arrive (the WHATWG
 * HTML "server-sent events" interpretation): lines ended by CRLF, LF or
 * CR (a CRLF split across two reads is one end), a UTF-8 BOM at the start
 * dropped, comments (": ...") skipped, the fields data (lines joined with
 * "\n"), event, id and retry, an event dispatched at a blank line. Bounded:
 * an event whose lines and data go over max_event bytes is dropped and
 * counted as an error, as is a line the spec would ignore (an unknown
 * field, a retry that is not digits, an id with a NUL). Nothing here
 * touches a socket or Lua: the SSE client feeds it what on_chunk got, the
 * fuzzer feeds it anything. */
#ifndef LL_SSE_PARSE_H
#define LL_SSE_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* An event as dispatched; the strings are valid during the callback only
 * (not NUL-terminated: use the lengths). */
typedef struct ll_sse_event {
    const char *data;      /* the data lines joined with "\n" */
    size_t data_len;
    const char *name;      /* the event: field, "message" without one */
    size_t name_len;
    const char *id;        /* this event's own id: field, "" without one */
    size_t id_len;
    const char *last_id;   /* the stream's last event ID (the spec's: kept
                            * from earlier events, what Last-Event-ID sends) */
    size_t last_id_len;
} ll_sse_event;

/* What a parse tells its user: each returns 0 to go on, anything else to
 * stop (ll_sse_parse_feed returns 1 at once, the rest unread). */
typedef struct ll_sse_sink {
    int (*event)(void *ud, const ll_sse_event *e);
    /* a counted error: a static message ("an unknown field in the stream") */
    int (*error)(void *ud, const char *what);
    void *ud;
} ll_sse_sink;

#define LL_SSE_MAX_EVENT_DEFAULT (1u << 20) /* 1 MiB */

typedef struct ll_sse_parse {
    ll_sse_sink sink;
    size_t max_event;    /* bytes of one event's lines and data, at most */
    ll_buf line;         /* the line read so far */
    int in_line;         /* a byte of it came (kept or, over the bound, not) */
    ll_buf data, name, id; /* the event being built */
    ll_buf last_id;      /* the stream's last event ID */
    int has_id;          /* the event being built had an id: field */
    int64_t retry_ms;    /* the last valid retry: field, -1: none yet */
    int bom;             /* BOM bytes matched at the start; -1: past it */
    int cr;              /* the last byte was a CR: an LF right after belongs to it */
    int oversize;        /* the event being built went over max_event: it is dropped */
    uint64_t events, errors; /* dispatched, counted */
} ll_sse_parse;

/* Starts a parse (all zero before: nothing to free yet); max_event 0:
 * LL_SSE_MAX_EVENT_DEFAULT. A reconnection starts a new parse but keeps
 * last_id and retry_ms (ll_sse_parse_restart). */
void ll_sse_parse_init(ll_sse_parse *s, const ll_sse_sink *sink, size_t max_event);
/* A new stream on the same parse (a reconnection): the partial line and
 * event are dropped (an event the stream did not end with a blank line is
 * never dispatched, as the spec says), the last event ID and retry kept. */
void ll_sse_parse_restart(ll_sse_parse *s);
/* Feeds n bytes. Returns 0; 1 when a callback stopped it; -1 when out of
 * memory (counted as an error through the sink first). */
int ll_sse_parse_feed(ll_sse_parse *s, const char *p, size_t n);
void ll_sse_parse_free(ll_sse_parse *s);

#endif
