/* executor.h -- one scenario's share of VUs and iterations in one worker:
 * k6's six executors on the worker's event loop (executor.c). */
#ifndef LL_EXECUTOR_H
#define LL_EXECUTOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "scenario.h"
#include "vu.h"

struct ll_executor {
    const ll_scenario *sc;
    int index;                  /* of the scenario */
    ll_worker *w;
    int nw;                     /* workers taking part (<= its VUs) */
    int exec_ref;               /* its function in this state */
    int env_ref;                /* its __ENV */
    ll_vu *vus;                 /* cap slots, nvus made */
    int nvus, cap;
    int64_t iters_left;         /* shared-iterations: this worker's pool */
    uint64_t start_ns, end_ns, hard_end_ns;
    int phase;                  /* LL_EXECUTOR_* */
    int alive;                  /* closed models: VUs that go on */
    int running;                /* VUs inside an iteration */
    ll_timer timer;             /* start, ramp ticks, arrivals */
    ll_vu **idle;               /* arrival rates: free VUs */
    int nidle;
    int64_t k_next;             /* arrival rates: next due iteration */
    _Atomic int64_t done_iters; /* for the progress line */
    _Atomic int active_vus;     /* k6's active VUs: the vus gauge, the progress line */
    _Atomic int busy_iters;     /* iterations running: those interrupted at a cut */
    _Atomic int made_vus;       /* for vus_max */
};

enum { LL_EXECUTOR_WAITING, LL_EXECUTOR_RUNNING, LL_EXECUTOR_STOPPING, LL_EXECUTOR_DONE };

/* Prepares scenario index's share in w. Returns 0, or an exit code with a
 * one-line message in err. */
int ll_executor_init(ll_executor *s, ll_worker *w, int index, char *err, size_t errlen);
void ll_executor_free(ll_executor *s);
void ll_executor_begin(ll_executor *s); /* arms its start timer */
/* After each loop turn: ends the scenario at its duration, on a stop. */
void ll_executor_tick(ll_executor *s, uint64_t now, int stop_now, int graceful);

#endif
