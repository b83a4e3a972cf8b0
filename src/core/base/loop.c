/* loop.c -- epoll event loop with an indexed timer heap (see loop.h). */
#include "loop.h"

#include "xmalloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    ll_fd_fn *fn;
    void *ud;
    int events;
} fd_slot;

struct ll_loop {
    int epfd;
    fd_slot *fds;
    int nfds;
    ll_timer **heap;
    int heap_len, heap_cap;
    ll_timer *soon_head, *soon_tail; /* the next-turn timers, oldest first */
    uint64_t soon_runs;              /* run_soon calls begun */
    uint64_t now;
    uint64_t idle_ns;                /* time spent waiting for events */
    struct epoll_event ev[256];
};

uint64_t ll_loop_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timespec ll_loop_deadline(clockid_t clock, uint64_t ns) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    uint64_t sum = (uint64_t)ts.tv_nsec + ns % 1000000000ull;
    ts.tv_sec += (time_t)(ns / 1000000000ull + sum / 1000000000ull);
    ts.tv_nsec = (long)(sum % 1000000000ull);
    return ts;
}

uint64_t ll_loop_now(ll_loop *loop) { return loop->now; }

uint64_t ll_loop_idle_ns(const ll_loop *loop) { return loop->idle_ns; }

ll_loop *ll_loop_new(void) {
    ll_loop *loop = ll_xcalloc(1, sizeof(*loop));
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
    loop->now = ll_loop_now_ns();
    return loop;
}

void ll_loop_free(ll_loop *loop) {
    if (!loop) return;
    close(loop->epfd);
    free(loop->fds);
    free(loop->heap);
    free(loop);
}

int ll_loop_watch(ll_loop *loop, int fd, int events, ll_fd_fn *fn, void *ud) {
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    if (fd >= loop->nfds) {
        int n = loop->nfds ? loop->nfds : 64;
        while (n <= fd) n *= 2;
        fd_slot *fds = ll_xrealloc(loop->fds, (size_t)n * sizeof(*fds));
        memset(fds + loop->nfds, 0, (size_t)(n - loop->nfds) * sizeof(*fds));
        loop->fds = fds;
        loop->nfds = n;
    }
    fd_slot *s = &loop->fds[fd];
    if (events == s->events && events != 0) {
        s->fn = fn;
        s->ud = ud;
        return 0;
    }
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (events & LL_READABLE) ev.events |= EPOLLIN;
    if (events & LL_WRITABLE) ev.events |= EPOLLOUT;
    int op = events == 0 ? EPOLL_CTL_DEL : (s->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD);
    if (op == EPOLL_CTL_DEL && s->events == 0) return 0;
    if (epoll_ctl(loop->epfd, op, fd, &ev) < 0) {
        /* A descriptor closed and reused behind our back: start afresh. */
        if (op == EPOLL_CTL_MOD && errno == ENOENT) op = EPOLL_CTL_ADD;
        else if (op == EPOLL_CTL_ADD && errno == EEXIST) op = EPOLL_CTL_MOD;
        else if (op == EPOLL_CTL_DEL && (errno == ENOENT || errno == EBADF)) op = -1;
        else return -1;
        if (op >= 0 && epoll_ctl(loop->epfd, op, fd, &ev) < 0) return -1;
    }
    s->fn = fn;
    s->ud = ud;
    s->events = events;
    return 0;
}

void ll_loop_forget(ll_loop *loop, int fd) {
    if (fd >= 0 && fd < loop->nfds) memset(&loop->fds[fd], 0, sizeof(loop->fds[fd]));
}

/* ---- timer heap (min-heap on deadline, each timer knows its index) ---- */

static void heap_set(ll_loop *loop, int i, ll_timer *t) {
    loop->heap[i] = t;
    t->heap_index = i;
}

static void heap_up(ll_loop *loop, int i) {
    ll_timer *t = loop->heap[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (loop->heap[p]->deadline_ns <= t->deadline_ns) break;
        heap_set(loop, i, loop->heap[p]);
        i = p;
    }
    heap_set(loop, i, t);
}

static void heap_down(ll_loop *loop, int i) {
    ll_timer *t = loop->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= loop->heap_len) break;
        if (c + 1 < loop->heap_len && loop->heap[c + 1]->deadline_ns < loop->heap[c]->deadline_ns) c++;
        if (loop->heap[c]->deadline_ns >= t->deadline_ns) break;
        heap_set(loop, i, loop->heap[c]);
        i = c;
    }
    heap_set(loop, i, t);
}

void ll_loop_timer_init(ll_timer *t, ll_timer_fn *fn, void *ud) {
    t->deadline_ns = 0;
    t->fn = fn;
    t->ud = ud;
    t->heap_index = -1;
    t->soon_prev = t->soon_next = NULL;
}

int ll_loop_timer_armed(const ll_timer *t) { return t->heap_index != -1; }

/* ---- the next-turn list (doubly linked, so stopping is O(1)) ---- */

static void soon_unlink(ll_loop *loop, ll_timer *t) {
    if (t->soon_prev) t->soon_prev->soon_next = t->soon_next;
    else loop->soon_head = t->soon_next;
    if (t->soon_next) t->soon_next->soon_prev = t->soon_prev;
    else loop->soon_tail = t->soon_prev;
    t->soon_prev = t->soon_next = NULL;
    t->heap_index = -1;
}

static void soon_push(ll_loop *loop, ll_timer *t) {
    t->heap_index = LL_TIMER_SOON;
    t->deadline_ns = loop->soon_runs;
    t->soon_next = NULL;
    t->soon_prev = loop->soon_tail;
    if (loop->soon_tail) loop->soon_tail->soon_next = t;
    else loop->soon_head = t;
    loop->soon_tail = t;
}

/* Runs the timers queued before it began (by the turn's events, or
 * earlier); those they queue wait for the next turn, so a timer that
 * re-queues itself cannot starve the events. */
static int run_soon(ll_loop *loop) {
    int n = 0;
    uint64_t run = ++loop->soon_runs;
    while (loop->soon_head && loop->soon_head->deadline_ns < run) {
        ll_timer *t = loop->soon_head;
        soon_unlink(loop, t);
        t->fn(loop, t->ud);
        n++;
    }
    return n;
}

void ll_loop_timer_stop(ll_loop *loop, ll_timer *t) {
    int i = t->heap_index;
    if (i == LL_TIMER_SOON) return soon_unlink(loop, t);
    if (i < 0) return;
    t->heap_index = -1;
    loop->heap_len--;
    if (i == loop->heap_len) return;
    ll_timer *moved = loop->heap[loop->heap_len];
    heap_set(loop, i, moved);
    heap_up(loop, i);
    heap_down(loop, moved->heap_index);
}

void ll_loop_timer_at(ll_loop *loop, ll_timer *t, uint64_t deadline_ns) {
    ll_loop_timer_stop(loop, t);
    if (loop->heap_len == loop->heap_cap) {
        int cap = loop->heap_cap ? loop->heap_cap * 2 : 64;
        loop->heap = ll_xrealloc(loop->heap, (size_t)cap * sizeof(*loop->heap));
        loop->heap_cap = cap;
    }
    t->deadline_ns = deadline_ns;
    heap_set(loop, loop->heap_len++, t);
    heap_up(loop, t->heap_index);
}

void ll_loop_timer_start(ll_loop *loop, ll_timer *t, uint64_t after_us) {
    if (after_us == 0) {
        ll_loop_timer_stop(loop, t);
        return soon_push(loop, t);
    }
    ll_loop_timer_at(loop, t, ll_loop_now_ns() + after_us * 1000ull);
}

static int fire_timers(ll_loop *loop) {
    int n = 0;
    loop->now = ll_loop_now_ns();
    while (loop->heap_len > 0 && loop->heap[0]->deadline_ns <= loop->now) {
        ll_timer *t = loop->heap[0];
        ll_loop_timer_stop(loop, t);
        t->fn(loop, t->ud);
        n++;
    }
    return n;
}

/* epoll_wait with a nanosecond timeout (epoll_pwait2, Linux 5.11+), so
 * timers such as an arrival-rate schedule fire on time rather than on the
 * next millisecond; falls back to epoll_wait elsewhere. */
static int wait_events(ll_loop *loop, int64_t wait_ns) {
    int max = (int)(sizeof(loop->ev) / sizeof(loop->ev[0]));
    static _Atomic int no_pwait2;
    if (!no_pwait2) {
        struct timespec ts = {wait_ns / 1000000000, wait_ns % 1000000000};
        int n = epoll_pwait2(loop->epfd, loop->ev, max, wait_ns < 0 ? NULL : &ts, NULL);
        if (n >= 0 || errno != ENOSYS) return n;
        no_pwait2 = 1;
    }
    return epoll_wait(loop->epfd, loop->ev, max, wait_ns < 0 ? -1 : (int)((wait_ns + 999999) / 1000000));
}

int ll_loop_turn(ll_loop *loop, int max_wait_ms) {
    int64_t wait = max_wait_ms < 0 ? -1 : (int64_t)max_wait_ms * 1000000;
    loop->now = ll_loop_now_ns();
    if (loop->soon_head) wait = 0;
    else if (loop->heap_len > 0) {
        uint64_t d = loop->heap[0]->deadline_ns;
        int64_t ns = d <= loop->now ? 0 : (int64_t)(d - loop->now);
        if (wait < 0 || ns < wait) wait = ns;
    }
    int n = wait_events(loop, wait);
    loop->idle_ns += ll_loop_now_ns() - loop->now; /* the one clock read a turn adds: its busy share */
    int ran = 0;
    for (int i = 0; i < n; i++) {
        int fd = loop->ev[i].data.fd;
        if (fd >= loop->nfds || !loop->fds[fd].fn || !loop->fds[fd].events) continue;
        uint32_t e = loop->ev[i].events;
        int events = 0;
        if (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) events |= LL_READABLE;
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR)) events |= LL_WRITABLE;
        loop->fds[fd].fn(loop, fd, events, loop->fds[fd].ud);
        ran++;
    }
    ran += run_soon(loop);
    return ran + fire_timers(loop);
}
