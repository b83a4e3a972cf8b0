/* jwt.c -- luaload.jwt: jwt.Generator{...} and gen:token() (signed live,
 * streamed from the pregenerated cache, or taken from a ring signed ahead
 * by a background thread), jwt.stream(path) over a token file, jwt.sign
 * for one-offs and jwt.decode. The tokens come from token/jwt.h,
 * token/jwt_cache.h and token/token_stream.h; this file reads the options
 * and raises the errors, each naming its function. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "json.h"
#include "jwt.h"
#include "jwt_cache.h"
#include "modules.h"
#include "script_host.h"
#include "state.h"
#include "token_stream.h"

#define JWT_SOURCE_MT "luaload.jwt.Source"
#define JWT_GEN_OPTIONS "key, secret, alg, kid, sub, aud, iss, exp_in, claims, pregenerate, cache_dir, threads, ahead"

/* A Generator or a jwt.stream: where gen:token() takes its tokens. */
typedef struct jwt_source {
    const char *what;         /* "jwt.Generator", "jwt.stream": for messages */
    ll_jwt_gen *gen;
    ll_jwt_signer *signer;    /* signed live, in this state */
    char *out;                /* the signer's token */
    ll_token_stream *ts;      /* pregenerate, ahead, jwt.stream */
    ll_token_cursor *cur;
    char *path;               /* the token file */
    int fell_metric;          /* ahead: jwt_fell_behind's id; -1 */
} jwt_source;

/* luaL_error with C's formats (Lua's lack %lld): raises "where: message". */
__attribute__((format(printf, 2, 3))) static int jwt_raise(lua_State *L, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    luaL_where(L, 1);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

static jwt_source *jwt_push_source(lua_State *L, const char *what) {
    jwt_source *s = lua_newuserdata(L, sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->what = what;
    s->fell_metric = -1;
    luaL_getmetatable(L, JWT_SOURCE_MT);
    lua_setmetatable(L, -2);
    return s;
}

static int jwt_source_gc(lua_State *L) {
    jwt_source *s = luaL_checkudata(L, 1, JWT_SOURCE_MT);
    ll_token_stream_cursor_free(s->cur);
    ll_token_stream_close(s->ts);
    ll_jwt_signer_free(s->signer);
    ll_jwt_gen_free(s->gen);
    free(s->out);
    free(s->path);
    memset(s, 0, sizeof(*s));
    return 0;
}

/* ---- options ---- */

/* t[key] as a string (numbers converted), or NULL when nil. */
static const char *jwt_opt_string(lua_State *L, int t, const char *key, const char *W, size_t *len) {
    lua_getfield(L, t, key);
    const char *s = NULL;
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) s = lua_tolstring(L, -1, len);
    else if (!lua_isnil(L, -1)) jwt_raise(L, "%s: %s: expected a string, got %s", W, key, luaL_typename(L, -1));
    lua_pop(L, 1); /* the string stays in the table */
    return s;
}

/* t[key] as an integer >= min, 0 when nil. */
static int64_t jwt_opt_count(lua_State *L, int t, const char *key, const char *W, int64_t min) {
    lua_getfield(L, t, key);
    int64_t v = 0;
    if (!lua_isnil(L, -1)) {
        double d = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
        if (!(d >= (double)min && d <= 9e15 && d == floor(d)))
            jwt_raise(L, "%s: %s: expected an integer of %lld or more, got %s", W, key, (long long)min,
                       lua_isstring(L, -1) ? lua_tostring(L, -1) : luaL_typename(L, -1));
        v = (int64_t)d;
    }
    lua_pop(L, 1);
    return v;
}

/* exp_in: a duration string ("1h") or seconds. */
static int64_t jwt_opt_exp_in(lua_State *L, int t, const char *W) {
    lua_getfield(L, t, "exp_in");
    int64_t secs = 0;
    uint64_t us = 0;
    if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) >= 0 && lua_tonumber(L, -1) < 9e15) {
        secs = (int64_t)lua_tonumber(L, -1);
    } else if (lua_type(L, -1) == LUA_TSTRING && ll_duration_parse(lua_tostring(L, -1), &us) == 0) {
        secs = (int64_t)(us / 1000000);
        if (us > 0 && secs == 0) jwt_raise(L, "%s: exp_in: expected at least 1s, got '%s'", W, lua_tostring(L, -1));
    } else if (!lua_isnil(L, -1)) {
        jwt_raise(L, "%s: exp_in: expected a duration such as \"1h\" or a number of seconds, got %s", W,
                   lua_isstring(L, -1) ? lua_tostring(L, -1) : luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return secs;
}

/* The claims at idx (a table, or a JSON string) as a JSON string kept on
 * the stack; NULL when nil. */
static const char *jwt_claims_json(lua_State *L, int idx, const char *W) {
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    if (lua_isnil(L, idx) || lua_isnone(L, idx)) return NULL;
    if (lua_type(L, idx) == LUA_TSTRING) {
        lua_pushvalue(L, idx);
        return lua_tostring(L, -1);
    }
    if (!lua_istable(L, idx))
        jwt_raise(L, "%s: claims: expected a table or a JSON object string, got %s", W, luaL_typename(L, idx));
    char err[256];
    char *json = ll_json_encode(L, idx, err, sizeof(err));
    if (!json) jwt_raise(L, "%s: claims: %s", W, err);
    lua_pushstring(L, json);
    free(json);
    return lua_tostring(L, -1);
}

static void jwt_check_keys(lua_State *L, int t, const char *W) {
    static const char *const keys[] = {"key",    "secret", "alg",         "kid",       "sub",     "aud",  "iss",
                                       "exp_in", "claims", "pregenerate", "cache_dir", "threads", "ahead"};
    lua_pushnil(L);
    while (lua_next(L, t)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        int known = 0;
        for (size_t i = 0; k && i < sizeof(keys) / sizeof(keys[0]); i++) known |= strcmp(k, keys[i]) == 0;
        if (!known)
            jwt_raise(L, "%s: unknown option '%s' (expected " JWT_GEN_OPTIONS ")", W, k ? k : luaL_typename(L, -2));
        lua_pop(L, 1);
    }
}

/* ---- sources ---- */

/* Opens the token file path into s (a stream and a cursor), or raises. */
static void jwt_source_open(lua_State *L, jwt_source *s, const char *path) {
    char err[512];
    s->path = strdup(path);
    s->ts = s->path ? ll_token_stream_open(path, err, sizeof(err)) : NULL;
    if (!s->path) jwt_raise(L, "%s: out of memory", s->what);
    if (!s->ts) jwt_raise(L, "%s: %s", s->what, err);
    s->cur = ll_token_stream_cursor(s->ts);
    if (!s->cur) jwt_raise(L, "%s: out of memory", s->what);
}

/* Pregenerates n tokens into the cache (or finds them there) and streams them. */
static void jwt_source_pregenerate(lua_State *L, jwt_source *s, int64_t n, const char *dir, int threads) {
    ll_worker *w = ll_state_worker(L);
    ll_jwt_cache_opts o = {dir, threads, 0, ll_worker_interrupt_flag(w)};
    char path[4096], err[512];
    if (ll_jwt_cache_ensure(s->gen, (uint64_t)n, &o, path, sizeof(path), err, sizeof(err)) != 0)
        jwt_raise(L, "%s: %s", s->what, err);
    jwt_source_open(L, s, path);
}

/* A ring of n tokens signed ahead by background threads, shared by the
 * states; jwt_fell_behind counts the tokens a VU had to sign itself. */
static void jwt_source_ahead(lua_State *L, jwt_source *s, int64_t n, int threads) {
    ll_worker *w = ll_state_worker(L);
    char err[512];
    s->ts = ll_token_stream_live(s->gen, (size_t)n, threads ? threads : 1, err, sizeof(err));
    if (!s->ts) jwt_raise(L, "%s: %s", s->what, err);
    s->cur = ll_token_stream_cursor(s->ts);
    if (!s->cur) jwt_raise(L, "%s: out of memory", s->what);
    s->fell_metric = ll_registry_metric(ll_worker_registry(w), "jwt_fell_behind", LL_COUNTER, LL_CONTAINS_DEFAULT);
    if (s->fell_metric < 0) jwt_raise(L, "%s: the metric jwt_fell_behind exists with another type", s->what);
}

static int jwt_generator(lua_State *L) {
    const char *W = "jwt.Generator";
    luaL_checktype(L, 1, LUA_TTABLE);
    jwt_check_keys(L, 1, W);
    ll_jwt_settings st = {0};
    st.key = jwt_opt_string(L, 1, "key", W, NULL);
    st.secret = jwt_opt_string(L, 1, "secret", W, &st.secret_len);
    st.alg = jwt_opt_string(L, 1, "alg", W, NULL);
    st.kid = jwt_opt_string(L, 1, "kid", W, NULL);
    st.sub = jwt_opt_string(L, 1, "sub", W, NULL);
    st.aud = jwt_opt_string(L, 1, "aud", W, NULL);
    st.iss = jwt_opt_string(L, 1, "iss", W, NULL);
    st.exp_in = jwt_opt_exp_in(L, 1, W);
    const char *dir = jwt_opt_string(L, 1, "cache_dir", W, NULL);
    int64_t pregen = jwt_opt_count(L, 1, "pregenerate", W, 1);
    int64_t threads = jwt_opt_count(L, 1, "threads", W, 1);
    int64_t ahead = jwt_opt_count(L, 1, "ahead", W, 1);
    if (threads > 1024) jwt_raise(L, "%s: threads: expected at most 1024, got %lld", W, (long long)threads);
    if (ahead > 1 << 24) jwt_raise(L, "%s: ahead: expected at most %d tokens, got %lld", W, 1 << 24, (long long)ahead);
    if (pregen && ahead) jwt_raise(L, "%s: give pregenerate or ahead, not both", W);
    ll_worker *w = ll_state_worker(L);
    if ((pregen || ahead) && ll_worker_current(w)) jwt_raise(L, "%s: pregenerate and ahead work in init code only", W);
    lua_getfield(L, 1, "claims");
    st.claims = jwt_claims_json(L, -1, W);
    jwt_source *s = jwt_push_source(L, W);
    char err[512];
    s->gen = ll_jwt_gen_new(&st, err, sizeof(err));
    if (!s->gen) jwt_raise(L, "%s: %s", W, err);
    if (pregen) {
        jwt_source_pregenerate(L, s, pregen, dir, (int)threads);
    } else if (ahead) {
        jwt_source_ahead(L, s, ahead, (int)threads);
    } else {
        s->signer = ll_jwt_signer_new(s->gen);
        s->out = malloc(ll_jwt_gen_max_len(s->gen));
        if (!s->signer || !s->out) jwt_raise(L, "%s: cannot make a signer (OpenSSL or memory)", W);
    }
    return 1;
}

static int jwt_stream(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    jwt_source *s = jwt_push_source(L, "jwt.stream");
    jwt_source_open(L, s, path);
    return 1;
}

/* src:token(): the next token; raises when a file's tokens are used up. */
static int jwt_source_token(lua_State *L) {
    jwt_source *s = luaL_checkudata(L, 1, JWT_SOURCE_MT);
    char err[512] = "";
    if (s->signer) {
        int n = ll_jwt_signer_sign(s->signer, s->out, ll_jwt_gen_max_len(s->gen));
        if (n < 0) return jwt_raise(L, "%s: signing a %s token failed", s->what, ll_jwt_gen_alg(s->gen));
        lua_pushlstring(L, s->out, (size_t)n);
        return 1;
    }
    if (!s->cur) return jwt_raise(L, "%s: closed", s->what);
    const char *tok;
    size_t len;
    int rc = ll_token_stream_next(s->cur, &tok, &len, err, sizeof(err));
    if (rc == 0)
        return jwt_raise(L, "%s: the tokens of '%s' are used up (%llu handed out)", s->what, s->path,
                          (unsigned long long)ll_token_stream_handed(s->ts));
    if (rc < 0) return jwt_raise(L, "%s: %s", s->what, err);
    ll_vu *vu = ll_worker_current(ll_state_worker(L));
    if (rc == 2 && s->fell_metric >= 0 && vu) ll_vu_count(vu, s->fell_metric, 1);
    lua_pushlstring(L, tok, len);
    return 1;
}

/* src:fell_behind(): times a VU found the ahead ring empty (all states). */
static int jwt_source_fell_behind(lua_State *L) {
    jwt_source *s = luaL_checkudata(L, 1, JWT_SOURCE_MT);
    lua_pushnumber(L, s->ts ? (lua_Number)ll_token_stream_fell_behind(s->ts) : 0);
    return 1;
}

/* ---- one-offs ---- */

/* jwt.sign(claims, key_or_secret[, alg | { alg = ..., kid = ... }]): the
 * claims as given, signed; a key is a PEM file's path or PEM text, a
 * secret goes with alg HS256/384/512. */
static int jwt_sign(lua_State *L) {
    const char *W = "jwt.sign";
    size_t klen = 0;
    const char *key = luaL_checklstring(L, 2, &klen);
    ll_jwt_settings st = {0};
    st.bare = 1;
    if (lua_istable(L, 3)) {
        st.alg = jwt_opt_string(L, 3, "alg", W, NULL);
        st.kid = jwt_opt_string(L, 3, "kid", W, NULL);
    } else if (!lua_isnoneornil(L, 3)) {
        st.alg = luaL_checkstring(L, 3);
    }
    if (st.alg && strncasecmp(st.alg, "HS", 2) == 0) {
        st.secret = key;
        st.secret_len = klen;
    } else {
        st.key = key;
    }
    if (lua_isnoneornil(L, 1)) jwt_raise(L, "%s: claims: expected a table or a JSON object string, got nil", W);
    st.claims = jwt_claims_json(L, 1, W);
    char err[512];
    ll_jwt_gen *g = ll_jwt_gen_new(&st, err, sizeof(err));
    if (!g) return jwt_raise(L, "%s: %s", W, err);
    size_t max = ll_jwt_gen_max_len(g);
    char *out = malloc(max);
    int n = out ? ll_jwt_gen_sign(g, out, max) : -1;
    if (n >= 0) lua_pushlstring(L, out, (size_t)n);
    free(out);
    ll_jwt_gen_free(g);
    if (n < 0) return jwt_raise(L, "%s: signing failed", W);
    return 1;
}

/* base64url (padding optional) of n bytes at s into out; its length or -1. */
static long jwt_b64url_decode(const char *s, size_t n, unsigned char *out) {
    while (n > 0 && s[n - 1] == '=') n--;
    if (n % 4 == 1) return -1;
    uint32_t acc = 0;
    long len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
              : c == '-' || c == '+' ? 62 : c == '_' || c == '/' ? 63 : -1;
        if (v < 0) return -1;
        acc = acc << 6 | (uint32_t)v;
        if (i % 4 == 3) {
            out[len++] = (unsigned char)(acc >> 16);
            out[len++] = (unsigned char)(acc >> 8);
            out[len++] = (unsigned char)acc;
        }
    }
    if (n % 4 == 2) out[len++] = (unsigned char)(acc >> 4);
    if (n % 4 == 3) {
        out[len++] = (unsigned char)(acc >> 10);
        out[len++] = (unsigned char)(acc >> 2);
    }
    return len;
}

/* Decodes part (the header or the payload) and pushes its JSON value. */
static void jwt_push_part(lua_State *L, const char *p, size_t n, const char *which) {
    unsigned char *buf = lua_newuserdata(L, n / 4 * 3 + 3);
    long len = jwt_b64url_decode(p, n, buf);
    if (len < 0) jwt_raise(L, "jwt.decode: malformed token: the %s is not base64url", which);
    char err[256];
    int bad = ll_json_push(L, (const char *)buf, (size_t)len, err, sizeof(err)) != 0;
    if (bad || !lua_istable(L, -1)) jwt_raise(L, "jwt.decode: malformed token: the %s is not a JSON object", which);
    lua_remove(L, -2); /* the buffer */
}

/* jwt.decode(token) -> header, payload: no verification. */
static int jwt_decode(lua_State *L) {
    size_t n;
    const char *t = luaL_checklstring(L, 1, &n);
    const char *d1 = memchr(t, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - t)) : NULL;
    if (!d1 || !d2 || memchr(d2 + 1, '.', n - (size_t)(d2 + 1 - t)))
        return jwt_raise(L, "jwt.decode: malformed token: expected three base64url parts separated by '.'");
    jwt_push_part(L, t, (size_t)(d1 - t), "header");
    jwt_push_part(L, d1 + 1, (size_t)(d2 - d1 - 1), "payload");
    return 2;
}

int luaopen_luaload_jwt(lua_State *L) {
    static const luaL_Reg methods[] = {{"token", jwt_source_token}, {"fell_behind", jwt_source_fell_behind}, {NULL, NULL}};
    static const luaL_Reg fns[] = {{"Generator", jwt_generator},
                                   {"stream", jwt_stream},
                                   {"sign", jwt_sign},
                                   {"decode", jwt_decode},
                                   {NULL, NULL}};
    ll_lua_class(L, JWT_SOURCE_MT, methods, jwt_source_gc, 1);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
