/* lua_api.h -- what the app takes from lua_api: the Lua implementation of
 * run/script.h, which it hands to the engine (ll_engine_run, ll_merge_run),
 * and the version of the LuaJIT it was linked with. */
#ifndef LL_LUA_API_H
#define LL_LUA_API_H

#include "script.h"

/* run/script.h's operations over a worker's LuaJIT state (script.c). */
extern const ll_script_ops ll_lua_script;

/* "LuaJIT 2.1.0-beta3": the library's jit.version (not thread-safe; for
 * luaload version). */
const char *ll_lua_luajit_version(void);

#endif
