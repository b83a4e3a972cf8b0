/* curl_pool.c -- the libcurl transport's multi handles, each one pool of
 * connections (a client's, for one group of LL_CURL_VUS_PER_MULTI VUs or
 * all of a multiplexing client's), driven by the worker's one epoll loop
 * through socket_action: the sockets libcurl asks to watch (parked in epoll
 * when idle), a timer per multi handle, and the completions read after
 * each call. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "curl_internal.h"
#include "xmalloc.h"

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
        curl_response_fill(x, rc, t_end);
        x->fn(&x->base, &x->res, x->ud);
    }
    mc->draining = 0;
    if (mc->dead) curl_pool_free(mc->tp, mc);
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
int curl_pool_on_close(void *ud, curl_socket_t fd) {
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

void curl_pool_free(curl_transport *tp, multi_ctx *mc) {
    if (!mc) return;
    ll_loop_timer_stop(tp->base.loop, &mc->timer);
    if (mc->multi) curl_multi_cleanup(mc->multi);
    free(mc);
}

/* A transfer lets go of its pool; the last one closes it, and a new
 * transfer of the same pool gets a new one (fresh connections). */
void curl_pool_unref(curl_transport *tp, multi_ctx *mc) {
    if (--mc->refs > 0) return;
    for (int i = 0; i < tp->nmultis; i++) {
        if (tp->multis[i] != mc) continue;
        tp->multis[i] = tp->multis[--tp->nmultis];
        break;
    }
    if (mc->draining) mc->dead = 1; /* drain_done is still reading it */
    else curl_pool_free(tp, mc);
}

/* The pool of (pool, group), made on first use with the client's
 * connection options; a reference for the caller. */
multi_ctx *curl_pool_of(curl_transport *tp, uint64_t pool, int group, const ll_client_opts *o) {
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
