/* http_body.c -- request bodies in luaload.http: a string, http.FileStream
 * (a file region streamed from disk with pread), http.Blob (generated
 * bytes of a given size, never materialised), http.Form (multipart, its
 * file parts streamed), k6's http.file (an in-memory file part), and a
 * plain table, sent form-urlencoded as k6 sends an object (multipart when
 * a value is a file). The objects a body reads from are anchored in a
 * table the caller keeps alive as long as the request (a Request's
 * environment, or the call's stack), so their file descriptors and forms
 * outlive every transfer that sends them. */
#include "http_body.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "body_compress.h"
#include "buf.h"
#include "form.h"
#include "http_client.h"
#include "size.h"

#define FILESTREAM_MT "luaload.FileStream"
#define BLOB_MT "luaload.Blob"
#define FORM_MT "luaload.Form"
#define FILEDATA_MT "luaload.FileData"
#define URLENCODED "application/x-www-form-urlencoded"

typedef struct filestream {
    int fd;
    uint64_t offset, length;
    char *path, *filename, *content_type;
} filestream;

typedef struct blob {
    uint64_t size;
} blob;

typedef struct form {
    ll_form f;
} form;

/* ---- helpers ---- */

static const char *opt_string(lua_State *L, int t, const char *key, const char *W) {
    lua_getfield(L, t, key);
    const char *s = NULL;
    if (!lua_isnil(L, -1)) {
        size_t len = 0;
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (!s) luaL_error(L, "%s: %s must be a string, got %s", W, key, luaL_typename(L, -1));
        if (strlen(s) != len || strpbrk(s, "\r\n\"")) luaL_error(L, "%s: %s must not contain CR, LF, NUL or '\"'", W, key);
    }
    lua_pop(L, 1); /* the string stays in the table */
    return s;
}

/* A size option: bytes as a number or a string such as "17MB" (size.h). */
static uint64_t opt_bytes(lua_State *L, int idx, const char *W, const char *key, uint64_t max) {
    int64_t v = -1;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double d = lua_tonumber(L, idx);
        if (d >= 0 && d <= (double)max && d == (double)(int64_t)d) v = (int64_t)d;
    } else if (lua_type(L, idx) != LUA_TSTRING || ll_size_parse(lua_tostring(L, idx), &v) != 0) {
        v = -1;
    }
    if (v < 0 || (uint64_t)v > max)
        luaL_error(L, "%s: %s must be a size such as 1048576 or \"17MB\"", W, key);
    return (uint64_t)v;
}

/* t[#t + 1] = the value at idx (t at anchor; 0: no anchor) */
static void anchor_value(lua_State *L, int anchor, int idx) {
    if (!anchor) return;
    lua_pushvalue(L, idx);
    lua_rawseti(L, anchor, (int)lua_objlen(L, anchor) + 1);
}

/* The userdata at idx when its metatable is mt's, else NULL. */
static void *test_udata(lua_State *L, int idx, const char *mt) {
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx)) return NULL;
    luaL_getmetatable(L, mt);
    int eq = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return eq ? p : NULL;
}

static filestream *to_filestream(lua_State *L, int idx) { return test_udata(L, idx, FILESTREAM_MT); }
static blob *to_blob(lua_State *L, int idx) { return test_udata(L, idx, BLOB_MT); }
static form *to_form(lua_State *L, int idx) { return test_udata(L, idx, FORM_MT); }

static int is_filedata(lua_State *L, int idx) {
    if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return 0;
    luaL_getmetatable(L, FILEDATA_MT);
    int eq = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return eq;
}

/* ---- http.FileStream(path, { offset, length, filename, content_type }) ---- */

static int l_filestream(lua_State *L) {
    const char *W = "http.FileStream";
    const char *path = luaL_checkstring(L, 1);
    if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2)) luaL_error(L, "%s: the options must be a table", W);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return luaL_error(L, "%s: cannot open '%s': %s", W, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        return luaL_error(L, "%s: '%s' is not a regular file%s%s", W, path, e ? ": " : "", e ? strerror(e) : "");
    }
    filestream *s = lua_newuserdata(L, sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    luaL_getmetatable(L, FILESTREAM_MT);
    lua_setmetatable(L, -2); /* from here the collector closes fd */
    uint64_t size = (uint64_t)st.st_size;
    s->length = size;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "offset");
        if (!lua_isnil(L, -1)) s->offset = opt_bytes(L, lua_gettop(L), W, "offset", size);
        lua_getfield(L, 2, "length");
        s->length = size - s->offset;
        if (!lua_isnil(L, -1)) s->length = opt_bytes(L, lua_gettop(L), W, "length", size - s->offset);
        lua_pop(L, 2);
        s->filename = ll_http_client_strdup(L, opt_string(L, 2, "filename", W));
        s->content_type = ll_http_client_strdup(L, opt_string(L, 2, "content_type", W));
    }
    const char *base = strrchr(path, '/');
    s->path = ll_http_client_strdup(L, path);
    if (!s->filename) s->filename = ll_http_client_strdup(L, base ? base + 1 : path);
    return 1;
}

static int l_filestream_gc(lua_State *L) {
    filestream *s = lua_touserdata(L, 1);
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    free(s->path);
    free(s->filename);
    free(s->content_type);
    s->path = s->filename = s->content_type = NULL;
    return 0;
}

static int l_filestream_index(lua_State *L) {
    filestream *s = lua_touserdata(L, 1);
    const char *k = lua_tostring(L, 2);
    if (!k) return 0;
    if (strcmp(k, "size") == 0) lua_pushnumber(L, (double)s->length);
    else if (strcmp(k, "path") == 0) lua_pushstring(L, s->path);
    else if (strcmp(k, "filename") == 0) lua_pushstring(L, s->filename);
    else if (strcmp(k, "content_type") == 0) lua_pushstring(L, s->content_type ? s->content_type : "application/octet-stream");
    else return 0;
    return 1;
}

/* ---- http.Blob{ size = "17MB" } ---- */

/* Blob bytes: byte i is i % 251, so any part of a blob can be made (and
 * checked) from its position alone. */
static ssize_t blob_gen(void *ud, uint64_t pos, char *buf, size_t n) {
    (void)ud;
    unsigned v = (unsigned)(pos % 251);
    for (size_t i = 0; i < n; i++) {
        buf[i] = (char)v;
        v = v == 250 ? 0 : v + 1;
    }
    return (ssize_t)n;
}

static int l_blob(lua_State *L) {
    const char *W = "http.Blob";
    if (!lua_istable(L, 1)) luaL_error(L, "%s: expected a table such as { size = \"17MB\" }", W);
    lua_getfield(L, 1, "size");
    if (lua_isnil(L, -1)) luaL_error(L, "%s: size is missing", W);
    uint64_t size = opt_bytes(L, lua_gettop(L), W, "size", 1ull << 50);
    blob *b = lua_newuserdata(L, sizeof(*b));
    b->size = size;
    luaL_getmetatable(L, BLOB_MT);
    lua_setmetatable(L, -2);
    return 1;
}

static int l_blob_index(lua_State *L) {
    blob *b = lua_touserdata(L, 1);
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "size") == 0) {
        lua_pushnumber(L, (double)b->size);
        return 1;
    }
    return 0;
}

/* ---- http.file(data, filename, content_type), as k6's ---- */

static int l_file(lua_State *L) {
    luaL_checktype(L, 1, LUA_TSTRING);
    const char *filename = luaL_optstring(L, 2, "file");
    const char *type = luaL_optstring(L, 3, "application/octet-stream");
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "data");
    lua_pushstring(L, filename);
    lua_setfield(L, -2, "filename");
    lua_pushstring(L, type);
    lua_setfield(L, -2, "content_type");
    luaL_getmetatable(L, FILEDATA_MT);
    lua_setmetatable(L, -2);
    return 1;
}

/* ---- forms ---- */

static int l_form_gc(lua_State *L) {
    form *f = lua_touserdata(L, 1);
    ll_form_free(&f->f);
    return 0;
}

/* Adds the value at v as a part called name of f; file parts (FileStream,
 * http.file, Blob) keep their filename and type, the FileStream is
 * anchored in the form's table at anchor. */
static void form_add(lua_State *L, form *f, const char *name, int v, int anchor, const char *W) {
    ll_body data;
    memset(&data, 0, sizeof(data));
    data.fd = -1;
    const char *filename = NULL, *type = NULL;
    filestream *s = to_filestream(L, v);
    blob *b = s ? NULL : to_blob(L, v);
    int rc = 0;
    if (s) {
        ll_body_set_file(&data, s->fd, s->offset, s->length);
        filename = s->filename;
        type = s->content_type ? s->content_type : "application/octet-stream";
        anchor_value(L, anchor, v);
    } else if (b) {
        ll_body_set_generator(&data, blob_gen, NULL, b->size);
        filename = "blob";
        type = "application/octet-stream";
    } else if (is_filedata(L, v)) {
        lua_getfield(L, v, "data");
        size_t len = 0;
        const char *p = lua_tolstring(L, -1, &len);
        if (!p) luaL_error(L, "%s: the data of file part '%s' must be a string", W, name);
        rc = ll_body_set_memory(&data, p, len);
        lua_pop(L, 1);
        filename = opt_string(L, v, "filename", W);
        type = opt_string(L, v, "content_type", W);
    } else if (lua_type(L, v) == LUA_TSTRING || lua_type(L, v) == LUA_TNUMBER) {
        size_t len = 0;
        const char *p = lua_tolstring(L, v, &len);
        rc = ll_body_set_memory(&data, p, len);
    } else {
        luaL_error(L, "%s: part '%s' must be a string, a number, an http.FileStream, an http.Blob or http.file(...), got %s",
                   W, name, luaL_typename(L, v));
    }
    if (rc < 0 || ll_form_add(&f->f, name, filename, type, &data) < 0) {
        ll_body_clear(&data);
        luaL_error(L, "out of memory");
    }
    ll_body_clear(&data);
}

static int compare_names(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Adds the parts of the table at t, in the order of their names (Go's
 * url.Values order; a table has none), with form_add. */
static void form_add_table(lua_State *L, form *f, int t, int anchor, const char *W) {
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING) luaL_error(L, "%s: part names must be strings", W);
        n++;
        lua_pop(L, 1);
    }
    const char **names = lua_newuserdata(L, (size_t)(n ? n : 1) * sizeof(char *));
    int i = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        names[i++] = lua_tostring(L, -2); /* the keys stay in t */
        lua_pop(L, 1);
    }
    qsort(names, (size_t)n, sizeof(char *), compare_names);
    for (i = 0; i < n; i++) {
        if (!*names[i] || strpbrk(names[i], "\r\n\"")) luaL_error(L, "%s: part name '%s' must not be empty or contain CR, LF or '\"'", W, names[i]);
        lua_getfield(L, t, names[i]);
        form_add(L, f, names[i], lua_gettop(L), anchor, W);
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* names */
}

/* Pushes a new Form userdata with its anchor table as environment. */
static form *push_form(lua_State *L) {
    form *f = lua_newuserdata(L, sizeof(*f));
    memset(f, 0, sizeof(*f));
    luaL_getmetatable(L, FORM_MT);
    lua_setmetatable(L, -2);
    lua_newtable(L);
    lua_setfenv(L, -2);
    return f;
}

/* http.Form{ fields = { a = "1" }, files = { file = http.FileStream(...) } } */
static int l_form(lua_State *L) {
    const char *W = "http.Form";
    if (!lua_istable(L, 1)) luaL_error(L, "%s: expected a table { fields = {...}, files = {...} }", W);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        if (strcmp(k, "fields") != 0 && strcmp(k, "files") != 0) luaL_error(L, "%s: unknown option '%s' (expected fields, files)", W, k);
        if (!lua_istable(L, -1)) luaL_error(L, "%s: %s must be a table", W, k);
        lua_pop(L, 1);
    }
    form *f = push_form(L);
    int fi = lua_gettop(L);
    lua_getfenv(L, fi);
    int anchor = lua_gettop(L);
    lua_getfield(L, 1, "fields");
    if (lua_istable(L, -1)) form_add_table(L, f, lua_gettop(L), anchor, W);
    lua_getfield(L, 1, "files");
    if (lua_istable(L, -1)) form_add_table(L, f, lua_gettop(L), anchor, W);
    lua_settop(L, fi);
    return 1;
}

/* ---- a table body ---- */

/* 1 when a value of the table at t is a file (multipart needed) */
static int has_file(lua_State *L, int t) {
    int found = 0;
    lua_pushnil(L);
    while (!found && lua_next(L, t)) {
        found = to_filestream(L, -1) || to_blob(L, -1) || is_filedata(L, -1);
        lua_pop(L, 1);
    }
    if (found) lua_pop(L, 1); /* the key lua_next left */
    return found;
}

/* Appends s percent-encoded as Go's url.QueryEscape does (space as '+'). */
static void add_escaped(ll_buf *b, const char *s, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[3] = {'%', hex[c >> 4], hex[c & 15]};
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~')
            ll_buf_append(b, s + i, 1);
        else if (c == ' ')
            ll_buf_append(b, "+", 1);
        else
            ll_buf_append(b, e, 3);
    }
}

/* A form value as text: a string, a number, or true/false (Go's %v, as k6
 * formats an object's values); NULL for anything else. */
static const char *form_value(lua_State *L, int idx, size_t *len) {
    if (lua_type(L, idx) == LUA_TBOOLEAN) {
        const char *s = lua_toboolean(L, idx) ? "true" : "false";
        *len = strlen(s);
        return s;
    }
    return lua_isstring(L, idx) ? lua_tolstring(L, idx, len) : NULL;
}

/* Appends "k=v" for the value at v, once per element of a list (k6 sends
 * an array's values under repeated keys, as Go's url.Values). Returns 0,
 * or -1 when a value is none of those. */
static int add_pair(lua_State *L, ll_buf *b, const char *k, size_t kl, int v) {
    int list = lua_istable(L, v), n = list ? (int)lua_objlen(L, v) : 1;
    for (int i = 1; i <= n; i++) {
        if (list) lua_rawgeti(L, v, i);
        size_t vl = 0;
        const char *s = form_value(L, list ? lua_gettop(L) : v, &vl);
        if (!s) return -1;
        if (b->len) ll_buf_append(b, "&", 1);
        add_escaped(b, k, kl);
        ll_buf_append(b, "=", 1);
        add_escaped(b, s, vl);
        if (list) lua_pop(L, 1);
    }
    return 0;
}

/* Pushes the table at t form-urlencoded: "a=1&b=x+y", keys sorted, a
 * list's values under repeated keys ("t=a&t=b"). */
static void push_urlencoded(lua_State *L, int t, const char *W) {
    lua_newtable(L); /* the sorted keys */
    int keys = lua_gettop(L), n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "%s: a table body maps string names to values, got a %s key", W, luaL_typename(L, -2));
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, keys, ++n);
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_remove(L, -2);
    lua_pushvalue(L, keys);
    lua_call(L, 1, 0);
    ll_buf b = {0};
    const char *bad = NULL;
    for (int i = 1; i <= n && !bad; i++) {
        size_t kl = 0;
        lua_rawgeti(L, keys, i);
        const char *k = lua_tolstring(L, -1, &kl);
        lua_pushvalue(L, -1);
        lua_gettable(L, t);
        if (add_pair(L, &b, k, kl, lua_gettop(L)) < 0) bad = k;
        lua_pop(L, 2); /* the key stays in the keys' table */
    }
    if (bad || b.failed) {
        ll_buf_free(&b);
        if (!bad) luaL_error(L, "out of memory");
        luaL_error(L, "%s: the body's '%s' must be a string, a number, a boolean or a list of them (or files, for multipart)",
                   W, bad);
    }
    lua_pushlstring(L, b.p ? b.p : "", b.len);
    ll_buf_free(&b);
    lua_remove(L, keys);
}

void ll_http_body_set(lua_State *L, ll_http_req *r, int idx, int anchor, const char *W) {
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    size_t len = 0;
    filestream *s;
    blob *b;
    form *f;
    r->body_type = NULL;
    if (lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER) {
        const char *p = lua_tolstring(L, idx, &len);
        if (ll_body_set_memory(&r->body, p, len) < 0) luaL_error(L, "out of memory");
    } else if ((s = to_filestream(L, idx))) {
        ll_body_set_file(&r->body, s->fd, s->offset, s->length);
        anchor_value(L, anchor, idx);
    } else if ((b = to_blob(L, idx))) {
        ll_body_set_generator(&r->body, blob_gen, NULL, b->size);
    } else if ((f = to_form(L, idx))) {
        ll_body_set_form(&r->body, &f->f);
        anchor_value(L, anchor, idx);
    } else if (is_filedata(L, idx)) {
        lua_getfield(L, idx, "data");
        const char *p = lua_tolstring(L, -1, &len);
        if (!p || ll_body_set_memory(&r->body, p, len) < 0) luaL_error(L, "%s: the file's data must be a string", W);
        lua_pop(L, 1);
    } else if (lua_istable(L, idx) && has_file(L, idx)) { /* k6: an object with files is multipart */
        form *nf = push_form(L);
        int fi = lua_gettop(L);
        lua_getfenv(L, fi);
        form_add_table(L, nf, idx, lua_gettop(L), W);
        lua_pop(L, 1);
        ll_body_set_form(&r->body, &nf->f);
        anchor_value(L, anchor, fi);
        lua_pop(L, 1);
    } else if (lua_istable(L, idx)) { /* k6: an object is sent form-urlencoded */
        push_urlencoded(L, idx, W);
        const char *p = lua_tolstring(L, -1, &len);
        if (ll_body_set_memory(&r->body, p, len) < 0) luaL_error(L, "out of memory");
        lua_pop(L, 1);
        r->body_type = URLENCODED;
    } else {
        luaL_error(L, "%s: body must be a string, a table, an http.FileStream, an http.Form or an http.Blob, got %s", W,
                   luaL_typename(L, idx));
    }
}

void ll_http_body_finish(lua_State *L, ll_http_req *r, const char *W) {
    int has_type = 0;
    for (int i = 0; i < r->nheaders; i++) has_type |= strcasecmp(r->headers[i].name, "Content-Type") == 0;
    if (r->body_type && !has_type && ll_http_req_add_header(r, "Content-Type", r->body_type) < 0)
        luaL_error(L, "out of memory");
    if (r->compression == LL_COMPRESS_NONE) return;
    char err[200];
    if (r->body.kind == LL_BODY_NONE) luaL_error(L, "%s: compression needs a body", W);
    if (ll_body_compress(&r->body, r->compression, err, sizeof(err)) < 0) luaL_error(L, "%s: %s", W, err);
    if (ll_http_req_add_header(r, "Content-Encoding", ll_compress_name(r->compression)) < 0) luaL_error(L, "out of memory");
    r->compression = LL_COMPRESS_NONE; /* done: a copy of this request is not compressed twice */
}

int ll_http_body_compression(lua_State *L, int idx, const char *W) {
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    int algo = s ? ll_compress_parse(s) : -1;
    if (algo < 0) luaL_error(L, "%s: compression must be \"gzip\", \"deflate\", \"br\" or \"zstd\"", W);
    return algo;
}

static void metatable(lua_State *L, const char *name, lua_CFunction index, lua_CFunction gc) {
    luaL_newmetatable(L, name);
    if (index) {
        lua_pushcfunction(L, index);
        lua_setfield(L, -2, "__index");
    }
    if (gc) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
}

void ll_http_body_register(lua_State *L, int module) {
    metatable(L, FILESTREAM_MT, l_filestream_index, l_filestream_gc);
    metatable(L, BLOB_MT, l_blob_index, NULL);
    metatable(L, FORM_MT, NULL, l_form_gc);
    metatable(L, FILEDATA_MT, NULL, NULL);
    static const luaL_Reg fns[] = {
        {"FileStream", l_filestream}, {"Blob", l_blob}, {"Form", l_form}, {"file", l_file}, {NULL, NULL},
    };
    for (int i = 0; fns[i].name; i++) {
        lua_pushcfunction(L, fns[i].func);
        lua_setfield(L, module, fns[i].name);
    }
}
