/* http_req.h -- the messages that cross the transport seam, free of any
 * HTTP library: a request prepared once and reused (method, URL, headers as
 * a name/value array, a body source, per-request options and tags), and the
 * response a transport hands back (status, protocol, headers, body,
 * k6's timing phases, error). */
#ifndef LL_HTTP_REQ_H
#define LL_HTTP_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "body.h"

/* DEFAULT: text, unless the client discards bodies (discardResponseBodies) */
typedef enum { LL_RESPONSE_DEFAULT, LL_RESPONSE_TEXT, LL_RESPONSE_BINARY, LL_RESPONSE_NONE } ll_response_type;

/* k6's params.auth: how a request sends the credentials its URL carried */
typedef enum {
    LL_AUTH_NONE,   /* not given: Basic when the URL had credentials */
    LL_AUTH_BASIC,  /* "basic" */
    LL_AUTH_DIGEST, /* "digest": the 401's challenge answered once (auth_digest.c) */
    LL_AUTH_NTLM    /* "ntlm": through libcurl, which holds the handshake */
} ll_http_auth;

typedef struct ll_header {
    char *name, *value;
} ll_header;

/* The statuses that count as expected (k6's http.expectedStatuses), as
 * ranges min[i]..max[i]; a response outside them is a failed request. */
#define LL_HTTP_EXPECTED_MAX 64
typedef struct ll_http_expected {
    int n;
    int min[LL_HTTP_EXPECTED_MAX], max[LL_HTTP_EXPECTED_MAX];
} ll_http_expected;

/* 1 when status is within one of e's ranges */
int ll_http_expected_has(const ll_http_expected *e, int status);

/* A request prepared once and reused; immutable while in flight. */
/* A response body handed over as it arrives (decoded), instead of kept:
 * LL_CHUNK_GO to go on; LL_CHUNK_STOP ends the exchange cleanly (the
 * consumer has what it wanted: HTTP/1.1 closes the connection, HTTP/2
 * resets that stream with CANCEL, libcurl aborts the transfer) and the
 * response completes with its status, headers and timings, res.stopped
 * set; LL_CHUNK_FAIL stops it as a failed request. */
#define LL_CHUNK_GO 0
#define LL_CHUNK_STOP 1
#define LL_CHUNK_FAIL (-1)
typedef int ll_body_chunk_fn(void *ud, int status, const char *p, size_t n); /* status: the response's */

typedef struct ll_http_req {
    uint64_t id;               /* unique per prepared request (cache key) */
    char *method;              /* the method given in the params, or NULL */
    char *url;
    ll_header *headers;        /* in order; a name may repeat */
    int nheaders, cap_headers;
    ll_body body;              /* LL_BODY_NONE: the request has none */
    ll_response_type response_type;
    long timeout_ms;           /* 0: the client's */
    int max_redirects;         /* -1: the client's */
    int http_version;          /* LL_HTTP_* of transport.h; -1: the client's */
    int64_t max_response_body; /* bytes; 0: the client's */
    int disable_keep_alive;
    int throw_errors;          /* raise in the script on a transport error */
    char **tags;               /* user tags of its samples: key, value, key, ... */
    int ntags;                 /* pairs */
    const char *body_type;     /* the Content-Type its body implies (a table
                                * body: form-urlencoded), a literal, or NULL */
    int compression;           /* LL_COMPRESS_* still to apply (body_compress.h) */
    char **replace_cookies;    /* names whose jar cookies it does not send
                                * (its own replace them), NULL-ended, or NULL */
    int nreplace_cookies;
    const ll_http_expected *expected; /* its responseCallback (owned by a Lua
                                * object its Request keeps); NULL: the state's */
    int dyn_header;            /* the header whose value changes from one send
                                * to the next (quick mode's token), -1: none */
    uint64_t dyn_gen;          /* bumped at each change of that value: a
                                * transport may then replace that one header
                                * instead of taking the request again */
    int auth;                  /* LL_AUTH_* (params.auth) */
    char *user, *password;     /* the credentials the URL carried (taken out
                                * of url, percent-decoded), or NULL */
    ll_body_chunk_fn *on_chunk; /* params.on_chunk: the body streamed to it; NULL: kept */
    void *chunk_ud;
} ll_http_req;

/* Phases in microseconds, with k6's meanings. */
typedef struct ll_timings {
    int64_t blocked, connecting, tls_handshaking, sending, waiting, receiving, duration;
} ll_timings;

/* What a TLS server stapled about its certificate (OCSP, RFC 6960), as
 * k6's res.ocsp tells it. */
typedef enum {
    LL_OCSP_NONE,          /* no TLS: k6's empty res.ocsp */
    LL_OCSP_UNKNOWN,       /* nothing stapled, or a staple that does not parse */
    LL_OCSP_GOOD,
    LL_OCSP_REVOKED,
    LL_OCSP_SERVER_FAILED  /* the responder answered with an error status */
} ll_ocsp_status;

typedef struct ll_ocsp {
    int status;            /* LL_OCSP_* */
    int reason;            /* the revocation reason (RFC 5280 CRLReason), -1: none */
    int64_t produced_at, this_update, next_update, revoked_at; /* unix ms; 0: none */
} ll_ocsp;

typedef struct ll_http_res {
    int status;                /* 0 on a transport error */
    const char *proto;         /* "HTTP/1.1", "HTTP/2.0", "HTTP/3.0" */
    const char *body;          /* valid until the next request on the transfer */
    size_t body_len;
    const char *headers;       /* raw header block of the final response */
    size_t headers_len;
    const char *trailers;      /* its HTTP/2 trailers, "name: value\r\n" lines (gRPC's
                                * status); trailers_len 0: none (trailers may be NULL) */
    size_t trailers_len;
    ll_timings t;
    int64_t bytes_sent, bytes_received;
    int error_code;            /* k6's error codes, 0 when none */
    int retries;               /* attempts before this one that the transport
                                * sent again without being asked (each
                                * reached the wire and counts as a failed
                                * request) */
    const char *error;         /* "" when none */
    const char *effective_url;
    const char *tls_version;   /* k6's "tls1.2", "tls1.3"; "" without TLS */
    const char *tls_cipher_suite; /* IANA name, e.g. "TLS_AES_128_GCM_SHA256"; "" without TLS */
    int no_cookies;            /* 1: the transport saw no Set-Cookie in headers (0: look) */
    const ll_ocsp *ocsp;       /* the connection's stapled OCSP response; NULL: the
                                * transport does not tell (libcurl) */
    int zero_rtt;              /* HTTP/3: it went as 0-RTT early data, and the server took it */
    int stopped;               /* its on_chunk ended the body early (LL_CHUNK_STOP):
                                * a complete response all the same */
} ll_http_res;

/* Zeroes req and gives it a fresh id (no method, no body, the client's
 * timeout and redirects). */
void ll_http_req_init(ll_http_req *req);
/* Frees what req owns (method, url, headers, body, tags) and zeroes it. */
void ll_http_req_clear(ll_http_req *req);
/* A fresh unique id for ll_http_req.id (any thread). */
uint64_t ll_http_req_next_id(void);

/* Setters for user-given values: they return 0, or -1 when out of memory
 * (req keeps what it had). */
/* ll_http_req_set_url takes credentials out of the URL ("user:pass@")
 * into req->user and req->password. */
int ll_http_req_set_url(ll_http_req *req, const char *url);
/* Sends req's credentials as its auth says: an Authorization header with
 * Basic (unless req has its own Authorization); none for digest and NTLM,
 * and the Basic one a copy of a prepared request carried goes. Call it
 * once the params are read. Returns 0, or -1 when out of memory. */
int ll_http_req_apply_auth(ll_http_req *req);
/* Removes every header called name (any case). */
void ll_http_req_remove_header(ll_http_req *req, const char *name);
/* Copies method, upper-cased. */
int ll_http_req_set_method(ll_http_req *req, const char *method);
int ll_http_req_add_header(ll_http_req *req, const char *name, const char *value);
/* Adds name to the cookies the request's own Cookie replaces. */
int ll_http_req_replace_cookie(ll_http_req *req, const char *name);
/* Adds a user tag, replacing an earlier one with the same key. */
int ll_http_req_add_tag(ll_http_req *req, const char *key, const char *value);
/* The value of the user tag key, or NULL. */
const char *ll_http_req_tag(const ll_http_req *req, const char *key);
/* What may go on the wire, so that no value smuggles bytes into the
 * request: a method or header name must be an RFC 9110 token; a header
 * value (also host, cookies, the User-Agent) holds no CR, LF or NUL
 * (len: the value's length, which may hide a NUL); a URL starts with
 * http:// or https:// (any case), then a host, and holds no control
 * character or space.
 * Each returns 1 when s is fine. */
int ll_http_token_ok(const char *s);
int ll_http_value_ok(const char *s, size_t len);
int ll_http_url_ok(const char *s, size_t len);
/* s (len bytes) for an error message, in buf (n bytes): control characters
 * as '?', cut with "..." when it does not fit. Returns buf. */
const char *ll_http_printable(char *buf, size_t n, const char *s, size_t len);

/* Makes dst (initialised, empty) a copy of src, with a fresh id. */
int ll_http_req_copy(ll_http_req *dst, const ll_http_req *src);
/* Gives dst src's tags and options (response type, timeout, redirects,
 * HTTP version, body limit, keep-alive, throw): what a redirect hop keeps. */
int ll_http_req_copy_options(ll_http_req *dst, const ll_http_req *src);

#endif
