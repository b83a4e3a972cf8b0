/* rng.c -- splitmix64, xoshiro256** and the entropy seed (see rng.h). */
#include "rng.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t ll_rng_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ll_rng_seed(uint64_t s[4], uint64_t seed, uint64_t stream) {
    uint64_t x = stream;
    x = seed ^ ll_rng_splitmix64(&x);
    for (int i = 0; i < 4; i++) s[i] = ll_rng_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ll_rng_next(uint64_t s[4]) {
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The smallest mask covering n - 1, redrawn while above it (fewer than two
 * draws on average). */
uint64_t ll_rng_below(uint64_t s[4], uint64_t n) {
    uint64_t mask = n - 1;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t x = ll_rng_next(s) & mask;
    while (x > n - 1) x = ll_rng_next(s) & mask;
    return x;
}

uint64_t ll_rng_entropy_seed(void) {
    uint64_t x = 0;
    ssize_t n = -1;
    do n = getrandom(&x, sizeof(x), 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(x)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t y = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ((uint64_t)getpid() << 32);
        x = ll_rng_splitmix64(&y);
    }
    return x >> 11;
}
