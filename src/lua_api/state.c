/* state.c -- builds a worker's Lua state: standard libraries (print made
 * line-atomic), the C modules (luaload.core, .http, .json, .metrics) and
 * the built-in luaload.summary in package.preload, the require path
 * (script dir, LUALOAD_PATH, shipped lib/lua), __ENV, then runs the
 * script's init code once. */
#include "state.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit.h"
#include "hints.h"
#include "http_response.h"
#include "json.h"
#include "modules.h"
#include "script_host.h"
#include "xmalloc.h"

extern char **environ;

static char worker_key;

/* The worker of the state a thread asked for last, known by the state's
 * allocator data (one per state, as cheap to read as a field): a C
 * function called on every request then reads no registry entry. A
 * closed state's allocator data may come back with a new state, so the
 * entry holds only while no state was closed since it was made. */
static _Atomic unsigned states_closed;
static __thread struct {
    void *ud;
    ll_worker *w;
    unsigned closed;
} last_worker;

ll_worker *ll_state_worker(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    unsigned closed = atomic_load_explicit(&states_closed, memory_order_acquire);
    if (ud && ud == last_worker.ud && closed == last_worker.closed) return last_worker.w;
    lua_pushlightuserdata(L, &worker_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    ll_worker *w = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!w) return NULL; /* not yet set (ll_state_open): nothing to keep */
    last_worker.ud = ud;
    last_worker.w = w;
    last_worker.closed = closed;
    return w;
}

ll_lua_cache *ll_state_cache(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    return w ? ll_worker_lua_cache(w) : NULL;
}

void ll_state_close(lua_State *L) {
    atomic_fetch_add_explicit(&states_closed, 1, memory_order_acq_rel);
    lua_close(L);
}

/* Pushes "dir/?.lua;dir/?/init.lua;" for dir, or "dir;" when dir is already
 * a template containing '?'. Returns the number of values pushed. */
static int push_dir(lua_State *L, const char *dir, size_t len) {
    if (len == 0) return 0;
    if (memchr(dir, '?', len)) {
        lua_pushlstring(L, dir, len);
        lua_pushliteral(L, ";");
        lua_concat(L, 2);
        return 1;
    }
    lua_pushlstring(L, dir, len);
    const char *d = lua_tostring(L, -1);
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", d, d);
    lua_remove(L, -2);
    return 1;
}

static void set_package_path(lua_State *L, const ll_host_script *s) {
    int top = lua_gettop(L);
    if (s->path) {
        const char *slash = strrchr(s->path, '/');
        if (slash) push_dir(L, s->path, (size_t)(slash - s->path));
        else push_dir(L, ".", 1);
    }
    const char *extra = getenv("LUALOAD_PATH");
    while (extra && *extra) {
        const char *sep = strpbrk(extra, ":;");
        size_t n = sep ? (size_t)(sep - extra) : strlen(extra);
        push_dir(L, extra, n);
        extra = sep ? sep + 1 : NULL;
    }
    push_dir(L, s->lib_dir, strlen(s->lib_dir));
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    lua_remove(L, -2);
    lua_concat(L, lua_gettop(L) - top);
    lua_getglobal(L, "package");
    lua_insert(L, -2);
    lua_setfield(L, -2, "path");
    lua_settop(L, top);
}

static void preload(lua_State *L, const char *name, lua_CFunction open) {
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, open);
    lua_setfield(L, -2, name);
    lua_pop(L, 2);
}

/* luaload.summary, built into the binary (lib/lua/luaload/summary.lua,
 * embedded by CMake): the end of a run formats its summary without opening
 * a file, however many descriptors the test left in use, and without the
 * shipped lib/lua. */
extern const char ll_lua_summary[];
extern const size_t ll_lua_summary_len;

static int load_summary(lua_State *L) {
    if (luaL_loadbuffer(L, ll_lua_summary, ll_lua_summary_len, "@luaload/summary.lua") != 0) return lua_error(L);
    lua_pushvalue(L, 1); /* the module name, as require passes it */
    lua_call(L, 1, 1);
    return 1;
}

/* __ENV: the process environment, then -e KEY=VALUE on top (k6's order). */
static void set_env(lua_State *L, const ll_host_script *s) {
    lua_newtable(L);
    for (int pass = 0; pass < 2; pass++) {
        char **list = pass == 0 ? environ : s->env;
        int n = pass == 0 ? -1 : s->nenv;
        for (int i = 0; list && (n < 0 ? list[i] != NULL : i < n); i++) {
            const char *eq = strchr(list[i], '=');
            if (!eq) continue;
            lua_pushlstring(L, list[i], (size_t)(eq - list[i]));
            lua_pushstring(L, eq + 1);
            lua_rawset(L, -3);
        }
    }
    lua_setglobal(L, "__ENV");
}

/* print(...) as Lua's, but each call's line goes out in one write: the
 * workers' threads print at the same time, and Lua's print writes piece by
 * piece, mixing their lines. */
static int l_print(lua_State *L) {
    ll_guard_cstack(L, 1, "print");
    int n = lua_gettop(L);
    luaL_Buffer b;
    lua_getglobal(L, "tostring");
    int tostr = lua_gettop(L);
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        lua_pushvalue(L, tostr);
        lua_pushvalue(L, i);
        lua_call(L, 1, 1);
        if (!lua_isstring(L, -1)) return luaL_error(L, "'tostring' must return a string to 'print'");
        if (i > 1) luaL_addchar(&b, '\t');
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    ll_state_write_line(L, stdout);
    return 0;
}

void ll_state_write_line(lua_State *L, FILE *f) {
    size_t len = 0;
    const char *line = lua_tolstring(L, -1, &len);
    flockfile(f);
    fwrite(line, 1, len, f);
    fflush(f);
    funlockfile(f);
    lua_pop(L, 1);
}

/* _G's __index: k6's __VU (the running VU's id, 0 outside iterations) and
 * __ITER (its iteration, from 0); read when used, as the running VU
 * changes at every resume of a shared state. */
static int l_globals_index(lua_State *L) {
    const char *k = lua_tostring(L, 2);
    ll_worker *w = ll_state_worker(L);
    const ll_vu *vu = w ? ll_worker_current(w) : NULL;
    if (!k) return 0;
    if (strcmp(k, "__VU") == 0) lua_pushinteger(L, vu ? ll_vu_id(vu) : 0);
    else if (strcmp(k, "__ITER") == 0) lua_pushinteger(L, vu ? (lua_Integer)ll_vu_iteration(vu) : 0);
    else return 0;
    return 1;
}

static void install_vu_globals(lua_State *L) {
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_newtable(L);
    lua_pushcfunction(L, l_globals_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

/* An error outside any protected call (LuaJIT would print "PANIC" and
 * abort): the crash guard ends the run with the summary and exit 109. */
static int l_panic(lua_State *L) {
    ll_crash_panic(lua_tostring(L, -1));
    return 0;
}

int ll_state_open(ll_worker *w, int bare, char *err, size_t errlen) {
    const ll_host_script script = ll_worker_script(w);
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errlen, "cannot create a Lua state (out of memory)");
        return LL_EXIT_FAILURE;
    }
    ll_worker_set_lua(w, L);
    lua_atpanic(L, l_panic);
    free(ll_worker_lua_cache(w));
    ll_lua_cache *cache = ll_xcalloc(1, sizeof(*cache));
    cache->expected_counted = 1; /* k6's default callback */
    cache->status_check_id = -1;
    ll_worker_set_lua_cache(w, cache);
    luaL_openlibs(L);
    ll_http_response_register(L); /* before any script code: it takes the standard setmetatable */
    lua_pushcfunction(L, l_print);
    lua_setglobal(L, "print");
    ll_console_install(L);
    install_vu_globals(L);
    ll_random_open(L, w);
    lua_pushlightuserdata(L, &worker_key);
    lua_pushlightuserdata(L, w);
    lua_rawset(L, LUA_REGISTRYINDEX);
    set_package_path(L, &script);
    preload(L, "luaload.core", luaopen_luaload_core);
    preload(L, "luaload.http", luaopen_luaload_http);
    preload(L, "luaload.json", luaopen_luaload_json);
    preload(L, "luaload.metrics", luaopen_luaload_metrics);
    preload(L, "luaload.data", luaopen_luaload_data);
    preload(L, "luaload.encoding", luaopen_luaload_encoding);
    preload(L, "luaload.crypto", luaopen_luaload_crypto);
    preload(L, "luaload.jwt", luaopen_luaload_jwt);
    preload(L, "luaload.html", luaopen_luaload_html);
    preload(L, "luaload.execution", luaopen_luaload_execution);
    preload(L, "luaload.timers", luaopen_luaload_timers);
    preload(L, "luaload.ws", luaopen_luaload_ws);
    preload(L, "luaload.grpc", luaopen_luaload_grpc);
    preload(L, "luaload.websockets", luaopen_luaload_websockets);
    preload(L, "luaload.sse", luaopen_luaload_sse);
    preload(L, "luaload.summary", load_summary);
    set_env(L, &script);
    if (bare) return 0;
    if (ll_guard_install(L, err, errlen) != 0 || ll_coroutine_install(L, err, errlen) != 0) return LL_EXIT_FAILURE;

    int rc = script.source ? luaL_loadbuffer(L, script.source, strlen(script.source), script.chunkname)
                           : luaL_loadfile(L, script.path);
    if (rc == 0) rc = lua_pcall(L, 0, 0, 0);
    if (rc != 0) {
        const char *msg = lua_tostring(L, -1);
        if (msg) snprintf(err, errlen, "%s", msg);
        else snprintf(err, errlen, "(error object is a %s value)", luaL_typename(L, -1));
        ll_hint_append(err, errlen, 1, script.source ? NULL : script.path);
        return LL_EXIT_SCRIPT;
    }
    lua_settop(L, 0);
    return 0;
}
