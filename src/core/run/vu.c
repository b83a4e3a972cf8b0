/* vu.c -- a virtual user's iterations: starting one, resuming its
 * coroutines (its own and its callbacks' tasks) after a wait, ending it
 * once its function returned and nothing of it is left, recording
 * iteration metrics and script errors at its end, and abandoning it on an
 * interrupt through the pending-operation slots and pending things.
 * What the VU does next is its owner's decision (on_idle). And what the
 * Lua bindings may ask of a VU through script_host.h: its identity,
 * coroutine, timed waits, group, tags and samples. */
#include "vu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "mode.h"
#include "progress.h"
#include "rng.h"
#include "script.h"
#include "worker.h"
#include "xmalloc.h"

void ll_vu_init(ll_vu *vu, ll_worker *w, int id, const ll_vu_iter *iter, ll_vu_idle_fn *on_idle,
                void *idle_ud) {
    memset(vu, 0, sizeof(*vu));
    vu->w = w;
    vu->iter = iter;
    vu->on_idle = on_idle;
    vu->idle_ud = idle_ud;
    vu->index = w->vu_count++;
    vu->id = id;
    /* k6's --local-ips: the VU's own source address, round-robin by id */
    const ll_ip_pool *ips = w->run ? w->run->local_ips : NULL;
    if (ips && ips->n) ll_ip_pool_get(ips, id > 0 ? (uint64_t)id - 1 : 0, &vu->http.local);
    /* its own generator: the run's seed (a fresh one in tests), stream = id */
    ll_rng_seed(vu->rng, w->run && w->run->seed ? *w->run->seed : ll_rng_entropy_seed(), (uint64_t)id);
    vu->group_id = -1;
    vu->group_path = "";
    vu->scenario_iter = -1;
    vu->result_ref = LL_SCRIPT_NOREF;
    vu->main.vu = vu;
    vu->main.co_ref = LL_SCRIPT_NOREF;
    vu->main.call = &vu->http.call;
    vu->main.oneoff = &vu->http.oneoff;
    ll_loop_timer_init(&vu->main.timer, NULL, &vu->main);
    ll_loop_timer_init(&vu->timer, NULL, vu);
    vu->w->run->script->vu_open(vu);
}

/* ---- its tasks and pending things ---- */

static void task_free(ll_vu_task *t) {
    ll_vu *vu = t->vu;
    if (t->prev) t->prev->next = t->next;
    else vu->tasks = t->next;
    if (t->next) t->next->prev = t->prev;
    ll_loop_timer_stop(vu->w->loop, &t->timer);
    vu->w->run->script->unref(vu->w, t->co_ref);
    ll_http_call_free(&t->own_call);
    ll_http_scratch_free(&t->own_oneoff);
    free(t);
}

static void cancel_slot(ll_vu_task *t) {
    ll_vu_cancel_fn *cancel = t->cancel;
    void *ud = t->cancel_ud;
    t->cancel = NULL;
    t->cancel_ud = NULL;
    if (cancel) cancel(ud);
}

/* Everything of the iteration beside its own coroutine: its callbacks'
 * tasks (their waits cancelled, their coroutines dropped) and its pending
 * things (cancelled). */
static void drop_all(ll_vu *vu) {
    while (vu->tasks) {
        ll_vu_task *t = vu->tasks;
        cancel_slot(t);
        task_free(t);
    }
    while (vu->pending) {
        ll_vu_pending *p = vu->pending;
        ll_vu_cancel_fn *cancel = p->cancel;
        ll_vu_pending_del(vu, p);
        cancel(p->ud);
    }
}

void ll_vu_pending_add(ll_vu *vu, ll_vu_pending *p, ll_vu_cancel_fn *cancel, void *ud) {
    p->cancel = cancel;
    p->ud = ud;
    p->prev = NULL;
    p->next = vu->pending;
    if (vu->pending) vu->pending->prev = p;
    vu->pending = p;
}

void ll_vu_free(ll_vu *vu) {
    if (!vu->w) return;
    drop_all(vu);
    ll_loop_timer_stop(vu->w->loop, &vu->main.timer);
    ll_loop_timer_stop(vu->w->loop, &vu->timer);
    ll_http_vu_free(&vu->http);
    vu->w->run->script->vu_close(vu);
    vu->w->run->script->unref(vu->w, vu->result_ref);
    if (vu->mode_data) vu->iter->vu_free(vu);
    for (int i = 0; i < vu->ntags; i++) {
        free(vu->tags[i].key);
        free(vu->tags[i].value);
    }
    free(vu->tags);
    vu->w = NULL;
}

/* A fresh coroutine after one that raised or was abandoned. */
static void renew_coroutine(ll_vu *vu) {
    vu->w->run->script->vu_close(vu);
    vu->w->run->script->vu_open(vu);
}

static void end_iteration(ll_vu *vu, int completed) {
    ll_worker *w = vu->w;
    vu->in_iteration = 0;
    vu->main_done = 0;
    vu->iteration++;
    vu->scenario_iter = -1;
    vu->group_id = -1;
    vu->group_path = "";
    uint64_t now = ll_loop_now_ns();
    /* a VU that goes straight on starts its next iteration now */
    vu->next_start_ns = vu->yielded ? now : 0;
    if (completed && !w->single) {
        ll_tag_source t = ll_vu_tag_source(vu);
        ll_shard_add(w->shard, LL_M_ITERATIONS, 1, &t);
        uint64_t took = now - vu->iter_start_ns; /* without its --rps waits (k6#1631 counted them) */
        took = took > vu->rate_wait_ns ? took - vu->rate_wait_ns : 0;
        ll_shard_trend(w->shard, LL_M_ITERATION_DURATION, (int64_t)(took / 1000), &t);
        if (vu->scheduled_ns) /* from when it was due: what a user would have seen */
            ll_shard_trend(w->shard, LL_M_ITERATION_DURATION_CORRECTED, (int64_t)((now - vu->scheduled_ns) / 1000), &t);
    }
    vu->on_idle(vu, vu->idle_ud);
}

/* The iteration ends once its function returned and nothing of it is
 * left (k6's event-loop rule). */
static void maybe_end(ll_vu *vu) {
    if (vu->in_iteration && vu->main_done && !vu->tasks && !vu->pending && !vu->running) end_iteration(vu, 1);
}

static void on_end_check(ll_loop *loop, void *ud) {
    (void)loop;
    maybe_end(ud);
}

/* Never ends the iteration at once: its caller may be about to start a
 * task in p's place (a timer's callback), or be inside Lua. The check
 * runs at the loop's next turn, on the VU's own timer (free during a
 * script's iteration: the owner uses it between iterations). */
void ll_vu_pending_del(ll_vu *vu, ll_vu_pending *p) {
    if (!p->cancel) return; /* not (or no longer) registered */
    if (p->prev) p->prev->next = p->next;
    else vu->pending = p->next;
    if (p->next) p->next->prev = p->prev;
    p->cancel = NULL;
    p->prev = p->next = NULL;
    if (!vu->pending && vu->main_done && vu->in_iteration) {
        vu->timer.fn = on_end_check;
        ll_loop_timer_start(vu->w->loop, &vu->timer, 0);
    }
}

/* Runs t's coroutine until it waits, returns or fails. What a task raises
 * (or the engine's stop, or abort()) ends the whole iteration. */
static void run(ll_vu_task *t, int nargs) {
    ll_vu *vu = t->vu;
    ll_worker *w = vu->w;
    /* the VU's scenario __ENV, when another scenario's is in place */
    if (vu->executor && vu->executor->env_ref != w->env_ref) {
        w->run->script->use_env(w, vu->executor->env_ref);
        w->env_ref = vu->executor->env_ref;
    }
    char err[1024];
    vu->running = t;
    w->current = vu;
    atomic_store_explicit(&w->in_lua, 1, memory_order_relaxed);
    int rc = w->run->script->vu_resume(vu, nargs, err, sizeof(err));
    atomic_store_explicit(&w->in_lua, 0, memory_order_relaxed);
    w->current = NULL;
    if (rc == LL_SCRIPT_YIELDED) {
        vu->running = NULL;
        vu->yielded = 1;
        return;
    }
    if (rc == LL_SCRIPT_RETURNED) {
        if (t == &vu->main) {
            vu->result_ref = w->run->script->vu_result(vu, w->single);
            vu->main_done = 1;
        } else {
            task_free(t);
        }
        vu->running = NULL;
        maybe_end(vu);
        return;
    }
    vu->running = NULL;
    drop_all(vu); /* the iteration is over: its callbacks too */
    cancel_slot(&vu->main);
    if (rc == LL_SCRIPT_STOPPED) { /* the engine stopped Lua code that did not yield */
        renew_coroutine(vu);
        w->interrupted++;
        end_iteration(vu, 0);
        return;
    }
    int unwound = vu->unwinding;
    vu->unwinding = 0;
    if (rc == LL_SCRIPT_FAILED && (unwound || atomic_load_explicit(&w->run->aborted, memory_order_relaxed))) {
        renew_coroutine(vu); /* luaload.abort() or ll_vu_unwind: not a script error */
        if (!w->single && !unwound) w->interrupted++;
        end_iteration(vu, 0);
        return;
    }
    if (w->single) { /* setup/teardown: the engine reports it */
        snprintf(w->errmsg, sizeof(w->errmsg), "%s", err);
        vu->last_error = w->errmsg;
    } else {
        const char *kept = ll_errors_add(&w->errors, err, LL_WORKER_SCRIPT_ERRORS_MAX);
        vu->last_error = kept ? kept : "a script error (not kept: too many distinct ones)";
    }
    renew_coroutine(vu);
    end_iteration(vu, 1);
}

void ll_vu_start_iteration(ll_vu *vu) {
    ll_worker *w = vu->w;
    vu->in_iteration = 1;
    vu->yielded = 0;
    vu->unwinding = 0; /* a pcall may have caught the last one's */
    vu->iter_start_ns = vu->next_start_ns ? vu->next_start_ns : ll_loop_now_ns();
    vu->next_start_ns = 0;
    vu->rate_wait_ns = 0;
    /* numbered in start order when the script may ask (luaload.execution) */
    if (atomic_load_explicit(&w->run->number_iters, memory_order_relaxed)) ll_vu_scenario_iteration(vu);
    ll_http_vu_new_iteration(&vu->http); /* k6 empties the jar at each iteration */
    vu->iter->start(vu);
}

static void script_start(ll_vu *vu) {
    ll_worker *w = vu->w;
    int nargs = w->run->script->vu_call(vu, vu->executor ? vu->executor->exec_ref : w->exec_ref, w->setup_ref);
    run(&vu->main, nargs);
}

const ll_vu_iter ll_vu_script_iter = {.start = script_start};

void ll_vu_native_done(ll_vu *vu) {
    vu->main.cancel = NULL;
    vu->main.cancel_ud = NULL;
    end_iteration(vu, 1);
}

int64_t ll_vu_scenario_iteration(ll_vu *vu) {
    ll_run *run = vu->w->run;
    if (!vu->executor || !run->scenario_iters) return -1;
    if (vu->scenario_iter < 0)
        vu->scenario_iter = atomic_fetch_add_explicit(&run->scenario_iters[vu->executor->index], 1,
                                                      memory_order_relaxed);
    return vu->scenario_iter;
}

int64_t ll_vu_iteration_in_test(ll_vu *vu) {
    int64_t k = ll_vu_scenario_iteration(vu);
    const ll_run *run = vu->w->run;
    if (k < 0 || !run->stripes) return k;
    return ll_segment_tuple_global(&run->stripes[vu->executor->index], k);
}

int64_t ll_vu_id_in_test(const ll_vu *vu) {
    const ll_segment_tuple *t = vu->w->run->tuple;
    return t ? ll_segment_tuple_global(t, vu->id - 1) + 1 : vu->id;
}

ll_vu_task *ll_vu_wait(ll_vu *vu, ll_vu_cancel_fn *cancel, void *ud) {
    ll_vu_task *t = vu->running ? vu->running : &vu->main; /* main: a C iteration's wait */
    t->cancel = cancel;
    t->cancel_ud = ud;
    return t;
}

void ll_vu_task_resume(ll_vu_task *t, int nargs) {
    t->cancel = NULL;
    t->cancel_ud = NULL;
    run(t, nargs);
}

void ll_vu_task_cancel_wait(ll_vu_task *t) {
    if (t) cancel_slot(t);
}

void ll_vu_task_start(ll_vu *vu, lua_State *co, int ref, int nargs) {
    ll_vu_task *t = ll_xcalloc(1, sizeof(*t));
    t->vu = vu;
    t->co = co;
    t->co_ref = ref;
    t->call = &t->own_call;
    t->oneoff = &t->own_oneoff;
    ll_loop_timer_init(&t->timer, NULL, t);
    t->next = vu->tasks;
    if (vu->tasks) vu->tasks->prev = t;
    vu->tasks = t;
    run(t, nargs);
}

void ll_vu_interrupt(ll_vu *vu) {
    if (!vu->in_iteration) return;
    drop_all(vu);
    cancel_slot(&vu->main);
    renew_coroutine(vu);
    vu->w->interrupted++;
    vu->in_iteration = 0;
    vu->main_done = 0;
    vu->scenario_iter = -1;
    vu->group_id = -1;
    vu->group_path = "";
}

/* ---- tags ---- */

int ll_vu_set_tag(ll_vu *vu, const char *key, const char *value) {
    int i = 0;
    while (i < vu->ntags && strcmp(vu->tags[i].key, key) != 0) i++;
    if (!value) { /* remove */
        if (i == vu->ntags) return 0;
        free(vu->tags[i].key);
        free(vu->tags[i].value);
        vu->tags[i] = vu->tags[--vu->ntags];
        return 0;
    }
    char *v = strdup(value);
    if (!v) return -1;
    if (i < vu->ntags) {
        free(vu->tags[i].value);
        vu->tags[i].value = v;
        return 0;
    }
    if (vu->ntags == vu->cap_tags) {
        int cap = vu->cap_tags ? vu->cap_tags * 2 : 4;
        ll_tag *t = realloc(vu->tags, (size_t)cap * sizeof(*t));
        if (!t) {
            free(v);
            return -1;
        }
        vu->tags = t;
        vu->cap_tags = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return -1;
    }
    vu->tags[vu->ntags].key = k;
    vu->tags[vu->ntags].value = v;
    vu->ntags++;
    return 0;
}

const char *ll_vu_tag(const ll_vu *vu, const char *key) {
    for (int i = 0; i < vu->ntags; i++)
        if (strcmp(vu->tags[i].key, key) == 0) return vu->tags[i].value;
    return vu->executor ? ll_scenario_tag(vu->executor->sc, key) : NULL;
}

void ll_vu_tags(const ll_vu *vu, ll_tag_fn *fn, void *ud) {
    for (int i = 0; i < vu->ntags; i++) fn(ud, vu->tags[i].key, vu->tags[i].value);
    if (vu->executor) ll_scenario_tags(vu->executor->sc, fn, ud);
}

static const char *source_tag(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const ll_vu *vu = ctx;
    if (strcmp(key, "group") == 0) return vu->group_path;
    return ll_vu_tag(vu, key);
}

static void source_tags(const void *ctx, ll_tag_fn *fn, void *ud) {
    const ll_vu *vu = ctx;
    fn(ud, "group", vu->group_path);
    ll_vu_tags(vu, fn, ud);
}

ll_tag_source ll_vu_tag_source(const ll_vu *vu) {
    ll_tag_source t = {source_tag, source_tags, vu, -1, 0};
    return t;
}

/* ---- what the Lua bindings ask of a VU (script_host.h) ---- */

ll_worker *ll_vu_worker(const ll_vu *vu) { return vu->w; }
int ll_vu_id(const ll_vu *vu) { return vu->id; }
int ll_vu_index(const ll_vu *vu) { return vu->index; }
int64_t ll_vu_iteration(const ll_vu *vu) { return vu->iteration; }
uint64_t *ll_vu_rng(ll_vu *vu) { return vu->rng; }
void ll_vu_unwind(ll_vu *vu) { vu->unwinding = 1; }
ll_http_vu *ll_vu_http(ll_vu *vu) { return &vu->http; }
lua_State *ll_vu_co(const ll_vu *vu) { return vu->running ? vu->running->co : vu->main.co; }
int ll_vu_co_ref(const ll_vu *vu) { return vu->running ? vu->running->co_ref : vu->main.co_ref; }

void ll_vu_set_co(ll_vu *vu, lua_State *co, int ref) {
    vu->main.co = co;
    vu->main.co_ref = ref;
}

ll_vu_task *ll_vu_running(const ll_vu *vu) { return vu->running; }
ll_vu *ll_vu_task_vu(const ll_vu_task *t) { return t->vu; }
lua_State *ll_vu_task_co(const ll_vu_task *t) { return t->co; }
ll_http_call *ll_vu_task_call(ll_vu_task *t) { return t->call; }
ll_http_req *ll_vu_task_oneoff(ll_vu_task *t) { return ll_http_scratch(t->oneoff); }
int ll_vu_in_iteration(const ll_vu *vu) { return vu->in_iteration; }

void ll_vu_enter(ll_vu *vu) {
    vu->w->current = vu;
    atomic_store_explicit(&vu->w->in_lua, 1, memory_order_relaxed);
}

void ll_vu_leave(ll_vu *vu) {
    atomic_store_explicit(&vu->w->in_lua, 0, memory_order_relaxed);
    vu->w->current = NULL;
}

const ll_scenario *ll_vu_scenario(const ll_vu *vu) { return vu->executor ? vu->executor->sc : NULL; }

double ll_vu_scenario_progress(const ll_vu *vu) {
    const ll_run *run = vu->w->run;
    if (!vu->executor) return 0;
    int64_t done = ll_progress_iterations(run->workers, run->nworkers, vu->executor->index);
    return ll_progress_fraction(vu->executor->sc, done, ll_loop_now_ns() - run->t0);
}

static void on_timer_done(ll_loop *loop, void *ud) {
    (void)loop;
    ll_vu_task_resume(ud, 0);
}

static void cancel_timer(void *ud) {
    ll_vu_task *t = ud;
    ll_loop_timer_stop(t->vu->w->loop, &t->timer);
}

ll_vu_task *ll_vu_wait_timer(ll_vu *vu, uint64_t us) {
    ll_vu_task *t = vu->running ? vu->running : &vu->main;
    t->timer.fn = on_timer_done;
    ll_loop_timer_start(vu->w->loop, &t->timer, us);
    return ll_vu_wait(vu, cancel_timer, t);
}

/* --rps (k6's rps option): a request slot every run->rps_interval_ns over
 * all workers, each request taking the next free one (never one in the
 * past: no burst after an idle spell). */
uint64_t ll_vu_rate_take(ll_vu *vu, int64_t n) {
    ll_run *run = vu->w->run;
    uint64_t need = (uint64_t)(n > 0 ? n : 1) * run->rps_interval_ns;
    uint64_t now = ll_loop_now_ns(), slot, next = atomic_load(&run->rps_next_ns);
    do slot = next > now ? next : now;
    while (!atomic_compare_exchange_weak(&run->rps_next_ns, &next, slot + need));
    if (slot <= now) return 0;
    vu->rate_wait_ns += slot - now;
    return slot - now;
}

int ll_vu_group_id(const ll_vu *vu) { return vu->group_id; }
const char *ll_vu_group_path(const ll_vu *vu) { return vu->group_path; }

int ll_vu_group_enter(ll_vu *vu, const char *path) {
    ll_registry *reg = vu->w->run->reg;
    int id = ll_registry_group(reg, path);
    if (id < 0) return -1;
    vu->group_id = id;
    vu->group_path = ll_registry_group_path(reg, id);
    return 0;
}

void ll_vu_group_leave(ll_vu *vu, int prev, double start_ns) {
    double us = ((double)ll_loop_now_ns() - start_ns) / 1000;
    ll_tag_source t = ll_vu_tag_source(vu); /* still inside the group */
    ll_shard_trend(vu->w->shard, LL_M_GROUP_DURATION, (int64_t)us, &t);
    vu->group_id = prev;
    vu->group_path = ll_registry_group_path(vu->w->run->reg, prev);
}

void ll_vu_sample(ll_vu *vu, int metric, double value, ll_tag_source *t) {
    ll_shard_sample(vu->w->shard, metric, value, ll_loop_now_ns(), t);
}

void ll_vu_check(ll_vu *vu, int check, int ok, ll_tag_source *t) { ll_shard_check(vu->w->shard, check, ok, t); }

void ll_vu_count(ll_vu *vu, int metric, double n) {
    ll_tag_source t = ll_vu_tag_source(vu);
    ll_shard_add(vu->w->shard, metric, n, &t);
}

int ll_vu_check_id(const ll_vu *vu, const char *name, int *folded) {
    return ll_registry_check(vu->w->run->reg, vu->group_path, name, folded);
}
