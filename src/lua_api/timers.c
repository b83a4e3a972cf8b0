/* timers.c -- luaload.timers, k6/timers in Lua: set_timeout(fn, ms, ...),
 * clear_timeout(id), set_interval(fn, ms, ...), clear_interval(id) (and
 * k6's camelCase names). A timer is one of its VU's pending things
 * (script_host.h): the iteration goes on until it fired or was cleared,
 * and an interrupt cancels it. When it fires, its callback runs as a task
 * of its own (a coroutine of the VU, which may make requests and sleep);
 * an error in it fails the iteration. Timers live in the worker's state,
 * found by id through a registry table (ids are unique in the worker). */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>

#include "modules.h"
#include "script_host.h"
#include "state.h"
#include "xmalloc.h"

typedef struct lua_timer {
    ll_vu_pending pending;      /* first: the VU's list holds it */
    ll_timer timer;
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int id;
    int call_ref;               /* { fn, arg1, ..., n = nargs } in the registry */
    uint64_t interval_us;       /* 0: fires once */
} lua_timer;

static char timers_key; /* registry: { [id] = lua_timer*, n = last id } */

static void push_timers(lua_State *L) {
    lua_pushlightuserdata(L, &timers_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, &timers_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/* Forgets t: out of the id table, its callback unreferenced, freed. */
static void timer_free(lua_timer *t) {
    lua_State *L = t->L;
    ll_loop_timer_stop(ll_worker_loop(ll_vu_worker(t->vu)), &t->timer);
    push_timers(L);
    lua_pushnil(L);
    lua_rawseti(L, -2, t->id);
    lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, t->call_ref);
    free(t);
}

/* The VU's iteration was cut (or failed): the timer never fires. */
static void timer_cancel(void *ud) { timer_free(ud); }

static void timer_fire(ll_loop *loop, void *ud) {
    lua_timer *t = ud;
    ll_vu *vu = t->vu;
    lua_State *L = t->L;
    lua_State *co = lua_newthread(L);
    int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_rawgeti(co, LUA_REGISTRYINDEX, t->call_ref);
    int call = lua_gettop(co);
    lua_getfield(co, call, "n");
    int nargs = (int)lua_tointeger(co, -1);
    lua_pop(co, 1);
    for (int i = 1; i <= nargs + 1; i++) lua_rawgeti(co, call, i);
    lua_remove(co, call);
    if (t->interval_us) { /* again in interval_us, still pending */
        ll_loop_timer_start(loop, &t->timer, t->interval_us);
    } else {
        ll_vu_pending_del(vu, &t->pending);
        timer_free(t);
    }
    /* t may be gone from here on: a callback that fails drops the VU's
     * pending things, this interval's too */
    ll_vu_task_start(vu, co, co_ref, nargs);
}

static int start(lua_State *L, const char *what, int repeat) {
    ll_vu *vu = ll_luaload_vu(L, what);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    double ms = luaL_optnumber(L, 2, 0);
    if (ms != ms || ms < 0) ms = 0; /* as JavaScript's timers: at once */
    if (ms > 1e12) ms = 1e12;
    int nargs = lua_gettop(L) > 2 ? lua_gettop(L) - 2 : 0;
    lua_createtable(L, nargs + 1, 1);
    for (int i = 0; i <= nargs; i++) {
        lua_pushvalue(L, i == 0 ? 1 : i + 2);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushinteger(L, nargs);
    lua_setfield(L, -2, "n");
    lua_timer *t = ll_xcalloc(1, sizeof(*t));
    t->call_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    t->vu = vu;
    t->L = ll_worker_lua(ll_vu_worker(vu));
    uint64_t us = (uint64_t)(ms * 1000);
    /* an interval of 0 would fire at every turn of the loop: k6's floor is 1 ms */
    t->interval_us = repeat ? (us ? us : 1000) : 0;
    push_timers(L);
    lua_getfield(L, -1, "n");
    t->id = (int)lua_tointeger(L, -1) + 1;
    lua_pop(L, 1);
    lua_pushinteger(L, t->id);
    lua_setfield(L, -2, "n");
    lua_pushlightuserdata(L, t);
    lua_rawseti(L, -2, t->id);
    lua_pop(L, 1);
    ll_loop_timer_init(&t->timer, timer_fire, t);
    ll_loop_timer_start(ll_worker_loop(ll_vu_worker(vu)), &t->timer, repeat ? t->interval_us : us);
    ll_vu_pending_add(vu, &t->pending, timer_cancel, t);
    lua_pushinteger(L, t->id);
    return 1;
}

static int clear(lua_State *L, const char *what) {
    ll_vu *vu = ll_luaload_vu(L, what);
    if (lua_isnoneornil(L, 1)) return 0;
    lua_Integer id = luaL_checkinteger(L, 1);
    push_timers(L);
    lua_rawgeti(L, -1, (int)id);
    lua_timer *t = lua_touserdata(L, -1);
    lua_pop(L, 2);
    if (!t || t->vu != vu) return 0; /* fired, cleared, or another VU's: nothing to do, as in k6 */
    ll_vu_pending_del(vu, &t->pending);
    timer_free(t);
    return 0;
}

static int l_set_timeout(lua_State *L) { return start(L, "set_timeout()", 0); }
static int l_set_interval(lua_State *L) { return start(L, "set_interval()", 1); }
static int l_clear_timeout(lua_State *L) { return clear(L, "clear_timeout()"); }
static int l_clear_interval(lua_State *L) { return clear(L, "clear_interval()"); }

int luaopen_luaload_timers(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"set_timeout", l_set_timeout},     {"setTimeout", l_set_timeout},
        {"clear_timeout", l_clear_timeout}, {"clearTimeout", l_clear_timeout},
        {"set_interval", l_set_interval},   {"setInterval", l_set_interval},
        {"clear_interval", l_clear_interval}, {"clearInterval", l_clear_interval},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
