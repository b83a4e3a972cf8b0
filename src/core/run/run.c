/* run.c -- the run's stop flags (see run.h). */
#include "run.h"

#include <stdio.h>

void ll_run_abort(ll_run *run, const char *reason) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&run->aborted, &expected, 1))
        snprintf(run->abort_reason, sizeof(run->abort_reason), "%s", reason && *reason ? reason : "(no reason)");
}

int ll_run_stopped(ll_run *run) {
    return atomic_load_explicit(&run->interrupt, memory_order_relaxed) ||
           atomic_load_explicit(&run->aborted, memory_order_relaxed) ||
           atomic_load_explicit(&run->threshold_abort, memory_order_relaxed);
}
