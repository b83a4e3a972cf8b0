/* uring_vs_epoll.c -- a standalone keep-alive HTTP/1.1 GET client for one
 * measurement: does io_uring, with one submit per loop turn for all
 * connections, beat luaload's native transport model (level-triggered
 * epoll, then one read() and one send() per request)?  No luaload code.
 *
 * Every connection has one request in flight: it sends
 * "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", reads the response (end of
 * headers, Content-Length, body), counts it and sends the next one.
 *
 *   -m epoll         non-blocking sockets, level-triggered EPOLLIN; on readable
 *                    one read() into a 64 KiB buffer shared by all connections,
 *                    and the next request send() as soon as a response is whole.
 *   -m uring         io_uring: one recv SQE in flight per connection (a 4 KiB
 *                    buffer per connection, IORING_RECVSEND_POLL_FIRST after a
 *                    send), the next request as a send SQE (CQE skipped on
 *                    success), everything queued in a turn submitted at once
 *                    by io_uring_submit_and_wait(1): one syscall per turn.
 *                    Ring set up with SINGLE_ISSUER | DEFER_TASKRUN and a
 *                    registered ring fd.
 *   -m uring-plain   the same with no setup flags (kernel defaults).
 *   -m uring-sqpoll  the same with IORING_SETUP_SQPOLL: a kernel thread polls
 *                    the SQ; the loop submits without a syscall while that
 *                    thread is awake and waits only when no CQE is ready.
 *                    Needs a core of its own to make sense.
 *
 * Options: -c CONNS (50)  -d SECONDS (5)  -m MODE (epoll)  -u HOST:PORT
 * (127.0.0.1:18680)  -w N (uring, uring-plain: completions each turn waits
 * for, 1; more trades latency for fewer wake-ups, an experiment only: a
 * load tester cannot delay its response timestamps like that).
 * Prints one line:
 *   mode=... conns=... requests=... rps=... secs=... turns=...
 *   loop_syscalls=... syscalls_per_req=... wait=...
 * loop_syscalls counts the syscalls the measured loop makes (epoll_wait,
 * read, send; io_uring_enter), as the client issues them.
 *
 * Build: cc -std=c11 -O2 -Wall -Wextra -Werror -o uring_vs_epoll uring_vs_epoll.c -luring
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDR_MAX 1024          /* a response header split across reads is kept here */
#define SHARED_BUF (64 * 1024) /* epoll: one read buffer for all connections */
#define CONN_BUF 4096         /* uring: one receive buffer per connection */

static const char REQUEST[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
#define REQUEST_LEN (sizeof(REQUEST) - 1)

enum mode { MODE_EPOLL, MODE_URING, MODE_URING_PLAIN, MODE_URING_SQPOLL };
static const char *const MODE_NAMES[] = { "epoll", "uring", "uring-plain", "uring-sqpoll" };

struct options {
    int conns;
    double seconds;
    enum mode mode;
    unsigned wait_nr;
    char host[64];
    int port;
};

struct conn {
    int fd;
    long body_left;     /* body bytes still to come; -1 while reading headers */
    unsigned hdr_len;   /* bytes of a split header held in hdr */
    char hdr[HDR_MAX];
    char *rbuf;         /* uring: this connection's receive buffer */
};

struct stats {
    uint64_t requests;
    uint64_t turns;     /* loop iterations (epoll_wait or submit calls) */
    uint64_t syscalls;  /* syscalls made by the measured loop */
    double secs;
};

static _Noreturn void die(const char *what) {
    fprintf(stderr, "uring_vs_epoll: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- options */

static _Noreturn void usage(void) {
    fprintf(stderr, "usage: uring_vs_epoll [-c CONNS] [-d SECONDS] "
                    "[-m epoll|uring|uring-plain|uring-sqpoll] [-u HOST:PORT] [-w N]\n");
    exit(2);
}

static enum mode parse_mode(const char *s) {
    for (size_t i = 0; i < sizeof(MODE_NAMES) / sizeof(MODE_NAMES[0]); i++)
        if (strcmp(s, MODE_NAMES[i]) == 0) return (enum mode)i;
    usage();
}

/* "host:port", with an optional "http://" before and "/..." after */
static void parse_url(const char *s, struct options *o) {
    if (strncmp(s, "http://", 7) == 0) s += 7;
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof(o->host)) usage();
    memcpy(o->host, s, (size_t)(colon - s));
    o->host[colon - s] = '\0';
    o->port = atoi(colon + 1);
    if (o->port <= 0 || o->port > 65535) usage();
}

static struct options parse_options(int argc, char **argv) {
    struct options o = { .conns = 50, .seconds = 5, .mode = MODE_EPOLL, .wait_nr = 1,
                         .host = "127.0.0.1", .port = 18680 };
    int ch;
    while ((ch = getopt(argc, argv, "c:d:m:u:w:")) != -1) {
        switch (ch) {
        case 'c': o.conns = atoi(optarg); break;
        case 'd': o.seconds = atof(optarg); break;
        case 'm': o.mode = parse_mode(optarg); break;
        case 'u': parse_url(optarg, &o); break;
        case 'w': o.wait_nr = (unsigned)atoi(optarg); break;
        default: usage();
        }
    }
    if (o.conns < 1 || o.conns > 16384 || o.seconds <= 0) usage();
    /* every connection always has its recv in flight, so up to CONNS
     * completions will come */
    if (o.wait_nr < 1 || o.wait_nr > (unsigned)o.conns) usage();
    return o;
}

/* ------------------------------------------------------- response parsing */

/* Content-Length in a header block of n bytes, or -1 */
static long content_length(const char *h, size_t n) {
    static const char name[] = "\r\ncontent-length:";
    const size_t len = sizeof(name) - 1;
    for (size_t i = 0; i + len <= n; i++) {
        if (h[i] != '\r' || strncasecmp(h + i, name, len) != 0) continue;
        size_t j = i + len;
        while (j < n && h[j] == ' ') j++;
        long v = 0;
        int digits = 0;
        for (; j < n && h[j] >= '0' && h[j] <= '9'; j++, digits++) v = v * 10 + (h[j] - '0');
        return digits ? v : -1;
    }
    return -1;
}

/* a complete header block h[0..n): sets body_left; 0, or -1 if unusable */
static int take_header(struct conn *c, const char *h, size_t n) {
    if (n < 12 || memcmp(h, "HTTP/1.1 2", 10) != 0) return -1;
    c->body_left = content_length(h, n);
    return c->body_left < 0 ? -1 : 0;
}

/* header bytes that arrived split: append to c->hdr; returns how many of
 * p[0..n) belong to the header once its end is found, 0 if it is not yet
 * complete (all of p kept), -1 on error */
static long take_split_header(struct conn *c, const char *p, size_t n) {
    unsigned old = c->hdr_len;
    size_t room = HDR_MAX - old, take = n < room ? n : room;
    memcpy(c->hdr + old, p, take);
    c->hdr_len = old + (unsigned)take;
    size_t from = old >= 3 ? old - 3 : 0;
    char *end = memmem(c->hdr + from, c->hdr_len - from, "\r\n\r\n", 4);
    if (!end) return c->hdr_len == HDR_MAX ? -1 : 0;
    size_t hlen = (size_t)(end + 4 - c->hdr);
    c->hdr_len = 0;
    if (take_header(c, c->hdr, hlen) < 0) return -1;
    return (long)(hlen - old);
}

/* n received bytes of c's response: 1 when the response is complete, 0 when
 * more is to come, -1 on a protocol error (one request in flight, so bytes
 * past the end of the response are an error too) */
static int feed(struct conn *c, const char *p, size_t n) {
    if (c->body_left < 0) {
        const char *end = c->hdr_len ? NULL : memmem(p, n, "\r\n\r\n", 4);
        size_t hlen;
        if (end) {
            hlen = (size_t)(end + 4 - p);
            if (take_header(c, p, hlen) < 0) return -1;
        } else {
            long used = take_split_header(c, p, n);
            if (used <= 0) return (int)used;
            hlen = (size_t)used;
        }
        p += hlen;
        n -= hlen;
    }
    if ((long)n > c->body_left) return -1;
    c->body_left -= (long)n;
    if (c->body_left > 0) return 0;
    c->body_left = -1;
    return 1;
}

/* ------------------------------------------------------------ connections */

static int connect_one(const struct options *o, int nonblocking) {
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
    if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1) die("host must be an IPv4 address");
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (nonblocking && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) die("fcntl");
    return fd;
}

static struct conn *open_conns(const struct options *o, int with_buffers) {
    struct conn *cs = calloc((size_t)o->conns, sizeof(*cs));
    if (!cs) die("calloc");
    for (int i = 0; i < o->conns; i++) {
        cs[i].fd = connect_one(o, o->mode == MODE_EPOLL);
        cs[i].body_left = -1;
        if (with_buffers && !(cs[i].rbuf = malloc(CONN_BUF))) die("malloc");
    }
    return cs;
}

/* ------------------------------------------------------------------ epoll */

static void epoll_send(struct conn *c, struct stats *st) {
    st->syscalls++;
    if (send(c->fd, REQUEST, REQUEST_LEN, MSG_NOSIGNAL) != (ssize_t)REQUEST_LEN) die("send");
}

/* one readable connection: one read(), and the next request if complete */
static void epoll_readable(struct conn *c, char *buf, struct stats *st) {
    st->syscalls++;
    ssize_t r = read(c->fd, buf, SHARED_BUF);
    if (r < 0 && errno == EAGAIN) return;
    if (r <= 0) die(r == 0 ? "server closed the connection" : "read");
    int done = feed(c, buf, (size_t)r);
    if (done < 0) die("bad response");
    if (done) {
        st->requests++;
        epoll_send(c, st);
    }
}

static void run_epoll(const struct options *o, struct conn *cs, struct stats *st) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1");
    for (int i = 0; i < o->conns; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev) < 0) die("epoll_ctl");
    }
    struct epoll_event *evs = calloc((size_t)o->conns, sizeof(*evs));
    static char buf[SHARED_BUF];
    if (!evs) die("calloc");
    double start = now(), deadline = start + o->seconds;
    for (int i = 0; i < o->conns; i++) epoll_send(&cs[i], st);
    st->syscalls = 0; /* count the loop only */
    while (now() < deadline) {
        int k = epoll_wait(ep, evs, o->conns, 100);
        st->turns++;
        st->syscalls++;
        if (k < 0 && errno != EINTR) die("epoll_wait");
        for (int j = 0; j < k; j++) epoll_readable(&cs[evs[j].data.u32], buf, st);
    }
    st->secs = now() - start;
    free(evs);
    close(ep);
}

/* ------------------------------------------------------------------ uring */

enum { OP_SEND = 0, OP_RECV = 1 };

static struct io_uring_sqe *get_sqe(struct io_uring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (!sqe) { /* SQ full: cannot happen with 2 entries per connection */
        io_uring_submit(ring);
        sqe = io_uring_get_sqe(ring);
        if (!sqe) die("io_uring_get_sqe");
    }
    return sqe;
}

static void queue_send(struct io_uring *ring, struct conn *cs, int i) {
    struct io_uring_sqe *sqe = get_sqe(ring);
    io_uring_prep_send(sqe, cs[i].fd, REQUEST, REQUEST_LEN, MSG_NOSIGNAL);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS; /* only a failed send posts a CQE */
    io_uring_sqe_set_data64(sqe, ((uint64_t)i << 1) | OP_SEND);
}

/* poll_first: the response cannot be there yet (just sent the request), so
 * arm the poll without trying the recv first */
static void queue_recv(struct io_uring *ring, struct conn *cs, int i, int poll_first) {
    struct io_uring_sqe *sqe = get_sqe(ring);
    io_uring_prep_recv(sqe, cs[i].fd, cs[i].rbuf, CONN_BUF, 0);
    if (poll_first) sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    io_uring_sqe_set_data64(sqe, ((uint64_t)i << 1) | OP_RECV);
}

static void uring_completion(struct io_uring *ring, struct conn *cs,
                             const struct io_uring_cqe *cqe, struct stats *st) {
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    int i = (int)(ud >> 1);
    errno = cqe->res < 0 ? -cqe->res : 0;
    if ((ud & 1) == OP_SEND) die("send"); /* successful sends post nothing */
    if (cqe->res <= 0) die(cqe->res == 0 ? "server closed the connection" : "recv");
    int done = feed(&cs[i], cs[i].rbuf, (size_t)cqe->res);
    if (done < 0) die("bad response");
    if (done) {
        st->requests++;
        queue_send(ring, cs, i);
    }
    queue_recv(ring, cs, i, done);
}

/* all completions ready now; returns how many */
static unsigned drain_cqes(struct io_uring *ring, struct conn *cs, struct stats *st) {
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(ring, head, cqe) {
        uring_completion(ring, cs, cqe, st);
        seen++;
    }
    io_uring_cq_advance(ring, seen);
    return seen;
}

static void uring_init(const struct options *o, struct io_uring *ring) {
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    if (o->mode == MODE_URING) p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (o->mode == MODE_URING_SQPOLL) {
        p.flags = IORING_SETUP_SQPOLL;
        p.sq_thread_idle = 1000; /* ms the SQ thread spins before sleeping */
    }
    unsigned entries = 1;
    while (entries < 2u * (unsigned)o->conns) entries <<= 1;
    int r = io_uring_queue_init_params(entries, ring, &p);
    if (r < 0) { errno = -r; die("io_uring_queue_init_params"); }
    if (o->mode != MODE_URING_SQPOLL && io_uring_register_ring_fd(ring) < 0)
        fprintf(stderr, "uring_vs_epoll: io_uring_register_ring_fd failed, going on without\n");
}

/* one loop turn without SQPOLL: submit what is queued and wait for
 * wait_nr completions (1 by default) in the same io_uring_enter */
static void turn_enter(struct io_uring *ring, unsigned wait_nr, struct stats *st) {
    st->syscalls++;
    int r = io_uring_submit_and_wait(ring, wait_nr);
    if (r < 0 && r != -EINTR) { errno = -r; die("io_uring_submit_and_wait"); }
}

/* one loop turn with SQPOLL: the SQ thread picks the SQEs up (a syscall only
 * to wake it), and a wait only when nothing has completed yet */
static void turn_sqpoll(struct io_uring *ring, struct stats *st) {
    if (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP) st->syscalls++;
    io_uring_submit(ring);
    if (io_uring_cq_ready(ring)) return;
    struct io_uring_cqe *cqe;
    st->syscalls++;
    int r = io_uring_wait_cqe(ring, &cqe);
    if (r < 0 && r != -EINTR) { errno = -r; die("io_uring_wait_cqe"); }
}

static void run_uring(const struct options *o, struct conn *cs, struct stats *st) {
    struct io_uring ring;
    uring_init(o, &ring);
    double start = now(), deadline = start + o->seconds;
    for (int i = 0; i < o->conns; i++) {
        queue_send(&ring, cs, i);
        queue_recv(&ring, cs, i, 1);
    }
    while (now() < deadline) {
        if (o->mode == MODE_URING_SQPOLL) turn_sqpoll(&ring, st);
        else turn_enter(&ring, o->wait_nr, st);
        st->turns++;
        drain_cqes(&ring, cs, st);
    }
    st->secs = now() - start;
    io_uring_queue_exit(&ring);
}

/* ------------------------------------------------------------------- main */

int main(int argc, char **argv) {
    struct options o = parse_options(argc, argv);
    struct conn *cs = open_conns(&o, o.mode != MODE_EPOLL);
    struct stats st = { 0 };
    if (o.mode == MODE_EPOLL) run_epoll(&o, cs, &st);
    else run_uring(&o, cs, &st);
    printf("mode=%s conns=%d requests=%llu rps=%.0f secs=%.3f turns=%llu "
           "loop_syscalls=%llu syscalls_per_req=%.3f wait=%u\n",
           MODE_NAMES[o.mode], o.conns, (unsigned long long)st.requests,
           (double)st.requests / st.secs, st.secs, (unsigned long long)st.turns,
           (unsigned long long)st.syscalls,
           st.requests ? (double)st.syscalls / (double)st.requests : 0.0, o.wait_nr);
    for (int i = 0; i < o.conns; i++) {
        close(cs[i].fd);
        free(cs[i].rbuf);
    }
    free(cs);
    return 0;
}
