/* http.c -- luaload.http: the request functions (Client methods, the
 * one-off http.get/post/... on the default client, checkstatus) and their
 * dispatch: a request made by a VU starts a transfer on the Client's
 * transport, registers its cancel in the VU's pending-operation slot and
 * yields; the completion records k6's HTTP metrics with their tags (and
 * counts a failed request by message in its worker's table) and resumes
 * the VU with the Response. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_body.h"
#include "http_call.h"
#include "http_client.h"
#include "http_cookies.h"
#include "http_response.h"
#include "modules.h"
#include "http_error.h"
#include "http_expected.h"
#include "http_png.h"
#include "redirect.h"
#include "script_host.h"
#include "url.h"
#include "state.h"

static const char *const METHODS[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", NULL};

/* ---- making requests ---- */

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud);

/* What a request in flight reads its body from (ll_http_prepare's anchor:
 * a form made from a table, a FileStream) must outlive the yield: lua_yield
 * drops the C function's stack slots, so the collector would take the form
 * while its parts are still being sent. The call keeps a registry
 * reference to it until it ends; a prepared Request (no anchor) costs
 * nothing. */
void ll_http_anchor_keep(lua_State *L, ll_http_call *call) {
    if (lua_isnil(L, -1)) return;
    lua_pushvalue(L, -1);
    call->anchor_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void ll_http_anchor_drop(lua_State *L, ll_http_call *call) {
    if (!call->anchor_ref) return;
    luaL_unref(L, LUA_REGISTRYINDEX, call->anchor_ref);
    call->anchor_ref = 0;
}

int ll_http_chunk_to_lua(void *ud, int status, const char *p, size_t n) {
    (void)status;
    ll_http_call *call = ud;
    ll_vu *vu = call->owner;
    lua_State *L = ll_worker_lua(ll_vu_worker(vu));
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, call->anchor_ref);
    lua_getfield(L, -1, "on_chunk");
    lua_pushlstring(L, p, n);
    ll_vu_enter(vu);
    int rc = lua_pcall(L, 1, 1, 0);
    ll_vu_leave(vu);
    if (rc) lua_setfield(L, top + 1, "chunk_error");
    /* false (not nil: a function that returns nothing goes on) stops it */
    int stop = !rc && lua_isboolean(L, -1) && !lua_toboolean(L, -1);
    lua_settop(L, top);
    return rc ? LL_CHUNK_FAIL : stop ? LL_CHUNK_STOP : LL_CHUNK_GO;
}

/* (http_call.h) */
int ll_http_push_chunk_error(lua_State *L, const ll_http_call *call) {
    if (!call->anchor_ref) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, call->anchor_ref);
    lua_getfield(L, -1, "chunk_error");
    lua_remove(L, -2);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

/* How the state judges req's responses: its own response callback, else
 * the state's (http.set_response_callback). */
static ll_http_judge judge(ll_vu *vu, const ll_http_req *req) {
    ll_http_judge j = {req->expected, 1};
    if (!j.expected) j.expected = ll_http_expected_default(ll_worker_lua(ll_vu_worker(vu)), &j.counted);
    return j;
}

void ll_http_push_throw(lua_State *L, const char *method, const ll_http_req *req, const ll_http_res *r) {
    char why[256]; /* without the timings libcurl puts in its messages: the
                    * script errors of many iterations group by message */
    ll_http_error_normalize(why, sizeof(why), r->error);
    lua_pushfstring(L, "%s %s: %s (error_code %d)", method, req->url, why, r->error_code);
}

ll_response_type ll_http_call_body_type(const ll_http_call *call, const ll_http_req *req) {
    if (req->response_type != LL_RESPONSE_DEFAULT) return req->response_type;
    return call->discard ? LL_RESPONSE_NONE : LL_RESPONSE_TEXT;
}

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    ll_http_call *call = ud;
    ll_vu *vu = call->owner;
    const ll_http_req *req = x->req;
    const char *method = x->method;
    call->x = NULL;
    ll_http_judge j = judge(vu, req);
    const char *ch = NULL;
    size_t chlen = 0;
    int challenged = ll_http_exchange_challenged(call, req, r, &ch, &chlen);
    if (challenged) j.expected = &ll_http_exchange_challenge_expected; /* as k6 counts a digest challenge */
    ll_http_exchange_record(vu, req, method, r, &j);
    ll_http_vu_store_cookies(ll_vu_http(vu), req->url, r, (int64_t)time(NULL));
    if (challenged && ll_http_exchange_answer(vu, call, x, req, method, ch, chlen, on_done)) return;
    if (ll_http_exchange_follow(vu, call, x, req, method, r, on_done)) return; /* each hop is its own sample, as in k6 */
    ll_http_vu_lane_give(ll_vu_http(vu), call->lane);
    if (call->index < 0) { /* an async one: its promise */
        ll_http_async_done(vu, call, x, r);
        return;
    }
    if (call->index) { /* one of an http.batch */
        ll_http_batch_done(vu, call, x, r);
        return;
    }
    ll_vu_task *t = call->waiter;
    lua_State *co = ll_vu_task_co(t);
    if (ll_http_push_chunk_error(co, call)) { /* its on_chunk raised: the call raises it */
        ll_http_anchor_drop(co, call);
        x->tp->ops->release(x);
        lua_pushnil(co);
        lua_insert(co, -2);
        ll_vu_task_resume(t, 2);
        return;
    }
    ll_http_anchor_drop(co, call); /* the last hop is in: its body is sent */
    ll_http_response_push(co, r, ll_http_call_body_type(call, req));
    x->tp->ops->release(x); /* the body is in Lua now: at most one copy at a time */
    if (req->throw_errors && r->status == 0) { /* raised by lib/lua/luaload/http_wrap.lua */
        ll_http_push_throw(co, method, req, r);
        ll_vu_task_resume(t, 2);
        return;
    }
    ll_vu_task_resume(t, 1);
}

int ll_http_call_start(ll_vu *vu, ll_http_call *call, ll_http_client *c, int lane, const ll_http_req *req,
                       const char *m, const char **err) {
    const ll_client_opts *opts = ll_http_client_opts(ll_vu_co(vu), c);
    ll_transfer *x = ll_http_exchange_transfer(vu, lane, c->slot, c->uid, req, opts);
    if (!x) {
        *err = "cannot make a connection slot";
        return -1;
    }
    int max = req->max_redirects >= 0 ? req->max_redirects : opts->max_redirects;
    if (req->on_chunk == ll_http_chunk_to_lua) /* built from this call's params (a Request takes none): its own */
        ((ll_http_req *)req)->chunk_ud = call;
    call->owner = vu;
    call->lane = lane;
    call->redirects_left = max >= 0 ? max : LL_REDIRECTS_DEFAULT;
    call->challenged = 0;
    call->discard = opts->discard_bodies;
    const char *cookie = ll_http_vu_cookie(ll_vu_http(vu), req, (int64_t)time(NULL));
    if (x->tp->ops->start(x, req, m, cookie, on_done, call, err) < 0) return -1;
    call->x = x;
    return 0;
}

void ll_http_call_cancel(ll_vu *vu, ll_http_call *call) {
    if (!call->x) return;
    ll_http_judge j = judge(vu, call->x->req);
    ll_http_exchange_cancel(vu, call, &j);
    ll_http_vu_lane_give(ll_vu_http(vu), call->lane);
}

static const char *known_method(const char *m) {
    for (int i = 0; METHODS[i]; i++)
        if (strcasecmp(METHODS[i], m) == 0) return METHODS[i];
    return NULL;
}

/* The task's pending-operation slot: an interrupted VU cancels its request. */
static void cancel_single(void *ud) {
    ll_vu_task *t = ud;
    ll_http_call *call = ll_vu_task_call(t);
    ll_http_call_cancel(ll_vu_task_vu(t), call);
    ll_http_anchor_drop(ll_vu_task_co(t), call);
}

const ll_http_req *ll_http_prepare(lua_State *L, ll_http_req *scratch, const char *W, const char *method, int target,
                                   int body, int params, const char **m_out) {
    int last = params > body ? params : body > target ? body : target;
    if (lua_gettop(L) < last) lua_settop(L, last); /* what it pushes is no argument */
    ll_http_request *q = ll_http_client_to_request(L, target);
    const ll_http_req *req = q ? &q->req : NULL;
    int plain = method == NULL || known_method(method) != NULL;
    int has_body = body > 0 && !lua_isnoneornil(L, body);
    if (!q || !plain || has_body || (params > 0 && !lua_isnoneornil(L, params))) {
        ll_http_req *o = scratch;
        lua_newtable(L); /* the anchor: what the body reads from */
        int anchor = lua_gettop(L);
        if (q && ll_http_req_copy(o, &q->req) < 0) luaL_error(L, "out of memory");
        if (!q) ll_http_client_set_url(L, o, target, W);
        if (has_body) ll_http_body_set(L, o, body, anchor, W);
        if (params > 0) ll_http_client_parse_params(L, params, o, anchor, W);
        if (method && !known_method(method) && ll_http_req_set_method(o, method) < 0) luaL_error(L, "out of memory");
        ll_http_body_finish(L, o, W);
        if (ll_http_req_apply_auth(o) < 0) luaL_error(L, "out of memory");
        req = o;
    } else {
        lua_pushnil(L); /* a prepared Request keeps its own */
    }
    const char *m = method ? known_method(method) : NULL;
    *m_out = m ? m : req->method ? req->method : "GET";
    return req;
}

/* (http_call.h) */
int ll_http_request_wait(lua_State *L, ll_http_client *c, const char *W, const char *method, int target, int body,
                         int params, ll_http_adjust_fn *adjust, void *ud) {
    ll_vu *vu = ll_luaload_waiting_vu(L, "making HTTP requests");
    const char *m = NULL, *err = NULL;
    ll_vu_task *t = ll_vu_running(vu); /* whose request it is: the iteration's or a callback's */
    ll_http_call *call = ll_vu_task_call(t);
    const ll_http_req *req = ll_http_prepare(L, ll_vu_task_oneoff(t), W, method, target, body, params, &m);
    ll_http_anchor_keep(L, call); /* the anchor ll_http_prepare pushed (or nil) */
    if (adjust && adjust(L, (ll_http_req *)req, call, ud) < 0) { /* built from this call's arguments: its own */
        ll_http_anchor_drop(L, call);
        return luaL_error(L, "%s: out of memory", W);
    }
    call->index = 0;
    call->waiter = t;
    int lane = ll_http_vu_lane_take(ll_vu_http(vu));
    if (ll_http_call_start(vu, call, c, lane, req, m, &err) < 0) {
        ll_http_vu_lane_give(ll_vu_http(vu), lane);
        ll_http_anchor_drop(L, call);
        return luaL_error(L, "%s: %s", W, err);
    }
    ll_vu_wait(vu, cancel_single, t);
    return ll_luaload_wait(L, vu);
}

static int do_request(lua_State *L, ll_http_client *c, const char *W, const char *method, int target, int body,
                      int params) {
    return ll_http_request_wait(L, c, W, method, target, body, params, NULL, NULL);
}

/* --rps (k6's rps option): gate(n) returns once the VU may send n
 * requests (an http.batch's): at once, or after a wait on the VU's timer
 * for the run's next free slots (ll_vu_rate_take). The wait is kept out of
 * the iteration's duration and, as the request starts after it, out of
 * every http_req_* timing. */
static int l_rate_gate(lua_State *L) {
    ll_vu *vu = ll_luaload_waiting_vu(L, "making HTTP requests");
    lua_Integer n = luaL_optinteger(L, 1, 1);
    uint64_t wait_ns = ll_vu_rate_take(vu, (int64_t)n);
    if (!wait_ns) return 0;
    ll_vu_wait_timer(vu, (wait_ns + 999) / 1000);
    return ll_luaload_wait(L, vu);
}

static ll_http_client *check_client(lua_State *L) { return ll_http_client_check(L, 1); }

static int c_get(lua_State *L) { return do_request(L, check_client(L), "Client:get", "GET", 2, 0, 3); }
static int c_head(lua_State *L) { return do_request(L, check_client(L), "Client:head", "HEAD", 2, 0, 3); }
static int c_post(lua_State *L) { return do_request(L, check_client(L), "Client:post", "POST", 2, 3, 4); }
static int c_put(lua_State *L) { return do_request(L, check_client(L), "Client:put", "PUT", 2, 3, 4); }
static int c_patch(lua_State *L) { return do_request(L, check_client(L), "Client:patch", "PATCH", 2, 3, 4); }
static int c_delete(lua_State *L) { return do_request(L, check_client(L), "Client:delete", "DELETE", 2, 3, 4); }
static int c_options(lua_State *L) { return do_request(L, check_client(L), "Client:options", "OPTIONS", 2, 3, 4); }

/* client:request(req) or client:request(method, target, body, params) */
static int c_request(lua_State *L) {
    ll_http_client *c = check_client(L);
    if (ll_http_client_to_request(L, 2)) return do_request(L, c, "Client:request", NULL, 2, 0, 3);
    return do_request(L, c, "Client:request", ll_http_client_check_method(L, 2, "Client:request"), 3, 4, 5);
}

/* client:async_request(...) and client:async_get(...) & co: the same
 * arguments, a promise back at once (http_async.c) */
static int c_async_get(lua_State *L) { return ll_http_async_start(L, check_client(L), "Client:async_get", "GET", 2, 0, 3); }
static int c_async_head(lua_State *L) { return ll_http_async_start(L, check_client(L), "Client:async_head", "HEAD", 2, 0, 3); }
static int c_async_post(lua_State *L) { return ll_http_async_start(L, check_client(L), "Client:async_post", "POST", 2, 3, 4); }
static int c_async_put(lua_State *L) { return ll_http_async_start(L, check_client(L), "Client:async_put", "PUT", 2, 3, 4); }
static int c_async_patch(lua_State *L) {
    return ll_http_async_start(L, check_client(L), "Client:async_patch", "PATCH", 2, 3, 4);
}
static int c_async_delete(lua_State *L) {
    return ll_http_async_start(L, check_client(L), "Client:async_delete", "DELETE", 2, 3, 4);
}
static int c_async_options(lua_State *L) {
    return ll_http_async_start(L, check_client(L), "Client:async_options", "OPTIONS", 2, 3, 4);
}
static int c_async_request(lua_State *L) {
    ll_http_client *c = check_client(L);
    const char *W = "Client:async_request";
    if (ll_http_client_to_request(L, 2)) return ll_http_async_start(L, c, W, NULL, 2, 0, 3);
    return ll_http_async_start(L, c, W, ll_http_client_check_method(L, 2, W), 3, 4, 5);
}

/* ---- module functions: the default client ---- */

static ll_http_client *default_client(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.default_client");
    ll_http_client *c = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return c;
}

ll_http_client *ll_http_default_client(lua_State *L) { return default_client(L); }

static int m_get(lua_State *L) { return do_request(L, default_client(L), "http.get", "GET", 1, 0, 2); }
static int m_head(lua_State *L) { return do_request(L, default_client(L), "http.head", "HEAD", 1, 0, 2); }
static int m_post(lua_State *L) { return do_request(L, default_client(L), "http.post", "POST", 1, 2, 3); }
static int m_put(lua_State *L) { return do_request(L, default_client(L), "http.put", "PUT", 1, 2, 3); }
static int m_patch(lua_State *L) { return do_request(L, default_client(L), "http.patch", "PATCH", 1, 2, 3); }
static int m_del(lua_State *L) { return do_request(L, default_client(L), "http.del", "DELETE", 1, 2, 3); }
static int m_options(lua_State *L) { return do_request(L, default_client(L), "http.options", "OPTIONS", 1, 2, 3); }
static ll_http_client *default_client(lua_State *L);

/* http.async_request(method, url, body, params) (k6's asyncRequest), or
 * with a Request */
static int m_async_request(lua_State *L) {
    const char *W = "http.async_request";
    if (ll_http_client_to_request(L, 1)) return ll_http_async_start(L, default_client(L), W, NULL, 1, 0, 2);
    return ll_http_async_start(L, default_client(L), W, ll_http_client_check_method(L, 1, W), 2, 3, 4);
}

static int m_request(lua_State *L) {
    if (ll_http_client_to_request(L, 1)) return do_request(L, default_client(L), "http.request", NULL, 1, 0, 2);
    const char *m = ll_http_client_check_method(L, 1, "http.request");
    return do_request(L, default_client(L), "http.request", m, 2, 3, 4);
}

/* checkstatus(status, res): records the check "status is <status>". Its
 * upvalue is the key "status", interned once (lua_getfield interns it on
 * every call). */
static int m_checkstatus(lua_State *L) {
    if (lua_type(L, 1) != LUA_TNUMBER) luaL_error(L, "http.checkstatus: the status must be a number");
    if (!lua_istable(L, 2)) luaL_error(L, "http.checkstatus: the response must be a table, got %s", luaL_typename(L, 2));
    int want = (int)lua_tointeger(L, 1);
    ll_vu *vu = ll_luaload_vu(L, "checkstatus()");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_gettable(L, 2);
    int ok = lua_tointeger(L, -1) == want;
    lua_pop(L, 1);
    ll_luaload_record_status_check(L, vu, want, ok);
    lua_pushboolean(L, ok);
    return 1;
}

/* http_forms.lua's URL resolver: resolve(base, ref) -> absolute URL or nil */
static int l_url_resolve(lua_State *L) {
    char *u = ll_url_resolve(luaL_checkstring(L, 1), luaL_checkstring(L, 2));
    if (!u) return 0;
    lua_pushstring(L, u);
    free(u);
    return 1;
}

int luaopen_luaload_http(lua_State *L) {
    static const luaL_Reg client_methods[] = {
        {"get", c_get}, {"head", c_head}, {"post", c_post}, {"put", c_put}, {"patch", c_patch},
        {"delete", c_delete}, {"del", c_delete}, {"options", c_options}, {"request", c_request},
        {"batch", ll_http_client_batch}, {"async_get", c_async_get}, {"async_head", c_async_head},
        {"async_post", c_async_post}, {"async_put", c_async_put}, {"async_patch", c_async_patch},
        {"async_delete", c_async_delete}, {"async_options", c_async_options}, {"async_request", c_async_request},
        {"asyncRequest", c_async_request}, {NULL, NULL},
    };
    static const luaL_Reg fns[] = {
        {"Client", ll_http_client_new}, {"Request", ll_http_client_request_new}, {"get", m_get}, {"head", m_head},
        {"post", m_post}, {"put", m_put}, {"patch", m_patch}, {"del", m_del}, {"delete", m_del},
        {"options", m_options}, {"request", m_request}, {"batch", ll_http_batch},
        {"async_request", m_async_request}, {"asyncRequest", m_async_request}, {NULL, NULL},
    };
    ll_http_client_register(L, client_methods);
    ll_http_async_register(L);
    ll_http_client_push(L); /* the default client of http.get & co */
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.default_client");

    lua_newtable(L);
    luaL_register(L, NULL, fns);
    lua_pushliteral(L, "status");
    lua_pushcclosure(L, m_checkstatus, 1);
    lua_setfield(L, -2, "checkstatus");
    /* k6's constants: res.tls_version's values (also what tlsVersion
     * takes) and res.ocsp's status and revocation_reason values */
    static const char *const constants[][2] = {
        {"TLS_1_0", "tls1.0"}, {"TLS_1_1", "tls1.1"}, {"TLS_1_2", "tls1.2"}, {"TLS_1_3", "tls1.3"},
        {"OCSP_STATUS_GOOD", "good"}, {"OCSP_STATUS_REVOKED", "revoked"},
        {"OCSP_STATUS_SERVER_FAILED", "server_failed"}, {"OCSP_STATUS_UNKNOWN", "unknown"},
        {"OCSP_REASON_UNSPECIFIED", "unspecified"}, {"OCSP_REASON_KEY_COMPROMISE", "key_compromise"},
        {"OCSP_REASON_CA_COMPROMISE", "ca_compromise"}, {"OCSP_REASON_AFFILIATION_CHANGED", "affiliation_changed"},
        {"OCSP_REASON_SUPERSEDED", "superseded"}, {"OCSP_REASON_CESSATION_OF_OPERATION", "cessation_of_operation"},
        {"OCSP_REASON_CERTIFICATE_HOLD", "certificate_hold"}, {"OCSP_REASON_REMOVE_FROM_CRL", "remove_from_crl"},
        {"OCSP_REASON_PRIVILEGE_WITHDRAWN", "privilege_withdrawn"}, {"OCSP_REASON_AA_COMPROMISE", "aa_compromise"},
    };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        lua_pushstring(L, constants[i][1]);
        lua_setfield(L, -2, constants[i][0]);
    }
    ll_http_cookies_register(L, lua_gettop(L));
    ll_http_png_register(L, lua_gettop(L));
    ll_http_body_register(L, lua_gettop(L));
    ll_http_expected_register(L, lua_gettop(L));
    /* throw = true: the request functions raise, through a Lua wrapper,
     * which with --rps waits for the request's slot first */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.http_wrap");
    lua_call(L, 1, 1);
    ll_worker *w = ll_state_worker(L);
    if (ll_worker_rate_limited(w)) lua_pushcfunction(L, l_rate_gate);
    else lua_pushnil(L);
    luaL_getmetatable(L, "luaload.Client");
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    lua_pushvalue(L, -4);
    luaL_getmetatable(L, "luaload.Promise"); /* :await raises as the call would */
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    lua_call(L, 4, 0);
    /* res:submit_form, res:click_link */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.http_forms");
    lua_call(L, 1, 1);
    lua_pushvalue(L, -2);
    lua_pushcfunction(L, l_url_resolve);
    lua_call(L, 2, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.response_methods");
    return 1;
}
