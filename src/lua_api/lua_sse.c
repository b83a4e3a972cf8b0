/* lua_sse.c -- luaload.sse, xk6-sse's shape: sse.open(url, params,
 * function(client) client:on("open" | "event" | "error", fn) end) sends one
 * HTTP request on the default Client (an http_reqs sample with its
 * timings, as any request) whose body goes, as it arrives, through
 * on_chunk's C path to an event-stream parser (sse_parse.c); each event
 * runs its handler synchronously (handlers cannot wait, as on_chunk) and
 * is counted (sse_events, sse_time_to_first_event from the request's
 * start, sse_event_gap between two events of one stream). client:close()
 * from a handler ends the stream cleanly (LL_CHUNK_STOP). A handler that
 * raises ends it too, and sse.open raises its error. The reconnection
 * loop (params.reconnect: retry: and Last-Event-ID honoured) is in
 * lib/lua/luaload/sse_wrap.lua, which calls open_once and after here. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_call.h"
#include "http_client.h"
#include "loop.h"
#include "modules.h"
#include "script_host.h"
#include "sse_parse.h"
#include "state.h"
#include "xmalloc.h"

#define CLIENT_MT "luaload.sse.Client"
#define W "sse.open"
#define RECONNECTS_MAX 1000          /* reconnect = true: this many at most */
#define RETRY_DEFAULT_MS 1000        /* without a retry: from the server */
#define STREAM_TIMEOUT_MS 86400000L  /* without params.timeout: a day */

enum { H_OPEN, H_EVENT, H_ERROR, NHANDLERS };
static const char *const HANDLERS[] = {"open", "event", "error"};

/* the ids of sse_* in the run's registry, per state */
typedef struct sse_ids {
    int events, first_event, gap, streams, errors;
} sse_ids;
static char IDS_KEY;

typedef struct sse_client {
    ll_sse_parse parse;
    lua_State *L;                /* the worker's state: where the handlers run */
    ll_vu *vu;
    ll_http_call *call;          /* the stream's request while it runs; NULL */
    int handlers[NHANDLERS];     /* registry references; 0: none */
    int closed;                  /* client:close() was called */
    int raised;                  /* a handler raised: the stream ended, sse.open raises */
    int opened;                  /* the open handler ran for this stream */
    int reconnects_left;
    int streams;                 /* opened so far (a reconnection is one more) */
    uint64_t start_ns, last_ns;  /* this stream's request start, its last event */
    uint64_t nevents;            /* this stream's */
    char *url;
    ll_tag *tags;                /* params.tags */
    int ntags, cap_tags;
    sse_ids ids;
} sse_client;

/* ---- tags of the samples: url, params.tags, the VU's ---- */

static const char *user_tag(const sse_client *c, const char *key) {
    for (int i = 0; i < c->ntags; i++)
        if (!strcmp(c->tags[i].key, key)) return c->tags[i].value;
    return NULL;
}

static const char *tag_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const sse_client *c = ctx;
    const char *v = user_tag(c, key);
    if (!v && !strcmp(key, "url")) v = c->url;
    return v ? v : ll_vu_tag(c->vu, key);
}

static void tag_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const sse_client *c = ctx;
    if (!user_tag(c, "url")) fn(ud, "url", c->url);
    for (int i = 0; i < c->ntags; i++) fn(ud, c->tags[i].key, c->tags[i].value);
    ll_vu_tags(c->vu, fn, ud);
}

static void sample(sse_client *c, int metric, double value) {
    ll_tag_source t = {tag_get, tag_list, c, -1, 0};
    ll_vu_sample(c->vu, metric, value, &t);
}

/* ---- handlers, run while the stream arrives ---- */

/* Runs handler h with the value on top of L (popped) in the VU, outside
 * its coroutines. An error it raises is kept in the call's anchor (where
 * http.c finds an on_chunk's) for sse.open to raise. 0, or 1 when it
 * raised. */
static int run_handler(sse_client *c, int h) {
    lua_State *L = c->L;
    if (!c->handlers[h]) {
        lua_pop(L, 1);
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->handlers[h]);
    lua_insert(L, -2);
    ll_vu_enter(c->vu);
    int rc = lua_pcall(L, 1, 0, 0);
    ll_vu_leave(c->vu);
    if (!rc) return 0;
    c->raised = 1;
    if (c->call && c->call->anchor_ref) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, c->call->anchor_ref);
        lua_insert(L, -2);
        lua_setfield(L, -2, "chunk_error");
    }
    lua_pop(L, 1);
    return 1;
}

static int l_error_text(lua_State *L) {
    lua_getfield(L, 1, "message");
    return 1;
}

/* The error handler's argument (xk6-sse's: e:error() is the message). */
static void push_error(lua_State *L, const char *msg) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    lua_pushcfunction(L, l_error_text);
    lua_setfield(L, -2, "error");
}

static int on_event(void *ud, const ll_sse_event *e) {
    sse_client *c = ud;
    uint64_t now = ll_loop_now_ns();
    sample(c, c->ids.events, 1);
    if (c->nevents++ == 0) sample(c, c->ids.first_event, (double)(now - c->start_ns) / 1e6);
    else sample(c, c->ids.gap, (double)(now - c->last_ns) / 1e6);
    c->last_ns = now;
    if (!c->handlers[H_EVENT]) return c->closed;
    lua_State *L = c->L;
    lua_createtable(L, 0, 5);
    lua_pushlstring(L, e->id, e->id_len);
    lua_setfield(L, -2, "id");
    lua_pushlstring(L, e->name, e->name_len);
    lua_setfield(L, -2, "name");
    lua_pushlstring(L, e->data, e->data_len);
    lua_setfield(L, -2, "data");
    lua_pushlstring(L, e->last_id, e->last_id_len);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "last_event_id");
    lua_setfield(L, -2, "lastEventId");
    return run_handler(c, H_EVENT) || c->closed;
}

static int on_parse_error(void *ud, const char *what) {
    sse_client *c = ud;
    sample(c, c->ids.errors, 1);
    if (!c->handlers[H_ERROR]) return c->closed;
    push_error(c->L, what);
    return run_handler(c, H_ERROR) || c->closed;
}

/* The stream's bytes as they arrive (req->on_chunk): to the parser, when
 * the response is a 200 (another's body is no event stream). */
static int on_chunk(void *ud, int status, const char *p, size_t n) {
    sse_client *c = ud;
    if (status != 200) return LL_CHUNK_GO; /* not a stream: after() tells the error handler */
    if (!c->opened) { /* the first bytes: the stream is open */
        c->opened = 1;
        lua_pushnil(c->L);
        if (run_handler(c, H_OPEN) || c->closed) return LL_CHUNK_STOP;
    }
    int rc = ll_sse_parse_feed(&c->parse, p, n);
    if (rc < 0) return LL_CHUNK_FAIL;
    return rc || c->raised || c->closed ? LL_CHUNK_STOP : LL_CHUNK_GO;
}

/* ---- the client ---- */

static sse_client *check_client(lua_State *L, int idx) { return luaL_checkudata(L, idx, CLIENT_MT); }

static int c_on(lua_State *L) {
    sse_client *c = check_client(L, 1);
    const char *ev = luaL_checkstring(L, 2);
    int h = 0;
    while (h < NHANDLERS && strcmp(HANDLERS[h], ev) != 0) h++;
    if (h == NHANDLERS) return luaL_error(L, "client:on: unknown event '%s' (expected open, event or error)", ev);
    if (!lua_isfunction(L, 3)) return luaL_error(L, "client:on: the handler must be a function, got %s", luaL_typename(L, 3));
    if (c->handlers[h]) luaL_unref(L, LUA_REGISTRYINDEX, c->handlers[h]);
    lua_pushvalue(L, 3);
    c->handlers[h] = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static int c_close(lua_State *L) {
    check_client(L, 1)->closed = 1;
    return 0;
}

static int c_gc(lua_State *L) {
    sse_client *c = check_client(L, 1);
    for (int h = 0; h < NHANDLERS; h++)
        if (c->handlers[h]) luaL_unref(L, LUA_REGISTRYINDEX, c->handlers[h]);
    ll_sse_parse_free(&c->parse);
    for (int i = 0; i < c->ntags; i++) {
        free(c->tags[i].key);
        free(c->tags[i].value);
    }
    free(c->tags);
    free(c->url);
    memset(c, 0, sizeof(*c));
    return 0;
}

/* params.reconnect: false/nil 0, true RECONNECTS_MAX, or a count */
static int reconnects(lua_State *L, int params) {
    lua_getfield(L, params, "reconnect");
    int n = 0;
    if (lua_isboolean(L, -1)) n = lua_toboolean(L, -1) ? RECONNECTS_MAX : 0;
    else if (lua_isnumber(L, -1) && lua_tonumber(L, -1) >= 0 && lua_tonumber(L, -1) <= RECONNECTS_MAX)
        n = (int)lua_tointeger(L, -1);
    else if (!lua_isnil(L, -1))
        luaL_error(L, "%s: params.reconnect must be true, false or a count from 0 to %d, got %s", W, RECONNECTS_MAX,
                   lua_tostring(L, -1) ? lua_tostring(L, -1) : luaL_typename(L, -1));
    lua_pop(L, 1);
    return n;
}

static size_t max_event(lua_State *L, int params) {
    lua_getfield(L, params, "max_event_size");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_getfield(L, params, "maxEventSize");
    }
    size_t n = 0;
    if (lua_isnumber(L, -1) && lua_tonumber(L, -1) >= 1 && lua_tonumber(L, -1) <= (1 << 30))
        n = (size_t)lua_tointeger(L, -1);
    else if (!lua_isnil(L, -1))
        luaL_error(L, "%s: params.max_event_size must be a number of bytes from 1 to 1073741824", W);
    lua_pop(L, 1);
    return n;
}

static void read_tags(lua_State *L, int params, sse_client *c) {
    lua_getfield(L, params, "tags");
    if (lua_istable(L, -1)) {
        for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
            if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1)) continue; /* http checks them too */
            ll_xgrow((void **)&c->tags, &c->cap_tags, c->ntags + 1, sizeof(*c->tags));
            c->tags[c->ntags].key = ll_xstrdup(lua_tostring(L, -2));
            c->tags[c->ntags].value = ll_xstrdup(lua_tostring(L, -1));
            c->ntags++;
        }
    }
    lua_pop(L, 1);
}

/* new_client(url, params): the client handed to the script's function */
static int l_new_client(lua_State *L) {
    ll_vu *vu = ll_luaload_waiting_vu(L, "sse.open");
    const char *url = luaL_checkstring(L, 1);
    if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
        return luaL_error(L, "%s: params must be a table, got %s", W, luaL_typename(L, 2));
    int params = lua_istable(L, 2) ? 2 : 0;
    int left = params ? reconnects(L, params) : 0;
    size_t max = params ? max_event(L, params) : 0;
    sse_client *c = lua_newuserdata(L, sizeof(*c));
    memset(c, 0, sizeof(*c));
    luaL_getmetatable(L, CLIENT_MT);
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, &IDS_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    c->ids = *(sse_ids *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    c->L = ll_worker_lua(ll_vu_worker(vu));
    c->vu = vu;
    c->reconnects_left = left;
    c->url = ll_xstrdup(url);
    if (params) read_tags(L, params, c);
    ll_sse_sink sink = {on_event, on_parse_error, c};
    ll_sse_parse_init(&c->parse, &sink, max);
    return 1;
}

static int has_header(const ll_http_req *req, const char *name) {
    for (int i = 0; i < req->nheaders; i++)
        if (strcasecmp(req->headers[i].name, name) == 0) return 1;
    return 0;
}

/* The request built for this stream, before it starts: its chunks to c,
 * Accept, the last event ID on a reconnection, a day's timeout. */
static int adjust(lua_State *L, ll_http_req *req, ll_http_call *call, void *ud) {
    (void)L;
    sse_client *c = ud;
    req->on_chunk = on_chunk;
    req->chunk_ud = c;
    if (!req->timeout_ms) req->timeout_ms = STREAM_TIMEOUT_MS;
    if (!has_header(req, "Accept") && ll_http_req_add_header(req, "Accept", "text/event-stream") < 0) return -1;
    if (c->streams > 0 && c->parse.last_id.len && !has_header(req, "Last-Event-ID")) {
        char *id = ll_xstrndup(c->parse.last_id.p, c->parse.last_id.len);
        int rc = ll_http_req_add_header(req, "Last-Event-ID", id);
        free(id);
        if (rc < 0) return -1;
    }
    c->call = call;
    c->streams++;
    c->opened = 0;
    c->nevents = 0;
    c->start_ns = ll_loop_now_ns();
    ll_sse_parse_restart(&c->parse);
    sample(c, c->ids.streams, 1);
    return 0;
}

/* open_once(client, url, params): one stream; yields the VU until it ends,
 * resumed with the Response (or nil and the error a handler raised). */
static int l_open_once(lua_State *L) {
    sse_client *c = check_client(L, 1);
    luaL_checkstring(L, 2);
    lua_settop(L, 3);
    const char *method = "GET";
    int body = 0;
    lua_newtable(L); /* the params http takes: without sse's own */
    int hp = lua_gettop(L);
    if (lua_istable(L, 3)) {
        for (lua_pushnil(L); lua_next(L, 3); lua_pop(L, 1)) {
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
            if (!strcmp(k, "on_chunk") || !strcmp(k, "onChunk"))
                return luaL_error(L, "%s: on_chunk is sse.open's own (use client:on(\"event\", fn))", W);
            if (!strcmp(k, "reconnect") || !strcmp(k, "max_event_size") || !strcmp(k, "maxEventSize") ||
                !strcmp(k, "method") || !strcmp(k, "body"))
                continue;
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, hp);
        }
        lua_getfield(L, 3, "method");
        if (!lua_isnil(L, -1)) method = ll_http_client_check_method(L, lua_gettop(L), W);
        lua_getfield(L, 3, "body");
        if (!lua_isnil(L, -1)) body = lua_gettop(L);
    }
    return ll_http_request_wait(L, ll_http_default_client(L), W, method, 2, body, hp, adjust, c);
}

/* after(client, res): the stream ended with res (nil when a handler
 * raised). Tells the error handler about a failed request or a status
 * other than 200, and returns the seconds to wait before reconnecting, or
 * nothing when the stream is over for good. */
static int l_after(lua_State *L) {
    sse_client *c = check_client(L, 1);
    c->call = NULL;
    if (c->raised || !lua_istable(L, 2)) return 0;
    lua_getfield(L, 2, "status");
    int status = (int)lua_tointeger(L, -1);
    lua_getfield(L, 2, "error");
    const char *err = lua_tostring(L, -1);
    if (status != 200 && c->handlers[H_ERROR]) {
        char msg[64];
        snprintf(msg, sizeof(msg), "unexpected HTTP status %d (expected 200)", status);
        lua_rawgeti(L, LUA_REGISTRYINDEX, c->handlers[H_ERROR]);
        push_error(L, status ? msg : err && *err ? err : "the stream failed");
        lua_call(L, 1, 0); /* in the VU's coroutine: what it raises is sse.open's */
    }
    if (c->closed || c->reconnects_left <= 0 || (status != 200 && status != 0)) return 0;
    c->reconnects_left--;
    int64_t ms = c->parse.retry_ms >= 0 ? c->parse.retry_ms : RETRY_DEFAULT_MS;
    lua_pushnumber(L, (double)ms / 1000.0);
    return 1;
}

int luaopen_luaload_sse(lua_State *L) {
    static const luaL_Reg methods[] = {{"on", c_on}, {"close", c_close}, {NULL, NULL}};
    ll_lua_class(L, CLIENT_MT, methods, c_gc, 1);
    ll_registry *reg = ll_worker_registry(ll_state_worker(L));
    sse_ids *ids = lua_newuserdata(L, sizeof(*ids));
    ids->events = ll_registry_metric(reg, "sse_events", LL_COUNTER, LL_CONTAINS_DEFAULT);
    ids->first_event = ll_registry_metric(reg, "sse_time_to_first_event", LL_TREND, LL_CONTAINS_TIME);
    ids->gap = ll_registry_metric(reg, "sse_event_gap", LL_TREND, LL_CONTAINS_TIME);
    ids->streams = ll_registry_metric(reg, "sse_streams", LL_COUNTER, LL_CONTAINS_DEFAULT);
    ids->errors = ll_registry_metric(reg, "sse_errors", LL_COUNTER, LL_CONTAINS_DEFAULT);
    if (ids->events < 0 || ids->first_event < 0 || ids->gap < 0 || ids->streams < 0 || ids->errors < 0)
        return luaL_error(L, "luaload.sse: a custom metric already has one of the names sse_events, "
                             "sse_time_to_first_event, sse_event_gap, sse_streams, sse_errors");
    lua_pushlightuserdata(L, &IDS_KEY);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_getglobal(L, "require"); /* the default Client the streams go on */
    lua_pushliteral(L, "luaload.http");
    lua_call(L, 1, 0);
    /* sse.open in Lua (the reconnection loop waits between streams) */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.sse_wrap");
    lua_call(L, 1, 1);
    lua_pushcfunction(L, l_new_client);
    lua_pushcfunction(L, l_open_once);
    lua_pushcfunction(L, l_after);
    lua_call(L, 3, 1);
    return 1;
}
