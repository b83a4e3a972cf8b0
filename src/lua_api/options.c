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

int ll_options_read(lua_State *L, ll_config *cfg, char *err, size_t errlen) {
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
        } else {
            fprintf(stderr, "luaload: warning: script option '%s' is not supported by this version; ignored\n", k);
        }
        lua_pop(L, 1);
    }
    lua_settop(L, t - 1);
    return rc;
}
