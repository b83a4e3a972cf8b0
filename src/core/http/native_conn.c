/* native_conn.c -- the native transport's connections (see native.h): a
 * non-blocking dial to the address resolve.c gives, the TLS handshake
 * with the protocols ALPN offers, then HTTP/1.1 or HTTP/2 as the server
 * chose. A connection keeps the transfers using it in its users list;
 * when it fails, each of them fails with its error. Its events go to the
 * protocol's handler. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "xmalloc.h"

static ll_loop *loop_of(native_conn *c) { return c->g->tp->base.loop; }

static void on_fd(ll_loop *loop, int fd, int events, void *ud);

void native_conn_watch(native_conn *c, int events) {
    if (c->watching == events || c->net.fd < 0) return;
    if (ll_loop_watch(loop_of(c), c->net.fd, events, on_fd, c) == 0) c->watching = events;
}

void native_conn_join(native_conn *c, native_transfer *x) {
    x->conn = c;
    x->next = NULL;
    native_transfer **p = &c->users;
    while (*p) p = &(*p)->next;
    *p = x;
    c->nusers++;
}

void native_conn_leave(native_conn *c, native_transfer *x) {
    for (native_transfer **p = &c->users; *p; p = &(*p)->next) {
        if (*p != x) continue;
        *p = x->next;
        c->nusers--;
        break;
    }
    x->next = NULL;
    x->conn = NULL;
}

int native_conn_idle(const native_conn *c) { return c->st == C_READY && c->nusers == 0; }

int native_conn_has_room(const native_conn *c) {
    if (c->dead) return 0;
    if (c->h2) return ll_h2_can_submit(c->h2, c->nusers, c->g->max_streams);
    if (c->st == C_READY) return c->nusers == 0;
    /* still connecting: a multiplexing group's requests may wait on one
     * that offers h2 (if it turns out HTTP/1.1, they queue again) */
    return c->h2_offer && c->g->max_streams > 1 && c->nusers < c->g->max_streams;
}

static void conn_free(native_conn *c) {
    ll_h2_free(c->h2);
    ll_buf_free(&c->out);
    free(c->host);
    free(c);
}

void native_conn_close(native_conn *c, int code, const char *msg) {
    if (c->dead) return;
    native_group *g = c->g;
    native_group_hold(g); /* its users' completions may free the others */
    c->dead = 1;
    if (g->room == c) g->room = NULL;
    ll_loop_timer_stop(loop_of(c), &c->flush);
    for (int i = 0; i < g->nconns; i++)
        if (g->conns[i] == c) {
            g->conns[i] = g->conns[--g->nconns];
            break;
        }
    if (c->net.fd >= 0) {
        ll_loop_forget(loop_of(c), c->net.fd);
        c->net.ops->close(&c->net);
        c->net.fd = -1;
    }
    char why[320];
    snprintf(why, sizeof(why), "%s", msg ? msg : "the connection closed");
    while (c->users) { /* one at a time: a completion may free others */
        native_transfer *x = c->users;
        native_conn_leave(c, x);
        if (x->st == X_DONE) native_complete(x, x->fail_code, x->errbuf);
        else native_fail(x, code ? code : 1000, why);
    }
    if (!c->busy) conn_free(c);
    if (!g->dying && g->refs > 1) native_group_wake(g); /* a place for a queued request */
    native_group_release(g);
}

/* The protocol is known: HTTP/2 when ALPN chose it (or h2c was asked
 * for), else HTTP/1.1, which takes one user: the others queue again. */
static void ready(native_conn *c) {
    c->st = C_READY;
    int h2 = c->tls ? ll_net_alpn_h2(&c->net) : c->h2_only;
    if (h2 && native_h2_start(c) < 0) return native_conn_close(c, 1000, "out of memory starting HTTP/2");
    native_transfer *first = c->users;
    while (!h2 && first && first->next) { /* HTTP/1.1: one request at a time */
        native_transfer *x = first->next;
        native_conn_leave(c, x);
        x->st = X_QUEUED;
        x->next = NULL;
        if (c->g->queue_tail) c->g->queue_tail->next = x;
        else c->g->queue = x;
        c->g->queue_tail = x;
    }
    if (c->users) { /* the request that dialed has the connection's phases, as in k6 */
        c->users->t_dial = c->t_dial;
        c->users->t_connected = c->t_connected;
        c->users->t_tls = c->t_tls;
    }
    for (native_transfer *x = c->users; x; x = x->next) {
        x->st = X_START; /* from the loop, each at its own turn */
        ll_loop_timer_start(loop_of(c), &x->soon, 0);
    }
    native_conn_watch(c, LL_READABLE);
}

static void handshake(native_conn *c) {
    ll_net_status st = c->net.ops->handshake(&c->net);
    if (st == LL_NET_WANT_READ) return native_conn_watch(c, LL_READABLE);
    if (st == LL_NET_WANT_WRITE) return native_conn_watch(c, LL_WRITABLE);
    if (st == LL_NET_ERROR)
        return native_conn_close(c, c->net.tls_error == LL_TLS_ERR_VERIFY ? 1310 : 1300, c->net.err);
    c->t_tls = ll_loop_now_ns();
    ready(c);
}

static void connected(native_conn *c) {
    if (ll_net_connected(&c->net) < 0) {
        int e = c->net.os_errno;
        char msg[300];
        snprintf(msg, sizeof(msg), "dial tcp %s:%d: %s", c->host, c->port, c->net.err);
        return native_conn_close(c, e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210, msg);
    }
    c->t_connected = ll_loop_now_ns();
    if (!c->tls) return ready(c);
    ll_tls_ctx *ctx = native_pool_tls(c->g->pool);
    if (!ctx) return native_conn_close(c, 1300, c->g->pool->err);
    const char *name = c->users && c->users->server_name ? c->users->server_name : c->host;
    snprintf(c->session_key, sizeof(c->session_key), "%.*s:%d", (int)sizeof(c->session_key) - 8, name, c->port);
    if (ll_net_tls_start(&c->net, ctx, name, c->session_key, c->h2_offer) < 0)
        return native_conn_close(c, 1300, "out of memory starting TLS");
    c->st = C_HANDSHAKE;
    handshake(c);
}

void native_conn_hold(native_conn *c) { c->busy++; }

void native_conn_release(native_conn *c) {
    if (--c->busy == 0 && c->dead) conn_free(c);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    (void)fd;
    native_conn *c = ud;
    native_conn_hold(c);
    if (c->st == C_CONNECTING) connected(c);
    else if (c->st == C_HANDSHAKE) handshake(c);
    else if (c->h2) native_h2_event(c, events);
    else if (c->users) native_h1_event(c->users, events);
    else native_h1_idle_event(c);
    native_conn_release(c);
}

int native_conn_open(native_group *g, native_transfer *x, uint64_t now) {
    ll_addr a;
    const char *err = NULL;
    if (ll_resolve(g->tp->dns, x->connect_to, x->url.host, x->url.port, now / 1000000000ull, &a, &err) < 0) {
        snprintf(x->errbuf, sizeof(x->errbuf), "lookup %s: %s", x->url.host, err);
        x->fail_code = 1100;
        return -1;
    }
    native_conn *c = ll_xcalloc(1, sizeof(*c));
    c->g = g;
    ll_loop_timer_init(&c->flush, NULL, c); /* native_h2_start names its function */
    c->t_dial = ll_loop_now_ns();
    if (ll_net_open(&c->net, (struct sockaddr *)&a.ss, a.len) < 0) {
        int e = c->net.os_errno;
        snprintf(x->errbuf, sizeof(x->errbuf), "dial tcp %s:%d: %s", x->url.host, x->url.port, c->net.err);
        x->fail_code = e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210;
        free(c);
        return -1;
    }
    c->host = ll_xstrdup(x->url.host);
    c->port = x->url.port;
    c->tls = strcmp(x->url.scheme, "https") == 0;
    c->h2_only = x->version == LL_HTTP_2;
    c->h2_offer = x->version == LL_HTTP_2 || (x->version == LL_HTTP_DEFAULT && c->tls);
    c->born_ns = now;
    c->st = C_CONNECTING;
    if (g->nconns == g->cap_conns) {
        g->cap_conns = g->cap_conns ? 2 * g->cap_conns : 4;
        g->conns = ll_xrealloc(g->conns, (size_t)g->cap_conns * sizeof(*g->conns));
    }
    g->conns[g->nconns++] = c;
    native_conn_join(c, x);
    x->st = X_WAIT;
    native_conn_watch(c, LL_WRITABLE);
    return 0;
}
