/* execution.c -- luaload.execution, as k6/execution: the running VU
 * (vu), its scenario (scenario), this instance's counters (instance) and
 * the test (test.abort, test.fail, test.options). Each field is read when the script
 * reads it, from the running VU and the workers' counters; fields answer
 * to k6's camelCase names and to snake_case ones (idInTest, id_in_test).
 * Loading the module turns on the numbering of iterations in their
 * scenario (vu.c), so that scenario.iteration_in_test follows start order. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "loop.h"
#include "modules.h"
#include "script_host.h"
#include "state.h"

typedef struct field {
    const char *snake, *camel;
} field;

/* The index of key in fields (either spelling), or -1. */
static int field_index(const field *fields, const char *key) {
    for (int i = 0; fields[i].snake; i++)
        if (strcmp(key, fields[i].snake) == 0 || strcmp(key, fields[i].camel) == 0) return i;
    return -1;
}

static int read_only(lua_State *L) {
    return luaL_error(L, "luaload.execution: %s is read-only", lua_tostring(L, lua_upvalueindex(1)));
}

/* Pushes an empty table whose fields index answers (a closure over the
 * value at the top, which it replaces, when nup is 1); read-only. */
static void make_proxy(lua_State *L, const char *name, lua_CFunction index, int nup) {
    lua_newtable(L);
    lua_newtable(L);
    if (nup) {
        lua_pushvalue(L, -3);
        lua_pushcclosure(L, index, 1);
    } else {
        lua_pushcfunction(L, index);
    }
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, name);
    lua_pushcclosure(L, read_only, 1);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    if (nup) lua_remove(L, -2);
}

/* ---- vu ---- */

static const field VU_FIELDS[] = {
    {"id_in_test", "idInTest"},
    {"id_in_instance", "idInInstance"},
    {"iteration_in_instance", "iterationInInstance"},
    {"iteration_in_scenario", "iterationInScenario"},
    {NULL, NULL},
};

/* The running VU, or raises naming what needs one. */
static ll_vu *running_vu(lua_State *L, const char *what) {
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    if (!vu) luaL_error(L, "luaload.execution: %s is not available in the init context", what);
    return vu;
}

/* vu.tags[key]: the VU's own tag, else its scenario's */
static int tags_index(lua_State *L) {
    const char *key = luaL_checkstring(L, 2);
    const char *v = ll_vu_tag(running_vu(L, "vu.tags"), key);
    if (!v) return 0;
    lua_pushstring(L, v);
    return 1;
}

/* vu.tags[key] = value: a tag of the VU's samples from now on (strings,
 * numbers and booleans, as k6; nil removes it) */
static int tags_newindex(lua_State *L) {
    const char *key = luaL_checkstring(L, 2);
    ll_vu *vu = running_vu(L, "vu.tags");
    int t = lua_type(L, 3);
    if (t != LUA_TNIL && t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
        return luaL_error(L, "luaload.execution: vu.tags.%s: a tag must be a string, number or boolean, got %s", key,
                          luaL_typename(L, 3));
    if (!*key || strcmp(key, "group") == 0)
        return luaL_error(L, "luaload.execution: vu.tags: '%s' cannot be set", key);
    const char *v = NULL;
    if (t == LUA_TBOOLEAN) v = lua_toboolean(L, 3) ? "true" : "false";
    else if (t != LUA_TNIL) v = lua_tostring(L, 3);
    if (ll_vu_set_tag(vu, key, v) != 0) return luaL_error(L, "out of memory");
    return 0;
}

static int vu_index(lua_State *L) {
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "tags") == 0) {
        lua_pushvalue(L, lua_upvalueindex(1));
        return 1;
    }
    if (strcmp(key, "metrics") == 0) { /* k6's vu.metrics.tags: the same */
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_setfield(L, -2, "tags");
        return 1;
    }
    int f = field_index(VU_FIELDS, key);
    if (f < 0) return 0;
    char what[64];
    snprintf(what, sizeof(what), "vu.%s", key);
    ll_vu *vu = running_vu(L, what);
    lua_pushinteger(L, f == 0 ? ll_vu_id_in_test(vu) : f == 1 ? ll_vu_id(vu) : (lua_Integer)ll_vu_iteration(vu));
    return 1;
}

/* ---- scenario ---- */

static const field SCENARIO_FIELDS[] = {
    {"name", "name"},
    {"executor", "executor"},
    {"start_time", "startTime"},
    {"progress", "progress"},
    {"iteration_in_instance", "iterationInInstance"},
    {"iteration_in_test", "iterationInTest"},
    {NULL, NULL},
};

static int scenario_index(lua_State *L) {
    const char *key = luaL_checkstring(L, 2);
    int f = field_index(SCENARIO_FIELDS, key);
    if (f < 0) return 0;
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    const ll_scenario *sc = vu ? ll_vu_scenario(vu) : NULL;
    if (!sc)
        return luaL_error(L, "luaload.execution: scenario.%s is only available in a scenario's iterations "
                             "(not in init code, setup or teardown)", key);
    switch (f) {
    case 0: lua_pushstring(L, sc->name); break;
    case 1: lua_pushstring(L, ll_scenario_executor_name(sc->executor)); break;
    case 2: lua_pushnumber(L, (double)ll_worker_test_start_unix_ms(w) + (double)(sc->start_time_us / 1000)); break;
    case 3: lua_pushnumber(L, ll_vu_scenario_progress(vu)); break;
    case 4: lua_pushinteger(L, (lua_Integer)ll_vu_scenario_iteration(vu)); break;
    default: lua_pushinteger(L, (lua_Integer)ll_vu_iteration_in_test(vu)); break;
    }
    return 1;
}

/* ---- instance ---- */

static const field INSTANCE_FIELDS[] = {
    {"vus_active", "vusActive"},
    {"vus_initialized", "vusInitialized"},
    {"iterations_completed", "iterationsCompleted"},
    {"iterations_interrupted", "iterationsInterrupted"},
    {"current_test_run_duration", "currentTestRunDuration"},
    {NULL, NULL},
};

/* The counters of INSTANCE_FIELDS, in their order (then the duration). */
static const ll_instance_counter INSTANCE_COUNTERS[] = {
    LL_INSTANCE_VUS_ACTIVE,
    LL_INSTANCE_VUS_MADE,
    LL_INSTANCE_ITERATIONS_DONE,
    LL_INSTANCE_ITERATIONS_INTERRUPTED,
};

static int instance_index(lua_State *L) {
    int f = field_index(INSTANCE_FIELDS, luaL_checkstring(L, 2));
    if (f < 0) return 0;
    ll_worker *w = ll_state_worker(L);
    uint64_t t0 = w ? ll_worker_test_start_ns(w) : 0;
    if (!w) lua_pushinteger(L, 0);
    else if (f == 4) lua_pushnumber(L, t0 ? (double)(ll_loop_now_ns() - t0) / 1e6 : 0);
    else lua_pushinteger(L, (lua_Integer)ll_worker_instance_count(w, INSTANCE_COUNTERS[f]));
    return 1;
}

/* ---- test ---- */

/* A deep copy of the value at idx (tables; other values as they are). */
static void push_copy(lua_State *L, int idx, int depth) {
    if (lua_type(L, idx) != LUA_TTABLE || depth > 32) {
        lua_pushvalue(L, idx);
        return;
    }
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pushvalue(L, -2);
        push_copy(L, -2, depth + 1);
        lua_rawset(L, -5);
        lua_pop(L, 1);
    }
}

/* test.options: the script's options with what the run made of them (the
 * command line, the environment, k6's defaults) laid over them, key by
 * key; a fresh copy at each read, so the script cannot change the run's. */
static int push_options(lua_State *L) {
    lua_getglobal(L, "options");
    if (lua_type(L, -1) == LUA_TTABLE) push_copy(L, -1, 0);
    else lua_newtable(L);
    lua_remove(L, -2);
    ll_worker *w = ll_state_worker(L);
    const char *json = ll_worker_options_json(w);
    char err[128];
    if (!json || ll_json_push(L, json, strlen(json), err, sizeof(err)) != 0) return 1;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -5);
    }
    lua_pop(L, 1);
    return 1;
}

/* test.fail([message]): the test goes on, but luaload exits with 110 (as
 * k6's); the message is logged as an error, once per call */
static int l_test_fail(lua_State *L) {
    const char *msg = luaL_optstring(L, 1, "");
    ll_worker *w = ll_state_worker(L);
    if (w) ll_worker_mark_failed(w);
    lua_pushfstring(L, "luaload: test marked as failed%s%s\n", *msg ? ": " : "", msg);
    ll_state_write_line(L, stderr);
    return 0;
}

static int test_index(lua_State *L) {
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "options") == 0) return push_options(L);
    return 0;
}

int luaopen_luaload_execution(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    if (w) ll_worker_number_iterations(w);
    lua_newtable(L);
    lua_newtable(L); /* vu.tags */
    lua_newtable(L);
    lua_pushcfunction(L, tags_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, tags_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    make_proxy(L, "vu", vu_index, 1);
    lua_setfield(L, -2, "vu");
    make_proxy(L, "scenario", scenario_index, 0);
    lua_setfield(L, -2, "scenario");
    make_proxy(L, "instance", instance_index, 0);
    lua_setfield(L, -2, "instance");
    make_proxy(L, "test", test_index, 0);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.core");
    lua_call(L, 1, 1);
    lua_pushliteral(L, "abort");
    lua_getfield(L, -2, "abort");
    lua_rawset(L, -4);
    lua_pushliteral(L, "fail");
    lua_pushcfunction(L, l_test_fail);
    lua_rawset(L, -4);
    lua_pop(L, 1);
    lua_setfield(L, -2, "test");
    return 1;
}
