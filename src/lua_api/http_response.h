/* http_response.h -- the Response table a request returns to the script
 * (http_response.c). */
#ifndef LL_HTTP_RESPONSE_H
#define LL_HTTP_RESPONSE_H

#include "http_req.h"

typedef struct lua_State lua_State;

/* Registers the Response metatable, its weak side table and its maker, in
 * a new state before any script code runs (it takes the standard
 * setmetatable). */
void ll_http_response_register(lua_State *L);
/* Pushes the Response of r on L: status, proto, body (unless type is
 * "none"), error, error_code, url; headers, timings and json() on first use. */
void ll_http_response_push(lua_State *L, const ll_http_res *r, ll_response_type type);
/* Pushes a table of the header block p (h1_parse.h's form, its status line
 * first): canonical names, repeated headers joined with ", " as Go does. */
void ll_http_response_push_headers(lua_State *L, const char *p, size_t len);

#endif
