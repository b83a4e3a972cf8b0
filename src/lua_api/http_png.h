/* http_png.h -- http.RandomPNG (http_png.c): a new PNG of random RGB noise on each
 * call, as an upload body. */
#ifndef LL_HTTP_PNG_H
#define LL_HTTP_PNG_H

typedef struct lua_State lua_State;

/* Sets RandomPNG in the http module table at index module. */
void ll_http_png_register(lua_State *L, int module);

#endif
