/* listener.c -- `luaload serve`'s listening sockets and worker loops.
 *
 * Owns: the port probe (a plain bind that fails when anything owns the
 * port), one SO_REUSEPORT listener per worker thread (the kernel spreads
 * connections), each worker's event loop (loop.h) and the flag that stops
 * them, and accepting, with a short accept pause when out of descriptors or
 * memory. Accepted sockets go to conn.c. */
#include "serve_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_US 100000

static atomic_int stop_requested;

/* ---- accept ---- */

static void on_accept(ll_loop *loop, int lfd, int events, void *ud);

static void on_accept_resume(ll_loop *loop, void *ud) {
    worker *w = ud;
    if (ll_loop_watch(loop, w->lfd, LL_READABLE, on_accept, w) < 0)
        ll_loop_timer_start(loop, &w->accept_timer, ACCEPT_PAUSE_US);
}

/* Out of descriptors or memory: stop accepting for a moment instead of
 * spinning on a listener that stays readable. */
static void accept_pause(worker *w, int err) {
    if (!w->accept_warned) {
        fprintf(stderr, "luaload serve: accept: %s (pausing accepts; raise ulimit -n?)\n", strerror(err));
        w->accept_warned = 1;
    }
    ll_loop_watch(w->loop, w->lfd, 0, NULL, NULL);
    ll_loop_timer_start(w->loop, &w->accept_timer, ACCEPT_PAUSE_US);
}

static void on_accept(ll_loop *loop, int lfd, int events, void *ud) {
    worker *w = ud;
    (void)loop;
    (void)events;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            ll_conn_open(w, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) accept_pause(w, errno);
        return;
    }
}

/* ---- worker loop ---- */

void ll_listener_set_stop(int stop) { atomic_store(&stop_requested, stop); }

void *ll_listener_run(void *arg) {
    worker *w = arg;
    while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) ll_loop_turn(w->loop, 100);
    return NULL;
}

void ll_listener_free(worker *w) {
    while (w->conns) ll_conn_close(w->conns);
    if (w->lfd >= 0) close(w->lfd);
    ll_loop_free(w->loop);
}

/* ---- listening sockets ---- */

static void set_port_in(struct sockaddr_storage *ss, int port) {
    if (ss->ss_family == AF_INET6) ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

static int port_of(const struct sockaddr_storage *ss) {
    if (ss->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static void listen_error(const serve_cfg *cfg, int port, const char *what) {
    int v6 = cfg->addr.ss_family == AF_INET6;
    fprintf(stderr, "luaload serve: cannot listen on %s%s%s:%d: %s: %s\n", v6 ? "[" : "", cfg->host_text,
            v6 ? "]" : "", port, what, strerror(errno));
}

/* A listener without SO_REUSEPORT: fails when anything (even another
 * SO_REUSEPORT server, which would otherwise silently share) owns the port. */
int ll_listener_probe_port(const serve_cfg *cfg) {
    struct sockaddr_storage ss = cfg->addr;
    int one = 1, rc = -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        listen_error(cfg, cfg->port, "socket");
        return -1;
    }
    set_port_in(&ss, cfg->port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, cfg->addrlen) < 0) listen_error(cfg, cfg->port, "bind");
    else rc = 0;
    close(fd);
    return rc;
}

/* Binds and listens; returns the fd and sets *bound to the real port. */
static int open_listener(const serve_cfg *cfg, int port, int *bound) {
    struct sockaddr_storage ss = cfg->addr;
    socklen_t len = sizeof(ss);
    int one = 1;
    const char *what = "socket";
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    set_port_in(&ss, port);
    what = "setsockopt";
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) goto fail;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) goto fail;
    what = "bind";
    if (bind(fd, (struct sockaddr *)&ss, cfg->addrlen) < 0) goto fail;
    what = "listen";
    if (listen(fd, 65535) < 0) goto fail;
    what = "getsockname";
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) goto fail;
    *bound = port_of(&ss);
    return fd;
fail:
    listen_error(cfg, port, what);
    if (fd >= 0) close(fd);
    return -1;
}

int ll_listener_setup(worker *w, const serve_cfg *cfg, int port, int *bound) {
    w->cfg = cfg;
    ll_loop_timer_init(&w->accept_timer, on_accept_resume, w);
    w->lfd = open_listener(cfg, port, bound);
    if (w->lfd < 0) return -1;
    w->loop = ll_loop_new();
    if (!w->loop || ll_loop_watch(w->loop, w->lfd, LL_READABLE, on_accept, w) < 0) {
        fprintf(stderr, "luaload serve: cannot create an event loop: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}
