/* jwt_cache.h -- tokens signed ahead of a test, on every core, into a
 * cache directory, and found there again by the next run with the same
 * settings (jwt_cache.c).
 *
 * The directory is $XDG_CACHE_HOME/luaload/jwt, else ~/.cache/luaload/jwt.
 * Each file holds one token per line and is named
 * ALG-FINGERPRINT-COUNT-START.jwt: FINGERPRINT (32 hex digits) is the
 * start of ll_jwt_gen_fingerprint (the settings and the key's bytes),
 * COUNT its tokens, START the unix time generation began (the oldest iat).
 * A file is written as FINGERPRINT.tmp.PID and renamed when complete, so
 * an interrupted generation leaves no file that looks like a cache (the
 * next run removes the temporary file of a process that is gone).
 * FINGERPRINT.lock serializes the threads and processes that want the
 * same tokens: one generates, the others then find its file. */
#ifndef LL_JWT_CACHE_H
#define LL_JWT_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

typedef struct ll_jwt_cache_opts {
    const char *dir;        /* NULL: ll_jwt_cache_default_dir */
    int threads;            /* signing threads; 0: one per online core */
    int quiet;              /* 1: nothing on stderr */
    const atomic_int *stop; /* generation gives up when *stop becomes non-zero; NULL: never */
} ll_jwt_cache_opts;

/* The default directory into out. Returns 0, or -1 when neither
 * XDG_CACHE_HOME (absolute) nor HOME is set. */
int ll_jwt_cache_default_dir(char *out, size_t outlen);

/* Makes sure the cache holds at least n tokens of g and puts the file's
 * path in path. A file with n or more tokens of the same fingerprint is
 * reused, unless g has exp_in and half of it has passed since the file's
 * START; otherwise n tokens are generated on o->threads threads (a new
 * file replaces the fingerprint's others). On stderr, unless quiet, the
 * first time in the process for a fingerprint, one of:
 *   luaload: jwt: N tokens from the cache PATH
 *   luaload: jwt: generating N ALG tokens on T threads into DIR
 *   luaload: jwt: generated N tokens in S s (R/s, R/s per thread)
 * and, while generating and when stderr is a terminal, a progress line.
 * Returns 0, or -1 with a one-line reason in err. */
int ll_jwt_cache_ensure(ll_jwt_gen *g, uint64_t n, const ll_jwt_cache_opts *o, char *path, size_t pathlen,
                        char *err, size_t errlen);

/* Removes the cache's files (only files named as above) from dir (NULL:
 * the default), then dir itself when that leaves it empty. Returns how
 * many files it removed (0: there was no cache), or -1 with err set. */
int ll_jwt_cache_clear(const char *dir, char *err, size_t errlen);

#endif
