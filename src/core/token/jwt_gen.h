/* jwt_gen.h -- the inside of a JWT generator, shared by jwt_gen.c (settings,
 * header, claims), jwt_key.c (keys and algorithms) and jwt_signer.c
 * (signing). Not for use outside these three files. */
#ifndef LL_JWT_GEN_H
#define LL_JWT_GEN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

typedef struct evp_pkey_st EVP_PKEY;

typedef enum { LL_JWT_HMAC, LL_JWT_RSA, LL_JWT_PSS, LL_JWT_EC, LL_JWT_ED } ll_jwt_kind;

typedef struct ll_jwt_alg {
    const char *name;  /* "ES256" */
    ll_jwt_kind kind;
    const char *md;    /* OpenSSL's digest name; NULL for EdDSA */
    const char *curve; /* EC: the key's group, "prime256v1" */
    int ec_bytes;      /* EC: bytes of r and of s in the signature */
} ll_jwt_alg;

/* The key or secret and what signs with it. */
typedef struct ll_jwt_key {
    const ll_jwt_alg *alg;
    EVP_PKEY *pkey;          /* RSA, EC, Ed: shared read-only by the signers */
    unsigned char *secret;   /* HMAC */
    size_t secret_len;
    unsigned char *material; /* the PEM's bytes or the secret: the fingerprint's */
    size_t material_len;
    size_t sig_max;          /* bytes of the longest signature */
} ll_jwt_key;

struct ll_jwt_gen {
    atomic_int refs;
    ll_jwt_key key;
    char *header_b64;   /* base64url(header) "." */
    size_t header_len;
    char *prefix;       /* the payload's JSON up to our claims: '{' and the
                           claims given, without the closing '}'; bare: it all */
    size_t prefix_len;
    int bare;
    int64_t exp_in;
    size_t max_len;
    char fingerprint[65];
};

/* Loads s's key or secret and settles the algorithm (jwt_key.c). Returns 0,
 * or -1 with a one-line reason in err. */
int ll_jwt_key_load(ll_jwt_key *k, const ll_jwt_settings *s, char *err, size_t errlen);
void ll_jwt_key_free(ll_jwt_key *k);

/* base64url without padding of n bytes into out (room for 4*ceil(n/3)+1);
 * returns the length written, NUL-terminated (jwt_gen.c). */
size_t ll_jwt_b64url(char *out, const unsigned char *in, size_t n);

#endif
