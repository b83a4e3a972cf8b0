/* executor.c -- one scenario's share of VUs and iterations in one worker
 * (ll_executor): k6's six executors on the worker's event loop.
 *
 * Closed models (shared-iterations, per-vu-iterations, constant-vus,
 * ramping-vus) keep VUs looping: when an iteration ends the VU starts the
 * next one if the executor allows it, else it retires. Open models
 * (constant- and ramping-arrival-rate) start iterations on a timer at the
 * scheduled times whatever the server does: a free VU takes it, a new VU is
 * made while under maxVUs, otherwise the iteration is dropped and counted.
 * Every worker takes its exact share: iterations and VUs split by
 * ll_schedule_share(), arrivals by index (the k-th global iteration runs in
 * worker k mod workers), ramping VUs round-robin, so shares add up exactly. */
#include "executor.h"

#include "xmalloc.h"
#include "schedule.h"
#include "script.h"
#include "worker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAMP_TICK_US 50000

/* ---- tags of the scenario's own samples (dropped_iterations) ---- */

static const char *scenario_tag(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    return ll_scenario_tag(ctx, key);
}

static void scenario_tags(const void *ctx, ll_tag_fn *fn, void *ud) { ll_scenario_tags(ctx, fn, ud); }

/* ---- shares ---- */

static int finite_executor(const ll_scenario *sc) {
    return sc->executor == LL_EX_SHARED_ITERATIONS || sc->executor == LL_EX_PER_VU_ITERATIONS;
}

static int open_model(const ll_scenario *sc) {
    return sc->executor == LL_EX_CONSTANT_ARRIVAL_RATE || sc->executor == LL_EX_RAMPING_ARRIVAL_RATE;
}

/* How many workers take part in the scenario: never more than its VUs, so
 * that no worker gets iterations (or arrivals) without a VU to run them. */
static int nworkers_of(const ll_scenario *sc, int W) {
    int64_t max = ll_scenario_max_vus(sc);
    return max < W ? (max > 0 ? (int)max : 1) : W;
}

/* The global index (in the scenario) of this worker's i-th VU. */
static int64_t global_index(const ll_executor *s, int i) {
    int W = s->nw, w = s->w->index;
    if (s->sc->executor == LL_EX_RAMPING_VUS) return (int64_t)i * W + w;
    return (int64_t)((__int128)ll_scenario_max_vus(s->sc) * w / W) + i;
}

int ll_executor_init(ll_executor *s, ll_worker *w, int index, char *err, size_t errlen) {
    const ll_scenario *sc = &w->run->scenarios->items[index];
    memset(s, 0, sizeof(*s));
    s->sc = sc;
    s->index = index;
    s->w = w;
    s->exec_ref = s->env_ref = LL_SCRIPT_NOREF;
    s->nw = nworkers_of(sc, w->run->nworkers);
    int64_t max = ll_scenario_max_vus(sc);
    if (w->index < s->nw)
        s->cap = (int)(sc->executor == LL_EX_RAMPING_VUS ? ll_schedule_share_rr(max, w->index, s->nw)
                                                         : ll_schedule_share(max, w->index, s->nw));
    s->vus = ll_xcalloc((size_t)(s->cap > 0 ? s->cap : 1), sizeof(ll_vu));
    s->idle = ll_xcalloc((size_t)(s->cap > 0 ? s->cap : 1), sizeof(ll_vu *));
    if (!w->run->script->function(w, sc->exec, &s->exec_ref, NULL)) {
        snprintf(err, errlen, "scenario %s: the script has no function %s()", sc->name, sc->exec);
        return LL_EXIT_SCRIPT;
    }
    s->env_ref = w->run->script->scenario_env(w, sc); /* the run's __ENV, the scenario's env on top */
    return 0;
}

void ll_executor_free(ll_executor *s) {
    for (int i = 0; i < s->nvus; i++) ll_vu_free(&s->vus[i]);
    if (s->w) {
        s->w->run->script->unref(s->w, s->exec_ref);
        s->w->run->script->unref(s->w, s->env_ref);
    }
    free(s->vus);
    free(s->idle);
    memset(s, 0, sizeof(*s));
}

static void vu_idle(ll_vu *vu, void *ud);

/* The next VU slot of the scenario, made now; NULL when all are made. */
static ll_vu *make_vu(ll_executor *s) {
    if (s->nvus >= s->cap) return NULL;
    ll_vu *vu = &s->vus[s->nvus];
    int64_t g = global_index(s, s->nvus);
    ll_vu_init(vu, s->w, (int)(s->w->run->vu_id_base[s->index] + g + 1), s->w->run->iter, vu_idle, s);
    vu->executor = s;
    vu->g = g;
    s->nvus++;
    atomic_fetch_add_explicit(&s->made_vus, 1, memory_order_relaxed);
    return vu;
}

/* ---- closed and open models ---- */

static void finish(ll_executor *s) {
    if (s->phase == LL_EXECUTOR_DONE) return;
    s->phase = LL_EXECUTOR_DONE;
    ll_loop_timer_stop(s->w->loop, &s->timer);
    s->w->active--;
}

static void maybe_done(ll_executor *s) {
    if (s->phase == LL_EXECUTOR_DONE || s->running > 0) return;
    if (s->phase == LL_EXECUTOR_STOPPING || (finite_executor(s->sc) && s->alive == 0 && s->phase == LL_EXECUTOR_RUNNING)) finish(s);
}

static int may_continue(const ll_executor *s, const ll_vu *vu) {
    if (s->phase != LL_EXECUTOR_RUNNING || ll_run_stopped(s->w->run) ||
        atomic_load_explicit(&s->w->halted, memory_order_relaxed))
        return 0;
    switch (s->sc->executor) {
    case LL_EX_SHARED_ITERATIONS: return s->iters_left > 0;
    case LL_EX_PER_VU_ITERATIONS: return vu->iteration < s->sc->iterations;
    case LL_EX_RAMPING_VUS: return vu->allowed;
    default: return 1;
    }
}

/* k6's active VUs (the vus gauge, the progress line): in a closed model
 * the VUs alive, between their iterations too; in an open model (arrival
 * rates) the VUs out of the pool, running an iteration. */
static void count_busy(ll_executor *s, int d) {
    s->running += d;
    atomic_fetch_add_explicit(&s->busy_iters, d, memory_order_relaxed);
    if (open_model(s->sc)) atomic_fetch_add_explicit(&s->active_vus, d, memory_order_relaxed);
}

static void set_alive(ll_executor *s, ll_vu *vu, int alive) {
    if (vu->alive == alive) return;
    vu->alive = alive;
    s->alive += alive ? 1 : -1;
    atomic_fetch_add_explicit(&s->active_vus, alive ? 1 : -1, memory_order_relaxed);
}

static void start(ll_executor *s, ll_vu *vu) {
    if (s->sc->executor == LL_EX_SHARED_ITERATIONS) s->iters_left--;
    count_busy(s, 1);
    ll_vu_start_iteration(vu);
}

static void retire(ll_executor *s, ll_vu *vu) {
    set_alive(s, vu, 0);
    maybe_done(s);
}

static void start_or_retire(ll_executor *s, ll_vu *vu) {
    if (may_continue(s, vu)) start(s, vu);
    else retire(s, vu);
}

static void on_deferred(ll_loop *loop, void *ud) {
    (void)loop;
    ll_vu *vu = ud;
    start_or_retire(vu->executor, vu);
}

/* An iteration of vu ended (its on_idle). */
static void vu_idle(ll_vu *vu, void *ud) {
    ll_executor *s = ud;
    /* the end of this iteration is the start of the next only if that one
     * starts right now (below); otherwise it is read from the clock */
    uint64_t ended = vu->next_start_ns;
    vu->next_start_ns = 0;
    count_busy(s, -1);
    atomic_fetch_add_explicit(&s->done_iters, 1, memory_order_relaxed);
    vu->scheduled_ns = 0;
    if (open_model(s->sc)) {
        s->idle[s->nidle++] = vu;
        maybe_done(s);
        return;
    }
    if (!may_continue(s, vu)) {
        retire(s, vu);
        return;
    }
    /* An iteration that never waited would starve the other VUs if the next
     * one started right away: give the loop a turn first. */
    if (!vu->yielded) {
        vu->timer.fn = on_deferred;
        ll_loop_timer_start(s->w->loop, &vu->timer, 0);
        return;
    }
    vu->next_start_ns = ended;
    start(s, vu);
}

/* Abandons vu's running iteration (the hard end of a stop). */
static void cut(ll_executor *s, ll_vu *vu) {
    ll_vu_interrupt(vu);
    count_busy(s, -1);
    if (open_model(s->sc)) s->idle[s->nidle++] = vu;
    else set_alive(s, vu, 0);
}

/* In a test split with execution segments, how the scenario's VUs and
 * iterations are striped over the instances (NULL: not split). */
static const ll_segment_tuple *stripe_of(const ll_executor *s) {
    return s->w->run->stripes ? &s->w->run->stripes[s->index] : NULL;
}

static void ramp(ll_loop *loop, void *ud) {
    ll_executor *s = ud;
    uint64_t now = ll_loop_now_ns();
    const ll_scenario *sc = s->sc;
    int64_t target = llround(ll_schedule_ramp_value((double)sc->start_vus, sc->stages, sc->nstages, (now - s->start_ns) / 1000));
    const ll_segment_tuple *t = stripe_of(s);
    for (int i = 0; i < s->nvus; i++) {
        ll_vu *vu = &s->vus[i];
        int allowed = (t ? ll_segment_tuple_global(t, vu->g) : vu->g) < target; /* its index in the test */
        if (allowed && !vu->allowed) vu->disallowed_ns = 0;
        if (!allowed && vu->allowed) vu->disallowed_ns = now;
        vu->allowed = allowed;
        if (allowed && !vu->alive && !vu->in_iteration) {
            set_alive(s, vu, 1);
            start(s, vu);
        } else if (!allowed && vu->in_iteration && now - vu->disallowed_ns >= sc->graceful_ramp_down_us * 1000) {
            cut(s, vu); /* gracefulRampDown is over */
        }
    }
    ll_loop_timer_start(loop, &s->timer, RAMP_TICK_US);
}

/* Arrival rates in a test split with execution segments: this instance
 * starts its stripe of the global iterations, at their global times (the
 * rate's period is the whole test's). k counts the instance's own ones. */
static uint64_t arrival_time_us(const ll_executor *s, int64_t k) {
    const ll_segment_tuple *t = stripe_of(s);
    int64_t g = t ? ll_segment_tuple_global(t, k) : k;
    return g < 0 ? UINT64_MAX : ll_schedule_arrival_time_us(s->sc, g);
}

/* How many of the instance's own iterations are due by t_us. */
static int64_t arrival_count(const ll_executor *s, uint64_t t_us) {
    const ll_segment_tuple *t = stripe_of(s);
    int64_t n = ll_schedule_arrival_count(s->sc, t_us);
    return t ? ll_segment_tuple_scale(t, n) : n;
}

/* No VU for the iteration k_next: it and every other one of this worker
 * already due are dropped at once (a stall must not cost a loop turn per
 * missed iteration). */
static void drop_due(ll_executor *s, uint64_t now) {
    int W = s->nw;
    int64_t due = arrival_count(s, (now - s->start_ns) / 1000);
    int64_t n = due > s->k_next ? (due - s->k_next + W - 1) / W : 1;
    s->k_next += n * W;
    ll_tag_source t = {scenario_tag, scenario_tags, s->sc, -1, 0};
    ll_shard_add(s->w->shard, LL_M_DROPPED_ITERATIONS, (double)n, &t);
}

#define MAX_STARTS_PER_TURN 1024

/* Starts every iteration due by now, then sleeps until the next one. */
static void arrive(ll_loop *loop, void *ud) {
    ll_executor *s = ud;
    uint64_t now = ll_loop_now_ns();
    int W = s->nw;
    for (int started = 0; s->phase == LL_EXECUTOR_RUNNING && !ll_run_stopped(s->w->run); started++) {
        if (started == MAX_STARTS_PER_TURN) { /* let the loop breathe, then go on */
            ll_loop_timer_start(loop, &s->timer, 0);
            return;
        }
        uint64_t t = arrival_time_us(s, s->k_next);
        if (t == UINT64_MAX) { /* no more arrivals: wait for the running ones */
            s->phase = LL_EXECUTOR_STOPPING;
            maybe_done(s);
            return;
        }
        uint64_t due = s->start_ns + t * 1000;
        if (due > now) {
            ll_loop_timer_start(loop, &s->timer, (due - now) / 1000);
            return;
        }
        ll_vu *vu = s->nidle > 0 ? s->idle[--s->nidle] : make_vu(s);
        if (!vu) {
            drop_due(s, now);
            continue;
        }
        s->k_next += W;
        vu->scheduled_ns = due;
        ll_tag_source tags = ll_vu_tag_source(vu);
        ll_shard_trend(s->w->shard, LL_M_ITERATION_START_LAG, (int64_t)(now - due) / 1000, &tags);
        start(s, vu);
        now = ll_loop_now_ns();
    }
}

static void on_start(ll_loop *loop, void *ud) {
    ll_executor *s = ud;
    const ll_scenario *sc = s->sc;
    (void)loop;
    if (s->phase != LL_EXECUTOR_WAITING) return;
    s->phase = LL_EXECUTOR_RUNNING;
    s->start_ns = ll_loop_now_ns();
    s->end_ns = s->start_ns + ll_scenario_duration_us(sc) * 1000;
    s->hard_end_ns = s->end_ns + sc->graceful_stop_us * 1000;
    int W = s->nw, w = s->w->index;
    if (w >= W || sc->none) { /* fewer VUs than workers, or none in this segment */
        finish(s);
        return;
    }
    switch (sc->executor) {
    case LL_EX_RAMPING_VUS:
        while (make_vu(s)) {}
        s->timer.fn = ramp;
        ramp(s->w->loop, s);
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE: {
        int64_t pre = ll_schedule_share(sc->pre_allocated_vus, w, W);
        for (int64_t i = 0; i < pre; i++) {
            ll_vu *vu = make_vu(s);
            if (vu) s->idle[s->nidle++] = vu;
        }
        s->k_next = w;
        s->timer.fn = arrive;
        arrive(s->w->loop, s);
        break;
    }
    default:
        if (sc->executor == LL_EX_SHARED_ITERATIONS) s->iters_left = ll_schedule_share(sc->iterations, w, W);
        for (ll_vu *vu; (vu = make_vu(s));) set_alive(s, vu, 1);
        for (int i = 0; i < s->nvus; i++) start_or_retire(s, &s->vus[i]);
        break;
    }
    maybe_done(s);
}

void ll_executor_begin(ll_executor *s) {
    uint64_t at = s->w->run->t0 + s->sc->start_time_us * 1000;
    ll_loop_timer_init(&s->timer, on_start, s);
    uint64_t now = ll_loop_now_ns();
    ll_loop_timer_start(s->w->loop, &s->timer, at > now ? (at - now) / 1000 : 0);
}

void ll_executor_tick(ll_executor *s, uint64_t now, int stop_now, int graceful) {
    if (s->phase == LL_EXECUTOR_DONE) return;
    if (s->phase == LL_EXECUTOR_WAITING) {
        if (stop_now || graceful) finish(s); /* stopped before its startTime */
        return;
    }
    if (s->phase == LL_EXECUTOR_RUNNING && (now >= s->end_ns || stop_now || graceful)) {
        s->phase = LL_EXECUTOR_STOPPING;
        ll_loop_timer_stop(s->w->loop, &s->timer);
        if (graceful && now + s->sc->graceful_stop_us * 1000 < s->hard_end_ns)
            s->hard_end_ns = now + s->sc->graceful_stop_us * 1000;
        if (stop_now) s->hard_end_ns = now;
        /* VUs waiting to start their next iteration are told no now */
        for (int i = 0; i < s->nvus; i++) {
            ll_vu *vu = &s->vus[i];
            if (!vu->alive || vu->in_iteration) continue;
            ll_loop_timer_stop(s->w->loop, &vu->timer); /* a deferred start */
            retire(s, vu);
        }
        maybe_done(s);
    }
    /* a stop that comes while the iterations wind down (a signal's grace
     * over, abort()) cuts them now, gracefulStop or not */
    if (s->phase == LL_EXECUTOR_STOPPING && stop_now && now < s->hard_end_ns) s->hard_end_ns = now;
    if (s->phase == LL_EXECUTOR_STOPPING && now >= s->hard_end_ns) {
        for (int i = 0; i < s->nvus; i++)
            if (s->vus[i].in_iteration) cut(s, &s->vus[i]);
        finish(s);
    }
}
