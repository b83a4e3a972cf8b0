/* lua_ws.c -- luaload.ws, k6/ws in Lua: ws.connect(url, params, function(socket)
 * ... end) opens a WebSocket (http/ws_conn.h) on the worker's loop and
 * returns the handshake's Response-like table once the socket has closed.
 *
 * The calling coroutine waits (ll_vu_wait) for the whole session; the
 * wait's cancel frees the connection, so an iteration cut at the end of the
 * test leaves nothing behind and no callback comes after. The setup
 * function runs inside connect and only registers handlers; each event's
 * handler then runs as a task of the VU (it may make requests and sleep),
 * and an error in it fails the iteration. socket:set_timeout and
 * set_interval are timers of the socket, stopped when the script closes it
 * or the session ends.
 *
 * Metrics, with k6's names and tags (url, status, subproto, group, the
 * scenario's and params.tags): ws_connecting, ws_sessions, ws_msgs_sent,
 * ws_msgs_received, ws_ping, ws_session_duration, data_sent and
 * data_received. A handshake that fails (no connection, a status other
 * than 101) is a counted session whose Response carries the status and the
 * error, not a script error. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_client.h"
#include "http_response.h"
#include "modules.h"
#include "script_host.h"
#include "url.h"
#include "ws_conn.h"
#include "xmalloc.h"

#define SOCKET_MT "luaload.ws.Socket"

static const char *const EVENTS[] = {"open", "message", "binary_message", "ping", "pong", "close", "error", NULL};

typedef struct wsock wsock;

typedef struct ws_timer {
    ll_timer timer;
    wsock *s;
    struct ws_timer *next;
    int fn_ref;
    uint64_t interval_us;        /* 0: fires once */
} ws_timer;

typedef struct ws_box {          /* the socket the script holds */
    wsock *s;                    /* NULL once the session is over */
} ws_box;

struct wsock {
    ll_vu *vu;
    lua_State *L;                /* the worker's state */
    ll_ws *ws;                   /* NULL once closed */
    ws_box *box;
    int box_ref, handlers_ref, resp_ref;
    ll_vu_task *waiter;          /* the coroutine in ws.connect */
    ws_timer *timers;
    char *url, *http_url, *subproto, *group;
    char status[16];
    ll_tag *tags;                /* params.tags */
    int ntags;
    uint64_t start_ns, ping_ns;
    int *gone;                   /* set to 1 when s is freed (emit watches it) */
};

/* ---- tags of the samples ---- */

static const char *own_tag(const wsock *s, const char *key) {
    if (!strcmp(key, "url")) return s->url;
    if (!strcmp(key, "status")) return s->status;
    if (!strcmp(key, "subproto")) return s->subproto;
    if (!strcmp(key, "group")) return s->group;
    return NULL;
}

static const char *user_tag(const wsock *s, const char *key) {
    for (int i = 0; i < s->ntags; i++)
        if (!strcmp(s->tags[i].key, key)) return s->tags[i].value;
    return NULL;
}

static const char *tag_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const wsock *s = ctx;
    const char *v = user_tag(s, key);
    if (!v) v = own_tag(s, key);
    return v ? v : ll_vu_tag(s->vu, key);
}

static void tag_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const wsock *s = ctx;
    static const char *const OWN[] = {"url", "status", "subproto", "group"};
    for (int i = 0; i < 4; i++)
        if (!user_tag(s, OWN[i])) fn(ud, OWN[i], own_tag(s, OWN[i]));
    for (int i = 0; i < s->ntags; i++) fn(ud, s->tags[i].key, s->tags[i].value);
    ll_vu_tags(s->vu, fn, ud);
}

static void sample(wsock *s, int metric, double value) {
    ll_tag_source t = {tag_get, tag_list, s, -1, 0};
    ll_vu_sample(s->vu, metric, value, &t);
}

static void sample_bytes(wsock *s) {
    int64_t sent = 0, received = 0;
    ll_ws_bytes(s->ws, &sent, &received);
    sample(s, LL_M_DATA_SENT, (double)sent);
    sample(s, LL_M_DATA_RECEIVED, (double)received);
}

/* ---- the session's life ---- */

static void timer_free(wsock *s, ws_timer *t) {
    ll_loop_timer_stop(ll_worker_loop(ll_vu_worker(s->vu)), &t->timer);
    luaL_unref(s->L, LUA_REGISTRYINDEX, t->fn_ref);
    free(t);
}

static void timers_free(wsock *s) {
    while (s->timers) {
        ws_timer *t = s->timers;
        s->timers = t->next;
        timer_free(s, t);
    }
}

/* Everything of s goes; the script's socket is left closed. */
static void session_free(wsock *s) {
    if (s->gone) *s->gone = 1;
    timers_free(s);
    ll_ws_free(s->ws);
    s->box->s = NULL;
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->box_ref);
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->handlers_ref);
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->resp_ref);
    free(s->url);
    free(s->http_url);
    free(s->subproto);
    free(s->group);
    for (int i = 0; i < s->ntags; i++) {
        free(s->tags[i].key);
        free(s->tags[i].value);
    }
    free(s->tags);
    free(s);
}

/* The iteration was cut with the session on: it ends here, silently. */
static void session_cancel(void *ud) { session_free(ud); }

/* The session is over: ws.connect returns its Response. */
static void session_finish(wsock *s) {
    ll_vu_task *t = s->waiter;
    lua_State *co = ll_vu_task_co(t);
    lua_rawgeti(co, LUA_REGISTRYINDEX, s->resp_ref);
    session_free(s);
    ll_vu_task_resume(t, 1);
}

/* Runs each handler of event with the nargs values on top of s->L (popped)
 * as a task of the VU. Returns 1, or 0 when s is gone: a handler failed
 * the iteration, which cancelled the session (the VU may be in its next
 * iteration already, so ll_vu_in_iteration cannot tell). */
static int emit(wsock *s, const char *event, int nargs) {
    lua_State *L = s->L;
    ll_vu *vu = s->vu;
    int args = lua_gettop(L) - nargs + 1;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->handlers_ref);
    lua_getfield(L, -1, event);
    int list = lua_gettop(L);
    int n = lua_istable(L, list) ? (int)lua_objlen(L, list) : 0;
    int gone = 0, *outer = s->gone;
    s->gone = &gone;
    for (int i = 1; i <= n && !gone; i++) {
        lua_State *co = lua_newthread(L);
        int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        lua_rawgeti(L, list, i);
        for (int a = 0; a < nargs; a++) lua_pushvalue(L, args + a);
        lua_xmove(L, co, nargs + 1);
        ll_vu_task_start(vu, co, co_ref, nargs);
    }
    lua_settop(L, args - 1);
    if (gone) {
        if (outer) *outer = 1;
        return 0;
    }
    s->gone = outer;
    return 1;
}

static void push_response(wsock *s, const ll_ws_open_result *r) {
    lua_State *L = s->L;
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, r->status);
    lua_setfield(L, -2, "status");
    lua_pushstring(L, s->url);
    lua_setfield(L, -2, "url");
    if (r->headers_len) ll_http_response_push_headers(L, r->headers, r->headers_len);
    else lua_newtable(L);
    lua_setfield(L, -2, "headers");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "body");
    lua_pushstring(L, r->protocol);
    lua_setfield(L, -2, "subprotocol");
    lua_pushstring(L, r->error);
    lua_setfield(L, -2, "error");
    lua_pushinteger(L, r->error_code);
    lua_setfield(L, -2, "error_code");
    s->resp_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

static void on_open(ll_ws *ws, const ll_ws_open_result *r, void *ud) {
    (void)ws;
    wsock *s = ud;
    snprintf(s->status, sizeof(s->status), "%d", r->status);
    free(s->subproto);
    s->subproto = ll_xstrdup(r->protocol);
    push_response(s, r);
    if (r->headers_len) { /* Set-Cookie into the VU's jar */
        ll_http_res res;
        memset(&res, 0, sizeof(res));
        res.headers = r->headers;
        res.headers_len = r->headers_len;
        ll_http_vu_store_cookies(ll_vu_http(s->vu), s->http_url, &res, (int64_t)time(NULL));
    }
    sample(s, LL_M_WS_CONNECTING, (double)r->t.duration / 1000.0);
    sample(s, LL_M_WS_SESSIONS, 1);
    if (r->error_code) { /* nothing follows a failed open */
        sample_bytes(s);
        session_finish(s);
        return;
    }
    s->start_ns = ll_loop_now_ns();
    (void)emit(s, "open", 0);
}

static void on_message(ll_ws *ws, int opcode, const char *data, size_t len, void *ud) {
    (void)ws;
    wsock *s = ud;
    sample(s, LL_M_WS_MSGS_RECEIVED, 1);
    lua_pushlstring(s->L, data, len);
    emit(s, opcode == LL_WS_TEXT ? "message" : "binary_message", 1);
}

static void on_ping(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    wsock *s = ud;
    lua_pushlstring(s->L, data, len);
    emit(s, "ping", 1);
}

static void on_pong(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    wsock *s = ud;
    if (s->ping_ns) sample(s, LL_M_WS_PING, (double)(ll_loop_now_ns() - s->ping_ns) / 1e6);
    s->ping_ns = 0;
    lua_pushlstring(s->L, data, len);
    emit(s, "pong", 1);
}

static void on_error(ll_ws *ws, int code, const char *msg, void *ud) {
    (void)ws;
    wsock *s = ud;
    lua_pushstring(s->L, msg);
    lua_pushinteger(s->L, code);
    emit(s, "error", 2);
}

static void on_close(ll_ws *ws, int code, const char *reason, size_t len, void *ud) {
    (void)ws;
    wsock *s = ud;
    sample(s, LL_M_WS_SESSION_DURATION, (double)(ll_loop_now_ns() - s->start_ns) / 1e6);
    sample_bytes(s);
    timers_free(s);
    ll_ws_free(s->ws);
    s->ws = NULL;
    lua_pushinteger(s->L, code);
    lua_pushlstring(s->L, reason, len);
    if (emit(s, "close", 2)) session_finish(s);
}

/* ---- the socket's methods ---- */

static wsock *check_open(lua_State *L, const char *W) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    if (!b->s || !b->s->ws || ll_ws_ready_state(b->s->ws) != LL_WS_OPEN)
        luaL_error(L, "socket:%s(): the socket is not open", W);
    return b->s;
}

static int l_on(lua_State *L) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    const char *ev = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    if (!strcmp(ev, "binaryMessage")) ev = "binary_message";
    int i = 0;
    while (EVENTS[i] && strcmp(EVENTS[i], ev)) i++;
    if (!EVENTS[i])
        return luaL_error(L, "socket:on(): unknown event \"%s\" (expected open, message, binary_message, ping, "
                             "pong, close or error)", ev);
    if (!b->s) return 0; /* the session is over: nothing will come */
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->s->handlers_ref);
    lua_getfield(L, -1, ev);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, ev);
    }
    lua_pushvalue(L, 3);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    return 0;
}

static int send_as(lua_State *L, int opcode, const char *W) {
    wsock *s = check_open(L, W);
    size_t len;
    const char *p = luaL_checklstring(L, 2, &len);
    if (ll_ws_send(s->ws, opcode, p, len) < 0) return luaL_error(L, "socket:%s(): the socket is not open", W);
    sample(s, LL_M_WS_MSGS_SENT, 1);
    return 0;
}

static int l_send(lua_State *L) { return send_as(L, LL_WS_TEXT, "send"); }
static int l_send_binary(lua_State *L) { return send_as(L, LL_WS_BINARY, "send_binary"); }

static int l_ping(lua_State *L) {
    wsock *s = check_open(L, "ping");
    if (ll_ws_ping(s->ws, "", 0) < 0) return luaL_error(L, "socket:ping(): the socket is not open");
    s->ping_ns = ll_loop_now_ns();
    return 0;
}

static int l_close(lua_State *L) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    int code = (int)luaL_optinteger(L, 2, LL_WS_CLOSE_NORMAL);
    if (!b->s || !b->s->ws) return 0; /* closed already */
    if (ll_ws_close(b->s->ws, code, "", 0) < 0)
        return luaL_error(L, "socket:close(): close code %d is not allowed (expected 1000 or 3000 to 4999)", code);
    timers_free(b->s); /* the socket's timers end with it: none fires while it closes */
    return 0;
}

static void timer_fire(ll_loop *loop, void *ud) {
    ws_timer *t = ud;
    wsock *s = t->s;
    lua_State *L = s->L;
    lua_State *co = lua_newthread(L);
    int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_rawgeti(co, LUA_REGISTRYINDEX, t->fn_ref);
    if (t->interval_us) {
        ll_loop_timer_start(loop, &t->timer, t->interval_us);
    } else {
        ws_timer **p = &s->timers;
        while (*p != t) p = &(*p)->next;
        *p = t->next;
        timer_free(s, t);
    }
    ll_vu_task_start(s->vu, co, co_ref, 0); /* s may be gone from here on */
}

static int start_timer(lua_State *L, const char *W, int repeat) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    double ms = luaL_optnumber(L, 3, 0);
    if (ms != ms || ms < 0) ms = 0;
    if (ms > 1e12) ms = 1e12;
    wsock *s = b->s;
    if (!s || !s->ws) return luaL_error(L, "socket:%s(): the socket is closed", W);
    ws_timer *t = ll_xcalloc(1, sizeof(*t));
    lua_pushvalue(L, 2);
    t->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    t->s = s;
    uint64_t us = (uint64_t)(ms * 1000);
    t->interval_us = repeat ? (us ? us : 1000) : 0;
    t->next = s->timers;
    s->timers = t;
    ll_loop_timer_init(&t->timer, timer_fire, t);
    ll_loop_timer_start(ll_worker_loop(ll_vu_worker(s->vu)), &t->timer, repeat ? t->interval_us : us);
    return 0;
}

static int l_set_timeout(lua_State *L) { return start_timer(L, "set_timeout", 0); }
static int l_set_interval(lua_State *L) { return start_timer(L, "set_interval", 1); }

/* ---- ws.connect ---- */

static char default_client_key; /* registry: the Client whose options a connect without one uses */

static const ll_client_opts *connect_client(lua_State *L, int params) {
    ll_http_client *c;
    if (params) lua_getfield(L, params, "client");
    if (params && !lua_isnil(L, -1)) {
        c = ll_http_client_check(L, lua_gettop(L));
    } else {
        if (params) lua_pop(L, 1);
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
    return ll_http_client_opts(L, c); /* the Client stays on the stack */
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
static char *connect_cookie(lua_State *L, ll_vu *vu, const char *http_url, int params) {
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
                luaL_error(L, "ws.connect(): params.cookies: expected name = \"value\" strings");
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
        luaL_error(L, "ws.connect(): params.cookies must be a table");
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

static void copy_tags(lua_State *L, wsock *s, int params) {
    lua_getfield(L, params, "tags");
    if (lua_istable(L, -1)) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)) {
                s->tags = ll_xrealloc(s->tags, (size_t)(s->ntags + 1) * sizeof(*s->tags));
                s->tags[s->ntags].key = ll_xstrdup(lua_tostring(L, -2));
                lua_pushvalue(L, -1);
                s->tags[s->ntags++].value = ll_xstrdup(lua_tostring(L, -1));
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* ws.connect(url[, params], setup) */
static int l_connect(lua_State *L) {
    ll_vu *vu = ll_luaload_vu(L, "ws.connect()");
    const char *url = luaL_checkstring(L, 1);
    const int params = 2, setup = 3;
    if (lua_isfunction(L, 2)) { /* ws.connect(url, setup) */
        lua_settop(L, 2);
        lua_pushnil(L);
        lua_insert(L, 2);
    }
    lua_settop(L, 3);
    if (lua_isnil(L, params)) {
        lua_newtable(L);
        lua_replace(L, params);
    }
    luaL_checktype(L, params, LUA_TTABLE);
    if (!lua_isnil(L, setup)) luaL_checktype(L, setup, LUA_TFUNCTION);
    ll_resolver *dns = ll_worker_dns(ll_vu_worker(vu));
    if (!dns) return luaL_error(L, "ws.connect(): out of memory");
    ll_ws_opts o;
    memset(&o, 0, sizeof(o));
    o.client = connect_client(L, params);
    o.dns = dns;
    /* headers, in the table's order */
    ll_header hs[64];
    lua_getfield(L, params, "headers");
    int headers = lua_gettop(L);
    if (lua_istable(L, headers)) {
        lua_pushnil(L);
        while (lua_next(L, headers)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                return luaL_error(L, "ws.connect(): params.headers: expected name = \"value\" strings");
            if (o.nheaders == 64) return luaL_error(L, "ws.connect(): params.headers: more than 64 headers");
            hs[o.nheaders].name = (char *)lua_tostring(L, -2); /* the table keeps both */
            hs[o.nheaders++].value = (char *)lua_tostring(L, -1);
            lua_pop(L, 1);
        }
    } else if (!lua_isnil(L, headers)) {
        return luaL_error(L, "ws.connect(): params.headers must be a table");
    }
    o.headers = hs;
    /* subprotocols offered, besides a Sec-WebSocket-Protocol header */
    const char *protos[16];
    lua_getfield(L, params, "subprotocols");
    if (lua_istable(L, -1)) {
        for (int i = 1; i <= (int)lua_objlen(L, -1) && o.nprotocols < 16; i++) {
            lua_rawgeti(L, -1, i);
            if (!lua_isstring(L, -1)) return luaL_error(L, "ws.connect(): params.subprotocols: expected strings");
            protos[o.nprotocols++] = lua_tostring(L, -1);
            lua_pop(L, 1); /* kept by the table */
        }
    }
    o.protocols = protos;
    lua_getfield(L, params, "compression");
    const char *comp = lua_tostring(L, -1);
    if (comp && strcmp(comp, "deflate"))
        return luaL_error(L, "ws.connect(): params.compression: expected \"deflate\", got \"%s\"", comp);
    o.deflate = comp != NULL;
    lua_pop(L, 1);
    /* the jar's cookies are the http(s) URL's (ws:// -> http://, wss:// -> https://) */
    const char *http_url = strncasecmp(url, "ws", 2) ? url : lua_pushfstring(L, "http%s", url + 2);
    lua_getfield(L, params, "tags"); /* checked before anything is allocated */
    if (!lua_isnil(L, -1) && !lua_istable(L, -1)) return luaL_error(L, "ws.connect(): params.tags must be a table");
    lua_pop(L, 1);
    char *cookie = connect_cookie(L, vu, http_url, params); /* the last that may raise */
    o.cookie = cookie;

    wsock *s = ll_xcalloc(1, sizeof(*s));
    s->vu = vu;
    s->L = ll_worker_lua(ll_vu_worker(vu));
    s->url = ll_xstrdup(url);
    s->http_url = ll_xstrdup(http_url);
    s->subproto = ll_xstrdup("");
    s->group = ll_xstrdup(ll_vu_group_path(vu));
    snprintf(s->status, sizeof(s->status), "0");
    s->box = lua_newuserdata(L, sizeof(ws_box));
    s->box->s = s;
    luaL_getmetatable(L, SOCKET_MT);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    s->box_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    int box = lua_gettop(L);
    lua_newtable(L);
    s->handlers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->resp_ref = LUA_NOREF;
    copy_tags(L, s, params);
    static const ll_ws_callbacks cb = {on_open, on_message, on_ping, on_pong, on_error, on_close};
    char err[320];
    s->ws = ll_ws_open(ll_worker_loop(ll_vu_worker(vu)), url, &o, &cb, s, err, sizeof(err));
    free(cookie);
    if (!s->ws) {
        session_free(s);
        return luaL_error(L, "ws.connect(): %s", err);
    }
    if (!lua_isnil(L, setup)) { /* it registers handlers; the events come from the loop later */
        lua_pushvalue(L, setup);
        lua_pushvalue(L, box);
        if (lua_pcall(L, 1, 0, 0) != 0) {
            session_free(s);
            return lua_error(L);
        }
    }
    s->waiter = ll_vu_wait(vu, session_cancel, s);
    return ll_luaload_wait(L, vu);
}

int luaopen_luaload_ws(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"on", l_on},
        {"send", l_send},
        {"send_binary", l_send_binary}, {"sendBinary", l_send_binary},
        {"ping", l_ping},
        {"close", l_close},
        {"set_timeout", l_set_timeout}, {"setTimeout", l_set_timeout},
        {"set_interval", l_set_interval}, {"setInterval", l_set_interval},
        {NULL, NULL},
    };
    static const luaL_Reg fns[] = {{"connect", l_connect}, {NULL, NULL}};
    lua_getglobal(L, "require"); /* the Client type, for the options of the handshake */
    lua_pushliteral(L, "luaload.http");
    lua_call(L, 1, 0);
    ll_lua_class(L, SOCKET_MT, methods, NULL, 0);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
