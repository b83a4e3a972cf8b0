/* loop.h -- epoll event loop with a timer heap (like wrk's ae), nothing else.
 *
 * One loop per thread. File descriptors are watched with a callback; timers
 * are caller-owned structs kept in an indexed binary heap, so starting,
 * restarting and stopping a timer is O(log n) and allocates nothing. A
 * timer started with no delay ("next turn") goes on a FIFO list instead:
 * O(1), and no clock read. */
#ifndef LL_LOOP_H
#define LL_LOOP_H

#include <stdint.h>
#include <time.h>

#define LL_READABLE 1
#define LL_WRITABLE 2

typedef struct ll_loop ll_loop;
typedef void ll_fd_fn(ll_loop *loop, int fd, int events, void *ud);
typedef void ll_timer_fn(ll_loop *loop, void *ud);

typedef struct ll_timer {
    uint64_t deadline_ns; /* absolute, CLOCK_MONOTONIC; on the next-turn
                           * list: when it was queued (a count of runs) */
    ll_timer_fn *fn;
    void *ud;
    int heap_index;       /* -1 when not armed, LL_TIMER_SOON on the list */
    struct ll_timer *soon_prev, *soon_next;
} ll_timer;

#define LL_TIMER_SOON (-2)

ll_loop *ll_loop_new(void);
void ll_loop_free(ll_loop *loop);

/* Watch fd for events (LL_READABLE|LL_WRITABLE); calling again changes the
 * events and callback (no system call when the events stay the same).
 * events == 0 stops watching. Returns 0 or -1 (errno). */
int ll_loop_watch(ll_loop *loop, int fd, int events, ll_fd_fn *fn, void *ud);
/* Forgets fd without a system call: for a descriptor about to be closed
 * (closing removes it from epoll). */
void ll_loop_forget(ll_loop *loop, int fd);

void ll_loop_timer_init(ll_timer *t, ll_timer_fn *fn, void *ud);
/* Arm (or re-arm) t to fire after after_us microseconds (0: at the next
 * turn, after its events, in the order started). */
void ll_loop_timer_start(ll_loop *loop, ll_timer *t, uint64_t after_us);
/* Arm (or re-arm) t to fire at deadline_ns (absolute, ll_loop_now_ns). */
void ll_loop_timer_at(ll_loop *loop, ll_timer *t, uint64_t deadline_ns);
void ll_loop_timer_stop(ll_loop *loop, ll_timer *t);
/* 1 when t is armed (on the heap or for the next turn). */
int ll_loop_timer_armed(const ll_timer *t);

/* One turn: wait for events at most max_wait_ms (or until the next timer;
 * not at all with next-turn timers queued), dispatch them, run the
 * next-turn timers queued so far (those queued by them wait for the next
 * turn), then fire due timers. Returns the number of callbacks run. */
int ll_loop_turn(ll_loop *loop, int max_wait_ms);

/* Monotonic clock, nanoseconds; ll_loop_now() is the time cached at the
 * start of the current turn (cheap). */
uint64_t ll_loop_now_ns(void);
uint64_t ll_loop_now(ll_loop *loop);
/* The time the loop has spent waiting for events (in epoll_wait), in all
 * its turns: the rest of the wall time it ran its callbacks, busy. */
uint64_t ll_loop_idle_ns(const ll_loop *loop);
/* The time ns from now on clock (CLOCK_REALTIME, CLOCK_MONOTONIC), as the
 * absolute deadline pthread_cond_timedwait takes. */
struct timespec ll_loop_deadline(clockid_t clock, uint64_t ns);

#endif
