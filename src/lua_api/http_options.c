/* http_options.c -- k6's global HTTP options (options.userAgent,
 * insecureSkipTLSVerify, tlsAuth, tlsVersion, tlsCipherSuites,
 * maxRedirects, discardResponseBodies, noConnectionReuse,
 * noVUConnectionReuse, hosts, batch, batchPerHost): checked when the
 * options are read, and in every Lua state the defaults of each Client
 * for what the Client itself does not set. A Client takes them at its
 * first request, because Clients are made by init code that runs before
 * the options table is complete. */
#include "http_options.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"

/* The registry key (its address) of the state's ll_http_defaults, read on
 * every request: a light userdata key interns no string. */
static char DEFAULTS_KEY;

const char *const LL_HTTP_OPTION_KEYS[] = {"userAgent", "insecureSkipTLSVerify", "tlsAuth", "tlsVersion",
                                           "tlsCipherSuites", "maxRedirects", "discardResponseBodies",
                                           "noConnectionReuse", "noVUConnectionReuse", "hosts", "batch",
                                           "batchPerHost", NULL};

int ll_http_option_key(const char *k) {
    for (int i = 0; LL_HTTP_OPTION_KEYS[i]; i++)
        if (strcmp(k, LL_HTTP_OPTION_KEYS[i]) == 0) return 1;
    return 0;
}

static int l_defaults_gc(lua_State *L) {
    ll_http_defaults *d = lua_touserdata(L, 1);
    ll_http_client_opts_free(&d->o);
    return 0;
}

/* options.hosts = { ["name"] = "addr", ["name:port"] = "addr:port" } as
 * "name:port:addr:port" entries for CONNECT_TO (an empty port: any) */
static void read_hosts(lua_State *L, int idx, ll_client_opts *o) {
    const char *W = "options.hosts";
    if (!lua_istable(L, idx)) luaL_error(L, "%s: expected a table of name = address", W);
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        n++;
        lua_pop(L, 1);
    }
    o->connect_to = calloc((size_t)n + 1, sizeof(char *));
    if (!o->connect_to) luaL_error(L, "out of memory");
    int i = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        const char *addr = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!name || !addr || !*name || !*addr || strpbrk(name, " \t\r\n[]") || strpbrk(addr, " \t\r\n"))
            luaL_error(L, "%s: expected name = \"address\" strings, such as [\"test.k6.io\"] = \"127.0.0.1\"", W);
        const char *np = strrchr(name, ':'), *ap = strrchr(addr, ':');
        if (strchr(addr, ':') != ap) ap = NULL; /* an IPv6 address without a port */
        lua_pushfstring(L, "%s%s:%s%s%s%s", np ? "" : name, np ? name : ":", ap || !strchr(addr, ':') ? "" : "[",
                        addr, ap || !strchr(addr, ':') ? "" : "]", ap ? "" : ":");
        if (np) { /* "name:port" -> "name:port:" */
            lua_pop(L, 1);
            lua_pushfstring(L, "%s:%s%s", name, addr, ap ? "" : ":");
        }
        o->connect_to[i] = strdup(lua_tostring(L, -1));
        if (!o->connect_to[i++]) luaL_error(L, "out of memory");
        lua_pop(L, 2);
    }
}

/* options.tlsVersion = "tls1.2" or { min = "tls1.2", max = "tls1.3" } */
static void read_tls_version(lua_State *L, int idx, ll_client_opts *o) {
    const char *W = "options.tlsVersion";
    if (lua_type(L, idx) == LUA_TSTRING) {
        o->tls_min = o->tls_max = ll_http_client_tls_version(L, idx, W, "its value");
        return;
    }
    if (!lua_istable(L, idx)) luaL_error(L, "%s: expected \"tls1.2\" or { min = ..., max = ... }", W);
    lua_getfield(L, idx, "min");
    if (!lua_isnil(L, -1)) o->tls_min = ll_http_client_tls_version(L, lua_gettop(L), W, "min");
    lua_getfield(L, idx, "max");
    if (!lua_isnil(L, -1)) o->tls_max = ll_http_client_tls_version(L, lua_gettop(L), W, "max");
    lua_pop(L, 2);
    if (o->tls_min && o->tls_max && o->tls_min > o->tls_max) luaL_error(L, "%s: min is above max", W);
}

/* options.tlsAuth = { { domains = {...}, cert = "<PEM>", key = "<PEM>" } }:
 * the client certificate of every Client (domains are not told apart: one
 * certificate for all hosts). The PEM text is written to files only the
 * process reads, as libcurl takes paths. */
static void read_tls_auth(lua_State *L, int idx, ll_client_opts *o) {
    const char *W = "options.tlsAuth";
    if (!lua_istable(L, idx) || lua_objlen(L, idx) < 1)
        luaL_error(L, "%s: expected a list of { domains = {...}, cert = \"<PEM>\", key = \"<PEM>\" }", W);
    if (lua_objlen(L, idx) > 1) luaL_error(L, "%s: one certificate is supported, got %d", W, (int)lua_objlen(L, idx));
    lua_rawgeti(L, idx, 1);
    int e = lua_gettop(L);
    if (!lua_istable(L, e)) luaL_error(L, "%s[1]: expected a table", W);
    lua_getfield(L, e, "cert");
    lua_getfield(L, e, "key");
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "%s[1]: cert and key must be the PEM text (e.g. from open(\"client.pem\"))", W);
    o->certificate = ll_http_client_pem_file(L, lua_gettop(L) - 1, W, "cert");
    o->private_key = ll_http_client_pem_file(L, lua_gettop(L), W, "key");
    lua_settop(L, e - 1);
}

static int opt_bool(lua_State *L, int idx, const char *key) {
    if (!lua_isboolean(L, idx)) luaL_error(L, "options.%s: expected true or false, got %s", key, luaL_typename(L, idx));
    return lua_toboolean(L, idx);
}

/* An integer from min to a million (NaN and fractions fail the test too). */
static int opt_count(lua_State *L, int idx, const char *key, int min) {
    double d = lua_type(L, idx) == LUA_TNUMBER ? lua_tonumber(L, idx) : -1.0;
    if (!(d >= min && d <= 1e6 && d == (double)(int)d))
        luaL_error(L, "options.%s: expected an integer >= %d", key, min);
    return (int)d;
}

static void defaults_init(ll_http_defaults *d) {
    memset(d, 0, sizeof(*d));
    d->o.insecure_skip_verify = d->o.disable_keep_alive = d->o.max_redirects = -1;
    d->discard = -1;
    d->batch = 20; /* k6's */
    d->batch_per_host = 6;
}

/* Reads the options table at idx into d, raising on bad values. */
static void read_defaults(lua_State *L, int idx, ll_http_defaults *d) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        int v = lua_gettop(L);
        if (strcmp(k, "userAgent") == 0) d->o.user_agent = ll_http_client_wire_string(L, v, "options.userAgent", "the value");
        else if (strcmp(k, "insecureSkipTLSVerify") == 0) d->o.insecure_skip_verify = opt_bool(L, v, k);
        else if (strcmp(k, "tlsAuth") == 0) read_tls_auth(L, v, &d->o);
        else if (strcmp(k, "tlsVersion") == 0) read_tls_version(L, v, &d->o);
        else if (strcmp(k, "tlsCipherSuites") == 0) d->o.ciphers = ll_http_client_cipher_list(L, v, "options.tlsCipherSuites");
        else if (strcmp(k, "maxRedirects") == 0) d->o.max_redirects = opt_count(L, v, k, 0);
        else if (strcmp(k, "discardResponseBodies") == 0) d->discard = opt_bool(L, v, k);
        else if (strcmp(k, "noConnectionReuse") == 0) d->o.disable_keep_alive = opt_bool(L, v, k);
        else if (strcmp(k, "noVUConnectionReuse") == 0) d->no_vu_reuse = opt_bool(L, v, k);
        else if (strcmp(k, "hosts") == 0) read_hosts(L, v, &d->o);
        else if (strcmp(k, "batch") == 0) d->batch = opt_count(L, v, k, 1);
        else if (strcmp(k, "batchPerHost") == 0) d->batch_per_host = opt_count(L, v, k, 0);
        lua_pop(L, 1);
    }
}

/* Pushes a new defaults userdata (its strings freed when collected, also
 * when reading raised halfway). */
static ll_http_defaults *push_defaults(lua_State *L) {
    ll_http_defaults *d = lua_newuserdata(L, sizeof(*d));
    defaults_init(d);
    lua_newtable(L);
    lua_pushcfunction(L, l_defaults_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    return d;
}

const ll_http_defaults *ll_http_options_defaults(lua_State *L) {
    lua_pushlightuserdata(L, &DEFAULTS_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    ll_http_defaults *d = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (d) return d;
    d = push_defaults(L);
    lua_getglobal(L, "options");
    if (lua_istable(L, -1)) read_defaults(L, lua_gettop(L), d);
    lua_pop(L, 1);
    lua_pushlightuserdata(L, &DEFAULTS_KEY);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return d;
}

void ll_http_options_check(lua_State *L, int idx) {
    lua_pushvalue(L, idx);
    ll_http_defaults *d = push_defaults(L);
    read_defaults(L, lua_gettop(L) - 1, d);
    lua_pop(L, 2);
}
