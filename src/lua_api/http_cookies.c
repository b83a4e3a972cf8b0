/* http_cookies.c -- cookies in luaload.http, as k6 has them: the VU's jar
 * (http.cookie_jar(), alias cookieJar) with set, cookies_for_url, clear
 * and delete, and res.cookies (a response's Set-Cookie headers by name).
 * The jar itself is core/http's cookie_jar.c, one per VU, emptied at each
 * iteration; a jar object works on the jar of the VU that calls it. */
#include "http_cookies.h"

#include <lauxlib.h>
#include <lua.h>
#include <string.h>
#include <time.h>

#include "cookie_jar.h"
#include "modules.h"
#include "redirect.h"
#include "script_host.h"

#define JAR_MT "luaload.CookieJar"

/* Pushes the fields k6 gives a cookie: name, value, domain, path,
 * http_only, secure, max_age, expires (unix milliseconds, 0: none). */
static void push_cookie(lua_State *L, const ll_cookie *c) {
    lua_createtable(L, 0, 8);
    lua_pushstring(L, c->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, c->value);
    lua_setfield(L, -2, "value");
    lua_pushstring(L, c->host_only ? "" : c->domain);
    lua_setfield(L, -2, "domain");
    lua_pushstring(L, c->path);
    lua_setfield(L, -2, "path");
    lua_pushboolean(L, c->http_only);
    lua_setfield(L, -2, "http_only");
    lua_pushboolean(L, c->secure);
    lua_setfield(L, -2, "secure");
    lua_pushnumber(L, (double)c->max_age);
    lua_setfield(L, -2, "max_age");
    lua_pushnumber(L, c->expires > 0 ? (double)c->expires * 1000.0 : 0);
    lua_setfield(L, -2, "expires");
}

/* Appends the value at the top to the list t[name] (t at idx), popping it. */
static void append_to(lua_State *L, int idx, const char *name) {
    lua_getfield(L, idx, name);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, idx, name);
    }
    lua_insert(L, -2);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    lua_pop(L, 1);
}

void ll_http_cookies_push_response(lua_State *L, const char *headers, size_t len, const char *url) {
    lua_newtable(L);
    int t = lua_gettop(L);
    ll_url u;
    if (!url || ll_url_parse(&u, url) < 0) return;
    size_t pos = 0, vlen = 0;
    const char *v;
    int64_t now = (int64_t)time(NULL);
    while ((v = ll_http_header_next(headers, len, "Set-Cookie", &pos, &vlen))) {
        ll_cookie c;
        if (ll_cookie_parse(&c, v, vlen, &u, now) < 0) continue;
        push_cookie(L, &c);
        append_to(L, t, c.name);
        ll_cookie_free(&c);
    }
    ll_url_free(&u);
}

/* ---- the VU's jar ---- */

static ll_cookie_jar *jar_of(lua_State *L, const char *what) {
    luaL_checkudata(L, 1, JAR_MT);
    return &ll_vu_http(ll_luaload_vu(L, what))->jar;
}

static void check_url(lua_State *L, int idx, ll_url *u, const char *W) {
    const char *s = luaL_checkstring(L, idx);
    if (ll_url_parse(u, s) < 0) luaL_error(L, "%s: '%s' is not an http:// or https:// URL", W, s);
}

/* opts.expires: a date string as Set-Cookie's ("Mon, 02 Jan 2006 15:04:05
 * GMT") or unix milliseconds. 0: none. */
static int64_t opt_expires(lua_State *L, int idx, const char *W, const ll_url *u) {
    if (lua_isnil(L, idx)) return 0;
    if (lua_type(L, idx) == LUA_TNUMBER) return (int64_t)(lua_tonumber(L, idx) / 1000.0);
    const char *s = lua_tostring(L, idx);
    char line[160];
    ll_cookie c;
    if (s && strlen(s) < 100) {
        snprintf(line, sizeof(line), "x=1; Expires=%s", s);
        if (ll_cookie_parse(&c, line, strlen(line), u, (int64_t)time(NULL)) == 0) {
            int64_t e = c.expires;
            ll_cookie_free(&c);
            if (e != 0) return e == INT64_MIN ? 1 : e;
        }
    }
    return luaL_error(L, "%s: expires must be a date such as \"Mon, 02 Jan 2006 15:04:05 GMT\" or unix milliseconds", W);
}

static const char *opt_string(lua_State *L, int t, const char *key) {
    lua_getfield(L, t, key);
    const char *s = lua_isnil(L, -1) ? NULL : lua_tostring(L, -1);
    lua_pop(L, 1); /* the string stays in the options table */
    return s;
}

/* jar:set(url, name, value, { domain, path, expires, max_age, secure, http_only }) */
static int l_jar_set(lua_State *L) {
    const char *W = "cookie_jar:set";
    ll_cookie_jar *j = jar_of(L, "the cookie jar");
    ll_url u;
    check_url(L, 2, &u, W);
    const char *name = luaL_checkstring(L, 3), *value = luaL_checkstring(L, 4);
    const char *domain = NULL, *path = NULL;
    int64_t expires = 0, max_age = 0;
    int secure = 0, http_only = 0;
    if (lua_istable(L, 5)) {
        domain = opt_string(L, 5, "domain");
        path = opt_string(L, 5, "path");
        lua_getfield(L, 5, "expires");
        expires = opt_expires(L, lua_gettop(L), W, &u);
        lua_getfield(L, 5, "max_age");
        max_age = (int64_t)lua_tonumber(L, -1);
        lua_getfield(L, 5, "secure");
        secure = lua_toboolean(L, -1);
        lua_getfield(L, 5, "http_only");
        http_only = lua_toboolean(L, -1);
        lua_pop(L, 4);
    } else if (!lua_isnoneornil(L, 5)) {
        ll_url_free(&u);
        return luaL_error(L, "%s: the options must be a table", W);
    }
    int rc = ll_cookie_jar_set(j, &u, name, value, domain, path, expires, max_age, secure, http_only,
                               (int64_t)time(NULL));
    ll_url_free(&u);
    /* rc 1: a domain the URL's host does not match, ignored as k6 (Go's jar) does */
    if (rc < 0) return luaL_error(L, "%s: cannot set cookie '%s' (a token name and a plain value expected)", W, name);
    return 0;
}

static void add_value(void *ud, const ll_cookie *c) {
    lua_State *L = ud;
    lua_pushstring(L, c->value);
    append_to(L, lua_gettop(L) - 1, c->name);
}

/* jar:cookies_for_url(url) -> { name = { value, ... } } */
static int l_jar_cookies_for_url(lua_State *L) {
    ll_cookie_jar *j = jar_of(L, "the cookie jar");
    ll_url u;
    check_url(L, 2, &u, "cookie_jar:cookies_for_url");
    lua_newtable(L);
    ll_cookie_jar_match(j, &u, (int64_t)time(NULL), add_value, L);
    ll_url_free(&u);
    return 1;
}

static int l_jar_clear(lua_State *L) {
    ll_cookie_jar *j = jar_of(L, "the cookie jar");
    ll_url u;
    check_url(L, 2, &u, "cookie_jar:clear");
    ll_cookie_jar_clear(j, &u);
    ll_url_free(&u);
    return 0;
}

static int l_jar_delete(lua_State *L) {
    ll_cookie_jar *j = jar_of(L, "the cookie jar");
    ll_url u;
    check_url(L, 2, &u, "cookie_jar:delete");
    ll_cookie_jar_delete(j, &u, luaL_checkstring(L, 3));
    ll_url_free(&u);
    return 0;
}

/* http.cookie_jar(): the calling VU's jar (one object serves every VU) */
static int l_cookie_jar(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, JAR_MT ".instance");
    return 1;
}

void ll_http_cookies_register(lua_State *L, int module) {
    static const luaL_Reg methods[] = {
        {"set", l_jar_set}, {"cookies_for_url", l_jar_cookies_for_url}, {"cookiesForURL", l_jar_cookies_for_url},
        {"clear", l_jar_clear}, {"delete", l_jar_delete}, {NULL, NULL},
    };
    ll_lua_class(L, JAR_MT, methods, NULL, 0);
    lua_newuserdata(L, 1);
    luaL_getmetatable(L, JAR_MT);
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, JAR_MT ".instance");
    lua_pushcfunction(L, l_cookie_jar);
    lua_pushvalue(L, -1);
    lua_setfield(L, module, "cookie_jar");
    lua_setfield(L, module, "cookieJar"); /* k6's name, for ported scripts */
}
