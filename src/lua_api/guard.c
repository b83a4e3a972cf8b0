/* guard.c -- the C stack guards of a worker's state. LuaJIT bounds its Lua
 * stack, not the C stack: Lua code that recurses through a C function which
 * calls back into Lua (string.gsub's callback, coroutine.resume, a
 * __tostring that prints itself) overflowed the thread's C stack and killed
 * the run. The functions it recurses through check the C stack left first
 * (base/cstack.h) and raise "C stack overflow" at the script's line, a
 * script error as in Lua 5.1 (LUAI_MAXCCALLS). What gets past them is the
 * crash guard's (run/crash.h). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>

#include "cstack.h"
#include "modules.h"

void ll_guard_cstack(lua_State *L, int level, const char *what) {
    if (ll_cstack_left() >= LL_CSTACK_RESERVE) return;
    luaL_where(L, level);
    lua_pushfstring(L, "C stack overflow in %s (calls nested too deeply: an unbounded recursion?)", what);
    lua_concat(L, 2);
    lua_error(L);
}

/* check(what), called by a Lua wrapper: the script's line is its caller's */
int ll_guard_lua_check(lua_State *L) {
    ll_guard_cstack(L, 2, luaL_optstring(L, 1, "a C function"));
    return 0;
}

/* tostring(v) of a table or userdata with a metatable: its __tostring is
 * called from here, on the C stack, so that a __tostring that calls
 * tostring on itself meets the guard; LuaJIT's own tostring tail-calls it,
 * and that loop never ends. Upvalue 1: the standard tostring. */
static int l_tostring_meta(lua_State *L) {
    luaL_checkany(L, 1);
    if (!luaL_getmetafield(L, 1, "__tostring")) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        return 1;
    }
    ll_guard_cstack(L, 1, "tostring (__tostring)");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

static const char WRAPPERS[] =
    "local check, meta_tostring, raw_gsub, raw_tostring = ...\n"
    "local type, getmetatable = type, getmetatable\n"
    "string.gsub = function(...) check('string.gsub') return raw_gsub(...) end\n"
    "tostring = function(...)\n"
    "  local v = ...\n"
    "  local t = type(v)\n"
    "  if (t == 'table' or t == 'userdata') and getmetatable(v) ~= nil then return meta_tostring(...) end\n"
    "  return raw_tostring(...)\n"
    "end\n";

int ll_guard_install(lua_State *L, char *err, size_t errlen) {
    int top = lua_gettop(L);
    int rc = luaL_loadbuffer(L, WRAPPERS, sizeof(WRAPPERS) - 1, "=luaload.guard");
    if (rc == 0) {
        lua_pushcfunction(L, ll_guard_lua_check);
        lua_getglobal(L, "tostring");
        lua_pushcclosure(L, l_tostring_meta, 1);
        lua_getglobal(L, "string");
        lua_getfield(L, -1, "gsub");
        lua_remove(L, -2);
        lua_getglobal(L, "tostring");
        rc = lua_pcall(L, 4, 0, 0);
    }
    if (rc != 0) snprintf(err, errlen, "cannot install the C stack guards: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    return rc == 0 ? 0 : -1;
}
