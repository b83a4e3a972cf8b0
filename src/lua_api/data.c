/* data.c -- luaload.data: test data read from a file once, in init code,
 * and shared by the VUs of the worker (k6's SharedArray, without a copy
 * per VU): data.csv (RFC 4180) and data.json. The result is made of plain
 * Lua tables, so #, t[i], ipairs, pairs, unpack and json.encode work as on
 * any table, each with a protected metatable whose __newindex raises
 * "luaload.data: the data is read-only". LuaJIT (Lua 5.1) honours neither
 * __len nor __ipairs/__pairs on tables, and ipairs refuses userdata, so a
 * proxy would lose #rows or ipairs(rows): adding a key raises, changing a
 * key already there (or rawset, table.insert) is not caught. */
#include <cJSON.h>
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* Raises unless L runs init code: the file is read with blocking I/O,
 * which an iteration must never do. */
static void ll_data_check_init(lua_State *L, const char *fn) {
    ll_worker *w = ll_state_worker(L);
    if (w && ll_worker_current(w)) luaL_error(L, "%s: only available in init code (outside setup, default and teardown)", fn);
}

/* Pushes the contents of path (relative: to the script's directory, as
 * ll.open) in a userdata, read at once (st_size + 1 bytes: a file that
 * grew, or one without a size such as a pipe, doubles the buffer), and
 * returns them past a UTF-8 BOM, as spreadsheets write. */
static const char *ll_data_read(lua_State *L, const char *fn, const char *path, size_t *len) {
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

/* ---- CSV ---- */

typedef struct ll_data_csv {
    lua_State *L;
    const char *path; /* as the script gave it, for messages */
    const char *p, *end;
    int line;               /* the line p is on (1-based) */
    const char *line_start; /* where that line starts */
    char sep;
} ll_data_csv;

static int ll_data_csv_column(const ll_data_csv *c, const char *at) { return (int)(at - c->line_start) + 1; }

/* Moves past the line break at c->p ("\n"; the "\r" before it is skipped
 * by the caller). */
static void ll_data_csv_newline(ll_data_csv *c) {
    c->p++;
    c->line++;
    c->line_start = c->p;
}

/* The next quote from c->p (counting the lines before it), or raises: the
 * field opened at open_line, open_col is never closed. */
static const char *ll_data_csv_quote(ll_data_csv *c, int open_line, int open_col) {
    const char *q = memchr(c->p, '"', (size_t)(c->end - c->p));
    if (!q) {
        luaL_error(c->L, "luaload.data.csv: '%s' line %d, column %d: the quote that opens this field is never closed",
                   c->path, open_line, open_col);
    }
    for (const char *nl = c->p; (nl = memchr(nl, '\n', (size_t)(q - nl))) != NULL; nl++) {
        c->line++;
        c->line_start = nl + 1;
    }
    return q;
}

/* Pushes the quoted field at c->p (on its opening quote), with "" as ". */
static void ll_data_csv_quoted(ll_data_csv *c) {
    int open_line = c->line, open_col = ll_data_csv_column(c, c->p);
    c->p++;
    const char *q = ll_data_csv_quote(c, open_line, open_col);
    if (q + 1 == c->end || q[1] != '"') { /* no "" inside: the field as it is */
        lua_pushlstring(c->L, c->p, (size_t)(q - c->p));
        c->p = q + 1;
    } else {
        luaL_Buffer b;
        luaL_buffinit(c->L, &b);
        for (;;) {
            luaL_addlstring(&b, c->p, (size_t)(q - c->p));
            c->p = q + 1;
            if (c->p == c->end || *c->p != '"') break;
            luaL_addchar(&b, '"');
            c->p++;
            q = ll_data_csv_quote(c, open_line, open_col);
        }
        luaL_pushresult(&b);
    }
    const char *after = c->p;
    if (after < c->end && *after == '\r' && after + 1 < c->end && after[1] == '\n') after++;
    if (after == c->end || *after == c->sep || *after == '\n') {
        c->p = after;
        return;
    }
    luaL_error(c->L, "luaload.data.csv: '%s' line %d, column %d: expected '%c' or the end of the line after the "
                     "closing quote of a field",
               c->path, c->line, ll_data_csv_column(c, c->p), c->sep);
}

/* Pushes the unquoted field at c->p (up to the separator or the line's
 * end; a quote inside it is kept as it is). */
static void ll_data_csv_plain(ll_data_csv *c) {
    const char *q = c->p;
    while (q < c->end && *q != c->sep && *q != '\n') q++;
    const char *e = q;
    if (e > c->p && e[-1] == '\r' && (e == c->end || *e == '\n')) e--; /* CRLF */
    lua_pushlstring(c->L, c->p, (size_t)(e - c->p));
    c->p = q;
}

/* Pushes the next field; returns 1 when the record goes on after it, 0
 * when it was the record's last (c->p is then past the line break). */
static int ll_data_csv_field(ll_data_csv *c) {
    if (c->p < c->end && *c->p == '"') ll_data_csv_quoted(c);
    else ll_data_csv_plain(c);
    if (c->p == c->end) return 0;
    if (*c->p == c->sep) {
        c->p++;
        return 1;
    }
    ll_data_csv_newline(c);
    return 0;
}

/* Skips empty lines; returns 0 at the end of the input. */
static int ll_data_csv_skip_empty(ll_data_csv *c) {
    for (;;) {
        if (c->p == c->end) return 0;
        if (*c->p == '\n') ll_data_csv_newline(c);
        else if (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n') c->p++;
        else return 1;
    }
}

/* Reads the header record into the list at hdr; returns its length. */
static int ll_data_csv_header(ll_data_csv *c, int hdr) {
    lua_State *L = c->L;
    lua_newtable(L); /* names seen */
    int seen = lua_gettop(L);
    int line = c->line, n = 0, more = 1;
    while (more) {
        more = ll_data_csv_field(c);
        lua_pushvalue(L, -1);
        lua_rawget(L, seen);
        if (!lua_isnil(L, -1)) {
            luaL_error(L, "luaload.data.csv: '%s' line %d: the header names the column '%s' twice", c->path, line,
                       lua_tostring(L, -2));
        }
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
        lua_rawseti(L, hdr, ++n);
    }
    lua_pop(L, 1);
    return n;
}

/* Pushes the record at c->p as a list of strings. ncols: the previous
 * record's length, a size hint. */
static int ll_data_csv_list_row(ll_data_csv *c, int ncols) {
    lua_createtable(c->L, ncols, 0);
    int n = 0, more = 1;
    while (more) {
        more = ll_data_csv_field(c);
        lua_rawseti(c->L, -2, ++n);
    }
    return n;
}

/* Pushes the record at c->p as { [header name] = field }. */
static void ll_data_csv_named_row(ll_data_csv *c, int hdr, int nhdr) {
    lua_State *L = c->L;
    int line = c->line, n = 0, more = 1;
    lua_createtable(L, 0, nhdr);
    while (more) {
        if (++n > nhdr) {
            luaL_error(L, "luaload.data.csv: '%s' line %d: more fields than the header's %d", c->path, line, nhdr);
        }
        lua_rawgeti(L, hdr, n);
        more = ll_data_csv_field(c);
        lua_rawset(L, -3);
    }
    if (n < nhdr) {
        luaL_error(L, "luaload.data.csv: '%s' line %d: %d field%s where the header has %d", c->path, line, n,
                   n == 1 ? "" : "s", nhdr);
    }
}

/* The options table at idx: header (boolean), separator (one character). */
static void ll_data_csv_options(lua_State *L, int idx, int *header, char *sep) {
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
            size_t len = 0;
            const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
            if (!s || len != 1 || *s == '"' || *s == '\r' || *s == '\n') {
                luaL_error(L, "luaload.data.csv: separator must be one character (not a quote or a line break), got %s",
                           s ? s : luaL_typename(L, -1));
            }
            *sep = *s;
        } else {
            lua_pushvalue(L, -2);
            luaL_error(L, "luaload.data.csv: unknown option '%s'", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        }
        lua_pop(L, 1);
    }
}

/* data.csv(path[, { header = false, separator = "," }]) -> rows */
static int ll_data_csv_load(lua_State *L) {
    const char *fn = "luaload.data.csv";
    const char *path = luaL_checkstring(L, 1);
    int header = 0;
    char sep = ',';
    ll_data_csv_options(L, 2, &header, &sep);
    ll_data_check_init(L, fn);
    lua_settop(L, 2);
    luaL_checkstack(L, 40, "luaload.data.csv");
    size_t len;
    const char *s = ll_data_read(L, fn, path, &len);
    ll_data_push_frozen_mt(L);
    int mt = lua_gettop(L);

    ll_data_csv c = {L, path, s, s + len, 1, s, sep};
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
static int ll_data_json_load(lua_State *L) {
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
    static const luaL_Reg fns[] = {{"csv", ll_data_csv_load}, {"json", ll_data_json_load}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
