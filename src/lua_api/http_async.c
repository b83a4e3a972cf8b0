/* http_async.c -- requests that do not wait: http.async_request and the
 * Client's async_* methods start a request and return a promise at once
 * (k6's http.asyncRequest), so one VU has many in flight.
 *
 * A promise is a userdata ("luaload.Promise"). Its request is one of its
 * VU's pending things (script_host.h): the iteration goes on until it is
 * in, and an interrupt cancels it (counted as k6 counts a request cut off).
 * p:await() waits, in whichever of the VU's coroutines calls it, and gives
 * the Response (or raises as the synchronous call would, through
 * http_wrap.lua); p:next(on_ok, on_err) runs a callback as a task of the
 * VU once it is settled. The Response is made in the worker's main state
 * when the request ends and kept in the registry until the promise is
 * collected.
 *
 * Other bindings make promises of their own operations (luaload.grpc's
 * async_invoke): ll_promise_push with how to cancel the operation, then
 * ll_promise_settle with its value. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "http_call.h"
#include "http_response.h"
#include "modules.h"
#include "script_host.h"

#define PROMISE_MT "luaload.Promise"

enum { IN_FLIGHT, FULFILLED, REJECTED };

typedef struct promise {
    ll_vu_pending pending;      /* its request, while in flight */
    ll_vu_pending dispatching;  /* its callbacks, while due */
    ll_timer dispatch;          /* runs them at the loop's next turn */
    ll_http_call call;
    ll_http_req *scratch;       /* its request, when built from arguments */
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int state;
    int self_ref;               /* keeps it while something will touch it */
    int value_ref;              /* the Response, or the error's message */
    int nexts_ref;              /* { on_ok1, on_err1, on_ok2, ... } not run yet */
    int nnexts;
    ll_vu_task *waiter;         /* the coroutine in :await() */
    ll_vu_cancel_fn *op_cancel; /* another binding's operation: how to cancel it (NULL: the request's) */
    void *op_ud;
} promise;

static void unref(lua_State *L, int *ref) {
    if (*ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, *ref);
    *ref = LUA_NOREF;
}

/* Drops the hold on p when nothing of the VU will touch it any more. */
static void release(promise *p) {
    if (p->state != IN_FLIGHT && !p->waiter && p->nnexts == 0) unref(p->L, &p->self_ref);
}

/* The callbacks due (registered with :next, the promise settled): each a
 * task of the VU with the value (on_ok) or the message (on_err). */
static void dispatch(ll_loop *loop, void *ud) {
    (void)loop;
    promise *p = ud;
    ll_vu *vu = p->vu;
    lua_State *L = p->L;
    ll_vu_pending_del(vu, &p->dispatching);
    int n = p->nnexts;
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->nexts_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->value_ref);
    unref(L, &p->nexts_ref);
    p->nnexts = 0;
    int pick = p->state == FULFILLED ? 1 : 2;
    int64_t iteration = ll_vu_iteration(vu);
    release(p); /* p may be collected from here on: the stack holds what the callbacks need */
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, base + 1, 2 * i + pick);
        if (!lua_isfunction(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_State *co = lua_newthread(L);
        int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        lua_pushvalue(L, base + 2);
        lua_xmove(L, co, 2); /* the callback and the value */
        ll_vu_task_start(vu, co, co_ref, 1);
        /* it failed: the iteration is over (the VU may be in its next one) */
        if (!ll_vu_in_iteration(vu) || ll_vu_iteration(vu) != iteration) break;
    }
    lua_settop(L, base);
}

static void cancel_dispatch(void *ud);

static void schedule(promise *p) {
    if (p->nnexts == 0 || p->state == IN_FLIGHT || p->dispatching.cancel) return;
    ll_vu_pending_add(p->vu, &p->dispatching, cancel_dispatch, p);
    ll_loop_timer_start(ll_worker_loop(ll_vu_worker(p->vu)), &p->dispatch, 0);
}

/* The iteration was cut before the callbacks ran: they never will. */
static void cancel_dispatch(void *ud) {
    promise *p = ud;
    ll_loop_timer_stop(ll_worker_loop(ll_vu_worker(p->vu)), &p->dispatch);
    unref(p->L, &p->nexts_ref);
    p->nnexts = 0;
    release(p);
}

/* The iteration was cut with the request in flight. */
static void cancel_request(void *ud) {
    promise *p = ud;
    if (p->op_cancel) {
        p->op_cancel(p->op_ud);
    } else {
        ll_http_call_cancel(p->vu, &p->call);
        ll_http_anchor_drop(p->L, &p->call);
    }
    p->state = REJECTED;
    lua_pushliteral(p->L, "the request was cut off at the end of the iteration");
    p->value_ref = luaL_ref(p->L, LUA_REGISTRYINDEX);
    release(p);
}

void ll_http_async_done(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_res *r) {
    (void)vu;
    promise *p = call->waiter;
    lua_State *L = p->L;
    int chunk_error = ll_http_push_chunk_error(L, call);
    ll_http_anchor_drop(L, call);
    if (chunk_error) { /* its on_chunk raised: :await raises it */
        p->state = REJECTED;
    } else if (x->req->throw_errors && r->status == 0) { /* raised by :await, as the call would */
        ll_http_push_throw(L, x->method, x->req, r);
        p->state = REJECTED;
    } else {
        ll_http_response_push(L, r, ll_http_call_body_type(call, x->req));
        p->state = FULFILLED;
    }
    x->tp->ops->release(x);
    ll_promise_settle((ll_promise *)p, p->state == FULFILLED);
}

void ll_promise_settle(ll_promise *pp, int ok) {
    promise *p = (promise *)pp;
    lua_State *L = p->L;
    p->state = ok ? FULFILLED : REJECTED;
    p->value_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ll_vu_pending_del(p->vu, &p->pending);
    schedule(p);
    ll_vu_task *t = p->waiter;
    int nargs = p->state == REJECTED ? 2 : 1;
    if (t) { /* what :await() returns, on its coroutine before p is let go */
        lua_State *co = ll_vu_task_co(t);
        if (nargs == 2) lua_pushnil(co);
        lua_rawgeti(co, LUA_REGISTRYINDEX, p->value_ref);
    }
    p->waiter = NULL;
    release(p);
    if (t) ll_vu_task_resume(t, nargs);
}

static promise *push_promise(lua_State *L, ll_vu *vu) {
    promise *p = lua_newuserdata(L, sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->self_ref = p->value_ref = p->nexts_ref = LUA_NOREF;
    p->vu = vu;
    p->L = ll_worker_lua(ll_vu_worker(vu));
    ll_loop_timer_init(&p->dispatch, dispatch, p);
    luaL_getmetatable(L, PROMISE_MT);
    lua_setmetatable(L, -2);
    return p;
}

ll_promise *ll_promise_push(lua_State *L, ll_vu *vu, ll_vu_cancel_fn *cancel, void *ud) {
    promise *p = push_promise(L, vu);
    p->op_cancel = cancel;
    p->op_ud = ud;
    lua_pushvalue(L, -1);
    p->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ll_vu_pending_add(vu, &p->pending, cancel_request, p);
    return (ll_promise *)p;
}

int ll_http_async_start(lua_State *L, ll_http_client *c, const char *W, const char *method, int target, int body,
                        int params) {
    ll_vu *vu = ll_luaload_vu(L, "making HTTP requests");
    int last = params > body ? params : body > target ? body : target;
    lua_settop(L, last); /* the arguments, then the promise above them */
    promise *p = push_promise(L, vu);
    int self = lua_gettop(L);
    const char *m = NULL, *err = NULL;
    const ll_http_req *req = ll_http_prepare(L, ll_http_scratch(&p->scratch), W, method, target, body, params, &m);
    ll_http_anchor_keep(L, &p->call);
    lua_pop(L, 1);
    p->call.index = -1; /* an async one: ll_http_async_done */
    p->call.waiter = p;
    int lane = ll_http_vu_lane_take(ll_vu_http(vu));
    if (ll_http_call_start(vu, &p->call, c, lane, req, m, &err) < 0) {
        ll_http_vu_lane_give(ll_vu_http(vu), lane);
        ll_http_anchor_drop(L, &p->call);
        return luaL_error(L, "%s: %s", W, err);
    }
    lua_pushvalue(L, self);
    p->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ll_vu_pending_add(vu, &p->pending, cancel_request, p);
    lua_settop(L, self);
    return 1;
}

static promise *check_promise(lua_State *L) { return luaL_checkudata(L, 1, PROMISE_MT); }

/* A coroutine in :await() was cut: the request goes on as the iteration's. */
static void cancel_await(void *ud) {
    promise *p = ud;
    p->waiter = NULL;
}

/* p:await(): the Response, or (nil, message) for http_wrap.lua to raise */
static int l_await(lua_State *L) {
    promise *p = check_promise(L);
    if (p->state != IN_FLIGHT) {
        if (p->state == REJECTED) lua_pushnil(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, p->value_ref);
        return p->state == REJECTED ? 2 : 1;
    }
    ll_vu *vu = ll_luaload_waiting_vu(L, "await()");
    if (vu != p->vu) return luaL_error(L, "await(): the promise is another VU's");
    if (p->waiter) return luaL_error(L, "await(): another coroutine of this VU already waits for this promise");
    p->waiter = ll_vu_wait(vu, cancel_await, p);
    return ll_luaload_wait(L, vu);
}

/* p:next(on_ok, on_err): the callbacks run, as tasks of the VU, once p is
 * settled; returns p */
static int l_next(lua_State *L) {
    promise *p = check_promise(L);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
    ll_vu *vu = ll_luaload_vu(L, "next()");
    if (vu != p->vu) return luaL_error(L, "next(): the promise is another VU's");
    if (p->nexts_ref == LUA_NOREF) {
        lua_newtable(L);
        p->nexts_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->nexts_ref);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, 2 * p->nnexts + 1);
    lua_pushvalue(L, 3);
    lua_rawseti(L, -2, 2 * p->nnexts + 2);
    lua_pop(L, 1);
    p->nnexts++;
    if (p->self_ref == LUA_NOREF) { /* settled and let go: held again until they ran */
        lua_pushvalue(L, 1);
        p->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    schedule(p);
    lua_settop(L, 1);
    return 1;
}

static int l_state(lua_State *L) {
    promise *p = check_promise(L);
    static const char *const NAMES[] = {"pending", "fulfilled", "rejected"};
    lua_pushstring(L, NAMES[p->state]);
    return 1;
}

static int l_gc(lua_State *L) {
    promise *p = lua_touserdata(L, 1);
    unref(L, &p->value_ref);
    ll_http_call_free(&p->call);
    ll_http_scratch_free(&p->scratch);
    return 0;
}

void ll_http_async_register(lua_State *L) {
    static const luaL_Reg methods[] = {{"await", l_await}, {"next", l_next}, {"state", l_state}, {NULL, NULL}};
    ll_lua_class(L, PROMISE_MT, methods, l_gc, 0);
}
