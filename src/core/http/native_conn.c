/* native_conn.c -- the native transport's connections (see native.h): the
 * lookup of the host's addresses (resolve.c, waited for on the loop),
 * non-blocking connects to them in turn (Happy Eyeballs), the TLS
 * handshake with the protocols ALPN offers, then HTTP/1.1 or HTTP/2 as the
 * server chose; or, for HTTP/3, a UDP socket and QUIC's handshake
 * (native_h3.c). A connection keeps the transfers using it in its users list;
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

int native_conn_startable(const native_conn *c) {
    return c->st == C_READY || (c->h3 && c->st == C_HANDSHAKE && ll_h3_ready(c->h3));
}

int native_conn_has_room(const native_conn *c) {
    if (c->dead || c->stale) return 0;
    if (c->h2) return ll_h2_can_submit(c->h2, c->nusers, c->g->max_streams);
    if (c->h3 && native_conn_startable(c)) return ll_h3_can_submit(c->h3, c->nusers, c->g->max_streams);
    if (c->st == C_READY) return c->nusers == 0;
    /* still connecting: a multiplexing group's requests may wait on one
     * that offers h2 (if it turns out HTTP/1.1, they queue again) */
    return (c->h2_offer || c->h3_only) && c->g->max_streams > 1 && c->nusers < c->g->max_streams;
}

static void conn_free(native_conn *c) {
    free(c->tries);
    free(c->addrs);
    ll_h2_free(c->h2);
    ll_h3_free(c->h3);
    ll_buf_free(&c->out);
    free(c->host);
    free(c);
}

/* What connecting needed goes: the lookup waited for, the other connects
 * in flight, the addresses. */
static void dial_done(native_conn *c) {
    ll_loop *loop = loop_of(c);
    ll_resolve_cancel(&c->wait);
    ll_loop_timer_stop(loop, &c->stagger);
    for (int i = 0; c->tries && i < c->naddrs; i++) {
        if (c->tries[i].fd < 0) continue;
        ll_loop_forget(loop, c->tries[i].fd);
        c->tries[i].ops->close(&c->tries[i]);
    }
    free(c->tries);
    free(c->addrs);
    c->tries = NULL;
    c->addrs = NULL;
    c->naddrs = c->next_addr = 0;
}

void native_conn_close(native_conn *c, int code, const char *msg) {
    if (c->dead) return;
    native_group *g = c->g;
    native_group_hold(g); /* its users' completions may free the others */
    c->dead = 1;
    if (g->room == c) g->room = NULL;
    dial_done(c);
    ll_loop_timer_stop(loop_of(c), &c->flush);
    for (int i = 0; i < g->nconns; i++)
        if (g->conns[i] == c) {
            g->conns[i] = g->conns[--g->nconns];
            break;
        }
    if (c->h3) native_h3_goodbye(c);
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

/* The protocol is known: HTTP/3 on QUIC, HTTP/2 when ALPN chose it (or
 * h2c was asked for), else HTTP/1.1, which takes one user: the others
 * queue again. */
void native_conn_ready(native_conn *c) {
    c->st = C_READY;
    int h2 = !c->h3 && (c->tls ? ll_net_alpn_h2(&c->net) : c->h2_only);
    if (h2 && native_h2_start(c) < 0) return native_conn_close(c, 1000, "out of memory starting HTTP/2");
    native_transfer *first = c->users;
    while (!h2 && !c->h3 && first && first->next) { /* HTTP/1.1: one request at a time */
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
        if (x->st != X_WAIT) continue; /* begun in HTTP/3's 0-RTT */
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
    native_conn_ready(c);
}

/* The TCP connection is up (c->net): TLS next, or ready. */
static void connected(native_conn *c) {
    c->t_connected = ll_loop_now_ns();
    if (!c->tls) return native_conn_ready(c);
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

/* the flush timer: what a multiplexed connection's streams queued in a
 * turn goes out together at the next */
static void on_flush(ll_loop *loop, void *ud) {
    (void)loop;
    native_conn *c = ud;
    native_conn_hold(c);
    if (!c->dead && c->h2) native_h2_flush(c);
    else if (!c->dead && c->h3) native_h3_flush(c);
    native_conn_release(c);
}

void native_conn_release(native_conn *c) {
    if (--c->busy == 0 && c->dead) conn_free(c);
}

/* ---- dialing: the addresses in turn, staggered (Happy Eyeballs, RFC
 * 8305): the next connect starts when one fails, or when none succeeded
 * within NATIVE_ATTEMPT_DELAY_US; the first up wins, the others close ---- */

static void on_fd(ll_loop *loop, int fd, int events, void *ud);

static int in_flight(const native_conn *c) {
    int n = 0;
    for (int i = 0; i < c->naddrs; i++) n += c->tries[i].fd >= 0;
    return n;
}

static void note_failure(native_conn *c, int e, const char *msg) {
    c->fail_errno = e;
    snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", msg);
}

/* Starts a connect to the next address (one that fails at once moves on).
 * 1: one started; 0: no address left. */
static int dial_next(native_conn *c) {
    ll_loop *loop = loop_of(c);
    while (c->next_addr < c->naddrs) {
        int i = c->next_addr++;
        const ll_addr *a = &c->addrs[i];
        ll_net_conn *t = &c->tries[i];
        if (c->local.len && a->ss.ss_family != c->local.ss.ss_family) {
            note_failure(c, EAFNOSUPPORT, "no address of the IP version of the local address");
            continue;
        }
        const struct sockaddr *local = c->local.len ? (const struct sockaddr *)&c->local.ss : NULL;
        if (ll_net_open(t, (const struct sockaddr *)&a->ss, a->len, local, c->local.len) < 0) {
            note_failure(c, t->os_errno, t->err);
            continue;
        }
        ll_loop_watch(loop, t->fd, LL_WRITABLE, on_fd, c);
        if (c->next_addr < c->naddrs) ll_loop_timer_start(loop, &c->stagger, NATIVE_ATTEMPT_DELAY_US);
        return 1;
    }
    return 0;
}

/* the code and message of a dial that failed (c->fail_errno, c->fail_msg):
 * a TLS context of HTTP/3's that could not be made has errno 0 */
static int dial_error(const native_conn *c, char *msg, size_t len) {
    int e = c->fail_errno;
    if (c->h3_only && !e) {
        snprintf(msg, len, "%s", c->fail_msg);
        return 1300;
    }
    snprintf(msg, len, "dial %s %s:%d: %s", c->h3_only ? "udp" : "tcp", c->host, c->alt_port ? c->alt_port : c->port,
             c->fail_msg);
    return e == ECONNREFUSED ? 1212 : e == ETIMEDOUT ? 1211 : 1210;
}

static void dial_failed(native_conn *c) {
    char msg[300];
    int code = dial_error(c, msg, sizeof(msg));
    native_conn_close(c, code, msg);
}

/* Starts connecting to addrs (c owns them). 0, or -1 when no connect
 * could start (c->fail_errno, c->fail_msg). */
static int dial(native_conn *c, ll_addr *addrs, int n) {
    c->addrs = addrs;
    c->naddrs = n;
    c->next_addr = 0;
    if (c->h3_only) { /* UDP: the first address a socket connects to */
        c->t_dial = ll_loop_now_ns();
        if (native_h3_dial(c) < 0) return -1;
        dial_done(c);
        return 0;
    }
    c->tries = ll_xmalloc((size_t)n * sizeof(*c->tries));
    for (int i = 0; i < n; i++) c->tries[i].fd = -1;
    c->st = C_CONNECTING;
    c->t_dial = ll_loop_now_ns();
    return dial_next(c) ? 0 : -1;
}

static void on_stagger(ll_loop *loop, void *ud) {
    (void)loop;
    native_conn *c = ud;
    if (c->st == C_CONNECTING && !dial_next(c) && !in_flight(c)) dial_failed(c);
}

/* A connect in flight on fd became writable: up, or failed. */
static void dial_event(native_conn *c, int fd) {
    ll_net_conn *t = NULL;
    for (int i = 0; i < c->naddrs && !t; i++)
        if (c->tries[i].fd == fd) t = &c->tries[i];
    if (!t) return;
    if (ll_net_connected(t) < 0) {
        note_failure(c, t->os_errno, t->err);
        ll_loop_forget(loop_of(c), fd);
        t->ops->close(t);
        if (dial_next(c) || in_flight(c)) return; /* a failure starts the next one at once */
        return dial_failed(c);
    }
    c->net = *t; /* the winner (registered for writing, on on_fd) */
    t->fd = -1;
    c->watching = LL_WRITABLE;
    dial_done(c);
    connected(c);
}

/* The lookup c waited for is over. */
static void on_resolved(void *ud, ll_addr *addrs, int n, int code, const char *err) {
    native_conn *c = ud;
    if (!addrs) {
        char msg[300];
        snprintf(msg, sizeof(msg), "lookup %s: %s", c->host, err);
        return native_conn_close(c, code, msg);
    }
    if (dial(c, addrs, n) < 0) dial_failed(c);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    native_conn *c = ud;
    native_conn_hold(c);
    if (c->h3) native_h3_event(c, events);
    else if (c->st == C_CONNECTING) dial_event(c, fd);
    else if (c->st == C_HANDSHAKE) handshake(c);
    else if (c->h2) native_h2_event(c, events);
    else if (c->users) native_h1_event(c->users, events);
    else native_h1_idle_event(c);
    native_conn_release(c);
}

int native_conn_open(native_group *g, native_transfer *x, uint64_t now) {
    native_conn *c = ll_xcalloc(1, sizeof(*c));
    c->g = g;
    c->net.fd = -1;
    ll_loop_timer_init(&c->flush, on_flush, c);
    ll_loop_timer_init(&c->stagger, on_stagger, c);
    c->local = x->local;
    c->host = ll_xstrdup(x->url.host);
    c->port = x->url.port;
    c->tls = strcmp(x->url.scheme, "https") == 0;
    c->h2_only = x->version == LL_HTTP_2;
    c->h3_only = x->version == LL_HTTP_3;
    c->alt_port = x->alt_port;
    c->h2_offer = x->version == LL_HTTP_2 || (x->version == LL_HTTP_DEFAULT && c->tls);
    c->born_ns = now;
    ll_addr *addrs = NULL;
    int n = 0, code = 0;
    const char *err = NULL;
    const char *host = x->alt_host[0] ? x->alt_host : x->url.host; /* an Alt-Svc alternative's */
    int rc = ll_resolve(g->tp->dns, x->connect_to, host, x->alt_port ? x->alt_port : x->url.port, &c->wait, on_resolved,
                        c, &addrs, &n, &code, &err);
    if (rc < 0) {
        snprintf(x->errbuf, sizeof(x->errbuf), "lookup %s: %s", host, err);
        x->fail_code = code;
        conn_free(c);
        return -1;
    }
    native_conn_join(c, x); /* before its dial, which reads x's options (HTTP/3's SNI and qlog) */
    if (rc == 0 && dial(c, addrs, n) < 0) {
        native_conn_leave(c, x);
        x->fail_code = dial_error(c, x->errbuf, sizeof(x->errbuf));
        dial_done(c);
        conn_free(c);
        return -1;
    }
    if (rc == 1) c->st = C_RESOLVING;
    if (g->nconns == g->cap_conns) {
        g->cap_conns = g->cap_conns ? 2 * g->cap_conns : 4;
        g->conns = ll_xrealloc(g->conns, (size_t)g->cap_conns * sizeof(*g->conns));
    }
    g->conns[g->nconns++] = c;
    x->st = X_WAIT;
    if (native_conn_startable(c)) { /* HTTP/3 with 0-RTT: at once */
        x->st = X_START;
        ll_loop_timer_start(loop_of(c), &x->soon, 0);
    }
    return 0;
}
