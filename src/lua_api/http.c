/* http.c -- luaload.http: Client, Request, the one-off http.get/post/...,
 * checkstatus, and the Response table. A request made by a VU yields its
 * coroutine; the transport's completion records the HTTP metrics and
 * resumes the VU with the response. */
#include <curl/curl.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "json.h"
#include "modules.h"
#include "state.h"
#include "transport.h"
#include "worker.h"

#define CLIENT_MT "luaload.Client"
#define REQUEST_MT "luaload.Request"
#define RESPONSE_MT "luaload.Response"

/* Userdata carry a tag so the hot path can tell a Client from a Request
 * without looking their metatables up by name (Lua code cannot forge one). */
#define CLIENT_TAG 0x4c4c434cu  /* "LLCL" */
#define REQUEST_TAG 0x4c4c5251u /* "LLRQ" */

typedef struct client {
    uint32_t tag;
    int slot;      /* index of the VUs' connection for this client */
    uint64_t uid;  /* unique in the worker */
    ll_client_opts opts;
} client;

typedef struct request {
    uint32_t tag;
    ll_http_req req;
} request;

static void *tagged(lua_State *L, int idx, uint32_t tag, size_t size) {
    void *p = lua_touserdata(L, idx);
    if (!p || lua_type(L, idx) != LUA_TUSERDATA || lua_objlen(L, idx) != size) return NULL;
    return *(uint32_t *)p == tag ? p : NULL;
}

static request *to_request(lua_State *L, int idx) { return tagged(L, idx, REQUEST_TAG, sizeof(request)); }

static const char *const METHODS[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", NULL};

/* ---- option parsing helpers ---- */

/* A duration from a string ("1.5s") or a number of milliseconds (k6). */
static long opt_ms(lua_State *L, int idx, const char *where, const char *key) {
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double ms = lua_tonumber(L, idx);
        if (ms < 0) luaL_error(L, "%s: %s must not be negative", where, key);
        return (long)ms;
    }
    uint64_t us = 0;
    const char *s = lua_tostring(L, idx);
    if (!s || ll_duration_parse(s, &us) != 0)
        luaL_error(L, "%s: %s must be a duration such as \"10s\" or a number of milliseconds", where, key);
    return (long)(us / 1000);
}

static char *opt_str(lua_State *L, int idx, const char *where, const char *key) {
    if (lua_type(L, idx) != LUA_TSTRING) luaL_error(L, "%s: %s must be a string", where, key);
    char *s = strdup(lua_tostring(L, idx));
    if (!s) luaL_error(L, "out of memory");
    return s;
}

static void upcase(char *s) {
    for (; *s; s++)
        if (*s >= 'a' && *s <= 'z') *s = (char)(*s - 32);
}

/* ---- Client ---- */

static void client_opts_default(ll_client_opts *o) {
    memset(o, 0, sizeof(*o));
    o->timeout_ms = 60000; /* k6's default request timeout */
    o->max_redirects = -1;
}

static void client_opts_free(ll_client_opts *o) {
    free(o->ca);
    free(o->certificate);
    free(o->private_key);
    free(o->proxy);
    free(o->user_agent);
    memset(o, 0, sizeof(*o));
}

static void parse_tls(lua_State *L, int idx, ll_client_opts *o) {
    const char *W = "http.Client tls";
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        int v = lua_gettop(L);
        if (strcmp(k, "insecure_skip_verify") == 0) o->insecure_skip_verify = lua_toboolean(L, v);
        else if (strcmp(k, "ca") == 0) o->ca = opt_str(L, v, W, k);
        else if (strcmp(k, "certificate") == 0) o->certificate = opt_str(L, v, W, k);
        else if (strcmp(k, "private_key") == 0) o->private_key = opt_str(L, v, W, k);
        else luaL_error(L, "%s: unknown option '%s' (expected insecure_skip_verify, ca, certificate, private_key)", W, k);
        lua_pop(L, 1);
    }
}

/* Raises unless every key of the table at idx is one of keys. */
static void check_keys(lua_State *L, int idx, const char *const *keys, const char *where) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        int known = 0;
        for (int i = 0; k && keys[i] && !known; i++) known = strcmp(k, keys[i]) == 0;
        if (!known) luaL_error(L, "%s: unknown option '%s'", where, k ? k : luaL_typename(L, -2));
        lua_pop(L, 1);
    }
}

/* Pushes t[key] of the table at idx; returns 0 (and pushes nothing) when nil. */
static int field(lua_State *L, int idx, const char *key) {
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

static void parse_client(lua_State *L, int idx, ll_client_opts *o) {
    static const char *const keys[] = {"dial_timeout", "timeout", "read_timeout", "write_timeout",
                                       "max_conn_duration", "user_agent", "proxy", "max_redirects",
                                       "max_conns_per_host", "tls", "http_version", NULL};
    const char *W = "http.Client";
    luaL_checktype(L, idx, LUA_TTABLE);
    check_keys(L, idx, keys, W);
    if (field(L, idx, "dial_timeout")) {
        o->dial_timeout_ms = opt_ms(L, -1, W, "dial_timeout");
        lua_pop(L, 1);
    }
    /* timeout bounds the whole request; without it the larger of the read
     * and write timeouts does, else k6's 60 s. */
    if (field(L, idx, "timeout")) {
        o->timeout_ms = opt_ms(L, -1, W, "timeout");
        lua_pop(L, 1);
    } else {
        long rt = 0, wt = 0;
        if (field(L, idx, "read_timeout")) {
            rt = opt_ms(L, -1, W, "read_timeout");
            lua_pop(L, 1);
        }
        if (field(L, idx, "write_timeout")) {
            wt = opt_ms(L, -1, W, "write_timeout");
            lua_pop(L, 1);
        }
        if (rt || wt) o->timeout_ms = rt > wt ? rt : wt;
    }
    if (field(L, idx, "max_conn_duration")) {
        o->max_conn_duration_s = (opt_ms(L, -1, W, "max_conn_duration") + 999) / 1000;
        lua_pop(L, 1);
    }
    if (field(L, idx, "user_agent")) {
        o->user_agent = opt_str(L, -1, W, "user_agent");
        lua_pop(L, 1);
    }
    if (field(L, idx, "proxy")) {
        o->proxy = opt_str(L, -1, W, "proxy");
        lua_pop(L, 1);
    }
    if (field(L, idx, "max_redirects")) {
        o->max_redirects = (int)luaL_checkinteger(L, -1);
        lua_pop(L, 1);
    }
    /* each VU keeps its own connection per client, so any limit >= 1 holds */
    if (field(L, idx, "max_conns_per_host")) {
        if (lua_tointeger(L, -1) < 1) luaL_error(L, "%s: max_conns_per_host must be an integer >= 1", W);
        lua_pop(L, 1);
    }
    if (field(L, idx, "tls")) {
        parse_tls(L, lua_gettop(L), o);
        lua_pop(L, 1);
    }
    if (field(L, idx, "http_version")) {
        const char *s = lua_tostring(L, -1);
        if (s && strcmp(s, "1.1") == 0) o->http_version = 11;
        else if (s && strcmp(s, "2") == 0) o->http_version = 2;
        else if (s && strcmp(s, "3") == 0) o->http_version = 3;
        else luaL_error(L, "%s: http_version must be \"1.1\", \"2\" or \"3\"", W);
        lua_pop(L, 1);
    }
}

/* Free client slots (of collected clients) are kept in
 * registry["luaload.client_slots"], so a script that makes a Client per
 * iteration does not grow every VU's connection table without end. */
static client *push_client(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    client *c = lua_newuserdata(L, sizeof(*c));
    memset(c, 0, sizeof(*c));
    c->tag = CLIENT_TAG;
    client_opts_default(&c->opts);
    luaL_getmetatable(L, CLIENT_MT);
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.client_slots");
    int nfree = (int)lua_objlen(L, -1);
    if (nfree > 0) {
        lua_rawgeti(L, -1, nfree);
        c->slot = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_rawseti(L, -2, nfree);
    } else {
        c->slot = w->nclients++;
    }
    lua_pop(L, 1);
    c->uid = ++w->next_client_uid;
    return c;
}

static int l_client_new(lua_State *L) {
    lua_settop(L, 1);
    client *c = push_client(L);
    if (!lua_isnoneornil(L, 1)) parse_client(L, 1, &c->opts);
    return 1;
}

static int l_client_gc(lua_State *L) {
    client *c = luaL_checkudata(L, 1, CLIENT_MT);
    client_opts_free(&c->opts);
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.client_slots");
    if (lua_istable(L, -1)) {
        lua_pushinteger(L, c->slot);
        lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* ---- Request ---- */

static void add_header(lua_State *L, ll_http_req *r, const char *name, const char *value) {
    lua_pushfstring(L, "%s: %s", name, value);
    struct curl_slist *h = curl_slist_append(r->headers, lua_tostring(L, -1));
    lua_pop(L, 1);
    if (!h) luaL_error(L, "out of memory");
    r->headers = h;
}

static void set_body(lua_State *L, ll_http_req *r, int idx) {
    size_t len;
    const char *b = lua_tolstring(L, idx, &len);
    if (!b) luaL_error(L, "http: body must be a string, got %s", luaL_typename(L, idx));
    free(r->body);
    r->body = malloc(len + 1);
    if (!r->body) luaL_error(L, "out of memory");
    memcpy(r->body, b, len);
    r->body[len] = 0;
    r->body_len = len;
    r->has_body = 1;
}

/* Appends one user tag (replacing an earlier one of the same key). */
static void add_tag(lua_State *L, ll_http_req *r, const char *key, const char *value) {
    char *k = strdup(key), *v = strdup(value);
    char **t = k && v ? realloc(r->tags, (size_t)(r->ntags + 1) * 2 * sizeof(char *)) : NULL;
    if (!t) {
        free(k);
        free(v);
        luaL_error(L, "out of memory");
    }
    r->tags = t;
    for (int i = 0; i < r->ntags; i++) {
        if (strcmp(t[2 * i], k) != 0) continue;
        free(t[2 * i]);
        free(t[2 * i + 1]);
        t[2 * i] = k;
        t[2 * i + 1] = v;
        return;
    }
    t[2 * r->ntags] = k;
    t[2 * r->ntags + 1] = v;
    r->ntags++;
}

static void set_tags(lua_State *L, ll_http_req *r, int idx, const char *W) {
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1))
            luaL_error(L, "%s: tags must map strings to strings or numbers", W);
        add_tag(L, r, lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

/* cookies = { name = "value", ... }: one Cookie header, as k6's params.cookies */
static void set_cookies(lua_State *L, ll_http_req *r, int idx, const char *W) {
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = 0, top = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1))
            luaL_error(L, "%s: cookies must map names to strings", W);
        lua_pushfstring(L, "%s%s=%s", n++ ? "; " : "", lua_tostring(L, -2), lua_tostring(L, -1));
        lua_insert(L, -3); /* the piece goes below the key and value */
        lua_pop(L, 1);     /* the value; the key stays on top for lua_next */
    }
    if (n) {
        lua_concat(L, n);  /* the pieces, in order */
        add_header(L, r, "Cookie", lua_tostring(L, -1));
    }
    lua_settop(L, top);
}

static void parse_params(lua_State *L, int idx, ll_http_req *r, const char *W) {
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        int v = lua_gettop(L);
        if (strcmp(k, "method") == 0) {
            free(r->method);
            r->method = opt_str(L, v, W, k);
            upcase(r->method);
        } else if (strcmp(k, "headers") == 0) {
            luaL_checktype(L, v, LUA_TTABLE);
            lua_pushnil(L);
            while (lua_next(L, v)) {
                if (!lua_isstring(L, -2) || !lua_isstring(L, -1))
                    luaL_error(L, "%s: headers must map strings to strings", W);
                add_header(L, r, lua_tostring(L, -2), lua_tostring(L, -1));
                lua_pop(L, 1);
            }
        } else if (strcmp(k, "body") == 0) set_body(L, r, v);
        else if (strcmp(k, "host") == 0) add_header(L, r, "Host", luaL_checkstring(L, v));
        else if (strcmp(k, "disable_keep_alive") == 0) r->disable_keep_alive = lua_toboolean(L, v);
        else if (strcmp(k, "throw") == 0) r->throw_errors = lua_toboolean(L, v);
        else if (strcmp(k, "timeout") == 0) r->timeout_ms = opt_ms(L, v, W, k);
        else if (strcmp(k, "redirects") == 0) r->max_redirects = (int)luaL_checkinteger(L, v);
        else if (strcmp(k, "tags") == 0) set_tags(L, r, v, W);
        else if (strcmp(k, "cookies") == 0) set_cookies(L, r, v, W);
        else if (strcmp(k, "response_type") == 0) {
            const char *s = lua_tostring(L, v);
            if (s && strcmp(s, "text") == 0) r->response_type = LL_RESPONSE_TEXT;
            else if (s && strcmp(s, "binary") == 0) r->response_type = LL_RESPONSE_BINARY;
            else if (s && strcmp(s, "none") == 0) r->response_type = LL_RESPONSE_NONE;
            else luaL_error(L, "%s: response_type must be \"text\", \"binary\" or \"none\"", W);
        } else {
            luaL_error(L, "%s: unknown parameter '%s'", W, k);
        }
        lua_pop(L, 1);
    }
}

static void req_init(ll_http_req *r) {
    memset(r, 0, sizeof(*r));
    r->id = ll_http_req_next_id();
    r->max_redirects = -1;
}

static void set_url(lua_State *L, ll_http_req *r, int idx) {
    const char *url = luaL_checkstring(L, idx);
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        luaL_error(L, "http: invalid URL '%s' (expected http:// or https://)", url);
    free(r->url);
    r->url = strdup(url);
    if (!r->url) luaL_error(L, "out of memory");
}

static int l_request_new(lua_State *L) {
    lua_settop(L, 2);
    request *q = lua_newuserdata(L, sizeof(*q));
    q->tag = REQUEST_TAG;
    req_init(&q->req);
    luaL_getmetatable(L, REQUEST_MT);
    lua_setmetatable(L, -2);
    set_url(L, &q->req, 1);
    parse_params(L, 2, &q->req, "http.Request");
    return 1;
}

static int l_request_gc(lua_State *L) {
    request *q = luaL_checkudata(L, 1, REQUEST_MT);
    ll_http_req_clear(&q->req);
    return 0;
}

/* ---- Response ---- */

/* The tags of an HTTP sample, k6's names: the request's own tags first,
 * then method, status, url, name (the URL unless tagged), proto, group,
 * expected_response and error_code. */
typedef struct http_sample {
    const ll_http_req *req;
    const char *method;
    const ll_http_res *res;
    const ll_vu *vu;
} http_sample;

static const char *http_tag(const void *ctx, const char *key, char *buf, size_t len) {
    const http_sample *h = ctx;
    for (int i = 0; i < h->req->ntags; i++)
        if (strcmp(h->req->tags[2 * i], key) == 0) return h->req->tags[2 * i + 1];
    const ll_http_res *r = h->res;
    if (strcmp(key, "method") == 0) return h->method;
    if (strcmp(key, "url") == 0 || strcmp(key, "name") == 0) return h->req->url;
    if (strcmp(key, "proto") == 0) return r->proto;
    if (strcmp(key, "group") == 0) return h->vu->group_path;
    if (strcmp(key, "expected_response") == 0) return r->status >= 200 && r->status < 400 ? "true" : "false";
    if (strcmp(key, "status") == 0) {
        snprintf(buf, len, "%d", r->status);
        return buf;
    }
    if (strcmp(key, "error_code") == 0 && r->error_code) {
        snprintf(buf, len, "%d", r->error_code);
        return buf;
    }
    return ll_vu_tag(h->vu, key);
}

static int has_user_tag(const ll_http_req *req, const char *key) {
    for (int i = 0; i < req->ntags; i++)
        if (strcmp(req->tags[2 * i], key) == 0) return 1;
    return 0;
}

static void http_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    static const char *const keys[] = {"method", "status", "url", "name", "proto", "group", "expected_response",
                                       "error_code"};
    const http_sample *h = ctx;
    char buf[32];
    for (int i = 0; i < h->req->ntags; i++) fn(ud, h->req->tags[2 * i], h->req->tags[2 * i + 1]);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (has_user_tag(h->req, keys[i])) continue;
        const char *v = http_tag(ctx, keys[i], buf, sizeof(buf));
        if (v && *v) fn(ud, keys[i], v);
    }
    ll_vu_tags(h->vu, fn, ud);
}

static void record_metrics(ll_vu *vu, const ll_http_req *req, const char *method, const ll_http_res *r) {
    ll_shard *s = vu->w->shard;
    http_sample h = {req, method, r, vu};
    ll_tag_source t = {http_tag, http_list, &h, -1};
    ll_shard_add(s, LL_M_HTTP_REQS, 1, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_DURATION, r->t.duration, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_BLOCKED, r->t.blocked, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_CONNECTING, r->t.connecting, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_TLS_HANDSHAKING, r->t.tls_handshaking, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_SENDING, r->t.sending, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_WAITING, r->t.waiting, &t);
    ll_shard_trend(s, LL_M_HTTP_REQ_RECEIVING, r->t.receiving, &t);
    ll_shard_rate(s, LL_M_HTTP_REQ_FAILED, r->status < 200 || r->status >= 400, &t);
    ll_shard_add(s, LL_M_DATA_SENT, (double)r->bytes_sent, &t);
    ll_shard_add(s, LL_M_DATA_RECEIVED, (double)r->bytes_received, &t);
}

/* What a Response computes on first use: its timings and its headers. */
typedef struct resp_extra {
    ll_timings t;
    size_t headers_len;
    char headers[];
} resp_extra;

static void set_ms(lua_State *L, const char *k, int64_t us) {
    lua_pushnumber(L, (double)us / 1000.0);
    lua_setfield(L, -2, k);
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

/* Pushes the Response table on L: status, proto, body, error, error_code,
 * url. timings and headers are built on first access from a copy kept
 * aside in a weak table, so the response holds only documented fields and
 * a script that never reads them does not pay for them. */
static void push_response(lua_State *L, const ll_http_res *r, ll_response_type type) {
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, r->status);
    lua_setfield(L, -2, "status");
    lua_pushstring(L, r->proto);
    lua_setfield(L, -2, "proto");
    if (type != LL_RESPONSE_NONE) {
        lua_pushlstring(L, r->body, r->body_len);
        lua_setfield(L, -2, "body");
    }
    lua_pushstring(L, r->error);
    lua_setfield(L, -2, "error");
    lua_pushinteger(L, r->error_code);
    lua_setfield(L, -2, "error_code");
    if (r->effective_url) {
        lua_pushstring(L, r->effective_url);
        lua_setfield(L, -2, "url");
    }
    luaL_getmetatable(L, RESPONSE_MT);
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.response_extra");
    lua_pushvalue(L, -2);
    resp_extra *x = lua_newuserdata(L, sizeof(*x) + r->headers_len);
    x->t = r->t;
    x->headers_len = r->headers_len;
    memcpy(x->headers, r->headers, r->headers_len);
    lua_rawset(L, -3);
    lua_pop(L, 1);
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

static void push_headers(lua_State *L, const char *p, size_t len) {
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

static int l_response_json(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "body");
    size_t len;
    const char *body = lua_tolstring(L, -1, &len);
    if (!body) return luaL_error(L, "res:json(): the response has no body (response_type \"none\"?)");
    char err[128];
    if (ll_json_push(L, body, len, err, sizeof(err)) != 0) return luaL_error(L, "res:json(): %s", err);
    return 1;
}

static int l_response_index(lua_State *L) {
    const char *k = lua_tostring(L, 2);
    int headers = k && strcmp(k, "headers") == 0, timings = k && strcmp(k, "timings") == 0;
    if (k && strcmp(k, "json") == 0) {
        lua_pushcfunction(L, l_response_json);
        return 1;
    }
    if (!headers && !timings) return 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.response_extra");
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
    const resp_extra *x = lua_touserdata(L, -1);
    if (!x) return 0;
    if (headers) push_headers(L, x->headers, x->headers_len);
    else push_timings(L, &x->t);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, k); /* computed once */
    return 1;
}

/* ---- making requests ---- */

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    ll_vu *vu = ud;
    const char *method;
    const ll_http_req *req = ll_transfer_request(x, &method);
    record_metrics(vu, req, method, r);
    push_response(vu->co, r, (ll_response_type)vu->response_type);
    if (req->throw_errors && r->status == 0) { /* raised by lib/lua/luaload/http_wrap.lua */
        lua_pushfstring(vu->co, "%s %s: %s (error_code %d)", method, req->url, r->error, r->error_code);
        ll_vu_resume(vu, 2);
        return;
    }
    ll_vu_resume(vu, 1);
}

static const char *known_method(const char *m) {
    for (int i = 0; METHODS[i]; i++)
        if (strcasecmp(METHODS[i], m) == 0) return METHODS[i];
    return NULL;
}

static void copy_request(lua_State *L, ll_http_req *dst, const ll_http_req *src) {
    dst->url = strdup(src->url);
    dst->method = src->method ? strdup(src->method) : NULL;
    if (!dst->url || (src->method && !dst->method)) luaL_error(L, "out of memory");
    for (struct curl_slist *h = src->headers; h; h = h->next) {
        struct curl_slist *n = curl_slist_append(dst->headers, h->data);
        if (!n) luaL_error(L, "out of memory");
        dst->headers = n;
    }
    if (src->has_body) {
        dst->body = malloc(src->body_len + 1);
        if (!dst->body) luaL_error(L, "out of memory");
        memcpy(dst->body, src->body, src->body_len + 1);
        dst->body_len = src->body_len;
        dst->has_body = 1;
    }
    for (int i = 0; i < src->ntags; i++) add_tag(L, dst, src->tags[2 * i], src->tags[2 * i + 1]);
    dst->response_type = src->response_type;
    dst->timeout_ms = src->timeout_ms;
    dst->max_redirects = src->max_redirects;
    dst->disable_keep_alive = src->disable_keep_alive;
    dst->throw_errors = src->throw_errors;
}

/* Sends method to target (a URL or a Request) with an optional body and
 * params (stack indexes; body 0: the call takes none), then yields the VU until the response is in. method NULL: the
 * Request's own method, or GET. */
static int do_request(lua_State *L, client *c, const char *method, int target, int body, int params) {
    ll_vu *vu = ll_lua_vu(L, "making HTTP requests");
    request *q = to_request(L, target);
    const ll_http_req *req = q ? &q->req : NULL;
    int plain = method == NULL || known_method(method) != NULL;
    int has_body = body > 0 && !lua_isnoneornil(L, body);
    if (!q || !plain || has_body || !lua_isnoneornil(L, params)) {
        if (!vu->oneoff && !(vu->oneoff = calloc(1, sizeof(ll_http_req)))) return luaL_error(L, "out of memory");
        ll_http_req *o = vu->oneoff;
        ll_http_req_clear(o);
        req_init(o);
        if (q) copy_request(L, o, &q->req);
        else set_url(L, o, target);
        if (has_body) set_body(L, o, body);
        if (params > 0) parse_params(L, params, o, "http");
        if (method && !known_method(method)) {
            free(o->method);
            if (!(o->method = strdup(method))) return luaL_error(L, "out of memory");
            upcase(o->method);
        }
        req = o;
    }
    const char *m = method ? known_method(method) : NULL;
    if (!m) m = req->method ? req->method : "GET";
    ll_transfer *x = ll_vu_transfer(vu, c->slot, c->uid, &c->opts);
    if (!x) return luaL_error(L, "out of memory creating a connection");
    const char *err = NULL;
    vu->response_type = req->response_type;
    if (ll_transfer_start(x, req, m, on_done, vu, &err) < 0) return luaL_error(L, "http: %s", err);
    return lua_yield(L, 0);
}

static client *check_client(lua_State *L) {
    client *c = tagged(L, 1, CLIENT_TAG, sizeof(client));
    if (!c) luaL_typerror(L, 1, "http.Client (call methods with ':')");
    return c;
}

static int c_get(lua_State *L) { return do_request(L, check_client(L), "GET", 2, 0, 3); }
static int c_head(lua_State *L) { return do_request(L, check_client(L), "HEAD", 2, 0, 3); }
static int c_post(lua_State *L) { return do_request(L, check_client(L), "POST", 2, 3, 4); }
static int c_put(lua_State *L) { return do_request(L, check_client(L), "PUT", 2, 3, 4); }
static int c_patch(lua_State *L) { return do_request(L, check_client(L), "PATCH", 2, 3, 4); }
static int c_delete(lua_State *L) { return do_request(L, check_client(L), "DELETE", 2, 3, 4); }
static int c_options(lua_State *L) { return do_request(L, check_client(L), "OPTIONS", 2, 3, 4); }

/* client:request(req) or client:request(method, target, body, params) */
static int c_request(lua_State *L) {
    client *c = check_client(L);
    if (to_request(L, 2)) return do_request(L, c, NULL, 2, 0, 3);
    return do_request(L, c, luaL_checkstring(L, 2), 3, 4, 5);
}

/* ---- module functions: the default client ---- */

static client *default_client(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "luaload.default_client");
    client *c = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return c;
}

static int m_get(lua_State *L) { return do_request(L, default_client(L), "GET", 1, 0, 2); }
static int m_head(lua_State *L) { return do_request(L, default_client(L), "HEAD", 1, 0, 2); }
static int m_post(lua_State *L) { return do_request(L, default_client(L), "POST", 1, 2, 3); }
static int m_put(lua_State *L) { return do_request(L, default_client(L), "PUT", 1, 2, 3); }
static int m_patch(lua_State *L) { return do_request(L, default_client(L), "PATCH", 1, 2, 3); }
static int m_del(lua_State *L) { return do_request(L, default_client(L), "DELETE", 1, 2, 3); }
static int m_options(lua_State *L) { return do_request(L, default_client(L), "OPTIONS", 1, 2, 3); }
static int m_request(lua_State *L) {
    if (to_request(L, 1)) return do_request(L, default_client(L), NULL, 1, 0, 2);
    return do_request(L, default_client(L), luaL_checkstring(L, 1), 2, 3, 4);
}

/* checkstatus(status, res): records the check "status is <status>" */
static int m_checkstatus(lua_State *L) {
    int want = (int)luaL_checkinteger(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    ll_vu *vu = ll_lua_vu(L, "checkstatus()");
    lua_getfield(L, 2, "status");
    int ok = lua_tointeger(L, -1) == want;
    lua_pop(L, 1);
    ll_lua_record_status_check(L, vu, want, ok);
    lua_pushboolean(L, ok);
    return 1;
}

static void new_metatable(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction gc) {
    luaL_newmetatable(L, name);
    if (methods) {
        lua_newtable(L);
        luaL_register(L, NULL, methods);
        lua_setfield(L, -2, "__index");
    }
    if (gc) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
}

int luaopen_luaload_http(lua_State *L) {
    static const luaL_Reg client_methods[] = {
        {"get", c_get}, {"head", c_head}, {"post", c_post}, {"put", c_put}, {"patch", c_patch},
        {"delete", c_delete}, {"del", c_delete}, {"options", c_options}, {"request", c_request},
        {NULL, NULL},
    };
    static const luaL_Reg fns[] = {
        {"Client", l_client_new}, {"Request", l_request_new}, {"get", m_get}, {"head", m_head},
        {"post", m_post}, {"put", m_put}, {"patch", m_patch}, {"del", m_del}, {"delete", m_del},
        {"options", m_options}, {"request", m_request}, {"checkstatus", m_checkstatus},
        {NULL, NULL},
    };
    new_metatable(L, CLIENT_MT, client_methods, l_client_gc);
    new_metatable(L, REQUEST_MT, NULL, l_request_gc);
    luaL_newmetatable(L, RESPONSE_MT);
    lua_pushcfunction(L, l_response_index);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.client_slots");
    luaL_newmetatable(L, "luaload.weak_keys");
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_newtable(L); /* response -> resp_extra, weak keys */
    lua_insert(L, -2);
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.response_extra");
    push_client(L); /* the default client of http.get & co */
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.default_client");

    lua_newtable(L);
    luaL_register(L, NULL, fns);
    /* throw = true: the request functions raise, through a Lua wrapper */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "luaload.http_wrap");
    lua_call(L, 1, 1);
    luaL_getmetatable(L, CLIENT_MT);
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 0);
    return 1;
}
