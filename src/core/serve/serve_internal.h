/* serve_internal.h -- private to src/core/serve/: the types `luaload serve`'s
 * files share (configuration, request, connection, worker), the limits more
 * than one file uses, and each file's cross-file functions.
 *
 *   serve.c     flags, ll_serve_main: threads, signals, stopping, stats line
 *   listener.c  listening sockets, the per-thread worker loop, accept
 *   conn.c      connection I/O: read, output queue, events, timers, close
 *   request.c   HTTP/1.1 request parsing (head, Content-Length, chunked)
 *   routes.c    routes and their responses
 *   upload.c    the upload routes' bodies: /sha256, /multipart (multipart.c)
 *   multipart.c streaming multipart/form-data parser (multipart.h)
 *   faults.c    fault injection: --faults, the seeded draw, each fault's bytes
 *   stats.c     request accounting: the per-thread counters' JSON (/stats)
 *   headers.c   --echo-header: the named headers' requests, missing, distinct
 *   distinct.c  the distinct-values set the threads share (hash, HyperLogLog)
 *   app.c       the demo application: /api/login, /api/items, /login, /welcome
 *   ws.c        WebSocket: the upgrade, /ws/echo and /ws/send over wslay
 *   sse.c       server-sent events: /sse's stream of events
 *   h2.c        HTTP/2 with prior knowledge (h2c) on nghttp2's server session
 *   grpc_echo.c the gRPC echo h2.c's streams answer with (serve_h2.h)
 *
 * Data flow per connection: conn.c reads into rbuf; request.c parses as many
 * complete requests as it can; routes.c appends their responses to conn.c's
 * output queue (bytes in wbuf, large 'x' bodies as "fill" segments that
 * point at a shared static buffer, so /bytes/N never copies); conn.c sends
 * the queue with one sendmsg(). Request bodies are dropped as they are
 * parsed, except /echo's (kept in body) and the upload routes' (passed on
 * to upload.c, which hashes them and keeps nothing) and the demo
 * application's (kept in body after its Authorization and Cookie lines,
 * for app.c). A request that drew
 * a fault (faults.c) gets faults.c's response instead, which may pace the
 * output queue (conn.c sends it a few bytes at a time) or end the
 * connection.
 *
 * A WebSocket upgrade (/ws/echo, /ws/send) turns the connection over to
 * ws.c for good: wslay reads the frames from rbuf and writes its frames to
 * the output queue; conn.c still does the socket I/O. An /sse response is a
 * stream: sse.c queues its events a step at a time (on the connection's
 * timer, or as the output queue drains) and further requests wait, as they
 * do behind a delayed one.
 *
 * A connection whose first bytes are HTTP/2's preface goes to h2.c for
 * good, as an upgraded one goes to ws.c: nghttp2 reads the frames from
 * rbuf and its frames go to the output queue; each gRPC call is
 * grpc_echo.c's. */
#ifndef LL_SERVE_INTERNAL_H
#define LL_SERVE_INTERNAL_H

#include "buf.h"
#include "loop.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define BUF_INIT 4096
#define BUF_KEEP (1024 * 1024)          /* free idle buffers bigger than this */
#define FILL_INLINE 8192                /* fill bodies up to this are copied */
#define HEADERS_MAX 8                   /* --echo-header names */
#define HEADER_NAME_MAX 128
#define HEADERS_LIMIT_DEFAULT 4000000   /* --echo-header-limit */
#define OUT_HIGH (1024 * 1024)          /* stop parsing (streams: queueing) above this much queued output */
#define WS_MSG_MAX (1024 * 1024)        /* largest WebSocket message received (1009 past it) or sent */
#define WS_KEY_LEN 24                   /* Sec-WebSocket-Key: base64 of 16 bytes */
#define WS_PROTO_MAX 64                 /* the subprotocol /ws/ routes echo */
#define SSE_EVENT_MAX 64                /* /sse's event=NAME */

/* ---- routes and faults (their names: ll_routes_name, ll_faults_name) ---- */

/* ROUTE_MALFORMED is no route: it counts the requests the parser refused
 * (a 400, or a 413 for /echo and the demo application; stats only).
 * ROUTE_API is the demo application's /api/..., ROUTE_LOGIN its /login
 * and /welcome pages (app.c). */
enum {
    ROUTE_DEFAULT, ROUTE_STATUS, ROUTE_BYTES, ROUTE_DELAY, ROUTE_ECHO, ROUTE_CLOSE, ROUTE_SHA256,
    ROUTE_MULTIPART, ROUTE_ERROR, ROUTE_FAULT, ROUTE_STATS, ROUTE_API, ROUTE_LOGIN, ROUTE_WS_ECHO, ROUTE_WS_SEND,
    ROUTE_SSE, ROUTE_GRPC, ROUTE_MALFORMED, ROUTE_COUNT
};
/* The request methods the demo application tells apart, and those /stats
 * counts by name (ll_request_method_name). */
enum {
    METHOD_OTHER, METHOD_GET, METHOD_HEAD, METHOD_POST, METHOD_PUT, METHOD_DELETE, METHOD_PATCH,
    METHOD_OPTIONS, METHOD_TRACE, METHOD_CONNECT, METHOD_COUNT
};
enum {
    FAULT_NONE, FAULT_RESET, FAULT_CLOSE_HEADERS, FAULT_CLOSE_BODY, FAULT_GARBAGE, FAULT_SLOW_HEADERS,
    FAULT_SLOW_BODY, FAULT_STALL, FAULT_HUGE_HEADERS, FAULT_EARLY_HINTS, FAULT_COUNT
};

typedef struct worker worker;
typedef struct upload upload; /* upload.c's */
typedef struct distinct distinct; /* distinct.c's */
typedef struct ws_session ws_session; /* ws.c's */
typedef struct h2_session h2_session; /* h2.c's */

/* ---- configuration (serve.c fills it; read-only once serving) ---- */

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
    int faults_on;    /* --faults gave some fault a nonzero chance */
    uint32_t fault_cum[FAULT_COUNT]; /* cumulative chances in parts per million */
    uint64_t seed;
    int seed_set;
    uint64_t die_after_us; /* 0: serve until a signal */
    int nhdr;         /* --echo-header names (0: no header counting) */
    char hdr_names[HEADERS_MAX][HEADER_NAME_MAX + 1]; /* lowercase */
    size_t hdr_lens[HEADERS_MAX];
    uint64_t hdr_limit; /* --echo-header-limit: values each set holds */
    distinct *hdr_sets[HEADERS_MAX]; /* shared by the threads (locks inside) */
    worker *workers;  /* all of them, for /stats */
} serve_cfg;

/* ---- requests and connections ---- */

enum { RS_HEAD, RS_BODY, RS_CHUNK_SIZE, RS_CHUNK_DATA, RS_CHUNK_END, RS_TRAILER, RS_READY };
enum { P_MORE, P_OK, P_BAD };

/* /ws/send's and /sse's query parameters (routes.c parses them), and
 * sse.c's progress through its stream. */
typedef struct stream_params {
    uint64_t n;           /* messages or events */
    uint64_t size;        /* /ws/send: bytes per message */
    uint64_t interval_us; /* between two messages or events */
    uint64_t retry_ms;    /* /sse: retry: in the first event, when has_retry */
    int has_retry;
    int lines;            /* /sse: data: lines per event */
    char event[SSE_EVENT_MAX + 1]; /* /sse: event: NAME, "" for none */
    int chunked;          /* /sse: the stream is chunked (HTTP/1.1), else ends with the connection */
    uint64_t sent;        /* /sse: events queued so far */
    uint64_t next_ns;     /* /sse: when the next one is due (ll_loop_now) */
} stream_params;

typedef struct request {
    int state;            /* RS_* */
    int route;            /* ROUTE_* */
    int method;           /* METHOD_* */
    int fault;            /* FAULT_*: /fault/NAME or drawn for --faults */
    int status;
    uint64_t nbytes;      /* body size for /bytes/N */
    uint64_t delay_us;
    uint64_t left;        /* body bytes still to read: Content-Length or chunk */
    uint64_t content_length;
    size_t head_len;      /* status line + headers of the response routes.c queued */
    const char *msg;      /* body of ROUTE_ERROR and of parse errors */
    const char *msg_extra; /* ROUTE_ERROR: more header lines (each ending in CRLF), or NULL */
    const char *ctype;    /* the Content-Type value, in rbuf: valid only while the head is parsed */
    size_t ctype_len;
    int err_status;       /* parse errors: 400 unless set */
    int app_page;         /* ROUTE_API, ROUTE_LOGIN: which page (app.c's APP_*) */
    uint64_t app_id;      /* /api/items/ID */
    size_t app_hdr_len;   /* the kept header lines at the start of body */
    unsigned hdr_seen;    /* bit k: the --echo-header name k was in the head */
    int has_cl, chunked, te_seen;
    int conn_close, conn_ka, expect_continue;
    int http10, head, keep_alive, delay_done;
    stream_params sp;     /* ROUTE_WS_SEND, ROUTE_SSE */
    /* a /ws/ route's handshake headers (ws.c reads them) */
    int conn_upgrade;     /* Connection: has the upgrade token */
    int ws_upgrade;       /* Upgrade: has the websocket token */
    int ws_version;       /* Sec-WebSocket-Version (-1: not a number) */
    int ws_keys;          /* Sec-WebSocket-Key lines seen */
    char ws_key[WS_KEY_LEN + 1]; /* the key when it had WS_KEY_LEN characters, else "" */
    char ws_proto[WS_PROTO_MAX + 1]; /* the first subprotocol offered, or "" */
} request;

typedef struct seg {
    uint64_t len;
    size_t off;           /* into wbuf, unless fill */
    int fill;             /* len bytes of conn.c's fill bytes */
} seg;

typedef struct conn {
    int fd;
    int events;           /* what the loop watches now */
    int eof, closing, lingering, delay_pending, full, failed;
    int reset;            /* close with RST once the output is sent (reset fault) */
    int stalled;          /* never answer again; drop input until EOF (stall fault) */
    int pacing;           /* the output queue is released a step per timer tick */
    int used;             /* a request was counted on it (stats: reused) */
    int streaming;        /* an /sse response is under way (sse.c); requests wait */
    int h1;               /* its first bytes were no HTTP/2 preface: HTTP/1.x for good */
    ws_session *ws;       /* after a WebSocket upgrade: ws.c's session */
    h2_session *h2;       /* after HTTP/2's preface: h2.c's session */
    worker *w;
    struct conn *prev, *next;
    ll_timer timer;       /* delayed response, or lingering close */
    request req;
    char *rbuf;
    size_t rpos, rlen, rcap, scan;
    char *body;           /* /echo request body; the demo application's header lines and body */
    size_t blen, bcap;
    upload *up;           /* /sha256 and /multipart: upload.c's state, NULL before the first */
    uint64_t hdr_hash[HEADERS_MAX][2]; /* the value's hash where req.hdr_seen has bit k */
    char *wbuf;
    size_t wlen, wcap;
    seg *segs;
    size_t nseg, scap, seg_head;
    uint64_t seg_done, out_pending;
    uint64_t pace_cap;    /* pacing: bytes flush may send before the next tick */
    uint64_t pace_left;   /* pacing: bytes still held back */
    uint64_t pace_step, pace_us;
} conn;

/* One thread's counters. Only that thread writes them (ll_stats_add: a
 * relaxed load and store, no locked instruction); /stats and the exit line
 * read every thread's with relaxed loads. A request bumps one route counter
 * (the total is their sum; /stats counts in routes[ROUTE_STATS], which the
 * JSON leaves out) and, when it faults, one fault counter; a complete
 * request other than /stats one method counter, reused when its
 * connection had carried a request before, and with --echo-header one of
 * hdr_requests[k] or hdr_missing[k] per name. connections counts accepts.
 * A WebSocket upgrade or an /sse request is one request like any other;
 * ws_sessions counts the upgrades accepted (101), ws_msgs_* the data
 * messages (not control frames) a session received and queued to send,
 * sse_streams the /sse streams begun (not HEAD), sse_events their events.
 * On HTTP/2 (h2.c) each stream's request is one request (a gRPC call is
 * ROUTE_GRPC, anything else a 404 counted as ROUTE_ERROR); h2_connections
 * counts the connections that began with the preface, h2_streams their
 * requests, grpc_msgs_* the gRPC messages received and echoed.
 * The pad keeps the next worker's fields off the last cache line. */
typedef struct serve_stats {
    _Atomic uint64_t bytes_received, bytes_sent;
    _Atomic uint64_t routes[ROUTE_COUNT];
    _Atomic uint64_t faults[FAULT_COUNT];
    _Atomic uint64_t methods[METHOD_COUNT];
    _Atomic uint64_t connections, reused;
    _Atomic uint64_t hdr_requests[HEADERS_MAX], hdr_missing[HEADERS_MAX];
    _Atomic uint64_t ws_sessions, ws_msgs_received, ws_msgs_sent;
    _Atomic uint64_t sse_streams, sse_events;
    _Atomic uint64_t h2_connections, h2_streams, grpc_msgs_received, grpc_msgs_sent;
    char pad[64];
} serve_stats;

static inline void ll_stats_add(_Atomic uint64_t *counter, uint64_t n) {
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* One per thread: its listener, event loop, connections, fault draw state
 * and counters. */
struct worker {
    pthread_t tid;
    int lfd;
    int accept_warned;
    ll_loop *loop;
    const serve_cfg *cfg;
    ll_timer accept_timer;
    conn *conns;
    uint64_t rng;         /* faults.c's xorshift state */
    serve_stats stats;
};

/* ---- listener.c ---- */

/* Binds cfg's address and port without SO_REUSEPORT and closes it again:
 * fails (with a message) when anything, even another SO_REUSEPORT server
 * that would otherwise silently share, owns the port. 0 or -1. */
int ll_listener_probe_port(const serve_cfg *cfg);
/* Opens w's SO_REUSEPORT listener on port (0: any) and its event loop;
 * sets *bound to the real port. 0, or -1 after a message on stderr. */
int ll_listener_setup(worker *w, const serve_cfg *cfg, int port, int *bound);
/* Thread entry (arg: the worker): turns w's loop until ll_listener_set_stop(1). */
void *ll_listener_run(void *arg);
/* Sets the flag every worker loop checks; async-signal-safe. */
void ll_listener_set_stop(int stop);
/* Closes w's connections, listener and loop (after its thread ended). */
void ll_listener_free(worker *w);

/* ---- conn.c ---- */

/* Fills the shared fill bytes with 'x'; once, before any thread serves. */
void ll_conn_fill_init(void);
/* Takes over an accepted, non-blocking socket. */
void ll_conn_open(worker *w, int fd);
void ll_conn_close(conn *c);
/* Queue output; on out of memory they set c->failed (the connection closes). */
void ll_conn_out_bytes(conn *c, const char *p, size_t n);
void ll_conn_out_fill(conn *c, uint64_t n);
/* Sends the next `paced` bytes queued after the `before` bytes already
 * queued spread over over_us (a step per timer tick), and holds further
 * requests until they are released. */
void ll_conn_pace(conn *c, uint64_t before, uint64_t paced, uint64_t over_us);

/* ---- request.c ---- */

/* Parses c->req on from c->rbuf[c->rpos]: the head (when state is RS_HEAD),
 * then the body. P_OK when the request is complete (state RS_READY), P_MORE
 * for more input, P_BAD for a malformed or refused request. */
int ll_request_parse(conn *c);
/* Clears c->req for the next request on c. */
void ll_request_reset(conn *c);
/* n decimal digits into *out (no sign, no overflow). 0 or -1. */
int ll_request_parse_u64n(const char *s, size_t n, uint64_t *out);
/* A character of an HTTP token (method, header name). */
int ll_request_is_tchar(unsigned char ch);
/* METHOD_* of an n-byte method name (case-sensitive). */
int ll_request_method(const char *p, size_t n);
/* "GET", ..., "CONNECT"; "other" for METHOD_OTHER. */
const char *ll_request_method_name(int method);

/* ---- routes.c ---- */

/* Fills in r's route, status, delay and error message from the request
 * target t (n bytes; absolute form and query string allowed). */
void ll_routes_match(request *r, const serve_cfg *cfg, const char *t, size_t n);
/* Builds cfg->fast, the default route's keep-alive HTTP/1.1 response;
 * once, before any thread serves. */
void ll_routes_build_fast(serve_cfg *cfg);
/* Queues the response to the complete request c->req (no fault). */
void ll_routes_respond(conn *c);
/* The same without the default route's prebuilt response, with the filler
 * headers of a huge-headers fault; returns the length of the status line
 * and headers it queued. */
size_t ll_routes_respond_general(conn *c);
/* Queues the error response to a P_BAD request and marks c closing. */
void ll_routes_respond_error(conn *c);
const char *ll_routes_name(int route);

/* ---- ws.c ---- */

enum { WS_OPEN, WS_DONE };

/* A header line of a /ws/ route's request (request.c hands over those it
 * does not know): Upgrade, Sec-WebSocket-Key, -Version and -Protocol. */
void ll_ws_header(request *r, const char *name, size_t nlen, const char *v, size_t vlen);
/* The head of a /ws/ request is parsed: makes it ROUTE_ERROR (400, or 426
 * with an Upgrade header) with a one-line reason unless it is a valid
 * WebSocket upgrade (RFC 6455 4.2.1). */
void ll_ws_check(request *r);
/* Queues the 101 to the complete, valid upgrade c->req and starts c->ws. */
void ll_ws_accept(conn *c);
/* Feeds rbuf's frames to the session, runs /ws/send's schedule and queues
 * the frames to send. WS_DONE when the session is over (close handshake
 * done or timed out, the peer gone, a protocol error answered). */
int ll_ws_pump(conn *c);
/* The session would read more input now (not backed up, not closed). */
int ll_ws_wants_read(const conn *c);
/* The session could do more now (input in rbuf, a /ws/send message due). */
int ll_ws_ready(const conn *c);
/* The connection's timer fired: /ws/send's next message, or the wait for
 * the peer's close frame is over. */
void ll_ws_timer(conn *c);
void ll_ws_session_free(ws_session *s);

/* ---- sse.c ---- */

enum { SSE_FULL, SSE_WAIT, SSE_DONE };

/* Queues the head of the /sse response to c->req and, unless it is HEAD,
 * marks c streaming (the events follow in ll_sse_step). */
void ll_sse_begin(conn *c);
/* Queues the events that are due: SSE_FULL when the output queue is above
 * OUT_HIGH, SSE_WAIT when the next is on the timer, SSE_DONE after the
 * last (the stream's end is queued and c is no longer streaming). */
int ll_sse_step(conn *c);

/* ---- h2.c ---- */

enum { H2_NO, H2_MORE, H2_YES };
enum { H2_OPEN, H2_DONE };

/* Whether c's unread input begins with HTTP/2's preface: H2_MORE while
 * what has arrived is a beginning of it. */
int ll_h2_preface(const conn *c);
/* Starts c->h2 (nghttp2 reads the preface from rbuf itself). */
void ll_h2_start(conn *c);
/* Feeds rbuf's frames to the session and queues its frames to send.
 * H2_DONE when the connection is over (GOAWAY exchanged, a fatal error,
 * the peer gone). */
int ll_h2_pump(conn *c);
/* The session would read more input now (not backed up). */
int ll_h2_wants_read(const conn *c);
/* The session could do more now (input in rbuf, frames to send). */
int ll_h2_ready(const conn *c);
void ll_h2_session_free(h2_session *s);

/* ---- faults.c ---- */

/* Parses --faults ("reset=1%,stall=0.5%") into cfg->fault_cum and
 * cfg->faults_on. 0, or -1 with a one-line reason in why. */
int ll_faults_parse(serve_cfg *cfg, const char *spec, char *why, size_t whylen);
/* Builds the huge-headers filler; once, before any thread serves. */
void ll_faults_init(void);
/* Seeds w's draw from seed and the worker's index. */
void ll_faults_seed(worker *w, uint64_t seed, int index);
/* A fault for one request with --faults' chances (FAULT_NONE mostly). */
int ll_faults_draw(worker *w);
/* FAULT_* for the n-byte name, or FAULT_NONE. */
int ll_faults_lookup(const char *name, size_t n);
const char *ll_faults_name(int fault);
/* Queues (or withholds) the response to c->req, which drew c->req.fault. */
void ll_faults_respond(conn *c);
/* Queues the huge-headers fault's filler header lines. */
void ll_faults_out_filler(conn *c);

/* ---- upload.c ---- */

/* The head of a /sha256 or /multipart request is parsed (c->req.ctype is
 * still valid): starts hashing, or the multipart parser for its boundary. */
void ll_upload_begin(conn *c);
/* The next n bytes of its body (chunked bodies decoded). */
void ll_upload_data(conn *c, const char *p, size_t n);
/* Its body is complete: the answer is ready, or the request became
 * ROUTE_ERROR (a 400 for a bad multipart body, with its reason as msg). */
void ll_upload_end(conn *c);
/* The answer: the hex SHA-256 and "\n", or the parts' JSON and "\n". */
const char *ll_upload_answer(const conn *c, size_t *len);
/* /sha256: the body's size in bytes. */
uint64_t ll_upload_body_size(const conn *c);
/* After the response is queued: frees a big answer buffer. */
void ll_upload_trim(upload *up);
void ll_upload_free(upload *up);

/* ---- app.c ---- */

/* The demo application's answer to one request, which routes.c queues. */
typedef struct app_reply {
    int status;
    const char *type;     /* Content-Type */
    char extra[512];      /* more header lines, each ending in CRLF */
    ll_buf body;
} app_reply;

/* Draws the per-process key of the tokens and empties the item store;
 * once, before any thread serves. ll_app_free frees the store, after the
 * threads are done. */
void ll_app_init(void);
void ll_app_free(void);
/* For a demo application path (len bytes, no query): sets r's app_page
 * and app_id and returns ROUTE_API or ROUTE_LOGIN; otherwise -1. */
int ll_app_match(request *r, const char *path, size_t len);
/* The answer to the complete request c->req (method, page, the header
 * lines request.c kept and the body in c->body); the caller frees
 * a->body. */
void ll_app_respond(const conn *c, app_reply *a);

/* ---- headers.c ---- */

/* --echo-header NAME: adds the name (lowercased) to cfg. 0, or -1 with a
 * one-line reason in why (none for an empty name). */
int ll_headers_add_name(serve_cfg *cfg, const char *name, char *why, size_t whylen);
/* The names' distinct sets; once, before any thread serves. 0, or -1
 * after a message. ll_headers_free frees them after the threads are done. */
int ll_headers_init(serve_cfg *cfg);
void ll_headers_free(serve_cfg *cfg);
/* A header line of c's request is being parsed (value in rbuf; only while
 * cfg->nhdr): notes and hashes it when it is one of the names. */
void ll_headers_seen(conn *c, const char *name, size_t nlen, const char *v, size_t vlen);
/* The complete request c->req is counted (not /stats; only while
 * cfg->nhdr): present or missing per name, and the values' sets. */
void ll_headers_account(conn *c);
/* Appends the "headers" object: {"name":{"requests":N,"distinct":N,
 * "missing":N,"distinct_exact":true},...}, {} without --echo-header. */
void ll_headers_json(ll_buf *b, const worker *ws, int n);

/* ---- distinct.c ---- */

/* The 128-bit hash of n bytes (never {0, 0}). */
void ll_distinct_hash(const void *p, size_t n, uint64_t h[2]);
/* A set that holds up to limit hashes exactly; NULL out of memory. */
distinct *ll_distinct_new(uint64_t limit);
void ll_distinct_free(distinct *d);
/* Adds a hash; from any thread. */
void ll_distinct_add(distinct *d, const uint64_t h[2]);
/* The distinct hashes added: exact (*exact 1) until one could not be
 * stored (the limit, or out of memory), then an estimate (*exact 0). */
uint64_t ll_distinct_count(distinct *d, int *exact);

/* ---- stats.c ---- */

/* Appends the JSON object of every worker's counters summed. */
void ll_stats_json(ll_buf *b, const worker *ws, int n);

#endif
