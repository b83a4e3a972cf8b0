/* serve.c -- `luaload serve`, the built-in HTTP/1.1 target server.
 *
 * Owns: the serve subcommand's flags, the listening sockets (one per worker
 * thread, SO_REUSEPORT so the kernel spreads connections), the worker threads
 * and their event loops (loop.h), every client connection (read buffer,
 * incremental request parser including chunked bodies, output queue, delay
 * and lingering-close timer), the routes and their responses, and
 * SIGINT/SIGTERM handling while serving.
 *
 * Data flow per connection: read() appends to rbuf; process() parses as many
 * complete requests as it can and appends their responses to the output
 * queue (bytes in wbuf, large 'x' bodies as "fill" segments that point at a
 * shared static buffer, so /bytes/N never copies); flush() sends the queue
 * with one sendmsg(). A delayed request stops processing until its timer
 * fires, which keeps pipelined responses in order. */
#include "serve.h"
#include "duration.h"
#include "loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXIT_USAGE 104
#define MAX_THREADS 1024
#define HEAD_MAX (64 * 1024)            /* request line + headers */
#define CHUNK_LINE_MAX 4096             /* chunk-size line incl. extensions */
#define ECHO_MAX (64ull * 1024 * 1024)  /* largest body /echo will hold */
#define OUT_HIGH (1024 * 1024)          /* stop parsing above this much queued output */
#define BUF_INIT 4096
#define READ_MIN 2048                   /* free space wanted before each read */
#define READ_BIG (64 * 1024)            /* rbuf grows to this while reads fill it */
#define BUF_KEEP (1024 * 1024)          /* free idle buffers bigger than this */
#define FILL_INLINE 8192                /* fill bodies up to this are copied */
#define IOV_BATCH 64
#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_US 100000
#define LINGER_US 2000000
#define HELLO "hello world\n"

/* ---- configuration ---- */

typedef struct serve_cfg {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host_text[INET6_ADDRSTRLEN];
    int port;
    int threads;
    int status;
    uint64_t body_size;
    uint64_t delay_us;
    char *fast;       /* whole keep-alive response of the default route */
    size_t fast_len;
    int fast_fill;    /* the body is not in fast: append body_size fill bytes */
} serve_cfg;

/* ---- requests and connections ---- */

enum { RS_HEAD, RS_BODY, RS_CHUNK_SIZE, RS_CHUNK_DATA, RS_CHUNK_END, RS_TRAILER, RS_READY };
enum { ROUTE_DEFAULT, ROUTE_STATUS, ROUTE_BYTES, ROUTE_DELAY, ROUTE_ECHO, ROUTE_CLOSE, ROUTE_ERROR };
enum { P_MORE, P_OK, P_BAD };
enum { STOP_MORE, STOP_DELAY, STOP_FULL, STOP_CLOSE };

typedef struct request {
    int state;            /* RS_* */
    int route;            /* ROUTE_* */
    int status;
    uint64_t nbytes;      /* body size for /bytes/N */
    uint64_t delay_us;
    uint64_t left;        /* body bytes still to read: Content-Length or chunk */
    uint64_t content_length;
    const char *msg;      /* body of ROUTE_ERROR and of parse errors */
    int err_status;       /* parse errors: 400 unless set */
    int has_cl, chunked, te_seen;
    int conn_close, conn_ka, expect_continue;
    int http10, head, keep_alive, delay_done;
} request;

typedef struct seg {
    uint64_t len;
    size_t off;           /* into wbuf, unless fill */
    int fill;             /* len bytes of fill_bytes */
} seg;

typedef struct worker worker;

typedef struct conn {
    int fd;
    int events;           /* what the loop watches now */
    int eof, closing, lingering, delay_pending, full, failed;
    worker *w;
    struct conn *prev, *next;
    ll_timer timer;       /* delayed response, or lingering close */
    request req;
    char *rbuf;
    size_t rpos, rlen, rcap, scan;
    char *body;           /* /echo request body */
    size_t blen, bcap;
    char *wbuf;
    size_t wlen, wcap;
    seg *segs;
    size_t nseg, scap, seg_head;
    uint64_t seg_done, out_pending;
} conn;

struct worker {
    pthread_t tid;
    int lfd;
    int accept_warned;
    ll_loop *loop;
    const serve_cfg *cfg;
    ll_timer accept_timer;
    conn *conns;
};

static atomic_int stop_requested;
static char fill_bytes[64 * 1024]; /* all 'x', read-only once serving */

/* ---- small parsers ---- */

static int parse_u64n(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) { return parse_u64n(s, strlen(s), out); }

static int parse_int_range(const char *s, int lo, int hi, int *out) {
    uint64_t v;
    if (parse_u64(s, &v) < 0 || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
    *out = (int)v;
    return 0;
}

/* "4096", "64k", "1M": k/K = 1024, m/M = 1024^2, g/G = 1024^3. */
static int parse_size(const char *s, uint64_t *out) {
    size_t n = strlen(s);
    uint64_t mult = 1, v;
    if (n > 0) {
        switch (s[n - 1]) {
        case 'k': case 'K': mult = 1024; n--; break;
        case 'm': case 'M': mult = 1024 * 1024; n--; break;
        case 'g': case 'G': mult = 1024 * 1024 * 1024; n--; break;
        default: break;
        }
    }
    if (parse_u64n(s, n, &v) < 0 || v > UINT64_MAX / mult) return -1;
    *out = v * mult;
    return 0;
}

static int set_host(serve_cfg *cfg, const char *v) {
    char buf[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(v);
    if (n >= sizeof(buf)) return -1;
    memcpy(buf, v, n + 1);
    if (n >= 2 && buf[0] == '[' && buf[n - 1] == ']') {
        memmove(buf, buf + 1, n - 2);
        buf[n - 2] = '\0';
    }
    if (strcmp(buf, "localhost") == 0) strcpy(buf, "127.0.0.1");
    struct sockaddr_in *a4 = (struct sockaddr_in *)&cfg->addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&cfg->addr;
    memset(&cfg->addr, 0, sizeof(cfg->addr));
    if (inet_pton(AF_INET, buf, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        cfg->addrlen = sizeof(*a4);
        inet_ntop(AF_INET, &a4->sin_addr, cfg->host_text, sizeof(cfg->host_text));
        return 0;
    }
    if (inet_pton(AF_INET6, buf, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        cfg->addrlen = sizeof(*a6);
        inet_ntop(AF_INET6, &a6->sin6_addr, cfg->host_text, sizeof(cfg->host_text));
        return 0;
    }
    return -1;
}

static int set_port(serve_cfg *cfg, const char *v) { return parse_int_range(v, 0, 65535, &cfg->port); }
static int set_threads(serve_cfg *cfg, const char *v) { return parse_int_range(v, 1, MAX_THREADS, &cfg->threads); }
static int set_status(serve_cfg *cfg, const char *v) { return parse_int_range(v, 100, 999, &cfg->status); }
static int set_body_size(serve_cfg *cfg, const char *v) { return parse_size(v, &cfg->body_size); }
static int set_delay(serve_cfg *cfg, const char *v) { return ll_duration_parse(v, &cfg->delay_us); }

static const struct flag {
    const char *name;
    const char *expect;
    int (*set)(serve_cfg *cfg, const char *value);
} flags[] = {
    {"--host", "an IP address such as 127.0.0.1 or ::1", set_host},
    {"--port", "an integer from 0 to 65535", set_port},
    {"--threads", "an integer from 1 to 1024", set_threads},
    {"--body-size", "a byte count such as 12, 64k or 1m", set_body_size},
    {"--status", "an integer from 100 to 999", set_status},
    {"--delay", "a duration such as 0, 250us, 10ms, 1.5s, 2m or 1h", set_delay},
};

static void usage(FILE *f) {
    fputs("usage: luaload serve [options]\n"
          "\n"
          "Runs a fast HTTP/1.1 keep-alive server to point load tests at; stops on\n"
          "SIGINT/SIGTERM.\n"
          "\n"
          "  --host ADDR        address to listen on (default 127.0.0.1; ::1 for IPv6)\n"
          "  --port N           port (default 8080; 0 picks a free port)\n"
          "  --threads N        worker threads (default: number of online CPUs)\n"
          "  --body-size N      default route's body size, k/m suffixes (default 12:\n"
          "                     \"hello world\\n\"; otherwise N 'x' bytes)\n"
          "  --status N         default route's status, 100..999 (default 200)\n"
          "  --delay DURATION   delay before each default-route response\n"
          "                     (0, 250us, 10ms, 1.5s, 2m, 1h; default 0)\n"
          "  -h, --help         show this help\n"
          "\n"
          "Routes (the query string is ignored):\n"
          "  /status/NNN   respond with status NNN\n"
          "  /bytes/N      respond with N bytes\n"
          "  /delay/MS     respond after MS milliseconds\n"
          "  /echo         respond with the request body\n"
          "  /close        respond, then close the connection\n"
          "  anything else the default route (--status, --body-size, --delay)\n",
          f);
}

/* Returns -1 to go on serving, otherwise the exit code. */
static int parse_args(serve_cfg *cfg, int argc, char **argv) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    memset(cfg, 0, sizeof(*cfg));
    set_host(cfg, "127.0.0.1");
    cfg->port = 8080;
    cfg->threads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
    cfg->status = 200;
    cfg->body_size = 12;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const struct flag *f = NULL;
        for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
            if (strlen(flags[k].name) == name_len && strncmp(arg, flags[k].name, name_len) == 0) f = &flags[k];
        if (!f) {
            fprintf(stderr, "luaload serve: unknown %s '%s' (see luaload serve --help)\n",
                    arg[0] == '-' ? "flag" : "argument", arg);
            return EXIT_USAGE;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!value) {
            fprintf(stderr, "luaload serve: %s: missing value, expected %s\n", f->name, f->expect);
            return EXIT_USAGE;
        }
        if (f->set(cfg, value) < 0) {
            fprintf(stderr, "luaload serve: %s: expected %s, got '%s'\n", f->name, f->expect, value);
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* ---- response text ---- */

static const char *reason(int status) {
    switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 418: return "I'm a teapot";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* 1xx, 204 and 304 responses never carry a body. */
static int body_allowed(int status) { return status >= 200 && status != 204 && status != 304; }

enum { CONN_HDR_NONE, CONN_HDR_CLOSE, CONN_HDR_KEEP };

static size_t append_str(char *buf, size_t cap, size_t n, const char *s) {
    size_t k = strlen(s);
    if (n + k >= cap) return n;
    memcpy(buf + n, s, k);
    return n + k;
}

/* Status line and headers. 1xx and 204 get no Content-Length (RFC 9110). */
static size_t format_head(char *buf, size_t cap, int status, uint64_t len, int conn_hdr) {
    char num[48];
    size_t n = 0;
    snprintf(num, sizeof(num), "HTTP/1.1 %d ", status);
    n = append_str(buf, cap, n, num);
    n = append_str(buf, cap, n, reason(status));
    n = append_str(buf, cap, n, "\r\nContent-Type: text/plain\r\n");
    if (status >= 200 && status != 204) {
        snprintf(num, sizeof(num), "Content-Length: %" PRIu64 "\r\n", len);
        n = append_str(buf, cap, n, num);
    }
    if (conn_hdr == CONN_HDR_CLOSE) n = append_str(buf, cap, n, "Connection: close\r\n");
    if (conn_hdr == CONN_HDR_KEEP) n = append_str(buf, cap, n, "Connection: keep-alive\r\n");
    return append_str(buf, cap, n, "\r\n");
}

/* The default route's keep-alive HTTP/1.1 response, prebuilt once. */
static int build_fast(serve_cfg *cfg) {
    char head[256];
    int has_body = body_allowed(cfg->status);
    uint64_t len = has_body ? cfg->body_size : 0;
    size_t hn = format_head(head, sizeof(head), cfg->status, len, CONN_HDR_NONE);
    size_t inline_len = len <= FILL_INLINE ? (size_t)len : 0;
    cfg->fast = malloc(hn + inline_len + 1);
    if (!cfg->fast) return -1;
    memcpy(cfg->fast, head, hn);
    if (inline_len == 12) memcpy(cfg->fast + hn, HELLO, 12);
    else memset(cfg->fast + hn, 'x', inline_len);
    cfg->fast_len = hn + inline_len;
    cfg->fast_fill = len > FILL_INLINE;
    return 0;
}

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

static void out_bytes(conn *c, const char *p, size_t n) {
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

static void out_fill(conn *c, uint64_t n) {
    if (n <= FILL_INLINE) out_bytes(c, fill_bytes, (size_t)n);
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

/* Sends as much queued output as the socket takes. -1 on a dead peer. */
static int flush(conn *c) {
    while (c->out_pending > 0) {
        struct iovec iov[IOV_BATCH];
        struct msghdr mh;
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)out_iov(c, iov);
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) {
            out_advance(c, (uint64_t)w);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return -1;
    }
    return 0;
}

/* ---- responses ---- */

static void respond_with(conn *c, int status, const char *body, uint64_t len, int fill) {
    request *r = &c->req;
    int conn_hdr = !r->keep_alive ? CONN_HDR_CLOSE : r->http10 ? CONN_HDR_KEEP : CONN_HDR_NONE;
    int has_body = body_allowed(status);
    char head[256];
    size_t n = format_head(head, sizeof(head), status, has_body ? len : 0, conn_hdr);
    out_bytes(c, head, n);
    if (!has_body || r->head) return;
    if (fill) out_fill(c, len);
    else out_bytes(c, body, (size_t)len);
}

static void respond(conn *c) {
    request *r = &c->req;
    const serve_cfg *cfg = c->w->cfg;
    char text[64];
    switch (r->route) {
    case ROUTE_DEFAULT:
        if (r->keep_alive && !r->http10 && !r->head) {
            out_bytes(c, cfg->fast, cfg->fast_len);
            if (cfg->fast_fill) out_fill(c, cfg->body_size);
        } else if (cfg->body_size == 12) {
            respond_with(c, cfg->status, HELLO, 12, 0);
        } else {
            respond_with(c, cfg->status, NULL, cfg->body_size, 1);
        }
        break;
    case ROUTE_STATUS:
        snprintf(text, sizeof(text), "%d %s\n", r->status, reason(r->status));
        respond_with(c, r->status, text, strlen(text), 0);
        break;
    case ROUTE_BYTES:
        respond_with(c, 200, NULL, r->nbytes, 1);
        break;
    case ROUTE_ECHO:
        respond_with(c, 200, c->body, c->blen, 0);
        break;
    case ROUTE_ERROR:
        respond_with(c, 400, r->msg, strlen(r->msg), 0);
        break;
    default: /* ROUTE_DELAY, ROUTE_CLOSE */
        respond_with(c, 200, HELLO, 12, 0);
        break;
    }
}

static void respond_error(conn *c) {
    request *r = &c->req;
    int status = r->err_status ? r->err_status : 400;
    const char *msg = r->err_status && r->msg ? r->msg : "bad request\n";
    r->keep_alive = 0;
    r->http10 = 0;
    r->head = 0;
    respond_with(c, status, msg, strlen(msg), 0);
    c->closing = 1;
}

/* ---- request parsing ---- */

static int is_tchar(unsigned char ch) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) return 1;
    switch (ch) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
        return 1;
    default:
        return 0;
    }
}

static int has_prefix(const char *s, size_t n, const char *pre) {
    size_t k = strlen(pre);
    return n >= k && memcmp(s, pre, k) == 0;
}

static int is_exactly(const char *s, size_t n, const char *word) {
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* Fills in route, status and delay from the request target. */
static void parse_route(request *r, const serve_cfg *cfg, const char *t, size_t n) {
    const char *end = t + n, *path = t;
    uint64_t v;
    if (has_prefix(t, n, "http://") || has_prefix(t, n, "https://")) {
        const char *host = (const char *)memchr(t, ':', n) + 3;
        path = memchr(host, '/', (size_t)(end - host));
        if (!path) path = end;
    }
    const char *q = path;
    while (q < end && *q != '?' && *q != '#') q++;
    size_t len = (size_t)(q - path);
    r->route = ROUTE_DEFAULT;
    r->status = cfg->status;
    r->delay_us = cfg->delay_us;
    r->msg = NULL;
    if (has_prefix(path, len, "/status/")) {
        r->route = ROUTE_STATUS;
        r->delay_us = 0;
        if (parse_u64n(path + 8, len - 8, &v) == 0 && v >= 100 && v <= 999) r->status = (int)v;
        else r->msg = "bad status: expected /status/100..999\n";
    } else if (has_prefix(path, len, "/bytes/")) {
        r->route = ROUTE_BYTES;
        r->delay_us = 0;
        if (parse_u64n(path + 7, len - 7, &v) == 0) r->nbytes = v;
        else r->msg = "bad size: expected /bytes/N\n";
    } else if (has_prefix(path, len, "/delay/")) {
        r->route = ROUTE_DELAY;
        r->delay_us = 0;
        if (parse_u64n(path + 7, len - 7, &v) == 0 && v <= 86400000) r->delay_us = v * 1000;
        else r->msg = "bad delay: expected /delay/MS (up to 86400000)\n";
    } else if (is_exactly(path, len, "/echo")) {
        r->route = ROUTE_ECHO;
        r->delay_us = 0;
    } else if (is_exactly(path, len, "/close")) {
        r->route = ROUTE_CLOSE;
        r->delay_us = 0;
    }
    if (r->msg) r->route = ROUTE_ERROR;
}

/* "METHOD SP target SP HTTP/1.x", eol excluded. */
static int parse_request_line(request *r, const serve_cfg *cfg, const char *p, const char *eol) {
    const char *sp = memchr(p, ' ', (size_t)(eol - p));
    if (!sp || sp == p) return -1;
    for (const char *q = p; q < sp; q++)
        if (!is_tchar((unsigned char)*q)) return -1;
    r->head = sp - p == 4 && memcmp(p, "HEAD", 4) == 0;
    const char *t = sp + 1;
    const char *sp2 = memchr(t, ' ', (size_t)(eol - t));
    if (!sp2 || sp2 == t) return -1;
    for (const char *q = t; q < sp2; q++)
        if ((unsigned char)*q <= 0x20 || *q == 0x7f) return -1;
    const char *v = sp2 + 1;
    if (eol - v != 8 || memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1')) return -1;
    r->http10 = v[7] == '0';
    parse_route(r, cfg, t, (size_t)(sp2 - t));
    return 0;
}

static void parse_connection(request *r, const char *v, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) i++;
        size_t s = i;
        while (i < n && v[i] != ',') i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
        if (e - s == 5 && strncasecmp(v + s, "close", 5) == 0) r->conn_close = 1;
        if (e - s == 10 && strncasecmp(v + s, "keep-alive", 10) == 0) r->conn_ka = 1;
    }
}

static int header_is(const char *name, size_t n, const char *want) {
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

/* One "Name: value" line, eol excluded. */
static int parse_header(request *r, const char *p, const char *eol) {
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (!colon || colon == p) return -1;
    for (const char *q = p; q < colon; q++)
        if (!is_tchar((unsigned char)*q)) return -1;
    size_t nlen = (size_t)(colon - p);
    const char *v = colon + 1, *ve = eol;
    while (v < ve && (*v == ' ' || *v == '\t')) v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
    size_t vlen = (size_t)(ve - v);
    uint64_t cl;
    if (header_is(p, nlen, "content-length")) {
        if (parse_u64n(v, vlen, &cl) < 0 || cl > (1ull << 62)) return -1;
        if (r->has_cl && cl != r->content_length) return -1;
        r->has_cl = 1;
        r->content_length = cl;
    } else if (header_is(p, nlen, "transfer-encoding")) {
        if (r->te_seen || vlen != 7 || strncasecmp(v, "chunked", 7) != 0) return -1;
        r->te_seen = 1;
        r->chunked = 1;
    } else if (header_is(p, nlen, "connection")) {
        parse_connection(r, v, vlen);
    } else if (header_is(p, nlen, "expect")) {
        r->expect_continue = vlen == 12 && strncasecmp(v, "100-continue", 12) == 0;
    }
    return 0;
}

/* Request line and headers; on success rpos moves past the blank line. */
static int parse_head(conn *c) {
    request *r = &c->req;
    while (c->rlen - c->rpos >= 2 && c->rbuf[c->rpos] == '\r' && c->rbuf[c->rpos + 1] == '\n') {
        c->rpos += 2; /* empty lines before a request line are allowed */
        c->scan = 0;
    }
    char *start = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    char *end = avail >= 4 ? memmem(start + c->scan, avail - c->scan, "\r\n\r\n", 4) : NULL;
    if (!end) {
        c->scan = avail > 3 ? avail - 3 : 0;
        return avail > HEAD_MAX ? P_BAD : P_MORE;
    }
    size_t head_len = (size_t)(end - start) + 4;
    c->scan = 0;
    if (head_len > HEAD_MAX) return P_BAD;
    char *stop = end + 2; /* the blank line */
    char *eol = memchr(start, '\n', (size_t)(stop - start));
    char *line_end = eol > start && eol[-1] == '\r' ? eol - 1 : eol;
    if (parse_request_line(r, c->w->cfg, start, line_end) < 0) return P_BAD;
    for (char *line = eol + 1; line < stop; line = eol + 1) {
        eol = memchr(line, '\n', (size_t)(stop - line));
        line_end = eol > line && eol[-1] == '\r' ? eol - 1 : eol;
        if (parse_header(r, line, line_end) < 0) return P_BAD;
    }
    c->rpos += head_len;
    if (r->chunked && r->has_cl) return P_BAD;
    r->keep_alive = r->http10 ? r->conn_ka && !r->conn_close : !r->conn_close;
    if (r->route == ROUTE_CLOSE) r->keep_alive = 0;
    if (r->route == ROUTE_ECHO && r->content_length > ECHO_MAX) {
        r->err_status = 413;
        r->msg = "request body too large for /echo\n";
        return P_BAD;
    }
    r->state = r->chunked ? RS_CHUNK_SIZE : r->content_length > 0 ? RS_BODY : RS_READY;
    r->left = r->content_length;
    if (r->expect_continue && !r->http10 && r->state != RS_READY) out_bytes(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    return P_OK;
}

static int body_append(conn *c, const char *p, size_t n) {
    request *r = &c->req;
    if (r->route != ROUTE_ECHO || n == 0) return 0; /* other routes drop the body */
    if (c->blen + n > ECHO_MAX) {
        r->err_status = 413;
        r->msg = "request body too large for /echo\n";
        return -1;
    }
    if (c->bcap - c->blen < n) {
        size_t cap = c->bcap ? c->bcap : BUF_INIT;
        while (cap - c->blen < n) cap *= 2;
        char *b = realloc(c->body, cap);
        if (!b) {
            r->err_status = 413;
            r->msg = "out of memory for the /echo body\n";
            return -1;
        }
        c->body = b;
        c->bcap = cap;
    }
    memcpy(c->body + c->blen, p, n);
    c->blen += n;
    return 0;
}

static int parse_body_data(conn *c) {
    request *r = &c->req;
    size_t avail = c->rlen - c->rpos;
    size_t take = r->left < avail ? (size_t)r->left : avail;
    if (body_append(c, c->rbuf + c->rpos, take) < 0) return P_BAD;
    c->rpos += take;
    r->left -= take;
    if (r->left > 0) return P_MORE;
    r->state = r->state == RS_BODY ? RS_READY : RS_CHUNK_END;
    return P_OK;
}

static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* "1a;ext=1\r\n" */
static int parse_chunk_size(conn *c) {
    request *r = &c->req;
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    const char *nl = memchr(p, '\n', avail);
    if (!nl) return avail > CHUNK_LINE_MAX ? P_BAD : P_MORE;
    uint64_t size = 0;
    const char *q = p;
    for (; q < nl && hex_value(*q) >= 0; q++) {
        if (size >> 58) return P_BAD;
        size = size * 16 + (uint64_t)hex_value(*q);
    }
    if (q == p || (*q != ';' && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n')) return P_BAD;
    c->rpos += (size_t)(nl - p) + 1;
    r->left = size;
    r->state = size ? RS_CHUNK_DATA : RS_TRAILER;
    return P_OK;
}

/* The CRLF after a chunk's data. */
static int parse_chunk_end(conn *c) {
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    size_t n = avail >= 1 && p[0] == '\n' ? 1 : 2;
    if (avail < n) return P_MORE;
    if (n == 2 && (p[0] != '\r' || p[1] != '\n')) return P_BAD;
    c->rpos += n;
    c->req.state = RS_CHUNK_SIZE;
    return P_OK;
}

/* Trailer fields (ignored) up to the blank line that ends the body. */
static int parse_trailer(conn *c) {
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    const char *nl = memchr(p, '\n', avail);
    if (!nl) return avail > HEAD_MAX ? P_BAD : P_MORE;
    size_t len = (size_t)(nl - p);
    c->rpos += len + 1;
    if (len == 0 || (len == 1 && p[0] == '\r')) c->req.state = RS_READY;
    return P_OK;
}

static int parse_body(conn *c) {
    for (;;) {
        int rc;
        switch (c->req.state) {
        case RS_READY: return P_OK;
        case RS_BODY:
        case RS_CHUNK_DATA: rc = parse_body_data(c); break;
        case RS_CHUNK_SIZE: rc = parse_chunk_size(c); break;
        case RS_CHUNK_END: rc = parse_chunk_end(c); break;
        case RS_TRAILER: rc = parse_trailer(c); break;
        default: return P_BAD;
        }
        if (rc != P_OK) return rc;
    }
}

static void request_reset(conn *c) {
    memset(&c->req, 0, sizeof(c->req));
    c->blen = 0;
    if (c->bcap > BUF_KEEP) {
        free(c->body);
        c->body = NULL;
        c->bcap = 0;
    }
}

/* Answers every complete request in rbuf, in order, until one is delayed,
 * the connection is closing, output backs up, or more input is needed. */
static int process(conn *c) {
    request *r = &c->req;
    for (;;) {
        if (c->closing || c->failed) return STOP_CLOSE;
        if (c->delay_pending) return STOP_DELAY;
        if (c->full) return STOP_FULL;
        int rc = r->state == RS_HEAD ? parse_head(c) : P_OK;
        if (rc == P_OK) rc = parse_body(c);
        if (rc == P_MORE) return STOP_MORE;
        if (rc == P_BAD) {
            respond_error(c);
            continue;
        }
        if (r->delay_us && !r->delay_done) {
            c->delay_pending = 1;
            ll_timer_start(c->w->loop, &c->timer, r->delay_us);
            continue;
        }
        respond(c);
        if (!r->keep_alive) c->closing = 1;
        request_reset(c);
        if (c->out_pending >= OUT_HIGH) c->full = 1;
    }
}

/* ---- connections ---- */

static void conn_close(conn *c) {
    worker *w = c->w;
    ll_timer_stop(w->loop, &c->timer);
    ll_loop_watch(w->loop, c->fd, 0, NULL, NULL);
    close(c->fd);
    if (c->prev) c->prev->next = c->next;
    else w->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c->rbuf);
    free(c->body);
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
    if (!c->eof && !c->closing && !c->delay_pending && !c->full) ev |= LL_READABLE;
    if (c->out_pending > 0) ev |= LL_WRITABLE;
    return ev;
}

/* Everything is sent and the connection should end: half-close, then read
 * and drop what the client still sends (so close() cannot reset the
 * connection under an unread response) until EOF or LINGER_US. */
static void conn_finish(conn *c) {
    if (c->eof || shutdown(c->fd, SHUT_WR) < 0) {
        conn_close(c);
        return;
    }
    c->lingering = 1;
    ll_timer_start(c->w->loop, &c->timer, LINGER_US);
    if (conn_set_events(c, LL_READABLE) < 0) conn_close(c);
}

static void linger_read(conn *c) {
    char buf[4096];
    for (int i = 0; i < 16; i++) {
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n > 0) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        break;
    }
    conn_close(c);
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

/* Answers what can be answered, sends, then watches what is needed next. */
static void conn_drive(conn *c) {
    int why;
    do {
        why = process(c);
        if (why == STOP_MORE && c->eof) c->closing = 1;
        if (c->failed || flush(c) < 0) {
            conn_close(c);
            return;
        }
    } while (why == STOP_FULL && !c->full);
    if (c->closing && c->out_pending == 0) {
        conn_finish(c);
        return;
    }
    if (conn_set_events(c, wanted_events(c)) < 0) conn_close(c);
}

static void on_conn_io(ll_loop *loop, int fd, int events, void *ud) {
    conn *c = ud;
    (void)loop;
    (void)fd;
    if (c->lingering) {
        linger_read(c);
        return;
    }
    if ((events & LL_READABLE) && (c->events & LL_READABLE) && conn_read(c) < 0) {
        conn_close(c);
        return;
    }
    conn_drive(c);
}

static void on_conn_timer(ll_loop *loop, void *ud) {
    conn *c = ud;
    (void)loop;
    if (c->lingering) {
        conn_close(c);
        return;
    }
    c->delay_pending = 0;
    c->req.delay_done = 1;
    conn_drive(c);
}

static void conn_open(worker *w, int fd) {
    int one = 1;
    conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    c->w = w;
    ll_timer_init(&c->timer, on_conn_timer, c);
    c->next = w->conns;
    if (w->conns) w->conns->prev = c;
    w->conns = c;
    if (conn_set_events(c, LL_READABLE) < 0) conn_close(c);
}

/* ---- workers ---- */

static void on_accept(ll_loop *loop, int lfd, int events, void *ud);

static void on_accept_resume(ll_loop *loop, void *ud) {
    worker *w = ud;
    if (ll_loop_watch(loop, w->lfd, LL_READABLE, on_accept, w) < 0)
        ll_timer_start(loop, &w->accept_timer, ACCEPT_PAUSE_US);
}

/* Out of descriptors or memory: stop accepting for a moment instead of
 * spinning on a listener that stays readable. */
static void accept_pause(worker *w, int err) {
    if (!w->accept_warned) {
        fprintf(stderr, "luaload serve: accept: %s (pausing accepts; raise ulimit -n?)\n", strerror(err));
        w->accept_warned = 1;
    }
    ll_loop_watch(w->loop, w->lfd, 0, NULL, NULL);
    ll_timer_start(w->loop, &w->accept_timer, ACCEPT_PAUSE_US);
}

static void on_accept(ll_loop *loop, int lfd, int events, void *ud) {
    worker *w = ud;
    (void)loop;
    (void)events;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_open(w, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) accept_pause(w, errno);
        return;
    }
}

static void *worker_main(void *arg) {
    worker *w = arg;
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) ll_loop_turn(w->loop, 100);
    return NULL;
}

static void worker_free(worker *w) {
    while (w->conns) conn_close(w->conns);
    if (w->lfd >= 0) close(w->lfd);
    ll_loop_free(w->loop);
}

static void set_port_in(struct sockaddr_storage *ss, int port) {
    if (ss->ss_family == AF_INET6) ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

static int port_of(const struct sockaddr_storage *ss) {
    if (ss->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static void listen_error(const serve_cfg *cfg, int port, const char *what) {
    int v6 = cfg->addr.ss_family == AF_INET6;
    fprintf(stderr, "luaload serve: cannot listen on %s%s%s:%d: %s: %s\n", v6 ? "[" : "", cfg->host_text,
            v6 ? "]" : "", port, what, strerror(errno));
}

/* A listener without SO_REUSEPORT: fails when anything (even another
 * SO_REUSEPORT server, which would otherwise silently share) owns the port. */
static int probe_port(const serve_cfg *cfg) {
    struct sockaddr_storage ss = cfg->addr;
    int one = 1, rc = -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        listen_error(cfg, cfg->port, "socket");
        return -1;
    }
    set_port_in(&ss, cfg->port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, cfg->addrlen) < 0) listen_error(cfg, cfg->port, "bind");
    else rc = 0;
    close(fd);
    return rc;
}

/* Binds and listens; returns the fd and sets *bound to the real port. */
static int open_listener(const serve_cfg *cfg, int port, int *bound) {
    struct sockaddr_storage ss = cfg->addr;
    socklen_t len = sizeof(ss);
    int one = 1;
    const char *what = "socket";
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    set_port_in(&ss, port);
    what = "setsockopt";
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) goto fail;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) goto fail;
    what = "bind";
    if (bind(fd, (struct sockaddr *)&ss, cfg->addrlen) < 0) goto fail;
    what = "listen";
    if (listen(fd, 65535) < 0) goto fail;
    what = "getsockname";
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) goto fail;
    *bound = port_of(&ss);
    return fd;
fail:
    listen_error(cfg, port, what);
    if (fd >= 0) close(fd);
    return -1;
}

static int worker_setup(worker *w, const serve_cfg *cfg, int port, int *bound) {
    w->cfg = cfg;
    ll_timer_init(&w->accept_timer, on_accept_resume, w);
    w->lfd = open_listener(cfg, port, bound);
    if (w->lfd < 0) return -1;
    w->loop = ll_loop_new();
    if (!w->loop || ll_loop_watch(w->loop, w->lfd, LL_READABLE, on_accept, w) < 0) {
        fprintf(stderr, "luaload serve: cannot create an event loop: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- process ---- */

static void on_stop_signal(int sig) {
    (void)sig;
    atomic_store(&stop_requested, 1);
}

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max) return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

int ll_serve_main(int argc, char **argv) {
    serve_cfg cfg;
    worker *ws = NULL;
    struct sigaction sa, old_int, old_term;
    int code = parse_args(&cfg, argc, argv);
    int port, v6, started = 0, signals_set = 0;
    if (code >= 0) return code;
    code = 1;
    raise_nofile();
    memset(fill_bytes, 'x', sizeof(fill_bytes));
    atomic_store(&stop_requested, 0);
    ws = calloc((size_t)cfg.threads, sizeof(*ws));
    if (!ws || build_fast(&cfg) < 0) {
        fprintf(stderr, "luaload serve: out of memory\n");
        goto out;
    }
    for (int i = 0; i < cfg.threads; i++) ws[i].lfd = -1;
    if (cfg.port != 0 && probe_port(&cfg) < 0) goto out;
    port = cfg.port;
    for (int i = 0; i < cfg.threads; i++)
        if (worker_setup(&ws[i], &cfg, port, &port) < 0) goto out;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signals_set = 1;

    v6 = cfg.addr.ss_family == AF_INET6;
    printf("luaload serve: listening on http://%s%s%s:%d/ (%d threads)\n", v6 ? "[" : "", cfg.host_text,
           v6 ? "]" : "", port, cfg.threads);
    fflush(stdout);

    code = 0;
    for (; started < cfg.threads; started++) {
        int err = pthread_create(&ws[started].tid, NULL, worker_main, &ws[started]);
        if (err != 0) {
            fprintf(stderr, "luaload serve: cannot start a thread: %s\n", strerror(err));
            atomic_store(&stop_requested, 1);
            code = 1;
            break;
        }
    }
    for (int i = 0; i < started; i++) pthread_join(ws[i].tid, NULL);

out:
    if (signals_set) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    for (int i = 0; ws && i < cfg.threads; i++) worker_free(&ws[i]);
    free(ws);
    free(cfg.fast);
    return code;
}
