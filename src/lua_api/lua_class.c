/* lua_class.c -- a userdata type's metatable, made once per state: its
 * methods as __index, its __gc, and (locked) a __metatable that keeps
 * scripts from reading or replacing it. */
#include <lauxlib.h>
#include <lua.h>

#include "modules.h"

void ll_lua_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction gc, int locked) {
    if (!luaL_newmetatable(L, name)) {
        lua_pop(L, 1);
        return;
    }
    if (methods) {
        lua_newtable(L);
        luaL_register(L, NULL, methods);
        lua_setfield(L, -2, "__index");
    }
    if (gc) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
    }
    if (locked) {
        lua_pushstring(L, name);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
}
