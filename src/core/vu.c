/* vu.c -- a virtual user: a coroutine in its worker's Lua state that runs one
 * iteration at a time, yielding whenever it waits (HTTP, sleep) and resumed
 * by the worker's loop. Iteration metrics and script errors are recorded
 * here; what the VU does next is the worker's decision. */
#include "worker.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>

static void new_coroutine(ll_vu *vu) {
    lua_State *L = vu->w->L;
    vu->co = lua_newthread(L);
    vu->co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

static void drop_coroutine(ll_vu *vu) {
    if (!vu->co) return;
    luaL_unref(vu->w->L, LUA_REGISTRYINDEX, vu->co_ref);
    vu->co = NULL;
    vu->co_ref = LUA_NOREF;
}

void ll_vu_init(ll_vu *vu, ll_worker *w, int id) {
    vu->w = w;
    vu->index = w->vu_count++;
    vu->id = id;
    vu->group_id = -1;
    vu->group_path = "";
    vu->result_ref = LUA_NOREF;
    vu->co_ref = LUA_NOREF;
    ll_timer_init(&vu->timer, NULL, vu);
    new_coroutine(vu);
}

void ll_vu_free(ll_vu *vu) {
    if (!vu->w) return;
    ll_timer_stop(vu->w->loop, &vu->timer);
    for (int i = 0; i < vu->nxfers; i++) ll_transfer_free(vu->xfers[i]);
    free(vu->xfers);
    free(vu->xfer_owner);
    if (vu->oneoff) ll_http_req_clear(vu->oneoff);
    free(vu->oneoff);
    drop_coroutine(vu);
    if (vu->result_ref != LUA_NOREF) luaL_unref(vu->w->L, LUA_REGISTRYINDEX, vu->result_ref);
    vu->w = NULL;
}

static void end_iteration(ll_vu *vu, int completed) {
    ll_worker *w = vu->w;
    vu->in_iteration = 0;
    vu->iteration++;
    vu->group_id = -1;
    vu->group_path = "";
    uint64_t now = ll_now_ns();
    /* a VU that goes straight on starts its next iteration now */
    vu->next_start_ns = vu->yielded ? now : 0;
    if (completed && !w->single) {
        ll_tag_source t = ll_vu_tag_source(vu);
        ll_shard_add(w->shard, LL_M_ITERATIONS, 1, &t);
        ll_shard_trend(w->shard, LL_M_ITERATION_DURATION, (int64_t)((now - vu->iter_start_ns) / 1000), &t);
        if (vu->scheduled_ns) /* from when it was due: what a user would have seen */
            ll_shard_trend(w->shard, LL_M_ITERATION_DURATION_CORRECTED, (int64_t)((now - vu->scheduled_ns) / 1000), &t);
    }
    ll_worker_vu_idle(w, vu);
}

/* Puts the VU's scenario __ENV in place when another scenario's is. */
static void use_env(ll_worker *w, const ll_vu *vu) {
    if (!vu->sched || vu->sched->env_ref == w->env_ref) return;
    lua_rawgeti(w->L, LUA_REGISTRYINDEX, vu->sched->env_ref);
    lua_setglobal(w->L, "__ENV");
    w->env_ref = vu->sched->env_ref;
}

static void run(ll_vu *vu, int nargs) {
    ll_worker *w = vu->w;
    use_env(w, vu);
    w->current = vu;
    int rc = lua_resume(vu->co, nargs);
    w->current = NULL;
    if (rc == LUA_YIELD) {
        vu->yielded = 1;
        return;
    }
    if (rc != 0 && atomic_load_explicit(&w->run->aborted, memory_order_relaxed)) {
        drop_coroutine(vu); /* luaload.abort() unwound it: not a script error */
        new_coroutine(vu);
        if (!w->single) w->interrupted++;
        end_iteration(vu, 0);
        return;
    } else if (rc != 0) {
        const char *msg = lua_tostring(vu->co, -1);
        char buf[128];
        if (!msg) {
            snprintf(buf, sizeof(buf), "(error object is a %s value)", luaL_typename(vu->co, -1));
            msg = buf;
        }
        if (w->single) { /* setup/teardown: the engine reports it */
            snprintf(w->errmsg, sizeof(w->errmsg), "%s", msg);
            vu->last_error = w->errmsg;
        } else {
            vu->last_error = ll_worker_error(w, msg);
        }
        drop_coroutine(vu); /* a coroutine that raised cannot be resumed */
        new_coroutine(vu);
    } else if (w->single && lua_gettop(vu->co) > 0) {
        lua_xmove(vu->co, w->L, 1);
        vu->result_ref = luaL_ref(w->L, LUA_REGISTRYINDEX);
    }
    if (vu->co) lua_settop(vu->co, 0);
    end_iteration(vu, 1);
}

void ll_vu_start_iteration(ll_vu *vu) {
    ll_worker *w = vu->w;
    lua_State *co = vu->co;
    int nargs = 0;
    lua_settop(co, 0);
    lua_rawgeti(co, LUA_REGISTRYINDEX, vu->sched ? vu->sched->exec_ref : w->exec_ref);
    if (w->setup_ref != LUA_NOREF) {
        lua_rawgeti(co, LUA_REGISTRYINDEX, w->setup_ref);
        nargs = 1;
    }
    vu->in_iteration = 1;
    vu->yielded = 0;
    vu->iter_start_ns = vu->next_start_ns ? vu->next_start_ns : ll_now_ns();
    vu->next_start_ns = 0;
    run(vu, nargs);
}

void ll_vu_resume(ll_vu *vu, int nargs) { run(vu, nargs); }

static void on_sleep_done(ll_loop *loop, void *ud) {
    (void)loop;
    run(ud, 0);
}

void ll_vu_sleep(ll_vu *vu, uint64_t us) {
    vu->timer.fn = on_sleep_done;
    ll_timer_start(vu->w->loop, &vu->timer, us);
}

void ll_vu_interrupt(ll_vu *vu) {
    if (!vu->in_iteration) return;
    ll_timer_stop(vu->w->loop, &vu->timer);
    for (int i = 0; i < vu->nxfers; i++)
        if (vu->xfers[i]) ll_transfer_cancel(vu->xfers[i]);
    drop_coroutine(vu);
    new_coroutine(vu);
    vu->w->interrupted++;
    vu->in_iteration = 0;
    vu->group_id = -1;
    vu->group_path = "";
}

ll_transfer *ll_vu_transfer(ll_vu *vu, int slot, uint64_t uid, const ll_client_opts *opts) {
    if (slot >= vu->nxfers) {
        int n = slot + 4;
        ll_transfer **x = realloc(vu->xfers, (size_t)n * sizeof(*x));
        if (!x) return NULL;
        vu->xfers = x;
        uint64_t *o = realloc(vu->xfer_owner, (size_t)n * sizeof(*o));
        if (!o) return NULL;
        vu->xfer_owner = o;
        for (int i = vu->nxfers; i < n; i++) {
            x[i] = NULL;
            o[i] = 0;
        }
        vu->nxfers = n;
    }
    if (vu->xfers[slot] && vu->xfer_owner[slot] != uid) { /* a collected client's */
        ll_transfer_free(vu->xfers[slot]);
        vu->xfers[slot] = NULL;
    }
    if (!vu->xfers[slot]) {
        vu->xfers[slot] = ll_transfer_new(vu->w->tp, vu->index / LL_VUS_PER_MULTI, opts);
        vu->xfer_owner[slot] = uid;
    }
    return vu->xfers[slot];
}
