/* options.c -- the script's `options` table -> ll_config (k6 option names,
 * and luaload's seed). */
#include "options.h"

#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "flags.h"
#include "http_options.h"
#include "modules.h"

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

/* A duration: a string such as "30s", or a number of milliseconds (k6),
 * from 0 to LL_DURATION_MAX_US. */
static int get_duration(lua_State *L, const char *key, uint64_t *out, char *err, size_t errlen) {
    int t = lua_type(L, -1);
    if (t == LUA_TNUMBER ? ll_duration_from_ms(lua_tonumber(L, -1), out) == 0
                         : t == LUA_TSTRING && ll_duration_parse(lua_tostring(L, -1), out) == 0)
        return 0;
    snprintf(err, errlen, "options.%s: expected a duration from 0 to about 292 years, such as \"30s\", \"1m30s\" "
                          "or a number of milliseconds, got %s%s%s", key, t == LUA_TSTRING ? "'" : "",
             t == LUA_TSTRING || t == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1),
             t == LUA_TSTRING ? "'" : "");
    return LL_EXIT_CONFIG;
}

/* options.KEY into *out unless the command line or environment set it
 * (*set): CLI > env > script. An invalid value is an error either way. */
static int set_count(lua_State *L, const char *key, int64_t *out, int *set, char *err, size_t errlen) {
    int64_t v;
    int rc = get_count(L, key, &v, err, errlen);
    if (!rc && !*set) {
        *out = v;
        *set = 1;
    }
    return rc;
}

static int set_duration(lua_State *L, const char *key, uint64_t *out, int *set, char *err, size_t errlen) {
    uint64_t v;
    int rc = get_duration(L, key, &v, err, errlen);
    if (!rc && !*set) {
        *out = v;
        *set = 1;
    }
    return rc;
}

/* options.seed: an integer number up to 2^53 (exact in Lua), or a decimal
 * string for any 64-bit seed; the CLI and environment win. */
static int read_seed(lua_State *L, ll_config *cfg, char *err, size_t errlen) {
    uint64_t seed = 0;
    int ok = 0;
    if (lua_type(L, -1) == LUA_TNUMBER) {
        double v = lua_tonumber(L, -1);
        ok = v >= 0 && v <= 9007199254740992.0 && v == floor(v);
        seed = ok ? (uint64_t)v : 0;
    } else if (lua_type(L, -1) == LUA_TSTRING) {
        ok = ll_config_parse_seed(lua_tostring(L, -1), &seed) == 0;
    }
    if (!ok) {
        int shown = lua_type(L, -1) == LUA_TNUMBER || lua_type(L, -1) == LUA_TSTRING;
        snprintf(err, errlen, "options.seed: expected an integer from 0 to 9007199254740992, or a string of "
                              "decimal digits up to \"18446744073709551615\", got %s",
                 shown ? lua_tostring(L, -1) : luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    if (!cfg->run.seed_set) {
        cfg->run.seed = seed;
        cfg->run.seed_set = 1;
    }
    return 0;
}

/* options.executionSegment and options.executionSegmentSequence: strings
 * as the flags take them; the CLI and environment win. */
static int read_segment(lua_State *L, ll_config *cfg, const char *k, char *err, size_t errlen) {
    char what[64];
    int seq = strcmp(k, "executionSegmentSequence") == 0;
    snprintf(what, sizeof(what), "options.%s", k);
    if (lua_type(L, -1) != LUA_TSTRING) {
        snprintf(err, errlen, "%s: expected a string such as \"%s\", got %s", what,
                 seq ? "0,1/4,2/4,3/4,1" : "1/4:2/4", luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    const char *v = lua_tostring(L, -1);
    int bad = seq ? ll_config_set_sequence(cfg, what, v, 0, err, errlen)
                  : ll_config_set_segment(cfg, what, v, 0, err, errlen);
    return bad ? LL_EXIT_CONFIG : 0;
}

/* Whether every key of the table on the top of the stack is one of keys;
 * if not, err gets "WHERE: unknown option 'k'HINT". */
/* The key of keys nearest to k (an edit or two away), or NULL. */
static const char *nearest_key(const char *const *keys, const char *const *more, const char *k) {
    const char *best = NULL;
    int best_d = 9;
    for (int set = 0; set < 2; set++)
        for (int i = 0; (set ? more : keys) && (set ? more : keys)[i]; i++) {
            const char *c = (set ? more : keys)[i];
            int d = ll_flag_distance(k, c);
            if (d < best_d) best_d = d, best = c;
        }
    return best && ll_flag_near(k, best_d) ? best : NULL;
}

/* " (did you mean startVUs?)" for k into buf, or "". */
static const char *did_you_mean(char *buf, size_t len, const char *const *keys, const char *const *more, const char *k) {
    const char *near = nearest_key(keys, more, k);
    snprintf(buf, len, "%s%s%s", near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    return buf;
}

/* Gives each key of the table on the top of the stack written in another
 * case ("startVus") the spelling of keys or more ("startVUs"), as k6
 * reads its options (Go's JSON names ignore case). The table keeps both. */
static void canonical_keys(lua_State *L, const char *const *keys, const char *const *more) {
    int t = lua_gettop(L);
    const char *as[64][2];
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || n == 64) continue;
        const char *k = lua_tostring(L, -1);
        for (int set = 0; set < 2; set++)
            for (int i = 0; (set ? more : keys) && (set ? more : keys)[i]; i++) {
                const char *c = (set ? more : keys)[i];
                if (strcmp(c, k) != 0 && strcasecmp(c, k) == 0) as[n][0] = k, as[n][1] = c, n++;
            }
    }
    for (int i = 0; i < n; i++) { /* the strings stay alive: they are keys of t */
        lua_getfield(L, t, as[i][1]);
        int present = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (present) continue;
        lua_getfield(L, t, as[i][0]);
        lua_setfield(L, t, as[i][1]);
    }
}

static int check_keys(lua_State *L, const char *const *keys, const char *where, const char *hint, char *err,
                      size_t errlen) {
    int t = lua_gettop(L);
    canonical_keys(L, keys, NULL);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        int known = 0;
        for (int i = 0; keys[i] && !known; i++) known = strcasecmp(keys[i], k) == 0;
        if (!known) {
            char near[96];
            did_you_mean(near, sizeof(near), keys, NULL, k);
            snprintf(err, errlen, "%s: unknown option '%s'%s", where, k, near[0] ? near : hint);
            lua_settop(L, t);
            return -1;
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* One threshold: "expr" or { threshold = "expr", abortOnFail = b, delayAbortEval = "10s" } */
static int read_threshold(lua_State *L, ll_config *cfg, ll_registry *reg, const char *key, char *err,
                          size_t errlen) {
    if (lua_type(L, -1) == LUA_TSTRING)
        return ll_threshold_set_add(&cfg->thresholds, reg, key, lua_tostring(L, -1), 0, 0, err, errlen) ? LL_EXIT_CONFIG : 0;
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.thresholds[\"%s\"]: expected a string such as \"p(95)<200\" or a table "
                              "{ threshold = ..., abortOnFail = ..., delayAbortEval = ... }, got %s", key,
                 luaL_typename(L, -1));
        return LL_EXIT_CONFIG;
    }
    static const char *const keys[] = {"threshold", "abortOnFail", "delayAbortEval", NULL};
    char where[200];
    snprintf(where, sizeof(where), "options.thresholds[\"%s\"]", key);
    int t = lua_gettop(L);
    if (check_keys(L, keys, where, " (expected threshold, abortOnFail, delayAbortEval)", err, errlen))
        return LL_EXIT_CONFIG;
    lua_getfield(L, t, "threshold");
    const char *src = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_getfield(L, t, "abortOnFail");
    int abort_type = lua_type(L, -1), abort_on_fail = lua_toboolean(L, -1);
    lua_getfield(L, t, "delayAbortEval");
    uint64_t delay = 0;
    int rc = 0;
    if (!src) {
        snprintf(err, errlen, "options.thresholds[\"%s\"]: missing threshold = \"...\" in the table form", key);
        rc = LL_EXIT_CONFIG;
    } else if (abort_type != LUA_TNIL && abort_type != LUA_TBOOLEAN) { /* k6: a JSON bool, "false" is an error */
        snprintf(err, errlen, "options.thresholds[\"%s\"]: abortOnFail: expected true or false, got %s%s%s", key,
                 abort_type == LUA_TSTRING ? "the string \"" : "", lua_tostring(L, -2) ? lua_tostring(L, -2)
                                                                               : luaL_typename(L, -2),
                 abort_type == LUA_TSTRING ? "\"" : "");
        rc = LL_EXIT_CONFIG;
    } else if (!lua_isnil(L, -1)) {
        const char *d = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!d || ll_duration_parse(d, &delay) != 0) {
            snprintf(err, errlen, "options.thresholds[\"%s\"]: delayAbortEval: expected a duration from 0 to about "
                     "292 years such as \"10s\", got %s", key, d ? d : luaL_typename(L, -1));
            rc = LL_EXIT_CONFIG;
        }
    }
    if (!rc && ll_threshold_set_add(&cfg->thresholds, reg, key, src, abort_on_fail, delay, err, errlen) != 0)
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

/* stages = { { duration = "30s", target = 100 }, ... }; where: "" (options.stages)
 * or "scenarios.NAME." */
static int read_stages(lua_State *L, const char *where, ll_stage **out, int *n, char *err, size_t errlen) {
    if (!lua_istable(L, -1) || lua_objlen(L, -1) == 0) {
        snprintf(err, errlen, "options.%sstages: expected a list of { duration = \"30s\", target = N }", where);
        return LL_EXIT_CONFIG;
    }
    int count = (int)lua_objlen(L, -1);
    ll_stage *st = calloc((size_t)count, sizeof(*st));
    if (!st) return LL_EXIT_CONFIG;
    for (int i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, i);
        int ok = lua_istable(L, -1);
        if (ok) {
            lua_getfield(L, -1, "duration");
            char key[240];
            snprintf(key, sizeof(key), "%sstages[%d].duration", where, i);
            ok = get_duration(L, key, &st[i - 1].duration_us, err, errlen) == 0;
            lua_pop(L, 1);
            lua_getfield(L, -1, "target");
            if (ok && (lua_type(L, -1) != LUA_TNUMBER || lua_tonumber(L, -1) < 0)) {
                snprintf(err, errlen, "options.%sstages[%d].target: expected a number >= 0", where, i);
                ok = 0;
            }
            st[i - 1].target = lua_tonumber(L, -1);
            lua_pop(L, 1);
        } else {
            snprintf(err, errlen, "options.%sstages[%d]: expected { duration = \"30s\", target = N }", where, i);
        }
        lua_pop(L, 1);
        if (!ok) {
            free(st);
            return LL_EXIT_CONFIG;
        }
    }
    *out = st;
    *n = count;
    return 0;
}

/* A table of string keys and string/number values into tags. */
static int read_kv(lua_State *L, const char *where, ll_tag **out, int *n, char *err, size_t errlen) {
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "%s: expected a table of name = value", where);
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        ll_tag *a = lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)
                  ? realloc(*out, (size_t)(*n + 1) * sizeof(ll_tag)) : NULL;
        if (!a) {
            lua_settop(L, t);
            snprintf(err, errlen, "%s: expected string keys and string or number values", where);
            return LL_EXIT_CONFIG;
        }
        *out = a;
        a[*n].key = strdup(lua_tostring(L, -2));
        a[*n].value = strdup(lua_tostring(L, -1));
        (*n)++;
        lua_pop(L, 1);
    }
    return 0;
}

static const char *const SCENARIO_KEYS[] = {
    "executor", "exec", "startTime", "gracefulStop", "env", "tags", "vus", "iterations", "duration",
    "maxDuration", "startVUs", "stages", "gracefulRampDown", "rate", "startRate", "timeUnit",
    "preAllocatedVUs", "maxVUs", NULL,
};

/* One scenario table (on the top of the stack) into cfg->run.scenarios. */
static int read_scenario(lua_State *L, ll_config *cfg, const char *name, char *err, size_t errlen) {
    char where[160];
    snprintf(where, sizeof(where), "options.scenarios.%s", name);
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "%s: expected a table with an executor", where);
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L);
    if (check_keys(L, SCENARIO_KEYS, where, "", err, errlen)) return LL_EXIT_CONFIG;
    lua_getfield(L, t, "executor");
    int e = lua_type(L, -1) == LUA_TSTRING ? ll_scenario_executor_parse(lua_tostring(L, -1)) : -1;
    lua_pop(L, 1);
    if (e < 0) {
        snprintf(err, errlen, "%s.executor: expected shared-iterations, per-vu-iterations, constant-vus, "
                              "ramping-vus, constant-arrival-rate or ramping-arrival-rate", where);
        return LL_EXIT_CONFIG;
    }
    ll_scenario *sc = ll_scenarios_add(&cfg->run.scenarios, name, (ll_executor_type)e);
    if (!sc) return LL_EXIT_CONFIG;
    int rc = 0;
    char key[200];
    for (int i = 0; rc == 0 && SCENARIO_KEYS[i]; i++) {
        const char *k = SCENARIO_KEYS[i];
        lua_getfield(L, t, k);
        if (lua_isnil(L, -1) || strcmp(k, "executor") == 0) {
            lua_pop(L, 1);
            continue;
        }
        snprintf(key, sizeof(key), "scenarios.%s.%s", name, k);
        if (strcmp(k, "exec") == 0) {
            if (lua_type(L, -1) != LUA_TSTRING) {
                snprintf(err, errlen, "options.%s: expected a function name", key);
                rc = LL_EXIT_CONFIG;
            } else {
                free(sc->exec);
                sc->exec = strdup(lua_tostring(L, -1));
            }
        } else if (strcmp(k, "startTime") == 0) rc = get_duration(L, key, &sc->start_time_us, err, errlen);
        else if (strcmp(k, "gracefulStop") == 0) rc = get_duration(L, key, &sc->graceful_stop_us, err, errlen);
        else if (strcmp(k, "gracefulRampDown") == 0) rc = get_duration(L, key, &sc->graceful_ramp_down_us, err, errlen);
        else if (strcmp(k, "duration") == 0) rc = get_duration(L, key, &sc->duration_us, err, errlen);
        else if (strcmp(k, "maxDuration") == 0) rc = get_duration(L, key, &sc->max_duration_us, err, errlen);
        else if (strcmp(k, "timeUnit") == 0) rc = get_duration(L, key, &sc->time_unit_us, err, errlen);
        else if (strcmp(k, "vus") == 0) rc = get_count(L, key, &sc->vus, err, errlen);
        else if (strcmp(k, "iterations") == 0) rc = get_count(L, key, &sc->iterations, err, errlen);
        else if (strcmp(k, "preAllocatedVUs") == 0) rc = get_count(L, key, &sc->pre_allocated_vus, err, errlen);
        else if (strcmp(k, "maxVUs") == 0) rc = get_count(L, key, &sc->max_vus, err, errlen);
        else if (strcmp(k, "startVUs") == 0 || strcmp(k, "rate") == 0 || strcmp(k, "startRate") == 0) {
            double v = lua_tonumber(L, -1);
            int vus = strcmp(k, "startVUs") == 0; /* an integer count: within int64 */
            if (lua_type(L, -1) != LUA_TNUMBER || !(v >= 0) || (vus && v > 9e15)) {
                snprintf(err, errlen, "options.%s: expected a number >= 0%s", key, vus ? " and <= 9e15" : "");
                rc = LL_EXIT_CONFIG;
            } else if (k[0] == 'r') sc->rate = v;
            else if (strcmp(k, "startRate") == 0) sc->start_rate = v;
            else sc->start_vus = (int64_t)v;
        } else if (strcmp(k, "stages") == 0) {
            snprintf(key, sizeof(key), "scenarios.%s.", name);
            rc = read_stages(L, key, &sc->stages, &sc->nstages, err, errlen);
        } else if (strcmp(k, "env") == 0) rc = read_kv(L, key, &sc->env, &sc->nenv, err, errlen);
        else if (strcmp(k, "tags") == 0) rc = read_kv(L, key, &sc->tags, &sc->ntags, err, errlen);
        lua_pop(L, 1);
    }
    lua_settop(L, t);
    if (rc == 0 && ll_scenario_validate(sc, err, errlen) != 0) rc = LL_EXIT_CONFIG;
    return rc;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* scenarios = { name = { executor = ..., ... }, ... }, read in name order */
static int read_scenarios(lua_State *L, ll_config *cfg, char *err, size_t errlen) {
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.scenarios: expected a table of name = { executor = ... }");
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L), n = 0, rc = 0;
    const char *names[256];
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || n == 256) {
            snprintf(err, errlen, "options.scenarios: expected at most 256 scenarios named by strings");
            lua_settop(L, t);
            return LL_EXIT_CONFIG;
        }
        names[n++] = lua_tostring(L, -1); /* the table keeps the string alive */
    }
    qsort(names, (size_t)n, sizeof(names[0]), compare_names);
    for (int i = 0; rc == 0 && i < n; i++) {
        lua_getfield(L, t, names[i]);
        rc = read_scenario(L, cfg, names[i], err, errlen);
        lua_settop(L, t);
    }
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "options.scenarios: no scenario given");
        rc = LL_EXIT_CONFIG;
    }
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

/* options.dns = { ttl = "1m", select = "first", policy = "any" } (a ttl
 * number is milliseconds, as in k6), or k6's text form "ttl=1m,...";
 * the command line and the environment win, field by field. */
static int read_dns(lua_State *L, ll_config *cfg, char *err, size_t errlen) {
    const char *expected;
    if (lua_type(L, -1) == LUA_TSTRING)
        return ll_config_set_dns(cfg, "options.dns", lua_tostring(L, -1), 0, err, errlen) ? LL_EXIT_CONFIG : 0;
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen, "options.dns: expected a table such as { ttl = \"1m\", select = \"first\", "
                              "policy = \"preferIPv4\" }");
        return LL_EXIT_CONFIG;
    }
    int t = lua_gettop(L), rc = 0;
    lua_pushnil(L);
    while (!rc && lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        char v[64] = "";
        if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
            snprintf(v, sizeof(v), "%s", lua_tostring(L, -1));
        if (ll_dns_config_set(&cfg->dns, k, v, 0, &expected) != 0) {
            snprintf(err, errlen, "options.dns: invalid %s '%s' (expected %s)", k, v, expected);
            rc = LL_EXIT_CONFIG;
        }
        lua_pop(L, 1);
    }
    lua_settop(L, t);
    return rc;
}

static int check_http(lua_State *L) {
    ll_http_options_check(L, 1);
    return 0;
}

/* The script options read here; k6's HTTP options (http_options.c) are
 * the others a script may set. */
static const char *const OPTION_KEYS[] = {
    "vus", "iterations", "duration", "gracefulStop", "scenarios", "stages", "setupTimeout", "teardownTimeout",
    "thresholds", "tags", "summaryTrendStats", "seed", "dns", "localIPs", "executionSegment",
    "executionSegmentSequence", "summaryTimeUnit", "httpDebug", "rps", "failWhenAllIterationsFail", NULL,
};

/* Whether k is a script option in any case. */
static int known_key(const char *k) {
    for (int i = 0; OPTION_KEYS[i]; i++)
        if (strcasecmp(OPTION_KEYS[i], k) == 0) return 1;
    for (int i = 0; LL_HTTP_OPTION_KEYS[i]; i++)
        if (strcasecmp(LL_HTTP_OPTION_KEYS[i], k) == 0) return 1;
    return 0;
}

/* k6's rule: one way of saying what runs. iterations, duration and stages
 * are shortcuts for a scenario; two of them (but iterations with
 * duration: shared-iterations' maxDuration) or one with scenarios is
 * exit 104, with k6's words. */
static int check_shortcuts(lua_State *L, int t, char *err, size_t errlen) {
    static const char *const names[] = {"iterations", "duration", "stages", "scenarios"};
    int set[4];
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, t, names[i]);
        set[i] = !lua_isnil(L, -1);
        lua_pop(L, 1);
    }
    for (int i = 0; i < 2; i++)
        if (set[i] && set[2]) {
            snprintf(err, errlen, "options: using multiple execution config shortcuts (`%s` and `stages`) "
                                  "simultaneously is not allowed", names[i]);
            return LL_EXIT_CONFIG;
        }
    for (int i = 0; i < 3; i++)
        if (set[i] && set[3]) {
            snprintf(err, errlen, "options: using an execution configuration shortcut (`%s`) and `scenarios` "
                                  "simultaneously is not allowed", names[i]);
            return LL_EXIT_CONFIG;
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
    canonical_keys(L, OPTION_KEYS, LL_HTTP_OPTION_KEYS);
    rc = check_shortcuts(L, t, err, errlen);
    lua_pushnil(L);
    while (rc == 0 && lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        if (strcmp(k, "vus") == 0) rc = set_count(L, k, &cfg->run.vus, &cfg->run.vus_set, err, errlen);
        else if (strcmp(k, "iterations") == 0) rc = set_count(L, k, &cfg->run.iterations, &cfg->run.iterations_set, err, errlen);
        else if (strcmp(k, "duration") == 0) {
            rc = set_duration(L, k, &cfg->run.duration_us, &cfg->run.duration_set, err, errlen);
            if (!rc && cfg->run.duration_set && cfg->run.duration_us == 0) {
                snprintf(err, errlen, "options.duration: expected a duration above 0");
                rc = LL_EXIT_CONFIG;
            }
        } else if (strcmp(k, "gracefulStop") == 0) {
            rc = set_duration(L, k, &cfg->run.graceful_stop_us, &cfg->run.graceful_stop_set, err, errlen);
        } else if (strcmp(k, "scenarios") == 0) {
            rc = read_scenarios(L, cfg, err, errlen);
        } else if (strcmp(k, "stages") == 0) {
            ll_stage *st = NULL;
            int n = 0;
            rc = read_stages(L, "", &st, &n, err, errlen);
            if (!rc && !cfg->run.stages_set) {
                free(cfg->run.stages);
                cfg->run.stages = st;
                cfg->run.nstages = n;
                cfg->run.stages_set = 1;
            } else {
                free(st);
            }
        } else if (strcmp(k, "setupTimeout") == 0) {
            rc = set_duration(L, k, &cfg->run.setup_timeout_us, &cfg->run.setup_timeout_set, err, errlen);
        } else if (strcmp(k, "teardownTimeout") == 0) {
            rc = set_duration(L, k, &cfg->run.teardown_timeout_us, &cfg->run.teardown_timeout_set, err, errlen);
        } else if (strcmp(k, "thresholds") == 0) {
            if (!cfg->no_thresholds) rc = read_thresholds(L, cfg, reg, err, errlen);
        } else if (strcmp(k, "tags") == 0) {
            rc = read_tags(L, reg, err, errlen);
        } else if (strcmp(k, "summaryTrendStats") == 0) {
            char list[512], why[200];
            rc = read_string_list(L, k, list, sizeof(list), err, errlen);
            if (!rc && !cfg->summary.trend_stats_set && ll_config_set_trend_stats(cfg, list, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "options.summaryTrendStats: expected %s", why);
                rc = LL_EXIT_CONFIG;
            }
        } else if (strcmp(k, "seed") == 0) {
            rc = read_seed(L, cfg, err, errlen);
        } else if (strcmp(k, "dns") == 0) {
            rc = read_dns(L, cfg, err, errlen);
        } else if (strcmp(k, "localIPs") == 0) {
            const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
            if (ll_config_set_local_ips(cfg, "options.localIPs", v, 0, err, errlen) != 0) rc = LL_EXIT_CONFIG;
        } else if (strcmp(k, "executionSegment") == 0 || strcmp(k, "executionSegmentSequence") == 0) {
            rc = read_segment(L, cfg, k, err, errlen);
        } else if (strcmp(k, "summaryTimeUnit") == 0) {
            const char *u = lua_tostring(L, -1);
            if (!u || !ll_config_time_unit_valid(u)) {
                snprintf(err, errlen, "options.summaryTimeUnit: expected \"s\", \"ms\" or \"us\"");
                rc = LL_EXIT_CONFIG;
            } else if (!cfg->summary.time_unit_set) {
                lua_pushvalue(L, -1); /* keep the string alive in the registry */
                lua_setfield(L, LUA_REGISTRYINDEX, "luaload.time_unit");
                cfg->summary.time_unit = u;
                cfg->summary.time_unit_set = 1;
            }
        } else if (strcmp(k, "httpDebug") == 0) {
            const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            if (!v || (*v && strcmp(v, "headers") != 0 && strcmp(v, "full") != 0)) {
                snprintf(err, errlen, "options.httpDebug: expected \"headers\", \"full\" or \"\"");
                rc = LL_EXIT_CONFIG;
            } else if (!cfg->http_debug_set) {
                cfg->http_debug = !*v ? 0 : strcmp(v, "full") == 0 ? 2 : 1;
            }
        } else if (strcmp(k, "rps") == 0) {
            double v = lua_tonumber(L, -1);
            if (lua_type(L, -1) != LUA_TNUMBER || !(v >= 0 && v <= 1e9)) {
                snprintf(err, errlen, "options.rps: expected requests per second from 0 (no limit) to 1e9");
                rc = LL_EXIT_CONFIG;
            } else if (!cfg->rps_set) {
                cfg->rps = v;
            }
        } else if (strcmp(k, "failWhenAllIterationsFail") == 0) {
            if (!lua_isboolean(L, -1)) {
                snprintf(err, errlen, "options.failWhenAllIterationsFail: expected true or false");
                rc = LL_EXIT_CONFIG;
            } else if (!cfg->fail_all_failed_set) {
                cfg->fail_all_failed = lua_toboolean(L, -1);
            }
        } else if (!ll_http_option_key(k) && !known_key(k)) { /* "Duration": its twin "duration" is read */
            char near[96];
            fprintf(stderr, "luaload: warning: script option '%s' is not supported by this version; ignored%s\n", k,
                    did_you_mean(near, sizeof(near), OPTION_KEYS, LL_HTTP_OPTION_KEYS, k));
        }
        lua_pop(L, 1);
    }
    if (rc == 0) { /* k6's HTTP options, the defaults of every Client */
        lua_pushcfunction(L, check_http);
        lua_pushvalue(L, t);
        if (lua_pcall(L, 1, 0, 0) != 0) {
            snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "options: invalid HTTP options");
            rc = LL_EXIT_CONFIG;
        }
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
    /* the run's seed is final now (CLI > env > options): setup(), teardown()
     * and handle_summary draw from it in this state, whatever init drew */
    if (c.rc == 0) ll_random_seed_state(L, cfg->run.seed);
    return c.rc;
}
