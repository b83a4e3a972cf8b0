/* native.h -- the insides of the native transport, shared by its files:
 *
 *   transport_native.c  the transport table, transfers, results, and which
 *                       connection a request goes on (groups)
 *   native_conn.c       connections: dial, TLS handshake, the protocol
 *                       ALPN chose, events, close
 *   native_h1.c         an HTTP/1.1 exchange on a connection
 *   native_stream.c     a request on a stream of HTTP/2 or HTTP/3
 *   native_h2.c         HTTP/2 connections (h2_session.c)
 *   native_h3.c         HTTP/3 connections: QUIC over UDP (h3_session.c,
 *                       its TLS quic_tls.c's)
 *
 * A group is a set of connections its transfers share: each transfer of
 * a client without multiplex has a group of its own (one connection, one
 * request at a time, as k6 gives each VU its connections); the transfers
 * of a multiplexing client in a worker share one group, whose HTTP/2
 * connections carry up to max_streams requests each. Nothing outside these
 * files sees these structs. */
#ifndef LL_NATIVE_H
#define LL_NATIVE_H

#include <stdint.h>

#include "buf.h"
#include "form_wire.h"
#include "h1_parse.h"
#include "h1_request.h"
#include "h2_session.h"
#include "alt_svc.h"
#include "h3_session.h"
#include "net.h"
#include "quic_tls.h"
#include "resolve.h"
#include "tls_ctx.h"
#include "transport.h"
#include "url.h"

#define NATIVE_READ_BUFFER (64u << 10)

typedef struct native_transport native_transport;
typedef struct native_group native_group;
typedef struct native_conn native_conn;
typedef struct native_transfer native_transfer;

/* A client's TLS settings in a worker; the OpenSSL context is made on its
 * first https:// request. */
typedef struct native_pool {
    uint64_t id;
    int refs;
    ll_client_opts tls;        /* the TLS fields, copied */
    ll_tls_ctx *ctx;
    ll_quic_tls *qtls;         /* HTTP/3's (GnuTLS), made on its first request */
    ll_alt_svc *alt;           /* the origins' HTTP/3 alternatives (alt_svc option), made on
                                * the first Alt-Svc heard */
    char err[256];             /* why the context could not be made */
} native_pool;

struct native_transport {
    ll_transport base;
    ll_resolver *dns;
    native_pool **pools;
    int npools, cap_pools;
    native_group **groups;     /* the shared ones (multiplex) */
    int ngroups, cap_groups;
    char rbuf[NATIVE_READ_BUFFER]; /* every read of the worker goes here */
};

struct native_group {
    native_transport *tp;
    native_pool *pool;
    uint64_t id;               /* the pool id of a shared group; 0: a transfer's own */
    int refs;                  /* transfers in it, and holds */
    int dying;                 /* being freed: holds no longer free it */
    int max_streams;           /* per HTTP/2 connection */
    int max_conns;             /* per host; 0: as many as needed */
    native_conn **conns;
    int nconns, cap_conns;
    native_conn *room;         /* the one a request last left (NULL once it closes) */
    native_transfer *queue;    /* waiting for a connection with room (FIFO) */
    native_transfer *queue_tail;
};

/* C_RESOLVING: waiting for its name's addresses (resolve.c);
 * C_CONNECTING: TCP connects to them, staggered (Happy Eyeballs) */
typedef enum { C_RESOLVING, C_CONNECTING, C_HANDSHAKE, C_READY } native_cstate;

#define NATIVE_ATTEMPT_DELAY_US 250000 /* RFC 8305's Connection Attempt Delay */

struct native_conn {
    ll_net_conn net;
    native_group *g;
    native_cstate st;
    char *host;
    int port, tls;
    char session_key[280];     /* "name:port": its TLS sessions' key */
    int h2_offer;              /* ALPN offers h2, or h2c with prior knowledge */
    int h2_only;               /* http_version 2: h2c on http:// */
    int h3_only;               /* http_version 3: QUIC on UDP */
    int alt_port;              /* HTTP/3 to an Alt-Svc alternative: its port (0: the URL's) */
    uint64_t born_ns, t_dial, t_connected, t_tls;
    int watching;              /* LL_* events registered */
    /* until connected */
    ll_resolve_wait wait;      /* C_RESOLVING: its lookup */
    ll_addr local;             /* the source address (--local-ips), len 0: any */
    ll_addr *addrs;            /* where to connect, in order */
    int naddrs, next_addr;     /* and the next one to try */
    ll_net_conn *tries;        /* the connects in flight (naddrs slots, fd -1: free) */
    ll_timer stagger;          /* starts the next connect while they wait */
    int fail_errno;            /* the last connect's failure */
    char fail_msg[200];
    native_transfer *users;    /* transfers on it: the h1 one, h2 streams, or waiting for it */
    int nusers;
    ll_h2 *h2;                 /* it speaks HTTP/2 */
    ll_h3 *h3;                 /* it speaks HTTP/3 (from its handshake on) */
    ll_timer expiry;           /* HTTP/3: ngtcp2's timers (loss, idle, pacing) */
    int stale;                 /* HTTP/3: a request was cut off with the server silent
                                * since it began: no new requests; closed once unused */
    ll_timer flush;            /* HTTP/2: the frames of streams begun go at the next turn */
    ll_buf out;                /* HTTP/2 bytes for the socket, from out_off */
    size_t out_off;
    int used;                  /* requests begun on it */
    int busy;                  /* holds (native_conn_hold): freeing waits */
    int dead;                  /* closed; freed when the handler returns */
    int ocsp_read;             /* ocsp holds what the TLS server stapled */
    ll_ocsp ocsp;
};

/* X_START: on a ready connection, begun at the loop's next turn (a request
 * whose wait is refused never reaches the wire; and the requests of a turn
 * go out together, after its responses are read: measured, that costs the
 * kernel less than sending each as its response comes in) */
/* X_DONE: an HTTP/2 stream that ended inside nghttp2's callbacks, its
 * result kept in fail_code and errbuf until the connection delivers it */
typedef enum { X_IDLE, X_QUEUED, X_WAIT, X_START, X_SENDING, X_RECEIVING, X_STREAM, X_DONE, X_FAILED } native_xstate;

struct native_transfer {
    ll_transfer base;
    native_pool *pool;
    native_group *g;
    native_conn *conn;         /* the connection of the request in flight */
    native_transfer *next;     /* in conn->users or the group's queue */
    ll_timer timer;            /* the request's timeout: armed lazily (left armed after
                                * the request, moved only to an earlier due) */
    ll_timer soon;             /* a start or a failure to deliver at the next turn */
    native_xstate st;
    int active;
    int in_start;              /* inside start(): a failure is delivered later */
    uint64_t deadline_ns;      /* of the whole request, 0: none */
    uint64_t due_ns;           /* when the request in flight times out (its dial
                                * timeout while it waits for a connection), 0: never */
    ll_transfer_done_fn *fn;
    void *ud;
    /* the request applied */
    uint64_t req_id;
    const char *applied_method;
    char *cookie_applied;
    uint64_t dyn_gen;
    ll_url url;
    char *url_text;            /* the URL url was parsed from */
    ll_h1_head head;
    ll_form_wire form;
    int has_form;
    ll_h1_head_in in;
    int version, version_default; /* LL_HTTP_* asked for, and the client's */
    int alt_svc;               /* the client's alt_svc option */
    int zero_rtt;              /* the client's zero_rtt option */
    int early_sent;            /* HTTP/3: this request went as 0-RTT (reset when refused) */
    int alt_port;              /* this request goes over HTTP/3 to the origin's Alt-Svc
                                * alternative: its port (0: not so) and host ("": the URL's) */
    char alt_host[256];
    /* sending */
    size_t head_off;
    uint64_t body_off, body_len; /* of the body not inline */
    int streamed;              /* the body comes through ll_body_read / the form */
    char *stage;               /* streamed bytes (framed when chunked) */
    size_t stage_len, stage_off;
    int body_eof;
    int attempts;              /* 1 once a byte of the request went out */
    int reused;                /* the request went on a connection used before */
    int32_t stream;            /* its HTTP/2 stream, 0: none */
    int64_t qstream;           /* its HTTP/3 stream, -1: none */
    int h3_blocked;            /* X_START on an HTTP/3 connection, waiting for a stream credit */
    uint64_t h2_body_pos;
    /* receiving */
    ll_h1_parse parse;         /* HTTP/1.1; HTTP/2 uses its status, buffers, decoder */
    ll_buf body, hdrs, trailers; /* trailers: HTTP/2's, after the body */
    int64_t bytes_out, bytes_in;
    int64_t limit;
    int h2_status;
    /* the client's options */
    long timeout_default, dial_timeout;
    int64_t limit_default;
    int no_reuse, discard;
    long max_conn_s;
    char *user_agent, *server_name;
    char *qlog_dir;            /* HTTP/3: where its connections' qlogs go, NULL: none */
    int http_debug;            /* LL_HTTP_DEBUG_* (--http-debug) */
    char **connect_to;
    ll_addr local;             /* its VU's source address (--local-ips), len 0: any */
    /* phases, on ll_loop_now_ns */
    uint64_t t_start, t_dial, t_connected, t_tls, t_pre, t_sent, t_first, t_last;
    int fail_code;
    const char *tls_version, *tls_cipher;
    ll_ocsp ocsp;              /* its connection's, for res.ocsp */
    const char *proto;
    ll_http_res res;
    char errbuf[320];
};

/* transport_native.c */
ll_loop *native_loop(native_transfer *x);
/* The request is over with code (0: a response) and message: the callback
 * gets it. The last thing a caller does: x may be gone after it. */
void native_complete(native_transfer *x, int code, const char *msg);
/* As native_complete, or later from the loop when inside start(). */
void native_fail(native_transfer *x, int code, const char *msg);
/* The connection x waited for is ready (or x got room on one): its
 * request starts on x->conn. */
void native_begin(native_transfer *x, uint64_t now);
/* A connection of g has room again: the next queued transfer gets it. */
void native_group_wake(native_group *g);
/* While held, g stays, though its transfers go (a completion may free
 * them); the last release frees it. */
void native_group_hold(native_group *g);
void native_group_release(native_group *g);
ll_tls_ctx *native_pool_tls(native_pool *p);
ll_quic_tls *native_pool_quic_tls(native_pool *p);

/* native_conn.c */
/* A new connection of g for x's request (x joins its users, state
 * X_WAIT). 0, or -1 with x->fail_code and x->errbuf (x not joined). */
int native_conn_open(native_group *g, native_transfer *x, uint64_t now);
void native_conn_watch(native_conn *c, int events);
void native_conn_join(native_conn *c, native_transfer *x);
void native_conn_leave(native_conn *c, native_transfer *x);
/* Closes c: its users fail with code and msg (none: they were done). */
void native_conn_close(native_conn *c, int code, const char *msg);
/* 1 when c can take x's request now */
int native_conn_has_room(const native_conn *c);
int native_conn_idle(const native_conn *c);
/* 1 when requests may begin on c: it is ready, or it is an HTTP/3
 * connection sending 0-RTT while its handshake goes on */
int native_conn_startable(const native_conn *c);
/* While held, a closed connection's memory stays (it is freed on the last
 * release): for code that still reads it after something may close it. */
void native_conn_hold(native_conn *c);
void native_conn_release(native_conn *c);

/* The handshake is over (HTTP/3's: from native_h3.c): its users start. */
void native_conn_ready(native_conn *c);

/* native_h1.c */
void native_h1_begin(native_transfer *x);
void native_h1_event(native_transfer *x, int events);
/* The idle connection c became readable: the server closed it, or sent
 * what it should not have. */
void native_h1_idle_event(native_conn *c);
void native_h1_drop(native_transfer *x); /* frees what a cut-off exchange holds */

/* native_stream.c */
extern const ll_h2_stream_ops native_stream_ops;
/* Submits x's request as a stream of c (HTTP/2 or HTTP/3). 0, or -1. */
int native_stream_submit(native_conn *c, native_transfer *x);
/* Hands the streams of c that ended to their owners, one at a time (each
 * may start its next request, or free transfers); stops if c closes. */
void native_done_streams(native_conn *c);

/* native_h2.c */
/* Makes c an HTTP/2 connection (its preface queued). -1 when out of memory. */
int native_h2_start(native_conn *c);
void native_h2_begin(native_transfer *x);
void native_h2_event(native_conn *c, int events);
/* Writes what the session has to send (the flush timer's). 0, or -1 when
 * the connection failed (closed, its users failed). */
int native_h2_flush(native_conn *c);
void native_h2_cancel(native_transfer *x);
/* Its generator body has more (it answered LL_BODY_LATER): read again. */
void native_h2_resume(native_transfer *x);

/* native_h3.c */
/* Opens c's UDP socket to its addresses (the first that takes) and starts
 * the QUIC handshake. 0, or -1 (c->fail_errno, c->fail_msg). */
int native_h3_dial(native_conn *c);
/* 1 when x must wait for c's handshake: 0-RTT is under way and x is not
 * a GET, HEAD or OPTIONS without a body (early data can be replayed) */
int native_h3_too_early(const native_transfer *x);
void native_h3_event(native_conn *c, int events);
/* Sends what the session has to send and re-arms its timer (the flush
 * timer's). 0, or -1 when the connection failed. */
int native_h3_flush(native_conn *c);
void native_h3_begin(native_transfer *x);
void native_h3_cancel(native_transfer *x);
void native_h3_resume(native_transfer *x);
/* Before c's socket closes: a CONNECTION_CLOSE to the server. */
void native_h3_goodbye(native_conn *c);

#endif
