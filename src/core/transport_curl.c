/* transport_curl.c -- the libcurl transport behind transport.h.
 *
 * Each worker owns a few multi handles (about 100 VUs each: libcurl's
 * connection-pool lookup is linear in the connections of one multi handle),
 * all driven by the worker's one epoll loop through socket_action and a timer
 * per multi handle. Each transfer keeps its easy handle, so a VU keeps its
 * keep-alive connection. Per-request options are only re-applied when the
 * VU sends a different prepared request than last time. */
#include "transport.h"

#include "buffer.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct multi_ctx {
    CURLM *multi;
    ll_timer timer;
    ll_transport *tp;
} multi_ctx;

/* A socket libcurl asked us to watch. When libcurl lets go of an idle
 * keep-alive socket it stays registered in epoll, parked, so that reusing it
 * for the next request costs no epoll_ctl; an event on a parked socket (the
 * server closed it) unregisters it, and closing forgets it. */
typedef struct sock_ctx {
    multi_ctx *mc;
    int parked;
} sock_ctx;

struct ll_transport {
    ll_loop *loop;
    multi_ctx *multis;
    int nmultis;
    sock_ctx *socks; /* by fd */
    int nsocks;
};


struct ll_transfer {
    ll_transport *tp;
    multi_ctx *mc;
    CURL *easy;
    uint64_t req_id;           /* request whose options are applied */
    const char *method;        /* with this method */
    const ll_http_req *req;
    ll_transfer_done_fn *fn;
    void *ud;
    int active;
    uint64_t t_start, t_pre, t_first, t_last; /* our clock: submitted, about to
                                              * send, first and last byte in */
    long timeout_default;      /* the client's timeout_ms */
    struct curl_slist *ua;     /* "User-Agent: ..." alone */
    struct curl_slist *merged; /* the request's headers plus the User-Agent */
    long redirects_default;    /* the client's max_redirects */
    ll_buf body, hdrs;
    int64_t body_bytes, header_bytes;
    ll_http_res res;
    char errbuf[CURL_ERROR_SIZE];
};

uint64_t ll_http_req_next_id(void) {
    static _Atomic uint64_t next = 1;
    return atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

void ll_http_req_clear(ll_http_req *req) {
    free(req->method);
    free(req->url);
    free(req->body);
    curl_slist_free_all(req->headers);
    for (int i = 0; i < 2 * req->ntags; i++) free(req->tags[i]);
    free(req->tags);
    memset(req, 0, sizeof(*req));
}

/* ---- completions ---- */

static int64_t clamp_diff(curl_off_t a, curl_off_t b) { return a > b ? (int64_t)(a - b) : 0; }

static int map_error(CURLcode rc, long os_errno) {
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: return 1050;
    case CURLE_COULDNT_RESOLVE_HOST: return 1100;
    case CURLE_COULDNT_CONNECT:
        if (os_errno == ECONNREFUSED) return 1212;
        if (os_errno == ETIMEDOUT) return 1211;
        return 1210;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: return os_errno == ECONNRESET ? 1220 : 1200;
    case CURLE_PEER_FAILED_VERIFICATION: return 1310;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE: return 1300;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return 1600;
    default: return 1000;
    }
}

static void fill_result(ll_transfer *x, CURLcode rc, uint64_t t_end) {
    CURL *e = x->easy;
    ll_http_res *r = &x->res;
    long status = 0, version = 0, os_errno = 0, req_size = 0;
    curl_off_t dns = 0, conn = 0, tls = 0, pre = 0, post = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(e, CURLINFO_NAMELOOKUP_TIME_T, &dns);
    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &conn);
    curl_easy_getinfo(e, CURLINFO_APPCONNECT_TIME_T, &tls);
    curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(e, CURLINFO_POSTTRANSFER_TIME_T, &post);
    curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &req_size);
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &r->effective_url);

    /* libcurl's timestamps are cached per socket_action call and can lag
     * the wire by the whole round trip under load, so the request's own
     * phases come from our clock (submit, prereq callback, first header
     * byte, completion); only the connect and TLS handshake, which span
     * several calls, and the tiny send phase come from libcurl. */
    if (x->t_last && x->t_last < t_end) t_end = x->t_last;
    uint64_t t_pre = x->t_pre ? x->t_pre : t_end;
    uint64_t t_first = x->t_first ? x->t_first : t_end;
    if (t_first < t_pre) t_first = t_pre;
    int fresh = conn > 0;
    r->t.connecting = fresh ? clamp_diff(conn, dns) : 0;
    r->t.tls_handshaking = fresh && tls > 0 ? clamp_diff(tls, conn) : 0;
    /* k6's blocked runs from asking for a connection to getting one: it
     * includes DNS, connecting and the TLS handshake of a new connection. */
    r->t.blocked = (int64_t)(t_pre - x->t_start) / 1000;
    int64_t to_first = (int64_t)(t_first - t_pre) / 1000;
    r->t.sending = clamp_diff(post, pre);
    if (r->t.sending > to_first) r->t.sending = to_first;
    r->t.waiting = to_first - r->t.sending;
    r->t.receiving = (int64_t)(t_end - t_first) / 1000;
    r->t.duration = r->t.sending + r->t.waiting + r->t.receiving;

    r->status = rc == CURLE_OK ? (int)status : 0;
    r->proto = r->status == 0 ? ""
             : version == CURL_HTTP_VERSION_3 ? "HTTP/3.0"
             : version == CURL_HTTP_VERSION_2_0 ? "HTTP/2.0"
             : version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0" : "HTTP/1.1";
    r->body = x->body.p ? x->body.p : "";
    r->body_len = x->body.len;
    r->headers = x->hdrs.p ? x->hdrs.p : "";
    r->headers_len = x->hdrs.len;
    r->bytes_sent = req_size; /* headers and the body given in memory */
    r->bytes_received = x->header_bytes + x->body_bytes;
    r->error_code = 0;
    r->error = "";
    if (rc != CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
        r->error_code = map_error(rc, os_errno);
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
    } else if (status >= 400) {
        r->error_code = 1000 + (int)status;
    }
}

/* Completes the transfers libcurl finished in the call that just returned;
 * t_end is when it returned (or earlier: when the last byte came in), so
 * that running one VU's Lua code does not count in the next one's time. */
static void drain_done(multi_ctx *mc, uint64_t t_end) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(mc->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        ll_transfer *x = NULL;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(mc->multi, m->easy_handle);
        x->active = 0;
        fill_result(x, rc, t_end);
        x->fn(x, &x->res, x->ud);
    }
}

/* ---- libcurl <-> loop glue ---- */

/* ud is the transport, not the sock_ctx: the socks array may move. */
static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    ll_transport *tp = ud;
    sock_ctx *sc = &tp->socks[fd];
    if (sc->parked) {
        ll_loop_watch(loop, fd, 0, NULL, NULL);
        sc->parked = 0;
        return;
    }
    multi_ctx *mc = sc->mc;
    int running, flags = 0;
    if (events & LL_READABLE) flags |= CURL_CSELECT_IN;
    if (events & LL_WRITABLE) flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(mc->multi, fd, flags, &running);
    drain_done(mc, ll_now_ns());
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    multi_ctx *mc = ud;
    int running;
    curl_multi_socket_action(mc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_done(mc, ll_now_ns());
}

static sock_ctx *sock_of(ll_transport *tp, int fd) {
    if (fd < 0) return NULL;
    if (fd >= tp->nsocks) {
        int n = tp->nsocks ? tp->nsocks : 256;
        while (n <= fd) n *= 2;
        sock_ctx *s = realloc(tp->socks, (size_t)n * sizeof(*s));
        if (!s) return NULL;
        memset(s + tp->nsocks, 0, (size_t)(n - tp->nsocks) * sizeof(*s));
        tp->socks = s;
        tp->nsocks = n;
    }
    return &tp->socks[fd];
}

static int socket_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp) {
    (void)e;
    (void)socketp;
    multi_ctx *mc = userp;
    sock_ctx *sc = sock_of(mc->tp, fd);
    if (!sc) return -1;
    if (what == CURL_POLL_REMOVE) {
        sc->parked = 1;
        return 0;
    }
    sc->mc = mc;
    sc->parked = 0;
    int events = 0;
    if (what & CURL_POLL_IN) events |= LL_READABLE;
    if (what & CURL_POLL_OUT) events |= LL_WRITABLE;
    return ll_loop_watch(mc->tp->loop, fd, events, on_fd, mc->tp) < 0 ? -1 : 0;
}

/* libcurl closes a socket: forget it in the loop (closing unregisters it). */
static int close_cb(void *ud, curl_socket_t fd) {
    ll_transport *tp = ud;
    ll_loop_forget(tp->loop, fd);
    if (fd < tp->nsocks) tp->socks[fd].parked = 0;
    return close(fd);
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    multi_ctx *mc = userp;
    if (timeout_ms < 0) ll_timer_stop(mc->tp->loop, &mc->timer);
    else ll_timer_start(mc->tp->loop, &mc->timer, (uint64_t)timeout_ms * 1000);
    return 0;
}

ll_transport *ll_transport_new(ll_loop *loop, int nmultis) {
    ll_transport *tp = calloc(1, sizeof(*tp));
    if (!tp) return NULL;
    tp->loop = loop;
    tp->multis = calloc((size_t)(nmultis > 0 ? nmultis : 1), sizeof(multi_ctx));
    if (!tp->multis) goto fail;
    tp->nmultis = nmultis > 0 ? nmultis : 1;
    for (int i = 0; i < tp->nmultis; i++) {
        multi_ctx *mc = &tp->multis[i];
        mc->tp = tp;
        ll_timer_init(&mc->timer, on_timer, mc);
        mc->multi = curl_multi_init();
        if (!mc->multi) goto fail;
        curl_multi_setopt(mc->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(mc->multi, CURLMOPT_SOCKETDATA, mc);
        curl_multi_setopt(mc->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(mc->multi, CURLMOPT_TIMERDATA, mc);
        /* Easy handles leave the multi between requests: keep the idle
         * connections of all of them instead of 4x the handles in flight. */
        curl_multi_setopt(mc->multi, CURLMOPT_MAXCONNECTS, 100000L);
    }
    return tp;
fail:
    ll_transport_free(tp);
    return NULL;
}

void ll_transport_free(ll_transport *tp) {
    if (!tp) return;
    for (int i = 0; i < tp->nmultis; i++) {
        if (!tp->multis[i].multi) continue;
        ll_timer_stop(tp->loop, &tp->multis[i].timer);
        curl_multi_cleanup(tp->multis[i].multi);
    }
    free(tp->multis);
    free(tp->socks);
    free(tp);
}

/* ---- transfers ---- */

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
    ll_transfer *x = ud;
    size_t len = size * n;
    x->body_bytes += (int64_t)len;
    x->t_last = ll_now_ns();
    if (x->req->response_type == LL_RESPONSE_NONE) return len;
    return ll_buf_append(&x->body, p, len) < 0 ? 0 : len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud) {
    ll_transfer *x = ud;
    size_t len = size * n;
    x->header_bytes += (int64_t)len;
    /* a new status line starts a new header block (redirects, 100-continue) */
    if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
        x->hdrs.len = 0;
        x->t_first = ll_now_ns();
    }
    return ll_buf_append(&x->hdrs, p, len) < 0 ? 0 : len;
}

/* Called right before the request goes out on a new or reused connection. */
static int on_prereq(void *ud, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                     int conn_local_port) {
    (void)conn_primary_ip;
    (void)conn_local_ip;
    (void)conn_primary_port;
    (void)conn_local_port;
    ll_transfer *x = ud;
    x->t_pre = ll_now_ns();
    x->t_first = x->t_last = 0;
    return CURL_PREREQFUNC_OK;
}

ll_transfer *ll_transfer_new(ll_transport *tp, int multi_index, const ll_client_opts *o) {
    ll_transfer *x = calloc(1, sizeof(*x));
    if (!x) return NULL;
    x->tp = tp;
    x->mc = &tp->multis[multi_index % tp->nmultis];
    x->easy = curl_easy_init();
    if (!x->easy) {
        free(x);
        return NULL;
    }
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, close_cb);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, tp);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    /* no proxy from http_proxy & co. (a load test goes where it is told;
     * it also saves libcurl's environment lookups on every request) */
    curl_easy_setopt(e, CURLOPT_PROXY, o->proxy ? o->proxy : "");
    /* The User-Agent goes in the header list: CURLOPT_USERAGENT makes
     * libcurl format it anew for every request (~6k instructions, 7% of a
     * request measured with callgrind). */
    char ua[512];
    snprintf(ua, sizeof(ua), "User-Agent: %s", o->user_agent ? o->user_agent : "luaload/" LUALOAD_VERSION);
    x->ua = curl_slist_append(NULL, ua);
    if (!x->ua) {
        curl_easy_cleanup(e);
        free(x);
        return NULL;
    }
    if (o->dial_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->dial_timeout_ms);
    if (o->max_conn_duration_s > 0) curl_easy_setopt(e, CURLOPT_MAXLIFETIME_CONN, o->max_conn_duration_s);
    if (o->insecure_skip_verify) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (o->ca) curl_easy_setopt(e, CURLOPT_CAINFO, o->ca);
    if (o->certificate) curl_easy_setopt(e, CURLOPT_SSLCERT, o->certificate);
    if (o->private_key) curl_easy_setopt(e, CURLOPT_SSLKEY, o->private_key);
    long v = o->http_version == 11 ? CURL_HTTP_VERSION_1_1
           : o->http_version == 2 ? CURL_HTTP_VERSION_2_0
           : o->http_version == 3 ? CURL_HTTP_VERSION_3ONLY : CURL_HTTP_VERSION_2TLS;
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, v);
    x->timeout_default = o->timeout_ms;
    x->redirects_default = o->max_redirects < 0 ? 10 : o->max_redirects;
    return x;
}

void ll_transfer_free(ll_transfer *x) {
    if (!x) return;
    ll_transfer_cancel(x);
    curl_easy_cleanup(x->easy);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    curl_slist_free_all(x->ua);
    curl_slist_free_all(x->merged);
    free(x);
}

void ll_transfer_cancel(ll_transfer *x) {
    if (!x->active) return;
    curl_multi_remove_handle(x->mc->multi, x->easy);
    x->active = 0;
}

const ll_http_req *ll_transfer_request(const ll_transfer *x, const char **method) {
    *method = x->method;
    return x->req;
}

/* The header list to send: the request's, with the client's User-Agent
 * unless the request sets its own. */
static struct curl_slist *headers_with_ua(ll_transfer *x, struct curl_slist *h) {
    curl_slist_free_all(x->merged);
    x->merged = NULL;
    if (!h) return x->ua;
    for (struct curl_slist *i = h; i; i = i->next)
        if (strncasecmp(i->data, "User-Agent:", 11) == 0) return h;
    for (struct curl_slist *i = h; i; i = i->next) {
        struct curl_slist *n = curl_slist_append(x->merged, i->data);
        if (!n) return h; /* out of memory: send them without ours */
        x->merged = n;
    }
    struct curl_slist *n = curl_slist_append(x->merged, x->ua->data);
    if (n) x->merged = n;
    return x->merged;
}

/* Applies the options of req to the easy handle (only when it changed). */
static void apply_request(ll_transfer *x, const ll_http_req *req, const char *m) {
    CURL *e = x->easy;
    int head = strcmp(m, "HEAD") == 0, post = strcmp(m, "POST") == 0;
    int plain_get = strcmp(m, "GET") == 0 && !req->has_body;
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_with_ua(x, req->headers));
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L); /* resets body and NOBODY */
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    if (head) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (req->has_body || post) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    }
    /* any other method, and a GET that carries a body */
    if (!head && !post && !plain_get) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    long t = req->timeout_ms > 0 ? req->timeout_ms : x->timeout_default;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t > 0 ? t : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, req->disable_keep_alive ? 1L : 0L);
    long r = req->max_redirects >= 0 ? req->max_redirects : x->redirects_default;
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, r > 0 ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, r);
    x->req_id = req->id;
    x->method = m;
}

int ll_transfer_start(ll_transfer *x, const ll_http_req *req, const char *method,
                      ll_transfer_done_fn *fn, void *ud, const char **err) {
    if (x->active) {
        *err = "a request is already in flight on this connection";
        return -1;
    }
    if (x->req_id != req->id || x->method != method) apply_request(x, req, method);
    x->req = req;
    x->fn = fn;
    x->ud = ud;
    x->body.len = 0;
    x->hdrs.len = 0;
    x->body_bytes = 0;
    x->header_bytes = 0;
    x->errbuf[0] = 0;
    x->t_pre = x->t_first = x->t_last = 0;
    x->t_start = ll_now_ns();
    CURLMcode mc = curl_multi_add_handle(x->mc->multi, x->easy);
    if (mc != CURLM_OK) {
        *err = curl_multi_strerror(mc);
        return -1;
    }
    x->active = 1;
    return 0;
}
