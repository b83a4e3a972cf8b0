/* custom_metrics.c -- luaload.metrics: Counter, Gauge, Rate and Trend, the
 * script's own metrics, as k6's k6/metrics. They are created in init code
 * (so every worker registers them before the run starts) and recorded from
 * VU code with metric:add(value[, tags]). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "modules.h"
#include "script_host.h"
#include "state.h"

#define METRIC_MT "luaload.Metric"

typedef struct metric_ud {
    int id;
    ll_metric_type type;
} metric_ud;

/* k6's rule for metric names. */
static int valid_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 128) return 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

static const char *type_name(ll_metric_type t) {
    return t == LL_COUNTER ? "Counter" : t == LL_GAUGE ? "Gauge" : t == LL_RATE ? "Rate" : "Trend";
}

static int new_metric(lua_State *L, ll_metric_type type) {
    const char *name = luaL_checkstring(L, 1);
    ll_worker *w = ll_state_worker(L);
    if (ll_worker_current(w)) return luaL_error(L, "metrics.%s: metrics must be created in init code", type_name(type));
    if (!valid_name(name))
        return luaL_error(L, "metrics.%s: invalid name '%s' (expected letters, digits and '_', not starting "
                             "with a digit, at most 128)", type_name(type), name);
    ll_contains contains = LL_CONTAINS_DEFAULT;
    if (type == LL_TREND && lua_toboolean(L, 2)) contains = LL_CONTAINS_TIME;
    int id = ll_registry_metric(ll_worker_registry(w), name, type, contains);
    if (id < 0) return luaL_error(L, "metrics.%s: '%s' already exists with another type", type_name(type), name);
    metric_ud *m = lua_newuserdata(L, sizeof(*m));
    m->id = id;
    m->type = type;
    luaL_getmetatable(L, METRIC_MT);
    lua_setmetatable(L, -2);
    return 1;
}

static int l_counter(lua_State *L) { return new_metric(L, LL_COUNTER); }
static int l_gauge(lua_State *L) { return new_metric(L, LL_GAUGE); }
static int l_rate(lua_State *L) { return new_metric(L, LL_RATE); }
static int l_trend(lua_State *L) { return new_metric(L, LL_TREND); }

/* The tags of a custom sample: the table passed to add(), then the VU's group. */
typedef struct custom_sample {
    lua_State *L;
    int tags;      /* stack index of the tags table, 0 if none */
    const ll_vu *vu;
} custom_sample;

static const char *custom_tag(const void *ctx, const char *key, char *buf, size_t len) {
    const custom_sample *c = ctx;
    if (c->tags && ll_lua_tags_get(c->L, c->tags, key, buf, len)) return buf;
    if (strcmp(key, "group") == 0) return ll_vu_group_path(c->vu);
    return ll_vu_tag(c->vu, key);
}

static void custom_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const custom_sample *c = ctx;
    int has_group = c->tags ? ll_lua_tags_each(c->L, c->tags, NULL, fn, ud) : 0;
    if (!has_group) fn(ud, "group", ll_vu_group_path(c->vu));
    ll_vu_tags(c->vu, fn, ud);
}

/* metric:add(value[, tags]) */
static int l_add(lua_State *L) {
    metric_ud *m = luaL_checkudata(L, 1, METRIC_MT);
    double v;
    if (m->type == LL_RATE && lua_isboolean(L, 2)) v = lua_toboolean(L, 2);
    else if (lua_type(L, 2) == LUA_TNUMBER) v = lua_tonumber(L, 2);
    else return luaL_error(L, "metric:add: expected a number%s, got %s", m->type == LL_RATE ? " or boolean" : "",
                           luaL_typename(L, 2));
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    ll_vu *vu = ll_luaload_vu(L, "metric:add()");
    custom_sample c = {L, lua_istable(L, 3) ? 3 : 0, vu};
    ll_tag_source t = {custom_tag, custom_list, &c, -1, 0};
    ll_vu_sample(vu, m->id, v, &t);
    lua_pushboolean(L, 1); /* k6's add() returns true */
    return 1;
}

/* metric.name (a field, as k6's), metric.type, else the methods */
static int l_index(lua_State *L) {
    metric_ud *m = luaL_checkudata(L, 1, METRIC_MT);
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "name") == 0) {
        lua_pushstring(L, ll_worker_registry(ll_state_worker(L))->metrics[m->id].name);
        return 1;
    }
    if (k && strcmp(k, "type") == 0) {
        static const char *const types[] = {"counter", "gauge", "rate", "trend"};
        lua_pushstring(L, types[m->type == LL_COUNTER ? 0 : m->type == LL_GAUGE ? 1 : m->type == LL_RATE ? 2 : 3]);
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
}

int luaopen_luaload_metrics(lua_State *L) {
    static const luaL_Reg methods[] = {{"add", l_add}, {NULL, NULL}};
    static const luaL_Reg fns[] = {
        {"Counter", l_counter}, {"Gauge", l_gauge}, {"Rate", l_rate}, {"Trend", l_trend}, {NULL, NULL},
    };
    luaL_newmetatable(L, METRIC_MT);
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    lua_pushcclosure(L, l_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
