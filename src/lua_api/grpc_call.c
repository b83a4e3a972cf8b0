/* grpc_call.c -- luaload.grpc's unary calls (client:invoke) and what
 * streams share with them: a call's request (POST /pkg.Service/Method,
 * content-type application/grpc, te: trailers, grpc-timeout, metadata),
 * its message framed (http/grpc_wire.c), its tags, and its status read
 * from the trailers.
 *
 * A call is one HTTP/2 request on the native transport, on the VU's
 * connection (lua_grpc.c keeps it in an http Client's slot). The calling
 * coroutine waits (ll_vu_wait); the wait's cancel cancels the request, so
 * a call cut at the end of the test leaves nothing behind.
 * client:async_invoke starts the same call and returns the promise of the
 * async requests (http_async.c), fulfilled with the Response. The call is a
 * userdata held while in flight: a param that raises while it is built
 * leaves it to the collector, with what it owns. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "grpc_wire.h"
#include "http_call.h"
#include "json.h"
#include "lua_grpc.h"
#include "modules.h"
#include "xmalloc.h"

#define CALL_MT "luaload.grpc.Call"

/* ---- tags ---- */

static const char *own_tag(const ll_grpc_tags *t, const char *key) {
    if (!strcmp(key, "url")) return t->url;
    if (!strcmp(key, "service")) return t->service;
    if (!strcmp(key, "method")) return t->method;
    if (!strcmp(key, "name")) return t->name;
    if (!strcmp(key, "rpc_type")) return t->rpc_type;
    if (!strcmp(key, "status")) return t->status[0] ? t->status : NULL;
    return NULL;
}

static const char *tag_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const ll_grpc_tags *t = ctx;
    for (int i = 0; i < t->ntags; i++)
        if (!strcmp(t->tags[i].key, key)) return t->tags[i].value;
    const char *v = own_tag(t, key);
    return v ? v : ll_vu_tag(t->vu, key);
}

static void tag_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const ll_grpc_tags *t = ctx;
    static const char *const OWN[] = {"url", "service", "method", "name", "rpc_type", "status"};
    for (int i = 0; i < 6; i++) {
        int mine = 0;
        for (int j = 0; j < t->ntags; j++) mine |= !strcmp(t->tags[j].key, OWN[i]);
        const char *v = own_tag(t, OWN[i]);
        if (!mine && v) fn(ud, OWN[i], v);
    }
    for (int i = 0; i < t->ntags; i++) fn(ud, t->tags[i].key, t->tags[i].value);
    ll_vu_tags(t->vu, fn, ud);
}

void ll_grpc_sample(ll_grpc_tags *t, int metric, double value) {
    ll_tag_source src = {tag_get, tag_list, t, -1, 0};
    ll_vu_sample(t->vu, metric, value, &src);
}

void ll_grpc_tags_init(ll_grpc_tags *t, ll_vu *vu, const char *addr, const char *path, const char *rpc_type) {
    t->vu = vu;
    t->rpc_type = rpc_type;
    size_t n = strlen(addr) + strlen(path) + 1;
    t->url = ll_xmalloc(n);
    snprintf(t->url, n, "%s%s", addr, path);
    t->name = ll_xstrdup(path);
    const char *slash = strchr(path + 1, '/'); /* path is "/pkg.Service/Method" (proto.h) */
    size_t sn = (size_t)(slash - path - 1);
    t->service = ll_xmalloc(sn + 1);
    memcpy(t->service, path + 1, sn);
    t->service[sn] = 0;
    t->method = ll_xstrdup(slash + 1);
}

void ll_grpc_tags_clear(ll_grpc_tags *t) {
    for (int i = 0; i < t->ntags; i++) {
        free(t->tags[i].key);
        free(t->tags[i].value);
    }
    free(t->tags);
    free(t->url), free(t->service), free(t->method), free(t->name);
    t->tags = NULL;
    t->ntags = 0;
    t->url = t->service = t->method = t->name = NULL;
}

static void copy_tags(lua_State *L, ll_grpc_tags *t, int params, const char *W) {
    lua_getfield(L, params, "tags");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) luaL_error(L, "%s: params.tags: expected a table", W);
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || !(lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER))
            luaL_error(L, "%s: params.tags: a tag is a string key with a string or number value", W);
        t->tags = ll_xrealloc(t->tags, (size_t)(t->ntags + 1) * sizeof(*t->tags));
        t->tags[t->ntags].key = ll_xstrdup(lua_tostring(L, -2));
        lua_pushvalue(L, -1); /* tostring on a copy: lua_next needs the key as it was */
        t->tags[t->ntags].value = ll_xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        t->ntags++;
    }
    lua_pop(L, 1);
}

/* ---- the request ---- */

void ll_grpc_metadata(lua_State *L, ll_http_req *req, int params, const char *field, const char *W) {
    lua_getfield(L, params, field);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) luaL_error(L, "%s: params.%s: expected a table", W, field);
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: params.%s: a key and its value are strings", W, field);
        size_t klen, vlen;
        const char *key = lua_tolstring(L, -2, &klen), *v = lua_tolstring(L, -1, &vlen);
        char name[256];
        if (klen == 0 || klen >= sizeof(name)) luaL_error(L, "%s: params.%s: a key of 1 to 255 bytes", W, field);
        for (size_t i = 0; i <= klen; i++) name[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
        if (!ll_http_token_ok(name))
            luaL_error(L, "%s: params.%s: key %s is not a header name", W, field, key);
        int bin = klen > 4 && !strcmp(name + klen - 4, "-bin");
        if (!bin && !ll_http_value_ok(v, vlen))
            luaL_error(L, "%s: params.%s: the value of %s holds CR, LF or NUL (a -bin key takes bytes)", W,
                       field, key);
        char *enc = bin ? ll_base64_encode(v, vlen, NULL) : NULL;
        ll_http_req_add_header(req, name, bin ? enc : v);
        free(enc);
    }
    lua_pop(L, 1);
}

void ll_grpc_request(lua_State *L, ll_http_req *req, ll_grpc_tags *t, const ll_grpc_conn *g, const char *path,
                     uint64_t timeout_us, int params, const char *W) {
    size_t ulen = strlen(g->base) + strlen(path) + 1;
    char *url = ll_xmalloc(ulen);
    snprintf(url, ulen, "%s%s", g->base, path);
    ll_http_req_set_url(req, url);
    free(url);
    ll_http_req_set_method(req, "POST");
    ll_http_req_add_header(req, "content-type", "application/grpc");
    ll_http_req_add_header(req, "te", "trailers");
    if (timeout_us) {
        char tbuf[16];
        ll_grpc_timeout(timeout_us, tbuf, sizeof(tbuf));
        ll_http_req_add_header(req, "grpc-timeout", tbuf);
        req->timeout_ms = (long)((timeout_us + 999) / 1000);
    }
    req->http_version = LL_HTTP_2;
    req->max_redirects = 0;
    req->max_response_body = (int64_t)(g->max_recv + LL_GRPC_PREFIX);
    req->response_type = LL_RESPONSE_BINARY;
    if (params) {
        ll_grpc_metadata(L, req, params, "metadata", W);
        copy_tags(L, t, params, W);
    }
}

void ll_grpc_encode(lua_State *L, int idx, const ll_proto_type *type, uint64_t max, ll_buf *out, const char *W) {
    char err[512];
    char *json = ll_json_encode(L, idx, err, sizeof(err));
    if (!json) luaL_error(L, "%s: the message: %s", W, err);
    ll_buf wire = {0};
    const char *j = !strcmp(json, "[]") ? "{}" : json; /* an empty table is an empty message */
    int rc = ll_proto_encode(type, j, strlen(j), &wire, err, sizeof(err));
    free(json);
    if (rc == 0 && wire.len > max) {
        snprintf(err, sizeof(err), "it is %zu bytes, over max_send_size (%llu)", wire.len, (unsigned long long)max);
        rc = -1;
    }
    if (rc == 0) rc = ll_grpc_frame(out, wire.p ? wire.p : "", wire.len, 0, err, sizeof(err));
    ll_buf_free(&wire);
    if (rc < 0) luaL_error(L, "%s: the message: %s", W, err);
}

/* ---- the response ---- */

int ll_grpc_gzip(const ll_http_res *r) {
    return r->headers && strcasestr(r->headers, "\ngrpc-encoding: gzip") != NULL;
}

/* "name: value\r\n" lines (after a status line when skip_first) into a
 * table name -> { values } on L; the grpc-status and grpc-message seen. */
static void push_metadata(lua_State *L, const char *p, size_t len, int skip_first, int *status, ll_buf *message) {
    lua_newtable(L);
    const char *end = p ? p + len : p;
    int first = skip_first;
    while (p && p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        const char *stop = eol ? eol : end;
        if (stop > p && stop[-1] == '\r') stop--;
        const char *line = p;
        const char *colon = first || stop == p ? NULL : memchr(p, ':', (size_t)(stop - p));
        first = 0;
        p = next;
        if (!colon) continue;
        const char *v = colon + 1;
        while (v < stop && (*v == ' ' || *v == '\t')) v++;
        size_t nlen = (size_t)(colon - line), vlen = (size_t)(stop - v);
        if (nlen == 11 && !strncasecmp(line, "grpc-status", 11)) *status = ll_grpc_status_parse(v, vlen);
        if (nlen == 12 && !strncasecmp(line, "grpc-message", 12)) {
            message->len = 0;
            ll_grpc_message_decode(v, vlen, message);
        }
        lua_pushlstring(L, line, nlen);
        lua_rawget(L, -2);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushlstring(L, line, nlen);
            lua_pushvalue(L, -2);
            lua_rawset(L, -4);
        }
        lua_pushlstring(L, v, vlen);
        lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
        lua_pop(L, 1);
    }
}

/* gRPC's status for an HTTP status other than 200 (the spec's table). */
static int status_of_http(int http) {
    switch (http) {
    case 400: return LL_GRPC_INTERNAL;
    case 401: return LL_GRPC_UNAUTHENTICATED;
    case 403: return LL_GRPC_PERMISSION_DENIED;
    case 404: return LL_GRPC_UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return LL_GRPC_UNAVAILABLE;
    default: return LL_GRPC_UNKNOWN;
    }
}

/* why = n bytes at s, NUL-terminated */
static void say_n(ll_buf *why, const char *s, size_t n) {
    why->len = 0;
    ll_buf_append(why, s, n);
    ll_buf_append(why, "", 1);
    why->len--;
}

static void say(ll_buf *why, const char *s) { say_n(why, s, strlen(s)); }

int ll_grpc_status(lua_State *L, const ll_http_res *r, ll_buf *why) {
    int st = -1;
    ll_buf gmsg = {0};
    push_metadata(L, r->headers, r->status ? r->headers_len : 0, 1, &st, &gmsg);
    push_metadata(L, r->trailers, r->trailers_len, 0, &st, &gmsg);
    if (r->status == 0) {
        st = r->error_code == 1050 ? LL_GRPC_DEADLINE_EXCEEDED : LL_GRPC_UNAVAILABLE;
        say(why, r->error && *r->error ? r->error : "the connection failed");
    } else if (r->status != 200) {
        char m[64];
        snprintf(m, sizeof(m), "unexpected HTTP status %d from the server", r->status);
        st = status_of_http(r->status);
        say(why, m);
    } else if (st < 0) {
        st = LL_GRPC_INTERNAL;
        say(why, "the server sent no grpc-status");
    } else {
        say_n(why, gmsg.p ? gmsg.p : "", gmsg.len);
    }
    ll_buf_free(&gmsg);
    return st;
}

/* ---- a unary call ---- */

typedef struct gcall {          /* one call in flight: a userdata, held by self_ref */
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int self_ref;
    ll_vu_task *waiter;         /* the coroutine in invoke(), or */
    ll_promise *promise;        /* async_invoke's */
    ll_transfer *x;
    int lane;
    ll_http_req req;
    const ll_proto_type *out;
    uint64_t max_recv;
    int discard;
    ll_grpc_tags t;
} gcall;

/* What k owns (its __gc, too). */
static void call_clear(gcall *k) {
    ll_http_req_clear(&k->req);
    ll_grpc_tags_clear(&k->t);
}

static int call_gc(lua_State *L) {
    call_clear(lua_touserdata(L, 1));
    return 0;
}

/* The call is over: what it owns goes now, the userdata when collected. */
static void call_free(gcall *k) {
    call_clear(k);
    luaL_unref(k->L, LUA_REGISTRYINDEX, k->self_ref);
    k->self_ref = LUA_NOREF;
}

/* The call was cut with its request in flight (the end of the test). */
static void call_cancel(void *ud) {
    gcall *k = ud;
    if (k->x) {
        int64_t sent = 0;
        k->x->tp->ops->cancel(k->x, &sent);
        if (sent > 0) ll_grpc_sample(&k->t, LL_M_DATA_SENT, (double)sent);
    }
    ll_http_vu_lane_give(ll_vu_http(k->vu), k->lane);
    call_free(k);
}

typedef struct got_message {
    ll_buf json;
    const ll_proto_type *type;
    int n, discard;
    char err[256];
} got_message;

static int on_message(const char *msg, size_t len, void *ud) {
    got_message *g = ud;
    if (++g->n > 1) {
        snprintf(g->err, sizeof(g->err), "a unary call answered with more than one message");
        return 1;
    }
    if (g->discard) return 0;
    return ll_proto_decode(g->type, msg, len, &g->json, g->err, sizeof(g->err)) < 0 ? 1 : 0;
}

/* Pushes k6's Response for r: { status, message, headers, trailers, error }. */
static int push_response(lua_State *L, gcall *k, const ll_http_res *r) {
    ll_buf why = {0};
    lua_newtable(L);
    int resp = lua_gettop(L);
    int st = ll_grpc_status(L, r, &why);
    lua_setfield(L, resp, "trailers");
    lua_setfield(L, resp, "headers");
    got_message g = {.type = k->out, .discard = k->discard};
    if (st == LL_GRPC_OK) {
        ll_grpc_reader rd;
        ll_grpc_reader_init(&rd, k->max_recv, ll_grpc_gzip(r));
        char err[320];
        int rst = 0;
        int rc = ll_grpc_reader_feed(&rd, r->body, r->body_len, on_message, &g, &rst, err, sizeof(err));
        if (rc == 0 && ll_grpc_reader_end(&rd, err, sizeof(err)) < 0) rc = -1, rst = LL_GRPC_INTERNAL;
        ll_grpc_reader_free(&rd);
        if (rc < 0) st = rst, say(&why, err);
        else if (rc > 0) st = LL_GRPC_INTERNAL, say(&why, g.err);
        else if (g.n == 0) st = LL_GRPC_INTERNAL, say(&why, "the server sent no message");
    }
    lua_pushinteger(L, st);
    lua_setfield(L, resp, "status");
    if (st == LL_GRPC_OK && g.json.len) {
        char err[256];
        if (ll_json_push(L, g.json.p, g.json.len, err, sizeof(err)) == 0) lua_setfield(L, resp, "message");
    }
    if (st != LL_GRPC_OK) {
        lua_newtable(L);
        lua_pushinteger(L, st);
        lua_setfield(L, -2, "code");
        lua_pushstring(L, why.p ? why.p : "");
        lua_setfield(L, -2, "message");
        lua_setfield(L, resp, "error");
    }
    ll_buf_free(&g.json);
    ll_buf_free(&why);
    return st;
}

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    gcall *k = ud;
    k->x = NULL;
    ll_vu_task *t = k->waiter;
    ll_promise *p = k->promise;
    int st = push_response(t ? ll_vu_task_co(t) : k->L, k, r);
    snprintf(k->t.status, sizeof(k->t.status), "%d", st);
    ll_grpc_sample(&k->t, LL_M_GRPC_REQ_DURATION, (double)r->t.duration / 1000.0);
    ll_grpc_sample(&k->t, LL_M_DATA_SENT, (double)r->bytes_sent);
    ll_grpc_sample(&k->t, LL_M_DATA_RECEIVED, (double)r->bytes_received);
    x->tp->ops->release(x);
    ll_http_vu_lane_give(ll_vu_http(k->vu), k->lane);
    call_free(k);
    if (p) ll_promise_settle(p, 1); /* a status other than OK fulfils it too: a response */
    else ll_vu_task_resume(t, 1);
}

/* Starts the call of invoke's arguments (W: the caller), its method
 * among proto's (NULL: the Client's files); async: with a promise,
 * pushed. */
static gcall *start_call(lua_State *L, const char *W, int async, ll_proto *proto) {
    ll_grpc_client *c = ll_grpc_client_check(L, 1);
    ll_vu *vu = async ? ll_luaload_vu(L, "grpc.Client:async_invoke()") : ll_luaload_waiting_vu(L, W);
    const char *name = luaL_checkstring(L, 2);
    if (!lua_istable(L, 3)) luaL_error(L, "%s: the request: expected a table (the message)", W);
    int params = lua_istable(L, 4) ? 4 : 0;
    if (!params && !lua_isnoneornil(L, 4)) luaL_error(L, "%s: params: expected a table", W);
    const ll_grpc_conn *g = ll_grpc_conn_of(L, c, vu, W);
    ll_proto_method m;
    char err[512];
    if (ll_proto_find_method(proto ? proto : c->proto, name, &m, err, sizeof(err)) < 0)
        luaL_error(L, "%s: %s", W, err);
    if (m.client_streaming || m.server_streaming)
        luaL_error(L, "%s: %s is a streaming method: use grpc.Stream", W, m.path + 1);
    lua_settop(L, 4);
    gcall *k = lua_newuserdata(L, sizeof(*k)); /* collected with what it owns if a param raises */
    memset(k, 0, sizeof(*k));
    ll_http_req_init(&k->req);
    luaL_getmetatable(L, CALL_MT);
    lua_setmetatable(L, -2);
    int kidx = lua_gettop(L);
    k->vu = vu;
    k->L = ll_worker_lua(ll_vu_worker(vu));
    k->self_ref = LUA_NOREF;
    k->out = m.out;
    k->max_recv = g->max_recv;
    ll_grpc_tags_init(&k->t, vu, g->addr, m.path, "unary");
    uint64_t timeout = g->timeout_us;
    if (params) {
        lua_getfield(L, params, "timeout");
        if (!lua_isnil(L, -1)) timeout = ll_grpc_duration(L, lua_gettop(L), W, "timeout");
        lua_getfield(L, params, "discard_response_message");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "discardResponseMessage");
        k->discard = lua_toboolean(L, -1);
        lua_settop(L, kidx);
    }
    ll_buf framed = {0};
    ll_grpc_encode(L, 3, m.in, g->max_send, &framed, W); /* raises: framed is empty then */
    ll_body_set_memory(&k->req.body, framed.p ? framed.p : "", framed.len);
    ll_buf_free(&framed);
    ll_grpc_request(L, &k->req, &k->t, g, m.path, timeout, params, W);
    lua_pushvalue(L, kidx);
    k->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    const char *xerr = NULL;
    k->lane = ll_http_vu_lane_take(ll_vu_http(vu));
    k->x = ll_grpc_start(L, c, vu, k->lane, &k->req, 0, on_done, k, &xerr);
    if (!k->x) {
        ll_http_vu_lane_give(ll_vu_http(vu), k->lane);
        call_free(k);
        luaL_error(L, "%s: %s", W, xerr);
    }
    if (async) k->promise = ll_promise_push(L, vu, call_cancel, k);
    return k;
}

int ll_grpc_invoke(lua_State *L) {
    gcall *k = start_call(L, "grpc.Client:invoke", 0, NULL);
    k->waiter = ll_vu_wait(k->vu, call_cancel, k);
    return ll_luaload_wait(L, k->vu);
}

int ll_grpc_async_invoke(lua_State *L) {
    start_call(L, "grpc.Client:async_invoke", 1, NULL);
    return 1;
}

/* grpc/health/v1/health.proto's Check (field numbers as there) */
static const char HEALTH[] = "syntax = \"proto3\";\n"
                             "package grpc.health.v1;\n"
                             "message HealthCheckRequest { string service = 1; }\n"
                             "message HealthCheckResponse {\n"
                             "  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }\n"
                             "  ServingStatus status = 1;\n"
                             "}\n"
                             "service Health { rpc Check(HealthCheckRequest) returns (HealthCheckResponse); }\n";

/* client:health_check([service, params]): invoke grpc.health.v1.Health/Check */
int ll_grpc_health_check(lua_State *L) {
    const char *W = "grpc.Client:health_check";
    ll_grpc_client *c = ll_grpc_client_check(L, 1);
    const char *service = luaL_optstring(L, 2, "");
    int params = lua_istable(L, 3) ? 3 : 0;
    char err[256];
    if (!c->refl && !(c->refl = ll_proto_new())) return luaL_error(L, "%s: out of memory", W);
    ll_proto_method m;
    if (ll_proto_find_method(c->refl, "grpc.health.v1.Health/Check", &m, err, sizeof(err)) < 0 &&
        ll_proto_add_source(c->refl, "luaload/health.proto", HEALTH, err, sizeof(err)) < 0)
        return luaL_error(L, "%s: %s", W, err);
    lua_settop(L, 3);                            /* client, service, params */
    lua_pushvalue(L, 1);                         /* as invoke's: client, method, request, params */
    lua_pushliteral(L, "grpc.health.v1.Health/Check");
    lua_createtable(L, 0, 1);
    lua_pushstring(L, service);
    lua_setfield(L, -2, "service");
    if (params) lua_pushvalue(L, params);
    else lua_pushnil(L);
    for (int i = 0; i < 3; i++) lua_remove(L, 1);
    gcall *k = start_call(L, W, 0, c->refl);
    k->waiter = ll_vu_wait(k->vu, call_cancel, k);
    return ll_luaload_wait(L, k->vu);
}

void ll_grpc_call_register(lua_State *L) { ll_lua_class(L, CALL_MT, NULL, call_gc, 1); }
