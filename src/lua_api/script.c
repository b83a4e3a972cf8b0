/* script.c -- the Lua side of run/script.h: the one door through which the
 * engine, the workers, the executors and the VUs reach a worker's Lua
 * state (opening it, options, functions, __ENV tables, JSON values,
 * coroutines and the summary). */
#include "lua_api.h"

#include <cJSON.h>
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hints.h"
#include "json.h"
#include "options.h"
#include "script_host.h"
#include "state.h"

_Static_assert(LL_SCRIPT_NOREF == LUA_NOREF, "run/ passes LL_SCRIPT_NOREF for LUA_NOREF");

static int open_state(ll_worker *w, int bare) {
    char err[1024] = "";
    int rc = ll_state_open(w, bare, err, sizeof(err));
    if (rc) ll_worker_set_error(w, err);
    return rc;
}

static int script_open(ll_worker *w) { return open_state(w, 0); }

static int script_open_bare(ll_worker *w) { return open_state(w, 1); }

static void script_close(ll_worker *w) {
    free(ll_worker_lua_cache(w)); /* first: the __gc metamethods find no cache and read the registry */
    ll_worker_set_lua_cache(w, NULL);
    lua_State *L = ll_worker_lua(w);
    if (!L) return;
    lua_sethook(L, NULL, 0, 0); /* no stop in the __gc metamethods */
    ll_state_close(L);
    ll_worker_set_lua(w, NULL);
}

/* ---- stopping Lua code that does not yield ---- */

static char stop_key; /* the error value of a stop: cannot be forged in Lua */

static void stop_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_pushlightuserdata(L, &stop_key);
    lua_error(L);
}

static void script_stop(ll_worker *w) {
    lua_State *L = ll_worker_lua(w); /* NULL while the state is being made */
    if (L) lua_sethook(L, stop_hook, LUA_MASKCOUNT, 1000);
}

static void script_stop_clear(ll_worker *w) {
    lua_State *L = ll_worker_lua(w);
    if (L) lua_sethook(L, NULL, 0, 0);
}

static void script_collect(ll_worker *w) {
    lua_State *L = ll_worker_lua(w);
    if (L) lua_gc(L, LUA_GCCOLLECT, 0);
}

static int script_read_options(ll_worker *w, ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    return ll_options_read(ll_worker_lua(w), cfg, reg, err, errlen);
}

static int script_loaded(ll_worker *w, const char *name) {
    lua_State *L = ll_worker_lua(w);
    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED"); /* package.loaded, whatever the script did to package */
    int loaded = 0;
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, name);
        loaded = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return loaded;
}

static int script_function(ll_worker *w, const char *name, int *ref, const char **type) {
    lua_State *L = ll_worker_lua(w);
    lua_getglobal(L, name);
    int ok = lua_isfunction(L, -1);
    if (!ok && type) *type = luaL_typename(L, -1); /* a static string */
    if (ok && ref) {
        *ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return 1;
    }
    lua_pop(L, 1);
    return ok;
}

static int script_scenario_env(ll_worker *w, const ll_scenario *sc) {
    lua_State *L = ll_worker_lua(w);
    lua_newtable(L);
    lua_getglobal(L, "__ENV");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -5);
    }
    lua_pop(L, 1);
    for (int i = 0; i < sc->nenv; i++) {
        lua_pushstring(L, sc->env[i].value);
        lua_setfield(L, -2, sc->env[i].key);
    }
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

static void script_use_env(ll_worker *w, int env_ref) {
    lua_State *L = ll_worker_lua(w);
    lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref);
    lua_setglobal(L, "__ENV");
}

static int script_decode(ll_worker *w, const char *json, int *ref, char *err, size_t errlen) {
    lua_State *L = ll_worker_lua(w);
    if (ll_json_push(L, json, strlen(json), err, errlen) != 0) return -1;
    *ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static char *script_encode(ll_worker *w, int ref, char *err, size_t errlen) {
    lua_State *L = ll_worker_lua(w);
    char *out = NULL;
    if (errlen) err[0] = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    if (!lua_isnil(L, -1)) out = ll_json_encode(L, -1, err, errlen);
    lua_pop(L, 1);
    return out;
}

static void script_unref(ll_worker *w, int ref) {
    lua_State *L = ll_worker_lua(w);
    if (L && ref != LUA_NOREF && ref != LUA_REFNIL) luaL_unref(L, LUA_REGISTRYINDEX, ref);
}

/* ---- VU coroutines ---- */

static void script_vu_open(ll_vu *vu) {
    lua_State *L = ll_worker_lua(ll_vu_worker(vu));
    lua_State *co = lua_newthread(L);
    ll_vu_set_co(vu, co, luaL_ref(L, LUA_REGISTRYINDEX));
}

static void script_vu_close(ll_vu *vu) {
    if (!ll_vu_co(vu)) return;
    script_unref(ll_vu_worker(vu), ll_vu_co_ref(vu));
    ll_vu_set_co(vu, NULL, LUA_NOREF);
}

static int script_vu_call(ll_vu *vu, int fn_ref, int arg_ref) {
    lua_State *co = ll_vu_co(vu);
    lua_settop(co, 0);
    lua_rawgeti(co, LUA_REGISTRYINDEX, fn_ref);
    if (arg_ref == LUA_NOREF) return 0;
    lua_rawgeti(co, LUA_REGISTRYINDEX, arg_ref);
    return 1;
}

/* Whether msg starts with a position, "chunk:line:" as error() puts it. */
static int has_position(const char *msg) {
    const char *c = strchr(msg, ':');
    if (!c || c == msg || memchr(msg, '\n', (size_t)(c - msg))) return 0;
    size_t digits = strspn(c + 1, "0123456789");
    return digits > 0 && c[1 + digits] == ':';
}

/* " (at chunk:line)": the innermost frame of the failed coroutine co with
 * a line, for an error raised without a position (LuaJIT's "stack
 * overflow" and "not enough memory" have none). "" when there is none. */
static void error_position(lua_State *co, char *buf, size_t len) {
    lua_Debug ar;
    buf[0] = 0;
    for (int level = 0; lua_getstack(co, level, &ar); level++) {
        if (!lua_getinfo(co, "Sl", &ar) || ar.currentline <= 0) continue;
        snprintf(buf, len, " (at %s:%d)", ar.short_src, ar.currentline);
        return;
    }
}

static int script_vu_resume(ll_vu *vu, int nargs, char *err, size_t errlen) {
    lua_State *co = ll_vu_co(vu);
    int rc = lua_resume(co, nargs);
    if (rc == LUA_YIELD) return LL_SCRIPT_YIELDED;
    if (rc == 0) return LL_SCRIPT_RETURNED;
    if (lua_touserdata(co, -1) == &stop_key) return LL_SCRIPT_STOPPED;
    const char *msg = lua_tostring(co, -1);
    char at[300] = "";
    if (!msg || !has_position(msg)) error_position(co, at, sizeof(at));
    if (msg) snprintf(err, errlen, "%s%s", msg, at);
    else snprintf(err, errlen, "(error object is a %s value)%s", luaL_typename(co, -1), at);
    ll_hint_append(err, errlen, 0, NULL);
    return LL_SCRIPT_FAILED;
}

static int script_vu_result(ll_vu *vu, int keep) {
    lua_State *co = ll_vu_co(vu);
    lua_State *L = ll_worker_lua(ll_vu_worker(vu));
    int ref = LUA_NOREF;
    if (keep && lua_gettop(co) > 0) {
        lua_xmove(co, L, 1);
        ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_settop(co, 0);
    return ref;
}

/* ---- the summary ---- */

static const char *error_text(lua_State *L) {
    if (lua_touserdata(L, -1) == &stop_key) return "stopped: it ran past the end of the test without returning";
    const char *msg = lua_tostring(L, -1);
    return msg ? msg : "(error object is not a string)";
}

/* Writes one entry of handle_summary's result: stdout, stderr or a file.
 * A closed stdout (EPIPE: luaload run ... | head) is no failure: what
 * reads it wanted no more, and the run's files and exit code stand. */
static int write_output(const char *dest, const char *text, size_t len) {
    if (strcmp(dest, "stdout") == 0)
        return (fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0) || errno == EPIPE ? 0 : -1;
    if (strcmp(dest, "stderr") == 0) return fwrite(text, 1, len, stderr) == len ? 0 : -1;
    FILE *f = fopen(dest, "w");
    if (!f) return -1;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The end-of-test summary: handle_summary(data) when the script has one
 * (its result maps stdout, stderr or file paths to text), else the text
 * summary of luaload.summary. A handle_summary that fails or returns
 * something else than a table (or nil: nothing to write) falls back to the
 * text summary, as k6. Returns 0, or -1 when an output could not be written. */
static int script_summary(ll_worker *w, const cJSON *data) {
    lua_State *L = ll_worker_lua(w);
    int rc = 0;
    lua_getglobal(L, "handle_summary");
    if (lua_isfunction(L, -1)) {
        ll_json_push_cjson(L, data);
        if (lua_pcall(L, 1, 1, 0) == 0) {
            if (lua_istable(L, -1)) {
                lua_pushnil(L);
                while (lua_next(L, -2)) {
                    size_t len;
                    const char *text = lua_tolstring(L, -1, &len);
                    const char *dest = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
                    if (!dest || !text) {
                        fprintf(stderr, "luaload: handle_summary() must return a table of destination = text\n");
                        rc = -1;
                    } else if (write_output(dest, text, len) != 0) {
                        fprintf(stderr, "luaload: handle_summary(): cannot write %s: %s\n", dest, strerror(errno));
                        rc = -1;
                    }
                    lua_pop(L, 1);
                }
                lua_settop(L, 0);
                return rc;
            }
            if (lua_isnil(L, -1)) { /* nothing to write */
                lua_settop(L, 0);
                return 0;
            }
            fprintf(stderr,
                    "luaload: handle_summary() must return a table of destination = text, got %s: "
                    "printing the default summary\n",
                    luaL_typename(L, -1));
        } else {
            fprintf(stderr, "luaload: handle_summary() failed, printing the default summary: %s\n", error_text(L));
        }
    }
    lua_settop(L, 0);
    lua_getglobal(L, "require");
    lua_pushstring(L, "luaload.summary");
    if (lua_pcall(L, 1, 1, 0) == 0) {
        lua_getfield(L, -1, "text");
        ll_json_push_cjson(L, data);
        if (lua_pcall(L, 1, 1, 0) == 0) {
            fputs(lua_tostring(L, -1), stdout);
            fflush(stdout);
            lua_settop(L, 0);
            return 0;
        }
    }
    fprintf(stderr, "luaload: cannot format the summary: %s\n", error_text(L));
    lua_settop(L, 0);
    return -1;
}


const char *ll_lua_luajit_version(void) {
    static char v[64];
    lua_State *L = luaL_newstate(); /* the library's own jit.version, not the header's */
    snprintf(v, sizeof(v), "%s", LUAJIT_VERSION);
    if (!L) return v;
    luaL_openlibs(L);
    lua_getglobal(L, "jit");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "version");
        if (lua_isstring(L, -1)) snprintf(v, sizeof(v), "%s", lua_tostring(L, -1));
    }
    ll_state_close(L);
    return v;
}

const ll_script_ops ll_lua_script = {
    .open = script_open,
    .open_bare = script_open_bare,
    .close = script_close,
    .stop = script_stop,
    .stop_clear = script_stop_clear,
    .collect = script_collect,
    .read_options = script_read_options,
    .loaded = script_loaded,
    .function = script_function,
    .scenario_env = script_scenario_env,
    .use_env = script_use_env,
    .decode = script_decode,
    .encode = script_encode,
    .unref = script_unref,
    .vu_open = script_vu_open,
    .vu_close = script_vu_close,
    .vu_call = script_vu_call,
    .vu_resume = script_vu_resume,
    .vu_result = script_vu_result,
    .summary = script_summary,
};
