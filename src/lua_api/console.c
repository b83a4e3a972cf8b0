/* console.c -- the `console` global of scripts, as k6's: log, info, warn,
 * error and debug write one logfmt line each on stderr,
 *   time="2026-12-02T03:49:00Z" level=info msg="hello 42" source=console vu=1 iteration=0
 * with the arguments joined by spaces (tables as JSON when they encode,
 * as k6 prints objects). debug lines show only with -v (LUALOAD_VERBOSE=1).
 * Each line goes out in one write, so the workers' lines never mix. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modules.h"
#include "script_host.h"
#include "state.h"

/* Appends s to b as a logfmt quoted value's content. */
static void add_quoted(luaL_Buffer *b, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"' || c == '\\') {
            luaL_addchar(b, '\\');
            luaL_addchar(b, c);
        } else if (c == '\n') {
            luaL_addstring(b, "\\n");
        } else if (c == '\r') {
            luaL_addstring(b, "\\r");
        } else if (c == '\t') {
            luaL_addstring(b, "\\t");
        } else {
            luaL_addchar(b, c);
        }
    }
}

/* Pushes the arguments 1..n joined by spaces: tables as JSON when
 * luaload.json encodes them, anything else through tostring. */
static void push_message(lua_State *L, int n) {
    ll_guard_cstack(L, 1, "console");
    luaL_Buffer b;
    lua_getglobal(L, "tostring");
    int tostr = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.json");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "encode");
    lua_remove(L, -2);
    int encode = lua_gettop(L);
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, ' ');
        int done = 0;
        if (lua_istable(L, i)) {
            lua_pushvalue(L, encode);
            lua_pushvalue(L, i);
            done = lua_pcall(L, 1, 1, 0) == 0 && lua_isstring(L, -1);
            if (!done) lua_pop(L, 1);
        }
        if (!done) {
            lua_pushvalue(L, tostr);
            lua_pushvalue(L, i);
            lua_call(L, 1, 1);
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            lua_pushliteral(L, "?");
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
}

/* -v, or LUALOAD_VERBOSE set to anything but "" and "0" */
static int verbose(const ll_worker *w) {
    if (ll_worker_verbose(w)) return 1;
    const char *v = getenv("LUALOAD_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

static int console_write(lua_State *L, const char *level) {
    int n = lua_gettop(L);
    ll_worker *w = ll_state_worker(L);
    if (strcmp(level, "debug") == 0 && !verbose(w)) return 0;
    push_message(L, n);
    size_t mlen = 0;
    const char *msg = lua_tolstring(L, -1, &mlen);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    const ll_vu *vu = w ? ll_worker_current(w) : NULL;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "time=\"%s\" level=%s msg=\"", when, level);
    luaL_addvalue(&b);
    add_quoted(&b, msg, mlen);
    if (vu) lua_pushfstring(L, "\" source=console vu=%d iteration=%d\n", ll_vu_id(vu), (int)ll_vu_iteration(vu));
    else lua_pushliteral(L, "\" source=console\n");
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    ll_state_write_line(L, ll_worker_console(w));
    return 0;
}

static int l_log(lua_State *L) { return console_write(L, "info"); }
static int l_info(lua_State *L) { return console_write(L, "info"); }
static int l_warn(lua_State *L) { return console_write(L, "warning"); }
static int l_error(lua_State *L) { return console_write(L, "error"); }
static int l_debug(lua_State *L) { return console_write(L, "debug"); }

void ll_console_install(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"log", l_log}, {"info", l_info}, {"warn", l_warn}, {"error", l_error}, {"debug", l_debug}, {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    lua_setglobal(L, "console");
}
