/* lifecycle.c -- a lifecycle step on a thread of its own (see lifecycle.h).
 *
 * The calling thread waits in steps of 50 ms. Once the step is due it gets
 * LL_LIFECYCLE_STOP_AFTER_NS to stop by itself (ll_worker_call interrupts a
 * call that yields), then its Lua code is asked to stop with a hook; a
 * loop that LuaJIT compiled runs no hooks, so after
 * LL_LIFECYCLE_GIVE_UP_AFTER_NS the step is given up on: its thread is
 * detached and keeps its memory, and the engine goes on without it. */
#include "lifecycle.h"

#include <stdlib.h>
#include <time.h>

#include "crash.h"
#include "cstack.h"
#include "loop.h"
#include "script.h"
#include "xmalloc.h"

typedef struct step {
    ll_worker *w;
    ll_lifecycle_fn *fn;
    void *arg;
    int rc, done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} step;

static void *step_main(void *p) {
    step *s = p;
    ll_crash_enter(s->w);
    int rc = s->fn(s->arg);
    ll_crash_leave();
    pthread_mutex_lock(&s->mu);
    s->rc = rc;
    s->done = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

uint64_t ll_lifecycle_due(ll_run *run, uint64_t due_ns, uint64_t signal_ns) {
    if (!atomic_load(&run->interrupt)) return due_ns;
    uint64_t by_signal = atomic_load(&run->interrupt_ns) + signal_ns;
    return due_ns && due_ns < by_signal ? due_ns : by_signal;
}

int ll_lifecycle_run(ll_run *run, ll_worker *w, ll_lifecycle_fn *fn, void *arg, uint64_t deadline_ns,
                     uint64_t signal_ns, int *rc) {
    step *s = ll_xcalloc(1, sizeof(*s));
    s->w = w;
    s->fn = fn;
    s->arg = arg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t t;
    pthread_attr_t a;
    int made = ll_cstack_attr(&a) == 0 && pthread_create(&t, &a, step_main, s) == 0;
    pthread_attr_destroy(&a);
    if (!made) { /* run it here, unguarded */
        *rc = fn(arg);
        goto done;
    }
    int asked = 0;
    pthread_mutex_lock(&s->mu);
    while (!s->done) {
        struct timespec until = ll_loop_deadline(CLOCK_MONOTONIC, 50000000ull);
        pthread_cond_timedwait(&s->cv, &s->mu, &until);
        if (s->done) break;
        if (atomic_load(&w->crashed)) { /* its thread is parked for good (crash.c) */
            pthread_mutex_unlock(&s->mu);
            pthread_detach(t);
            return 0;
        }
        uint64_t due = ll_lifecycle_due(run, deadline_ns, signal_ns), now = ll_loop_now_ns();
        if (!due || now < due + LL_LIFECYCLE_STOP_AFTER_NS) continue;
        if (!asked) {
            w->run->script->stop(w); /* under s->mu: the step has not returned */
            asked = 1;
        }
        if (now >= due + LL_LIFECYCLE_GIVE_UP_AFTER_NS) {
            pthread_mutex_unlock(&s->mu);
            pthread_detach(t);
            return 0; /* s stays: the thread still uses it */
        }
    }
    pthread_mutex_unlock(&s->mu);
    pthread_join(t, NULL);
    *rc = s->rc;
    if (asked) w->run->script->stop_clear(w);
done:
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return 1;
}
