/* lua_grpc.c -- luaload.grpc, k6/net/grpc in Lua: the module (Client,
 * Stream, the Status* constants) and the Client: load() and
 * load_protoset() in init code (proto/proto.h on libprotobuf), connect()
 * saying where a VU's calls go, close(). Calls are grpc_call.c's, streams
 * grpc_stream.c's.
 *
 * A Client keeps an http Client (http_client.h) set to HTTP/2 on the
 * native transport: its slot in every VU holds that VU's connection (h2c
 * with prior knowledge when plaintext, h2 over TLS otherwise), so k6's
 * `if __ITER == 0 then client:connect(...) end` keeps one connection per
 * VU, as http Clients do. A VU's connect is a userdata in the Client's
 * table of connections, by VU id. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "duration.h"
#include "http_client.h"
#include "grpc_wire.h"
#include "lua_grpc.h"
#include "modules.h"
#include "proto.h"
#include "script_host.h"
#include "state.h"
#include "xmalloc.h"

#define CLIENT_MT "luaload.grpc.Client"
#define CONN_MT "luaload.grpc.Connection"

/* grpc-go's default largest message, each way */
#define MAX_MESSAGE_DEFAULT (4u << 20)
/* the call's timeout when neither params nor connect give one (k6's) */
#define TIMEOUT_US_DEFAULT (60ull * 1000000)

/* ---- the Client ---- */

ll_grpc_client *ll_grpc_client_check(lua_State *L, int idx) { return luaL_checkudata(L, idx, CLIENT_MT); }

static ll_grpc_client *check_client(lua_State *L) { return ll_grpc_client_check(L, 1); }

ll_transfer *ll_grpc_start(lua_State *L, ll_grpc_client *c, ll_vu *vu, int lane, const ll_http_req *req, int streamed,
                           ll_transfer_done_fn *fn, void *ud, const char **err) {
    ll_transfer *x = ll_http_exchange_transfer(vu, lane, c->http->slot, ll_grpc_pool(c, vu), req,
                                               ll_http_client_opts(L, c->http));
    *err = NULL;
    if (!x) *err = "cannot make a connection slot";
    else if (streamed && !x->tp->ops->resume) *err = "its transport cannot stream a request";
    else if (x->tp->ops->start(x, req, "POST", NULL, fn, ud, err) == 0) return x;
    if (!*err) *err = "cannot start the request";
    return NULL;
}

/* above every http Client's uid (a worker's count), unique per VU */
uint64_t ll_grpc_pool(const ll_grpc_client *c, const ll_vu *vu) {
    return c->http->uid << 32 | (uint64_t)(ll_vu_index(vu) + 1);
}

const ll_grpc_conn *ll_grpc_conn_of(lua_State *L, ll_grpc_client *c, ll_vu *vu, const char *W) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_rawgeti(L, -1, ll_vu_id(vu));
    const ll_grpc_conn *g = lua_touserdata(L, -1);
    lua_pop(L, 2); /* the table keeps it */
    if (!g) luaL_error(L, "%s: no gRPC connection, call connect first", W);
    return g;
}

static int client_gc(lua_State *L) {
    ll_grpc_client *c = lua_touserdata(L, 1);
    ll_proto_free(c->proto);
    ll_proto_free(c->refl);
    c->proto = c->refl = NULL;
    free(c->tls);
    c->tls = NULL;
    if (c->http_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->http_ref);
    if (c->conns_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, c->conns_ref);
    c->http_ref = c->conns_ref = LUA_NOREF;
    return 0;
}

static int conn_gc(lua_State *L) {
    ll_grpc_conn *g = lua_touserdata(L, 1);
    free(g->addr);
    free(g->base);
    g->addr = g->base = NULL;
    return 0;
}

static int l_client(lua_State *L) {
    ll_grpc_client *c = lua_newuserdata(L, sizeof(*c));
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
    ll_grpc_client *c = check_client(L);
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
    ll_grpc_client *c = check_client(L);
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
uint64_t ll_grpc_duration(lua_State *L, int idx, const char *W, const char *key) {
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
static void apply_tls(lua_State *L, ll_grpc_client *c, int tls, const char *W) {
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
    ll_grpc_client *c = check_client(L);
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
    int tls = 0, reflect = 0;
    if (params) {
        lua_getfield(L, params, "plaintext");
        plaintext = lua_toboolean(L, -1);
        lua_getfield(L, params, "timeout");
        if (!lua_isnil(L, -1)) timeout = ll_grpc_duration(L, lua_gettop(L), W, "timeout");
        lua_getfield(L, params, "max_receive_size");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "maxReceiveSize");
        if (!lua_isnil(L, -1)) max_recv = size_param(L, lua_gettop(L), W, "max_receive_size");
        lua_getfield(L, params, "max_send_size");
        if (lua_isnil(L, -1)) lua_getfield(L, params, "maxSendSize");
        if (!lua_isnil(L, -1)) max_send = size_param(L, lua_gettop(L), W, "max_send_size");
        lua_getfield(L, params, "reflect");
        reflect = lua_toboolean(L, -1);
        lua_getfield(L, params, "tls");
        if (lua_istable(L, -1)) tls = lua_gettop(L);
        else if (!lua_isnil(L, -1)) return luaL_error(L, "%s: params.tls: expected a table", W);
    }
    /* the http Client's options: HTTP/2 on the native transport */
    ll_http_client_opts(L, c->http);
    c->http->opts.http_version = LL_HTTP_2;
    c->http->opts.transport = ll_transport_find("native");
    c->http->opts.max_redirects = 0;
    c->http->opts.multiplex = 1; /* per VU: ll_grpc_pool */
    if (!plaintext) apply_tls(L, c, tls, W);
    ll_grpc_conn *g = lua_newuserdata(L, sizeof(*g));
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
    int conn = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_pushvalue(L, conn);
    lua_rawseti(L, -2, ll_vu_id(vu));
    if (reflect) return ll_grpc_reflect(L, c, 1, conn, params);
    lua_pushboolean(L, 1);
    return 1;
}

/* client:close(): the VU's calls need a connect again; its connection goes. */
static int l_close(lua_State *L) {
    ll_grpc_client *c = check_client(L);
    ll_vu *vu = ll_luaload_vu(L, "grpc.Client:close()");
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->conns_ref);
    lua_pushnil(L);
    lua_rawseti(L, -2, ll_vu_id(vu));
    ll_http_vu_close_client(ll_vu_http(vu), c->http->slot, ll_grpc_pool(c, vu));
    return 0;
}

int luaopen_luaload_grpc(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"load", l_load},
        {"load_protoset", l_load_protoset}, {"loadProtoset", l_load_protoset},
        {"connect", l_connect},
        {"invoke", ll_grpc_invoke},
        {"async_invoke", ll_grpc_async_invoke}, {"asyncInvoke", ll_grpc_async_invoke},
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
    /* connect raises what reflection returned (nil, message) at the script's line */
    static const char WRAP[] = "local connect = ...\n"
                               "return function(self, address, params)\n"
                               "  local ok, err = connect(self, address, params)\n"
                               "  if ok == nil and err ~= nil then error(err, 2) end\n"
                               "  return ok\n"
                               "end\n";
    luaL_getmetatable(L, CLIENT_MT);
    lua_getfield(L, -1, "__index");
    if (luaL_loadbuffer(L, WRAP, sizeof(WRAP) - 1, "=luaload.grpc") != 0) return lua_error(L);
    lua_pushcfunction(L, l_connect);
    lua_call(L, 1, 1);
    lua_setfield(L, -2, "connect");
    /* health_check: k6's { status = n }, raising when the call fails */
    static const char HEALTH[] =
        "local check = ...\n"
        "local STATUS = { UNKNOWN = 0, SERVING = 1, NOT_SERVING = 2, SERVICE_UNKNOWN = 3 }\n"
        "return function(self, service, params)\n"
        "  local r = check(self, service, params)\n"
        "  if r.status ~= 0 then\n"
        "    error(\"grpc.Client:health_check: status \" .. r.status .. \": \" .. r.error.message, 2)\n"
        "  end\n"
        "  local s = r.message.status\n"
        "  return { status = STATUS[s] or tonumber(s) or 0 }\n"
        "end\n";
    if (luaL_loadbuffer(L, HEALTH, sizeof(HEALTH) - 1, "=luaload.grpc") != 0) return lua_error(L);
    lua_pushcfunction(L, ll_grpc_health_check);
    lua_call(L, 1, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "health_check");
    lua_setfield(L, -2, "healthCheck");
    lua_pop(L, 2);
    ll_grpc_call_register(L);
    ll_grpc_reflect_register(L);
    ll_grpc_stream_register(L);
    lua_newtable(L);
    lua_pushcfunction(L, l_client);
    lua_setfield(L, -2, "Client");
    lua_pushcfunction(L, ll_grpc_stream_new);
    lua_setfield(L, -2, "Stream");
    static const char *const HEALTH_NAMES[] = {"HealthCheckUnknown", "HealthCheckServing", "HealthCheckNotServing",
                                               "HealthCheckServiceUnknown", "HealthCheckServiceUnkown" /* k6's */};
    for (int i = 0; i < 5; i++) {
        lua_pushinteger(L, i < 4 ? i : 3);
        lua_setfield(L, -2, HEALTH_NAMES[i]);
    }
    for (int i = 0; i < LL_GRPC_NSTATUS; i++) {
        char key[40];
        snprintf(key, sizeof(key), "Status%s", STATUS[i]);
        lua_pushinteger(L, i);
        lua_setfield(L, -2, key);
    }
    return 1;
}
