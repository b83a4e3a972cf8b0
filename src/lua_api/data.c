/* data.c -- luaload.data: test data read from a file once, in init code,
 * and shared by the VUs of the worker (k6's SharedArray, without a copy
 * per VU): data.csv (RFC 4180) and data.json. The result is made of plain
 * Lua tables, so #, t[i], ipairs, pairs, unpack and json.encode work as on
 * any table, each with a protected metatable whose __newindex raises
 * "luaload.data: the data is read-only". LuaJIT (Lua 5.1) honours neither
 * __len nor __ipairs/__pairs on tables, and ipairs refuses userdata, so a
 * proxy would lose #rows or ipairs(rows): adding a key raises, changing a
 * key already there (or rawset, table.insert) is not caught. data.stream,
 * for files read a row at a time, is data_stream.c's. */
#include <cJSON.h>
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data.h"
#include "data_csv.h"
#include "json.h"
#include "modules.h"
#include "script_host.h"
#include "state.h"

#define LL_DATA_FROZEN_MT "luaload.data.frozen"

static int ll_data_readonly(lua_State *L) { return luaL_error(L, "luaload.data: the data is read-only"); }

/* Pushes the metatable of read-only tables (one per state). */
static void ll_data_push_frozen_mt(lua_State *L) {
    if (!luaL_newmetatable(L, LL_DATA_FROZEN_MT)) return;
    lua_pushcfunction(L, ll_data_readonly);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "luaload.data (read-only)"); /* getmetatable's answer; setmetatable raises */
    lua_setfield(L, -2, "__metatable");
}

void ll_data_check_init(lua_State *L, const char *fn) {
    ll_worker *w = ll_state_worker(L);
    if (w && ll_worker_current(w)) luaL_error(L, "%s: only available in init code (outside setup, default and teardown)", fn);
}

void ll_data_push_path(lua_State *L, const char *path) {
    ll_worker *w = ll_state_worker(L);
    const char *script = w ? ll_worker_script(w).path : NULL;
    const char *slash = script ? strrchr(script, '/') : NULL;
    if (path[0] == '/' || !slash) {
        lua_pushstring(L, path);
    } else {
        lua_pushlstring(L, script, (size_t)(slash - script));
        lua_pushfstring(L, "%s/%s", lua_tostring(L, -1), path);
        lua_remove(L, -2);
    }
}

/* Pushes the contents of path (relative: to the script's directory, as
 * ll.open) in a userdata, read at once (st_size + 1 bytes: a file that
 * grew, or one without a size such as a pipe, doubles the buffer), and
 * returns them past a UTF-8 BOM, as spreadsheets write. */
static const char *ll_data_read(lua_State *L, const char *fn, const char *path, size_t *len) {
    ll_data_push_path(L, path);
    FILE *f = fopen(lua_tostring(L, -1), "rb");
    if (!f) luaL_error(L, "%s: cannot read '%s': %s", fn, path, strerror(errno));
    struct stat st;
    size_t cap = fstat(fileno(f), &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 64 * 1024;
    char *buf = lua_newuserdata(L, cap);
    size_t n = 0, got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n < cap) continue;
        char *bigger = lua_newuserdata(L, cap * 2);
        memcpy(bigger, buf, n);
        lua_replace(L, -2);
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) luaL_error(L, "%s: cannot read '%s': %s", fn, path, strerror(err));
    *len = n;
    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        *len -= 3;
        return buf + 3;
    }
    return buf;
}

/* ---- CSV (the rows: data_csv.c) ---- */

/* The options table at idx: header (boolean), separator (one character). */
static void ll_data_options_csv(lua_State *L, int idx, int *header, char *sep) {
    if (lua_isnoneornil(L, idx)) return;
    if (!lua_istable(L, idx)) luaL_error(L, "luaload.data.csv: options must be a table, got %s", luaL_typename(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (k && strcmp(k, "header") == 0) {
            if (!lua_isboolean(L, -1)) {
                luaL_error(L, "luaload.data.csv: header must be a boolean, got %s", luaL_typename(L, -1));
            }
            *header = lua_toboolean(L, -1);
        } else if (k && strcmp(k, "separator") == 0) {
            *sep = ll_data_csv_separator(L, -1, "luaload.data.csv");
        } else {
            lua_pushvalue(L, -2);
            luaL_error(L, "luaload.data.csv: unknown option '%s'", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        }
        lua_pop(L, 1);
    }
}

/* data.csv(path[, { header = false, separator = "," }]) -> rows */
static int ll_data_load_csv(lua_State *L) {
    const char *fn = "luaload.data.csv";
    const char *path = luaL_checkstring(L, 1);
    int header = 0;
    char sep = ',';
    ll_data_options_csv(L, 2, &header, &sep);
    ll_data_check_init(L, fn);
    lua_settop(L, 2);
    luaL_checkstack(L, 40, "luaload.data.csv");
    size_t len;
    const char *s = ll_data_read(L, fn, path, &len);
    ll_data_push_frozen_mt(L);
    int mt = lua_gettop(L);

    ll_data_csv c = {L, fn, path, s, s + len, 1, s, sep};
    size_t lines = 0;
    for (const char *nl = s; (nl = memchr(nl, '\n', (size_t)(c.end - nl))) != NULL; nl++) lines++;
    int nhdr = 0;
    lua_newtable(L);
    int hdr = lua_gettop(L);
    if (header && ll_data_csv_skip_empty(&c)) nhdr = ll_data_csv_header(&c, hdr);
    lua_createtable(L, lines < (size_t)1 << 30 ? (int)lines : 0, 0);
    int list = lua_gettop(L);
    int n = 0, ncols = 0;
    while (ll_data_csv_skip_empty(&c)) {
        if (header) ll_data_csv_named_row(&c, hdr, nhdr);
        else ncols = ll_data_csv_list_row(&c, ncols);
        lua_pushvalue(L, mt);
        lua_setmetatable(L, -2);
        lua_rawseti(L, list, ++n);
    }
    lua_pushvalue(L, mt);
    lua_setmetatable(L, list);
    return 1;
}

/* ---- JSON ---- */

/* Gives every table in the value at idx (absolute) the read-only
 * metatable at mt. cJSON nests at most CJSON_NESTING_LIMIT deep. */
static void ll_data_freeze(lua_State *L, int idx, int mt) {
    if (!lua_istable(L, idx)) return;
    luaL_checkstack(L, 3, "luaload.data.json: nesting too deep");
    lua_pushvalue(L, mt);
    lua_setmetatable(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        ll_data_freeze(L, lua_gettop(L), mt);
        lua_pop(L, 1);
    }
}

/* Raises the JSON error at byte at of s, with its line and column. */
static void ll_data_json_error(lua_State *L, const char *path, const char *s, size_t at, const char *what) {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at; i++) {
        if (s[i] != '\n') continue;
        line++;
        line_start = i + 1;
    }
    luaL_error(L, "luaload.data.json: '%s' line %d, column %d: %s at byte %d", path, line,
               (int)(at - line_start) + 1, what, (int)at);
}

/* data.json(path) -> the decoded value (json.decode's conversions: JSON
 * null is json.null) */
static int ll_data_load_json(lua_State *L) {
    const char *fn = "luaload.data.json";
    const char *path = luaL_checkstring(L, 1);
    ll_data_check_init(L, fn);
    lua_settop(L, 1);
    size_t len;
    const char *s = ll_data_read(L, fn, path, &len);
    ll_data_push_frozen_mt(L);
    int mt = lua_gettop(L);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, len, &end, 0);
    size_t at = end && end >= s ? (size_t)(end - s) : 0;
    if (!j) ll_data_json_error(L, path, s, at, "invalid JSON");
    while (at < len && memchr(" \t\r\n", s[at], 4)) at++;
    if (at < len) { /* cJSON stops after one value: a second one (JSON lines) would be dropped */
        cJSON_Delete(j);
        ll_data_json_error(L, path, s, at, "text after the JSON value (one value per file)");
    }
    ll_json_push_cjson(L, j);
    cJSON_Delete(j);
    ll_data_freeze(L, lua_gettop(L), mt);
    return 1;
}

int luaopen_luaload_data(lua_State *L) {
    static const luaL_Reg fns[] = {{"csv", ll_data_load_csv}, {"json", ll_data_load_json},
                                     {"stream", ll_data_stream_open}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
