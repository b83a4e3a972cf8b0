/* dns_lookup.c -- c-ares on a worker's loop (see dns_lookup.h): c-ares
 * says which of its sockets to watch (the socket-state callback) and when
 * it next times out (ares_timeout); the loop calls ares_process_fd on
 * their events and at that time. */
#include "dns_lookup.h"

#include <ares.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

struct ll_dns_lookup {
    ll_loop *loop;
    ares_channel channel;
    int ready;                 /* the channel is made */
    int init_status;           /* why it could not be made (ARES_*), 0: not tried or made */
    ll_timer timer;            /* c-ares's next timeout */
};

/* one query in flight */
typedef struct query {
    ll_dns_lookup *d;
    ll_dns_lookup_fn *fn;
    void *ud;
} query;

static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static int library_status;

static void library_init(void) { library_status = ares_library_init(ARES_LIB_INIT_ALL); }

/* Arms the timer for c-ares's next timeout, or stops it with nothing pending. */
static void rearm(ll_dns_lookup *d) {
    struct timeval tv;
    if (!ares_timeout(d->channel, NULL, &tv)) return ll_loop_timer_stop(d->loop, &d->timer);
    ll_loop_timer_start(d->loop, &d->timer, (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec);
}

static void on_timer(ll_loop *loop, void *ud) {
    (void)loop;
    ll_dns_lookup *d = ud;
    ares_process_fd(d->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    rearm(d);
}

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    ll_dns_lookup *d = ud;
    ares_process_fd(d->channel, events & LL_READABLE ? fd : ARES_SOCKET_BAD,
                    events & LL_WRITABLE ? fd : ARES_SOCKET_BAD);
    rearm(d);
}

static void on_sock_state(void *data, ares_socket_t fd, int readable, int writable) {
    ll_dns_lookup *d = data;
    ll_loop_watch(d->loop, fd, (readable ? LL_READABLE : 0) | (writable ? LL_WRITABLE : 0), on_fd, d);
}

static const char *phrase(int status) {
    switch (status) {
    case ARES_ENOTFOUND:
    case ARES_ENODATA:
    case ARES_ENONAME: return "no such host";
    case ARES_ETIMEOUT: return "i/o timeout";
    case ARES_ESERVFAIL:
    case ARES_EFORMERR:
    case ARES_EBADRESP: return "server misbehaving";
    case ARES_EREFUSED: return "query refused";
    case ARES_ECONNREFUSED: return "connection refused";
    case ARES_ENOMEM: return "out of memory";
    default: return ares_strerror(status);
    }
}

static void on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res) {
    (void)timeouts;
    query *q = arg;
    ll_addr *addrs = NULL;
    int n = 0;
    for (struct ares_addrinfo_node *a = res && status == ARES_SUCCESS ? res->nodes : NULL; a; a = a->ai_next) {
        if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) || a->ai_addrlen > sizeof(addrs->ss)) continue;
        addrs = ll_xrealloc(addrs, (size_t)(n + 1) * sizeof(*addrs));
        memset(&addrs[n], 0, sizeof(*addrs));
        memcpy(&addrs[n].ss, a->ai_addr, a->ai_addrlen);
        addrs[n++].len = a->ai_addrlen;
    }
    if (res) ares_freeaddrinfo(res);
    /* the channel going away (ll_dns_lookup_free): nobody is told */
    if (status != ARES_EDESTRUCTION) {
        const char *err = status != ARES_SUCCESS ? phrase(status) : n ? NULL : "no such host";
        q->fn(q->ud, err, err ? NULL : addrs, err ? 0 : n);
        if (err) free(addrs);
    } else {
        free(addrs);
    }
    free(q);
}

ll_dns_lookup *ll_dns_lookup_new(ll_loop *loop) {
    ll_dns_lookup *d = ll_xcalloc(1, sizeof(*d));
    d->loop = loop;
    ll_loop_timer_init(&d->timer, on_timer, d);
    return d;
}

void ll_dns_lookup_free(ll_dns_lookup *d) {
    if (!d) return;
    if (d->ready) ares_destroy(d->channel); /* closes its sockets (unwatched through on_sock_state) */
    ll_loop_timer_stop(d->loop, &d->timer);
    free(d);
}

static int channel(ll_dns_lookup *d) {
    if (d->ready || d->init_status) return d->ready;
    pthread_once(&library_once, library_init);
    struct ares_options o;
    memset(&o, 0, sizeof(o));
    o.sock_state_cb = on_sock_state;
    o.sock_state_cb_data = d;
    d->init_status = library_status ? library_status : ares_init_options(&d->channel, &o, ARES_OPT_SOCK_STATE_CB);
    d->ready = d->init_status == ARES_SUCCESS;
    return d->ready;
}

const char *ll_dns_lookup_version(void) { return ares_version(NULL); }

void ll_dns_lookup_query(ll_dns_lookup *d, const char *host, ll_dns_lookup_fn *fn, void *ud) {
    if (!channel(d)) return fn(ud, phrase(d->init_status), NULL, 0);
    query *q = ll_xmalloc(sizeof(*q));
    q->d = d;
    q->fn = fn;
    q->ud = ud;
    struct ares_addrinfo_hints hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    ares_getaddrinfo(d->channel, host, NULL, &hints, on_answer, q);
    rearm(d);
}
