/* faults.c -- `luaload serve`'s fault injection.
 *
 * Owns: the fault names, parsing --faults ("reset=1%,stall=0.5%") into
 * cumulative chances, the seeded per-thread draw (xorshift64*, one state per
 * worker, no lock), the huge-headers filler, and what each fault puts on the
 * wire instead of the normal response. conn.c draws (once per request) and
 * calls ll_faults_respond; the closing, the RST, the pacing and the stalled
 * connection are conn.c's mechanics, the normal responses routes.c's. */
#include "rng.h"
#include "serve_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PPM_ALL 1000000u                /* 100% in parts per million */
#define SLOW_US 1000000                 /* the slow faults spread over this long */
#define FILLER_LINES 256
#define FILLER_LINE 1024                /* bytes per "X-Filler-NNN: fff...\r\n" line */
#define FAULT_LIST "reset, close-headers, close-body, garbage, slow-headers, slow-body, stall, huge-headers, early-hints"

/* close-headers: the head cut in a header line, no blank line and no
 * Content-Length, as when a server dies while writing it. A client that
 * takes EOF for the end of the head (curl's library and CLI do) sees a
 * 200 with an empty body unless it checks that the head ended. A HEAD
 * response is cut in the status line. */
#define CUT_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: keep-al"
#define CUT_HEAD_HEAD "HTTP/1.1 2"
/* close-body: a complete head promising 1024 bytes, of which 512 follow */
#define CUT_BODY_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1024\r\n\r\n"
#define CUT_BODY_SENT 512
#define GARBAGE "\x00\x01garbage not http\r\n\r\n"
#define EARLY_HINTS "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n"

static const char *const fault_names[FAULT_COUNT] = {
    "none", "reset", "close-headers", "close-body", "garbage", "slow-headers", "slow-body", "stall",
    "huge-headers", "early-hints",
};

static char filler[FILLER_LINES * FILLER_LINE]; /* read-only once serving */

const char *ll_faults_name(int fault) { return fault_names[fault]; }

int ll_faults_lookup(const char *name, size_t n) {
    for (int f = FAULT_NONE + 1; f < FAULT_COUNT; f++)
        if (strlen(fault_names[f]) == n && memcmp(name, fault_names[f], n) == 0) return f;
    return FAULT_NONE;
}

/* ---- --faults ---- */

/* "1%", "0.5%", "100%", "0.0001%": to parts per million. 0 or -1. */
static int parse_percent(const char *s, size_t n, uint32_t *ppm) {
    uint32_t whole = 0, frac = 0, scale = 10000;
    size_t i = 0;
    if (n < 2 || s[n - 1] != '%') return -1;
    n--;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && i < 3; i++) whole = whole * 10 + (uint32_t)(s[i] - '0');
    if (i == 0) return -1;
    if (i < n && s[i] == '.') {
        size_t start = ++i;
        for (; i < n && s[i] >= '0' && s[i] <= '9' && scale > 1; i++) {
            scale /= 10;
            frac += (uint32_t)(s[i] - '0') * scale;
        }
        if (i == start) return -1;
    }
    if (i != n || whole > 100) return -1;
    *ppm = whole * 10000 + frac;
    return *ppm > PPM_ALL ? -1 : 0;
}

int ll_faults_parse(serve_cfg *cfg, const char *spec, char *why, size_t whylen) {
    uint32_t ppm[FAULT_COUNT] = {0};
    int seen[FAULT_COUNT] = {0};
    uint64_t total = 0;
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        int len = (int)(end - p);
        const char *eq = memchr(p, '=', (size_t)len);
        if (!eq) {
            snprintf(why, whylen, "expected NAME=PERCENT items such as reset=1%%,stall=0.5%%, got '%.*s'", len, p);
            return -1;
        }
        int name_len = (int)(eq - p), value_len = (int)(end - eq - 1);
        int f = ll_faults_lookup(p, (size_t)name_len);
        if (f == FAULT_NONE) {
            snprintf(why, whylen, "unknown fault '%.*s' (expected " FAULT_LIST ")", name_len, p);
            return -1;
        }
        if (seen[f]) {
            snprintf(why, whylen, "fault '%s' given twice", fault_names[f]);
            return -1;
        }
        seen[f] = 1;
        if (parse_percent(eq + 1, (size_t)value_len, &ppm[f]) < 0) {
            snprintf(why, whylen, "bad percentage '%.*s' for %s (expected 0%% to 100%%, up to 4 decimals, such as 1%% or 0.5%%)",
                     value_len, eq + 1, fault_names[f]);
            return -1;
        }
        total += ppm[f];
        if (*end == '\0') break;
        p = end + 1;
    }
    if (total > PPM_ALL) {
        snprintf(why, whylen, "the percentages add up to %g%%, more than 100%%", (double)total / 10000);
        return -1;
    }
    uint32_t cum = 0;
    for (int f = FAULT_NONE; f < FAULT_COUNT; f++) {
        cum += ppm[f];
        cfg->fault_cum[f] = cum;
    }
    cfg->faults_on = total > 0;
    return 0;
}

/* ---- the draw ---- */

void ll_faults_seed(worker *w, uint64_t seed, int index) {
    uint64_t x = seed + (uint64_t)index * 0x9E3779B97F4A7C15ull; /* splitmix64's step index times */
    uint64_t z = ll_rng_splitmix64(&x);
    w->rng = z ? z : 1;
}

int ll_faults_draw(worker *w) {
    const uint32_t *cum = w->cfg->fault_cum;
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    uint32_t u = (uint32_t)(((x * 0x2545F4914F6CDD1Dull) >> 32) * PPM_ALL >> 32); /* 0 .. PPM_ALL-1 */
    if (u >= cum[FAULT_COUNT - 1]) return FAULT_NONE;
    int f = FAULT_NONE + 1;
    while (u >= cum[f]) f++;
    return f;
}

/* ---- on the wire ---- */

void ll_faults_init(void) {
    for (int i = 0; i < FILLER_LINES; i++) {
        char *line = filler + (size_t)i * FILLER_LINE;
        int n = snprintf(line, FILLER_LINE, "X-Filler-%03d: ", i);
        memset(line + n, 'f', FILLER_LINE - 2 - (size_t)n);
        memcpy(line + FILLER_LINE - 2, "\r\n", 2);
    }
}

void ll_faults_out_filler(conn *c) { ll_conn_out_bytes(c, filler, sizeof(filler)); }

void ll_faults_respond(conn *c) {
    request *r = &c->req;
    uint64_t before = c->out_pending;
    size_t head;
    switch (r->fault) {
    case FAULT_RESET:
        c->reset = 1;
        c->closing = 1;
        break;
    case FAULT_CLOSE_BODY:
        if (r->head) {
            ll_conn_out_bytes(c, CUT_HEAD_HEAD, sizeof(CUT_HEAD_HEAD) - 1); /* no body to cut */
        } else {
            ll_conn_out_bytes(c, CUT_BODY_HEAD, sizeof(CUT_BODY_HEAD) - 1);
            ll_conn_out_fill(c, CUT_BODY_SENT);
        }
        c->closing = 1;
        break;
    case FAULT_CLOSE_HEADERS:
        if (r->head) ll_conn_out_bytes(c, CUT_HEAD_HEAD, sizeof(CUT_HEAD_HEAD) - 1);
        else ll_conn_out_bytes(c, CUT_HEAD, sizeof(CUT_HEAD) - 1);
        c->closing = 1;
        break;
    case FAULT_GARBAGE:
        ll_conn_out_bytes(c, GARBAGE, sizeof(GARBAGE) - 1);
        c->closing = 1;
        break;
    case FAULT_SLOW_HEADERS:
        head = ll_routes_respond_general(c);
        ll_conn_pace(c, before, head, SLOW_US);
        break;
    case FAULT_SLOW_BODY:
        head = ll_routes_respond_general(c);
        ll_conn_pace(c, before + head, c->out_pending - before - head, SLOW_US);
        break;
    case FAULT_STALL:
        c->stalled = 1;
        c->delay_pending = 1; /* no further request is answered */
        r->keep_alive = 1;    /* and the connection stays open, even for Connection: close */
        break;
    case FAULT_EARLY_HINTS:
        if (!r->http10) ll_conn_out_bytes(c, EARLY_HINTS, sizeof(EARLY_HINTS) - 1); /* no 1xx to 1.0 */
        ll_routes_respond_general(c);
        break;
    default: /* FAULT_HUGE_HEADERS: routes.c adds the filler */
        ll_routes_respond_general(c);
        break;
    }
}
