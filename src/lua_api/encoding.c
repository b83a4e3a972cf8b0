/* encoding.c -- luaload.encoding, k6/encoding in Lua: base64 in the four
 * variants of Go's encoding/base64 (std, rawstd, url, rawurl) on top of
 * OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock, and hex. Every value in and
 * out is a Lua string (k6's ArrayBuffer has no other Lua form). */
#include "modules.h"

#include <lauxlib.h>
#include <lua.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int url; /* '-' and '_' for '+' and '/' */
    int raw; /* no '=' padding */
} encoding_variant;

static const encoding_variant encoding_variants[] = {
    {"std", 0, 0}, {"rawstd", 0, 1}, {"url", 1, 0}, {"rawurl", 1, 1}};

/* The variant named by argument idx (nil: std), or raises for fn. */
static const encoding_variant *encoding_check_variant(lua_State *L, int idx, const char *fn) {
    if (lua_isnoneornil(L, idx)) return &encoding_variants[0];
    const char *v = luaL_checkstring(L, idx);
    for (size_t i = 0; i < sizeof(encoding_variants) / sizeof(encoding_variants[0]); i++)
        if (strcmp(v, encoding_variants[i].name) == 0) return &encoding_variants[i];
    luaL_error(L, "encoding.%s: unknown variant '%s' (expected std, rawstd, url, rawurl)", fn, v);
    return NULL;
}

static int encoding_b64encode(lua_State *L) {
    size_t n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    const encoding_variant *v = encoding_check_variant(L, 2, "b64encode");
    size_t cap = 4 * ((n + 2) / 3) + 1;
    char *out = malloc(cap);
    if (!out) return luaL_error(L, "encoding.b64encode: out of memory");
    size_t len = n ? (size_t)EVP_EncodeBlock((unsigned char *)out, s, (int)n) : 0;
    if (v->url)
        for (size_t i = 0; i < len; i++) {
            if (out[i] == '+') out[i] = '-';
            else if (out[i] == '/') out[i] = '_';
        }
    if (v->raw)
        while (len > 0 && out[len - 1] == '=') len--;
    lua_pushlstring(L, out, len);
    free(out);
    return 1;
}

/* Decodes s (n bytes) in variant v into a new string on the stack; returns
 * 0, or -1 when s is not valid base64 of that variant. */
static int encoding_b64_push_decoded(lua_State *L, const char *s, size_t n, const encoding_variant *v) {
    size_t pad = 0;
    if (v->raw) {
        if (n % 4 == 1) return -1;
    } else {
        if (n % 4 != 0) return -1;
        while (pad < 2 && pad < n && s[n - 1 - pad] == '=') pad++;
    }
    size_t body = n - pad, full = v->raw ? (n + 3) / 4 * 4 : n;
    if (n > (size_t)0x7ffffff0) return -1;
    if (pad && body % 4 == 1) return -1;
    unsigned char *in = malloc(full + 1), *out = malloc(full / 4 * 3 + 1);
    if (!in || !out) {
        free(in);
        free(out);
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < body && !bad; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) in[i] = c;
        else if (c == (v->url ? '-' : '+')) in[i] = '+';
        else if (c == (v->url ? '_' : '/')) in[i] = '/';
        else bad = 1;
    }
    for (size_t i = body; i < full; i++) in[i] = '=';
    int got = bad || full == 0 ? 0 : EVP_DecodeBlock(out, in, (int)full);
    if (got < 0) bad = 1;
    if (!bad) {
        /* EVP_DecodeBlock counts the zero bytes that the padding stands for */
        size_t zeros = full - body;
        lua_pushlstring(L, (const char *)out, (size_t)got - zeros);
    }
    free(in);
    free(out);
    return bad ? -1 : 0;
}

static int encoding_b64decode(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    const encoding_variant *v = encoding_check_variant(L, 2, "b64decode");
    if (!lua_isnoneornil(L, 3)) {
        const char *f = luaL_checkstring(L, 3);
        if (strcmp(f, "s") != 0)
            return luaL_error(L, "encoding.b64decode: unknown format '%s' (expected \"s\" or nil)", f);
    }
    if (encoding_b64_push_decoded(L, s, n, v) != 0)
        return luaL_error(L, "encoding.b64decode: invalid base64 input (%s)", v->name);
    return 1;
}

static int encoding_hexencode(lua_State *L) {
    static const char digits[] = "0123456789abcdef";
    size_t n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i++) {
        luaL_addchar(&b, digits[s[i] >> 4]);
        luaL_addchar(&b, digits[s[i] & 15]);
    }
    luaL_pushresult(&b);
    return 1;
}

static int encoding_hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int encoding_hexdecode(lua_State *L) {
    size_t n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    if (n % 2) return luaL_error(L, "encoding.hexdecode: odd length (%d)", (int)n);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i += 2) {
        int hi = encoding_hex_value(s[i]), lo = encoding_hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return luaL_error(L, "encoding.hexdecode: invalid hex digit at byte %d", (int)(hi < 0 ? i + 1 : i + 2));
        luaL_addchar(&b, (char)(hi << 4 | lo));
    }
    luaL_pushresult(&b);
    return 1;
}

int luaopen_luaload_encoding(lua_State *L) {
    static const luaL_Reg fns[] = {{"b64encode", encoding_b64encode},
                                   {"b64decode", encoding_b64decode},
                                   {"hexencode", encoding_hexencode},
                                   {"hexdecode", encoding_hexdecode},
                                   {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
