/* luaload.c -- luaload.core, the C half of require("luaload"): sleep, check
 * recording, group enter/leave, the running VU's id and iteration, and the
 * yield every wait (HTTP, sleep) ends with. The
 * user-facing module (check, group with their Lua control flow) is
 * lib/lua/luaload.lua. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "modules.h"
#include "script_host.h"
#include "state.h"

ll_vu *ll_luaload_vu(lua_State *L, const char *what) {
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    if (!vu) luaL_error(L, "%s is not available in the init context", what);
    return vu;
}

ll_vu *ll_luaload_waiting_vu(lua_State *L, const char *what) {
    ll_vu *vu = ll_luaload_vu(L, what);
    if (!ll_vu_running(vu))
        luaL_error(L, "%s cannot wait inside on_chunk: it runs while the response arrives (start an "
                      "http.async_request there, or keep the data for later)", what);
    return vu;
}

/* The wait token: the first value every wait yields. luaload.coroutine
 * (lib/lua/luaload/coroutine.lua) passes a yield that carries it up
 * through the script's own coroutines to the VU's, whose yield goes to the
 * worker. It cannot be made in Lua. */
static char wait_token;

void ll_luaload_push_wait_token(lua_State *L) { lua_pushlightuserdata(L, &wait_token); }

int ll_luaload_wait(lua_State *L, ll_vu *vu) {
    if (!lua_isyieldable(L)) { /* lua_yield would raise with the wait still registered */
        ll_vu_task_cancel_wait(ll_vu_running(vu));
        return luaL_error(L, "cannot wait (an HTTP request, sleep) inside a C function such as table.sort or "
                             "string.gsub");
    }
    ll_luaload_push_wait_token(L);
    return lua_yield(L, 1);
}

/* Check ids are cached per worker in the registry under &checks_key (a
 * light userdata key: no string interned per check), made on first use:
 * [group id + 2] -> { check name -> id, [-status] -> id }. Pushes the
 * current group's table. */
static char checks_key;

static void push_check_cache(lua_State *L, ll_vu *vu) {
    lua_pushlightuserdata(L, &checks_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushlightuserdata(L, &checks_key);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    int group = ll_vu_group_id(vu);
    lua_rawgeti(L, -1, group + 2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, group + 2);
    }
    lua_remove(L, -2);
}

/* The tags of a check sample: the script's (check's third argument), check
 * (its name) and group. */
typedef struct check_sample {
    const char *name; /* NULL: "status is <status>", made only if asked */
    int status;
    const ll_vu *vu;
    lua_State *L;
    int tags;         /* stack index of the script's tags, 0: none */
} check_sample;

static const char *check_tag(const void *ctx, const char *key, char *buf, size_t len) {
    const check_sample *c = ctx;
    if (c->tags && strcmp(key, "check") != 0 && ll_lua_tags_get(c->L, c->tags, key, buf, len)) return buf;
    if (strcmp(key, "group") == 0) return ll_vu_group_path(c->vu);
    if (strcmp(key, "check") != 0) return ll_vu_tag(c->vu, key);
    if (c->name) return c->name;
    snprintf(buf, len, "status is %d", c->status);
    return buf;
}

static void check_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const check_sample *c = ctx;
    char buf[256];
    int has_group = c->tags ? ll_lua_tags_each(c->L, c->tags, "check", fn, ud) : 0;
    fn(ud, "check", check_tag(ctx, "check", buf, sizeof(buf)));
    if (!has_group) fn(ud, "group", ll_vu_group_path(c->vu));
    ll_vu_tags(c->vu, fn, ud);
}

static void record(ll_vu *vu, int id, const char *name, int status, int ok, lua_State *L, int tags) {
    if (id < 0) return;
    check_sample c = {name, status, vu, L, tags};
    ll_tag_source t = {check_tag, check_list, &c, -1, 0};
    ll_vu_check(vu, id, ok, &t);
}

/* A check past the registry's bound is the group's "(other)": its id is not
 * cached under its name (the cache would grow with every new name), and its
 * samples carry check "(other)" (the outputs would keep a tag set for each). */
void ll_luaload_record_check(lua_State *L, ll_vu *vu, const char *name, int ok, int tags) {
    push_check_cache(L, vu);
    lua_getfield(L, -1, name);
    int id, folded = 0;
    if (lua_isnumber(L, -1)) {
        id = (int)lua_tointeger(L, -1);
    } else {
        id = ll_vu_check_id(vu, name, &folded);
        if (!folded) {
            lua_pushinteger(L, id);
            lua_setfield(L, -3, name);
        }
    }
    lua_pop(L, 2);
    record(vu, id, folded ? LL_REGISTRY_OTHER : name, 0, ok, L, tags);
}

void ll_luaload_record_status_check(lua_State *L, ll_vu *vu, int status, int ok) {
    ll_lua_cache *c = ll_state_cache(L);
    int group = ll_vu_group_id(vu);
    if (c && c->status_check_id >= 0 && c->status_check_group == group && c->status_check_status == status) {
        record(vu, c->status_check_id, NULL, status, ok, L, 0); /* the check of the last call: no lookup */
        return;
    }
    push_check_cache(L, vu);
    lua_rawgeti(L, -1, -status);
    int id, folded = 0;
    if (lua_isnumber(L, -1)) {
        id = (int)lua_tointeger(L, -1);
    } else {
        char name[48];
        snprintf(name, sizeof(name), "status is %d", status);
        id = ll_vu_check_id(vu, name, &folded);
        if (!folded) {
            lua_pushinteger(L, id);
            lua_rawseti(L, -3, -status);
        }
    }
    lua_pop(L, 2);
    if (c && id >= 0 && !folded) {
        c->status_check_id = id;
        c->status_check_group = group;
        c->status_check_status = status;
    }
    record(vu, id, folded ? LL_REGISTRY_OTHER : NULL, status, ok, L, 0);
}

/* sleep(s): the VU's timer resumes it; an interrupt stops the timer
 * through the VU's pending-operation slot. */
static int l_sleep(lua_State *L) {
    double s = luaL_checknumber(L, 1);
    if (s != s) return luaL_argerror(L, 1, "a number of seconds, got nan");
    ll_vu *vu = ll_luaload_waiting_vu(L, "sleep()");
    if (s < 0) s = 0;
    /* at most the longest duration: the timer's deadline in ns fits in 64 bits */
    uint64_t us = s * 1e6 < (double)LL_DURATION_MAX_US ? (uint64_t)(s * 1e6) : LL_DURATION_MAX_US;
    ll_vu_wait_timer(vu, us);
    return ll_luaload_wait(L, vu);
}

static int l_check(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    ll_vu *vu = ll_luaload_vu(L, "check()");
    int tags = lua_istable(L, 3) ? 3 : 0;
    if (!tags && !lua_isnoneornil(L, 3)) return luaL_error(L, "check: the tags must be a table, got %s", luaL_typename(L, 3));
    ll_luaload_record_check(L, vu, name, lua_toboolean(L, 2), tags);
    return 0;
}

/* group_enter(name) -> previous group id, start time (ns) */
static int l_group_enter(lua_State *L) {
    size_t len;
    const char *name = luaL_checklstring(L, 1, &len);
    ll_vu *vu = ll_luaload_vu(L, "group()");
    if (len == 0 || strstr(name, "::")) return luaL_error(L, "group name must be non-empty and not contain '::'");
    int prev = ll_vu_group_id(vu);
    lua_pushfstring(L, "%s::%s", ll_vu_group_path(vu), name);
    if (ll_vu_group_enter(vu, lua_tostring(L, -1)) < 0) return luaL_error(L, "out of memory registering group %s", name);
    lua_pushinteger(L, prev);
    lua_pushnumber(L, (double)ll_loop_now_ns());
    return 2;
}

/* group_leave(previous id, start time) records group_duration */
static int l_group_leave(lua_State *L) {
    int prev = (int)luaL_checkinteger(L, 1);
    double start = luaL_checknumber(L, 2);
    ll_vu_group_leave(ll_luaload_vu(L, "group()"), prev, start);
    return 0;
}

/* abort(reason): stops the whole test (exit 108) and unwinds the caller. */
static int l_abort(lua_State *L) {
    const char *reason = luaL_optstring(L, 1, "");
    ll_worker *w = ll_state_worker(L);
    lua_pushfstring(L, "test aborted: %s", ll_worker_abort(w, reason));
    return lua_error(L);
}

/* The script's directory ("." in quick mode), for open(). */
static int l_script_dir(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    const char *p = ll_worker_script(w).path;
    const char *slash = p ? strrchr(p, '/') : NULL;
    if (slash) lua_pushlstring(L, p, (size_t)(slash - p));
    else lua_pushliteral(L, ".");
    return 1;
}

static int l_in_init(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    lua_pushboolean(L, w && !ll_worker_current(w));
    return 1;
}

static int l_vu_id(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    lua_pushinteger(L, vu ? ll_vu_id(vu) : 0);
    return 1;
}

static int l_vu_iteration(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    lua_pushinteger(L, vu ? (lua_Integer)ll_vu_iteration(vu) : 0);
    return 1;
}

static int l_worker_id(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    lua_pushinteger(L, w ? ll_worker_index(w) : 0);
    return 1;
}

int luaopen_luaload_core(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"sleep", l_sleep},
        {"check", l_check},
        {"group_enter", l_group_enter},
        {"group_leave", l_group_leave},
        {"vu_id", l_vu_id},
        {"vu_iteration", l_vu_iteration},
        {"worker_id", l_worker_id},
        {"abort", l_abort},
        {"script_dir", l_script_dir},
        {"in_init", l_in_init},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
