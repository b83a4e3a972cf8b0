/* transport.h -- the seam between the http module and the wire.
 *
 * A prepared request goes in; timings, status, headers and body come out
 * through a completion callback on the worker's event loop. The first
 * implementation is transport_curl.c (libcurl multi + socket_action); a
 * native HTTP/1.1 or HTTP/2 transport would implement this same face. */
#ifndef LL_TRANSPORT_H
#define LL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"

typedef enum { LL_RESPONSE_TEXT, LL_RESPONSE_BINARY, LL_RESPONSE_NONE } ll_response_type;

/* Options of one http.Client (shared by the VUs of a worker). */
typedef struct ll_client_opts {
    long dial_timeout_ms;      /* 0: libcurl's default */
    long timeout_ms;           /* whole request; 0: none */
    long max_conn_duration_s;  /* 0: unlimited */
    int insecure_skip_verify;
    int http_version;          /* 0 default, 11, 2, 3 */
    int max_redirects;         /* -1: k6's default of 10 */
    char *ca, *certificate, *private_key, *proxy, *user_agent;
} ll_client_opts;

/* A request prepared once and reused; immutable while in flight. */
typedef struct ll_http_req {
    uint64_t id;               /* unique per prepared request (cache key) */
    char *method;              /* the method given in the params, or NULL */
    char *url;
    struct curl_slist *headers;
    char *body;
    size_t body_len;
    int has_body;
    ll_response_type response_type;
    long timeout_ms;           /* 0: the client's */
    int max_redirects;         /* -1: the client's */
    int disable_keep_alive;
    int throw_errors;          /* raise in the script on a transport error */
    char **tags;               /* user tags of its samples: key, value, key, ... */
    int ntags;                 /* pairs */
} ll_http_req;

/* Phases in microseconds, with k6's meanings. */
typedef struct ll_timings {
    int64_t blocked, connecting, tls_handshaking, sending, waiting, receiving, duration;
} ll_timings;

typedef struct ll_http_res {
    int status;                /* 0 on a transport error */
    const char *proto;         /* "HTTP/1.1", "HTTP/2.0", "HTTP/3.0" */
    const char *body;          /* valid until the next request on the transfer */
    size_t body_len;
    const char *headers;       /* raw header block of the final response */
    size_t headers_len;
    ll_timings t;
    int64_t bytes_sent, bytes_received;
    int error_code;            /* k6's error codes, 0 when none */
    const char *error;         /* "" when none */
    const char *effective_url;
} ll_http_res;

typedef struct ll_transport ll_transport;
typedef struct ll_transfer ll_transfer;
typedef void ll_transfer_done_fn(ll_transfer *x, const ll_http_res *res, void *ud);

/* One transport per worker, with nmultis multi handles on loop. */
ll_transport *ll_transport_new(ll_loop *loop, int nmultis);
void ll_transport_free(ll_transport *tp);

/* A transfer is one VU's connection slot for one client: it keeps its
 * easy handle (and so its keep-alive connection) across requests. */
ll_transfer *ll_transfer_new(ll_transport *tp, int multi_index, const ll_client_opts *opts);
void ll_transfer_free(ll_transfer *x);
/* Starts req with method (a string that outlives the transfer: a literal or
 * req->method); fn is called once, from the loop, when it completes.
 * Returns 0, or -1 with an error message in *err. */
int ll_transfer_start(ll_transfer *x, const ll_http_req *req, const char *method,
                      ll_transfer_done_fn *fn, void *ud, const char **err);
void ll_transfer_cancel(ll_transfer *x); /* no callback will follow */
/* The request in flight (or last sent) on x, and its method. */
const ll_http_req *ll_transfer_request(const ll_transfer *x, const char **method);

/* Frees what req owns (url, headers, body, tags) and zeroes it. */
void ll_http_req_clear(ll_http_req *req);

/* A fresh unique id for ll_http_req.id. */
uint64_t ll_http_req_next_id(void);

#endif
