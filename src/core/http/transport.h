/* transport.h -- the seam between the http module and the wire, a table of
 * operations (as wrk's net.h or h2load's Session).
 *
 * A transport is made once per worker and event loop; a transfer is one
 * VU's connection slot for one Client, kept across requests so the VU keeps
 * its keep-alive connection. A prepared request goes in; the completion
 * callback, called from the loop, gets the timings, status, headers and
 * body. transport_curl.c is the first implementation; the native one
 * (HTTP/1.1, HTTP/2 and HTTP/3) plugs in beside it with the same table. */
#ifndef LL_TRANSPORT_H
#define LL_TRANSPORT_H

#include "addr.h"
#include "dns_config.h"
#include "http_req.h"
#include "loop.h"

/* Options of one http.Client (shared by the VUs of a worker). */
/* The default limit of a response body, and the largest one allowed (a Lua
 * string holds at most 2 GiB - 1 bytes in LuaJIT). */
#define LL_MAX_RESPONSE_BODY_DEFAULT (512ll << 20)
#define LL_MAX_RESPONSE_BODY_LIMIT ((2ll << 30) - 1)

/* HTTP versions of ll_client_opts.http_version and ll_http_req.http_version */
#define LL_HTTP_DEFAULT 0      /* k6's: h2 over TLS when ALPN offers it, else HTTP/1.1 */
#define LL_HTTP_1_1 11
#define LL_HTTP_2 2            /* on http://: h2c with prior knowledge */
#define LL_HTTP_3 3            /* QUIC only */

/* TLS versions of tls_min/tls_max: 0 (the library's default), 10, 11, 12, 13 */
typedef struct ll_client_opts {
    long dial_timeout_ms;      /* 0: the transport's default */
    long timeout_ms;           /* whole request; 0: none */
    long max_conn_duration_s;  /* 0: unlimited */
    int insecure_skip_verify;
    int http_version;          /* LL_HTTP_* */
    int max_redirects;         /* -1: k6's default of 10 */
    int64_t max_response_body; /* bytes kept of a body; a longer one fails */
    int disable_keep_alive;    /* a new connection for every request */
    int discard_bodies;        /* LL_RESPONSE_DEFAULT means none (discardResponseBodies) */
    int no_vu_reuse;           /* a VU's connections close at each iteration
                                * (noVUConnectionReuse): its transfers have a
                                * pool of their own, dropped with them */
    int multiplex;             /* the worker's VUs share h2/h3 connections */
    int http_debug;            /* --http-debug: LL_HTTP_DEBUG_* of http_debug.h, 0 off */
    int max_streams;           /* concurrent streams per shared connection; 0: 100 */
    int max_conns_per_host;    /* shared connections per host; 0: as needed */
    int tls_min, tls_max;
    char *ca, *certificate, *private_key, *proxy, *user_agent;
    char *ciphers;             /* the TLS library's cipher list */
    char *server_name;         /* SNI and the name the certificate must carry */
    char *qlog_dir;            /* HTTP/3: a qlog file per QUIC connection in it; NULL: none */
    int zero_rtt;              /* HTTP/3: resumed connections send safe requests as 0-RTT */
    int alt_svc;               /* Alt-Svc discovery: an origin's advertised h3 alternative
                                * serves its next requests (alt_svc.h) */
    char **connect_to;         /* "host:port:addr:port" entries (options.hosts), NULL-ended */
    const ll_addr *local_addr; /* the source address of the VU's connections (--local-ips),
                                * set per VU by ll_http_vu_transfer; NULL: any */
    const struct ll_transport_ops *transport; /* the one the Client was told to use; NULL:
                                * chosen per request (ll_transport_pick) */
} ll_client_opts;

typedef struct ll_transport ll_transport;
typedef struct ll_transfer ll_transfer;
typedef void ll_transfer_done_fn(ll_transfer *x, const ll_http_res *res, void *ud);

/* transports a VU may hold a connection slot of, for one client */
#define LL_TRANSPORT_SLOTS 2

typedef struct ll_transport_ops {
    const char *name;
    int slot;                  /* 0..LL_TRANSPORT_SLOTS-1, its own */
    /* dns: the run's dns option (outlives the transport) */
    ll_transport *(*transport_new)(ll_loop *loop, const ll_dns_config *dns); /* NULL: out of resources */
    void (*transport_free)(ll_transport *tp);
    /* vu_index: the VU's index in its worker (a transport may group VUs);
     * pool: the client's unique id -- transfers of one pool may share
     * connections, transfers of different pools never do. */
    ll_transfer *(*transfer_new)(ll_transport *tp, int vu_index, uint64_t pool, const ll_client_opts *opts);
    void (*transfer_free)(ll_transfer *x);              /* cancels first */
    /* Starts req with method (a string that outlives the transfer: a literal
     * or req->method) and cookie (the VU's jar's cookies for the URL, sent
     * after the request's own Cookie header; NULL: none); fn is called
     * once, from the loop, when it completes. Redirects are not followed.
     * Returns 0, or -1 with an error message in *err. */
    int (*start)(ll_transfer *x, const ll_http_req *req, const char *method, const char *cookie,
                 ll_transfer_done_fn *fn, void *ud, const char **err);
    /* No callback will follow. Returns how many times the request had gone
     * out on the wire (0: it never left, so no server saw it), and the
     * bytes of it sent so far in *bytes_sent (a big upload cut off at the
     * end of the test still counts in data_sent). */
    int (*cancel)(ll_transfer *x, int64_t *bytes_sent);
    /* From the completion callback, once it copied the body and headers
     * out: a big response's buffers go back (its res body and headers are
     * then empty). */
    void (*release)(ll_transfer *x);
    /* 1 when the transport can speak http_version (LL_HTTP_*) */
    int (*supports)(int http_version);
    /* What the request in flight is doing ("connecting", "in the TLS
     * handshake", "waiting for the response" ...), and since when it was
     * started (ll_loop_now_ns) in *since_ns; NULL when none is in flight.
     * For the end of a run's account of what it cut off. */
    const char *(*phase)(ll_transfer *x, uint64_t *since_ns);
    /* The request's generator body, which answered LL_BODY_LATER, has
     * more to give (or its end): it is read again. NULL: the transport
     * never takes such a body (only native HTTP/2 and HTTP/3 do). */
    void (*resume)(ll_transfer *x);
} ll_transport_ops;

/* What every transport's own structs start with. */
struct ll_transport {
    const ll_transport_ops *ops;
    ll_loop *loop;
};

struct ll_transfer {
    ll_transport *tp;
    const ll_http_req *req;    /* in flight, or last sent */
    const char *method;
};

/* The prologue of every transport's start: -1 with err set when a request
 * is still in flight on the transfer (active); else 1 when req must be
 * applied again -- another request (applied_id), method or Cookie header
 * than the transfer applied last -- and 0 when it is applied already. */
int ll_transfer_begin(int active, uint64_t applied_id, const char *applied_method, const char *applied_cookie,
                      const ll_http_req *req, const char *method, const char *cookie, const char **err);

/* The transport of a name ("native", "curl"), or NULL. */
const ll_transport_ops *ll_transport_find(const char *name);
/* The transport that serves req for a client with options o: the one the
 * client was told to use (o->transport), else forced (the run's choice,
 * LUALOAD_TRANSPORT; NULL: none), else the native one for what it fully
 * supports -- HTTP/1.1 and HTTP/2, plain or over TLS, and HTTP/3 -- and
 * libcurl for the rest: proxies and NTLM authentication. A forced native
 * transport still leaves those to libcurl. */
const ll_transport_ops *ll_transport_pick(const ll_client_opts *o, const ll_http_req *req,
                                          const ll_transport_ops *forced);
/* Why the native transport cannot serve a client with options o (a
 * sentence naming the option), or NULL when it can. */
const char *ll_transport_native_lacks(const ll_client_opts *o);

#endif
