/* data_csv.c -- the RFC 4180 rows of luaload.data (see data_csv.h):
 * quoted fields, "" for a quote, line breaks inside quotes, CRLF or LF,
 * empty lines skipped; values pushed on c->L, errors raised with the
 * file, line and column. */
#include "data_csv.h"

#include <lauxlib.h>
#include <lua.h>
#include <string.h>

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
        luaL_error(c->L, "%s: '%s' line %d, column %d: the quote that opens this field is never closed",
                   c->fn, c->path, open_line, open_col);
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
    luaL_error(c->L, "%s: '%s' line %d, column %d: expected '%c' or the end of the line after the "
                     "closing quote of a field",
               c->fn, c->path, c->line, ll_data_csv_column(c, c->p), c->sep);
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
int ll_data_csv_skip_empty(ll_data_csv *c) {
    for (;;) {
        if (c->p == c->end) return 0;
        if (*c->p == '\n') ll_data_csv_newline(c);
        else if (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n') c->p++;
        else return 1;
    }
}

/* Reads the header record into the list at hdr; returns its length. */
int ll_data_csv_header(ll_data_csv *c, int hdr) {
    lua_State *L = c->L;
    lua_newtable(L); /* names seen */
    int seen = lua_gettop(L);
    int line = c->line, n = 0, more = 1;
    while (more) {
        more = ll_data_csv_field(c);
        lua_pushvalue(L, -1);
        lua_rawget(L, seen);
        if (!lua_isnil(L, -1)) {
            luaL_error(L, "%s: '%s' line %d: the header names the column '%s' twice", c->fn, c->path, line,
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
int ll_data_csv_list_row(ll_data_csv *c, int ncols) {
    lua_createtable(c->L, ncols, 0);
    int n = 0, more = 1;
    while (more) {
        more = ll_data_csv_field(c);
        lua_rawseti(c->L, -2, ++n);
    }
    return n;
}

/* Pushes the record at c->p as { [header name] = field }. */
void ll_data_csv_named_row(ll_data_csv *c, int hdr, int nhdr) {
    lua_State *L = c->L;
    int line = c->line, n = 0, more = 1;
    lua_createtable(L, 0, nhdr);
    while (more) {
        if (++n > nhdr) {
            luaL_error(L, "%s: '%s' line %d: more fields than the header's %d", c->fn, c->path, line, nhdr);
        }
        lua_rawgeti(L, hdr, n);
        more = ll_data_csv_field(c);
        lua_rawset(L, -3);
    }
    if (n < nhdr) {
        luaL_error(L, "%s: '%s' line %d: %d field%s where the header has %d", c->fn, c->path, line, n,
                   n == 1 ? "" : "s", nhdr);
    }
}

const char *ll_data_csv_record_end(const char *p, const char *end, char sep, int *lines) {
    int n = 0;
    for (;;) { /* p is at a field's start */
        if (p < end && *p == '"') { /* to its closing quote, past "" pairs */
            for (p++;;) {
                const char *q = memchr(p, '"', (size_t)(end - p));
                if (!q || q + 1 == end) return NULL; /* a "" may follow */
                for (const char *nl = p; (nl = memchr(nl, '\n', (size_t)(q - nl))) != NULL; nl++) n++;
                p = q + 1;
                if (*p != '"') break;
                p++;
            }
        }
        while (p < end && *p != sep && *p != '\n') p++; /* what the parser rejects after a quote, too */
        if (p == end) return NULL;
        if (*p++ == sep) continue;
        *lines = n + 1;
        return p;
    }
}

char ll_data_csv_separator(lua_State *L, int idx, const char *fn) {
    size_t len = 0;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!s || len != 1 || *s == '"' || *s == '\r' || *s == '\n') {
        luaL_error(L, "%s: separator must be one character (not a quote or a line break), got %s", fn,
                   s ? s : luaL_typename(L, idx));
    }
    return *s;
}
