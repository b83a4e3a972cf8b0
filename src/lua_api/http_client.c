/* http_client.c -- luaload.http's Client and Request userdata: Client
 * options (xk6-fasthttp's names), the client slots that index every VU's
 * connections, and k6's request params (method, headers, body, tags,
 * cookies, timeout, redirects, ...) for Request() and the one-off calls. */
#include "http_client.h"

#include <lauxlib.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "duration.h"
#include "http_body.h"
#include "http_call.h"
#include "http_expected.h"
#include "http_options.h"
#include "modules.h"
#include "script_host.h"
#include "size.h"
#include "state.h"
#include "tls_ctx.h"

#define CLIENT_MT "luaload.Client"
#define REQUEST_MT "luaload.Request"

/* Userdata carry a tag so the hot path can tell a Client from a Request
 * without looking their metatables up by name (Lua code cannot forge one). */
#define CLIENT_TAG 0x4c4c434cu  /* "LLCL" */
#define REQUEST_TAG 0x4c4c5251u /* "LLRQ" */

static void *tagged(lua_State *L, int idx, uint32_t tag, size_t size) {
    void *p = lua_touserdata(L, idx);
    if (!p || lua_type(L, idx) != LUA_TUSERDATA || lua_objlen(L, idx) != size) return NULL;
    return *(uint32_t *)p == tag ? p : NULL;
}

ll_http_request *ll_http_client_to_request(lua_State *L, int idx) {
    return tagged(L, idx, REQUEST_TAG, sizeof(ll_http_request));
}

ll_http_client *ll_http_client_check(lua_State *L, int idx) {
    ll_http_client *c = tagged(L, idx, CLIENT_TAG, sizeof(ll_http_client));
    if (!c) luaL_typerror(L, idx, "http.Client (call methods with ':')");
    return c;
}

/* ---- option parsing helpers ---- */

/* Raises unless the value at idx is a table: "<where>: <what> must be a table". */
static void need_table(lua_State *L, int idx, const char *where, const char *what) {
    if (!lua_istable(L, idx)) luaL_error(L, "%s: %s must be a table, got %s", where, what, luaL_typename(L, idx));
}

/* An integer option. */
static int opt_int(lua_State *L, int idx, const char *where, const char *key) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: %s must be an integer, got %s", where, key, luaL_typename(L, idx));
    return (int)lua_tointeger(L, idx);
}

/* A string value bound for the wire: no CR, LF or NUL in it. */
static const char *wire_value(lua_State *L, int idx, const char *where, const char *what) {
    size_t len = 0;
    const char *s = lua_isstring(L, idx) ? lua_tolstring(L, idx, &len) : NULL; /* a string or a number */
    if (!s) luaL_error(L, "%s: %s must be a string, got %s", where, what, luaL_typename(L, idx));
    if (!ll_http_value_ok(s, len)) luaL_error(L, "%s: %s must not contain CR, LF or NUL", where, what);
    return s;
}

/* A header or cookie name: an RFC 9110 token. */
static const char *wire_name(lua_State *L, int idx, const char *where, const char *what) {
    size_t len = 0;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!s) luaL_error(L, "%s: %s names must be strings, got %s", where, what, luaL_typename(L, idx));
    char shown[84]; /* 80 bytes of the value */
    if (strlen(s) != len || !ll_http_token_ok(s))
        luaL_error(L, "%s: %s name '%s' is not a token (letters, digits and !#$%%&'*+-.^_`|~)", where, what,
                   ll_http_printable(shown, sizeof(shown), s, len));
    return s;
}

/* A duration from a string ("1.5s") or a number of milliseconds (k6), from
 * 0 to LL_DURATION_MAX_US. */
static long opt_ms(lua_State *L, int idx, const char *where, const char *key) {
    uint64_t us = 0;
    int t = lua_type(L, idx);
    if (t == LUA_TNUMBER ? ll_duration_from_ms(lua_tonumber(L, idx), &us) != 0
                         : t != LUA_TSTRING || ll_duration_parse(lua_tostring(L, idx), &us) != 0)
        luaL_error(L, "%s: %s must be a duration from 0 to about 292 years, such as \"10s\", or a number of "
                      "milliseconds", where, key);
    return (long)(us / 1000);
}

/* true or false: k6 fails on another JSON type, and the string "false" is
 * not false. */
static int opt_bool(lua_State *L, int idx, const char *where, const char *key) {
    if (!lua_isboolean(L, idx)) luaL_error(L, "%s: %s must be true or false, got %s", where, key, luaL_typename(L, idx));
    return lua_toboolean(L, idx);
}

/* A byte size from a number or a string such as "512MiB" (size.h), within
 * what a Lua string can hold. */
static int64_t opt_size(lua_State *L, int idx, const char *where, const char *key) {
    int64_t v = -1;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double d = lua_tonumber(L, idx);
        if (d >= 1 && d <= (double)LL_MAX_RESPONSE_BODY_LIMIT) v = (int64_t)d;
    } else if (lua_type(L, idx) == LUA_TSTRING && ll_size_parse(lua_tostring(L, idx), &v) != 0) {
        v = -1;
    }
    if (v < 1 || v > LL_MAX_RESPONSE_BODY_LIMIT)
        luaL_error(L, "%s: %s must be a size from 1 byte to 2GiB-1, such as 1048576 or \"64MiB\"", where, key);
    return v;
}

static char *opt_str(lua_State *L, int idx, const char *where, const char *key) {
    if (lua_type(L, idx) != LUA_TSTRING) luaL_error(L, "%s: %s must be a string, got %s", where, key, luaL_typename(L, idx));
    char *s = strdup(lua_tostring(L, idx));
    if (!s) luaL_error(L, "out of memory");
    return s;
}

/* ---- Client ---- */

/* -1: not set by the Client, options.* decide (ll_http_client_opts) */
static void client_opts_default(ll_client_opts *o) {
    memset(o, 0, sizeof(*o));
    o->timeout_ms = 60000; /* k6's default request timeout */
    o->max_redirects = -1;
    o->insecure_skip_verify = -1;
    o->disable_keep_alive = -1;
    o->discard_bodies = -1;
}

char *ll_http_client_strdup(lua_State *L, const char *s) {
    char *d = s ? strdup(s) : NULL;
    if (s && !d) luaL_error(L, "out of memory");
    return d;
}

const ll_client_opts *ll_http_client_opts(lua_State *L, ll_http_client *c) {
    if (c->resolved) return &c->opts;
    const ll_http_defaults *d = ll_http_options_defaults(L);
    ll_client_opts *o = &c->opts;
    if (o->insecure_skip_verify < 0) o->insecure_skip_verify = d->o.insecure_skip_verify > 0;
    ll_worker_client_overrides(ll_state_worker(L), o); /* --insecure-skip-tls-verify, --http-debug */
    if (o->disable_keep_alive < 0) o->disable_keep_alive = d->o.disable_keep_alive > 0;
    if (o->discard_bodies < 0) o->discard_bodies = d->discard > 0;
    if (o->max_redirects < 0) o->max_redirects = d->o.max_redirects;
    if (!o->user_agent) o->user_agent = ll_http_client_strdup(L, d->o.user_agent);
    if (!o->certificate && !o->private_key) {
        o->certificate = ll_http_client_strdup(L, d->o.certificate);
        o->private_key = ll_http_client_strdup(L, d->o.private_key);
    }
    if (!o->tls_min && !o->tls_max) {
        o->tls_min = d->o.tls_min;
        o->tls_max = d->o.tls_max;
    }
    if (!o->ciphers) o->ciphers = ll_http_client_strdup(L, d->o.ciphers);
    if (!o->connect_to && d->o.connect_to) {
        int n = 0;
        while (d->o.connect_to[n]) n++;
        o->connect_to = calloc((size_t)n + 1, sizeof(char *));
        if (!o->connect_to) luaL_error(L, "out of memory");
        for (int i = 0; i < n; i++) o->connect_to[i] = ll_http_client_strdup(L, d->o.connect_to[i]);
    }
    o->no_vu_reuse = d->no_vu_reuse;
    c->resolved = 1;
    return o;
}

void ll_http_client_opts_free(ll_client_opts *o) {
    free(o->ca);
    free(o->certificate);
    free(o->private_key);
    free(o->proxy);
    free(o->user_agent);
    free(o->ciphers);
    free(o->server_name);
    free(o->qlog_dir);
    for (int i = 0; o->connect_to && o->connect_to[i]; i++) free(o->connect_to[i]);
    free(o->connect_to);
    memset(o, 0, sizeof(*o));
}

/* A PEM file option (ca, certificate, private_key): the path, checked to
 * be readable and to hold PEM data now, so that a typo fails before the
 * test and not as a TLS error in every request. */
static char *opt_pem(lua_State *L, int idx, const char *W, const char *key) {
    char *path = opt_str(L, idx, W, key);
    FILE *f = fopen(path, "r");
    if (!f) {
        lua_pushfstring(L, "%s: cannot read %s '%s': %s", W, key, path, strerror(errno));
        free(path);
        luaL_error(L, "%s", lua_tostring(L, -1)); /* with the script's line */
    }
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    if (!strstr(buf, "-----BEGIN ")) {
        lua_pushfstring(L, "%s: %s '%s' is not a PEM file (no -----BEGIN line)", W, key, path);
        free(path);
        luaL_error(L, "%s", lua_tostring(L, -1));
    }
    return path;
}

char *ll_http_client_pem_file(lua_State *L, int idx, const char *W, const char *key) {
    size_t len = 0;
    const char *pem = lua_tolstring(L, idx, &len);
    if (!pem || !strstr(pem, "-----BEGIN ")) luaL_error(L, "%s: %s is not PEM text (no -----BEGIN line)", W, key);
    int fd = memfd_create("luaload-pem", MFD_CLOEXEC);
    if (fd < 0) luaL_error(L, "%s: cannot keep %s in memory: %s", W, key, strerror(errno));
    if (write(fd, pem, len) != (ssize_t)len) {
        close(fd);
        luaL_error(L, "%s: cannot keep %s in memory: %s", W, key, strerror(errno));
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    char *s = strdup(path);
    if (!s) luaL_error(L, "out of memory");
    return s;
}

char *ll_http_client_wire_string(lua_State *L, int idx, const char *W, const char *key) {
    wire_value(L, idx, W, key);
    return opt_str(L, idx, W, key);
}

/* Warns once per process of the names OpenSSL lacks (init runs once per
 * worker): k6 takes such a list and negotiates a suite it has. */
static void warn_unknown_ciphers(const char *W, const char *names) {
    static atomic_int warned;
    if (atomic_exchange(&warned, 1)) return;
    fprintf(stderr, "luaload: warning: %s: %s: not cipher suites this TLS library has; left out\n", W, names);
}

char *ll_http_client_cipher_list(lua_State *L, int idx, const char *W) {
    if (lua_type(L, idx) == LUA_TSTRING && strncmp(lua_tostring(L, idx), "TLS_", 4) != 0)
        return opt_str(L, idx, W, "the cipher list"); /* OpenSSL's own syntax, as it is */
    int list = lua_istable(L, idx);
    if (!(list && lua_objlen(L, idx) >= 1) && lua_type(L, idx) != LUA_TSTRING)
        luaL_error(L, "%s: expected a list of cipher suite names such as \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"", W);
    ll_buf known = {0}, unknown = {0};
    int n = list ? (int)lua_objlen(L, idx) : 1;
    const char *bad = NULL;
    char name[128];
    for (int i = 1; i <= n && !bad; i++) {
        if (list) lua_rawgeti(L, idx, i);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!list) s = lua_tostring(L, idx);
        for (const char *p = s; p && *p && !bad;) { /* a string may hold "a:b" */
            size_t len = strcspn(p, ":");
            const char *ws = strpbrk(p, " \t\r\n");
            if (!len || len >= sizeof(name) || (ws && (size_t)(ws - p) < len)) {
                bad = "a cipher suite name";
                break;
            }
            memcpy(name, p, len);
            name[len] = 0;
            p += len + (p[len] == ':');
            ll_buf *to = ll_tls_ctx_cipher_known(name) ? &known : &unknown;
            if (to->len) ll_buf_append(to, to == &known ? ":" : ", ", to == &known ? 1 : 2);
            ll_buf_puts(to, name);
        }
        if (!s || !*s) bad = "a cipher suite name";
        if (list) lua_pop(L, 1);
        if (bad && list) lua_pushfstring(L, "%s[%d]: expected a cipher suite name", W, i);
    }
    if (bad || known.failed || unknown.failed || !known.len) {
        if (!bad && !known.failed && !unknown.failed)
            lua_pushfstring(L, "%s: none of %s is a cipher suite this TLS library has", W, unknown.p);
        else if (!bad)
            lua_pushstring(L, "out of memory");
        else if (!list)
            lua_pushfstring(L, "%s: expected cipher suite names separated by ':'", W);
        ll_buf_free(&known);
        ll_buf_free(&unknown);
        lua_error(L);
    }
    if (unknown.len) warn_unknown_ciphers(W, unknown.p);
    char *out = strdup(known.p);
    ll_buf_free(&known);
    ll_buf_free(&unknown);
    if (!out) luaL_error(L, "out of memory");
    return out;
}

/* "1.2", "tls1.2" (k6's names) -> 12 */
int ll_http_client_tls_version(lua_State *L, int idx, const char *W, const char *key) {
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : "";
    if (strncasecmp(s, "tls", 3) == 0) s += 3;
    if (*s == 'v') s++;
    if (strcmp(s, "1.0") == 0) return 10;
    if (strcmp(s, "1.1") == 0) return 11;
    if (strcmp(s, "1.2") == 0) return 12;
    if (strcmp(s, "1.3") == 0) return 13;
    return luaL_error(L, "%s: %s must be \"tls1.0\", \"tls1.1\", \"tls1.2\" or \"tls1.3\"", W, key);
}

static void parse_tls(lua_State *L, int idx, ll_client_opts *o) {
    const char *W = "http.Client tls";
    need_table(L, idx, "http.Client", "tls");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        int v = lua_gettop(L);
        if (strcmp(k, "insecure_skip_verify") == 0) o->insecure_skip_verify = opt_bool(L, v, W, k);
        else if (strcmp(k, "ca") == 0) o->ca = opt_pem(L, v, W, k);
        else if (strcmp(k, "certificate") == 0) o->certificate = opt_pem(L, v, W, k);
        else if (strcmp(k, "private_key") == 0) o->private_key = opt_pem(L, v, W, k);
        else if (strcmp(k, "min_version") == 0) o->tls_min = ll_http_client_tls_version(L, v, W, k);
        else if (strcmp(k, "max_version") == 0) o->tls_max = ll_http_client_tls_version(L, v, W, k);
        else if (strcmp(k, "ciphers") == 0) o->ciphers = ll_http_client_cipher_list(L, v, W);
        else if (strcmp(k, "server_name") == 0) {
            wire_value(L, v, W, k);
            o->server_name = opt_str(L, v, W, k);
            if (!*o->server_name || strpbrk(o->server_name, " /:@?#[]")) luaL_error(L, "%s: server_name must be a host name", W);
        }
        else luaL_error(L, "%s: unknown option '%s' (expected insecure_skip_verify, ca, certificate, private_key, "
                        "min_version, max_version, ciphers, server_name)", W, k);
        lua_pop(L, 1);
    }
    if (o->tls_min && o->tls_max && o->tls_min > o->tls_max)
        luaL_error(L, "%s: min_version is above max_version", W);
    if (!o->certificate != !o->private_key)
        luaL_error(L, "%s: certificate and private_key go together (mTLS needs both)", W);
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

/* http_version = "1.1" | "2" | "3" (also 1.1, 2, 3 as numbers), one the
 * transport can speak */
static int opt_http_version(lua_State *L, int idx, const char *W) {
    const ll_transport_ops *ops = ll_worker_transport(ll_state_worker(L)); /* forced for the run */
    if (!ops || ops == ll_transport_find("native")) ops = ll_transport_find("curl"); /* the one with every version */
    const char *s = lua_isstring(L, idx) ? lua_tostring(L, idx) : "";
    int v = strcmp(s, "1.1") == 0 ? LL_HTTP_1_1 : strcmp(s, "2") == 0 ? LL_HTTP_2 : strcmp(s, "3") == 0 ? LL_HTTP_3 : -1;
    if (v < 0) luaL_error(L, "%s: http_version must be \"1.1\", \"2\" or \"3\"", W);
    if (!ops->supports(v))
        luaL_error(L, "%s: http_version \"%s\" is not available: this %s transport was built without HTTP/%s", W, s,
                   ops->name, v == LL_HTTP_3 ? "3 (a libcurl with ngtcp2 and nghttp3 has it)" : "2");
    return v;
}

static void parse_client(lua_State *L, int idx, ll_client_opts *o) {
    static const char *const keys[] = {"dial_timeout", "timeout", "read_timeout", "write_timeout",
                                       "max_conn_duration", "user_agent", "proxy", "max_redirects",
                                       "max_conns_per_host", "tls", "http_version", "max_response_body",
                                       "multiplex", "max_streams", "disable_keep_alive",
                                       "discard_response_bodies", "transport", "qlog_dir", "alt_svc", "zero_rtt", NULL};
    const char *W = "http.Client";
    need_table(L, idx, W, "its options");
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
        wire_value(L, -1, W, "user_agent");
        o->user_agent = opt_str(L, -1, W, "user_agent");
        lua_pop(L, 1);
    }
    if (field(L, idx, "proxy")) {
        o->proxy = opt_str(L, -1, W, "proxy");
        lua_pop(L, 1);
    }
    if (field(L, idx, "max_redirects")) {
        o->max_redirects = opt_int(L, -1, W, "max_redirects");
        lua_pop(L, 1);
    }
    /* without multiplex each VU keeps its own connection per client, so
     * any limit >= 1 holds; with it, the worker's VUs share this many */
    if (field(L, idx, "max_conns_per_host")) {
        o->max_conns_per_host = opt_int(L, -1, W, "max_conns_per_host");
        if (o->max_conns_per_host < 1) luaL_error(L, "%s: max_conns_per_host must be an integer >= 1", W);
        lua_pop(L, 1);
    }
    if (field(L, idx, "max_streams")) {
        o->max_streams = opt_int(L, -1, W, "max_streams");
        if (o->max_streams < 1) luaL_error(L, "%s: max_streams must be an integer >= 1", W);
        lua_pop(L, 1);
    }
    if (field(L, idx, "multiplex")) {
        o->multiplex = opt_bool(L, -1, W, "multiplex");
        lua_pop(L, 1);
    }
    if (field(L, idx, "disable_keep_alive")) {
        o->disable_keep_alive = opt_bool(L, -1, W, "disable_keep_alive");
        lua_pop(L, 1);
    }
    if (field(L, idx, "discard_response_bodies")) {
        o->discard_bodies = opt_bool(L, -1, W, "discard_response_bodies");
        lua_pop(L, 1);
    }
    if (field(L, idx, "max_response_body")) {
        o->max_response_body = opt_size(L, -1, W, "max_response_body");
        lua_pop(L, 1);
    }
    if (field(L, idx, "tls")) {
        parse_tls(L, lua_gettop(L), o);
        lua_pop(L, 1);
    }
    if (field(L, idx, "http_version")) {
        o->http_version = opt_http_version(L, -1, W);
        lua_pop(L, 1);
    }
    /* zero_rtt: a resumed HTTP/3 connection sends GET, HEAD and OPTIONS as 0-RTT */
    if (field(L, idx, "zero_rtt")) {
        o->zero_rtt = opt_bool(L, -1, W, "zero_rtt");
        lua_pop(L, 1);
    }
    /* alt_svc: an https:// origin's advertised HTTP/3 alternative serves its next requests */
    if (field(L, idx, "alt_svc")) {
        o->alt_svc = opt_bool(L, -1, W, "alt_svc");
        lua_pop(L, 1);
    }
    /* qlog_dir: ngtcp2's qlog of each native HTTP/3 connection, a file each */
    if (field(L, idx, "qlog_dir")) {
        o->qlog_dir = opt_str(L, -1, W, "qlog_dir");
        struct stat st;
        if (stat(o->qlog_dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(o->qlog_dir, W_OK) != 0)
            luaL_error(L, "%s: qlog_dir '%s' is not a writable directory", W, o->qlog_dir);
        lua_pop(L, 1);
    }
    /* transport = "native" | "curl": that one serves every request */
    if (field(L, idx, "transport")) {
        const char *t = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        o->transport = ll_transport_find(t);
        if (!o->transport) luaL_error(L, "%s: transport must be \"native\" or \"curl\"", W);
        const char *lacks = o->transport == ll_transport_find("native") ? ll_transport_native_lacks(o) : NULL;
        if (lacks) luaL_error(L, "%s: the native transport does not do %s (transport = \"curl\" does)", W, lacks);
        /* libcurl moves to an Alt-Svc's HTTP/3 only when asked for HTTP/3 */
        if (o->alt_svc && o->transport != ll_transport_find("native"))
            luaL_error(L, "%s: alt_svc needs the native transport (libcurl takes an Alt-Svc to HTTP/3 only when asked for HTTP/3)", W);
        lua_pop(L, 1);
    }
}

/* Free client slots (of collected clients) are kept in
 * registry["luaload.client_slots"], so a script that makes a Client per
 * iteration does not grow every VU's connection table without end. */
ll_http_client *ll_http_client_push(lua_State *L) {
    ll_worker *w = ll_state_worker(L);
    ll_http_client *c = lua_newuserdata(L, sizeof(*c));
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
        c->slot = ll_worker_new_client_slot(w);
    }
    lua_pop(L, 1);
    c->uid = ll_worker_new_client_uid(w);
    return c;
}

int ll_http_client_new(lua_State *L) {
    lua_settop(L, 1);
    ll_http_client *c = ll_http_client_push(L);
    if (!lua_isnoneornil(L, 1)) parse_client(L, 1, &c->opts);
    return 1;
}

static int l_client_gc(lua_State *L) {
    ll_http_client *c = luaL_checkudata(L, 1, CLIENT_MT);
    ll_http_client_opts_free(&c->opts);
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
    if (ll_http_req_add_header(r, name, value) < 0) luaL_error(L, "out of memory");
}


static void add_tag(lua_State *L, ll_http_req *r, const char *key, const char *value) {
    if (ll_http_req_add_tag(r, key, value) < 0) luaL_error(L, "out of memory");
}

static void set_tags(lua_State *L, ll_http_req *r, int idx, const char *W) {
    need_table(L, idx, W, "tags");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1))
            luaL_error(L, "%s: tags must map strings to strings or numbers", W);
        add_tag(L, r, lua_tostring(L, -2), lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

/* cookies = { name = "value" or { value = "v", replace = true }, ... }:
 * one Cookie header, sent before the jar's, as k6's params.cookies; with
 * replace, the jar's cookie of that name stays out. */
static void set_cookies(lua_State *L, ll_http_req *r, int idx, const char *W) {
    need_table(L, idx, W, "cookies");
    int n = 0, top = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *name = wire_name(L, -2, W, "cookie");
        if (lua_istable(L, -1)) { /* { value = ..., replace = ... } */
            lua_getfield(L, -1, "replace");
            int rep = lua_toboolean(L, -1);
            lua_pop(L, 1);
            lua_getfield(L, -1, "value");
            lua_replace(L, -2);
            if (rep && ll_http_req_replace_cookie(r, name) < 0) luaL_error(L, "out of memory");
        }
        const char *value = wire_value(L, -1, W, "a cookie value");
        lua_pushfstring(L, "%s%s=%s", n++ ? "; " : "", name, value);
        lua_insert(L, -3); /* the piece goes below the key and value */
        lua_pop(L, 1);     /* the value; the key stays on top for lua_next */
    }
    if (n) {
        lua_concat(L, n);  /* the pieces, in order */
        add_header(L, r, "Cookie", lua_tostring(L, -1));
    }
    lua_settop(L, top);
}

/* params.auth: "basic", "digest" or "ntlm", as k6's */
static int opt_auth(lua_State *L, int idx, const char *W) {
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    if (s && strcmp(s, "basic") == 0) return LL_AUTH_BASIC;
    if (s && strcmp(s, "digest") == 0) return LL_AUTH_DIGEST;
    if (s && strcmp(s, "ntlm") == 0) return LL_AUTH_NTLM;
    luaL_error(L, "%s: auth must be \"basic\", \"digest\" or \"ntlm\" (with the credentials in the URL), got %s", W,
               s ? s : luaL_typename(L, idx));
    return LL_AUTH_NONE;
}

const char *ll_http_client_check_method(lua_State *L, int idx, const char *W) {
    size_t len = 0;
    const char *m = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!m) luaL_error(L, "%s: method must be a string, got %s", W, luaL_typename(L, idx));
    if (strlen(m) != len || !ll_http_token_ok(m))
        luaL_error(L, "%s: method must be a token such as GET or PROPFIND (letters, digits and !#$%%&'*+-.^_`|~)", W);
    return m;
}

void ll_http_client_set_method(lua_State *L, ll_http_req *r, int idx, const char *W) {
    if (ll_http_req_set_method(r, ll_http_client_check_method(L, idx, W)) < 0) luaL_error(L, "out of memory");
}

void ll_http_client_parse_params(lua_State *L, int idx, ll_http_req *r, int anchor, const char *W) {
    if (lua_isnoneornil(L, idx)) return;
    need_table(L, idx, W, "params");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        int v = lua_gettop(L);
        if (strcmp(k, "method") == 0) {
            ll_http_client_set_method(L, r, v, W);
        } else if (strcmp(k, "headers") == 0) {
            need_table(L, v, W, "headers");
            lua_pushnil(L);
            while (lua_next(L, v)) {
                const char *name = wire_name(L, -2, W, "header");
                lua_pushfstring(L, "header '%s'", name);
                const char *value = wire_value(L, -2, W, lua_tostring(L, -1));
                add_header(L, r, name, value);
                lua_pop(L, 2);
            }
        } else if (strcmp(k, "body") == 0) ll_http_body_set(L, r, v, anchor, W);
        else if (strcmp(k, "compression") == 0) r->compression = ll_http_body_compression(L, v, W);
        else if (strcmp(k, "host") == 0) add_header(L, r, "Host", wire_value(L, v, W, "host"));
        else if (strcmp(k, "disable_keep_alive") == 0 || strcmp(k, "disableKeepAlive") == 0) r->disable_keep_alive = opt_bool(L, v, W, k);
        else if (strcmp(k, "throw") == 0) r->throw_errors = opt_bool(L, v, W, k);
        else if (strcmp(k, "timeout") == 0) r->timeout_ms = opt_ms(L, v, W, k);
        else if (strcmp(k, "redirects") == 0) r->max_redirects = opt_int(L, v, W, k);
        else if (strcmp(k, "http_version") == 0 || strcmp(k, "httpVersion") == 0) r->http_version = opt_http_version(L, v, W);
        else if (strcmp(k, "max_response_body") == 0 || strcmp(k, "maxResponseBody") == 0) r->max_response_body = opt_size(L, v, W, k);
        else if (strcmp(k, "tags") == 0) set_tags(L, r, v, W);
        else if (strcmp(k, "auth") == 0) r->auth = opt_auth(L, v, W);
        else if (strcmp(k, "cookies") == 0) set_cookies(L, r, v, W);
        else if (strcmp(k, "response_callback") == 0 || strcmp(k, "responseCallback") == 0) {
            r->expected = ll_http_expected_check(L, v, W);
            if (anchor) { /* the Request keeps it alive */
                lua_pushvalue(L, v);
                lua_rawseti(L, anchor, (int)lua_objlen(L, anchor) + 1);
            }
        } else if (strcmp(k, "on_chunk") == 0 || strcmp(k, "onChunk") == 0) {
            if (!lua_isfunction(L, v)) luaL_error(L, "%s: on_chunk must be a function, got %s", W, luaL_typename(L, v));
            if (strcmp(W, "http.Request") == 0) /* a Request may be in flight in several calls at once */
                luaL_error(L, "%s: on_chunk goes in a call's params, not in a Request's", W);
            lua_pushvalue(L, v);
            lua_setfield(L, anchor, "on_chunk"); /* ll_http_call_start finds it there */
            r->on_chunk = ll_http_chunk_to_lua;
        } else if (strcmp(k, "response_type") == 0 || strcmp(k, "responseType") == 0) {
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

void ll_http_client_set_url(lua_State *L, ll_http_req *r, int idx, const char *W) {
    size_t len = 0;
    const char *url = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!url) luaL_error(L, "%s: the URL must be a string or an http.Request, got %s", W, luaL_typename(L, idx));
    char shown[84]; /* 80 bytes of the value */
    if (!ll_http_url_ok(url, len))
        luaL_error(L, "%s: invalid URL '%s' (expected http:// or https://, a host, and no spaces or control characters)",
                   W, ll_http_printable(shown, sizeof(shown), url, len));
    if (ll_http_req_set_url(r, url) < 0) luaL_error(L, "out of memory");
}

int ll_http_client_request_new(lua_State *L) {
    lua_settop(L, 2);
    ll_http_request *q = lua_newuserdata(L, sizeof(*q));
    q->tag = REQUEST_TAG;
    ll_http_req_init(&q->req);
    luaL_getmetatable(L, REQUEST_MT);
    lua_setmetatable(L, -2);
    lua_newtable(L); /* the Request's environment keeps what its body reads from */
    ll_http_client_set_url(L, &q->req, 1, "http.Request");
    ll_http_client_parse_params(L, 2, &q->req, 4, "http.Request");
    ll_http_body_finish(L, &q->req, "http.Request");
    if (ll_http_req_apply_auth(&q->req) < 0) luaL_error(L, "out of memory");
    lua_setfenv(L, 3);
    return 1;
}

static int l_request_gc(lua_State *L) {
    ll_http_request *q = luaL_checkudata(L, 1, REQUEST_MT);
    ll_http_req_clear(&q->req);
    return 0;
}

void ll_http_client_register(lua_State *L, const luaL_Reg *client_methods) {
    ll_lua_class(L, CLIENT_MT, client_methods, l_client_gc, 0);
    ll_lua_class(L, REQUEST_MT, NULL, l_request_gc, 0);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "luaload.client_slots");
}
