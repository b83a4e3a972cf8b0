/* http_expected.c -- k6's http.expectedStatuses(200, { min = 300, max =
 * 399 }, ...), the response callback it makes (a userdata holding status
 * ranges), and http.setResponseCallback(cb | nil), which makes it the
 * state's: the statuses outside it are failed requests (http_req_failed,
 * expected_response = false). A request's own params.responseCallback
 * comes first. */
#include "http_expected.h"

#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "state.h"

#define EXPECTED_MT "luaload.http.expected"
/* The registry key (its address) of http.set_response_callback's value: a
 * light userdata key, looked up on every response without interning a
 * string. */
static char DEFAULT_KEY;

static int status_arg(lua_State *L, int idx, const char *W, int arg, const char *what) {
    if (lua_type(L, idx) != LUA_TNUMBER) return -1;
    lua_Number n = lua_tonumber(L, idx);
    if (n != (lua_Number)(int)n || n < 100 || n > 599)
        luaL_error(L, "%s: argument %d: %s must be a status from 100 to 599, got %s", W, arg, what, lua_tostring(L, idx));
    return (int)n;
}

static int l_expected_statuses(lua_State *L) {
    const char *W = "http.expected_statuses";
    int n = lua_gettop(L);
    if (n == 0) return luaL_error(L, "%s: expected statuses or { min = N, max = M } ranges", W);
    if (n > LL_HTTP_EXPECTED_MAX) return luaL_error(L, "%s: at most %d arguments", W, LL_HTTP_EXPECTED_MAX);
    ll_http_expected *e = lua_newuserdata(L, sizeof(*e));
    memset(e, 0, sizeof(*e));
    for (int i = 1; i <= n; i++) {
        int lo = status_arg(L, i, W, i, "a status"), hi = lo;
        if (lo < 0 && lua_istable(L, i)) {
            lua_getfield(L, i, "min");
            lua_getfield(L, i, "max");
            lo = status_arg(L, -2, W, i, "min");
            hi = status_arg(L, -1, W, i, "max");
            lua_pop(L, 2);
            if (lo < 0 || hi < 0) return luaL_error(L, "%s: argument %d: a range needs min and max statuses", W, i);
            if (hi < lo) return luaL_error(L, "%s: argument %d: max (%d) is below min (%d)", W, i, hi, lo);
        } else if (lo < 0) {
            return luaL_error(L, "%s: argument %d must be a status or { min = N, max = M }, got %s", W, i,
                              luaL_typename(L, i));
        }
        e->min[e->n] = lo;
        e->max[e->n] = hi;
        e->n++;
    }
    luaL_getmetatable(L, EXPECTED_MT);
    lua_setmetatable(L, -2);
    return 1;
}

const ll_http_expected *ll_http_expected_check(lua_State *L, int idx, const char *W) {
    ll_http_expected *e = luaL_testudata(L, idx, EXPECTED_MT);
    if (!e) luaL_error(L, "%s: responseCallback must be the result of http.expected_statuses(...), got %s", W,
                       luaL_typename(L, idx));
    return e;
}

static int l_set_response_callback(lua_State *L) {
    if (lua_isnoneornil(L, 1) || (lua_isboolean(L, 1) && !lua_toboolean(L, 1))) {
        lua_pushboolean(L, 0); /* none: requests are neither failed nor not */
    } else {
        ll_http_expected_check(L, 1, "http.set_response_callback");
        lua_pushvalue(L, 1);
    }
    ll_lua_cache *c = ll_state_cache(L);
    if (c) { /* what ll_http_expected_default reads */
        c->expected = lua_touserdata(L, -1);
        c->expected_counted = !lua_isboolean(L, -1);
    }
    lua_pushlightuserdata(L, &DEFAULT_KEY);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX); /* keeps the userdata alive */
    return 0;
}

const ll_http_expected *ll_http_expected_default(lua_State *L, int *counted) {
    const ll_lua_cache *c = ll_state_cache(L);
    if (c) {
        *counted = c->expected_counted;
        return c->expected;
    }
    lua_pushlightuserdata(L, &DEFAULT_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    const ll_http_expected *e = lua_touserdata(L, -1);
    *counted = !lua_isboolean(L, -1);
    lua_pop(L, 1);
    return e;
}

void ll_http_expected_register(lua_State *L, int mod) {
    luaL_newmetatable(L, EXPECTED_MT);
    lua_pushliteral(L, "luaload.http.expected");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_expected_statuses);
    lua_pushvalue(L, -1);
    lua_setfield(L, mod, "expected_statuses");
    lua_setfield(L, mod, "expectedStatuses");
    lua_pushcfunction(L, l_set_response_callback);
    lua_pushvalue(L, -1);
    lua_setfield(L, mod, "set_response_callback");
    lua_setfield(L, mod, "setResponseCallback");
}
