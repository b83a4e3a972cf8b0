/* http_batch.c -- http.batch(requests) and client:batch(requests), as k6's:
 * one VU's requests run concurrently on its worker's loop, each on a lane
 * of its own (a connection per concurrent request, as k6 opens them), at
 * most options.batch at once and options.batchPerHost per host; each is
 * its own sample, redirects followed; the responses come back in the
 * shape of the argument (a list, or a table with the same keys). An
 * element is a URL, an http.Request, { method, url, body, params } or
 * { method = ..., url = ..., body = ..., params = ... }. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "http_call.h"
#include "http_options.h"
#include "http_response.h"
#include "modules.h"
#include "url.h"
#include "xmalloc.h"

#define W "http.batch"

typedef struct batch_elem {
    const ll_http_req *req;
    const char *method;
    char *host;                /* for batchPerHost; NULL when not limited */
    int running, done;
} batch_elem;

/* The batch a VU waits on (its ll_http_vu's batch_ud), a userdata freed by the
 * collector. Its Lua side, in the registry under ref: { state = it,
 * args = the argument, keys = { key, ... }, results = { ... } }. */
typedef struct batch_state {
    ll_http_client *client;
    int n, started, done, running;
    int limit, per_host;
    int ref;
    ll_vu_task *task;          /* the VU's task that waits for it */
    char *throw_msg;           /* the first failure of a request with throw */
    batch_elem *e;
} batch_state;

static int l_state_gc(lua_State *L) {
    batch_state *b = lua_touserdata(L, 1);
    for (int i = 0; b->e && i < b->n; i++) free(b->e[i].host);
    free(b->e);
    free(b->throw_msg);
    return 0;
}

static int host_running(const batch_state *b, const char *host) {
    int n = 0;
    for (int i = 0; i < b->n; i++)
        if (b->e[i].running && b->e[i].host && strcmp(b->e[i].host, host) == 0) n++;
    return n;
}

/* Starts the next pending requests the limits allow. A request that cannot
 * start completes at once as failed. */
static void pump(ll_vu *vu, batch_state *b) {
    for (int i = 0; i < b->n && b->running < b->limit; i++) {
        batch_elem *e = &b->e[i];
        if (e->running || e->done) continue;
        if (b->per_host > 0 && e->host && host_running(b, e->host) >= b->per_host) continue;
        int lane = ll_http_vu_lane_take(ll_vu_http(vu));
        ll_http_call *call = &ll_vu_http(vu)->batch[i];
        call->index = i + 1;
        call->waiter = b->task;
        const char *err = NULL;
        if (ll_http_call_start(vu, call, b->client, lane, e->req, e->method, &err) < 0) {
            ll_http_vu_lane_give(ll_vu_http(vu), lane);
            e->done = 1;
            b->done++;
            if (!b->throw_msg) b->throw_msg = strdup(err);
            continue;
        }
        e->running = 1;
        b->running++;
        b->started++;
    }
}

/* Pushes the results table of b onto L */
static void push_field(lua_State *L, const batch_state *b, const char *name) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->ref);
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
}

/* b is collected once unreferenced: nothing touches it after. */
static void finish(ll_vu *vu, batch_state *b) {
    lua_State *co = ll_vu_task_co(b->task);
    push_field(co, b, "results");
    int nargs = 1;
    if (b->throw_msg) {
        lua_pushstring(co, b->throw_msg);
        nargs = 2;
    }
    luaL_unref(co, LUA_REGISTRYINDEX, b->ref);
    ll_vu_http(vu)->batch_ud = NULL;
    ll_vu_task_resume(b->task, nargs);
}

void ll_http_batch_done(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_res *r) {
    batch_state *b = ll_vu_http(vu)->batch_ud;
    int i = call->index - 1;
    batch_elem *e = &b->e[i];
    lua_State *co = ll_vu_task_co(b->task);
    push_field(co, b, "results");
    push_field(co, b, "keys");
    lua_rawgeti(co, -1, i + 1);
    lua_remove(co, -2);
    ll_http_response_push(co, r, ll_http_call_body_type(call, x->req));
    lua_rawset(co, -3);
    lua_pop(co, 1);
    x->tp->ops->release(x);
    if (x->req->throw_errors && r->status == 0 && !b->throw_msg) {
        ll_http_push_throw(co, x->method, x->req, r);
        b->throw_msg = strdup(lua_tostring(co, -1));
        lua_pop(co, 1);
    }
    e->running = 0;
    e->done = 1;
    b->running--;
    b->done++;
    pump(vu, b);
    if (b->done == b->n) finish(vu, b);
}

/* The VU's pending-operation slot: cancels every request in flight. */
static void cancel_batch(void *ud) {
    ll_vu *vu = ud;
    batch_state *b = ll_vu_http(vu)->batch_ud;
    if (!b) return;
    for (int i = 0; i < b->n; i++) ll_http_call_cancel(vu, &ll_vu_http(vu)->batch[i]);
    ll_vu_http(vu)->batch_ud = NULL;
    luaL_unref(ll_vu_co(vu), LUA_REGISTRYINDEX, b->ref);
}

/* Prepares element (the value at the top of the stack) into the i-th
 * scratch request. */
static void prepare(lua_State *L, ll_vu *vu, batch_state *b, int i, int anchors) {
    int v = lua_gettop(L);
    batch_elem *e = &b->e[i];
    ll_http_req *scratch = &ll_vu_http(vu)->batch_reqs[i];
    if (lua_type(L, v) == LUA_TSTRING || ll_http_client_to_request(L, v)) {
        e->req = ll_http_prepare(L, scratch, W, lua_type(L, v) == LUA_TSTRING ? "GET" : NULL, v, 0, 0, &e->method);
        lua_pop(L, 1); /* no body to keep */
    } else if (lua_istable(L, v)) {
        int list = !lua_isnil(L, (lua_rawgeti(L, v, 1), -1));
        lua_pop(L, 1);
        if (list) {
            for (int k = 1; k <= 4; k++) lua_rawgeti(L, v, k);
        } else {
            lua_getfield(L, v, "method");
            lua_getfield(L, v, "url");
            lua_getfield(L, v, "body");
            lua_getfield(L, v, "params");
        }
        const char *m = ll_http_client_check_method(L, v + 1, W);
        e->req = ll_http_prepare(L, scratch, W, m, v + 2, v + 3, v + 4, &e->method);
        lua_rawseti(L, anchors, i + 1); /* what its body reads from lives with the batch */
        lua_settop(L, v);
    } else {
        luaL_error(L, "%s: request %d must be a URL, an http.Request or a table { method, url, body, params }, got %s", W,
                   i + 1, luaL_typename(L, v));
    }
    if (b->per_host > 0) {
        ll_url u;
        if (ll_url_parse(&u, e->req->url) == 0) {
            e->host = ll_xmalloc(strlen(u.host) + 16);
            sprintf(e->host, "%s:%d", u.host, u.port);
            ll_url_free(&u);
        }
    }
}

/* batch(client, requests at idx) */
static int do_batch(lua_State *L, ll_http_client *c, int idx) {
    ll_vu *vu = ll_luaload_waiting_vu(L, "making HTTP requests");
    if (!lua_istable(L, idx)) luaL_error(L, "%s: expected a table of requests, got %s", W, luaL_typename(L, idx));
    /* the keys: 1..n for a list, else the table's own */
    lua_newtable(L);
    int keys = lua_gettop(L), n = (int)lua_objlen(L, idx);
    if (n > 0) {
        for (int i = 1; i <= n; i++) {
            lua_pushinteger(L, i);
            lua_rawseti(L, keys, i);
        }
    } else {
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_rawseti(L, keys, ++n);
        }
    }
    lua_newtable(L); /* results */
    if (n == 0) return 1;
    const ll_http_defaults *d = ll_http_options_defaults(L);
    lua_createtable(L, 0, 4); /* the state's Lua side */
    batch_state *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    lua_newtable(L);
    lua_pushcfunction(L, l_state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "state");
    b->client = c;
    b->n = n;
    b->limit = d->batch < n ? d->batch : n;
    b->per_host = d->batch_per_host;
    b->task = ll_vu_running(vu);
    if (ll_vu_http(vu)->batch_ud) /* the batch calls are the VU's: one set */
        return luaL_error(L, "%s: another http.batch of this VU is in flight (a timer's callback, or the "
                             "iteration's); one at a time", W);
    b->e = ll_xcalloc((size_t)n, sizeof(*b->e));
    b->ref = LUA_NOREF;
    ll_http_vu_batch(ll_vu_http(vu), n);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "args");
    lua_pushvalue(L, keys);
    lua_setfield(L, -2, "keys");
    lua_pushvalue(L, keys + 1);
    lua_setfield(L, -2, "results");
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "anchors");
    int anchors = lua_gettop(L);
    for (int i = 0; i < n; i++) { /* a bad one raises; the collector frees b */
        lua_rawgeti(L, keys, i + 1);
        lua_gettable(L, idx);
        prepare(L, vu, b, i, anchors);
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* anchors: in the state table */
    b->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ll_vu_http(vu)->batch_ud = b;
    pump(vu, b);
    if (b->done == b->n) { /* none could start */
        lua_pushstring(L, b->throw_msg ? b->throw_msg : "no request could start");
        ll_vu_http(vu)->batch_ud = NULL;
        luaL_unref(L, LUA_REGISTRYINDEX, b->ref);
        return luaL_error(L, "%s: %s", W, lua_tostring(L, -1));
    }
    ll_vu_wait(vu, cancel_batch, vu);
    return ll_luaload_wait(L, vu);
}

int ll_http_batch(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.default_client");
    ll_http_client *c = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return do_batch(L, c, 1);
}

int ll_http_client_batch(lua_State *L) { return do_batch(L, ll_http_client_check(L, 1), 2); }
