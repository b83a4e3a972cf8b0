/* native_h3.c -- HTTP/3 on a native connection (see native.h): a UDP
 * socket connected to the server's address, the QUIC handshake and then
 * the requests as streams (native_stream.c), framed by h3_session.c on
 * ngtcp2 and nghttp3. The datagrams are read in batches (recvmmsg) and
 * sent in batches (sendmmsg); ngtcp2's timers (loss recovery, pacing,
 * idle close) run on the connection's expiry timer. The frames of the
 * streams begun in one loop turn go out together at the next (the flush
 * timer, as over HTTP/2). A datagram the kernel refuses for want of
 * buffer space is dropped, as the network might: QUIC resends it. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "native.h"

#define RECV_BATCH 16
#define RECV_SLOT (NATIVE_READ_BUFFER / RECV_BATCH) /* 4 KiB: more than a datagram of ours */
#define SEND_SLOT 1500                              /* ngtcp2's datagrams are at most 1452 bytes here */

static ll_loop *loop_of(native_conn *c) { return c->g->tp->base.loop; }

static void flush_soon(native_conn *c) {
    if (!ll_loop_timer_armed(&c->flush)) ll_loop_timer_start(loop_of(c), &c->flush, 0);
}

/* The connection is over: its users fail with why, in k6's codes (a
 * handshake's failures are dial or TLS errors; a stateless reset is the
 * server's reset of the connection, 1220 as a TCP RST). */
static void failed(native_conn *c, int os_errno) {
    ll_h3_end kind = LL_H3_END_OTHER;
    char why[300];
    int code = 1000;
    if (os_errno) {
        snprintf(why, sizeof(why), "%s udp %s:%d: %s", c->st == C_READY ? "read" : "dial", c->host, c->port,
                 strerror(os_errno));
        code = c->st != C_READY ? (os_errno == ECONNREFUSED ? 1212 : 1210) : os_errno == ECONNREFUSED ? 1220 : 1200;
    } else {
        snprintf(why, sizeof(why), "%s", ll_h3_why(c->h3, &kind));
        if (kind == LL_H3_END_RESET) code = 1220;
        else if (c->st != C_READY)
            code = kind == LL_H3_END_VERIFY ? 1310 : kind == LL_H3_END_IDLE ? 1211 : kind == LL_H3_END_TLS ? 1300 : 1210;
    }
    native_done_streams(c);
    if (!c->dead) native_conn_close(c, code, why);
}

/* Re-arms the expiry timer for ngtcp2's next due. */
static void arm(native_conn *c) {
    uint64_t due = ll_h3_expiry(c->h3);
    if (due == UINT64_MAX) return ll_loop_timer_stop(loop_of(c), &c->expiry);
    ll_loop_timer_at(loop_of(c), &c->expiry, due);
}

/* UDP GSO (the kernel splits one send into datagrams of a size): 1
 * until a send with it fails (a kernel or device without it), then
 * datagrams go one per message for the rest of the run (every worker's:
 * read and written relaxed, as a hint). */
static int gso_ok = 1;

/* The datagrams of out from i on that one GSO message can carry: those of
 * i's size, then at most one shorter (the kernel's rule). */
static int gso_run(const ll_h3_out *out, int i) {
    int n = 1;
    while (i + n < out->n && out->len[i + n] == out->len[i] && out->off[i + n] == out->off[i] + (size_t)n * out->len[i])
        n++;
    if (i + n < out->n && out->len[i + n] < out->len[i] && out->off[i + n] == out->off[i] + (size_t)n * out->len[i])
        n++;
    return n;
}

/* The datagrams of out, in one sendmmsg: with GSO, each run of equal
 * ones (a body's full packets) is one message the kernel splits, so a
 * burst costs one pass through the UDP stack instead of one each. */
static void send_from(native_conn *c, ll_h3_out *out, int from) {
    struct mmsghdr msgs[LL_H3_BATCH];
    struct iovec iov[LL_H3_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl[LL_H3_BATCH];
    int first[LL_H3_BATCH]; /* each message's first datagram */
    int m = 0, gso = __atomic_load_n(&gso_ok, __ATOMIC_RELAXED);
    memset(msgs, 0, sizeof(msgs));
    for (int i = from; i < out->n; m++) {
        int run = gso ? gso_run(out, i) : 1;
        first[m] = i;
        iov[m].iov_base = out->buf + out->off[i];
        iov[m].iov_len = run == 1 ? out->len[i] : out->off[i + run - 1] + out->len[i + run - 1] - out->off[i];
        msgs[m].msg_hdr.msg_iov = &iov[m];
        msgs[m].msg_hdr.msg_iovlen = 1;
        if (run > 1) {
            msgs[m].msg_hdr.msg_control = ctl[m].buf;
            msgs[m].msg_hdr.msg_controllen = sizeof(ctl[m].buf);
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msgs[m].msg_hdr);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t seg = (uint16_t)out->len[i];
            memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
        }
        i += run;
    }
    int done = 0;
    while (done < m) {
        int n = sendmmsg(c->net.fd, msgs + done, (unsigned)(m - done), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && gso && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT || errno == EOPNOTSUPP) &&
            msgs[done].msg_hdr.msg_controllen) {
            __atomic_store_n(&gso_ok, 0, __ATOMIC_RELAXED); /* no GSO here: the rest and the next ones without */
            return send_from(c, out, first[done]);
        }
        if (n <= 0) break; /* EAGAIN, ENOBUFS, a refusal: the datagrams are lost, QUIC resends */
        done += n;
    }
}

static void send_batch(native_conn *c, ll_h3_out *out) { send_from(c, out, 0); }

/* Sends what the session has to send. 0, or -1 when the connection
 * failed (closed, its users failed). */
int native_h3_flush(native_conn *c) {
    uint8_t buf[LL_H3_BATCH * SEND_SLOT];
    for (;;) {
        ll_h3_out out = {.buf = buf, .cap = sizeof(buf)};
        if (ll_h3_send(c->h3, &out, ll_loop_now_ns()) < 0) {
            failed(c, 0);
            return -1;
        }
        if (out.n > 0) send_batch(c, &out);
        if (out.n < LL_H3_BATCH) break;
    }
    arm(c);
    return 0;
}

static void on_expiry(ll_loop *loop, void *ud) {
    (void)loop;
    native_conn *c = ud;
    native_conn_hold(c);
    if (!c->dead) {
        if (ll_h3_expire(c->h3, ll_loop_now_ns()) < 0) failed(c, 0);
        else native_h3_flush(c);
    }
    native_conn_release(c);
}

/* A session ticket from the server: the next connection to it resumes,
 * with the server's transport parameters for a 0-RTT there. */
static void on_ticket(void *ud, void *tls) {
    native_conn *c = ud;
    ll_quic_tls *t = native_pool_quic_tls(c->g->pool);
    uint8_t tp[LL_QUIC_TP_MAX];
    int n = ll_h3_early_params(c->h3, tp, sizeof(tp));
    if (t) ll_quic_tls_keep(t, c->session_key, tls, tp, n > 0 ? (size_t)n : 0);
}

int native_h3_too_early(const native_transfer *x) {
    if (ll_h3_handshake_done(x->conn->h3)) return 0;
    const char *m = x->base.method;
    int safe = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "OPTIONS") == 0;
    return !safe || x->in.has_body || x->streamed;
}

int native_h3_dial(native_conn *c) {
    ll_quic_tls *t = native_pool_quic_tls(c->g->pool);
    if (!t) {
        c->fail_errno = 0;
        snprintf(c->fail_msg, sizeof(c->fail_msg), "%.*s", (int)sizeof(c->fail_msg) - 1, c->g->pool->err);
        return -1;
    }
    while (c->next_addr < c->naddrs) {
        const ll_addr *a = &c->addrs[c->next_addr++];
        int fd = socket(a->ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
        struct sockaddr_storage local;
        socklen_t llen = sizeof(local);
        int ok = fd >= 0 && (!c->local.len || bind(fd, (const struct sockaddr *)&c->local.ss, c->local.len) == 0) &&
                 connect(fd, (const struct sockaddr *)&a->ss, a->len) == 0 &&
                 getsockname(fd, (struct sockaddr *)&local, &llen) == 0;
        if (!ok) {
            c->fail_errno = errno;
            snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", strerror(errno));
            if (fd >= 0) close(fd);
            continue;
        }
        const char *name = c->users && c->users->server_name ? c->users->server_name : c->host;
        snprintf(c->session_key, sizeof(c->session_key), "%.*s:%d", (int)sizeof(c->session_key) - 8, name, c->port);
        uint8_t tp[LL_QUIC_TP_MAX];
        size_t tplen = 0;
        int early = c->users && c->users->zero_rtt;
        void *tls = ll_quic_tls_session(t, name, c->session_key, early, tp, &tplen, c->fail_msg, sizeof(c->fail_msg));
        const char *err = NULL;
        c->h3 = tls ? ll_h3_new(&native_stream_ops, tls, (const struct sockaddr *)&local, llen,
                                (const struct sockaddr *)&a->ss, a->len, c->users ? c->users->qlog_dir : NULL,
                                ll_loop_now_ns(), &err)
                    : NULL;
        if (!c->h3) {
            if (err) snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", err);
            c->fail_errno = 0;
            close(fd);
            return -1;
        }
        ll_h3_on_ticket(c->h3, on_ticket, c);
        if (tplen) ll_h3_early(c->h3, tp, tplen); /* requests may begin at once (native_conn_startable) */
        c->net.ops = &ll_net_plain;
        c->net.fd = fd;
        c->st = C_HANDSHAKE;
        ll_loop_timer_init(&c->expiry, on_expiry, c);
        native_conn_watch(c, LL_READABLE);
        flush_soon(c); /* the Initial goes at the next turn, as a request's frames do */
        return 0;
    }
    return -1;
}

/* The datagrams waiting on the socket, in batches. 0, or -1 when the
 * connection failed. */
static int read_all(native_conn *c) {
    char *rbuf = c->g->tp->rbuf;
    struct mmsghdr msgs[RECV_BATCH];
    struct iovec iov[RECV_BATCH];
    for (;;) {
        memset(msgs, 0, sizeof(msgs));
        for (int i = 0; i < RECV_BATCH; i++) {
            iov[i].iov_base = rbuf + i * RECV_SLOT;
            iov[i].iov_len = RECV_SLOT;
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(c->net.fd, msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (n < 0) {
            failed(c, errno);
            return -1;
        }
        uint64_t now = ll_loop_now_ns();
        if (!c->t_connected) c->t_connected = now; /* the server's first flight */
        for (int i = 0; i < n; i++) {
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) continue; /* not a datagram of QUIC's size */
            if (ll_h3_recv(c->h3, (const uint8_t *)iov[i].iov_base, msgs[i].msg_len, now) < 0) {
                failed(c, 0);
                return -1;
            }
        }
        if (n < RECV_BATCH) return 0;
    }
}

/* A request past the server's stream limit waits on the connection (in
 * X_START, its timeout a request timeout) until the server grants more
 * streams: the waiting ones begin again, as many as it allows. */
static void unblock(native_conn *c) {
    int left = ll_h3_streams_left(c->h3);
    for (native_transfer *x = c->users; x && left > 0; x = x->next) {
        if (!x->h3_blocked) continue;
        x->h3_blocked = 0;
        left--;
        ll_loop_timer_start(loop_of(c), &x->soon, 0);
    }
}

void native_h3_event(native_conn *c, int events) {
    if ((events & LL_READABLE) && read_all(c) < 0) return;
    if (c->st == C_HANDSHAKE && ll_h3_handshake_done(c->h3) && ll_h3_alive(c->h3)) {
        c->t_tls = ll_loop_now_ns();
        for (native_transfer *x = c->users; x; x = x->next) x->tls_cipher = ll_h3_cipher(c->h3); /* 0-RTT's */
        native_conn_ready(c);
        if (c->dead) return;
    }
    native_done_streams(c);
    if (c->dead) return;
    unblock(c);
    native_h3_flush(c);
}

void native_h3_begin(native_transfer *x) {
    native_conn *c = x->conn;
    if (ll_h3_streams_left(c->h3) == 0 && ll_h3_alive(c->h3)) {
        x->h3_blocked = 1;
        return;
    }
    x->st = X_STREAM;
    x->h2_status = 0;
    x->qstream = -1;
    x->early_sent = !ll_h3_handshake_done(c->h3); /* as 0-RTT */
    x->hdrs.len = x->body.len = x->trailers.len = 0;
    if (native_stream_submit(c, x) < 0) return native_fail(x, 1000, "cannot open an HTTP/3 stream");
    flush_soon(c);
}

void native_h3_resume(native_transfer *x) {
    native_conn *c = x->conn;
    if (x->qstream < 0 || !c || !c->h3) return; /* not begun yet: read when it is */
    ll_h3_resume(c->h3, x->qstream);
    flush_soon(c);
}

/* A stream cut off (a timeout, the script) while the server has sent
 * nothing since its request began: the connection is presumed dead (the
 * server stopped, or forgot it and its stateless reset was not ours to
 * read). QUIC would only notice at the idle timeout, so it takes no new
 * requests: they go on a new connection, and this one closes with its
 * last user. */
void native_h3_cancel(native_transfer *x) {
    native_conn *c = x->conn;
    if (x->qstream >= 0 && c->st == C_READY && ll_h3_heard(c->h3) < x->t_pre) c->stale = 1;
    if (x->qstream >= 0 && c->h3) {
        ll_h3_cancel(c->h3, x->qstream);
        flush_soon(c);
    }
    x->qstream = -1;
    x->h3_blocked = 0; /* a request cut while it waited for a stream credit */
    ll_body_decoder_free(x->parse.dec);
    x->parse.dec = NULL;
}

void native_h3_goodbye(native_conn *c) {
    ll_loop_timer_stop(loop_of(c), &c->expiry);
    if (c->net.fd < 0 || c->st != C_READY) return;
    uint8_t buf[SEND_SLOT];
    ll_h3_out out = {.buf = buf, .cap = sizeof(buf)};
    ll_h3_close(c->h3, &out, ll_loop_now_ns());
    if (out.n) send_batch(c, &out);
}
