/* http_cookies.h -- http.cookie_jar() and res.cookies (http_cookies.c). */
#ifndef LL_HTTP_COOKIES_H
#define LL_HTTP_COOKIES_H

#include <stddef.h>

typedef struct lua_State lua_State;

/* Adds cookie_jar (and k6's cookieJar) to the module table at index module. */
void ll_http_cookies_register(lua_State *L, int module);
/* Pushes res.cookies: the Set-Cookie headers of a raw header block, the
 * response to url, as { name = { {name, value, domain, path, http_only,
 * secure, max_age, expires}, ... } }. */
void ll_http_cookies_push_response(lua_State *L, const char *headers, size_t len, const char *url);

#endif
