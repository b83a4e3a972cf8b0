/* http_client.h -- the userdata of luaload.http: Client (its options, its
 * connection slot in every VU, its transport) and Request (a prepared
 * ll_http_req), and the parsing of k6's request params shared by
 * Request() and the one-off calls (http_client.c). */
#ifndef LL_HTTP_CLIENT_H
#define LL_HTTP_CLIENT_H

#include <stdint.h>

#include "transport.h"

typedef struct lua_State lua_State;
typedef struct luaL_Reg luaL_Reg;

typedef struct ll_http_client {
    uint32_t tag;
    int slot;                       /* index of the VUs' connection for this client */
    uint64_t uid;                   /* unique in the worker */
    ll_client_opts opts;            /* with options.* merged in once resolved */
    int resolved;                   /* options.* merged in (ll_http_client_opts) */
} ll_http_client;

typedef struct ll_http_request {
    uint32_t tag;
    ll_http_req req;
} ll_http_request;

/* Registers the Client metatable (with client_methods, the request
 * methods of http.c), the Request metatable and the client-slot pool. */
void ll_http_client_register(lua_State *L, const luaL_Reg *client_methods);
/* http.Client{...} and http.Request(url, params) */
int ll_http_client_new(lua_State *L);
int ll_http_client_request_new(lua_State *L);
/* Pushes a new Client with default options (the default client of
 * http.get & co). */
ll_http_client *ll_http_client_push(lua_State *L);
/* The Client at idx (methods called with ':'), or raises. */
ll_http_client *ll_http_client_check(lua_State *L, int idx);
/* The options of c for its requests: what the Client set, options.* (k6's
 * global HTTP options) for the rest; merged at the first call. */
const ll_client_opts *ll_http_client_opts(lua_State *L, ll_http_client *c);
void ll_http_client_opts_free(ll_client_opts *o);

/* Option values shared with http_options.c (they raise on bad input; W
 * and key name the option in the message). */
int ll_http_client_tls_version(lua_State *L, int idx, const char *W, const char *key); /* "tls1.2" -> 12 */
char *ll_http_client_pem_file(lua_State *L, int idx, const char *W, const char *key);  /* PEM text -> a path */
char *ll_http_client_wire_string(lua_State *L, int idx, const char *W, const char *key);
char *ll_http_client_cipher_list(lua_State *L, int idx, const char *W); /* a string or a list -> "a:b" */
/* A malloc'd copy of s (NULL stays NULL), or raises out of memory. */
char *ll_http_client_strdup(lua_State *L, const char *s);

/* The Request at idx, or NULL. */
ll_http_request *ll_http_client_to_request(lua_State *L, int idx);

/* Param parsing into a request (raise on bad input; W names the caller in
 * the message, e.g. "http.Request"). Nothing that could smuggle bytes onto
 * the wire gets through (http_req.h's checks). */
/* anchor: a table that keeps what the body reads from (http_body.h) */
void ll_http_client_parse_params(lua_State *L, int idx, ll_http_req *r, int anchor, const char *W);
void ll_http_client_set_url(lua_State *L, ll_http_req *r, int idx, const char *W);
void ll_http_client_set_method(lua_State *L, ll_http_req *r, int idx, const char *W);
/* The method at idx, checked to be a token (the request(method, ...) form). */
const char *ll_http_client_check_method(lua_State *L, int idx, const char *W);

#endif
