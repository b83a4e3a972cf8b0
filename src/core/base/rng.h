/* rng.h -- the project's pseudo-random numbers: splitmix64 (a stream from
 * a 64-bit counter), xoshiro256** (Blackman and Vigna) seeded through it,
 * and the OS entropy a run's seed comes from when none is given. Not for
 * secrets: tokens and boundaries take getrandom(2) or OpenSSL. */
#ifndef LL_RNG_H
#define LL_RNG_H

#include <stdint.h>

/* The next value of splitmix64 from the counter *x (advanced). */
uint64_t ll_rng_splitmix64(uint64_t *x);

/* s from (seed, stream): splitmix64 started at the seed mixed with the
 * stream, so each stream of one seed gets its own state. */
void ll_rng_seed(uint64_t s[4], uint64_t seed, uint64_t stream);

/* The next value of the xoshiro256** generator s. */
uint64_t ll_rng_next(uint64_t s[4]);

/* Uniform in [0, n), n >= 1, without bias. */
uint64_t ll_rng_below(uint64_t s[4], uint64_t n);

/* 53 bits from getrandom(2) (the clock and the pid without it): exact as
 * a Lua number, so options.seed can take it back. */
uint64_t ll_rng_entropy_seed(void);

#endif
