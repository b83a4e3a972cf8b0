/* jwt.h -- JSON Web Tokens made from settings: a generator (ll_jwt_gen,
 * read-only once made, shared by threads) holds the key or secret, the
 * algorithm and the fixed parts of every token; a signer (ll_jwt_signer,
 * one per thread) holds the OpenSSL contexts and signs fresh tokens, each
 * with its own iat, exp and jti (jwt_gen.c). Algorithms: HS256/384/512 (a
 * secret), RS256/384/512 and PS256/384/512 (RSA), ES256/384/512 (EC P-256,
 * P-384, P-521), EdDSA (Ed25519, Ed448). */
#ifndef LL_JWT_H
#define LL_JWT_H

#include <stddef.h>
#include <stdint.h>

typedef struct ll_jwt_settings {
    const char *key;      /* a PEM private key: a file's path, or the PEM text itself */
    const char *secret;   /* or the HS* secret: secret_len bytes */
    size_t secret_len;
    const char *alg;      /* NULL: from the key (EC P-256 ES256, P-384 ES384, P-521 ES512,
                             RSA RS256, Ed25519/Ed448 EdDSA), HS256 for a secret */
    const char *kid;      /* the header's kid; NULL: none */
    const char *sub, *aud, *iss; /* claims set over those of `claims`; NULL: none */
    int64_t exp_in;       /* seconds: exp = iat + exp_in; 0: no exp of ours */
    const char *claims;   /* a JSON object of more claims, or NULL */
    int bare;             /* 1: the claims as given, no iat, exp or jti (jwt.sign) */
} ll_jwt_settings;

typedef struct ll_jwt_gen ll_jwt_gen;
typedef struct ll_jwt_signer ll_jwt_signer;

/* A generator for s (whose strings are copied), or NULL with a one-line
 * reason in err: "cannot read key 'k.pem': No such file or directory",
 * "alg ES384 needs an EC P-384 key, 'k.pem' is EC P-256", "unknown alg
 * 'XS256' (expected ...)", "claims: expected a JSON object". */
ll_jwt_gen *ll_jwt_gen_new(const ll_jwt_settings *s, char *err, size_t errlen);
/* Another reference to g (atomic): g is freed at its last ll_jwt_gen_free. */
ll_jwt_gen *ll_jwt_gen_ref(ll_jwt_gen *g);
void ll_jwt_gen_free(ll_jwt_gen *g);
/* The algorithm's JWT name: "ES256". */
const char *ll_jwt_gen_alg(const ll_jwt_gen *g);
/* The buffer a token needs, its NUL included. */
size_t ll_jwt_gen_max_len(const ll_jwt_gen *g);
/* exp_in of the settings. */
int64_t ll_jwt_gen_exp_in(const ll_jwt_gen *g);
/* 64 hex digits: SHA-256 of the settings and of the key's (or secret's)
 * bytes, not of the key file's path. Two generators with the same
 * fingerprint make interchangeable tokens (the cache's key). */
const char *ll_jwt_gen_fingerprint(const ll_jwt_gen *g);
/* Signs one token into out (NUL-terminated). Thread-safe: it makes and
 * frees a signer each call, so a loop should keep a signer per thread.
 * Returns the token's length, or -1 (outlen too small, OpenSSL failed). */
int ll_jwt_gen_sign(const ll_jwt_gen *g, char *out, size_t outlen);

/* A signer of g's tokens for one thread at a time; holds a reference to
 * g. NULL when OpenSSL cannot make its contexts. */
ll_jwt_signer *ll_jwt_signer_new(ll_jwt_gen *g);
void ll_jwt_signer_free(ll_jwt_signer *s);
/* As ll_jwt_gen_sign, on s's contexts. */
int ll_jwt_signer_sign(ll_jwt_signer *s, char *out, size_t outlen);

#endif
