/* lua_tags.c -- a script's table of tags ({ name = "login" }, given to
 * check() or a custom metric's add()) as part of a sample's tags: one
 * key's value, and each string key with a string or number value. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "modules.h"

const char *ll_lua_tags_get(lua_State *L, int idx, const char *key, char *buf, size_t len) {
    lua_getfield(L, idx, key);
    const char *v = lua_tostring(L, -1);
    if (v) snprintf(buf, len, "%s", v); /* the string may not outlive the pop */
    lua_pop(L, 1);
    return v ? buf : NULL;
}

int ll_lua_tags_each(lua_State *L, int idx, const char *skip, ll_tag_fn *fn, void *ud) {
    int has_group = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1) && (!skip || strcmp(lua_tostring(L, -2), skip))) {
            lua_pushvalue(L, -1); /* tostring a copy, not the value lua_next reads */
            const char *k = lua_tostring(L, -3);
            fn(ud, k, lua_tostring(L, -1));
            has_group |= strcmp(k, "group") == 0;
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return has_group;
}
