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

int ll_worker_init(ll_worker *w, ll_run *run, int index, int nvus, int first_vu_id) {
    memset(w, 0, sizeof(*w));
    w->index = index;
    w->run = run;
    w->setup_ref = LUA_NOREF;
    w->exec_ref = LUA_NOREF;
    w->iters_left = -1;
    w->first_vu_id = first_vu_id;
    w->loop = ll_loop_new();
    w->shard = ll_shard_new(run->reg);
    pthread_mutex_init(&w->pub_mu, NULL);
    if (run->publish && !(w->published = ll_shard_new(run->reg))) {
        snprintf(w->errmsg, sizeof(w->errmsg), "out of memory starting worker %d", index);
        return w->rc = 1;
    }
    w->tp = w->loop ? ll_transport_new(w->loop, (nvus + LL_VUS_PER_MULTI - 1) / LL_VUS_PER_MULTI) : NULL;
    w->vus = calloc((size_t)(nvus > 0 ? nvus : 1), sizeof(ll_vu));
    if (!w->loop || !w->shard || !w->tp || !w->vus) {
        snprintf(w->errmsg, sizeof(w->errmsg), "out of memory starting worker %d", index);
        return w->rc = 1;
    }
    int rc = ll_state_open(w, w->errmsg, sizeof(w->errmsg));
    if (rc) return w->rc = rc;
    w->nvus = nvus;
    for (int i = 0; i < nvus; i++) ll_vu_init(&w->vus[i], w, i, first_vu_id + i);
    return 0;
}

void ll_worker_free(ll_worker *w) {
    for (int i = 0; i < w->nvus; i++) ll_vu_free(&w->vus[i]);
    free(w->vus);
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

static int can_start(ll_worker *w) {
    if (w->stopping || w->iters_left == 0 || ll_run_stopped(w->run)) return 0;
    if (w->end_ns && ll_loop_now(w->loop) >= w->end_ns) return 0;
    return 1;
}

static void start_or_retire(ll_vu *vu) {
    ll_worker *w = vu->w;
    if (!can_start(w)) {
        vu->alive = 0;
        w->active--;
        return;
    }
    if (w->iters_left > 0) w->iters_left--;
    ll_vu_start_iteration(vu);
}

static void on_deferred_start(ll_loop *loop, void *ud) {
    (void)loop;
    start_or_retire(ud);
}

void ll_worker_vu_idle(ll_worker *w, ll_vu *vu) {
    if (w->single) {
        vu->alive = 0;
        w->active--;
        return;
    }
    /* An iteration that never waited would starve the other VUs if the next
     * one started right away: give the loop a turn first. */
    if (!vu->yielded) {
        vu->timer.fn = on_deferred_start;
        ll_timer_start(w->loop, &vu->timer, 0);
        return;
    }
    start_or_retire(vu);
}

static void interrupt_all(ll_worker *w) {
    for (int i = 0; i < w->nvus; i++) {
        ll_vu *vu = &w->vus[i];
        if (!vu->alive) continue;
        ll_vu_interrupt(vu);
        ll_timer_stop(w->loop, &vu->timer);
        vu->alive = 0;
        w->active--;
    }
}

/* Runs the loop until every VU retired. */
static void drive(ll_worker *w) {
    while (w->active > 0) {
        ll_loop_turn(w->loop, 100);
        uint64_t now = ll_loop_now(w->loop);
        if (ll_run_stopped(w->run)) {
            w->stopping = 1;
            interrupt_all(w);
        }
        if (w->end_ns && now >= w->end_ns) w->stopping = 1;
        if (w->hard_end_ns && now >= w->hard_end_ns) interrupt_all(w);
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
    lua_getglobal(w->L, w->run->exec);
    w->exec_ref = luaL_ref(w->L, LUA_REGISTRYINDEX);
    if (w->run->setup_json) {
        char err[256];
        if (ll_json_push(w->L, w->run->setup_json, strlen(w->run->setup_json), err, sizeof(err)) == 0)
            w->setup_ref = luaL_ref(w->L, LUA_REGISTRYINDEX);
    }
    w->active = w->nvus;
    for (int i = 0; i < w->nvus; i++) w->vus[i].alive = 1;
    if (w->published) {
        ll_timer_init(&w->pub_timer, publish, w);
        ll_timer_start(w->loop, &w->pub_timer, PUBLISH_EVERY_US);
    }
    for (int i = 0; i < w->nvus; i++) start_or_retire(&w->vus[i]);
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

int ll_worker_call(ll_worker *w, const char *fname, const char *data_json, char **out_json) {
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
    if (!vu->w) ll_vu_init(vu, w, 0, 0);
    w->nvus = 1;
    w->single = 1;
    w->stopping = 0;
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
    } else if (atomic_load(&w->run->interrupt)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() interrupted", fname);
        rc = w->rc = 105;
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
