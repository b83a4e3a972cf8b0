/* engine_teardown.c -- the phase after the scenarios: what the workers
 * recorded summed into one shard (a worker given up on counts with its last
 * snapshot), setup's metrics with it, then teardown() on the lifecycle
 * worker, when setup() ran and nothing stopped the run hard (abort(), a
 * crash, --no-teardown). */
#include <stdio.h>

#include "engine_ctx.h"
#include "progress.h"

/* The workers' shards and setup's, in e->total. */
static void teardown_sum(ll_engine *e) {
    e->total = ll_shard_new(e->run.reg);
    for (int i = 0; e->workers && i < e->nworkers; i++) {
        ll_worker *w = &e->workers[i];
        /* a crashed worker's thread is parked for good, its shard still: all it recorded counts */
        if (w->abandoned && !atomic_load(&w->crashed)) ll_worker_read_published(w, e->total);
        else ll_shard_merge(e->total, w->shard);
    }
    if (!e->life_lost && e->life.shard) { /* setup's metrics and the vus gauges; teardown's come after */
        ll_shard_merge(e->total, e->life.shard);
        ll_shard_reset(e->life.shard);
    } else if (e->life_lost) { /* its shard is still the lost thread's: vus_max, at least, is known */
        ll_progress_sample_max(e->total, &e->cfg->run.scenarios, ll_loop_now_ns());
    }
}

void engine_teardown(ll_engine *e) {
    ll_run *run = &e->run;
    teardown_sum(e);
    if (!e->setup_done || e->life_lost || atomic_load(&run->aborted) || atomic_load(&run->crashed) ||
        e->cfg->dist.no_teardown)
        return;
    ll_api_set_status(e->api, LL_API_STATUS_TEARDOWN);
    int rc = engine_life_call(e, "teardown", run->setup_json, &e->teardown_out, e->cfg->run.teardown_timeout_us,
                              LL_EXIT_TEARDOWN_TIMEOUT, LL_RUN_SIGNAL_TEARDOWN_NS);
    if (e->life_lost && atomic_load(&e->life.crashed))
        rc = LL_EXIT_CRASH; /* described by engine_life_call */
    else if (e->life_lost)
        fprintf(stderr, "luaload: teardown() failed: %s (its Lua code did not stop)\n",
                atomic_load(&run->interrupt) ? "interrupted by a signal" : "timed out");
    else if (rc && !atomic_load(&run->aborted))
        fprintf(stderr, "luaload: teardown() failed: %s\n", e->life.errmsg);
    if (e->life_lost && rc != LL_EXIT_CRASH)
        rc = atomic_load(&run->interrupt) ? LL_EXIT_EXTERNAL_ABORT : LL_EXIT_TEARDOWN_TIMEOUT;
    if (!e->life_lost) ll_shard_merge(e->total, e->life.shard);
    if (!e->rc) e->rc = rc;
}
