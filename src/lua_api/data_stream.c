/* data_stream.c -- data.stream(path, options): a reader of a CSV or JSON
 * lines file too large to load, one row per reader:next(). The reader of
 * every worker's state holds the process's one source for the file and
 * options (data_source.c), so all VUs of all workers share one cursor;
 * this file turns the options into a source, parses the raw record a
 * next() gets into Lua values outside the source's lock (data_csv.c's
 * parser, cJSON and json.c's conversions) and does what on_end says when
 * unique rows run out. */
#include <cJSON.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "data_csv.h"
#include "data_source.h"
#include "json.h"
#include "modules.h"
#include "script_host.h"
#include "state.h"

#define LL_DATA_STREAM_MT "luaload.data.stream"

static const char FN[] = "luaload.data.stream";

enum { ON_END_STOP, ON_END_RAISE, ON_END_NIL };

typedef struct ll_data_stream {
    ll_data_source *src;
    ll_data_row row;   /* this state's copy of the last row */
    char *name;        /* the path as the script gave it, for messages */
    ll_data_format format;
    ll_data_mode mode;
    char sep;
    int hdr_ref;       /* the header's names (a list), LUA_NOREF: none */
    int nhdr;
    int on_end;
} ll_data_stream;

/* The index of the string at the top in names (NULL-ended), or raises
 * naming the option and the choices. */
static int ll_data_stream_choice(lua_State *L, const char *opt, const char *const *names) {
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    char list[128] = "";
    for (int i = 0; names[i]; i++) {
        if (s && strcmp(s, names[i]) == 0) return i;
        size_t n = strlen(list);
        snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i == 0 ? "" : names[i + 1] ? ", " : " or ", names[i]);
    }
    return luaL_error(L, "%s: %s must be %s, got %s", FN, opt, list, s ? s : luaL_typename(L, -1));
}

/* The format a file's name tells (.csv, .jsonl, .ndjson, each maybe .gz
 * or .zst), or -1. */
static int ll_data_stream_format_of(const char *path) {
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0) n -= 3;
    else if (n > 4 && strcmp(path + n - 4, ".zst") == 0) n -= 4;
    if (n > 4 && strncmp(path + n - 4, ".csv", 4) == 0) return LL_DATA_CSV;
    if (n > 6 && strncmp(path + n - 6, ".jsonl", 6) == 0) return LL_DATA_JSONL;
    if (n > 7 && strncmp(path + n - 7, ".ndjson", 7) == 0) return LL_DATA_JSONL;
    return -1;
}

/* The options table at idx into o (its path left to the caller). */
static void ll_data_stream_options(lua_State *L, int idx, const char *path, ll_data_source_opts *o, int *on_end) {
    static const char *const formats[] = {"csv", "jsonl", NULL};
    static const char *const modes[] = {"unique", "circular", "random", NULL};
    static const char *const ends[] = {"stop", "raise", "nil", NULL};
    int format = ll_data_stream_format_of(path), have_csv_opt = 0;
    if (!lua_isnoneornil(L, idx)) {
        if (!lua_istable(L, idx)) luaL_error(L, "%s: options must be a table, got %s", FN, luaL_typename(L, idx));
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
            if (strcmp(k, "format") == 0) {
                format = ll_data_stream_choice(L, k, formats);
            } else if (strcmp(k, "mode") == 0) {
                o->mode = (ll_data_mode)ll_data_stream_choice(L, k, modes);
            } else if (strcmp(k, "on_end") == 0) {
                *on_end = ll_data_stream_choice(L, k, ends);
            } else if (strcmp(k, "header") == 0) {
                if (!lua_isboolean(L, -1)) luaL_error(L, "%s: header must be a boolean, got %s", FN, luaL_typename(L, -1));
                o->header = lua_toboolean(L, -1);
                have_csv_opt = 1;
            } else if (strcmp(k, "separator") == 0) {
                o->sep = ll_data_csv_separator(L, -1, FN);
                have_csv_opt = 1;
            } else if (strcmp(k, "window") == 0) {
                lua_Number w = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
                if (w < 1 || w > 1000000 || w != (lua_Number)(int)w)
                    luaL_error(L, "%s: window must be a whole number of rows from 1 to 1000000, got %s", FN,
                               lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
                o->window = (int)w;
            } else {
                luaL_error(L, "%s: unknown option '%s' (format, header, separator, mode, on_end, window)", FN, k);
            }
            lua_pop(L, 1);
        }
    }
    if (format < 0)
        luaL_error(L, "%s: '%s': cannot tell the format from the name (.csv, .jsonl, .ndjson, maybe .gz or .zst): "
                      "give format = \"csv\" or \"jsonl\"", FN, path);
    o->format = (ll_data_format)format;
    if (o->format == LL_DATA_JSONL && have_csv_opt)
        luaL_error(L, "%s: '%s': header and separator are for CSV, not JSON lines", FN, path);
}

static ll_data_stream *ll_data_stream_check(lua_State *L) {
    return luaL_checkudata(L, 1, LL_DATA_STREAM_MT);
}

/* What next() does when unique rows ran out (why: the source's word for
 * the other modes, which have none at all). */
static int ll_data_stream_used_up(lua_State *L, ll_data_stream *r, const char *why) {
    if (r->mode != LL_DATA_UNIQUE) return luaL_error(L, "%s: '%s': no rows to draw: %s", FN, r->name, why);
    if (r->on_end == ON_END_NIL) return 0;
    ll_worker *w = ll_state_worker(L);
    ll_vu *vu = w ? ll_worker_current(w) : NULL;
    if (r->on_end == ON_END_STOP && vu && ll_vu_scenario(vu)) {
        if (ll_worker_end_scenarios(w)) {
            lua_pushfstring(L, "luaload: %s: '%s': no rows left (unique): the scenarios end (on_end = \"stop\")\n",
                            FN, r->name);
            ll_state_write_line(L, stderr);
        }
        ll_vu_unwind(vu);
        return luaL_error(L, "%s: '%s': no rows left (unique): the scenarios end", FN, r->name);
    }
    return luaL_error(L, "%s: '%s': no rows left (unique)", FN, r->name);
}

/* Pushes the JSON line in r->row. */
static void ll_data_stream_push_json(lua_State *L, ll_data_stream *r) {
    const char *s = r->row.buf, *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, r->row.len, &end, 0);
    size_t at = end && end >= s ? (size_t)(end - s) : 0;
    while (j && at < r->row.len && memchr(" \t\r\n", s[at], 4)) at++;
    if (!j || at < r->row.len) {
        cJSON_Delete(j);
        luaL_error(L, "%s: '%s' line %d, column %d: %s", FN, r->name, r->row.line, (int)at + 1,
                   j ? "text after the JSON value (one value per line)" : "invalid JSON");
    }
    ll_json_push_cjson(L, j);
    cJSON_Delete(j);
}

/* reader:next() -> the next row: a table keyed by the header's names, a
 * list of strings (CSV without header), the decoded value (JSON lines);
 * when unique rows run out, on_end's */
static int ll_data_stream_next(lua_State *L) {
    ll_data_stream *r = ll_data_stream_check(L);
    ll_worker *w = ll_state_worker(L);
    if (w && !ll_worker_current(w))
        return luaL_error(L, "%s: reader:next() is for setup, default and teardown, not init code (which runs "
                             "in every worker: each would take rows)", FN);
    if (!r->src) return luaL_error(L, "%s: the reader is closed", FN);
    char err[512] = "";
    int rc = ll_data_source_next(r->src, w ? ll_worker_segment(w) : NULL, &r->row, err, sizeof(err));
    if (rc < 0) return luaL_error(L, "%s: %s", FN, err);
    if (rc == 0) return ll_data_stream_used_up(L, r, err);
    if (r->format == LL_DATA_JSONL) {
        ll_data_stream_push_json(L, r);
        return 1;
    }
    ll_data_csv c = {L, FN, r->name, r->row.buf, r->row.buf + r->row.len, r->row.line, r->row.buf, r->sep};
    if (r->hdr_ref == LUA_NOREF) {
        ll_data_csv_list_row(&c, 8);
        return 1;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->hdr_ref);
    ll_data_csv_named_row(&c, lua_gettop(L), r->nhdr);
    return 1;
}

/* reader:close(): lets go of the file (the last reader of it closes it) */
static int ll_data_stream_close(lua_State *L) {
    ll_data_stream *r = ll_data_stream_check(L);
    ll_data_source_put(r->src);
    r->src = NULL;
    free(r->row.buf);
    r->row.buf = NULL;
    r->row.cap = 0;
    return 0;
}

static int ll_data_stream_gc(lua_State *L) {
    ll_data_stream *r = ll_data_stream_check(L);
    ll_data_stream_close(L);
    free(r->name);
    r->name = NULL;
    return 0;
}

/* The header's names, parsed in this state from the source's record. */
static void ll_data_stream_header(lua_State *L, ll_data_stream *r) {
    size_t len;
    int line;
    const char *h = ll_data_source_header(r->src, &len, &line);
    if (!h) return; /* an empty file: no header, no rows */
    lua_newtable(L);
    ll_data_csv c = {L, FN, r->name, h, h + len, line, h, r->sep};
    r->nhdr = ll_data_csv_header(&c, lua_gettop(L));
    r->hdr_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

int ll_data_stream_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    ll_data_source_opts o = {.sep = ',', .mode = LL_DATA_UNIQUE, .window = 4096};
    int on_end = ON_END_STOP;
    ll_data_stream_options(L, 2, path, &o, &on_end);
    ll_data_check_init(L, FN);
    lua_settop(L, 2);
    ll_worker *w = ll_state_worker(L);
    o.seed = ll_worker_seed(w);
    static const luaL_Reg methods[] = {{"next", ll_data_stream_next}, {"close", ll_data_stream_close}, {NULL, NULL}};
    ll_lua_class(L, LL_DATA_STREAM_MT, methods, ll_data_stream_gc, 1);
    ll_data_stream *r = lua_newuserdata(L, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->hdr_ref = LUA_NOREF;
    luaL_getmetatable(L, LL_DATA_STREAM_MT);
    lua_setmetatable(L, -2);
    r->name = strdup(path);
    if (!r->name) return luaL_error(L, "%s: out of memory", FN);
    r->format = o.format;
    r->mode = o.mode;
    r->sep = o.sep;
    r->on_end = on_end;
    ll_data_push_path(L, path);
    o.path = lua_tostring(L, -1);
    char err[512];
    r->src = ll_data_source_get(&o, err, sizeof(err));
    if (!r->src) return luaL_error(L, "%s: %s", FN, err);
    lua_pop(L, 1);
    if (o.format == LL_DATA_CSV && o.header) ll_data_stream_header(L, r);
    return 1;
}
