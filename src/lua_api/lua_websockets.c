/* lua_websockets.c -- luaload.websockets, k6/websockets in Lua: the
 * browser-like WebSocket that does not block. websockets.WebSocket(url[,
 * protocols[, params]]) starts the open (http/ws_conn.h) on the worker's
 * loop and returns the socket at once, CONNECTING; its events come from the
 * loop to s.onopen, onmessage, onerror, onclose, onping, onpong and the
 * listeners of s:add_event_listener, each run as a task of the VU with an
 * event table ({type = "message", data = ...}). Several sockets per VU.
 *
 * A socket not yet closed is one of its VU's pending things
 * (script_host.h): the iteration goes on until every socket has closed
 * (k6's event loop), and the end of the test, or a handler that fails the
 * iteration, cancels it -- the connection freed, its duration and bytes
 * recorded, no handler after. A failed open (no connection, a status
 * other than 101) is a counted session that gives an error event and a
 * close event (code 1006), not a script error.
 *
 * The socket the script holds is a userdata whose environment table keeps
 * its handlers, its listeners and its url, protocol and extensions; it
 * outlives the connection (a closed socket reads CLOSED). The params, the
 * metrics and the tasks are lua_ws_session.h's, shared with luaload.ws. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "script_host.h"
#include "lua_ws_session.h"
#include "xmalloc.h"

#define WEBSOCKET_MT "luaload.websockets.WebSocket"

/* the events, with their on-handler fields */
static const char *const EVENTS[] = {"open", "message", "error", "close", "ping", "pong", NULL};
static const char *const ONS[] = {"onopen", "onmessage", "onerror", "onclose", "onping", "onpong", NULL};

typedef struct wsb wsb;

typedef struct wsb_box {        /* the socket the script holds */
    wsb *s;                     /* NULL once closed */
    int arraybuffer;            /* binary_type: 1 "arraybuffer", 0 "blob" */
} wsb_box;

struct wsb {
    ll_vu_pending pending;      /* first: the VU's list holds it; while not closed */
    ll_lua_ws_session ss;           /* its connection, tags and metrics */
    lua_State *L;               /* the worker's state */
    wsb_box *box;
    int box_ref;                /* keeps the socket while it is on */
};

/* ---- the socket's life ---- */

/* Everything of s goes; the script's socket reads CLOSED. A session still
 * on (its iteration cut) records its duration and bytes first. */
static void socket_free(wsb *s) {
    ll_lua_ws_session_free(&s->ss);
    s->box->s = NULL;
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->box_ref);
    free(s);
}

/* The iteration was cut with the socket on, or failed: it ends here,
 * silently. */
static void socket_cancel(void *ud) { socket_free(ud); }

static int index_of(const char *const *names, const char *name) {
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

/* Pushes a new event table {type = event}. */
static void push_event(lua_State *L, const char *event) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, event);
    lua_setfield(L, -2, "type");
}

/* Runs the socket's handlers of the event table on top of s->L (popped):
 * its on-handler, then its listeners in the order added. Returns 1, or 0
 * when s is gone (a handler failed the iteration). */
static int emit(wsb *s, int event) {
    lua_State *L = s->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->box_ref);
    lua_getfenv(L, -1);
    lua_replace(L, -2);
    int env = lua_gettop(L);
    lua_newtable(L); /* the functions to call, in order, without holes */
    int list = env + 1, n = 0;
    lua_getfield(L, env, ONS[event]);
    if (lua_isfunction(L, -1)) lua_rawseti(L, list, ++n);
    else lua_pop(L, 1);
    lua_getfield(L, env, "listeners");
    lua_getfield(L, -1, EVENTS[event]);
    int nl = lua_istable(L, -1) ? (int)lua_objlen(L, -1) : 0;
    for (int i = 1; i <= nl; i++) {
        lua_rawgeti(L, -1, i);
        lua_rawseti(L, list, ++n);
    }
    lua_pop(L, 2);
    lua_pushvalue(L, env - 1); /* the event on top */
    int ok = ll_lua_ws_session_run(&s->ss, L, list, 1);
    lua_settop(L, env - 2);
    return ok;
}

/* The socket is closed: error (msg, when not NULL) and close events, then
 * it goes. It stays pending until both are started, so a handler that
 * fails the iteration cancels it (and no handler runs in the next one). */
static void finish(wsb *s, int code, const char *reason, size_t len, int error_code, const char *msg) {
    lua_State *L = s->L;
    ll_lua_ws_session_end(&s->ss);
    s->box->s = NULL; /* CLOSED from here: the handlers' send raises */
    if (msg) {
        push_event(L, "error");
        lua_pushstring(L, msg);
        lua_setfield(L, -2, "error");
        lua_pushinteger(L, error_code);
        lua_setfield(L, -2, "code");
        if (!emit(s, 2)) return;
    }
    push_event(L, "close");
    lua_pushinteger(L, code);
    lua_setfield(L, -2, "code");
    lua_pushlstring(L, reason, len);
    lua_setfield(L, -2, "reason");
    lua_pushboolean(L, msg == NULL && code != LL_WS_CLOSE_ABNORMAL);
    lua_setfield(L, -2, "was_clean");
    if (!emit(s, 3)) return;
    ll_vu_pending_del(s->ss.vu, &s->pending);
    socket_free(s);
}

/* Sets field of the socket's environment to the string s. */
static void set_env_string(wsb *s, const char *field, const char *value) {
    lua_State *L = s->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->box_ref);
    lua_getfenv(L, -1);
    lua_pushstring(L, value);
    lua_setfield(L, -2, field);
    lua_pop(L, 2);
}

static void on_open(ll_ws *ws, const ll_ws_open_result *r, void *ud) {
    (void)ws;
    wsb *s = ud;
    set_env_string(s, "protocol", r->protocol);
    set_env_string(s, "extensions", r->extensions);
    ll_lua_ws_session_opened(&s->ss, r);
    if (r->error_code) { /* nothing follows a failed open */
        finish(s, LL_WS_CLOSE_ABNORMAL, "", 0, r->error_code, r->error);
        return;
    }
    push_event(s->L, "open");
    (void)emit(s, 0);
}

static void on_message(ll_ws *ws, int opcode, const char *data, size_t len, void *ud) {
    wsb *s = ud;
    if (ll_ws_ready_state(ws) != LL_WS_OPEN) return; /* k6: none after close() */
    ll_lua_ws_session_sample(&s->ss, LL_M_WS_MSGS_RECEIVED, 1);
    push_event(s->L, "message");
    lua_pushlstring(s->L, data, len);
    lua_setfield(s->L, -2, "data");
    lua_pushboolean(s->L, opcode == LL_WS_BINARY);
    lua_setfield(s->L, -2, "binary");
    (void)emit(s, 1);
}

static void on_ping(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    wsb *s = ud;
    push_event(s->L, "ping");
    lua_pushlstring(s->L, data, len);
    lua_setfield(s->L, -2, "data");
    (void)emit(s, 4);
}

static void on_pong(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    wsb *s = ud;
    ll_lua_ws_session_pong(&s->ss);
    push_event(s->L, "pong");
    lua_pushlstring(s->L, data, len);
    lua_setfield(s->L, -2, "data");
    (void)emit(s, 5);
}

static void on_error(ll_ws *ws, int code, const char *msg, void *ud) {
    (void)ws;
    wsb *s = ud;
    push_event(s->L, "error");
    lua_pushstring(s->L, msg);
    lua_setfield(s->L, -2, "error");
    lua_pushinteger(s->L, code);
    lua_setfield(s->L, -2, "code");
    (void)emit(s, 2);
}

static void on_close(ll_ws *ws, int code, const char *reason, size_t len, void *ud) {
    (void)ws;
    finish(ud, code, reason, len, 0, NULL);
}

/* ---- the socket's methods and fields ---- */

static wsb_box *check_box(lua_State *L) { return luaL_checkudata(L, 1, WEBSOCKET_MT); }

/* Queues a message, or raises when the socket is not open (still
 * connecting, closing or closed). */
static int send_as(lua_State *L, int opcode, const char *W) {
    wsb_box *b = check_box(L);
    size_t len;
    const char *p = luaL_checklstring(L, 2, &len);
    if (!b->s || ll_lua_ws_session_send(&b->s->ss, opcode, p, len) < 0)
        return luaL_error(L, "WebSocket:%s(): the socket is not open", W);
    return 0;
}

static int l_send(lua_State *L) { return send_as(L, LL_WS_TEXT, "send"); }
static int l_send_binary(lua_State *L) { return send_as(L, LL_WS_BINARY, "send_binary"); }

static int l_ping(lua_State *L) {
    wsb_box *b = check_box(L);
    if (!b->s || ll_lua_ws_session_ping(&b->s->ss) < 0)
        return luaL_error(L, "WebSocket:ping(): the socket is not open");
    return 0;
}

static int l_close(lua_State *L) {
    wsb_box *b = check_box(L);
    int code = (int)luaL_optinteger(L, 2, LL_WS_CLOSE_NORMAL);
    size_t len = 0;
    const char *reason = luaL_optlstring(L, 3, "", &len);
    if (!b->s || !b->s->ss.ws) return 0; /* closed already */
    if (ll_ws_close(b->s->ss.ws, code, reason, len) < 0)
        return luaL_error(L, "WebSocket:close(): close code %d or a reason of %d bytes is not allowed (expected "
                             "1000 or 3000 to 4999, and at most 123 bytes)", code, (int)len);
    return 0;
}

static int event_arg(lua_State *L, const char *W) {
    const char *ev = luaL_checkstring(L, 2);
    int i = index_of(EVENTS, ev);
    if (i < 0)
        return luaL_error(L, "WebSocket:%s(): unknown event \"%s\" (expected open, message, error, close, ping or "
                             "pong)", W, ev);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    return i;
}

/* s:add_event_listener(event, fn): fn(event) after the on-handler, in the
 * order added; the same fn twice runs once, as in a browser. */
static int l_add_event_listener(lua_State *L) {
    int ev = event_arg(L, "add_event_listener");
    lua_getfenv(L, 1);
    lua_getfield(L, -1, "listeners");
    lua_getfield(L, -1, EVENTS[ev]);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, EVENTS[ev]);
    }
    int n = (int)lua_objlen(L, -1);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        int same = lua_rawequal(L, -1, 3);
        lua_pop(L, 1);
        if (same) return 0;
    }
    lua_pushvalue(L, 3);
    lua_rawseti(L, -2, n + 1);
    return 0;
}

/* s:remove_event_listener(event, fn) */
static int l_remove_event_listener(lua_State *L) {
    int ev = event_arg(L, "remove_event_listener");
    lua_getfenv(L, 1);
    lua_getfield(L, -1, "listeners");
    lua_getfield(L, -1, EVENTS[ev]);
    if (!lua_istable(L, -1)) return 0;
    int list = lua_gettop(L), n = (int)lua_objlen(L, list);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, list, i);
        int same = lua_rawequal(L, -1, 3);
        lua_pop(L, 1);
        if (!same) continue;
        for (int j = i; j < n; j++) {
            lua_rawgeti(L, list, j + 1);
            lua_rawseti(L, list, j);
        }
        lua_pushnil(L);
        lua_rawseti(L, list, n);
        return 0;
    }
    return 0;
}

static const luaL_Reg METHODS[] = {
    {"send", l_send},
    {"send_binary", l_send_binary}, {"sendBinary", l_send_binary},
    {"ping", l_ping},
    {"close", l_close},
    {"add_event_listener", l_add_event_listener}, {"addEventListener", l_add_event_listener},
    {"remove_event_listener", l_remove_event_listener}, {"removeEventListener", l_remove_event_listener},
    {NULL, NULL},
};

static int ready_state(const wsb_box *b) {
    return b->s && b->s->ss.ws ? (int)ll_ws_ready_state(b->s->ss.ws) : LL_WS_CLOSED;
}

static int l_index(lua_State *L) {
    wsb_box *b = check_box(L);
    const char *k = luaL_checkstring(L, 2);
    if (!strcmp(k, "ready_state") || !strcmp(k, "readyState")) {
        lua_pushinteger(L, ready_state(b));
    } else if (!strcmp(k, "binary_type") || !strcmp(k, "binaryType")) {
        lua_pushstring(L, b->arraybuffer ? "arraybuffer" : "blob");
    } else if (!strcmp(k, "buffered_amount") || !strcmp(k, "bufferedAmount")) {
        lua_pushinteger(L, b->s && b->s->ss.ws ? (lua_Integer)ll_ws_buffered(b->s->ss.ws) : 0);
    } else if (index_of(ONS, k) >= 0 || !strcmp(k, "url") || !strcmp(k, "protocol") || !strcmp(k, "extensions")) {
        lua_getfenv(L, 1);
        lua_getfield(L, -1, k);
    } else {
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
    }
    return 1;
}

static int l_newindex(lua_State *L) {
    wsb_box *b = check_box(L);
    const char *k = luaL_checkstring(L, 2);
    if (index_of(ONS, k) >= 0) {
        if (!lua_isnil(L, 3) && !lua_isfunction(L, 3))
            return luaL_error(L, "WebSocket.%s: expected a function or nil, got %s", k, luaL_typename(L, 3));
        lua_getfenv(L, 1);
        lua_pushvalue(L, 3);
        lua_setfield(L, -2, k);
        return 0;
    }
    if (!strcmp(k, "binary_type") || !strcmp(k, "binaryType")) {
        const char *v = lua_type(L, 3) == LUA_TSTRING ? lua_tostring(L, 3) : NULL;
        if (!v || (strcmp(v, "blob") && strcmp(v, "arraybuffer")))
            return luaL_error(L, "WebSocket.%s: expected \"blob\" or \"arraybuffer\", got %s", k,
                              v ? lua_pushfstring(L, "\"%s\"", v) : luaL_typename(L, 3));
        b->arraybuffer = !strcmp(v, "arraybuffer");
        return 0;
    }
    return luaL_error(L, "WebSocket.%s cannot be set (settable: onopen, onmessage, onerror, onclose, onping, "
                         "onpong, binary_type)", k);
}

/* ---- websockets.WebSocket ---- */

/* websockets.WebSocket(url[, protocols[, params]]) */
static int l_websocket(lua_State *L) {
    const char *W = "websockets.WebSocket()";
    ll_vu *vu = ll_luaload_vu(L, W);
    const char *url = luaL_checkstring(L, 1);
    lua_settop(L, 3);
    ll_lua_ws_params p;
    ll_lua_ws_session_params_read(L, vu, W, url, 3, 2, &p);

    wsb *s = ll_xcalloc(1, sizeof(*s));
    ll_lua_ws_session_init(&s->ss, L, vu, url, &p, 3);
    s->L = ll_worker_lua(ll_vu_worker(vu));
    s->box = lua_newuserdata(L, sizeof(wsb_box));
    s->box->s = s;
    s->box->arraybuffer = 0;
    luaL_getmetatable(L, WEBSOCKET_MT);
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, 8); /* its environment: handlers, listeners, url, protocol, extensions */
    lua_newtable(L);
    lua_setfield(L, -2, "listeners");
    lua_pushstring(L, url);
    lua_setfield(L, -2, "url");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "protocol");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "extensions");
    lua_setfenv(L, -2);
    lua_pushvalue(L, -1);
    s->box_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    static const ll_ws_callbacks cb = {on_open, on_message, on_ping, on_pong, on_error, on_close};
    char err[320];
    int rc = ll_lua_ws_session_open(&s->ss, &p, &cb, s, err, sizeof(err));
    ll_lua_ws_session_params_free(&p);
    if (rc < 0) {
        socket_free(s);
        return luaL_error(L, "%s: %s", W, err);
    }
    ll_vu_pending_add(vu, &s->pending, socket_cancel, s);
    return 1;
}

int luaopen_luaload_websockets(lua_State *L) {
    lua_getglobal(L, "require"); /* the Client type, for the options of the handshake */
    lua_pushliteral(L, "luaload.http");
    lua_call(L, 1, 0);
    if (luaL_newmetatable(L, WEBSOCKET_MT)) {
        lua_pushcfunction(L, l_index);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_newindex);
        lua_setfield(L, -2, "__newindex");
        lua_newtable(L);
        luaL_register(L, NULL, METHODS);
        lua_setfield(L, -2, "methods");
        lua_pushliteral(L, WEBSOCKET_MT);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_websocket);
    lua_setfield(L, -2, "WebSocket");
    static const char *const STATES[] = {"CONNECTING", "OPEN", "CLOSING", "CLOSED"};
    for (int i = 0; i < 4; i++) {
        lua_pushinteger(L, i);
        lua_setfield(L, -2, STATES[i]);
    }
    return 1;
}
