/* http_response.c -- the Response table: the documented fields set at
 * once (status, proto, body, error, error_code, url); headers (Go's
 * canonical names, repeated ones joined), timings (k6's names, in ms) and
 * res:json() built on first access from a copy kept aside in a weak table,
 * so a script that never reads them does not pay for them; res:html()
 * parses the body into a luaload.html document (html.c). */
#include "http_response.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "http_cookies.h"
#include "json.h"
#include "state.h"
#include "tls_ocsp.h"

#define RESPONSE_MT "luaload.Response"

/* What a Response computes on first use: its timings, OCSP and headers. */
typedef struct resp_extra {
    ll_timings t;
    ll_ocsp ocsp;
    int zero_rtt;
    size_t headers_len;
    char headers[];
} resp_extra;

static void set_ms(lua_State *L, const char *k, int64_t us) {
    lua_pushnumber(L, (double)us / 1000.0);
    lua_setfield(L, -2, k);
}

/* k6's res.ocsp: times in unix milliseconds (0: none), the status and
 * revocation reason by k6's names ("" without TLS) */
static void push_ocsp(lua_State *L, const ll_ocsp *o) {
    int none = o->status == LL_OCSP_NONE;
    lua_createtable(L, 0, 6);
    lua_pushnumber(L, none ? 0 : (double)o->produced_at);
    lua_setfield(L, -2, "produced_at");
    lua_pushnumber(L, none ? 0 : (double)o->this_update);
    lua_setfield(L, -2, "this_update");
    lua_pushnumber(L, none ? 0 : (double)o->next_update);
    lua_setfield(L, -2, "next_update");
    lua_pushnumber(L, none ? 0 : (double)o->revoked_at);
    lua_setfield(L, -2, "revoked_at");
    lua_pushstring(L, none ? "" : ll_tls_ocsp_reason_name(o->reason));
    lua_setfield(L, -2, "revocation_reason");
    lua_pushstring(L, ll_tls_ocsp_status_name(o->status));
    lua_setfield(L, -2, "status");
}

static void push_timings(lua_State *L, const ll_timings *t) {
    lua_createtable(L, 0, 7);
    set_ms(L, "blocked", t->blocked);
    set_ms(L, "connecting", t->connecting);
    set_ms(L, "tls_handshaking", t->tls_handshaking);
    set_ms(L, "sending", t->sending);
    set_ms(L, "waiting", t->waiting);
    set_ms(L, "receiving", t->receiving);
    set_ms(L, "duration", t->duration);
}

/* Registry keys (their addresses): the thread the constructor below runs
 * on, and the weak table of what each Response computes on first use. */
static char MAKER_KEY, EXTRA_KEY;

/* The Response table is made in Lua: a table constructor with constant
 * keys is one template copy in LuaJIT, where setting the fields from C
 * interned each key again (lua_setfield), a third of a scripted request's
 * instructions (callgrind). It runs on a thread of its own, which is never
 * suspended: the VU's coroutine is, when its response comes, and a
 * suspended coroutine cannot call a function. Its upvalues: the
 * metatable, the standard setmetatable (taken before any script ran: a
 * script may replace the global one) and the weak table of extras. */
static const char CTOR[] =
    "local mt, setmetatable, extras = ...\n"
    "return function(status, proto, body, err, code, tv, tc, url, x, stopped)\n"
    "  local r = setmetatable({ status = status, proto = proto, body = body, error = err, error_code = code,\n"
    "    tls_version = tv, tls_cipher_suite = tc, url = url, stopped = stopped }, mt)\n"
    "  extras[r] = x\n"
    "  return r\n"
    "end\n";

/* The strings most responses repeat (proto, the TLS version and cipher,
 * the URL) are pushed from the last one of each, kept on the maker's
 * stack, when the text is the same: no interning (a hash and a lookup)
 * per response. The maker's stack: the constructor, this, then the
 * strings. */
enum { CACHED_PROTO, CACHED_TLS_VERSION, CACHED_TLS_CIPHER, CACHED_URL, NCACHED, CACHED_MAX = 160 };
#define MAKER_CACHE 2
#define MAKER_STRINGS 3

typedef struct resp_cache {
    size_t len[NCACHED]; /* SIZE_MAX: none yet */
    char text[NCACHED][CACHED_MAX];
} resp_cache;

static void push_cached(lua_State *T, resp_cache *c, int i, const char *s) {
    size_t n = strlen(s);
    if (n == c->len[i] && memcmp(c->text[i], s, n) == 0) {
        lua_pushvalue(T, MAKER_STRINGS + i);
        return;
    }
    lua_pushlstring(T, s, n);
    if (n >= CACHED_MAX) return;
    memcpy(c->text[i], s, n);
    c->len[i] = n;
    lua_pushvalue(T, -1);
    lua_replace(T, MAKER_STRINGS + i);
}

/* The thread the constructor runs on (its stack holds it), from the
 * registry once per state, then from the state's cache. */
static lua_State *maker(lua_State *L) {
    ll_lua_cache *c = ll_state_cache(L);
    if (c && c->response_maker) return c->response_maker;
    lua_pushlightuserdata(L, &MAKER_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_State *T = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (c) c->response_maker = T;
    return T;
}

/* Pushes the Response table on L: status, proto, body, error, error_code,
 * url. timings and headers are built on first access from a copy kept
 * aside in a weak table, so the response holds only documented fields and
 * a script that never reads them does not pay for them. */
void ll_http_response_push(lua_State *L, const ll_http_res *r, ll_response_type type) {
    lua_State *T = maker(L);
    resp_cache *c = lua_touserdata(T, MAKER_CACHE);
    lua_pushvalue(T, 1);
    lua_pushinteger(T, r->status);
    push_cached(T, c, CACHED_PROTO, r->proto);
    if (type != LL_RESPONSE_NONE) lua_pushlstring(T, r->body, r->body_len);
    else lua_pushnil(T);
    lua_pushstring(T, r->error);
    lua_pushinteger(T, r->error_code);
    push_cached(T, c, CACHED_TLS_VERSION, r->tls_version ? r->tls_version : "");
    push_cached(T, c, CACHED_TLS_CIPHER, r->tls_cipher_suite ? r->tls_cipher_suite : "");
    if (r->effective_url) push_cached(T, c, CACHED_URL, r->effective_url);
    else lua_pushnil(T);
    resp_extra *x = lua_newuserdata(T, sizeof(*x) + r->headers_len);
    x->t = r->t;
    if (r->ocsp) {
        x->ocsp = *r->ocsp;
    } else { /* libcurl does not tell */
        memset(&x->ocsp, 0, sizeof(x->ocsp));
        x->ocsp.reason = -1;
        x->ocsp.status = r->tls_version && *r->tls_version ? LL_OCSP_UNKNOWN : LL_OCSP_NONE;
    }
    x->zero_rtt = r->zero_rtt;
    x->headers_len = r->headers_len;
    memcpy(x->headers, r->headers, r->headers_len);
    lua_pushboolean(T, r->stopped);
    if (lua_pcall(T, 10, 1, 0) != 0) { /* out of memory: a bare table that says so */
        lua_settop(T, MAKER_STRINGS + NCACHED - 1);
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, 0);
        lua_setfield(L, -2, "status");
        lua_pushliteral(L, "out of memory making the response");
        lua_setfield(L, -2, "error");
        lua_pushinteger(L, 1000);
        lua_setfield(L, -2, "error_code");
        return;
    }
    lua_xmove(T, L, 1);
}

/* Pushes name in Go's canonical form, as k6 shows it: "content-type" ->
 * "Content-Type". */
static void push_canonical(lua_State *L, const char *name, size_t len) {
    char buf[256];
    if (len >= sizeof(buf)) {
        lua_pushlstring(L, name, len);
        return;
    }
    int upper = 1;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 32);
        else if (!upper && c >= 'A' && c <= 'Z') c = (char)(c + 32);
        buf[i] = c;
        upper = c == '-';
    }
    lua_pushlstring(L, buf, len);
}

void ll_http_response_push_headers(lua_State *L, const char *p, size_t len) {
    const char *end = p + len;
    lua_newtable(L);
    const char *nl = memchr(p, '\n', len); /* skip the status line */
    p = nl ? nl + 1 : end;
    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon && colon > p) {
            const char *v = colon + 1, *ve = le;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ')) ve--;
            push_canonical(L, p, (size_t)(colon - p));
            lua_pushvalue(L, -1);
            lua_rawget(L, -3);
            if (lua_isstring(L, -1)) { /* repeated header: join like Go's */
                lua_pushliteral(L, ", ");
                lua_pushlstring(L, v, (size_t)(ve - v));
                lua_concat(L, 3);
            } else {
                lua_pop(L, 1);
                lua_pushlstring(L, v, (size_t)(ve - v));
            }
            lua_rawset(L, -3);
        }
        p = nl ? nl + 1 : end;
    }
}

/* Replaces the value at the top with what path selects in it, as k6's
 * res.json(selector) (gjson's basic paths): "a.b" (keys), "items.0.id"
 * (0-based array indexes), "items.#" (the length), "items.#.id" (that
 * path in each element, as a list). nil when it is not there. */
static void json_select(lua_State *L, const char *path) {
    while (*path) {
        size_t n = strcspn(path, ".");
        const char *next = path[n] == '.' ? path + n + 1 : path + n;
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
            return;
        }
        if (n == 1 && path[0] == '#') {
            int len = (int)lua_objlen(L, -1);
            if (!*next) {
                lua_pop(L, 1);
                lua_pushinteger(L, len);
                return;
            }
            lua_createtable(L, len, 0);
            int k = 0;
            for (int i = 1; i <= len; i++) {
                lua_rawgeti(L, -2, i);
                json_select(L, next);
                if (lua_isnil(L, -1)) lua_pop(L, 1);
                else lua_rawseti(L, -2, ++k);
            }
            lua_remove(L, -2);
            return;
        }
        int digits = n > 0 && strspn(path, "0123456789") >= n;
        lua_pushnil(L);
        if (digits) { /* an array index, 0-based; else a key made of digits */
            lua_pop(L, 1);
            lua_rawgeti(L, -1, atoi(path) + 1);
        }
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_pushlstring(L, path, n);
            lua_rawget(L, -2);
        }
        lua_remove(L, -2);
        path = next;
    }
}

static int l_response_json(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *selector = luaL_optstring(L, 2, NULL);
    lua_getfield(L, 1, "body");
    size_t len;
    const char *body = lua_tolstring(L, -1, &len);
    if (!body) return luaL_error(L, "res:json(): the response has no body (response_type \"none\"?)");
    char err[128];
    if (ll_json_push(L, body, len, err, sizeof(err)) != 0) return luaL_error(L, "res:json(): %s", err);
    if (selector && *selector) json_select(L, selector);
    return 1;
}

/* res:html([selector]): the body as a luaload.html document, as k6's
 * res.html(); with a selector, res:html():find(selector). */
static int l_response_html(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    lua_getfield(L, 1, "body");
    size_t len;
    const char *body = lua_tolstring(L, -1, &len);
    if (!body) return luaL_error(L, "res:html(): the response has no body (response_type \"none\"?)");
    ll_html_push_parsed(L, body, len);
    if (!lua_isnil(L, 2)) ll_html_push_find(L, 4, 2);
    return 1;
}

/* Reason phrases for status_text when the status line has none (HTTP/2,
 * HTTP/3), as Go's http.StatusText, which k6 shows. */
static const char *reason(int status) {
    static const struct { int code; const char *text; } R[] = {
        {100, "Continue"}, {101, "Switching Protocols"}, {103, "Early Hints"}, {200, "OK"}, {201, "Created"},
        {202, "Accepted"}, {203, "Non-Authoritative Information"}, {204, "No Content"}, {205, "Reset Content"},
        {206, "Partial Content"}, {300, "Multiple Choices"}, {301, "Moved Permanently"}, {302, "Found"},
        {303, "See Other"}, {304, "Not Modified"}, {307, "Temporary Redirect"}, {308, "Permanent Redirect"},
        {400, "Bad Request"}, {401, "Unauthorized"}, {403, "Forbidden"}, {404, "Not Found"},
        {405, "Method Not Allowed"}, {406, "Not Acceptable"}, {408, "Request Timeout"}, {409, "Conflict"},
        {410, "Gone"}, {411, "Length Required"}, {412, "Precondition Failed"}, {413, "Request Entity Too Large"},
        {414, "Request URI Too Long"}, {415, "Unsupported Media Type"}, {416, "Requested Range Not Satisfiable"},
        {417, "Expectation Failed"}, {418, "I'm a teapot"}, {422, "Unprocessable Entity"}, {425, "Too Early"},
        {426, "Upgrade Required"}, {428, "Precondition Required"}, {429, "Too Many Requests"},
        {431, "Request Header Fields Too Large"}, {500, "Internal Server Error"}, {501, "Not Implemented"},
        {502, "Bad Gateway"}, {503, "Service Unavailable"}, {504, "Gateway Timeout"},
        {505, "HTTP Version Not Supported"},
    };
    for (size_t i = 0; i < sizeof(R) / sizeof(R[0]); i++)
        if (R[i].code == status) return R[i].text;
    return "";
}

/* status_text: "200 OK", from the final status line, else the standard
 * phrase; "" when there was no response */
static void push_status_text(lua_State *L, const char *h, size_t n) {
    const char *eol = memchr(h, '\n', n), *sp = memchr(h, ' ', n);
    lua_getfield(L, 1, "status");
    int status = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (status == 0) {
        lua_pushliteral(L, "");
        return;
    }
    const char *code = sp ? sp + 1 : NULL, *end = eol ? eol : h + n;
    if (end > h && end[-1] == '\r') end--;
    const char *sp2 = code && code < end ? memchr(code, ' ', (size_t)(end - code)) : NULL;
    if (sp2 && sp2 + 1 < end) lua_pushlstring(L, code, (size_t)(end - code));
    else lua_pushfstring(L, "%d %s", status, reason(status));
}

static int l_response_index(lua_State *L) {
    const char *k = lua_tostring(L, 2);
    int headers = k && strcmp(k, "headers") == 0, timings = k && strcmp(k, "timings") == 0;
    int cookies = k && strcmp(k, "cookies") == 0, status_text = k && strcmp(k, "status_text") == 0;
    int ocsp = k && strcmp(k, "ocsp") == 0, zero_rtt = k && strcmp(k, "zero_rtt") == 0;
    if (k && strcmp(k, "json") == 0) {
        lua_pushcfunction(L, l_response_json);
        return 1;
    }
    if (k && strcmp(k, "html") == 0) {
        lua_pushcfunction(L, l_response_html);
        return 1;
    }
    if (k && !headers && !timings && !cookies && !status_text && !ocsp && !zero_rtt) { /* submit_form, click_link (http_forms.lua) */
        lua_getfield(L, LUA_REGISTRYINDEX, "luaload.response_methods");
        if (!lua_istable(L, -1)) return 0;
        lua_getfield(L, -1, k);
        return 1;
    }
    if (!k) return 0;
    lua_pushlightuserdata(L, &EXTRA_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
    const resp_extra *x = lua_touserdata(L, -1);
    if (!x) return 0;
    if (status_text) {
        push_status_text(L, x->headers, x->headers_len);
    } else if (headers) {
        ll_http_response_push_headers(L, x->headers, x->headers_len);
    } else if (cookies) {
        lua_getfield(L, 1, "url");
        ll_http_cookies_push_response(L, x->headers, x->headers_len, lua_tostring(L, -1));
    } else if (ocsp) {
        push_ocsp(L, &x->ocsp);
    } else if (zero_rtt) {
        lua_pushboolean(L, x->zero_rtt);
    } else {
        push_timings(L, &x->t);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, k); /* computed once */
    return 1;
}

void ll_http_response_register(lua_State *L) {
    lua_pushlightuserdata(L, &EXTRA_KEY);
    lua_newtable(L); /* response -> resp_extra, weak keys */
    luaL_newmetatable(L, "luaload.weak_keys");
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_pushlightuserdata(L, &MAKER_KEY);
    lua_State *T = lua_newthread(L);
    if (luaL_loadbuffer(L, CTOR, sizeof(CTOR) - 1, "=luaload.Response") != 0) lua_error(L);
    luaL_newmetatable(L, RESPONSE_MT);
    lua_pushcfunction(L, l_response_index);
    lua_setfield(L, -2, "__index");
    lua_getglobal(L, "setmetatable");
    lua_pushlightuserdata(L, &EXTRA_KEY);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_call(L, 3, 1);
    lua_xmove(L, T, 1); /* T's stack: the constructor, at 1 */
    resp_cache *c = lua_newuserdata(T, sizeof(*c)); /* at MAKER_CACHE */
    for (int i = 0; i < NCACHED; i++) {
        c->len[i] = (size_t)-1;
        lua_pushnil(T); /* at MAKER_STRINGS + i */
    }
    lua_rawset(L, LUA_REGISTRYINDEX);
}
