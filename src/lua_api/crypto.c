/* crypto.c -- luaload.crypto, k6/crypto in Lua on OpenSSL EVP: one-shot
 * digests (md5 .. sha512) and HMAC, the incremental hashers of
 * create_hash/create_hmac (userdata "luaload.crypto.hasher"), random_bytes
 * and v4 UUIDs from RAND_bytes. Digests come out as hex (the default),
 * base64, base64url, base64rawurl or binary (the raw bytes). */
#include "modules.h"

#include <lauxlib.h>
#include <lua.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#define CRYPTO_HASHER "luaload.crypto.hasher"
#define CRYPTO_ALGOS "md5, sha1, sha256, sha384, sha512"
#define CRYPTO_MAX_RANDOM 65536

typedef struct {
    const char *name;
    const EVP_MD *(*md)(void);
    const char *ossl; /* the name OSSL_MAC_PARAM_DIGEST takes */
} crypto_algo;

static const crypto_algo crypto_algos[] = {{"md5", EVP_md5, "MD5"},
                                           {"sha1", EVP_sha1, "SHA1"},
                                           {"sha256", EVP_sha256, "SHA256"},
                                           {"sha384", EVP_sha384, "SHA384"},
                                           {"sha512", EVP_sha512, "SHA512"}};

/* An incremental hash or HMAC: exactly one of md and mac is set. */
typedef struct {
    EVP_MD_CTX *md;
    EVP_MAC_CTX *mac;
} crypto_hasher;

static const crypto_algo *crypto_check_algo(lua_State *L, int idx, const char *fn) {
    const char *a = luaL_checkstring(L, idx);
    for (size_t i = 0; i < sizeof(crypto_algos) / sizeof(crypto_algos[0]); i++)
        if (strcmp(a, crypto_algos[i].name) == 0) return &crypto_algos[i];
    luaL_error(L, "crypto.%s: unknown algorithm '%s' (expected " CRYPTO_ALGOS ")", fn, a);
    return NULL;
}

/* Pushes the n bytes of d in the output encoding named by argument idx
 * (nil: hex); raises for fn on an unknown encoding. */
static int crypto_push_encoded(lua_State *L, const unsigned char *d, size_t n, int idx, const char *fn) {
    const char *enc = luaL_optstring(L, idx, "hex");
    if (strcmp(enc, "binary") == 0) {
        lua_pushlstring(L, (const char *)d, n);
    } else if (strcmp(enc, "hex") == 0) {
        static const char digits[] = "0123456789abcdef";
        char out[2 * EVP_MAX_MD_SIZE];
        for (size_t i = 0; i < n; i++) {
            out[2 * i] = digits[d[i] >> 4];
            out[2 * i + 1] = digits[d[i] & 15];
        }
        lua_pushlstring(L, out, 2 * n);
    } else if (strcmp(enc, "base64") == 0 || strcmp(enc, "base64url") == 0 || strcmp(enc, "base64rawurl") == 0) {
        char out[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
        size_t len = n ? (size_t)EVP_EncodeBlock((unsigned char *)out, d, (int)n) : 0;
        if (strcmp(enc, "base64") != 0) {
            for (size_t i = 0; i < len; i++) {
                if (out[i] == '+') out[i] = '-';
                else if (out[i] == '/') out[i] = '_';
            }
            if (strcmp(enc, "base64rawurl") == 0)
                while (len > 0 && out[len - 1] == '=') len--;
        }
        lua_pushlstring(L, out, len);
    } else {
        return luaL_error(L, "crypto.%s: unknown output encoding '%s' (expected hex, base64, base64url, base64rawurl, binary)",
                          fn, enc);
    }
    return 1;
}

/* A new HMAC context for algo keyed with key, or NULL. */
static EVP_MAC_CTX *crypto_hmac_new(const crypto_algo *a, const char *key, size_t keylen) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!mac) return NULL;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    if (!ctx) return NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)a->ossl, 0),
                           OSSL_PARAM_construct_end()};
    /* an empty key is a valid HMAC key; OpenSSL wants a non-NULL pointer */
    static const unsigned char empty = 0;
    if (!EVP_MAC_init(ctx, keylen ? (const unsigned char *)key : &empty, keylen, params)) {
        EVP_MAC_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int crypto_digest(lua_State *L, const char *fn) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    const crypto_algo *a = NULL;
    for (size_t i = 0; i < sizeof(crypto_algos) / sizeof(crypto_algos[0]); i++)
        if (strcmp(fn, crypto_algos[i].name) == 0) a = &crypto_algos[i];
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!a || !EVP_Digest(s, n, d, &len, a->md(), NULL)) return luaL_error(L, "crypto.%s: digest failed", fn);
    return crypto_push_encoded(L, d, len, 2, fn);
}

static int crypto_md5(lua_State *L) { return crypto_digest(L, "md5"); }
static int crypto_sha1(lua_State *L) { return crypto_digest(L, "sha1"); }
static int crypto_sha256(lua_State *L) { return crypto_digest(L, "sha256"); }
static int crypto_sha384(lua_State *L) { return crypto_digest(L, "sha384"); }
static int crypto_sha512(lua_State *L) { return crypto_digest(L, "sha512"); }

static int crypto_hmac(lua_State *L) {
    const crypto_algo *a = crypto_check_algo(L, 1, "hmac");
    size_t keylen, n;
    const char *key = luaL_checklstring(L, 2, &keylen);
    const char *s = luaL_checklstring(L, 3, &n);
    unsigned char d[EVP_MAX_MD_SIZE];
    size_t len = 0;
    EVP_MAC_CTX *ctx = crypto_hmac_new(a, key, keylen);
    int ok = ctx && EVP_MAC_update(ctx, (const unsigned char *)s, n) && EVP_MAC_final(ctx, d, &len, sizeof(d));
    EVP_MAC_CTX_free(ctx);
    if (!ok) return luaL_error(L, "crypto.hmac: HMAC-%s failed", a->name);
    return crypto_push_encoded(L, d, len, 4, "hmac");
}

static crypto_hasher *crypto_push_hasher(lua_State *L) {
    crypto_hasher *h = lua_newuserdata(L, sizeof(*h));
    h->md = NULL;
    h->mac = NULL;
    luaL_getmetatable(L, CRYPTO_HASHER);
    lua_setmetatable(L, -2);
    return h;
}

static int crypto_create_hash(lua_State *L) {
    const crypto_algo *a = crypto_check_algo(L, 1, "create_hash");
    crypto_hasher *h = crypto_push_hasher(L);
    h->md = EVP_MD_CTX_new();
    if (!h->md || !EVP_DigestInit_ex(h->md, a->md(), NULL))
        return luaL_error(L, "crypto.create_hash: cannot start %s", a->name);
    return 1;
}

static int crypto_create_hmac(lua_State *L) {
    const crypto_algo *a = crypto_check_algo(L, 1, "create_hmac");
    size_t keylen;
    const char *key = luaL_checklstring(L, 2, &keylen);
    crypto_hasher *h = crypto_push_hasher(L);
    h->mac = crypto_hmac_new(a, key, keylen);
    if (!h->mac) return luaL_error(L, "crypto.create_hmac: cannot start HMAC-%s", a->name);
    return 1;
}

/* h:update(s): adds s; returns h, so that calls chain. */
static int crypto_hasher_update(lua_State *L) {
    crypto_hasher *h = luaL_checkudata(L, 1, CRYPTO_HASHER);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int ok = h->md ? EVP_DigestUpdate(h->md, s, n) : EVP_MAC_update(h->mac, (const unsigned char *)s, n);
    if (!ok) return luaL_error(L, "crypto.hasher:update: failed");
    lua_settop(L, 1);
    return 1;
}

/* h:digest(enc): the digest of everything added so far; like k6 (Go's
 * hash.Sum) it finishes a copy, so h can go on taking updates. */
static int crypto_hasher_digest(lua_State *L) {
    crypto_hasher *h = luaL_checkudata(L, 1, CRYPTO_HASHER);
    unsigned char d[EVP_MAX_MD_SIZE];
    size_t len = 0;
    int ok = 0;
    if (h->md) {
        EVP_MD_CTX *c = EVP_MD_CTX_new();
        unsigned int l = 0;
        ok = c && EVP_MD_CTX_copy_ex(c, h->md) && EVP_DigestFinal_ex(c, d, &l);
        len = l;
        EVP_MD_CTX_free(c);
    } else {
        EVP_MAC_CTX *c = EVP_MAC_CTX_dup(h->mac);
        ok = c && EVP_MAC_final(c, d, &len, sizeof(d));
        EVP_MAC_CTX_free(c);
    }
    if (!ok) return luaL_error(L, "crypto.hasher:digest: failed");
    return crypto_push_encoded(L, d, len, 2, "hasher:digest");
}

static int crypto_hasher_gc(lua_State *L) {
    crypto_hasher *h = luaL_checkudata(L, 1, CRYPTO_HASHER);
    EVP_MD_CTX_free(h->md);
    EVP_MAC_CTX_free(h->mac);
    h->md = NULL;
    h->mac = NULL;
    return 0;
}

static int crypto_random_bytes(lua_State *L) {
    lua_Number v = luaL_checknumber(L, 1);
    if (!(v >= 0 && v <= CRYPTO_MAX_RANDOM) || v != (lua_Number)(int)v)
        return luaL_error(L, "crypto.random_bytes: size must be an integer from 0 to %d, got %s", CRYPTO_MAX_RANDOM,
                          lua_tostring(L, 1));
    int n = (int)v;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    unsigned char chunk[LUAL_BUFFERSIZE];
    while (n > 0) {
        int k = n < (int)sizeof(chunk) ? n : (int)sizeof(chunk);
        if (RAND_bytes(chunk, k) != 1) return luaL_error(L, "crypto.random_bytes: RAND_bytes failed");
        luaL_addlstring(&b, (const char *)chunk, (size_t)k);
        n -= k;
    }
    luaL_pushresult(&b);
    return 1;
}

static int crypto_uuid(lua_State *L) {
    unsigned char u[16];
    if (RAND_bytes(u, sizeof(u)) != 1) return luaL_error(L, "crypto.uuid: RAND_bytes failed");
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    char s[37];
    snprintf(s, sizeof(s), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    lua_pushlstring(L, s, 36);
    return 1;
}

int luaopen_luaload_crypto(lua_State *L) {
    static const luaL_Reg methods[] = {{"update", crypto_hasher_update}, {"digest", crypto_hasher_digest}, {NULL, NULL}};
    static const luaL_Reg fns[] = {{"md5", crypto_md5},
                                   {"sha1", crypto_sha1},
                                   {"sha256", crypto_sha256},
                                   {"sha384", crypto_sha384},
                                   {"sha512", crypto_sha512},
                                   {"hmac", crypto_hmac},
                                   {"create_hash", crypto_create_hash},
                                   {"create_hmac", crypto_create_hmac},
                                   {"random_bytes", crypto_random_bytes},
                                   {"uuid", crypto_uuid},
                                   {NULL, NULL}};
    ll_lua_class(L, CRYPTO_HASHER, methods, crypto_hasher_gc, 1);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
