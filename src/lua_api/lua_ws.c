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
 * The params, the metrics (k6's names and tags) and the handlers' tasks
 * are lua_ws_session.h's, shared with luaload.websockets. A handshake that
 * fails (no connection, a status other than 101) is a counted session
 * whose Response carries the status and the error, not a script error; a
 * session cut at the end of the test still records its duration. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "http_response.h"
#include "modules.h"
#include "script_host.h"
#include "lua_ws_session.h"
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
    ll_lua_ws_session ss;            /* its connection, tags and metrics */
    lua_State *L;                /* the worker's state */
    ws_box *box;
    int box_ref, handlers_ref, resp_ref;
    ll_vu_task *waiter;          /* the coroutine in ws.connect */
    ws_timer *timers;
};

/* ---- the session's life ---- */

static void timer_free(wsock *s, ws_timer *t) {
    ll_loop_timer_stop(ll_worker_loop(ll_vu_worker(s->ss.vu)), &t->timer);
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

/* Everything of s goes; the script's socket is left closed. A session
 * still on (its iteration cut) records its duration and bytes first. */
static void session_free(wsock *s) {
    timers_free(s);
    ll_lua_ws_session_free(&s->ss);
    s->box->s = NULL;
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->box_ref);
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->handlers_ref);
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->resp_ref);
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
 * as a task of the VU. Returns 1, or 0 when s is gone (lua_ws_session.h). */
static int emit(wsock *s, const char *event, int nargs) {
    lua_State *L = s->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->handlers_ref);
    lua_getfield(L, -1, event);
    lua_replace(L, -2);
    lua_insert(L, -nargs - 1); /* the list below the arguments */
    int ok = ll_lua_ws_session_run(&s->ss, L, -nargs - 1, nargs);
    lua_pop(L, 1);
    return ok;
}

static void push_response(wsock *s, const ll_ws_open_result *r) {
    lua_State *L = s->L;
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, r->status);
    lua_setfield(L, -2, "status");
    lua_pushstring(L, s->ss.url);
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
    push_response(s, r);
    ll_lua_ws_session_opened(&s->ss, r);
    if (r->error_code) { /* nothing follows a failed open */
        session_finish(s);
        return;
    }
    (void)emit(s, "open", 0);
}

static void on_message(ll_ws *ws, int opcode, const char *data, size_t len, void *ud) {
    (void)ws;
    wsock *s = ud;
    ll_lua_ws_session_sample(&s->ss, LL_M_WS_MSGS_RECEIVED, 1);
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
    ll_lua_ws_session_pong(&s->ss);
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
    ll_lua_ws_session_end(&s->ss);
    timers_free(s);
    lua_pushinteger(s->L, code);
    lua_pushlstring(s->L, reason, len);
    if (emit(s, "close", 2)) session_finish(s);
}

/* ---- the socket's methods ---- */

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
    ll_handlers_add(L, b->s->handlers_ref, ev, 3);
    return 0;
}

/* Queues a message, or raises when the socket is not open (still
 * connecting, closing or closed). */
static int send_as(lua_State *L, int opcode, const char *W) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    size_t len;
    const char *p = luaL_checklstring(L, 2, &len);
    if (!b->s || ll_lua_ws_session_send(&b->s->ss, opcode, p, len) < 0)
        return luaL_error(L, "socket:%s(): the socket is not open", W);
    return 0;
}

static int l_send(lua_State *L) { return send_as(L, LL_WS_TEXT, "send"); }
static int l_send_binary(lua_State *L) { return send_as(L, LL_WS_BINARY, "send_binary"); }

static int l_ping(lua_State *L) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    if (!b->s || ll_lua_ws_session_ping(&b->s->ss) < 0) return luaL_error(L, "socket:ping(): the socket is not open");
    return 0;
}

static int l_close(lua_State *L) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    int code = (int)luaL_optinteger(L, 2, LL_WS_CLOSE_NORMAL);
    if (!b->s || !b->s->ss.ws) return 0; /* closed already */
    if (ll_ws_close(b->s->ss.ws, code, "", 0) < 0)
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
    ll_vu_task_start(s->ss.vu, co, co_ref, 0); /* s may be gone from here on */
}

static int start_timer(lua_State *L, const char *W, int repeat) {
    ws_box *b = luaL_checkudata(L, 1, SOCKET_MT);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    double ms = luaL_optnumber(L, 3, 0);
    if (ms != ms || ms < 0) ms = 0;
    if (ms > 1e12) ms = 1e12;
    wsock *s = b->s;
    if (!s || !s->ss.ws) return luaL_error(L, "socket:%s(): the socket is closed", W);
    ws_timer *t = ll_xcalloc(1, sizeof(*t));
    lua_pushvalue(L, 2);
    t->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    t->s = s;
    uint64_t us = (uint64_t)(ms * 1000);
    t->interval_us = repeat ? (us ? us : 1000) : 0;
    t->next = s->timers;
    s->timers = t;
    ll_loop_timer_init(&t->timer, timer_fire, t);
    ll_loop_timer_start(ll_worker_loop(ll_vu_worker(s->ss.vu)), &t->timer, repeat ? t->interval_us : us);
    return 0;
}

static int l_set_timeout(lua_State *L) { return start_timer(L, "set_timeout", 0); }
static int l_set_interval(lua_State *L) { return start_timer(L, "set_interval", 1); }

/* ---- ws.connect ---- */

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
    ll_lua_ws_params p;
    ll_lua_ws_session_params_read(L, vu, "ws.connect()", url, params, 0, &p);

    wsock *s = ll_xcalloc(1, sizeof(*s));
    ll_lua_ws_session_init(&s->ss, L, vu, url, &p, params);
    s->L = ll_worker_lua(ll_vu_worker(vu));
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
    static const ll_ws_callbacks cb = {on_open, on_message, on_ping, on_pong, on_error, on_close};
    char err[320];
    int rc = ll_lua_ws_session_open(&s->ss, &p, &cb, s, err, sizeof(err));
    ll_lua_ws_session_params_free(&p);
    if (rc < 0) {
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
