/* lua_grpc.c -- luaload.grpc, k6/net/grpc in Lua: grpc.Client() loads
 * .proto files or a protoset in init code (proto/proto.h, libprotobuf),
 * connect(address, params) says where a VU's calls go, and invoke(method,
 * request, params) makes a unary call and returns k6's Response
 * ({status, message, headers, trailers, error}).
 *
 * A call is one HTTP/2 request on the native transport (h2c with prior
 * knowledge when plaintext, h2 over TLS otherwise): POST /pkg.Service/Method,
 * content-type application/grpc, the request framed by http/grpc_wire.c,
 * the response's message found by its reader and its status in the
 * trailers (or the headers of a trailers-only response). The connection
 * is the VU's, in the slot of an http Client the grpc.Client keeps (so
 * k6's `if __ITER == 0 then client:connect(...) end` keeps one connection
 * per VU, as http Clients do). The calling coroutine waits (ll_vu_wait);
 * the wait's cancel cancels the request, so a call cut at the end of the
 * test leaves nothing behind.
 *
 * A status other than OK is a response, not a script error; a transport
 * failure is a response with UNAVAILABLE (DEADLINE_EXCEEDED for a
 * timeout), as grpc-go reports them to k6. Metric: grpc_req_duration with
 * k6's tags (url, service, method, name, rpc_type, status) and the VU's;
 * data_sent and data_received. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "buf.h"
#include "duration.h"
#include "grpc_wire.h"
#include "http_client.h"
#include "json.h"
#include "modules.h"
#include "proto.h"
#include "script_host.h"
#include "state.h"
#include "xmalloc.h"

#define CLIENT_MT "luaload.grpc.Client"
#define CONN_MT "luaload.grpc.Connection"
#define CALL_MT "luaload.grpc.Call"

/* grpc-go's default largest message, each way */
#define MAX_MESSAGE_DEFAULT (4u << 20)
/* the call's timeout when neither params nor connect give one (k6's) */
#define TIMEOUT_US_DEFAULT (60ull * 1000000)

typedef struct gclient {
    ll_proto *proto;
    ll_http_client *http;       /* its slot holds the VUs' connections */
    int http_ref;
    int conns_ref;              /* { [VU id] = connection } */
    char *tls;                  /* the TLS options the first TLS connect set ("" none yet) */
} gclient;

typedef struct gconn {          /* a VU's connect(): where its calls go */
    char *addr;                 /* "host:port" as given (the url tag) */
    char *base;                 /* "http://host:port" or "https://host:port" */
    uint64_t timeout_us;
    uint64_t max_recv, max_send;
} gconn;

typedef struct gcall {          /* one call in flight: a userdata, held by self_ref */
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int self_ref;
    ll_vu_task *waiter;
    ll_transfer *x;
    int lane;
    ll_http_req req;
    const ll_proto_type *out;
    uint64_t max_recv;
    int discard;
    ll_tag *tags;               /* params.tags */
    int ntags;
    char *url, *service, *method, *name;
    char status[12];
} gcall;

/* ---- the Client ---- */

static gclient *check_client(lua_State *L) { return luaL_checkudata(L, 1, CLIENT_MT); }

static int client_gc(lua_State *L) {
    gclient *c = lua_touserdata(L, 1);
    ll_proto_free(c->proto);
    c->proto = NULL;
    free(c->tls);
    c->tls = NULL;
    if (c->http_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->http_ref);
    if (c->conns_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->conns_ref);
    c->http_ref = c->conns_ref = LUA_NOREF;
    return 0;
}

static int conn_gc(lua_State *L) {
    gconn *g = lua_touserdata(L, 1);
    free(g->addr);
    free(g->base);
    g->addr = g->base = NULL;
    return 0;
}

static int l_client(lua_State *L) {
    gclient *c = lua_newuserdata(L, sizeof(*c));
    memset(c, 0, sizeof(*c));
    c->http_ref = c->conns_ref = LUA_NOREF;
    luaL_getmetatable(L, CLIENT_MT);
    lua_setmetatable(L, -2);
    c->proto = ll_proto_new();
    c->tls = ll_xstrdup("");
    c->http = ll_http_client_push(L);
    c->http_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    c->conns_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static void init_only(lua_State *L, const char *W) {
    ll_worker *w = ll_state_worker(L);
    if (w && ll_worker_current(w)) luaL_error(L, "grpc.Client:%s: only in init code (it is read once per worker)", W);
}

/* client:load(import_paths, file, ...) */
static int l_load(lua_State *L) {
    gclient *c = check_client(L);
    init_only(L, "load");
    luaL_checktype(L, 2, LUA_TTABLE);
    int npaths = (int)lua_objlen(L, 2);
    const char **paths = ll_xcalloc((size_t)npaths + 1, sizeof(*paths));
    for (int i = 0; i < npaths; i++) {
        lua_rawgeti(L, 2, i + 1);
        paths[i] = lua_tostring(L, -1); /* kept alive by the table */
        lua_pop(L, 1);
        if (!paths[i]) {
            free(paths);
            return luaL_error(L, "grpc.Client:load: import path %d is not a string", i + 1);
        }
    }
    int top = lua_gettop(L);
    if (top < 3) {
        free(paths);
        return luaL_error(L, "grpc.Client:load: no .proto file given (load(import_paths, \"file.proto\", ...))");
    }
    for (int i = 3; i <= top; i++) {
        const char *file = luaL_checkstring(L, i);
        char err[512];
        if (ll_proto_load(c->proto, paths, npaths, file, err, sizeof(err)) < 0) {
            free(paths);
            return luaL_error(L, "grpc.Client:load: %s", err);
        }
    }
    free(paths);
    return 0;
}

/* client:load_protoset(file) */
static int l_load_protoset(lua_State *L) {
    gclient *c = check_client(L);
    init_only(L, "load_protoset");
    const char *file = luaL_checkstring(L, 2);
    FILE *f = fopen(file, "rb");
    if (!f) return luaL_error(L, "grpc.Client:load_protoset: cannot open %s", file);
    ll_buf b = {0};
    char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) ll_buf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    char err[512];
    int rc = bad ? -1 : ll_proto_load_set(c->proto, b.p ? b.p : "", b.len, file, err, sizeof(err));
    ll_buf_free(&b);
    if (bad) return luaL_error(L, "grpc.Client:load_protoset: cannot read %s", file);
    if (rc < 0) return luaL_error(L, "grpc.Client:load_protoset: %s", err);
    return 0;
}

/* ---- connect ---- */

/* A duration param: a string ("2s") or milliseconds. */
static uint64_t duration_param(lua_State *L, int idx, const char *W, const char *key) {
    uint64_t us = 0;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        if (ll_duration_from_ms(lua_tonumber(L, idx), &us) < 0)
            luaL_error(L, "%s: params.%s: expected a duration (\"2s\" or milliseconds)", W, key);
    } else if (!lua_isstring(L, idx) || ll_duration_parse(lua_tostring(L, idx), &us) < 0) {
        luaL_error(L, "%s: params.%s: expected a duration (\"2s\" or milliseconds), got %s", W, key,
                   lua_isstring(L, idx) ? lua_tostring(L, idx) : luaL_typename(L, idx));
    }
    return us;
}

static uint64_t size_param(lua_State *L, int idx, const char *W, const char *key) {
    lua_Number n = lua_tonumber(L, idx);
    if (lua_type(L, idx) != LUA_TNUMBER || n < 1 || n > (double)(1u << 30))
        luaL_error(L, "%s: params.%s: expected a size in bytes from 1 to 1073741824", W, key);
    return (uint64_t)n;
}

/* FNV-1a over the string at idx (nil: nothing), into h. */
static uint64_t hash_str(lua_State *L, int idx, uint64_t h) {
    size_t n = 0;
    const char *p = lua_tolstring(L, idx, &n);
    for (size_t i = 0; p && i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

/* params.tls: { cacerts = PEM or { PEM... }, cert = PEM, key = PEM }: the
 * http Client's options, set by the worker's first TLS connect; a later
 * one with other options raises (the connections of one Client share
 * them). */
static void apply_tls(lua_State *L, gclient *c, int tls, const char *W) {
    int top = lua_gettop(L);
    uint64_t h = 1469598103934665603ull;
    int ca = 0, cert = 0, key = 0;
    if (tls) {
        lua_getfield(L, tls, "cacerts");
        if (lua_istable(L, -1)) lua_rawgeti(L, -1, 1); /* k6 takes a list: the first */
        ca = lua_isnil(L, -1) ? 0 : lua_gettop(L);
        lua_getfield(L, tls, "cert");
        cert = lua_isnil(L, -1) ? 0 : lua_gettop(L);
        lua_getfield(L, tls, "key");
        key = lua_isnil(L, -1) ? 0 : lua_gettop(L);
        if (!cert != !key) luaL_error(L, "%s: params.tls: cert and key go together", W);
        h = hash_str(L, key, hash_str(L, cert, hash_str(L, ca, h)));
    }
    char sig[24];
    snprintf(sig, sizeof(sig), "%016llx", (unsigned long long)h);
    if (*c->tls && strcmp(c->tls, sig) != 0)
        luaL_error(L, "%s: params.tls differ from those of this Client's first TLS connect in this worker (make "
                      "another grpc.Client for other TLS options)",
                   W);
    if (!*c->tls) {
        ll_client_opts *o = &c->http->opts;
        if (ca) {
            free(o->ca);
            o->ca = NULL;
            o->ca = ll_http_client_pem_file(L, ca, W, "tls.cacerts");
        }
        if (cert) {
            free(o->certificate), free(o->private_key);
            o->certificate = o->private_key = NULL;
            o->certificate = ll_http_client_pem_file(L, cert, W, "tls.cert");
            o->private_key = ll_http_client_pem_file(L, key, W, "tls.key");
        }
        free(c->tls);
        c->tls = ll_xstrdup(sig);
    }
    lua_settop(L, top);
}

/* client:connect(address, params) */
static int l_connect(lua_State *L) {
    const char *W = "grpc.Client:connect";
    gclient *c = check_client(L);
    ll_vu *vu = ll_luaload_vu(L, "grpc.Client:connect()");
    size_t alen;
    const char *addr = luaL_checklstring(L, 2, &alen);
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1] || strchr(addr, '/') || !ll_http_value_ok(addr, alen))
        return luaL_error(L, "%s: address %s: expected host:port", W, addr);
    int params = lua_istable(L, 3) ? 3 : 0;
    if (!params && !lua_isnoneornil(L, 3)) return luaL_error(L, "%s: params: expected a table", W);
    int plaintext = 0;
    uint64_t timeout = TIMEOUT_US_DEFAULT, max_recv = MAX_MESSAGE_DEFAULT, max_send = MAX_MESSAGE_DEFAULT;
    int tls = 0;
    if (params) {
        lua_getfield(L, params, "plaintext");
        plaintext = lua_toboolean(L, -1);
        lua_getfield(L, params, "timeout");
        if (!lua_isnil(L, -1)) timeout = duration_param(L, lua_gettop(L), W, "timeout");
        lua_getfield(L, params, "max_receive_size");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "maxReceiveSize");
        if (!lua_isnil(L, -1)) max_recv = size_param(L, lua_gettop(L), W, "max_receive_size");
        lua_getfield(L, params, "max_send_size");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "maxSendSize");
        if (!lua_isnil(L, -1)) max_send = size_param(L, lua_gettop(L), W, "max_send_size");
        lua_getfield(L, params, "reflect");
        if (lua_toboolean(L, -1))
            return luaL_error(L, "%s: params.reflect: server reflection is not supported yet; load the .proto "
                                 "files or a protoset in init code",
                              W);
        lua_getfield(L, params, "tls");
        if (lua_istable(L, -1)) tls = lua_gettop(L);
        else if (!lua_isnil(L, -1)) return luaL_error(L, "%s: params.tls: expected a table", W);
    }
    /* the http Client's options: HTTP/2 on the native transport */
    ll_http_client_opts(L, c->http);
    c->http->opts.http_version = LL_HTTP_2;
    c->http->opts.transport = ll_transport_find("native");
    c->http->opts.max_redirects = 0;
    if (!plaintext) apply_tls(L, c, tls, W);
    gconn *g = lua_newuserdata(L, sizeof(*g));
    memset(g, 0, sizeof(*g));
    luaL_getmetatable(L, CONN_MT);
    lua_setmetatable(L, -2);
    g->addr = ll_xstrdup(addr);
    size_t n = alen + 16;
    g->base = ll_xmalloc(n);
    snprintf(g->base, n, "%s://%s", plaintext ? "http" : "https", addr);
    g->timeout_us = timeout;
    g->max_recv = max_recv;
    g->max_send = max_send;
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, ll_vu_id(vu));
    lua_pushboolean(L, 1);
    return 1;
}

/* client:close(): the VU's calls need a connect again; its connection goes. */
static int l_close(lua_State *L) {
    gclient *c = check_client(L);
    ll_vu *vu = ll_luaload_vu(L, "grpc.Client:close()");
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_pushnil(L);
    lua_rawseti(L, -2, ll_vu_id(vu));
    ll_http_vu_close_client(ll_vu_http(vu), c->http->slot, c->http->uid);
    return 0;
}

/* ---- a call ---- */

static const char *own_tag(const gcall *k, const char *key) {
    if (!strcmp(key, "url")) return k->url;
    if (!strcmp(key, "service")) return k->service;
    if (!strcmp(key, "method")) return k->method;
    if (!strcmp(key, "name")) return k->name;
    if (!strcmp(key, "rpc_type")) return "unary";
    if (!strcmp(key, "status")) return k->status;
    return NULL;
}

static const char *tag_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const gcall *k = ctx;
    for (int i = 0; i < k->ntags; i++)
        if (!strcmp(k->tags[i].key, key)) return k->tags[i].value;
    const char *v = own_tag(k, key);
    return v ? v : ll_vu_tag(k->vu, key);
}

static void tag_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const gcall *k = ctx;
    static const char *const OWN[] = {"url", "service", "method", "name", "rpc_type", "status"};
    for (int i = 0; i < 6; i++) {
        int mine = 0;
        for (int j = 0; j < k->ntags; j++) mine |= !strcmp(k->tags[j].key, OWN[i]);
        if (!mine) fn(ud, OWN[i], own_tag(k, OWN[i]));
    }
    for (int i = 0; i < k->ntags; i++) fn(ud, k->tags[i].key, k->tags[i].value);
    ll_vu_tags(k->vu, fn, ud);
}

/* What k owns (its __gc, too: a call whose params raise is collected). */
static void call_clear(gcall *k) {
    ll_http_req_clear(&k->req);
    for (int i = 0; i < k->ntags; i++) {
        free(k->tags[i].key);
        free(k->tags[i].value);
    }
    free(k->tags);
    free(k->url), free(k->service), free(k->method), free(k->name);
    k->tags = NULL;
    k->ntags = 0;
    k->url = k->service = k->method = k->name = NULL;
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
        ll_tag_source t = {tag_get, tag_list, k, -1, 0};
        if (sent > 0) ll_vu_sample(k->vu, LL_M_DATA_SENT, (double)sent, &t);
    }
    ll_http_vu_lane_give(ll_vu_http(k->vu), k->lane);
    call_free(k);
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
        const char *colon = first || stop == p ? NULL : memchr(p, ':', (size_t)(stop - p));
        first = 0;
        if (colon) {
            const char *v = colon + 1;
            while (v < stop && (*v == ' ' || *v == '\t')) v++;
            size_t nlen = (size_t)(colon - p), vlen = (size_t)(stop - v);
            if (nlen == 11 && !strncasecmp(p, "grpc-status", 11)) *status = ll_grpc_status_parse(v, vlen);
            if (nlen == 12 && !strncasecmp(p, "grpc-message", 12)) {
                message->len = 0;
                ll_grpc_message_decode(v, vlen, message);
            }
            lua_pushlstring(L, p, nlen);
            lua_rawget(L, -2);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                lua_newtable(L);
                lua_pushlstring(L, p, nlen);
                lua_pushvalue(L, -2);
                lua_rawset(L, -4);
            }
            lua_pushlstring(L, v, vlen);
            lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
            lua_pop(L, 1);
        }
        p = next;
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

typedef struct got_message {
    ll_buf json;
    const ll_proto_type *type;
    int n;
    int discard;
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

/* Pushes k6's Response for r on L: { status, message, headers, trailers,
 * error }; the status in *status. */
static void push_response(lua_State *L, gcall *k, const ll_http_res *r, int *status) {
    ll_buf gmsg = {0};
    int st = -1;
    const char *why = NULL;
    char whybuf[320] = "";
    lua_newtable(L);
    int resp = lua_gettop(L);
    push_metadata(L, r->headers, r->status ? r->headers_len : 0, 1, &st, &gmsg);
    lua_setfield(L, resp, "headers");
    push_metadata(L, r->trailers, r->trailers_len, 0, &st, &gmsg);
    lua_setfield(L, resp, "trailers");
    got_message g = {.type = k->out, .discard = k->discard};
    if (r->status == 0) {
        st = r->error_code == 1050 ? LL_GRPC_DEADLINE_EXCEEDED : LL_GRPC_UNAVAILABLE;
        why = r->error && *r->error ? r->error : "the connection failed";
    } else if (r->status != 200) {
        st = status_of_http(r->status);
        snprintf(whybuf, sizeof(whybuf), "unexpected HTTP status %d from the server", r->status);
        why = whybuf;
    } else {
        ll_grpc_reader rd;
        ll_grpc_reader_init(&rd, k->max_recv, 0);
        const char *enc = NULL;
        (void)enc;
        int rst = 0;
        if (strcasestr(r->headers ? r->headers : "", "\ngrpc-encoding: gzip")) rd.gzip = 1;
        int rc = ll_grpc_reader_feed(&rd, r->body, r->body_len, on_message, &g, &rst, whybuf, sizeof(whybuf));
        if (rc == 0 && ll_grpc_reader_end(&rd, whybuf, sizeof(whybuf)) < 0) rc = -1, rst = LL_GRPC_INTERNAL;
        ll_grpc_reader_free(&rd);
        if (st < 0) {
            st = LL_GRPC_INTERNAL;
            why = "the server sent no grpc-status";
        } else if (rc < 0) {
            st = rst;
            why = whybuf;
        } else if (rc > 0 && st == LL_GRPC_OK) {
            st = LL_GRPC_INTERNAL;
            why = g.err;
        } else if (st == LL_GRPC_OK && g.n == 0) {
            st = LL_GRPC_INTERNAL;
            why = "the server sent no message";
        }
    }
    if (!why && st != LL_GRPC_OK) why = gmsg.len ? gmsg.p : "";
    *status = st;
    lua_pushinteger(L, st);
    lua_setfield(L, resp, "status");
    if (st == LL_GRPC_OK && g.json.len && !k->discard) {
        char err[256];
        if (ll_json_push(L, g.json.p, g.json.len, err, sizeof(err)) == 0) lua_setfield(L, resp, "message");
    }
    if (st != LL_GRPC_OK) {
        lua_newtable(L);
        lua_pushinteger(L, st);
        lua_setfield(L, -2, "code");
        lua_pushstring(L, why);
        lua_setfield(L, -2, "message");
        lua_setfield(L, resp, "error");
    }
    ll_buf_free(&g.json);
    ll_buf_free(&gmsg);
}

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    gcall *k = ud;
    k->x = NULL;
    ll_vu_task *t = k->waiter;
    lua_State *co = ll_vu_task_co(t);
    int st = 0;
    push_response(co, k, r, &st);
    snprintf(k->status, sizeof(k->status), "%d", st);
    ll_tag_source tags = {tag_get, tag_list, k, -1, 0};
    ll_vu_sample(k->vu, LL_M_GRPC_REQ_DURATION, (double)r->t.duration / 1000.0, &tags);
    ll_vu_sample(k->vu, LL_M_DATA_SENT, (double)r->bytes_sent, &tags);
    ll_vu_sample(k->vu, LL_M_DATA_RECEIVED, (double)r->bytes_received, &tags);
    x->tp->ops->release(x);
    ll_http_vu_lane_give(ll_vu_http(k->vu), k->lane);
    call_free(k);
    ll_vu_task_resume(t, 1);
}

static void copy_tags(lua_State *L, gcall *k, int params) {
    lua_getfield(L, params, "tags");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) luaL_error(L, "grpc.Client:invoke: params.tags: expected a table");
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || !(lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER))
            luaL_error(L, "grpc.Client:invoke: params.tags: a tag is a string key with a string or number value");
        k->tags = ll_xrealloc(k->tags, (size_t)(k->ntags + 1) * sizeof(*k->tags));
        k->tags[k->ntags].key = ll_xstrdup(lua_tostring(L, -2));
        lua_pushvalue(L, -1); /* tostring on a copy: lua_next needs the key as it was */
        k->tags[k->ntags].value = ll_xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        k->ntags++;
    }
    lua_pop(L, 1);
}

/* params.metadata: { key = value }: headers, -bin values base64'd. */
static void add_metadata(lua_State *L, gcall *k, int params) {
    lua_getfield(L, params, "metadata");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    if (!lua_istable(L, -1)) luaL_error(L, "grpc.Client:invoke: params.metadata: expected a table");
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "grpc.Client:invoke: params.metadata: a key and its value are strings");
        size_t klen, vlen;
        const char *key = lua_tolstring(L, -2, &klen), *v = lua_tolstring(L, -1, &vlen);
        char name[256];
        if (klen == 0 || klen >= sizeof(name)) luaL_error(L, "grpc.Client:invoke: params.metadata: bad key");
        for (size_t i = 0; i <= klen; i++) name[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
        if (!ll_http_token_ok(name) || name[0] == ':')
            luaL_error(L, "grpc.Client:invoke: params.metadata: key %s is not a header name", key);
        int bin = klen > 4 && !strcmp(name + klen - 4, "-bin");
        char *enc = bin ? ll_base64_encode(v, vlen, NULL) : NULL;
        if (!bin && !ll_http_value_ok(v, vlen))
            luaL_error(L, "grpc.Client:invoke: params.metadata: the value of %s holds CR, LF or NUL (a -bin key "
                          "takes binary values)",
                       key);
        ll_http_req_add_header(&k->req, name, bin ? enc : v);
        free(enc);
    }
    lua_pop(L, 1);
}

/* client:invoke(method, request, params) */
static int l_invoke(lua_State *L) {
    const char *W = "grpc.Client:invoke";
    gclient *c = check_client(L);
    ll_vu *vu = ll_luaload_waiting_vu(L, "grpc.Client:invoke()");
    const char *name = luaL_checkstring(L, 2);
    if (!lua_istable(L, 3)) return luaL_error(L, "%s: the request: expected a table (the message)", W);
    int params = lua_istable(L, 4) ? 4 : 0;
    if (!params && !lua_isnoneornil(L, 4)) return luaL_error(L, "%s: params: expected a table", W);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_rawgeti(L, -1, ll_vu_id(vu));
    gconn *g = lua_touserdata(L, -1);
    lua_pop(L, 2);
    if (!g) return luaL_error(L, "%s: no gRPC connection, call connect first", W);
    ll_proto_method m;
    char err[512];
    if (ll_proto_find_method(c->proto, name, &m, err, sizeof(err)) < 0) return luaL_error(L, "%s: %s", W, err);
    if (m.client_streaming || m.server_streaming)
        return luaL_error(L, "%s: %s is a streaming method: use grpc.Stream", W, m.path + 1);
    char *json = ll_json_encode(L, 3, err, sizeof(err));
    if (!json) return luaL_error(L, "%s: the request: %s", W, err);
    ll_buf wire = {0}, framed = {0};
    const char *j = !strcmp(json, "[]") ? "{}" : json; /* an empty table is an empty message */
    int rc = ll_proto_encode(m.in, j, strlen(j), &wire, err, sizeof(err));
    free(json);
    if (rc == 0 && wire.len > g->max_send) {
        snprintf(err, sizeof(err), "the message is %zu bytes, over max_send_size (%llu)", wire.len,
                 (unsigned long long)g->max_send);
        rc = -1;
    }
    if (rc == 0) rc = ll_grpc_frame(&framed, wire.p ? wire.p : "", wire.len, 0, err, sizeof(err));
    ll_buf_free(&wire);
    if (rc < 0) {
        ll_buf_free(&framed);
        return luaL_error(L, "%s: the request: %s", W, err);
    }
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
    uint64_t timeout = g->timeout_us;
    if (params) {
        lua_getfield(L, params, "timeout");
        if (!lua_isnil(L, -1)) timeout = duration_param(L, lua_gettop(L), W, "timeout");
        lua_getfield(L, params, "discard_response_message");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "discardResponseMessage");
        k->discard = lua_toboolean(L, -1);
        lua_settop(L, kidx);
    }
    /* everything that may raise before the request owns memory */
    size_t ulen = strlen(g->base) + strlen(m.path) + 1;
    char *url = ll_xmalloc(ulen);
    snprintf(url, ulen, "%s%s", g->base, m.path);
    ll_http_req_set_url(&k->req, url);
    free(url);
    ll_http_req_set_method(&k->req, "POST");
    ll_http_req_add_header(&k->req, "content-type", "application/grpc");
    ll_http_req_add_header(&k->req, "te", "trailers");
    char tbuf[16];
    ll_grpc_timeout(timeout, tbuf, sizeof(tbuf));
    ll_http_req_add_header(&k->req, "grpc-timeout", tbuf);
    k->req.timeout_ms = (long)((timeout + 999) / 1000);
    k->req.http_version = LL_HTTP_2;
    k->req.max_redirects = 0;
    k->req.max_response_body = (int64_t)(g->max_recv + LL_GRPC_PREFIX);
    k->req.response_type = LL_RESPONSE_BINARY;
    ll_body_set_memory(&k->req.body, framed.p, framed.len);
    ll_buf_free(&framed);
    size_t nlen = strlen(g->addr) + strlen(m.path) + 1;
    k->url = ll_xmalloc(nlen);
    snprintf(k->url, nlen, "%s%s", g->addr, m.path);
    k->name = ll_xstrdup(m.path);
    const char *slash = strchr(m.path + 1, '/');
    k->service = ll_xmalloc((size_t)(slash - m.path));
    memcpy(k->service, m.path + 1, (size_t)(slash - m.path - 1));
    k->service[slash - m.path - 1] = 0;
    k->method = ll_xstrdup(slash + 1);
    if (params) {
        copy_tags(L, k, params);
        add_metadata(L, k, params);
    }
    lua_pushvalue(L, kidx);
    k->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    const char *xerr = NULL;
    k->lane = ll_http_vu_lane_take(ll_vu_http(vu));
    const ll_client_opts *opts = ll_http_client_opts(L, c->http);
    ll_transfer *x = ll_http_exchange_transfer(vu, k->lane, c->http->slot, c->http->uid, &k->req, opts);
    if (!x) xerr = "cannot make a connection slot";
    else if (x->tp->ops->start(x, &k->req, "POST", NULL, on_done, k, &xerr) == 0) k->x = x;
    if (!k->x) {
        ll_http_vu_lane_give(ll_vu_http(vu), k->lane);
        call_free(k);
        return luaL_error(L, "%s: %s", W, xerr ? xerr : "cannot start the call");
    }
    k->waiter = ll_vu_wait(vu, call_cancel, k);
    return ll_luaload_wait(L, vu);
}

int luaopen_luaload_grpc(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"load", l_load},
        {"load_protoset", l_load_protoset}, {"loadProtoset", l_load_protoset},
        {"connect", l_connect},
        {"invoke", l_invoke},
        {"close", l_close},
        {NULL, NULL},
    };
    static const char *const STATUS[] = {"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
                                         "NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
                                         "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
                                         "Internal", "Unavailable", "DataLoss", "Unauthenticated"};
    lua_getglobal(L, "require"); /* the http Client type, whose slot holds the connections */
    lua_pushliteral(L, "luaload.http");
    lua_call(L, 1, 0);
    ll_lua_class(L, CLIENT_MT, methods, client_gc, 0);
    ll_lua_class(L, CONN_MT, NULL, conn_gc, 1);
    ll_lua_class(L, CALL_MT, NULL, call_gc, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_client);
    lua_setfield(L, -2, "Client");
    for (int i = 0; i < LL_GRPC_NSTATUS; i++) {
        char key[40];
        snprintf(key, sizeof(key), "Status%s", STATUS[i]);
        lua_pushinteger(L, i);
        lua_setfield(L, -2, key);
    }
    return 1;
}
