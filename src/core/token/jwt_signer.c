/* jwt_signer.c -- signs a generator's tokens on one thread's OpenSSL
 * contexts, made once: a digest context and an EVP_PKEY_CTX set up for
 * RSA (PKCS#1 v1.5 or PSS) and ECDSA, a DigestSign template copied for
 * each EdDSA signature, an HMAC template duplicated for each HS* one. Each
 * token gets iat (now), exp (iat + exp_in) and a jti (a v4 UUID from
 * RAND_bytes); ECDSA's DER signature becomes JWS's raw r||s. */
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jwt_gen.h"

struct ll_jwt_signer {
    ll_jwt_gen *g;
    EVP_MD *md;             /* RSA, PSS, EC: the digest, fetched once */
    EVP_MD_CTX *mdctx;
    EVP_PKEY_CTX *pctx;     /* RSA, PSS, EC: sign_init'd once */
    EVP_MD_CTX *ed_tmpl;    /* EdDSA: DigestSignInit'd once, copied into ed */
    EVP_MD_CTX *ed;
    EVP_MAC_CTX *mac_tmpl;  /* HMAC: keyed once, duplicated per token */
    char *payload;          /* the payload's JSON */
    unsigned char *sig;     /* room for a DER signature */
    size_t sig_cap;
};

static int jwt_signer_init_hmac(ll_jwt_signer *s, const ll_jwt_key *k) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    s->mac_tmpl = mac ? EVP_MAC_CTX_new(mac) : NULL;
    EVP_MAC_free(mac);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)k->alg->md, 0),
                           OSSL_PARAM_construct_end()};
    return s->mac_tmpl && EVP_MAC_init(s->mac_tmpl, k->secret, k->secret_len, params) ? 0 : -1;
}

static int jwt_signer_init_pkey(ll_jwt_signer *s, const ll_jwt_key *k) {
    s->md = EVP_MD_fetch(NULL, k->alg->md, NULL);
    s->mdctx = EVP_MD_CTX_new();
    s->pctx = EVP_PKEY_CTX_new(k->pkey, NULL);
    if (!s->md || !s->mdctx || !s->pctx || EVP_PKEY_sign_init(s->pctx) != 1 ||
        EVP_PKEY_CTX_set_signature_md(s->pctx, s->md) != 1)
        return -1;
    if (k->alg->kind == LL_JWT_RSA) return EVP_PKEY_CTX_set_rsa_padding(s->pctx, RSA_PKCS1_PADDING) == 1 ? 0 : -1;
    if (k->alg->kind == LL_JWT_PSS) /* RFC 7518: MGF1 with the same digest, a salt as long as it */
        return EVP_PKEY_CTX_set_rsa_padding(s->pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
                       EVP_PKEY_CTX_set_rsa_pss_saltlen(s->pctx, RSA_PSS_SALTLEN_DIGEST) == 1
                   ? 0
                   : -1;
    return 0;
}

static int jwt_signer_init_ed(ll_jwt_signer *s, const ll_jwt_key *k) {
    s->ed_tmpl = EVP_MD_CTX_new();
    s->ed = EVP_MD_CTX_new();
    return s->ed_tmpl && s->ed && EVP_DigestSignInit(s->ed_tmpl, NULL, NULL, NULL, k->pkey) == 1 ? 0 : -1;
}

ll_jwt_signer *ll_jwt_signer_new(ll_jwt_gen *g) {
    ll_jwt_signer *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->g = ll_jwt_gen_ref(g);
    const ll_jwt_key *k = &g->key;
    int size = k->pkey ? EVP_PKEY_get_size(k->pkey) : 0;
    s->sig_cap = k->sig_max > (size_t)size ? k->sig_max : (size_t)size;
    s->sig = malloc(s->sig_cap);
    s->payload = malloc(g->max_len);
    int rc = s->sig && s->payload ? 0 : -1;
    if (rc == 0) {
        if (k->alg->kind == LL_JWT_HMAC) rc = jwt_signer_init_hmac(s, k);
        else if (k->alg->kind == LL_JWT_ED) rc = jwt_signer_init_ed(s, k);
        else rc = jwt_signer_init_pkey(s, k);
    }
    if (rc == 0) return s;
    ll_jwt_signer_free(s);
    return NULL;
}

void ll_jwt_signer_free(ll_jwt_signer *s) {
    if (!s) return;
    EVP_MD_free(s->md);
    EVP_MD_CTX_free(s->mdctx);
    EVP_PKEY_CTX_free(s->pctx);
    EVP_MD_CTX_free(s->ed_tmpl);
    EVP_MD_CTX_free(s->ed);
    EVP_MAC_CTX_free(s->mac_tmpl);
    free(s->payload);
    free(s->sig);
    ll_jwt_gen_free(s->g);
    free(s);
}

/* The payload's JSON into s->payload; returns its length or -1. */
static int jwt_signer_payload(ll_jwt_signer *s) {
    const ll_jwt_gen *g = s->g;
    memcpy(s->payload, g->prefix, g->prefix_len);
    if (g->bare) return (int)g->prefix_len;
    unsigned char u[16];
    if (RAND_bytes(u, sizeof(u)) != 1) return -1;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    char jti[37];
    for (int i = 0, j = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) jti[j++] = '-';
        jti[j++] = hex[u[i] >> 4];
        jti[j++] = hex[u[i] & 15];
    }
    jti[36] = '\0';
    long long iat = (long long)time(NULL);
    const char *comma = g->prefix_len > 1 ? "," : "";
    char *p = s->payload + g->prefix_len;
    size_t room = g->max_len - g->prefix_len;
    int n = g->exp_in > 0 ? snprintf(p, room, "%s\"iat\":%lld,\"exp\":%lld,\"jti\":\"%s\"}", comma, iat,
                                     iat + (long long)g->exp_in, jti)
                          : snprintf(p, room, "%s\"iat\":%lld,\"jti\":\"%s\"}", comma, iat, jti);
    return n > 0 && (size_t)n < room ? (int)(g->prefix_len + (size_t)n) : -1;
}

/* ECDSA's DER SEQUENCE { r, s } as JWS's fixed-size big-endian r || s. */
static int jwt_signer_ec_raw(unsigned char *sig, size_t *len, int bytes) {
    const unsigned char *p = sig;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)*len);
    const BIGNUM *r = NULL, *sv = NULL;
    if (es) ECDSA_SIG_get0(es, &r, &sv);
    int ok = es && BN_bn2binpad(r, sig, bytes) == bytes && BN_bn2binpad(sv, sig + bytes, bytes) == bytes;
    ECDSA_SIG_free(es);
    *len = (size_t)(2 * bytes);
    return ok ? 0 : -1;
}

/* Signs the n bytes at in into s->sig; returns the signature's length or -1. */
static int jwt_signer_signature(ll_jwt_signer *s, const char *in, size_t n) {
    const ll_jwt_alg *a = s->g->key.alg;
    size_t len = s->sig_cap;
    int ok = 0;
    if (a->kind == LL_JWT_HMAC) {
        EVP_MAC_CTX *c = EVP_MAC_CTX_dup(s->mac_tmpl);
        ok = c && EVP_MAC_update(c, (const unsigned char *)in, n) && EVP_MAC_final(c, s->sig, &len, s->sig_cap);
        EVP_MAC_CTX_free(c);
    } else if (a->kind == LL_JWT_ED) {
        ok = EVP_MD_CTX_copy_ex(s->ed, s->ed_tmpl) == 1 &&
             EVP_DigestSign(s->ed, s->sig, &len, (const unsigned char *)in, n) == 1;
    } else {
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned int dlen = 0;
        ok = EVP_DigestInit_ex2(s->mdctx, s->md, NULL) == 1 && EVP_DigestUpdate(s->mdctx, in, n) == 1 &&
             EVP_DigestFinal_ex(s->mdctx, d, &dlen) == 1 && EVP_PKEY_sign(s->pctx, s->sig, &len, d, dlen) == 1 &&
             (a->kind != LL_JWT_EC || jwt_signer_ec_raw(s->sig, &len, a->ec_bytes) == 0);
    }
    return ok ? (int)len : -1;
}

int ll_jwt_signer_sign(ll_jwt_signer *s, char *out, size_t outlen) {
    const ll_jwt_gen *g = s->g;
    if (outlen < g->max_len) return -1;
    int plen = jwt_signer_payload(s);
    if (plen < 0) return -1;
    memcpy(out, g->header_b64, g->header_len);
    size_t n = g->header_len + ll_jwt_b64url(out + g->header_len, (const unsigned char *)s->payload, (size_t)plen);
    int slen = jwt_signer_signature(s, out, n);
    if (slen < 0) return -1;
    out[n++] = '.';
    n += ll_jwt_b64url(out + n, s->sig, (size_t)slen);
    return (int)n;
}
