/* handlers.c -- handlers.h: the event handlers of an object (luaload.ws's
 * sockets, luaload.websockets', gRPC streams), kept by event and run as
 * tasks of the VU, with the object's gone slot watched. */
#include "handlers.h"

#include <lauxlib.h>
#include <lua.h>

void ll_handlers_add(lua_State *L, int handlers_ref, const char *event, int fn) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, handlers_ref);
    lua_getfield(L, -1, event);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, event);
    }
    lua_pushvalue(L, fn);
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    lua_pop(L, 2);
}

int ll_handlers_run(ll_vu *vu, lua_State *L, int list, int nargs, int **gone) {
    int args = lua_gettop(L) - nargs + 1;
    if (list < 0) list = lua_gettop(L) + list + 1;
    int n = lua_istable(L, list) ? (int)lua_objlen(L, list) : 0;
    int dead = 0, *outer = *gone;
    *gone = &dead;
    for (int i = 1; i <= n && !dead; i++) {
        lua_rawgeti(L, list, i);
        if (!lua_isfunction(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        lua_State *co = lua_newthread(L);
        int co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        for (int a = 0; a < nargs; a++) lua_pushvalue(L, args + a);
        lua_xmove(L, co, nargs + 1);
        ll_vu_task_start(vu, co, co_ref, nargs);
    }
    lua_settop(L, args - 1);
    if (dead) { /* *gone went with the object */
        if (outer) *outer = 1;
        return 0;
    }
    *gone = outer;
    return 1;
}
