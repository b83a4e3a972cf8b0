/* coroutine.c -- installs luaload.coroutine (lib/lua/luaload/coroutine.lua)
 * in a worker's state: the coroutine functions the scripts see, with which
 * a wait (HTTP, sleep) inside a coroutine the script created suspends the
 * whole VU. The Lua side gets the wait token and a way to cancel the VU's
 * pending wait from here. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>

#include "modules.h"
#include "script_host.h"

/* cancel_wait(): the wait of the running VU is given up (its coroutine
 * could not pass it up to the worker) */
static int l_cancel_wait(lua_State *L) {
    ll_vu_task_cancel_wait(ll_vu_running(ll_luaload_vu(L, "waiting")));
    return 0;
}

int ll_coroutine_install(lua_State *L, char *err, size_t errlen) {
    int top = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.coroutine");
    int rc = lua_pcall(L, 1, 1, 0);
    if (rc == 0) {
        ll_luaload_push_wait_token(L);
        lua_pushcfunction(L, l_cancel_wait);
        lua_pushcfunction(L, ll_guard_lua_check);
        rc = lua_pcall(L, 3, 0, 0);
    }
    if (rc != 0) {
        const char *msg = lua_tostring(L, -1);
        snprintf(err, errlen, "cannot install luaload.coroutine: %s", msg ? msg : "(not a string)");
    }
    lua_settop(L, top);
    return rc == 0 ? 0 : -1;
}
