/* lua_grpc.h -- what the three files of luaload.grpc share: the Client
 * and a VU's connect (lua_grpc.c), one call's request, tags and status
 * (grpc_call.c: unary calls), and streams (grpc_stream.c). */
#ifndef LL_LUA_GRPC_H
#define LL_LUA_GRPC_H

#include <stdint.h>

#include "buf.h"
#include "http_client.h"
#include "proto.h"
#include "script_host.h"

typedef struct lua_State lua_State;

typedef struct ll_grpc_client {
    ll_proto *proto;
    ll_http_client *http;       /* its slot holds the VUs' connections */
    int http_ref;
    int conns_ref;              /* { [VU id] = connection } */
    char *tls;                  /* the TLS options the first TLS connect set ("" none yet) */
    ll_proto *refl;             /* reflection.proto's messages (grpc_reflect.c), or NULL */
} ll_grpc_client;

typedef struct ll_grpc_conn {   /* a VU's connect(): where its calls go */
    char *addr;                 /* "host:port" as given (the url tag) */
    char *base;                 /* "http://host:port" or "https://host:port" */
    uint64_t timeout_us;
    uint64_t max_recv, max_send;
} ll_grpc_conn;

/* The tags of a call's or a stream's samples (an ll_tag_source's ctx):
 * k6's url, service, method, name, status, and rpc_type; params.tags;
 * the VU's. */
typedef struct ll_grpc_tags {
    ll_vu *vu;
    ll_tag *tags;               /* params.tags */
    int ntags;
    char *url, *service, *method, *name;
    const char *rpc_type;       /* "unary", "server_streaming" ... */
    char status[12];
} ll_grpc_tags;

/* The Client at idx (methods called with ':'), or raises. */
ll_grpc_client *ll_grpc_client_check(lua_State *L, int idx);
/* The VU's connection to c, or raises "no gRPC connection" (W: the caller). */
const ll_grpc_conn *ll_grpc_conn_of(lua_State *L, ll_grpc_client *c, ll_vu *vu, const char *W);
/* The id of vu's connections of c (in its http Client's slot): one
 * multiplexed HTTP/2 connection per VU, which its calls and streams in
 * flight at once share. */
uint64_t ll_grpc_pool(const ll_grpc_client *c, const ll_vu *vu);
/* Starts req (POST) on vu's connection of c, on lane, its completion
 * fn(ud); streamed: its body is a stream (the transport must resume it).
 * Returns the transfer, or NULL with the reason in *err. */
ll_transfer *ll_grpc_start(lua_State *L, ll_grpc_client *c, ll_vu *vu, int lane, const ll_http_req *req, int streamed,
                           ll_transfer_done_fn *fn, void *ud, const char **err);
/* A duration param at idx: a string ("2s") or milliseconds; raises. */
uint64_t ll_grpc_duration(lua_State *L, int idx, const char *W, const char *key);

/* grpc_call.c */
void ll_grpc_tags_init(ll_grpc_tags *t, ll_vu *vu, const char *addr, const char *path, const char *rpc_type);
void ll_grpc_tags_clear(ll_grpc_tags *t);
void ll_grpc_sample(ll_grpc_tags *t, int metric, double value);
/* Fills req (initialised) for a call of path on g: POST, the gRPC
 * headers, grpc-timeout (timeout_us), HTTP/2, and params.metadata and
 * params.tags (into t; params 0: none). Raises on bad params. */
void ll_grpc_request(lua_State *L, ll_http_req *req, ll_grpc_tags *t, const ll_grpc_conn *g, const char *path,
                     uint64_t timeout_us, int params, const char *W);
/* params[field] ({ key = value }, nil: none) as metadata headers on
 * req: keys lowercased, -bin values base64'd. Raises on bad ones. */
void ll_grpc_metadata(lua_State *L, ll_http_req *req, int params, const char *field, const char *W);
/* The table at idx as a message of type: framed into out (appended).
 * Raises on a bad message or one over max bytes. */
void ll_grpc_encode(lua_State *L, int idx, const ll_proto_type *type, uint64_t max, ll_buf *out, const char *W);
/* The status of the call that ended with r: from the trailers (or the
 * headers of a trailers-only response), the HTTP status, or the
 * transport's failure; its message in why (the server's grpc-message, or
 * what failed). Pushes the headers and the trailers as tables name ->
 * { values } on L. */
int ll_grpc_status(lua_State *L, const ll_http_res *r, ll_buf *why);
/* Whether r's headers name grpc-encoding gzip (its messages may be
 * compressed, each saying so in its flag). */
int ll_grpc_gzip(const ll_http_res *r);
/* client:invoke(method, request, params), and async_invoke: the same
 * without waiting, a promise of the Response */
int ll_grpc_invoke(lua_State *L);
int ll_grpc_async_invoke(lua_State *L);
/* client:health_check([service, params]): grpc.health.v1.Health/Check's Response */
int ll_grpc_health_check(lua_State *L);
/* The metatable of a call in flight, once per state. */
void ll_grpc_call_register(lua_State *L);

/* grpc_reflect.c: connect's reflect = true for client c (at stack index
 * client) and the VU's new connection (at conn), with connect's params
 * (0: none) for reflect_metadata: waits, then returns to the script
 * true, or (nil, message). */
int ll_grpc_reflect(lua_State *L, ll_grpc_client *c, int client, int conn, int params);
void ll_grpc_reflect_register(lua_State *L);

/* grpc_stream.c: grpc.Stream(client, method, params) and its methods */
int ll_grpc_stream_new(lua_State *L);
void ll_grpc_stream_register(lua_State *L);

#endif
