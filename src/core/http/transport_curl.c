/* transport_curl.c -- the libcurl transport behind transport.h.
 *
 * Each worker's transport owns its multi handles, one per 16 VUs
 * (LL_CURL_VUS_PER_MULTI: libcurl's connection-pool lookup is linear in the
 * connections of one multi handle), made as VUs first ask for them and all
 * driven by the worker's one epoll loop through socket_action and a timer
 * per multi handle. Each transfer keeps its easy handle, so a VU keeps its
 * keep-alive connection. Per-request options are only re-applied when the
 * VU sends a different prepared request than last time. A body in memory
 * goes as POSTFIELDS; a multipart form as a curl_mime whose parts are read
 * through callbacks; a file region or generator body is streamed through
 * the read callback. This file is the only one that includes curl.h, and it
 * calls curl_global_init once for the process. */
#include "transport_curl.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <openssl/ssl.h>
#ifdef LL_HAVE_GNUTLS
#include <gnutls/gnutls.h>
#endif

#include "form.h"
#include "http_error.h"
#include "xmalloc.h"
#include "buf.h"

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
    int head_open;             /* a header block began and did not end (the
                                * blank line): libcurl takes EOF for its end */
    int64_t limit_default;     /* the client's max_response_body */
    long timeout_default;      /* the client's timeout_ms */
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

/* ---- completions ---- */

static int64_t clamp_diff(curl_off_t a, curl_off_t b) { return a > b ? (int64_t)(a - b) : 0; }

/* k6's error codes (k6 lib/netext/httpext/error_codes.go). connected: the
 * request got a connection (a timeout before that is a dial timeout); tls:
 * an https:// URL. */
static int map_error(CURLcode rc, long os_errno, int connected, int tls) {
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: return connected ? 1050 : 1211;
    case CURLE_URL_MALFORMAT: return 1020;
    case CURLE_COULDNT_RESOLVE_HOST: return 1100;
    case CURLE_COULDNT_CONNECT:
        if (os_errno == ECONNREFUSED) return 1212;
        if (os_errno == ETIMEDOUT) return 1211;
        return 1210;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        if (os_errno == ECONNRESET) return 1220;
        return connected || !tls ? 1200 : 1300; /* a QUIC handshake that failed */
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

static void fill_result(curl_transfer *x, CURLcode rc, uint64_t t_end) {
    CURL *e = x->easy;
    ll_http_res *r = &x->res;
    long status = 0, version = 0, os_errno = 0, req_size = 0;
    curl_off_t dns = 0, conn = 0, tls = 0, pre = 0, post = 0, wire_body = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(e, CURLINFO_NAMELOOKUP_TIME_T, &dns);
    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &conn);
    curl_easy_getinfo(e, CURLINFO_APPCONNECT_TIME_T, &tls);
    curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(e, CURLINFO_POSTTRANSFER_TIME_T, &post);
    curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &req_size);
    curl_easy_getinfo(e, CURLINFO_SIZE_DOWNLOAD_T, &wire_body); /* before content decoding */
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &r->effective_url);
    if (x->server_name) r->effective_url = x->base.req->url; /* not the rewritten one */

    /* libcurl's timestamps are cached per socket_action call and can lag
     * the wire by the whole round trip under load, so the request's own
     * phases come from our clock (submit, prereq callback, first header
     * byte, completion); only the connect and TLS handshake, which span
     * several calls, and the tiny send phase come from libcurl. */
    if (rc == CURLE_OK && x->t_last && x->t_last < t_end) t_end = x->t_last; /* a failure ends when noticed */
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

    r->status = rc == CURLE_OK && !x->too_big && !x->head_open ? (int)status : 0;
    r->proto = r->status == 0 ? ""
             : version == CURL_HTTP_VERSION_3 ? "HTTP/3.0"
             : version == CURL_HTTP_VERSION_2_0 ? "HTTP/2.0"
             : version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0" : "HTTP/1.1";
    r->body = x->body.p ? x->body.p : "";
    r->body_len = r->status ? x->body.len : 0; /* a failed request has no body, as in k6 */
    r->headers = x->hdrs.p ? x->hdrs.p : "";
    r->headers_len = x->hdrs.len;
    /* everything libcurl wrote for the request: headers and the body,
     * whether in memory, streamed or a form (measured against what serve
     * received: bench/uploads.sh) */
    r->bytes_sent = req_size;
    /* on the wire: a compressed body counts compressed */
    r->bytes_received = x->header_bytes + (wire_body > 0 ? (int64_t)wire_body : x->body_bytes);
    r->error_code = 0;
    r->error = "";
    r->tls_version = r->status && version == CURL_HTTP_VERSION_3 && !*x->tls_version ? "tls1.3" : x->tls_version;
    r->tls_cipher_suite = x->tls_cipher;
    /* over QUIC libcurl only sends again after finding the connection dead
     * (closed or draining, e.g. refused after the handshake): the server
     * processed nothing on it, so that attempt is not a request */
    r->retries = x->attempts > 1 && x->version_applied != LL_HTTP_3 ? x->attempts - 1 : 0;
    if (rc == CURLE_OK && x->head_open) {
        r->error_code = 1000;
        r->error = "the server closed the connection in the middle of the response headers";
    } else if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(x->errbuf, sizeof(x->errbuf), "the response body is over max_response_body (%lld bytes)",
                 (long long)x->body_limit);
        r->error_code = 1000;
        r->error = x->errbuf;
    } else if (rc != CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
        r->error_code = map_error(rc, os_errno, x->t_pre != 0, strncasecmp(x->base.req->url, "https:", 6) == 0);
        /* libcurl fails a head over its limit as a receive error; k6 (and the
         * native transport) count an oversized response as 1000 */
        if (rc == CURLE_RECV_ERROR && strncmp(x->errbuf, "Too large response headers", 26) == 0) r->error_code = 1000;
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
        const char *common = ll_http_error_text(r->error_code, x->base.req->url, x->errbuf, sizeof(x->errbuf));
        if (common) r->error = common;
    } else if (status >= 400) {
        r->error_code = 1000 + (int)status;
    }
}

static void multi_free(curl_transport *tp, multi_ctx *mc);

/* Completes the transfers libcurl finished in the call that just returned;
 * t_end is when it returned (or earlier: when the last byte came in), so
 * that running one VU's Lua code does not count in the next one's time.
 * The last thing its caller does: a completion may free the pool's last
 * transfer (a new iteration closing its connections), and then the pool
 * is freed here, once the loop no longer reads it. */
static void drain_done(multi_ctx *mc, uint64_t t_end) {
    CURLMsg *m;
    int left;
    mc->draining = 1;
    while ((m = curl_multi_info_read(mc->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        curl_transfer *x = NULL;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(mc->multi, m->easy_handle);
        x->active = 0;
        fill_result(x, rc, t_end);
        x->fn(&x->base, &x->res, x->ud);
    }
    mc->draining = 0;
    if (mc->dead) multi_free(mc->tp, mc);
}

/* ---- libcurl <-> loop glue ---- */

/* ud is the transport, not the sock_ctx: the socks array may move. */
static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    curl_transport *tp = ud;
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
    drain_done(mc, ll_loop_now_ns());
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    multi_ctx *mc = ud;
    int running;
    curl_multi_socket_action(mc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_done(mc, ll_loop_now_ns());
}

static sock_ctx *sock_of(curl_transport *tp, int fd) {
    if (fd < 0) return NULL;
    if (fd >= tp->nsocks) {
        int n = tp->nsocks ? tp->nsocks : 256;
        while (n <= fd) n *= 2;
        tp->socks = ll_xrealloc(tp->socks, (size_t)n * sizeof(*tp->socks));
        memset(tp->socks + tp->nsocks, 0, (size_t)(n - tp->nsocks) * sizeof(*tp->socks));
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
    return ll_loop_watch(mc->tp->base.loop, fd, events, on_fd, mc->tp) < 0 ? -1 : 0;
}

/* libcurl closes a socket: forget it in the loop (closing unregisters it). */
static int close_cb(void *ud, curl_socket_t fd) {
    curl_transport *tp = ud;
    ll_loop_forget(tp->base.loop, fd);
    if (fd < tp->nsocks) tp->socks[fd].parked = 0;
    return close(fd);
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    multi_ctx *mc = userp;
    if (timeout_ms < 0) ll_loop_timer_stop(mc->tp->base.loop, &mc->timer);
    else ll_loop_timer_start(mc->tp->base.loop, &mc->timer, (uint64_t)timeout_ms * 1000);
    return 0;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

const char *ll_transport_curl_version(void) { return curl_version(); }

static void multi_free(curl_transport *tp, multi_ctx *mc) {
    if (!mc) return;
    ll_loop_timer_stop(tp->base.loop, &mc->timer);
    if (mc->multi) curl_multi_cleanup(mc->multi);
    free(mc);
}

/* A transfer lets go of its pool; the last one closes it, and a new
 * transfer of the same pool gets a new one (fresh connections). */
static void multi_unref(curl_transport *tp, multi_ctx *mc) {
    if (--mc->refs > 0) return;
    for (int i = 0; i < tp->nmultis; i++) {
        if (tp->multis[i] != mc) continue;
        tp->multis[i] = tp->multis[--tp->nmultis];
        break;
    }
    if (mc->draining) mc->dead = 1; /* drain_done is still reading it */
    else multi_free(tp, mc);
}

/* The pool of (pool, group), made on first use with the client's
 * connection options; a reference for the caller. */
static multi_ctx *multi_of(curl_transport *tp, uint64_t pool, int group, const ll_client_opts *o) {
    for (int i = 0; i < tp->nmultis; i++) {
        multi_ctx *mc = tp->multis[i];
        if (mc->pool == pool && mc->group == group) {
            mc->refs++;
            return mc;
        }
    }
    multi_ctx *mc = ll_xcalloc(1, sizeof(*mc));
    mc->tp = tp;
    mc->pool = pool;
    mc->group = group;
    ll_loop_timer_init(&mc->timer, on_timer, mc);
    mc->multi = curl_multi_init();
    if (!mc->multi) {
        free(mc);
        return NULL;
    }
    if (tp->nmultis == tp->cap_multis) {
        tp->cap_multis = tp->cap_multis ? 2 * tp->cap_multis : 8;
        tp->multis = ll_xrealloc(tp->multis, (size_t)tp->cap_multis * sizeof(*tp->multis));
    }
    tp->multis[tp->nmultis++] = mc;
    mc->refs = 1;
    /* Without multiplex each request has a connection to itself (k6's
     * model); with it, h2 and h3 requests share connections as streams. */
    curl_multi_setopt(mc->multi, CURLMOPT_PIPELINING, o->multiplex ? (long)CURLPIPE_MULTIPLEX : (long)CURLPIPE_NOTHING);
    if (o->multiplex) {
        curl_multi_setopt(mc->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, o->max_streams > 0 ? (long)o->max_streams : 100L);
        if (o->max_conns_per_host > 0)
            curl_multi_setopt(mc->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->max_conns_per_host);
    }
    curl_multi_setopt(mc->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(mc->multi, CURLMOPT_SOCKETDATA, mc);
    curl_multi_setopt(mc->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(mc->multi, CURLMOPT_TIMERDATA, mc);
    /* Easy handles leave the multi between requests: keep the idle
     * connections of all of them instead of 4x the handles in flight. */
    curl_multi_setopt(mc->multi, CURLMOPT_MAXCONNECTS, 100000L);
    return mc;
}

static ll_transport *curl_transport_new(ll_loop *loop, const ll_dns_config *dns) {
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) return NULL;
    curl_transport *tp = ll_xcalloc(1, sizeof(*tp));
    tp->base.ops = &ll_transport_curl;
    tp->base.loop = loop;
    tp->dns = dns;
    return &tp->base;
}

static void curl_transport_free(ll_transport *base) {
    curl_transport *tp = (curl_transport *)base;
    if (!tp) return;
    for (int i = 0; i < tp->nmultis; i++) multi_free(tp, tp->multis[i]); /* transfers went first */
    free(tp->multis);
    free(tp->socks);
    free(tp);
}

/* ---- transfers ---- */

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    size_t len = size * n;
    x->body_bytes += (int64_t)len;
    x->t_last = ll_loop_now_ns();
    if (x->body_limit == 0) return len;
    if ((int64_t)(x->body.len + len) > x->body_limit) { /* fails the transfer */
        x->too_big = 1;
        return 0;
    }
    return ll_buf_append(&x->body, p, len) < 0 ? 0 : len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    size_t len = size * n;
    x->header_bytes += (int64_t)len;
    /* a new status line starts a new header block (redirects, 100-continue) */
    if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
        x->hdrs.len = 0;
        x->t_first = ll_loop_now_ns();
        x->head_open = 1;
    } else if ((len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n')) {
        x->head_open = 0;
    }
    return ll_buf_append(&x->hdrs, p, len) < 0 ? 0 : len;
}

/* A streamed body (file region or generator), read as libcurl sends it. */
static size_t on_read(char *buf, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    ssize_t r = ll_body_read(&x->base.req->body, x->body_pos, buf, size * n);
    if (r < 0) return CURL_READFUNC_ABORT;
    x->body_pos += (uint64_t)r;
    return (size_t)r;
}

/* A form part, read as libcurl sends it (pread for a file region: many
 * transfers send one file at once). */
static size_t on_mime_read(char *buf, size_t size, size_t n, void *arg) {
    mime_cursor *c = arg;
    ssize_t r = ll_body_read(c->data, c->pos, buf, size * n);
    if (r < 0) return CURL_READFUNC_ABORT;
    c->pos += (uint64_t)r;
    return (size_t)r;
}

static int on_mime_seek(void *arg, curl_off_t offset, int origin) {
    mime_cursor *c = arg;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > c->data->len) return CURL_SEEKFUNC_FAIL;
    c->pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

static void mime_drop(curl_transfer *x) {
    if (!x->mime) return;
    curl_easy_setopt(x->easy, CURLOPT_MIMEPOST, NULL);
    curl_mime_free(x->mime);
    x->mime = NULL;
}

/* The form f as the handle's MIMEPOST: parts named, with their filename
 * and type, their data read through callbacks. -1 when out of memory. */
static int mime_build(curl_transfer *x, const ll_form *f) {
    mime_drop(x);
    if (f->n > x->ncursors) {
        mime_cursor *c = realloc(x->cursors, (size_t)f->n * sizeof(*c));
        if (!c) return -1;
        x->cursors = c;
        x->ncursors = f->n;
    }
    x->mime = curl_mime_init(x->easy);
    if (!x->mime) return -1;
    for (int i = 0; i < f->n; i++) {
        const ll_form_part *p = &f->parts[i];
        curl_mimepart *mp = curl_mime_addpart(x->mime);
        x->cursors[i].data = &p->data;
        x->cursors[i].pos = 0;
        if (!mp || curl_mime_name(mp, p->name) != CURLE_OK ||
            (p->filename && curl_mime_filename(mp, p->filename) != CURLE_OK) ||
            (p->content_type && curl_mime_type(mp, p->content_type) != CURLE_OK) ||
            curl_mime_data_cb(mp, (curl_off_t)p->data.len, on_mime_read, on_mime_seek, NULL, &x->cursors[i]) != CURLE_OK)
            return -1;
    }
    return curl_easy_setopt(x->easy, CURLOPT_MIMEPOST, x->mime) == CURLE_OK ? 0 : -1;
}

/* libcurl rewinds a streamed body to send it again (a redirect, a retry on
 * a connection that was closed under it). */
static int on_seek(void *ud, curl_off_t offset, int origin) {
    curl_transfer *x = ud;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->base.req->body.len) return CURL_SEEKFUNC_FAIL;
    x->body_pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* The TLS version and cipher suite of the transfer's connection, with k6's
 * names, from the TLS library libcurl uses (GnuTLS in Debian's build). */
static void tls_info(curl_transfer *x) {
    struct curl_tlssessioninfo *ti = NULL;
    x->tls_version = x->tls_cipher = "";
    if (curl_easy_getinfo(x->easy, CURLINFO_TLS_SSL_PTR, &ti) != CURLE_OK || !ti || !ti->internals) return;
    int v = 0;
    const char *cipher = NULL;
#ifdef LL_HAVE_GNUTLS
    if (ti->backend == CURLSSLBACKEND_GNUTLS) {
        gnutls_session_t gs = ti->internals;
        gnutls_protocol_t p = gnutls_protocol_get_version(gs);
        v = p == GNUTLS_TLS1_3 ? 13 : p == GNUTLS_TLS1_2 ? 12 : p == GNUTLS_TLS1_1 ? 11 : p == GNUTLS_TLS1_0 ? 10 : 0;
        cipher = gnutls_ciphersuite_get(gs);
    }
#endif
    if (ti->backend == CURLSSLBACKEND_OPENSSL) {
        SSL *ssl = ti->internals;
        int p = SSL_version(ssl);
        v = p == TLS1_3_VERSION ? 13 : p == TLS1_2_VERSION ? 12 : p == TLS1_1_VERSION ? 11 : p == TLS1_VERSION ? 10 : 0;
        const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
        cipher = c ? SSL_CIPHER_standard_name(c) : NULL;
    }
    x->tls_version = v == 13 ? "tls1.3" : v == 12 ? "tls1.2" : v == 11 ? "tls1.1" : v == 10 ? "tls1.0" : "";
    x->tls_cipher = cipher ? cipher : "";
}

/* Called right before the request goes out on a new or reused connection. */
static int on_prereq(void *ud, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                     int conn_local_port) {
    (void)conn_primary_ip;
    (void)conn_local_ip;
    (void)conn_primary_port;
    (void)conn_local_port;
    curl_transfer *x = ud;
    x->t_pre = ll_loop_now_ns();
    x->t_first = x->t_last = 0;
    x->attempts++;
    x->body.len = x->hdrs.len = 0; /* a retry starts over */
    if (strncasecmp(x->base.req->url, "https:", 6) == 0) tls_info(x);
    return CURL_PREREQFUNC_OK;
}

/* Buffers over this size are freed once their response was copied out. */
#define KEEP_BUFFER_BYTES (256u << 10)

static void curl_transfer_release(ll_transfer *base) {
    curl_transfer *x = (curl_transfer *)base;
    if (x->body.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->body);
    if (x->hdrs.cap > KEEP_BUFFER_BYTES) ll_buf_free(&x->hdrs);
    x->res.body = x->res.headers = "";
    x->res.body_len = x->res.headers_len = 0;
}

static int curl_transfer_cancel(ll_transfer *base, int64_t *bytes_sent) {
    curl_transfer *x = (curl_transfer *)base;
    *bytes_sent = 0;
    if (!x->active) return 0;
    long req_size = 0; /* grows as the request goes out */
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);
    *bytes_sent = x->attempts ? req_size : 0;
    curl_multi_remove_handle(x->mc->multi, x->easy);
    x->active = 0;
    return x->attempts;
}

static void curl_transfer_free(ll_transfer *base) {
    curl_transfer *x = (curl_transfer *)base;
    if (!x) return;
    int64_t sent;
    curl_transfer_cancel(base, &sent);
    if (x->easy) curl_easy_cleanup(x->easy);
    curl_mime_free(x->mime); /* after the handle that used it */
    free(x->cursors);
    multi_unref((curl_transport *)base->tp, x->mc);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    curl_slist_free_all(x->ua);
    curl_slist_free_all(x->ua_body);
    curl_slist_free_all(x->hlist);
    curl_slist_free_all(x->connect_to);
    curl_slist_free_all(x->sni_route);
    free(x->server_name);
    curl_free(x->sni_url);
    free(x->sni_host);
    free(x->cookie_applied);
    free(x);
}

/* The cipher list: IANA names (k6's tlsCipherSuites) become a GnuTLS
 * priority string when libcurl uses GnuTLS (the union of their key
 * exchanges, ciphers and MACs; GnuTLS has no list of whole suites);
 * anything else goes to the TLS library as is. */
static void set_ciphers(curl_transfer *x, const char *list) {
    char prio[2048] = "";
#ifdef LL_HAVE_GNUTLS
    const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);
    if (strncmp(list, "TLS_", 4) == 0 && d->ssl_version && strncmp(d->ssl_version, "GnuTLS", 6) == 0) {
        size_t n = (size_t)snprintf(prio, sizeof(prio), "NORMAL:-CIPHER-ALL:-MAC-ALL:-KX-ALL");
        char name[128];
        for (const char *p = list; *p && n < sizeof(prio);) {
            size_t len = strcspn(p, ":");
            if (len >= sizeof(name) - 8) len = sizeof(name) - 8;
            memcpy(name, p, len);
            name[len] = 0;
            p += len + (p[len] == ':');
            char *with = strstr(name, "_WITH_"); /* TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 -> GnuTLS's name */
            if (with) memmove(with, with + 5, strlen(with + 5) + 1);
            size_t nl = strlen(name);
            if (nl > 4 && strcmp(name + nl - 4, "_SHA") == 0) strcat(name, "1");
            for (size_t i = 0;; i++) {
                unsigned char id[2];
                gnutls_kx_algorithm_t kx;
                gnutls_cipher_algorithm_t c;
                gnutls_mac_algorithm_t mac;
                gnutls_protocol_t ver;
                const char *gn = gnutls_cipher_suite_info(i, id, &kx, &c, &mac, &ver);
                if (!gn) break;
                if (strcmp(gn, name) != 0) continue;
                const char *kn = gnutls_kx_get_name(kx);
                n += (size_t)snprintf(prio + n, sizeof(prio) - n, ":+%s:+%s%s%s", gnutls_cipher_get_name(c),
                                      gnutls_mac_get_name(mac), kn ? ":+" : "", kn ? kn : "");
                break;
            }
        }
        if (n >= sizeof(prio)) prio[0] = 0;
    }
#endif
    curl_easy_setopt(x->easy, CURLOPT_SSL_CIPHER_LIST, prio[0] ? prio : list);
}

/* TLS versions for CURLOPT_SSLVERSION: the lowest and highest allowed. */
static long ssl_version(int min, int max) {
    long lo = min == 13 ? CURL_SSLVERSION_TLSv1_3 : min == 12 ? CURL_SSLVERSION_TLSv1_2
            : min == 11 ? CURL_SSLVERSION_TLSv1_1 : min == 10 ? CURL_SSLVERSION_TLSv1_0 : CURL_SSLVERSION_DEFAULT;
    long hi = max == 13 ? CURL_SSLVERSION_MAX_TLSv1_3 : max == 12 ? CURL_SSLVERSION_MAX_TLSv1_2
            : max == 11 ? CURL_SSLVERSION_MAX_TLSv1_1 : max == 10 ? CURL_SSLVERSION_MAX_TLSv1_0
            : CURL_SSLVERSION_MAX_DEFAULT;
    return lo | hi;
}

/* The dns option as far as libcurl has it: its cache's ttl (in whole
 * seconds), onlyIPv4 / onlyIPv6, and random or roundRobin as shuffled
 * addresses (libcurl has no round robin); prefer* leave the order to the
 * system's resolver and libcurl's Happy Eyeballs. And the VU's source
 * address (--local-ips). */
static void set_dns(curl_transfer *x, const ll_dns_config *dns, const ll_addr *local) {
    if (dns) {
        int64_t ms = ll_dns_ttl_ms(dns);
        curl_easy_setopt(x->easy, CURLOPT_DNS_CACHE_TIMEOUT, ms < 0 ? -1L : (long)((ms + 999) / 1000));
        if (dns->policy == LL_DNS_ONLY_IPV4) curl_easy_setopt(x->easy, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V4);
        if (dns->policy == LL_DNS_ONLY_IPV6) curl_easy_setopt(x->easy, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V6);
        if (dns->select != LL_DNS_SELECT_FIRST) curl_easy_setopt(x->easy, CURLOPT_DNS_SHUFFLE_ADDRESSES, 1L);
    }
    if (!local || !local->len) return;
    char ip[INET6_ADDRSTRLEN], iface[INET6_ADDRSTRLEN + 8];
    const void *a = local->ss.ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)&local->ss)->sin_addr
                                                  : (const void *)&((const struct sockaddr_in6 *)&local->ss)->sin6_addr;
    if (!inet_ntop(local->ss.ss_family, a, ip, sizeof(ip))) return;
    snprintf(iface, sizeof(iface), "host!%s", ip); /* an address, never an interface name */
    curl_easy_setopt(x->easy, CURLOPT_INTERFACE, iface);
}

static ll_transfer *curl_transfer_new(ll_transport *base, int vu_index, uint64_t pool, const ll_client_opts *o) {
    curl_transport *tp = (curl_transport *)base;
    int group = o->multiplex ? 0 : o->no_vu_reuse ? vu_index : vu_index / LL_CURL_VUS_PER_MULTI;
    multi_ctx *mc = multi_of(tp, pool, group, o);
    if (!mc) return NULL;
    curl_transfer *x = ll_xcalloc(1, sizeof(*x));
    x->base.tp = base;
    x->mc = mc;
    x->tls_version = x->tls_cipher = "";
    x->version_applied = -1;
    x->easy = curl_easy_init();
    if (!x->easy) {
        multi_unref(tp, mc);
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
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
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
    /* "Expect:" keeps libcurl from sending Expect: 100-continue with a body
     * over 1 MiB and waiting a second for the server, as k6 does not;
     * "Accept-Encoding:" keeps the header that ACCEPT_ENCODING would add
     * off the wire (k6 sends it only when the script does) while libcurl
     * still decodes what comes compressed. */
    x->ua = curl_slist_append(NULL, ua);
    struct curl_slist *l = x->ua ? curl_slist_append(x->ua, "Accept-Encoding:") : NULL;
    x->ua_body = l ? curl_slist_append(NULL, ua) : NULL;
    l = x->ua_body ? curl_slist_append(x->ua_body, "Accept-Encoding:") : NULL;
    l = l ? curl_slist_append(l, "Expect:") : NULL;
    l = l ? curl_slist_append(l, "Content-Type:") : NULL;
    for (int i = 0; l && o->connect_to && o->connect_to[i]; i++) {
        l = curl_slist_append(x->connect_to, o->connect_to[i]);
        if (l) x->connect_to = l;
    }
    if (!l) {
        curl_transfer_free(&x->base);
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* the http module follows, one sample per hop */
    if (x->connect_to) curl_easy_setopt(e, CURLOPT_CONNECT_TO, x->connect_to);
    if (o->multiplex) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (o->tls_min || o->tls_max) curl_easy_setopt(e, CURLOPT_SSLVERSION, ssl_version(o->tls_min, o->tls_max));
    if (o->ciphers) set_ciphers(x, o->ciphers);
    if (o->server_name && !(x->server_name = strdup(o->server_name))) {
        curl_transfer_free(&x->base);
        return NULL;
    }
    set_dns(x, tp->dns, o->local_addr);
    if (o->dial_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->dial_timeout_ms);
    if (o->max_conn_duration_s > 0) curl_easy_setopt(e, CURLOPT_MAXLIFETIME_CONN, o->max_conn_duration_s);
    if (o->insecure_skip_verify) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (o->ca) curl_easy_setopt(e, CURLOPT_CAINFO, o->ca);
    if (o->certificate) curl_easy_setopt(e, CURLOPT_SSLCERT, o->certificate);
    if (o->private_key) curl_easy_setopt(e, CURLOPT_SSLKEY, o->private_key);
    x->version_default = o->http_version;
    x->no_reuse = o->disable_keep_alive;
    x->discard = o->discard_bodies;
    x->timeout_default = o->timeout_ms;
    x->limit_default = o->max_response_body > 0 ? o->max_response_body : LL_MAX_RESPONSE_BODY_DEFAULT;
    return &x->base;
}

/* Appends line to x->hlist; -1 when out of memory. */
static int add_line(curl_transfer *x, const char *line) {
    struct curl_slist *l = curl_slist_append(x->hlist, line);
    if (!l) return -1;
    x->hlist = l;
    return 0;
}

/* Appends "name: value" (value2 after "; " when given) to x->hlist;
 * "Name;" sends an empty value, which "Name:" would remove. -1 when out of
 * memory. */
static int add_header(curl_transfer *x, const char *name, const char *value, const char *value2) {
    char line[1024];
    size_t nl = strlen(name), vl = strlen(value), v2 = value2 ? strlen(value2) : 0, n = nl + vl + v2 + 5;
    char *s = n <= sizeof(line) ? line : malloc(n);
    if (!s) return -1;
    if (vl || v2)
        snprintf(s, n, "%s: %s%s%s", name, value, vl && v2 ? "; " : "", v2 ? value2 : "");
    else
        snprintf(s, n, "%s;", name);
    int rc = add_line(x, s);
    if (s != line) free(s);
    return rc;
}

/* The header list to send: the request's, with the client's User-Agent,
 * "Accept-Encoding:" and (with a body) "Expect:" unless the request sets
 * them, and the jar's cookies after the request's own Cookie header; the
 * transfer's prebuilt list of those, when there is nothing else. NULL when
 * out of memory. */
static struct curl_slist *build_headers(curl_transfer *x, const ll_http_req *req, const char *cookie) {
    curl_slist_free_all(x->hlist);
    x->hlist = NULL;
    x->dyn_node = NULL;
    int has_body = req->body.kind != LL_BODY_NONE, form = req->body.kind == LL_BODY_FORM;
    if (req->nheaders == 0 && !cookie && !x->server_name && !form) return has_body ? x->ua_body : x->ua;
    int has_ua = 0, has_expect = 0, has_ae = 0, has_cookie = 0, has_host = 0, has_type = 0;
    for (int i = 0; i < req->nheaders; i++) {
        const ll_header *h = &req->headers[i];
        has_host |= strcasecmp(h->name, "Host") == 0;
        has_type |= strcasecmp(h->name, "Content-Type") == 0;
        has_ua |= strcasecmp(h->name, "User-Agent") == 0;
        has_expect |= strcasecmp(h->name, "Expect") == 0;
        has_ae |= strcasecmp(h->name, "Accept-Encoding") == 0;
        int is_cookie = strcasecmp(h->name, "Cookie") == 0;
        if (add_header(x, h->name, h->value, is_cookie && !has_cookie ? cookie : NULL) < 0) return NULL;
        has_cookie |= is_cookie;
    }
    if (cookie && !has_cookie && add_header(x, "Cookie", cookie, NULL) < 0) return NULL;
    if (!has_ua && add_line(x, x->ua->data) < 0) return NULL;
    if (!has_expect && has_body && add_line(x, "Expect:") < 0) return NULL;
    /* a form's multipart type is libcurl's to set, with its boundary */
    if (!has_type && has_body && !form && add_line(x, "Content-Type:") < 0) return NULL;
    if (!has_ae && add_line(x, "Accept-Encoding:") < 0) return NULL;
    if (x->server_name && !has_host && add_line(x, x->sni_host) < 0) return NULL;
    /* the request's headers are the list's first lines, in order */
    x->dyn_node = NULL;
    if (req->dyn_header >= 0 && req->dyn_header < req->nheaders) {
        x->dyn_node = x->hlist;
        for (int i = 0; i < req->dyn_header && x->dyn_node; i++) x->dyn_node = x->dyn_node->next;
        x->dyn_gen = req->dyn_gen;
    }
    return x->hlist;
}

/* The request's dyn_header changed since it was applied: its line alone
 * is written again (libcurl reads the list at each transfer). -1 when out
 * of memory. */
static int update_dyn_header(curl_transfer *x, const ll_http_req *req) {
    const ll_header *h = &req->headers[req->dyn_header];
    size_t n = strlen(h->name) + strlen(h->value) + 3;
    char *line = malloc(n);
    if (!line) return -1;
    snprintf(line, n, "%s: %s", h->name, h->value);
    free(x->dyn_node->data); /* curl_slist_append's strdup: the same allocator */
    x->dyn_node->data = line;
    x->dyn_gen = req->dyn_gen;
    return 0;
}

/* CURLOPT_HTTP_VERSION of an LL_HTTP_* version */
static long curl_version_of(int v) {
    return v == LL_HTTP_1_1 ? CURL_HTTP_VERSION_1_1
         : v == LL_HTTP_2 ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE /* h2c on http://, ALPN h2 on https:// */
         : v == LL_HTTP_3 ? CURL_HTTP_VERSION_3ONLY
         : CURL_HTTP_VERSION_2TLS;
}

/* tls.server_name: the request goes to server_name (the TLS name, SNI and
 * the certificate's) while libcurl connects to the URL's host and port
 * (CONNECT_TO) and the Host header keeps the URL's. -1: out of memory or
 * a URL libcurl cannot take apart. */
static int route_server_name(curl_transfer *x, const char *url) {
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) goto done;
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) goto done;
    if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) goto done;
    char *explicit_port = NULL;
    int has_port = curl_url_get(u, CURLUPART_PORT, &explicit_port, 0) == CURLUE_OK;
    curl_free(explicit_port);
    if (curl_url_set(u, CURLUPART_HOST, x->server_name, 0) != CURLUE_OK) goto done;
    curl_free(x->sni_url);
    x->sni_url = NULL;
    if (curl_url_get(u, CURLUPART_URL, &x->sni_url, 0) != CURLUE_OK) goto done;
    char line[600];
    snprintf(line, sizeof(line), "Host: %s%s%s", host, has_port ? ":" : "", has_port ? port : "");
    free(x->sni_host);
    if (!(x->sni_host = strdup(line))) goto done;
    snprintf(line, sizeof(line), "%s:%s:%s:%s", x->server_name, port, host, port);
    curl_slist_free_all(x->sni_route);
    x->sni_route = curl_slist_append(NULL, line);
    for (struct curl_slist *c = x->connect_to; x->sni_route && c; c = c->next)
        if (!curl_slist_append(x->sni_route, c->data)) goto done;
    if (x->sni_route) rc = 0;
done:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

/* Applies the options of req and the jar's cookie to the easy handle (only
 * when they changed). */
static int apply_request(curl_transfer *x, const ll_http_req *req, const char *m, const char *cookie) {
    CURL *e = x->easy;
    if (x->server_name && route_server_name(x, req->url) < 0) return -1;
    int head = strcmp(m, "HEAD") == 0, post = strcmp(m, "POST") == 0;
    int has_body = req->body.kind != LL_BODY_NONE;
    int plain_get = strcmp(m, "GET") == 0 && !has_body;
    int chunked = 0; /* the script's Transfer-Encoding: chunked */
    for (int i = 0; i < req->nheaders; i++)
        chunked |= strcasecmp(req->headers[i].name, "Transfer-Encoding") == 0 && strcasestr(req->headers[i].value, "chunked");
    struct curl_slist *headers = build_headers(x, req, cookie);
    if (!headers) return -1;
    free(x->cookie_applied);
    x->cookie_applied = cookie ? strdup(cookie) : NULL;
    if (cookie && !x->cookie_applied) return -1;
    curl_easy_setopt(e, CURLOPT_URL, x->server_name ? x->sni_url : req->url);
    if (x->server_name) curl_easy_setopt(e, CURLOPT_CONNECT_TO, x->sni_route);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    /* params.auth = "ntlm": libcurl holds the handshake on the connection
     * (Basic and Digest are headers and hops of the http module) */
    int ntlm = req->auth == LL_AUTH_NTLM && req->user;
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, ntlm ? CURLAUTH_NTLM : CURLAUTH_BASIC);
    curl_easy_setopt(e, CURLOPT_USERNAME, ntlm ? req->user : NULL);
    curl_easy_setopt(e, CURLOPT_PASSWORD, ntlm ? req->password : NULL);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L); /* resets body and NOBODY */
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    x->streamed = 0;
    if (x->mime && req->body.kind != LL_BODY_FORM) mime_drop(x);
    if (head) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if ((req->body.kind == LL_BODY_MEMORY && !chunked) || (post && !has_body)) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body.len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body.mem ? req->body.mem : "");
    } else if (req->body.kind == LL_BODY_FORM) {
        if (mime_build(x, req->body.form) < 0) return -1;
    } else if (has_body) { /* a file region or a generator (or chunked): streamed */
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, NULL);
        /* without a size libcurl sends the body chunked over HTTP/1.1 */
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, chunked ? (curl_off_t)-1 : (curl_off_t)req->body.len);
        x->streamed = 1;
    }
    /* any other method, and a GET that carries a body */
    if (!head && !post && !plain_get) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    long t = req->timeout_ms > 0 ? req->timeout_ms : x->timeout_default;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t > 0 ? t : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, req->disable_keep_alive || x->no_reuse ? 1L : 0L);
    int v = req->http_version >= 0 ? req->http_version : x->version_default;
    if (v != x->version_applied) curl_easy_setopt(e, CURLOPT_HTTP_VERSION, curl_version_of(v));
    x->version_applied = v;
    /* a body is kept up to its limit; libcurl fails one whose length is
     * known to be over it before reading it */
    int none = req->response_type == LL_RESPONSE_NONE || (req->response_type == LL_RESPONSE_DEFAULT && x->discard);
    x->body_limit = none ? 0
                  : req->max_response_body > 0 ? req->max_response_body : x->limit_default;
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->body_limit);
    x->req_id = req->id;
    x->applied_method = m;
    return 0;
}

/* 1 when the jar's cookie differs from the one in the header list */
static int curl_transfer_start(ll_transfer *base, const ll_http_req *req, const char *method, const char *cookie,
                               ll_transfer_done_fn *fn, void *ud, const char **err) {
    curl_transfer *x = (curl_transfer *)base;
    int changed = ll_transfer_begin(x->active, x->req_id, x->applied_method, x->cookie_applied, req, method, cookie, err);
    if (changed < 0) return -1;
    if (changed && apply_request(x, req, method, cookie) < 0) {
        x->req_id = 0;
        *err = "out of memory building the request headers";
        return -1;
    }
    if (!changed && x->dyn_node && x->dyn_gen != req->dyn_gen && update_dyn_header(x, req) < 0) {
        x->req_id = 0;
        *err = "out of memory building the request headers";
        return -1;
    }
    x->base.req = req;
    x->base.method = method;
    x->fn = fn;
    x->ud = ud;
    x->body.len = 0;
    x->hdrs.len = 0;
    x->body_bytes = 0;
    x->header_bytes = 0;
    x->body_pos = 0;
    for (int i = 0; x->mime && i < x->ncursors; i++) x->cursors[i].pos = 0;
    x->errbuf[0] = 0;
    x->t_pre = x->t_first = x->t_last = 0;
    x->attempts = 0;
    x->too_big = 0;
    x->head_open = 0;
    x->tls_version = x->tls_cipher = "";
    x->t_start = ll_loop_now_ns();
    CURLMcode mc = curl_multi_add_handle(x->mc->multi, x->easy);
    if (mc != CURLM_OK) {
        *err = curl_multi_strerror(mc);
        return -1;
    }
    x->active = 1;
    return 0;
}

static int curl_supports(int v) {
    const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);
    if (v == LL_HTTP_3) return (d->features & CURL_VERSION_HTTP3) != 0;
    if (v == LL_HTTP_2) return (d->features & CURL_VERSION_HTTP2) != 0;
    return 1;
}

const ll_transport_ops ll_transport_curl = {
    .name = "curl",
    .slot = 1,
    .transport_new = curl_transport_new,
    .transport_free = curl_transport_free,
    .transfer_new = curl_transfer_new,
    .transfer_free = curl_transfer_free,
    .start = curl_transfer_start,
    .cancel = curl_transfer_cancel,
    .release = curl_transfer_release,
    .supports = curl_supports,
};
