/* http_body.h -- request bodies of luaload.http (http_body.c): strings,
 * http.FileStream, http.Blob, http.Form, http.file and table bodies, and
 * k6's params.compression. */
#ifndef LL_HTTP_BODY_H
#define LL_HTTP_BODY_H

#include "http_req.h"

typedef struct lua_State lua_State;

/* Adds FileStream, Blob, Form and file to the module table at module. */
void ll_http_body_register(lua_State *L, int module);
/* Makes the value at idx r's body, raising on a bad one (W names the
 * caller). The objects the body reads from are stored in the table at
 * anchor, which the caller keeps alive as long as r. */
void ll_http_body_set(lua_State *L, ll_http_req *r, int idx, int anchor, const char *W);
/* Once body and params are in: the Content-Type a table body implies
 * (unless a header sets one), and params.compression applied. */
void ll_http_body_finish(lua_State *L, ll_http_req *r, const char *W);
/* params.compression at idx -> LL_COMPRESS_* (body_compress.h) */
int ll_http_body_compression(lua_State *L, int idx, const char *W);

#endif
