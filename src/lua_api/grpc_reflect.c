/* grpc_reflect.c -- connect(address, { reflect = true }): the server's
 * services and the files that define them, asked through gRPC server
 * reflection (grpc.reflection.v1, then v1alpha for a server without it)
 * and added to the Client's files (proto.h's ll_proto_add_file), so that
 * no .proto is needed.
 *
 * Two requests of the bidirectional ServerReflectionInfo, each one HTTP/2
 * request whose body holds all its messages (the server answers each,
 * then ends): list_services, then file_containing_symbol for every
 * service but reflection's own, both with connect's reflect_metadata
 * (k6's reflectMetadata) as metadata. The messages are reflection.proto's,
 * parsed from the text below into a pool of the Client's own. The
 * connect waits (ll_vu_wait) and returns true, or (nil, message) for
 * lua_grpc.c's wrapper to raise. */
#include <cJSON.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "grpc_wire.h"
#include "lua_grpc.h"
#include "modules.h"
#include "xmalloc.h"

#define REFLECT_MT "luaload.grpc.Reflection"

/* The part of grpc/reflection/v1/reflection.proto luaload asks and reads
 * (field numbers as there; v1alpha's are the same). %s: v1 or v1alpha. */
static const char SOURCE[] =
    "syntax = \"proto3\";\n"
    "package grpc.reflection.%s;\n"
    "message ServerReflectionRequest {\n"
    "  string host = 1;\n"
    "  oneof message_request {\n"
    "    string file_by_filename = 3;\n"
    "    string file_containing_symbol = 4;\n"
    "    string list_services = 7;\n"
    "  }\n"
    "}\n"
    "message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }\n"
    "message ServiceResponse { string name = 1; }\n"
    "message ListServiceResponse { repeated ServiceResponse service = 1; }\n"
    "message ErrorResponse { int32 error_code = 1; string error_message = 2; }\n"
    "message ServerReflectionResponse {\n"
    "  string valid_host = 1;\n"
    "  ServerReflectionRequest original_request = 2;\n"
    "  oneof message_response {\n"
    "    FileDescriptorResponse file_descriptor_response = 4;\n"
    "    ListServiceResponse list_services_response = 6;\n"
    "    ErrorResponse error_response = 7;\n"
    "  }\n"
    "}\n"
    "service ServerReflection {\n"
    "  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);\n"
    "}\n";

static const char *const VERSIONS[] = {"v1", "v1alpha"};

typedef struct reflect {
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int self_ref;
    ll_vu_task *waiter;
    ll_grpc_client *c;
    int client_ref, conn_ref;   /* kept while it runs */
    const ll_grpc_conn *g;
    ll_transfer *x;
    int lane;
    ll_http_req req;
    ll_http_req meta;           /* connect's reflect_metadata, as headers */
    ll_grpc_tags t;
    int version;                /* VERSIONS[version] */
    int round;                  /* 1: list_services, 2: the files */
    ll_proto_method m;
    char **services;
    int nservices;
    char err[512];              /* why it failed */
} reflect;

static void reflect_clear(reflect *r) {
    ll_http_req_clear(&r->req);
    ll_http_req_clear(&r->meta);
    ll_grpc_tags_clear(&r->t);
    for (int i = 0; i < r->nservices; i++) free(r->services[i]);
    free(r->services);
    r->services = NULL;
    r->nservices = 0;
}

static int reflect_gc(lua_State *L) {
    reflect_clear(lua_touserdata(L, 1));
    return 0;
}

static void reflect_free(reflect *r) {
    reflect_clear(r);
    luaL_unref(r->L, LUA_REGISTRYINDEX, r->client_ref);
    luaL_unref(r->L, LUA_REGISTRYINDEX, r->conn_ref);
    luaL_unref(r->L, LUA_REGISTRYINDEX, r->self_ref);
    r->client_ref = r->conn_ref = r->self_ref = LUA_NOREF;
}

/* connect returns: true, or (nil, the reason) */
static void finish(reflect *r, int ok) {
    ll_vu_task *t = r->waiter;
    lua_State *co = ll_vu_task_co(t);
    int n = 1;
    if (ok) {
        lua_pushboolean(co, 1);
    } else {
        lua_pushnil(co);
        lua_pushfstring(co, "grpc.Client:connect: server reflection: %s", r->err);
        n = 2;
    }
    reflect_free(r);
    ll_vu_task_resume(t, n);
}

static void reflect_cancel(void *ud) {
    reflect *r = ud;
    if (r->x) {
        int64_t sent = 0;
        r->x->tp->ops->cancel(r->x, &sent);
    }
    ll_http_vu_lane_give(ll_vu_http(r->vu), r->lane);
    reflect_free(r);
}

/* The pool of reflection.proto's version v, made once per Client. */
static int method_of(reflect *r, char *err, size_t errlen) {
    if (!r->c->refl && !(r->c->refl = ll_proto_new())) return snprintf(err, errlen, "out of memory"), -1;
    char name[64], path[96];
    snprintf(name, sizeof(name), "luaload/reflection_%s.proto", VERSIONS[r->version]);
    snprintf(path, sizeof(path), "grpc.reflection.%s.ServerReflection/ServerReflectionInfo", VERSIONS[r->version]);
    if (ll_proto_find_method(r->c->refl, path, &r->m, err, errlen) == 0) return 0;
    char text[sizeof(SOURCE) + 16];
    snprintf(text, sizeof(text), SOURCE, VERSIONS[r->version]);
    if (ll_proto_add_source(r->c->refl, name, text, err, errlen) < 0) return -1;
    return ll_proto_find_method(r->c->refl, path, &r->m, err, errlen);
}

/* Adds one request (JSON) framed to body. */
static int add_request(reflect *r, ll_buf *body, const char *json) {
    ll_buf wire = {0};
    int rc = ll_proto_encode(r->m.in, json, strlen(json), &wire, r->err, sizeof(r->err));
    if (rc == 0) rc = ll_grpc_frame(body, wire.p ? wire.p : "", wire.len, 0, r->err, sizeof(r->err));
    ll_buf_free(&wire);
    return rc;
}

static void on_done(ll_transfer *x, const ll_http_res *res, void *ud);

/* Sends this round's request. 0, or -1 with r->err. */
static int start_round(reflect *r) {
    if (method_of(r, r->err, sizeof(r->err)) < 0) return -1;
    ll_buf body = {0};
    if (r->round == 1) {
        if (add_request(r, &body, "{\"listServices\": \"*\"}") < 0) return ll_buf_free(&body), -1;
    } else {
        for (int i = 0; i < r->nservices; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "fileContainingSymbol", r->services[i]);
            char *json = cJSON_PrintUnformatted(o);
            cJSON_Delete(o);
            int rc = json ? add_request(r, &body, json) : -1;
            free(json);
            if (rc < 0) return ll_buf_free(&body), -1;
        }
    }
    ll_http_req_clear(&r->req);
    ll_http_req_init(&r->req);
    ll_grpc_tags_clear(&r->t);
    ll_grpc_tags_init(&r->t, r->vu, r->g->addr, r->m.path, "bidi_streaming");
    ll_grpc_request(r->L, &r->req, &r->t, r->g, r->m.path, r->g->timeout_us, 0, "grpc.Client:connect");
    for (int i = 0; i < r->meta.nheaders; i++)
        ll_http_req_add_header(&r->req, r->meta.headers[i].name, r->meta.headers[i].value);
    r->req.max_response_body = 64ll << 20; /* a server's files: more than one message's worth */
    ll_body_set_memory(&r->req.body, body.p ? body.p : "", body.len);
    ll_buf_free(&body);
    const char *xerr = NULL;
    r->x = ll_grpc_start(r->L, r->c, r->vu, r->lane, &r->req, 0, on_done, r, &xerr);
    if (!r->x) return snprintf(r->err, sizeof(r->err), "%s", xerr), -1;
    return 0;
}

/* One response message: the services listed, or files to add. */
static int on_message(const char *msg, size_t len, void *ud) {
    reflect *r = ud;
    ll_buf json = {0};
    if (ll_proto_decode(r->m.out, msg, len, &json, r->err, sizeof(r->err)) < 0) return ll_buf_free(&json), 1;
    cJSON *o = cJSON_ParseWithLength(json.p, json.len);
    ll_buf_free(&json);
    if (!o) return snprintf(r->err, sizeof(r->err), "a response that is not JSON"), 1;
    int rc = 0;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "errorResponse");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "listServicesResponse"),
                                                         "service");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, "fileDescriptorResponse"), "fileDescriptorProto");
    if (e) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "errorMessage");
        snprintf(r->err, sizeof(r->err), "the server answered: %s", cJSON_IsString(m) ? m->valuestring : "an error");
        rc = 1;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (rc || !cJSON_IsString(n) || !strncmp(n->valuestring, "grpc.reflection.", 16)) continue;
        r->services = ll_xrealloc(r->services, (size_t)(r->nservices + 1) * sizeof(*r->services));
        r->services[r->nservices++] = ll_xstrdup(n->valuestring);
    }
    cJSON_ArrayForEach(it, files) {
        if (rc || !cJSON_IsString(it)) continue;
        size_t n = 0;
        char berr[128];
        uint8_t *fd = ll_base64_decode(it->valuestring, strlen(it->valuestring), &n, berr, sizeof(berr));
        if (!fd || ll_proto_add_file(r->c->proto, fd, n, r->err, sizeof(r->err)) < 0) {
            if (!fd) snprintf(r->err, sizeof(r->err), "a file descriptor: %s", berr);
            rc = 1;
        }
        free(fd);
    }
    cJSON_Delete(o);
    return rc;
}

static void on_done(ll_transfer *x, const ll_http_res *res, void *ud) {
    reflect *r = ud;
    r->x = NULL;
    ll_buf why = {0};
    int st = ll_grpc_status(r->L, res, &why);
    lua_pop(r->L, 2); /* headers and trailers */
    snprintf(r->t.status, sizeof(r->t.status), "%d", st);
    ll_grpc_sample(&r->t, LL_M_GRPC_REQ_DURATION, (double)res->t.duration / 1000.0);
    ll_grpc_sample(&r->t, LL_M_DATA_SENT, (double)res->bytes_sent);
    ll_grpc_sample(&r->t, LL_M_DATA_RECEIVED, (double)res->bytes_received);
    int ok = st == LL_GRPC_OK;
    if (!ok) {
        const char *name = ll_grpc_status_name(st);
        snprintf(r->err, sizeof(r->err), "status %d (%s)%s%s", st, name ? name : "?", why.len ? ": " : "",
                 why.p ? why.p : "");
    } else {
        ll_grpc_reader rd;
        ll_grpc_reader_init(&rd, 64u << 20, ll_grpc_gzip(res));
        int rst = 0;
        int rc = ll_grpc_reader_feed(&rd, res->body, res->body_len, on_message, r, &rst, r->err, sizeof(r->err));
        if (rc == 0 && ll_grpc_reader_end(&rd, r->err, sizeof(r->err)) < 0) rc = -1;
        ll_grpc_reader_free(&rd);
        ok = rc == 0;
    }
    ll_buf_free(&why);
    x->tp->ops->release(x);
    if (!ok && st == LL_GRPC_UNIMPLEMENTED && r->round == 1 && r->version == 0) {
        r->version = 1; /* a server with v1alpha only */
        ok = 1;
    } else if (ok && r->round == 1) {
        if (r->nservices == 0) {
            snprintf(r->err, sizeof(r->err), "the server lists no service");
            ok = 0;
        }
        r->round = 2;
    } else if (ok) {
        ll_http_vu_lane_give(ll_vu_http(r->vu), r->lane);
        return finish(r, 1);
    }
    if (ok && start_round(r) == 0) return;
    ll_http_vu_lane_give(ll_vu_http(r->vu), r->lane);
    finish(r, 0);
}

int ll_grpc_reflect(lua_State *L, ll_grpc_client *c, int client, int conn, int params) {
    ll_vu *vu = ll_luaload_waiting_vu(L, "grpc.Client:connect()");
    reflect *r = lua_newuserdata(L, sizeof(*r));
    memset(r, 0, sizeof(*r));
    ll_http_req_init(&r->req);
    ll_http_req_init(&r->meta);
    luaL_getmetatable(L, REFLECT_MT);
    lua_setmetatable(L, -2);
    if (params) { /* k6's reflectMetadata; raising here, the userdata's __gc frees */
        lua_getfield(L, params, "reflect_metadata");
        ll_grpc_metadata(L, &r->meta, params, lua_isnil(L, -1) ? "reflectMetadata" : "reflect_metadata",
                         "grpc.Client:connect");
        lua_pop(L, 1);
    }
    r->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    r->vu = vu;
    r->L = ll_worker_lua(ll_vu_worker(vu));
    r->c = c;
    lua_pushvalue(L, client);
    r->client_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    r->g = lua_touserdata(L, conn);
    lua_pushvalue(L, conn);
    r->conn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    r->round = 1;
    r->lane = ll_http_vu_lane_take(ll_vu_http(vu));
    if (start_round(r) < 0) {
        ll_http_vu_lane_give(ll_vu_http(vu), r->lane);
        lua_pushnil(L);
        lua_pushfstring(L, "grpc.Client:connect: server reflection: %s", r->err);
        reflect_free(r);
        return 2;
    }
    r->waiter = ll_vu_wait(vu, reflect_cancel, r);
    return ll_luaload_wait(L, vu);
}

void ll_grpc_reflect_register(lua_State *L) { ll_lua_class(L, REFLECT_MT, NULL, reflect_gc, 1); }
