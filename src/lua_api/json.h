/* json.h -- luaload.json and the JSON <-> Lua conversions the engine uses
 * to pass setup() data between states and the summary data to Lua. */
#ifndef LL_JSON_H
#define LL_JSON_H

#include <stddef.h>

typedef struct lua_State lua_State;
typedef struct cJSON cJSON;

/* Decodes s and pushes the value. Returns 0, or -1 (nothing pushed, err set). */
int ll_json_push(lua_State *L, const char *s, size_t len, char *err, size_t errlen);
void ll_json_push_cjson(lua_State *L, const cJSON *j);
/* Encodes the value at idx; returns a malloc'd string or NULL with err set. */
char *ll_json_encode(lua_State *L, int idx, char *err, size_t errlen);
int luaopen_luaload_json(lua_State *L);

#endif
