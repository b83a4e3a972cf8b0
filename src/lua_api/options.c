/* options.c -- the script's `options` table -> ll_config (k6 option names). */
#include "options.h"

#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

static int get_count(lua_State *L, const char *key, int64_t *out, char *err, size_t errlen) {
    double v = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || v < 1 || v != floor(v) || v > 9e15) {
        snprintf(err, errlen, "options.%s: expected an integer >= 1, got %s", key,
                 lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    *out = (int64_t)v;
    return 0;
}

/* A duration: a string such as "30s", or a number of milliseconds (k6). */
static int get_duration(lua_State *L, const char *key, uint64_t *out, char *err, size_t errlen) {
    if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) >= 0) {
        *out = (uint64_t)(lua_tonumber(L, -1) * 1000);
        return 0;
    }
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (!s || ll_duration_parse(s, out) != 0) {
        snprintf(err, errlen, "options.%s: expected a duration such as \"30s\" or \"1m30s\", got %s", key,
                 s ? s : luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    return 0;
}

/* One threshold: "expr" or { threshold = "expr", abortOnFail = b, delayAbortEval = "10s" } */
static int read_threshold(lua_State *L, ll_config *cfg, ll_registry *reg, const char *key, char *err,
                          size_t errlen) {
    if (lua_type(L, -1) == LUA_TSTRING)
        return ll_thresholds_add(&cfg->thresholds, reg, key, lua_tostring(L, -1), 0, 0, err, errlen) ? LL_EXIT_CONFIG : 0;
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.thresholds[\"%s\"]: expected a string such as \"p(95)<200\" or a table "
                              "{ threshold = ..., abortOnFail = ..., delayAbortEval = ... }, got %s", key,
                 luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        lua_pop(L, 1);
        if (strcmp(k, "threshold") != 0 && strcmp(k, "abortOnFail") != 0 && strcmp(k, "delayAbortEval") != 0) {
            snprintf(err, errlen, "options.thresholds[\"%s\"]: unknown key '%s' (expected threshold, abortOnFail, "
                                  "delayAbortEval)", key, k);
            lua_pop(L, 1);
            return LL_EXIT_CONFIG;
        }
    }
    lua_getfield(L, t, "threshold");
    const char *src = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_getfield(L, t, "abortOnFail");
    int abort_on_fail = lua_toboolean(L, -1);
    lua_getfield(L, t, "delayAbortEval");
    uint64_t delay = 0;
    int rc = 0;
    if (!src) {
        snprintf(err, errlen, "options.thresholds[\"%s\"]: missing threshold = \"...\" in the table form", key);
        rc = LL_EXIT_CONFIG;
    } else if (!lua_isnil(L, -1)) {
        const char *d = lua_tostring(L, -1);
        if (!d || ll_duration_parse(d, &delay) != 0) {
            snprintf(err, errlen, "options.thresholds[\"%s\"]: delayAbortEval: expected a duration such as \"10s\"",
                     key);
            rc = LL_EXIT_CONFIG;
        }
    }
    if (!rc && ll_thresholds_add(&cfg->thresholds, reg, key, src, abort_on_fail, delay, err, errlen) != 0)
        rc = LL_EXIT_CONFIG;
    lua_settop(L, t);
    return rc;
}

/* thresholds = { metric_key = "expr" | { "expr", {...}, ... } } */
static int read_thresholds(lua_State *L, ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.thresholds: expected a table, got %s", luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L), rc = 0;
    lua_pushnil(L);
    while (rc == 0 && lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            snprintf(err, errlen, "options.thresholds: keys must be metric names");
            rc = LL_EXIT_CONFIG;
            break;
        }
        const char *key = lua_tostring(L, -2);
        if (lua_istable(L, -1) && lua_objlen(L, -1) > 0) {
            int list = lua_gettop(L);
            for (int i = 1; rc == 0 && i <= (int)lua_objlen(L, list); i++) {
                lua_rawgeti(L, list, i);
                rc = read_threshold(L, cfg, reg, key, err, errlen);
                lua_settop(L, list);
            }
        } else {
            rc = read_threshold(L, cfg, reg, key, err, errlen);
        }
        lua_settop(L, t + 1); /* the key, for lua_next */
    }
    lua_settop(L, t);
    return rc;
}

static int read_string_list(lua_State *L, const char *key, char *out, size_t outlen, char *err, size_t errlen) {
    size_t used = 0;
    out[0] = 0;
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.%s: expected a list of strings", key);
        return LL_EXIT_CONFIG;
    }
    for (int i = 1; i <= (int)lua_objlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!v || used + strlen(v) + 2 > outlen) {
            lua_pop(L, 1);
            snprintf(err, errlen, "options.%s: expected a list of strings", key);
            return LL_EXIT_CONFIG;
        }
        used += (size_t)snprintf(out + used, outlen - used, "%s%s", i > 1 ? "," : "", v);
        lua_pop(L, 1);
    }
    return 0;
}

static int read_tags(lua_State *L, ll_registry *reg, char *err, size_t errlen) {
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.tags: expected a table of tag = value");
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1)) {
            lua_settop(L, t);
            snprintf(err, errlen, "options.tags: expected string keys and string or number values");
            return LL_EXIT_CONFIG;
        }
        ll_registry_add_tag(reg, lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return 0;
}

static int read_options(lua_State *L, ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    int rc = 0;
    lua_getglobal(L, "options");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options: expected a table, got %s", luaL_typename(L, -1));
        lua_pop(L, 1);
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (rc == 0 && lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        if (strcmp(k, "vus") == 0) {
            int64_t v;
            rc = get_count(L, k, &v, err, errlen);
            if (!rc && !cfg->vus_set) {
                cfg->vus = v;
                cfg->vus_set = 1;
            }
        } else if (strcmp(k, "iterations") == 0) {
            int64_t v;
            rc = get_count(L, k, &v, err, errlen);
            if (!rc && !cfg->iterations_set) {
                cfg->iterations = v;
                cfg->iterations_set = 1;
            }
        } else if (strcmp(k, "duration") == 0) {
            uint64_t v;
            rc = get_duration(L, k, &v, err, errlen);
            if (!rc && v == 0) {
                snprintf(err, errlen, "options.duration: expected a duration above 0");
                rc = LL_EXIT_CONFIG;
            }
            if (!rc && !cfg->duration_set) {
                cfg->duration_us = v;
                cfg->duration_set = 1;
            }
        } else if (strcmp(k, "gracefulStop") == 0) {
            uint64_t v;
            rc = get_duration(L, k, &v, err, errlen);
            if (!rc && !cfg->graceful_stop_set) {
                cfg->graceful_stop_us = v;
                cfg->graceful_stop_set = 1;
            }
        } else if (strcmp(k, "thresholds") == 0) {
            if (!cfg->no_thresholds) rc = read_thresholds(L, cfg, reg, err, errlen);
        } else if (strcmp(k, "tags") == 0) {
            rc = read_tags(L, reg, err, errlen);
        } else if (strcmp(k, "summaryTrendStats") == 0) {
            char list[512], why[200];
            rc = read_string_list(L, k, list, sizeof(list), err, errlen);
            if (!rc && !cfg->trend_stats_set && ll_config_set_trend_stats(cfg, list, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "options.summaryTrendStats: expected %s", why);
                rc = LL_EXIT_CONFIG;
            }
        } else if (strcmp(k, "summaryTimeUnit") == 0) {
            const char *u = lua_tostring(L, -1);
            if (!u || !ll_time_unit_valid(u)) {
                snprintf(err, errlen, "options.summaryTimeUnit: expected \"s\", \"ms\" or \"us\"");
                rc = LL_EXIT_CONFIG;
            } else if (!cfg->time_unit_set) {
                lua_pushvalue(L, -1); /* keep the string alive in the registry */
                lua_setfield(L, LUA_REGISTRYINDEX, "luaload.time_unit");
                cfg->time_unit = u;
                cfg->time_unit_set = 1;
            }
        } else {
            fprintf(stderr, "luaload: warning: script option '%s' is not supported by this version; ignored\n", k);
        }
        lua_pop(L, 1);
    }
    lua_settop(L, t - 1);
    return rc;
}

typedef struct read_call {
    ll_config *cfg;
    ll_registry *reg;
    char *err;
    size_t errlen;
    int rc;
} read_call;

static int read_protected(lua_State *L) {
    read_call *c = lua_touserdata(L, 1);
    lua_pop(L, 1);
    c->rc = read_options(L, c->cfg, c->reg, c->err, c->errlen);
    return 0;
}

int ll_options_read(lua_State *L, ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    read_call c = {cfg, reg, err, errlen, 0};
    if (lua_cpcall(L, read_protected, &c) != 0) { /* e.g. a metamethod raised */
        snprintf(err, errlen, "options: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error reading the table");
        lua_pop(L, 1);
        return LL_EXIT_CONFIG;
    }
    return c.rc;
}
