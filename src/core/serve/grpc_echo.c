/* grpc_echo.c -- `luaload serve`'s gRPC echo: what an HTTP/2 stream that is
 * a gRPC call (h2.c decides) answers.
 *
 * Owns: the request's length-prefixed messages (a flag byte, 0 for an
 * uncompressed message, and a 4-byte big-endian length) checked as they
 * arrive, each whole message handed back as the response's next message
 * at once (a bidirectional stream interleaves: write, get the echo, write
 * again), and the call's end: the trailers grpc-status and grpc-message.
 *
 *   the client ends its stream        grpc-status 0
 *   x-echo-status: N (0..16)          nothing echoed; grpc-status N,
 *                                     grpc-message "echo status N"
 *   a compressed message (flag 1), another flag, the request ending
 *   inside a message                  grpc-status 13 (INTERNAL) at once
 *   a message over GRPC_ECHO_MSG_MAX  grpc-status 8 (RESOURCE_EXHAUSTED)
 *   a :path that is no /Service/Method  grpc-status 12 (UNIMPLEMENTED)
 *   an x-echo-status that is no 0..16   grpc-status 3 (INVALID_ARGUMENT)
 *
 * The bytes live in one buffer per call: [0, ready) whole checked
 * messages, of which [sent, ready) are still to go to nghttp2, then the
 * message still arriving. A message's bytes are copied in once and out
 * once (into nghttp2's frame). The buffer holds at most one partial
 * message (up to GRPC_ECHO_MSG_MAX) beside what is waiting to be sent,
 * which h2.c bounds by not reading while it is OUT_HIGH or more. */
#include "xmalloc.h"
#include "serve_h2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX 5
#define COMPACT_MIN (64 * 1024) /* move the unsent bytes to the front past this much sent */

struct grpc_echo {
    conn *c;
    nghttp2_session *ng;
    int32_t id;
    ll_buf in;
    size_t ready, sent;
    int fixed;            /* x-echo-status's N, or -1 */
    int status;           /* the call's grpc-status, -1 until it is known */
    int deferred;         /* the data provider waits for ll_grpc_echo_* to resume it */
    char message[96];     /* its grpc-message, "" for none */
};

/* The data provider said it had nothing: more is here now. */
static void wake(grpc_echo *g) {
    if (!g->deferred) return;
    g->deferred = 0;
    nghttp2_session_resume_data(g->ng, g->id);
}

/* The call ends with status (and a one-line message): what is whole goes
 * first, what follows is dropped. */
static void finish(grpc_echo *g, int status, const char *message) {
    if (g->status >= 0) return;
    g->status = status;
    snprintf(g->message, sizeof(g->message), "%s", message);
    g->in.len = g->ready;
    wake(g);
}

/* A path /Service/Method: two non-empty names, no other slash. */
static int path_ok(const char *p, size_t n) {
    const char *s = n > 1 && p[0] == '/' ? memchr(p + 1, '/', n - 1) : NULL;
    return s && s > p + 1 && s < p + n - 1 && !memchr(s + 1, '/', (size_t)(p + n - s - 1));
}

grpc_echo *ll_grpc_echo_new(conn *c, nghttp2_session *ng, int32_t id, const char *path, size_t plen,
                            const char *echo_status, size_t slen) {
    grpc_echo *g = ll_xcalloc(1, sizeof(*g));
    uint64_t n = 0;
    g->c = c;
    g->ng = ng;
    g->id = id;
    g->fixed = -1;
    g->status = -1;
    if (echo_status && (ll_request_parse_u64n(echo_status, slen, &n) < 0 || n > 16))
        finish(g, 3, "x-echo-status: expected a status code 0..16");
    else if (echo_status) g->fixed = (int)n;
    if (!path_ok(path, plen)) finish(g, 12, "expected a path /package.Service/Method");
    return g;
}

/* Takes the whole messages after ready; ends the call at a bad prefix. */
static void frame(grpc_echo *g) {
    worker *w = g->c->w;
    char why[96];
    while (g->status < 0 && g->in.len - g->ready >= PREFIX) {
        const unsigned char *p = (const unsigned char *)g->in.p + g->ready;
        uint32_t len = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
        if (p[0] == 1) {
            finish(g, 13, "a compressed message (flag 1): the echo takes uncompressed messages only");
        } else if (p[0] != 0) {
            snprintf(why, sizeof(why), "malformed message prefix: flag 0x%02x, expected 0 or 1", p[0]);
            finish(g, 13, why);
        } else if (len > GRPC_ECHO_MSG_MAX) {
            snprintf(why, sizeof(why), "a message of %u bytes, over the echo's %u", len, GRPC_ECHO_MSG_MAX);
            finish(g, 8, why);
        } else if (g->in.len - g->ready - PREFIX >= len) {
            g->ready += PREFIX + len;
            ll_stats_add(&w->stats.grpc_msgs_received, 1);
            ll_stats_add(&w->stats.grpc_msgs_sent, 1);
            wake(g);
            continue;
        }
        return;
    }
}

void ll_grpc_echo_data(grpc_echo *g, const uint8_t *p, size_t n) {
    if (g->status >= 0 || g->fixed >= 0) return; /* decided: the rest is dropped */
    if (ll_buf_append(&g->in, p, n) < 0) {
        finish(g, 8, "out of memory");
        return;
    }
    frame(g);
}

void ll_grpc_echo_end(grpc_echo *g) {
    char why[32];
    if (g->status >= 0) return;
    if (g->fixed >= 0) {
        snprintf(why, sizeof(why), "echo status %d", g->fixed);
        finish(g, g->fixed, why);
    } else if (g->in.len > g->ready) {
        finish(g, 13, "the request ended inside a message");
    } else {
        finish(g, 0, "");
    }
}

size_t ll_grpc_echo_held(const grpc_echo *g) { return g->ready - g->sent; }

/* The trailers: grpc-status, and grpc-message unless it is "". */
static int trailers(grpc_echo *g) {
    char st[8];
    snprintf(st, sizeof(st), "%d", g->status);
    nghttp2_nv nv[2] = {
        {(uint8_t *)"grpc-status", (uint8_t *)st, 11, strlen(st), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"grpc-message", (uint8_t *)g->message, 12, strlen(g->message), NGHTTP2_NV_FLAG_NONE},
    };
    return nghttp2_submit_trailer(g->ng, g->id, nv, g->message[0] ? 2 : 1);
}

ssize_t ll_grpc_echo_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                          nghttp2_data_source *src, void *ud) {
    grpc_echo *g = src->ptr;
    size_t n = g->ready - g->sent;
    (void)ng, (void)id, (void)ud;
    if (n > 0) {
        if (n > len) n = len;
        memcpy(buf, g->in.p + g->sent, n);
        g->sent += n;
        if (g->sent == g->in.len) {
            g->in.len = g->ready = g->sent = 0;
        } else if (g->sent >= COMPACT_MIN && g->sent * 2 >= g->in.len) {
            memmove(g->in.p, g->in.p + g->sent, g->in.len - g->sent);
            g->in.len -= g->sent;
            g->ready -= g->sent;
            g->sent = 0;
        }
        return (ssize_t)n;
    }
    if (g->status < 0) {
        g->deferred = 1;
        return NGHTTP2_ERR_DEFERRED;
    }
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    return trailers(g) == 0 ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

void ll_grpc_echo_free(grpc_echo *g) {
    if (!g) return;
    ll_buf_free(&g->in);
    free(g);
}
