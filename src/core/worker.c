/* worker.c -- a worker: one thread with its event loop, Lua state, VUs,
 * transport and metrics shard. Decides when each of its VUs starts an
 * iteration, and stops them at the end of the run. */
#include "worker.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "state.h"

int ll_worker_init(ll_worker *w, ll_run *run, int index) {
    memset(w, 0, sizeof(*w));
    w->index = index;
    w->run = run;
    w->setup_ref = LUA_NOREF;
    w->exec_ref = LUA_NOREF;
    w->env_ref = LUA_NOREF;
    w->loop = ll_loop_new();
    w->shard = ll_shard_new(run->reg);
    pthread_mutex_init(&w->pub_mu, NULL);
    int nscenarios = index >= 0 ? run->scenarios->n : 0;
    int64_t nvus = index >= 0 ? 0 : 1; /* the lifecycle worker's one VU */
    for (int i = 0; i < nscenarios; i++)
        nvus += ll_share(ll_scenario_max_vus(&run->scenarios->items[i]), index, run->nworkers) + 1;
    w->tp = w->loop ? ll_transport_new(w->loop, (int)((nvus + LL_VUS_PER_MULTI - 1) / LL_VUS_PER_MULTI)) : NULL;
    w->vus = index < 0 ? calloc(1, sizeof(ll_vu)) : NULL;
    w->scheds = nscenarios ? calloc((size_t)nscenarios, sizeof(ll_sched)) : NULL;
    if (!w->loop || !w->shard || !w->tp || (index < 0 && !w->vus) || (nscenarios && !w->scheds) ||
        (run->publish && !(w->published = ll_shard_new(run->reg)))) {
        snprintf(w->errmsg, sizeof(w->errmsg), "out of memory starting worker %d", index);
        return w->rc = 1;
    }
    int rc = ll_state_open(w, w->errmsg, sizeof(w->errmsg));
    if (rc) return w->rc = rc;
    for (int i = 0; i < nscenarios; i++) {
        rc = ll_sched_init(&w->scheds[i], w, i, w->errmsg, sizeof(w->errmsg));
        w->nscheds = i + 1;
        if (rc) return w->rc = rc;
    }
    return 0;
}

void ll_worker_free(ll_worker *w) {
    for (int i = 0; i < w->nvus; i++) ll_vu_free(&w->vus[i]);
    free(w->vus);
    for (int i = 0; i < w->nscheds; i++) ll_sched_free(&w->scheds[i]);
    free(w->scheds);
    if (w->L) lua_close(w->L);
    ll_transport_free(w->tp);
    ll_loop_free(w->loop);
    ll_shard_free(w->shard);
    ll_shard_free(w->published);
    pthread_mutex_destroy(&w->pub_mu);
    for (int i = 0; i < w->nerrors; i++) free(w->errors[i].msg);
    free(w->errors);
    memset(w, 0, sizeof(*w));
}

const char *ll_worker_error(ll_worker *w, const char *msg) {
    for (int i = 0; i < w->nerrors; i++) {
        if (strcmp(w->errors[i].msg, msg) == 0) {
            w->errors[i].count++;
            return w->errors[i].msg;
        }
    }
    ll_error_count *e = realloc(w->errors, (size_t)(w->nerrors + 1) * sizeof(*e));
    if (!e) return NULL;
    w->errors = e;
    e[w->nerrors].msg = strdup(msg);
    e[w->nerrors].count = 1;
    if (!e[w->nerrors].msg) return NULL;
    const char *stored = e[w->nerrors++].msg;

    return stored;
}

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

void ll_worker_vu_idle(ll_worker *w, ll_vu *vu) {
    if (vu->sched) {
        ll_sched_vu_idle(vu->sched, vu);
        return;
    }
    vu->alive = 0; /* the one call of the lifecycle worker is over */
    w->active--;
}

/* Runs the loop until every scenario (or the one call) is done. */
static void drive(ll_worker *w) {
    while (w->active > 0) {
        ll_loop_turn(w->loop, 100);
        uint64_t now = ll_now_ns();
        ll_run *run = w->run;
        int stop_now = atomic_load_explicit(&run->aborted, memory_order_relaxed);
        int graceful = atomic_load_explicit(&run->interrupt, memory_order_relaxed) ||
                       atomic_load_explicit(&run->threshold_abort, memory_order_relaxed);
        for (int i = 0; i < w->nscheds; i++) ll_sched_tick(&w->scheds[i], now, stop_now, graceful);
        if (!w->single || !w->vus[0].alive) continue;
        /* setup/teardown: stopped by abort(), its timeout, or a Ctrl-C that
         * came while it ran (teardown still runs after a graceful stop) */
        int late = w->call_deadline_ns && now >= w->call_deadline_ns;
        int interrupted = graceful && !w->call_graceful_at_start;
        if (stop_now || late || interrupted) {
            ll_vu_interrupt(&w->vus[0]);
            w->vus[0].alive = 0;
            w->active--;
        }
    }
}

#define PUBLISH_EVERY_US 1000000

static void publish(ll_loop *loop, void *ud) {
    ll_worker *w = ud;
    pthread_mutex_lock(&w->pub_mu);
    ll_shard_reset(w->published);
    ll_shard_merge(w->published, w->shard);
    pthread_mutex_unlock(&w->pub_mu);
    ll_timer_start(loop, &w->pub_timer, PUBLISH_EVERY_US);
}

void ll_worker_read_published(ll_worker *w, ll_shard *dst) {
    pthread_mutex_lock(&w->pub_mu);
    if (w->published) ll_shard_merge(dst, w->published);
    pthread_mutex_unlock(&w->pub_mu);
}

static void *thread_main(void *arg) {
    ll_worker *w = arg;
    if (w->run->setup_json) {
        char err[256];
        if (ll_json_push(w->L, w->run->setup_json, strlen(w->run->setup_json), err, sizeof(err)) == 0)
            w->setup_ref = luaL_ref(w->L, LUA_REGISTRYINDEX);
    }
    if (w->published) {
        ll_timer_init(&w->pub_timer, publish, w);
        ll_timer_start(w->loop, &w->pub_timer, PUBLISH_EVERY_US);
    }
    w->active = w->nscheds;
    for (int i = 0; i < w->nscheds; i++) ll_sched_begin(&w->scheds[i]);
    drive(w);
    if (w->published) ll_timer_stop(w->loop, &w->pub_timer);
    pthread_mutex_lock(&w->run->mu);
    w->run->finished++;
    pthread_cond_signal(&w->run->cv);
    pthread_mutex_unlock(&w->run->mu);
    return NULL;
}

int ll_worker_start_thread(ll_worker *w) {
    return pthread_create(&w->thread, NULL, thread_main, w) == 0 ? 0 : -1;
}

int ll_worker_join(ll_worker *w) { return pthread_join(w->thread, NULL); }

int ll_worker_call(ll_worker *w, const char *fname, const char *data_json, char **out_json, uint64_t timeout_us,
                   int timeout_rc) {
    lua_State *L = w->L;
    *out_json = NULL;
    lua_getglobal(L, fname);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_isfunction(L, -1)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s is a %s, expected a function", fname, luaL_typename(L, -1));
        lua_pop(L, 1);
        return w->rc = 107;
    }
    w->exec_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    w->setup_ref = LUA_NOREF;
    if (data_json) {
        if (ll_json_push(L, data_json, strlen(data_json), w->errmsg, sizeof(w->errmsg)) != 0) return w->rc = 107;
        w->setup_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    ll_vu *vu = &w->vus[0];
    if (!vu->w) ll_vu_init(vu, w, 0);
    w->nvus = 1;
    w->single = 1;
    w->call_deadline_ns = timeout_us ? ll_now_ns() + timeout_us * 1000 : 0;
    w->call_graceful_at_start = atomic_load(&w->run->interrupt) || atomic_load(&w->run->threshold_abort);
    int64_t cut_before = w->interrupted;
    vu->last_error = NULL;
    vu->next_start_ns = 0;
    vu->alive = 1;
    w->active = 1;
    ll_vu_start_iteration(vu);
    drive(w);

    int rc = 0;
    if (atomic_load(&w->run->aborted)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() aborted the test: %s", fname, w->run->abort_reason);
        rc = w->rc = 108;
    } else if (vu->last_error) { /* w->errmsg holds it */
        rc = w->rc = 107;
    } else if (w->interrupted != cut_before && atomic_load(&w->run->interrupt) && !w->call_graceful_at_start) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() interrupted", fname);
        rc = w->rc = 105;
    } else if (w->interrupted != cut_before) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() timed out after %.6gs", fname, (double)timeout_us / 1e6);
        rc = w->rc = timeout_rc;
    } else if (vu->result_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, vu->result_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, vu->result_ref);
        vu->result_ref = LUA_NOREF;
        char why[256] = "";
        if (!lua_isnil(L, -1)) *out_json = ll_json_encode(L, -1, why, sizeof(why));
        lua_pop(L, 1);
        if (!*out_json && why[0]) {
            snprintf(w->errmsg, sizeof(w->errmsg), "%s() returned a value that cannot be passed on: %s", fname, why);
            rc = w->rc = 107;
        }
    }
    luaL_unref(L, LUA_REGISTRYINDEX, w->exec_ref);
    if (w->setup_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, w->setup_ref);
    w->exec_ref = w->setup_ref = LUA_NOREF;
    return rc;
}
