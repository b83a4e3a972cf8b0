/* jwt_key.c -- a JWT generator's key: the PEM private key read from a file
 * (or given as text) or the HS* secret, the algorithm table, the algorithm
 * inferred from the key when not given, and the check that key and
 * algorithm fit. */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jwt_gen.h"

#define JWT_KEY_MAX (1 << 20) /* a PEM key file larger than this is not one */
#define JWT_ALGS "HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA"

static const ll_jwt_alg jwt_algs[] = {
    {"HS256", LL_JWT_HMAC, "SHA256", NULL, 0},        {"HS384", LL_JWT_HMAC, "SHA384", NULL, 0},
    {"HS512", LL_JWT_HMAC, "SHA512", NULL, 0},        {"RS256", LL_JWT_RSA, "SHA256", NULL, 0},
    {"RS384", LL_JWT_RSA, "SHA384", NULL, 0},         {"RS512", LL_JWT_RSA, "SHA512", NULL, 0},
    {"PS256", LL_JWT_PSS, "SHA256", NULL, 0},         {"PS384", LL_JWT_PSS, "SHA384", NULL, 0},
    {"PS512", LL_JWT_PSS, "SHA512", NULL, 0},         {"ES256", LL_JWT_EC, "SHA256", "prime256v1", 32},
    {"ES384", LL_JWT_EC, "SHA384", "secp384r1", 48},  {"ES512", LL_JWT_EC, "SHA512", "secp521r1", 66},
    {"EdDSA", LL_JWT_ED, NULL, NULL, 0},
};

static const ll_jwt_alg *jwt_key_alg_named(const char *name) {
    for (size_t i = 0; i < sizeof(jwt_algs) / sizeof(jwt_algs[0]); i++)
        if (strcasecmp(name, jwt_algs[i].name) == 0) return &jwt_algs[i];
    return NULL;
}

/* No passphrase prompt: an encrypted key is not read. */
static int jwt_key_no_password(char *buf, int size, int rw, void *u) {
    (void)buf, (void)size, (void)rw, (void)u;
    return -1;
}

/* Reads the PEM text of s->key (a path, or the text itself) into k->material. */
static int jwt_key_read_pem(ll_jwt_key *k, const char *key, char *err, size_t errlen) {
    if (strstr(key, "-----BEGIN")) {
        k->material_len = strlen(key);
        k->material = (unsigned char *)strdup(key);
        if (!k->material) snprintf(err, errlen, "out of memory reading the key");
        return k->material ? 0 : -1;
    }
    FILE *f = fopen(key, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read key '%s': %s", key, strerror(errno));
        return -1;
    }
    k->material = malloc(JWT_KEY_MAX);
    size_t n = k->material ? fread(k->material, 1, JWT_KEY_MAX, f) : 0;
    int bad = !k->material || ferror(f) || n == JWT_KEY_MAX;
    int e = errno;
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "cannot read key '%s': %s", key,
                 !k->material ? "out of memory" : n == JWT_KEY_MAX ? "larger than 1 MiB, not a PEM key" : strerror(e));
        return -1;
    }
    k->material_len = n;
    unsigned char *fit = realloc(k->material, n ? n : 1);
    if (fit) k->material = fit;
    return 0;
}

/* "EC P-256", "RSA 2048", "Ed25519" into buf, for messages. */
static const char *jwt_key_describe(EVP_PKEY *pk, char *buf, size_t len) {
    char group[64] = "";
    switch (EVP_PKEY_get_base_id(pk)) {
    case EVP_PKEY_EC:
        EVP_PKEY_get_group_name(pk, group, sizeof(group), NULL);
        snprintf(buf, len, "EC %s",
                 strcmp(group, "prime256v1") == 0  ? "P-256"
                 : strcmp(group, "secp384r1") == 0 ? "P-384"
                 : strcmp(group, "secp521r1") == 0 ? "P-521"
                                                   : group);
        break;
    case EVP_PKEY_RSA:
    case EVP_PKEY_RSA_PSS: snprintf(buf, len, "RSA %d", EVP_PKEY_get_bits(pk)); break;
    case EVP_PKEY_ED25519: snprintf(buf, len, "Ed25519"); break;
    case EVP_PKEY_ED448: snprintf(buf, len, "Ed448"); break;
    default: snprintf(buf, len, "a %s key", OBJ_nid2sn(EVP_PKEY_get_base_id(pk)));
    }
    return buf;
}

/* The algorithm a key implies, or NULL (an EC curve JWT has no name for). */
static const ll_jwt_alg *jwt_key_infer(EVP_PKEY *pk) {
    char group[64] = "";
    switch (EVP_PKEY_get_base_id(pk)) {
    case EVP_PKEY_EC:
        EVP_PKEY_get_group_name(pk, group, sizeof(group), NULL);
        for (size_t i = 0; i < sizeof(jwt_algs) / sizeof(jwt_algs[0]); i++)
            if (jwt_algs[i].curve && strcmp(group, jwt_algs[i].curve) == 0) return &jwt_algs[i];
        return NULL;
    case EVP_PKEY_RSA: return jwt_key_alg_named("RS256");
    case EVP_PKEY_RSA_PSS: return jwt_key_alg_named("PS256");
    case EVP_PKEY_ED25519:
    case EVP_PKEY_ED448: return jwt_key_alg_named("EdDSA");
    default: return NULL;
    }
}

/* 1 when pk can sign with a */
static int jwt_key_fits(const ll_jwt_alg *a, EVP_PKEY *pk) {
    int id = EVP_PKEY_get_base_id(pk);
    char group[64] = "";
    switch (a->kind) {
    case LL_JWT_RSA: return id == EVP_PKEY_RSA;
    case LL_JWT_PSS: return id == EVP_PKEY_RSA || id == EVP_PKEY_RSA_PSS;
    case LL_JWT_EC:
        if (id != EVP_PKEY_EC) return 0;
        EVP_PKEY_get_group_name(pk, group, sizeof(group), NULL);
        return strcmp(group, a->curve) == 0;
    case LL_JWT_ED: return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448;
    default: return 0;
    }
}

static const char *jwt_key_wants(const ll_jwt_alg *a) {
    switch (a->kind) {
    case LL_JWT_RSA:
    case LL_JWT_PSS: return "an RSA key";
    case LL_JWT_ED: return "an Ed25519 or Ed448 key";
    default: return strcmp(a->name, "ES256") == 0 ? "an EC P-256 key" : strcmp(a->name, "ES384") == 0 ? "an EC P-384 key" : "an EC P-521 key";
    }
}

/* The key given by path or text, shortened for messages. */
static const char *jwt_key_name(const char *key) { return strstr(key, "-----BEGIN") ? "(PEM text)" : key; }

static int jwt_key_load_pem(ll_jwt_key *k, const ll_jwt_settings *s, const ll_jwt_alg *a, char *err, size_t errlen) {
    if (jwt_key_read_pem(k, s->key, err, errlen) != 0) return -1;
    BIO *bio = BIO_new_mem_buf(k->material, (int)k->material_len);
    k->pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, jwt_key_no_password, NULL) : NULL;
    BIO_free(bio);
    char what[64];
    if (!k->pkey) {
        snprintf(err, errlen, "key '%s' is not an unencrypted PEM private key", jwt_key_name(s->key));
    } else if (!a && !(a = jwt_key_infer(k->pkey))) {
        snprintf(err, errlen, "key '%s' is %s, which no JWT algorithm signs with (expected EC P-256, P-384, P-521, "
                              "RSA, Ed25519 or Ed448)", jwt_key_name(s->key), jwt_key_describe(k->pkey, what, sizeof(what)));
    } else if (a->kind == LL_JWT_HMAC) {
        snprintf(err, errlen, "alg %s takes a secret, not a key", a->name);
    } else if (!jwt_key_fits(a, k->pkey)) {
        snprintf(err, errlen, "alg %s needs %s, '%s' is %s", a->name, jwt_key_wants(a), jwt_key_name(s->key),
                 jwt_key_describe(k->pkey, what, sizeof(what)));
    } else {
        k->alg = a;
        int size = EVP_PKEY_get_size(k->pkey); /* the DER signature's bound for EC */
        k->sig_max = a->kind == LL_JWT_EC ? (size_t)(2 * a->ec_bytes) : size > 0 ? (size_t)size : 0;
        if (k->sig_max) return 0;
        snprintf(err, errlen, "key '%s': cannot tell its signature's size", jwt_key_name(s->key));
    }
    return -1;
}

int ll_jwt_key_load(ll_jwt_key *k, const ll_jwt_settings *s, char *err, size_t errlen) {
    memset(k, 0, sizeof(*k));
    const ll_jwt_alg *a = s->alg ? jwt_key_alg_named(s->alg) : NULL;
    int rc = -1;
    if (s->alg && !a) {
        snprintf(err, errlen, "unknown alg '%s' (expected " JWT_ALGS ")", s->alg);
    } else if (s->key && s->secret) {
        snprintf(err, errlen, "give a key or a secret, not both");
    } else if (!s->key && !s->secret) {
        snprintf(err, errlen, "expected a key (a PEM private key file) or a secret");
    } else if (s->key) {
        rc = jwt_key_load_pem(k, s, a, err, errlen);
    } else if (a && a->kind != LL_JWT_HMAC) {
        snprintf(err, errlen, "alg %s needs a key (a PEM private key file), not a secret", a->name);
    } else if (s->secret_len == 0) {
        snprintf(err, errlen, "the secret is empty");
    } else {
        k->alg = a ? a : jwt_key_alg_named("HS256");
        k->secret = malloc(s->secret_len);
        k->material = malloc(s->secret_len);
        if (k->secret && k->material) {
            memcpy(k->secret, s->secret, s->secret_len);
            memcpy(k->material, s->secret, s->secret_len);
            k->secret_len = k->material_len = s->secret_len;
            k->sig_max = EVP_MD_get_size(EVP_get_digestbyname(k->alg->md));
            rc = 0;
        } else {
            snprintf(err, errlen, "out of memory copying the secret");
        }
    }
    if (rc != 0) ll_jwt_key_free(k);
    return rc;
}

void ll_jwt_key_free(ll_jwt_key *k) {
    EVP_PKEY_free(k->pkey);
    if (k->secret) OPENSSL_cleanse(k->secret, k->secret_len);
    if (k->material) OPENSSL_cleanse(k->material, k->material_len);
    free(k->secret);
    free(k->material);
    memset(k, 0, sizeof(*k));
}
