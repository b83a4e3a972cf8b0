/* curl_internal.h -- the insides of the libcurl transport, shared by its
 * files:
 *
 *   transport_curl.c  the transport table, the transport, and transfers:
 *                     made, started, cancelled, freed
 *   curl_pool.c       the multi handles (one connection pool each) and
 *                     their glue to the worker's loop: sockets, timers,
 *                     and the completions read after each socket_action
 *   curl_request.c    a request's easy handle: its constant options (TLS,
 *                     DNS, headers every request sends), then each
 *                     request's URL, headers, body and limits
 *   curl_response.c   reading the response: headers, body, TLS details,
 *                     the timings and k6's error codes
 *
 * Only these files (and poster.c, url.c) include curl.h. Nothing outside
 * them sees these structs. */
#ifndef LL_CURL_INTERNAL_H
#define LL_CURL_INTERNAL_H

#include <curl/curl.h>
#include <stdint.h>

#include "buf.h"
#include "loop.h"
#include "transport.h"

/* VUs sharing one curl multi handle. Measured with callgrind, 50 VUs cost
 * 90.7k instructions per request at 100 VUs per multi handle, 84k at 32 and
 * 83k at 16; 2,000 VUs cost 103.5k at 100 and 84.8k at 16. */
#ifndef LL_CURL_VUS_PER_MULTI
#define LL_CURL_VUS_PER_MULTI 16
#endif

typedef struct curl_transport curl_transport;

/* A multi handle is one connection pool: the transfers of one client (its
 * pool id) and one group of VUs, or all of a multiplexing client's VUs. It
 * goes when its last transfer does, and its connections with it. */
typedef struct multi_ctx {
    CURLM *multi;
    ll_timer timer;
    curl_transport *tp;
    uint64_t pool;
    int group;
    int refs;                  /* transfers using it */
    int draining;              /* drain_done is running its completions */
    int dead;                  /* no transfer left: freed when the drain ends */
} multi_ctx;

/* A socket libcurl asked us to watch. When libcurl lets go of an idle
 * keep-alive socket it stays registered in epoll, parked, so that reusing it
 * for the next request costs no epoll_ctl; an event on a parked socket (the
 * server closed it) unregisters it, and closing forgets it. */
typedef struct sock_ctx {
    multi_ctx *mc;
    int parked;
} sock_ctx;

struct curl_transport {
    ll_transport base;
    multi_ctx **multis;        /* live pools, in no order; the pointers stay put */
    int nmultis, cap_multis;
    sock_ctx *socks;           /* by fd */
    int nsocks;
    const ll_dns_config *dns;  /* the run's dns option, or NULL */
};

/* A form part's data as libcurl reads it. */
typedef struct mime_cursor {
    const ll_body *data;
    uint64_t pos;
} mime_cursor;

typedef struct curl_transfer {
    ll_transfer base;          /* req and method: in flight or last sent */
    multi_ctx *mc;
    CURL *easy;
    uint64_t req_id;           /* request whose options are applied */
    const char *applied_method;
    ll_transfer_done_fn *fn;
    void *ud;
    int active;
    int streamed;              /* the body goes through the read callback */
    uint64_t body_pos;         /* of a streamed body */
    curl_mime *mime;           /* the form being sent, or NULL */
    struct mime_cursor *cursors; /* where each of its parts is read */
    int ncursors;
    uint64_t t_start, t_pre, t_first, t_last; /* our clock: submitted, about to
                                              * send, first and last byte in */
    int attempts;              /* times the request went out (libcurl retries
                                * on a reused connection found dead) */
    int64_t body_limit;        /* bytes of body kept; 0: none kept */
    int too_big;               /* the body went over body_limit */
    const char *chunk_stopped; /* why its on_chunk stopped the body, or NULL */
    int chunk_done;            /* its on_chunk ended the body cleanly (LL_CHUNK_STOP) */
    int head_open;             /* a header block began and did not end (the
                                * blank line): libcurl takes EOF for its end */
    int64_t limit_default;     /* the client's max_response_body */
    long timeout_default;      /* the client's timeout_ms */
    int http_debug;            /* LL_HTTP_DEBUG_* (--http-debug) */
    struct curl_slist *ua;     /* "User-Agent: ..." and "Accept-Encoding:": all
                                * a request without headers or body sends */
    struct curl_slist *ua_body; /* the same, "Expect:" and "Content-Type:", with
                                * a body (k6 sends no Content-Type the script
                                * did not set; libcurl would add form-urlencoded) */
    struct curl_slist *hlist;  /* the request's headers plus the User-Agent */
    struct curl_slist *dyn_node; /* its line of the request's dyn_header, or NULL */
    uint64_t dyn_gen;          /* the dyn_gen that line holds */
    int version_default;       /* the client's http_version */
    int no_reuse;              /* the client's disable_keep_alive */
    int discard;               /* the client's discard_bodies */
    int version_applied;       /* LL_HTTP_* set on the handle, -1: none yet */
    char *cookie_applied;      /* the jar's cookies in the header list, or NULL */
    const char *tls_version, *tls_cipher; /* of the connection the request went out on */
    struct curl_slist *connect_to; /* options.hosts */
    char *server_name;         /* tls.server_name: the URL's host is sent as it */
    char *sni_url;             /* the request's URL with server_name as its host */
    char *sni_host;            /* "Host: <the URL's own host[:port]>" */
    struct curl_slist *sni_route; /* server_name -> the URL's host, then connect_to */
    ll_buf body, hdrs;
    int64_t body_bytes, header_bytes;
    ll_http_res res;
    char errbuf[CURL_ERROR_SIZE];
} curl_transfer;

/* curl_pool.c: the pool of (pool, group), made on first use with the
 * client's connection options, a reference for the caller (NULL: libcurl
 * failed); a transfer lets go of its pool with unref (the last one frees
 * it, or has it freed when its completions are drained); free frees one at
 * once. on_close is the easy handles' CLOSESOCKETFUNCTION (ud: the
 * transport). */
multi_ctx *curl_pool_of(curl_transport *tp, uint64_t pool, int group, const ll_client_opts *o);
void curl_pool_unref(curl_transport *tp, multi_ctx *mc);
void curl_pool_free(curl_transport *tp, multi_ctx *mc);
int curl_pool_on_close(void *ud, curl_socket_t fd);

/* curl_request.c: the easy handle's options for the transfer's whole life
 * (callbacks, TLS, DNS, the client's settings); 0, or -1 when out of
 * memory. Then per request: apply sets req's options and the jar's cookie
 * (when they changed since the last request), update_dyn rewrites only the
 * request's changing header; both 0, or -1 when out of memory. */
int curl_request_init(curl_transfer *x, const ll_client_opts *o, const ll_dns_config *dns);
int curl_request_apply(curl_transfer *x, const ll_http_req *req, const char *m, const char *cookie);
int curl_request_update_dyn(curl_transfer *x, const ll_http_req *req);

/* curl_response.c: libcurl's callbacks as the response comes (the body,
 * each header line, and right before the request goes out), and the
 * result of a finished transfer (rc: libcurl's; t_end: when it ended). */
size_t curl_response_on_body(char *p, size_t size, size_t n, void *ud);
size_t curl_response_on_header(char *p, size_t size, size_t n, void *ud);
int curl_response_on_prereq(void *ud, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                            int conn_local_port);
void curl_response_fill(curl_transfer *x, CURLcode rc, uint64_t t_end);

#endif
