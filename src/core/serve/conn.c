/* conn.c -- `luaload serve`'s client connections.
 *
 * Owns: each connection's life (open on accept, close), its read buffer,
 * its output queue (bytes in wbuf, large 'x' bodies as "fill" segments that
 * point at the shared fill_bytes, so /bytes/N never copies) sent with one
 * sendmsg(), the events its loop watches, its timer (a delayed response or
 * the lingering close), and the loop that answers the requests in rbuf in
 * order (parsing is request.c's, responses routes.c's, faulted responses
 * faults.c's). A delayed request stops processing until its timer fires,
 * which keeps pipelined responses in order. Also owns the per-request
 * accounting (the worker's counters, the --faults draw, --echo-header's
 * counts through headers.c), pacing the output queue for the slow faults,
 * the RST close (reset fault) and the stalled connection that only drops
 * input (stall fault). A connection's upload state (upload.c's) goes with
 * it. So do an /sse stream's steps (sse.c queues the events; requests wait
 * behind it as behind a delayed one) and, after a WebSocket upgrade, the
 * session (ws.c's): the connection's reads feed it and its frames go out
 * through the same output queue, until it is over and the connection ends
 * as an HTTP one does. A connection whose first bytes are HTTP/2's preface
 * is handed to h2.c the same way (its nghttp2 session reads rbuf and
 * writes the output queue); conn.c only tells the preface apart. */
#include "xmalloc.h"
#include "serve_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define READ_MIN 2048                   /* free space wanted before each read */
#define READ_BIG (64 * 1024)            /* rbuf grows to this while reads fill it */
#define IOV_BATCH 64
#define LINGER_US 2000000
#define PACE_TICKS 20                   /* the slow faults send in up to this many steps */

enum { STOP_MORE, STOP_DELAY, STOP_FULL, STOP_CLOSE, STOP_UPGRADE };

static char fill_bytes[64 * 1024]; /* all 'x', read-only once serving */

void ll_conn_fill_init(void) { memset(fill_bytes, 'x', sizeof(fill_bytes)); }

/* ---- output queue ---- */

static void out_seg(conn *c, int fill, size_t off, uint64_t len) {
    if (len == 0) return;
    c->out_pending += len;
    if (c->nseg > 0) {
        seg *last = &c->segs[c->nseg - 1];
        if (fill && last->fill) {
            last->len += len;
            return;
        }
        if (!fill && !last->fill && last->off + last->len == off) {
            last->len += len;
            return;
        }
    }
    if (c->nseg == c->scap) {
        size_t cap = c->scap ? c->scap * 2 : 8;
        seg *s = realloc(c->segs, cap * sizeof(*s));
        if (!s) {
            c->failed = 1;
            return;
        }
        c->segs = s;
        c->scap = cap;
    }
    c->segs[c->nseg].len = len;
    c->segs[c->nseg].off = off;
    c->segs[c->nseg].fill = fill;
    c->nseg++;
}

void ll_conn_out_bytes(conn *c, const char *p, size_t n) {
    if (c->failed || n == 0) return;
    if (c->wcap - c->wlen < n) {
        size_t cap = c->wcap ? c->wcap : BUF_INIT;
        while (cap - c->wlen < n) cap *= 2;
        char *b = realloc(c->wbuf, cap);
        if (!b) {
            c->failed = 1;
            return;
        }
        c->wbuf = b;
        c->wcap = cap;
    }
    memcpy(c->wbuf + c->wlen, p, n);
    out_seg(c, 0, c->wlen, n);
    c->wlen += n;
}

void ll_conn_out_fill(conn *c, uint64_t n) {
    if (n <= FILL_INLINE) ll_conn_out_bytes(c, fill_bytes, (size_t)n);
    else out_seg(c, 1, 0, n);
}

static void out_advance(conn *c, uint64_t w) {
    c->out_pending -= w;
    while (w > 0) {
        seg *s = &c->segs[c->seg_head];
        uint64_t left = s->len - c->seg_done;
        if (w < left) {
            c->seg_done += w;
            return;
        }
        w -= left;
        c->seg_head++;
        c->seg_done = 0;
    }
    if (c->out_pending > 0) return;
    c->nseg = c->seg_head = 0;
    c->wlen = 0;
    c->full = 0;
    if (c->wcap > BUF_KEEP) {
        free(c->wbuf);
        c->wbuf = NULL;
        c->wcap = 0;
    }
}

static int out_iov(conn *c, struct iovec *iov) {
    int n = 0;
    for (size_t i = c->seg_head; i < c->nseg && n < IOV_BATCH; i++) {
        seg *s = &c->segs[i];
        uint64_t skip = i == c->seg_head ? c->seg_done : 0;
        uint64_t left = s->len - skip;
        if (!s->fill) {
            iov[n].iov_base = c->wbuf + s->off + skip;
            iov[n++].iov_len = (size_t)left;
            continue;
        }
        while (left > 0 && n < IOV_BATCH) {
            size_t k = left < sizeof(fill_bytes) ? (size_t)left : sizeof(fill_bytes);
            iov[n].iov_base = fill_bytes;
            iov[n++].iov_len = k;
            left -= k;
        }
    }
    return n;
}

/* Cuts the n iovecs to cap bytes in all; returns how many are left. */
static int clip_iov(struct iovec *iov, int n, uint64_t cap) {
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len >= cap) {
            iov[i].iov_len = (size_t)cap;
            return cap > 0 ? i + 1 : i;
        }
        cap -= iov[i].iov_len;
    }
    return n;
}

/* Sends as much queued output as the socket (and pacing) takes. -1 on a
 * dead peer. */
static int flush(conn *c) {
    while (c->out_pending > 0) {
        struct iovec iov[IOV_BATCH];
        struct msghdr mh;
        int n = out_iov(c, iov);
        if (c->pacing) n = clip_iov(iov, n, c->pace_cap);
        if (n == 0) return 0;
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)n;
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) {
            out_advance(c, (uint64_t)w);
            ll_stats_add(&c->w->stats.bytes_sent, (uint64_t)w);
            if (c->pacing) c->pace_cap -= (uint64_t)w;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return -1;
    }
    return 0;
}

/* ---- pacing (slow faults) ---- */

void ll_conn_pace(conn *c, uint64_t before, uint64_t paced, uint64_t over_us) {
    uint64_t ticks = paced < PACE_TICKS ? paced : PACE_TICKS;
    if (ticks < 2) return; /* nothing to spread */
    c->pace_step = (paced + ticks - 1) / ticks;
    ticks = (paced + c->pace_step - 1) / c->pace_step; /* the steps it really takes */
    c->pace_us = over_us / (ticks - 1);
    c->pace_cap = before + c->pace_step;
    c->pace_left = paced - c->pace_step;
    c->pacing = 1;
    c->delay_pending = 1; /* no further request until the paced bytes are out */
    ll_loop_timer_start(c->w->loop, &c->timer, c->pace_us);
}

/* Releases the next step; after the last one the queue flows freely. */
static void pace_tick(conn *c) {
    uint64_t k = c->pace_left < c->pace_step ? c->pace_left : c->pace_step;
    c->pace_cap += k;
    c->pace_left -= k;
    if (c->pace_left > 0) {
        ll_loop_timer_start(c->w->loop, &c->timer, c->pace_us);
        return;
    }
    c->pacing = 0;
    c->delay_pending = 0;
}

/* ---- answering requests ---- */

/* Counts a complete request (its route; unless it is /stats, its method,
 * whether its connection was reused, and --echo-header's names) and, with
 * --faults, draws its fault (never for /fault/NAME, which has its own, or
 * /stats): once per request, before a delayed one waits. */
static void account(conn *c) {
    request *r = &c->req;
    worker *w = c->w;
    int reused = c->used;
    c->used = 1;
    int no_fault = r->route == ROUTE_FAULT || r->route == ROUTE_STATS || r->route == ROUTE_WS_ECHO ||
                   r->route == ROUTE_WS_SEND || r->route == ROUTE_SSE;
    if (w->cfg->faults_on && !no_fault) r->fault = ll_faults_draw(w);
    ll_stats_add(&w->stats.routes[r->route], 1);
    if (r->fault) ll_stats_add(&w->stats.faults[r->fault], 1);
    if (r->route == ROUTE_STATS) return;
    ll_stats_add(&w->stats.methods[r->method], 1);
    if (reused) ll_stats_add(&w->stats.reused, 1);
    if (w->cfg->nhdr) ll_headers_account(c);
}

/* A response is queued: the next request may follow. */
static void request_done(conn *c) {
    if (!c->req.keep_alive) c->closing = 1;
    ll_request_reset(c);
    if (c->out_pending >= OUT_HIGH) c->full = 1;
}

/* Answers every complete request in rbuf, in order, until one is delayed
 * or streams events, the connection is closing or upgraded, output backs
 * up, or more input is needed. */
static int process(conn *c) {
    request *r = &c->req;
    for (;;) {
        if (c->closing || c->failed) return STOP_CLOSE;
        if (c->delay_pending) return STOP_DELAY;
        if (c->full) return STOP_FULL;
        if (c->streaming) {
            int st = ll_sse_step(c);
            if (st == SSE_WAIT) return STOP_DELAY;
            if (st == SSE_FULL) {
                c->full = 1;
                return STOP_FULL;
            }
            request_done(c);
            continue;
        }
        if (!c->h1) { /* the connection's first bytes: HTTP/2's preface? */
            int pre = ll_h2_preface(c);
            if (pre == H2_MORE) return STOP_MORE;
            if (pre == H2_YES) {
                ll_h2_start(c);
                return c->failed ? STOP_CLOSE : STOP_UPGRADE;
            }
            c->h1 = 1;
        }
        int rc = ll_request_parse(c);
        if (rc == P_MORE) return STOP_MORE;
        if (rc == P_BAD) {
            ll_stats_add(&c->w->stats.routes[ROUTE_MALFORMED], 1);
            ll_routes_respond_error(c);
            continue;
        }
        if (!r->delay_done) account(c);
        if (r->delay_us && !r->delay_done) {
            c->delay_pending = 1;
            ll_loop_timer_start(c->w->loop, &c->timer, r->delay_us);
            continue;
        }
        if (r->fault) ll_faults_respond(c);
        else ll_routes_respond(c);
        if (c->ws) {
            ll_request_reset(c);
            return STOP_UPGRADE;
        }
        if (!c->streaming) request_done(c);
    }
}

/* ---- connections ---- */

void ll_conn_close(conn *c) {
    worker *w = c->w;
    ll_loop_timer_stop(w->loop, &c->timer);
    ll_loop_watch(w->loop, c->fd, 0, NULL, NULL);
    close(c->fd);
    if (c->prev) c->prev->next = c->next;
    else w->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c->rbuf);
    free(c->body);
    ll_upload_free(c->up);
    ll_ws_session_free(c->ws);
    ll_h2_session_free(c->h2);
    free(c->wbuf);
    free(c->segs);
    free(c);
}

static void on_conn_io(ll_loop *loop, int fd, int events, void *ud);

static int conn_set_events(conn *c, int events) {
    if (events == c->events) return 0;
    if (ll_loop_watch(c->w->loop, c->fd, events, on_conn_io, c) < 0) return -1;
    c->events = events;
    return 0;
}

static int wanted_events(const conn *c) {
    int ev = 0;
    if (c->ws) {
        if (!c->eof && !c->closing && ll_ws_wants_read(c)) ev |= LL_READABLE;
        if (c->out_pending > 0 || (!c->closing && ll_ws_ready(c))) ev |= LL_WRITABLE;
        return ev;
    }
    if (c->h2) {
        if (!c->eof && !c->closing && ll_h2_wants_read(c)) ev |= LL_READABLE;
        if (c->out_pending > 0 || (!c->closing && ll_h2_ready(c))) ev |= LL_WRITABLE;
        return ev;
    }
    if (c->stalled || (!c->eof && !c->closing && !c->delay_pending && !c->full && !c->streaming)) ev |= LL_READABLE;
    if (c->out_pending > 0 && !(c->pacing && c->pace_cap == 0)) ev |= LL_WRITABLE;
    return ev;
}

/* Everything is sent and the connection should end: half-close, then read
 * and drop what the client still sends (so close() cannot reset the
 * connection under an unread response) until EOF or LINGER_US. */
static void conn_finish(conn *c) {
    if (c->eof || shutdown(c->fd, SHUT_WR) < 0) {
        ll_conn_close(c);
        return;
    }
    c->lingering = 1;
    ll_loop_timer_start(c->w->loop, &c->timer, LINGER_US);
    if (conn_set_events(c, LL_READABLE) < 0) ll_conn_close(c);
}

/* The reset fault: SO_LINGER 0 makes close() send RST instead of FIN. */
static void conn_reset(conn *c) {
    struct linger lg = {1, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    ll_conn_close(c);
}

/* Reads and drops input (lingering, stalled): 0 when there is no more for
 * now, 1 after 16 reads that all got data, -1 on EOF or an error. */
static int drain_input(conn *c) {
    char buf[4096];
    for (int i = 0; i < 16; i++) {
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n > 0) {
            ll_stats_add(&c->w->stats.bytes_received, (uint64_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
        return -1;
    }
    return 1;
}

/* Reads once into rbuf. 0 on data, EOF or nothing yet; -1 on error. */
static int conn_read(conn *c) {
    if (c->rpos == c->rlen) c->rpos = c->rlen = 0;
    if (c->rcap - c->rlen < READ_MIN && c->rpos > 0) {
        memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
        c->rlen -= c->rpos;
        c->rpos = 0;
    }
    if (c->rcap - c->rlen < READ_MIN) {
        size_t cap = c->rcap ? c->rcap * 2 : BUF_INIT;
        char *b = realloc(c->rbuf, cap);
        if (!b) return -1;
        c->rbuf = b;
        c->rcap = cap;
    }
    size_t room = c->rcap - c->rlen;
    ssize_t n = read(c->fd, c->rbuf + c->rlen, room);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (n == 0) c->eof = 1;
    ll_stats_add(&c->w->stats.bytes_received, (uint64_t)n);
    c->rlen += (size_t)n;
    if ((size_t)n == room && c->rcap < READ_BIG) {
        char *b = realloc(c->rbuf, c->rcap * 2); /* reads fill it: read more at once */
        if (b) {
            c->rbuf = b;
            c->rcap *= 2;
        }
    }
    return 0;
}

/* A WebSocket session's turn: its input to wslay, wslay's output sent, a
 * few rounds while the output drains. -1 on a dead peer. */
static int ws_turn(conn *c) {
    for (int i = 0; i < 4 && !c->closing; i++) {
        int st = ll_ws_pump(c);
        if (c->failed || flush(c) < 0) return -1;
        if (st == WS_DONE) c->closing = 1;
        else if (c->out_pending >= OUT_HIGH || !ll_ws_ready(c)) break;
    }
    return 0;
}

/* An HTTP/2 session's turn, as ws_turn. -1 on a dead peer. */
static int h2_turn(conn *c) {
    for (int i = 0; i < 4 && !c->closing; i++) {
        int st = ll_h2_pump(c);
        if (c->failed || flush(c) < 0) return -1;
        if (st == H2_DONE) c->closing = 1;
        else if (c->out_pending >= OUT_HIGH || !ll_h2_ready(c)) break;
    }
    return 0;
}

/* Answers what can be answered, sends, then watches what is needed next. */
static void conn_drive(conn *c) {
    int why = STOP_UPGRADE;
    while (!c->ws && !c->h2) {
        why = process(c);
        if (why == STOP_MORE && c->eof) c->closing = 1;
        if (c->failed || flush(c) < 0) {
            ll_conn_close(c);
            return;
        }
        if (why != STOP_FULL || c->full) break;
    }
    if ((c->ws && ws_turn(c) < 0) || (c->h2 && h2_turn(c) < 0)) {
        ll_conn_close(c);
        return;
    }
    if (c->closing && c->out_pending == 0) {
        if (c->reset) conn_reset(c);
        else conn_finish(c);
        return;
    }
    if (conn_set_events(c, wanted_events(c)) < 0) ll_conn_close(c);
}

static void on_conn_io(ll_loop *loop, int fd, int events, void *ud) {
    conn *c = ud;
    (void)loop;
    (void)fd;
    if (c->lingering) {
        if (drain_input(c) != 0) ll_conn_close(c); /* EOF, or a flood: done lingering */
        return;
    }
    if (c->stalled && (events & LL_READABLE) && drain_input(c) < 0) {
        ll_conn_close(c); /* the client gave up on the stalled request */
        return;
    }
    if (!c->stalled && (events & LL_READABLE) && (c->events & LL_READABLE) && conn_read(c) < 0) {
        ll_conn_close(c);
        return;
    }
    conn_drive(c);
}

static void on_conn_timer(ll_loop *loop, void *ud) {
    conn *c = ud;
    (void)loop;
    if (c->lingering) {
        ll_conn_close(c);
        return;
    }
    if (c->pacing) {
        pace_tick(c);
        conn_drive(c);
        return;
    }
    if (c->ws) {
        ll_ws_timer(c);
        conn_drive(c);
        return;
    }
    if (c->streaming) { /* the next event is due */
        conn_drive(c);
        return;
    }
    c->delay_pending = 0;
    c->req.delay_done = 1;
    conn_drive(c);
}

void ll_conn_open(worker *w, int fd) {
    int one = 1;
    conn *c = ll_xcalloc(1, sizeof(*c));
    ll_stats_add(&w->stats.connections, 1);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    c->w = w;
    ll_loop_timer_init(&c->timer, on_conn_timer, c);
    c->next = w->conns;
    if (w->conns) w->conns->prev = c;
    w->conns = c;
    if (conn_set_events(c, LL_READABLE) < 0) ll_conn_close(c);
}
