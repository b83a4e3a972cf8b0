/* lua_ws_session.c -- a WebSocket session's params, metrics and handlers,
 * shared by luaload.ws and luaload.websockets (lua_ws_session.h). */
#include "lua_ws_session.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "handlers.h"
#include "http_client.h"
#include "url.h"
#include "xmalloc.h"

/* ---- the params of the open ---- */

static char default_client_key; /* registry: the Client whose options an open without one uses */

/* The options of params.client, else of a default Client (options.*
 * apply); the Client stays on the stack. */
static const ll_client_opts *params_client(lua_State *L, int params) {
    ll_http_client *c;
    lua_getfield(L, params, "client");
    if (!lua_isnil(L, -1)) {
        c = ll_http_client_check(L, lua_gettop(L));
    } else {
        lua_pop(L, 1);
        lua_pushlightuserdata(L, &default_client_key);
        lua_rawget(L, LUA_REGISTRYINDEX);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            ll_http_client_push(L);
            lua_pushlightuserdata(L, &default_client_key);
            lua_pushvalue(L, -2);
            lua_rawset(L, LUA_REGISTRYINDEX);
        }
        c = lua_touserdata(L, -1);
    }
    return ll_http_client_opts(L, c);
}

static void cat(char **out, size_t *len, const char *a, size_t alen) {
    *out = ll_xrealloc(*out, *len + alen + 1);
    memcpy(*out + *len, a, alen);
    *len += alen;
    (*out)[*len] = 0;
}

/* The Cookie value (malloc'd, NULL: none): params.cookies ({name = "v"} or
 * {name = {value = "v", replace = true}}), then the jar's for the URL but
 * the replaced ones. */
static char *params_cookie(lua_State *L, ll_vu *vu, const char *what, const char *http_url, int params) {
    const char *skip[33];
    int nskip = 0;
    char *out = NULL;
    size_t len = 0;
    lua_getfield(L, params, "cookies");
    int cookies = lua_gettop(L);
    if (lua_istable(L, cookies)) {
        lua_pushnil(L);
        while (lua_next(L, cookies)) {
            int replace = 0;
            if (lua_istable(L, -1)) {
                lua_getfield(L, -1, "replace");
                replace = lua_toboolean(L, -1);
                lua_pop(L, 1);
                lua_getfield(L, -1, "value");
                lua_replace(L, -2);
            }
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING) {
                free(out);
                luaL_error(L, "%s: params.cookies: expected name = \"value\" strings", what);
            }
            size_t nl, vl;
            const char *n = lua_tolstring(L, -2, &nl), *v = lua_tolstring(L, -1, &vl);
            if (replace && nskip < 32) skip[nskip++] = n; /* the key stays in the table */
            if (len) cat(&out, &len, "; ", 2);
            cat(&out, &len, n, nl);
            cat(&out, &len, "=", 1);
            cat(&out, &len, v, vl);
            lua_pop(L, 1);
        }
    } else if (!lua_isnil(L, cookies)) {
        luaL_error(L, "%s: params.cookies must be a table", what);
    }
    skip[nskip] = NULL;
    ll_url u;
    char *jar = NULL;
    if (ll_url_parse(&u, http_url) == 0) {
        ll_cookie_jar_header(&ll_vu_http(vu)->jar, &u, (int64_t)time(NULL), skip, &jar);
        ll_url_free(&u);
    }
    if (jar) {
        if (len) cat(&out, &len, "; ", 2);
        cat(&out, &len, jar, strlen(jar));
        free(jar);
    }
    lua_settop(L, cookies - 1);
    return out;
}

/* The subprotocols of the value at idx: a string or a list of strings. */
static void params_protocols(lua_State *L, const char *what, const char *name, int idx, ll_lua_ws_params *p) {
    if (lua_isnil(L, idx)) return;
    if (lua_type(L, idx) == LUA_TSTRING) {
        p->protos[p->o.nprotocols++] = lua_tostring(L, idx);
        return;
    }
    if (!lua_istable(L, idx)) luaL_error(L, "%s: %s: expected a string or a list of strings", what, name);
    int n = (int)lua_objlen(L, idx);
    if (n > LL_LUA_WS_PARAMS_MAX_PROTOCOLS)
        luaL_error(L, "%s: %s: more than %d subprotocols", what, name, LL_LUA_WS_PARAMS_MAX_PROTOCOLS);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: %s: expected strings", what, name);
        p->protos[p->o.nprotocols++] = lua_tostring(L, -1);
        lua_pop(L, 1); /* kept by the table */
    }
}

void ll_lua_ws_session_params_read(lua_State *L, ll_vu *vu, const char *what, const char *url, int params,
                                   int protocols, ll_lua_ws_params *p) {
    memset(p, 0, sizeof(*p));
    if (lua_isnoneornil(L, params)) {
        lua_newtable(L);
        lua_replace(L, params);
    }
    if (!lua_istable(L, params)) luaL_error(L, "%s: params must be a table", what);
    ll_resolver *dns = ll_worker_dns(ll_vu_worker(vu));
    if (!dns) luaL_error(L, "%s: out of memory", what);
    p->o.dns = dns;
    p->o.client = params_client(L, params);
    /* headers, in the table's order */
    lua_getfield(L, params, "headers");
    int headers = lua_gettop(L);
    if (lua_istable(L, headers)) {
        lua_pushnil(L);
        while (lua_next(L, headers)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "%s: params.headers: expected name = \"value\" strings", what);
            if (p->o.nheaders == LL_LUA_WS_PARAMS_MAX_HEADERS)
                luaL_error(L, "%s: params.headers: more than %d headers", what, LL_LUA_WS_PARAMS_MAX_HEADERS);
            p->hs[p->o.nheaders].name = (char *)lua_tostring(L, -2); /* the table keeps both */
            p->hs[p->o.nheaders++].value = (char *)lua_tostring(L, -1);
            lua_pop(L, 1);
        }
    } else if (!lua_isnil(L, headers)) {
        luaL_error(L, "%s: params.headers must be a table", what);
    }
    p->o.headers = p->hs;
    /* subprotocols offered, besides a Sec-WebSocket-Protocol header */
    if (protocols) {
        params_protocols(L, what, "protocols", protocols, p);
    } else {
        lua_getfield(L, params, "subprotocols");
        params_protocols(L, what, "params.subprotocols", lua_gettop(L), p);
    }
    p->o.protocols = p->protos;
    lua_getfield(L, params, "compression");
    const char *comp = lua_tostring(L, -1);
    if (comp && *comp && strcmp(comp, "deflate"))
        luaL_error(L, "%s: params.compression: expected \"deflate\", got \"%s\"", what, comp);
    p->o.deflate = comp && *comp;
    lua_pop(L, 1);
    /* the jar's cookies are the http(s) URL's (ws:// -> http://, wss:// -> https://) */
    p->http_url = strncasecmp(url, "ws", 2) ? url : lua_pushfstring(L, "http%s", url + 2);
    lua_getfield(L, params, "tags"); /* checked before anything is allocated */
    if (!lua_isnil(L, -1) && !lua_istable(L, -1)) luaL_error(L, "%s: params.tags must be a table", what);
    lua_pop(L, 1);
    p->cookie = params_cookie(L, vu, what, p->http_url, params); /* the last that may raise */
    p->o.cookie = p->cookie;
}

void ll_lua_ws_session_params_free(ll_lua_ws_params *p) {
    free(p->cookie);
    p->cookie = NULL;
}

/* ---- the session and its samples ---- */

void ll_lua_ws_session_init(ll_lua_ws_session *s, lua_State *L, ll_vu *vu, const char *url, const ll_lua_ws_params *p,
                        int params) {
    memset(s, 0, sizeof(*s));
    s->vu = vu;
    s->url = ll_xstrdup(url);
    s->http_url = ll_xstrdup(p->http_url);
    s->subproto = ll_xstrdup("");
    s->group = ll_xstrdup(ll_vu_group_path(vu));
    snprintf(s->status, sizeof(s->status), "0");
    if (!params) return;
    lua_getfield(L, params, "tags");
    if (lua_istable(L, -1)) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)) {
                s->tags = ll_xrealloc(s->tags, (size_t)(s->ntags + 1) * sizeof(*s->tags));
                s->tags[s->ntags].key = ll_xstrdup(lua_tostring(L, -2));
                lua_pushvalue(L, -1); /* a copy: tostring on a number key of lua_next's would break it */
                s->tags[s->ntags++].value = ll_xstrdup(lua_tostring(L, -1));
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

int ll_lua_ws_session_open(ll_lua_ws_session *s, const ll_lua_ws_params *p, const ll_ws_callbacks *cb, void *ud,
                           char *err, size_t errlen) {
    s->ws = ll_ws_open(ll_worker_loop(ll_vu_worker(s->vu)), s->url, &p->o, cb, ud, err, errlen);
    return s->ws ? 0 : -1;
}

static const char *own_tag(const ll_lua_ws_session *s, const char *key) {
    if (!strcmp(key, "url")) return s->url;
    if (!strcmp(key, "status")) return s->status;
    if (!strcmp(key, "subproto")) return s->subproto;
    if (!strcmp(key, "group")) return s->group;
    return NULL;
}

static const char *user_tag(const ll_lua_ws_session *s, const char *key) {
    for (int i = 0; i < s->ntags; i++)
        if (!strcmp(s->tags[i].key, key)) return s->tags[i].value;
    return NULL;
}

static const char *tag_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const ll_lua_ws_session *s = ctx;
    const char *v = user_tag(s, key);
    if (!v) v = own_tag(s, key);
    return v ? v : ll_vu_tag(s->vu, key);
}

static void tag_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const ll_lua_ws_session *s = ctx;
    static const char *const OWN[] = {"url", "status", "subproto", "group"};
    for (int i = 0; i < 4; i++)
        if (!user_tag(s, OWN[i])) fn(ud, OWN[i], own_tag(s, OWN[i]));
    for (int i = 0; i < s->ntags; i++) fn(ud, s->tags[i].key, s->tags[i].value);
    ll_vu_tags(s->vu, fn, ud);
}

void ll_lua_ws_session_sample(ll_lua_ws_session *s, int metric, double value) {
    ll_tag_source t = {tag_get, tag_list, s, -1, 0};
    ll_vu_sample(s->vu, metric, value, &t);
}

void ll_lua_ws_session_opened(ll_lua_ws_session *s, const ll_ws_open_result *r) {
    snprintf(s->status, sizeof(s->status), "%d", r->status);
    free(s->subproto);
    s->subproto = ll_xstrdup(r->protocol);
    if (r->headers_len) { /* Set-Cookie into the VU's jar */
        ll_http_res res;
        memset(&res, 0, sizeof(res));
        res.headers = r->headers;
        res.headers_len = r->headers_len;
        ll_http_vu_store_cookies(ll_vu_http(s->vu), s->http_url, &res, (int64_t)time(NULL));
    }
    ll_lua_ws_session_sample(s, LL_M_WS_CONNECTING, (double)r->t.duration / 1000.0);
    ll_lua_ws_session_sample(s, LL_M_WS_SESSIONS, 1);
    if (r->error_code) ll_lua_ws_session_end(s); /* nothing follows a failed open */
    else s->start_ns = ll_loop_now_ns();
}

int ll_lua_ws_session_send(ll_lua_ws_session *s, int opcode, const void *data, size_t len) {
    if (!s->ws || ll_ws_send(s->ws, opcode, data, len) < 0) return -1;
    ll_lua_ws_session_sample(s, LL_M_WS_MSGS_SENT, 1);
    return 0;
}

int ll_lua_ws_session_ping(ll_lua_ws_session *s) {
    if (!s->ws || ll_ws_ping(s->ws, "", 0) < 0) return -1;
    s->ping_ns = ll_loop_now_ns();
    return 0;
}

void ll_lua_ws_session_pong(ll_lua_ws_session *s) {
    if (s->ping_ns) ll_lua_ws_session_sample(s, LL_M_WS_PING, (double)(ll_loop_now_ns() - s->ping_ns) / 1e6);
    s->ping_ns = 0;
}

void ll_lua_ws_session_end(ll_lua_ws_session *s) {
    if (!s->ws) return;
    if (s->start_ns)
        ll_lua_ws_session_sample(s, LL_M_WS_SESSION_DURATION, (double)(ll_loop_now_ns() - s->start_ns) / 1e6);
    int64_t sent = 0, received = 0;
    ll_ws_bytes(s->ws, &sent, &received);
    ll_lua_ws_session_sample(s, LL_M_DATA_SENT, (double)sent);
    ll_lua_ws_session_sample(s, LL_M_DATA_RECEIVED, (double)received);
    ll_ws_free(s->ws);
    s->ws = NULL;
}

void ll_lua_ws_session_free(ll_lua_ws_session *s) {
    if (s->gone) *s->gone = 1;
    s->gone = NULL;
    ll_lua_ws_session_end(s);
    free(s->url);
    free(s->http_url);
    free(s->subproto);
    free(s->group);
    for (int i = 0; i < s->ntags; i++) {
        free(s->tags[i].key);
        free(s->tags[i].value);
    }
    free(s->tags);
    s->url = s->http_url = s->subproto = s->group = NULL;
    s->tags = NULL;
    s->ntags = 0;
}

/* ---- its handlers ---- */

int ll_lua_ws_session_run(ll_lua_ws_session *s, lua_State *L, int list, int nargs) {
    return ll_handlers_run(s->vu, L, list, nargs, &s->gone);
}
