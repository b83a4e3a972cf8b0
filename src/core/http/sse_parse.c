/* sse_parse.c -- a text/event-stream read incrementally (see sse_parse.h):
 * bytes gather into the current line up to its end (CR, LF or CRLF), each
 * line is taken as the WHATWG interpretation says, and a blank line
 * dispatches the event built so far. Every buffer is bounded by max_event. */
#include "sse_parse.h"

#include <string.h>

static const char BOM[3] = {(char)0xEF, (char)0xBB, (char)0xBF};

void ll_sse_parse_init(ll_sse_parse *s, const ll_sse_sink *sink, size_t max_event) {
    memset(s, 0, sizeof(*s));
    s->sink = *sink;
    s->max_event = max_event ? max_event : LL_SSE_MAX_EVENT_DEFAULT;
    s->retry_ms = -1;
}

/* The event being built is dropped (dispatched, or over the bound). */
static void event_reset(ll_sse_parse *s) {
    s->data.len = s->name.len = s->id.len = 0;
    s->has_id = 0;
    s->oversize = 0;
}

void ll_sse_parse_restart(ll_sse_parse *s) {
    event_reset(s);
    s->line.len = 0;
    s->in_line = 0;
    s->bom = 0;
    s->cr = 0;
}

void ll_sse_parse_free(ll_sse_parse *s) {
    ll_buf_free(&s->line);
    ll_buf_free(&s->data);
    ll_buf_free(&s->name);
    ll_buf_free(&s->id);
    ll_buf_free(&s->last_id);
}

static int error(ll_sse_parse *s, const char *what) {
    s->errors++;
    return s->sink.error && s->sink.error(s->sink.ud, what) ? 1 : 0;
}

/* Bytes the event holds so far (its data and name, and the line being read). */
static size_t event_size(const ll_sse_parse *s) { return s->data.len + s->name.len + s->id.len + s->line.len; }

/* A blank line: the event built so far goes out, unless it has no data
 * (the spec's empty data buffer: nothing is dispatched) or went over the
 * bound (a counted error). */
static int dispatch(ll_sse_parse *s) {
    if (s->oversize) {
        event_reset(s);
        return error(s, "an event over the maximum event size (max_event_size)");
    }
    if (s->data.len == 0) {
        event_reset(s);
        return 0;
    }
    ll_sse_event e = {
        .data = s->data.p, .data_len = s->data.len - 1, /* without the last "\n" */
        .name = s->name.len ? s->name.p : "message", .name_len = s->name.len ? s->name.len : 7,
        .id = s->has_id && s->id.len ? s->id.p : "", .id_len = s->has_id ? s->id.len : 0,
        .last_id = s->last_id.len ? s->last_id.p : "", .last_id_len = s->last_id.len,
    };
    s->events++;
    int rc = s->sink.event && s->sink.event(s->sink.ud, &e) ? 1 : 0;
    event_reset(s);
    return rc;
}

static int set(ll_buf *b, const char *v, size_t n) {
    b->len = 0;
    return n ? ll_buf_append(b, v, n) : 0;
}

/* retry: ASCII digits only, else the spec ignores it (counted here) */
static int retry_field(ll_sse_parse *s, const char *v, size_t n) {
    int64_t ms = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return error(s, "a retry: field that is not a number of milliseconds");
        if (ms < 86400000) ms = ms * 10 + (v[i] - '0');
    }
    if (n == 0) return error(s, "a retry: field that is not a number of milliseconds");
    s->retry_ms = ms < 86400000 ? ms : 86400000; /* a day at most */
    return 0;
}

/* One field of the event being built. 0, the sink's stop, or -1. */
static int field(ll_sse_parse *s, const char *f, size_t fn, const char *v, size_t n) {
    int rc = 0;
    if (fn == 4 && memcmp(f, "data", 4) == 0) {
        rc = ll_buf_append(&s->data, v, n) < 0 || ll_buf_append(&s->data, "\n", 1) < 0 ? -1 : 0;
    } else if (fn == 5 && memcmp(f, "event", 5) == 0) {
        rc = set(&s->name, v, n);
    } else if (fn == 2 && memcmp(f, "id", 2) == 0) {
        if (memchr(v, 0, n)) return error(s, "an id: field with a NUL in it");
        rc = set(&s->id, v, n) < 0 || set(&s->last_id, v, n) < 0 ? -1 : 0;
        s->has_id = 1;
    } else if (fn == 5 && memcmp(f, "retry", 5) == 0) {
        return retry_field(s, v, n);
    } else {
        return error(s, "a line with an unknown field (not data, event, id or retry)");
    }
    if (rc < 0) {
        error(s, "out of memory reading the event stream");
        return -1;
    }
    return 0;
}

/* The line in s->line is complete. */
static int line_end(ll_sse_parse *s) {
    const char *l = s->line.p;
    size_t n = s->line.len;
    int had = s->in_line;
    s->line.len = 0; /* l stays valid: nothing appends to line before the next read */
    s->in_line = 0;
    if (!had) return dispatch(s);
    if (s->oversize || l[0] == ':') return 0; /* a comment; or the event is dropped anyway */
    const char *colon = memchr(l, ':', n);
    if (!colon) return field(s, l, n, "", 0);
    size_t fn = (size_t)(colon - l);
    const char *v = colon + 1;
    size_t vn = n - fn - 1;
    if (vn && *v == ' ') v++, vn--;
    return field(s, l, fn, v, vn);
}

/* n bytes of a line (no CR or LF in them), kept while the event stays
 * within its bound. */
static int line_add(ll_sse_parse *s, const char *p, size_t n) {
    s->in_line = 1;
    if (s->oversize) return 0;
    if (event_size(s) + n > s->max_event) {
        s->oversize = 1;
        s->line.len = 0;
        return 0;
    }
    if (ll_buf_append(&s->line, p, n) == 0) return 0;
    error(s, "out of memory reading the event stream");
    return -1;
}

/* The UTF-8 BOM the stream may start with, however it is split; 1 when
 * it took the byte. */
static int bom_take(ll_sse_parse *s, char c) {
    if (c == BOM[s->bom]) {
        if (++s->bom == 3) s->bom = -1;
        return 1;
    }
    int had = s->bom;
    s->bom = -1;
    if (had && line_add(s, BOM, (size_t)had) < 0) return -1; /* not a BOM after all: they were the line's */
    return 0;
}

int ll_sse_parse_feed(ll_sse_parse *s, const char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s->bom >= 0) {
            int took = bom_take(s, p[i]);
            if (took < 0) return -1;
            i += (size_t)took;
            continue;
        }
        char c = p[i];
        if (s->cr && c == '\n') { /* the LF of a CRLF */
            s->cr = 0;
            i++;
            continue;
        }
        s->cr = 0;
        if (c == '\r' || c == '\n') {
            s->cr = c == '\r';
            i++;
            int rc = line_end(s);
            if (rc) return rc < 0 ? -1 : 1;
            continue;
        }
        size_t j = i;
        while (j < n && p[j] != '\r' && p[j] != '\n') j++;
        if (line_add(s, p + i, j - i) < 0) return -1;
        i = j;
    }
    return 0;
}
