/* engine_scenarios.c -- the phase that runs the scenarios: the workers made
 * and started, then watched from the main thread until they are done (every
 * second meanwhile: the vus gauges, the progress lines (progress_lines.c), the thresholds
 * evaluated on the workers' snapshots, the outputs of results.c, quick
 * mode's ticker), stopped when due (signals, abort(), abortOnFail), given up
 * on when their Lua code does not stop, joined; then their script errors
 * and what the iterations cut off at the end were doing. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "duration.h"
#include "engine_ctx.h"
#include "lifecycle.h"
#include "progress.h"
#include "progress_lines.h"
#include "script.h"
#include "xmalloc.h"

/* Prints each distinct script error once with how often it happened, in
 * the order they first appeared, the first ENGINE_SCRIPT_ERRORS_SHOWN of
 * them (workers that were given up on are skipped: they may still write). */
#define ENGINE_SCRIPT_ERRORS_SHOWN 20

static void report_errors(ll_worker *workers, int n) {
    ll_errors all;
    memset(&all, 0, sizeof(all));
    for (int i = 0; i < n; i++)
        if (!workers[i].abandoned) ll_errors_merge(&all, &workers[i].errors);
    int64_t more = all.other;
    for (int e = 0; e < all.n; e++) {
        if (e >= ENGINE_SCRIPT_ERRORS_SHOWN) {
            more += all.items[e].count;
            continue;
        }
        fprintf(stderr, "luaload: script error in %lld iteration%s: %s\n", (long long)all.items[e].count,
                all.items[e].count == 1 ? "" : "s", all.items[e].msg);
    }
    if (more)
        fprintf(stderr, "luaload: script errors with other messages in %lld more iteration%s\n", (long long)more,
                more == 1 ? "" : "s");
    ll_errors_free(&all);
}


/* When the last scenario ends as planned, its gracefulStop included. */
static uint64_t planned_end_ns(const ll_config *cfg, uint64_t t0, uint64_t *max_grace_ns) {
    uint64_t end = 0, grace = 0;
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        const ll_scenario *sc = &cfg->run.scenarios.items[i];
        uint64_t e = ll_scenario_end_us(sc);
        if (e > end) end = e;
        if (sc->graceful_stop_us > grace) grace = sc->graceful_stop_us;
    }
    *max_grace_ns = grace * 1000;
    return t0 + end * 1000;
}

/* When the last scenario's duration is over, before its gracefulStop. */
static uint64_t steady_end_ns(const ll_config *cfg, uint64_t t0) {
    uint64_t end = 0;
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        const ll_scenario *sc = &cfg->run.scenarios.items[i];
        uint64_t e = ll_duration_add(sc->start_time_us, ll_scenario_duration_us(sc));
        if (e > end) end = e;
    }
    return t0 + end * 1000;
}

/* Gives up on the workers whose thread crashed (crash.c), at once: their
 * metrics are those of their last snapshot. */
static void abandon_crashed(ll_run *run, ll_worker *workers, int n) {
    for (int i = 0; i < n; i++) {
        ll_worker *w = &workers[i];
        if (w->finished || w->abandoned || !atomic_load(&w->crashed)) continue;
        w->abandoned = 1;
        run->finished++;
        char why[400];
        fprintf(stderr, "luaload: %s\n", ll_crash_describe(w, why, sizeof(why)));
    }
}

/* Gives up on the workers that did not stop by their due time: their Lua
 * code never yields (or, not in Lua, the worker is stuck elsewhere). Their
 * metrics are those of their last snapshot. */
static void abandon_stuck(ll_run *run, ll_worker *workers, int n) {
    abandon_crashed(run, workers, n);
    for (int i = 0; i < n; i++) {
        ll_worker *w = &workers[i];
        if (w->finished || w->abandoned) continue;
        w->abandoned = 1;
        run->finished++;
        int64_t busy = 0;
        for (int e = 0; e < w->nexecutors; e++) busy += atomic_load(&w->executors[e].busy_iters);
        const char *why = atomic_load_explicit(&w->in_lua, memory_order_relaxed)
                              ? "its Lua code does not yield (a loop with no request or sleep?)"
                              : "it is stuck outside the Lua code (no VU's code was running: a luaload bug, "
                                "please report it)";
        fprintf(stderr,
                "luaload: worker %d did not stop: %s; %lld iteration%s abandoned, its metrics are from its last "
                "snapshot (up to 1 s old)\n",
                i, why, (long long)busy, busy == 1 ? "" : "s");
    }
}

/* The iterations running when the run was stopped, over the workers. */
static int64_t running_iterations(ll_worker *workers, int n) {
    int64_t busy = 0;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < workers[i].nexecutors; e++) busy += atomic_load(&workers[i].executors[e].busy_iters);
    return busy;
}

/* The iterations cut off at the end and, for those cut in a request, what
 * the request was doing (by message, over the workers given up on by
 * none), the longest time one had been going. */
static void report_cut(ll_worker *workers, int n) {
    int64_t cut = 0;
    uint64_t longest = 0;
    ll_errors all;
    memset(&all, 0, sizeof(all));
    for (int i = 0; i < n; i++) {
        if (workers[i].abandoned) continue;
        cut += workers[i].interrupted;
        ll_errors_merge(&all, &workers[i].cut_waits);
        if (workers[i].cut_longest_ns > longest) longest = workers[i].cut_longest_ns;
    }
    if (cut > 0 && (all.n || all.other))
        fprintf(stderr,
                "luaload: %lld iteration%s still running at the end were interrupted (not counted), in these "
                "requests (the oldest had been going for %.1fs):\n",
                (long long)cut, cut == 1 ? "" : "s", (double)longest / 1e9);
    else if (cut > 0)
        fprintf(stderr, "luaload: %lld iteration%s still running at the end were interrupted (not counted)\n",
                (long long)cut, cut == 1 ? "" : "s");
    ll_errors_sort(&all);
    for (int i = 0; cut > 0 && i < all.n && i < ENGINE_SCRIPT_ERRORS_SHOWN; i++)
        fprintf(stderr, "luaload:   %lld × %s\n", (long long)all.items[i].count, all.items[i].msg);
    ll_errors_free(&all);
}


/* The watcher's state between its wake-ups. */
typedef struct watch {
    uint64_t t0, due, max_grace, next;
    uint64_t end;   /* the last scenario's planned end, its gracefulStop not included */
    ll_shard *snap; /* the workers' snapshots summed, for the thresholds and results.c */
    ll_progress_lines *lines; /* NULL: none (-q, or the mode has its own) */
    int asked, seen_abort, seen_threshold, seen_signal;
} watch;

/* Each whole second: quick mode's, the vus gauges, the progress lines, and
 * the thresholds evaluated on the workers' published snapshots, stopping
 * the run when one with abortOnFail fails. Called without run.mu held. */
static void watch_second(ll_engine *e, watch *wt, uint64_t now) {
    ll_config *cfg = e->cfg;
    ll_worker *workers = e->workers;
    int n = e->nworkers;
    e->mode->second(e->ms, workers, n, now);
    /* the vus gauge while the scenarios run: not their wind-down (past the
     * last one's end, or after a stop), where the VUs finishing their last
     * iterations would turn a steady count into its tail (k6's vus of a
     * constant-vus run is its count) */
    int wind_down = now >= wt->end || ll_run_stopped(&e->run);
    ll_progress_sample(e->life.shard, &cfg->run.scenarios, workers, n, now, wind_down ? LL_PROGRESS_WIND_DOWN : 0);
    ll_progress_lines_second(wt->lines, workers, n, now);
    if (!wt->snap) return;
    ll_shard_reset(wt->snap);
    uint64_t upto = now; /* the snapshots hold the samples up to the oldest running one's time */
    ll_tally tally = {0};
    for (int i = 0; i < n; i++) {
        uint64_t at = ll_worker_read_published(&workers[i], wt->snap);
        if (ll_results_wanted(e->results)) ll_worker_read_tally(&workers[i], &tally);
        if (at != UINT64_MAX && (at ? at : wt->t0) < upto) upto = at ? at : wt->t0;
    }
    ll_shard_merge(wt->snap, e->life.shard);
    int abort = 0;
    double elapsed = (double)(now - wt->t0) / 1e9;
    ll_results_tick(e->results, wt->snap, (double)(upto - wt->t0) / 1e9, &tally);
    ll_tally_free(&tally);
    ll_threshold_set_evaluate(&cfg->thresholds, e->run.reg, wt->snap, elapsed, &abort);
    if (abort && !atomic_exchange(&e->run.threshold_abort, 1))
        fprintf(stderr, "luaload: a threshold with abortOnFail failed after %.1fs: stopping the test\n", elapsed);
}

/* One wake-up of the watcher, run.mu held: moves the due time up after a
 * crash, abort() or a failed abortOnFail threshold; asks the workers still
 * running past it to stop their Lua code, then gives up on them. Returns 0
 * when the watch is over. */
static int watch_turn(ll_engine *e, watch *wt, uint64_t now) {
    ll_run *run = &e->run;
    int n = e->nworkers;
    if (atomic_load(&run->crashed)) { /* a crashed worker is parked for good: the others stop now */
        abandon_crashed(run, e->workers, n);
        if (now < wt->due) wt->due = now;
        if (run->finished >= n) return 0;
    }
    if (!wt->seen_abort && atomic_load(&run->aborted)) {
        wt->seen_abort = 1;
        if (now < wt->due) wt->due = now;
    }
    if (!wt->seen_signal && atomic_load(&run->interrupt)) {
        wt->seen_signal = 1;
        char what[160];
        int64_t busy = running_iterations(e->workers, n);
        snprintf(what, sizeof(what), "stopping at %.1fs; %lld running iteration%s get%s up to %.1fs to finish, then %s cut off",
                 (double)(now - wt->t0) / 1e9, (long long)busy, busy == 1 ? "" : "s", busy == 1 ? "s" : "",
                 (double)LL_RUN_SIGNAL_GRACE_NS / 1e9, busy == 1 ? "it is" : "they are");
        engine_tell_interrupt(e, what);
    }
    if (!wt->seen_threshold && atomic_load(&run->threshold_abort)) {
        wt->seen_threshold = 1;
        if (now + wt->max_grace < wt->due) wt->due = now + wt->max_grace;
    }
    uint64_t by = ll_lifecycle_due(run, wt->due, LL_RUN_SIGNAL_GRACE_NS);
    if (!wt->asked && now >= by + LL_LIFECYCLE_STOP_AFTER_NS) {
        for (int i = 0; i < n; i++) {
            if (e->workers[i].finished) continue;
            atomic_store(&e->workers[i].halted, 1);
            e->run.script->stop(&e->workers[i]);
        }
        wt->asked = 1;
    }
    if (now >= by + LL_LIFECYCLE_GIVE_UP_AFTER_NS) {
        abandon_stuck(run, e->workers, n);
        return 0;
    }
    return 1;
}

/* Waits for the workers started at t0, watching them (watch_turn, each
 * second watch_second); then joins them, or detaches those given up on.
 * own_live: the mode prints a live line of its own. */
static void watch_workers(ll_engine *e, uint64_t t0, int own_live) {
    ll_config *cfg = e->cfg;
    ll_run *run = &e->run;
    ll_worker *workers = e->workers;
    int n = e->nworkers;
    watch wt = {.t0 = t0, .next = t0 + 1000000000ull};
    wt.snap = cfg->thresholds.n || ll_results_wanted(e->results) ? ll_shard_new(run->reg) : NULL;
    wt.due = planned_end_ns(cfg, t0, &wt.max_grace);
    wt.end = steady_end_ns(cfg, t0);
    if (!cfg->quiet && !own_live)
        wt.lines = ll_progress_lines_new(&cfg->run.scenarios, isatty(STDERR_FILENO), t0, (wt.due - t0) / 1000);
    ll_progress_sample(e->life.shard, &cfg->run.scenarios, workers, n, t0, 1);
    pthread_mutex_lock(&run->mu);
    while (run->finished < n) {
        struct timespec until = ll_loop_deadline(CLOCK_REALTIME, 100000000ull);
        pthread_cond_timedwait(&run->cv, &run->mu, &until);
        if (run->finished >= n) break;
        uint64_t now = ll_loop_now_ns();
        if (!watch_turn(e, &wt, now)) break;
        e->mode->tick(e->ms, workers, n, t0, now);
        ll_progress_lines_poll(wt.lines, workers, n, now);
        if (now < wt.next) continue;
        while (wt.next <= now) wt.next += 1000000000ull; /* on the grid of whole seconds */
        pthread_mutex_unlock(&run->mu);
        watch_second(e, &wt, now);
        pthread_mutex_lock(&run->mu);
    }
    pthread_mutex_unlock(&run->mu);
    ll_shard_free(wt.snap);
    for (int i = 0; i < n; i++) {
        if (workers[i].abandoned) {
            pthread_detach(workers[i].thread);
        } else {
            ll_worker_join(&workers[i]);
            workers[i].run->script->collect(&workers[i]);
        }
    }
    ll_progress_lines_end(wt.lines, workers, n, ll_loop_now_ns());
}

/* The workers made, each with its share of the VUs; 0, or the exit code
 * after a one-line error (the workers made so far are e's to free). */
static int scenarios_make_workers(ll_engine *e) {
    int n = e->nworkers;
    e->workers = ll_xcalloc((size_t)n, sizeof(*e->workers));
    e->run.workers = e->workers;
    for (int i = 0; i < n; i++) {
        int rc = ll_worker_init(&e->workers[i], &e->run, i);
        if (rc) {
            if (!atomic_load(&e->run.aborted)) fprintf(stderr, "luaload: worker %d: %s\n", i, e->workers[i].errmsg);
            e->nworkers = i + 1;
            return rc;
        }
        if (e->outputs) ll_outputs_attach(e->outputs, e->workers[i].shard);
    }
    return 0;
}

engine_next engine_scenarios(ll_engine *e) {
    ll_run *run = &e->run;
    ll_api_set_status(e->api, LL_API_STATUS_RUNNING);
    int rc = scenarios_make_workers(e);
    if (rc) return engine_end(e, rc);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    run->t0_unix_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    uint64_t t0 = run->t0 = ll_loop_now_ns();
    rc = ll_results_start(e->results, run);
    if (rc) return engine_end(e, rc);
    for (int i = 0; i < e->nworkers; i++) {
        if (ll_worker_start_thread(&e->workers[i]) != 0) {
            fprintf(stderr, "luaload: cannot start worker thread %d\n", i);
            atomic_store(&run->interrupt_ns, ll_loop_now_ns());
            atomic_store(&run->interrupt, 1);
            e->nworkers = i;
            rc = LL_EXIT_FAILURE;
            break;
        }
    }
    int own_live = e->mode->start(e->ms, t0);
    watch_workers(e, t0, own_live);
    e->elapsed = (double)(ll_loop_now_ns() - t0) / 1e9;
    if (rc) return engine_end(e, rc);
    report_errors(e->workers, e->nworkers);
    report_cut(e->workers, e->nworkers);
    return ENGINE_NEXT;
}
