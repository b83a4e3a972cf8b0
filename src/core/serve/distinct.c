/* distinct.c -- `luaload serve`'s count of distinct values, shared by the
 * worker threads (--echo-header).
 *
 * Owns: the 128-bit hash of a value (MurmurHash3 x64_128, fixed seed), and
 * the set of hashes seen, in DISTINCT_SHARDS shards picked by the hash's
 * top bits, each an open-addressing table (linear probing, doubled at 3/4
 * full) behind its own mutex, so threads rarely wait for each other. The
 * set holds at most `limit` hashes in all (an atomic total); a new value
 * past that is not stored and the count stops being exact. Every value
 * also goes into a HyperLogLog of 2^16 registers (1.04/256: a standard
 * error of 0.41%), each shard owning 1024 of them under the same mutex.
 * The count is the set's size while exact, else the larger of the set's
 * size (a lower bound) and the HyperLogLog estimate. A table that cannot
 * grow (out of memory) ends exactness the same way. */
#include "serve_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DISTINCT_SHARDS 64                 /* top 6 bits of h[0] */
#define SHARD_BITS 6
#define HLL_BITS 16                        /* 2^16 registers in all */
#define HLL_PER_SHARD (1 << (HLL_BITS - SHARD_BITS))
#define TABLE_INIT 64                      /* slots of a shard's first table */

typedef struct slot {
    uint64_t a, b;                         /* {0, 0}: empty */
} slot;

typedef struct shard {
    pthread_mutex_t mu;
    slot *slots;
    size_t cap, count;                     /* cap: a power of two, or 0 */
    uint8_t hll[HLL_PER_SHARD];
    char pad[64];                          /* the next shard's mutex off this one's cache line */
} shard;

struct distinct {
    uint64_t limit;
    _Atomic uint64_t total;                /* hashes stored, all shards */
    atomic_int inexact;                    /* a value was not stored */
    shard shards[DISTINCT_SHARDS];
};

/* ---- the hash ---- */

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t fmix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static uint64_t read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The tail's bytes (fewer than 8) as a little-endian word. */
static uint64_t tail64(const unsigned char *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i > 0; i--) v = (v << 8) | p[i - 1];
    return v;
}

void ll_distinct_hash(const void *data, size_t n, uint64_t h[2]) {
    const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
    const unsigned char *p = data;
    uint64_t h1 = 0x6c6c6f61646c6c00ull, h2 = h1; /* the seed */
    size_t blocks = n / 16;
    for (size_t i = 0; i < blocks; i++, p += 16) {
        uint64_t k1 = read64(p), k2 = read64(p + 8);
        h1 ^= rotl(k1 * c1, 31) * c2;
        h1 = (rotl(h1, 27) + h2) * 5 + 0x52dce729;
        h2 ^= rotl(k2 * c2, 33) * c1;
        h2 = (rotl(h2, 31) + h1) * 5 + 0x38495ab5;
    }
    size_t rest = n & 15;
    if (rest > 8) h2 ^= rotl(tail64(p + 8, rest - 8) * c2, 33) * c1;
    if (rest > 0) h1 ^= rotl(tail64(p, rest < 8 ? rest : 8) * c1, 31) * c2;
    h1 ^= (uint64_t)n;
    h2 ^= (uint64_t)n;
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 += h2;
    h2 += h1;
    h[0] = h1;
    h[1] = h2;
    if (h[0] == 0 && h[1] == 0) h[1] = 1; /* {0, 0} marks an empty slot */
}

/* ---- the set ---- */

distinct *ll_distinct_new(uint64_t limit) {
    distinct *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->limit = limit;
    for (int i = 0; i < DISTINCT_SHARDS; i++) pthread_mutex_init(&d->shards[i].mu, NULL);
    return d;
}

void ll_distinct_free(distinct *d) {
    if (!d) return;
    for (int i = 0; i < DISTINCT_SHARDS; i++) {
        pthread_mutex_destroy(&d->shards[i].mu);
        free(d->shards[i].slots);
    }
    free(d);
}

/* The slot holding h, or the empty slot where it belongs. */
static slot *find(slot *slots, size_t cap, uint64_t a, uint64_t b) {
    size_t mask = cap - 1;
    for (size_t i = (size_t)a & mask;; i = (i + 1) & mask) {
        slot *s = &slots[i];
        if ((s->a == a && s->b == b) || (s->a == 0 && s->b == 0)) return s;
    }
}

/* Room for one more below 3/4 full: doubles the table. 0, or -1 out of memory. */
static int grow(shard *s) {
    if (s->cap && (s->count + 1) * 4 <= s->cap * 3) return 0;
    size_t cap = s->cap ? s->cap * 2 : TABLE_INIT;
    slot *slots = calloc(cap, sizeof(*slots));
    if (!slots) return -1;
    for (size_t i = 0; i < s->cap; i++) {
        slot *old = &s->slots[i];
        if (old->a || old->b) *find(slots, cap, old->a, old->b) = *old;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

/* Reserves one of the limit's places in the set. 0, or -1 when full. */
static int take_place(distinct *d) {
    if (atomic_fetch_add_explicit(&d->total, 1, memory_order_relaxed) < d->limit) return 0;
    atomic_fetch_sub_explicit(&d->total, 1, memory_order_relaxed);
    return -1;
}

static void hll_add(shard *s, const uint64_t h[2]) {
    size_t reg = (size_t)(h[0] >> (64 - HLL_BITS)) & (HLL_PER_SHARD - 1);
    uint8_t rank = h[1] ? (uint8_t)(__builtin_clzll(h[1]) + 1) : 65;
    if (rank > s->hll[reg]) s->hll[reg] = rank;
}

/* Stores h in s (not there yet) if the limit and memory allow. 0, or -1. */
static int store(distinct *d, shard *s, const uint64_t h[2]) {
    if (take_place(d) < 0) return -1;
    if (grow(s) < 0) {
        atomic_fetch_sub_explicit(&d->total, 1, memory_order_relaxed);
        return -1;
    }
    slot *at = find(s->slots, s->cap, h[0], h[1]);
    at->a = h[0];
    at->b = h[1];
    s->count++;
    return 0;
}

void ll_distinct_add(distinct *d, const uint64_t h[2]) {
    shard *s = &d->shards[h[0] >> (64 - SHARD_BITS)];
    pthread_mutex_lock(&s->mu);
    hll_add(s, h);
    slot *at = s->cap ? find(s->slots, s->cap, h[0], h[1]) : NULL;
    int seen = at && (at->a || at->b);
    if (!seen && store(d, s, h) < 0) atomic_store_explicit(&d->inexact, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
}

/* The raw HyperLogLog estimate, with linear counting for small counts. */
static double hll_estimate(double sum, size_t zeros) {
    double m = (double)(1 << HLL_BITS);
    double e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros > 0) e = m * log(m / (double)zeros);
    return e;
}

uint64_t ll_distinct_count(distinct *d, int *exact) {
    uint64_t stored = 0;
    double sum = 0;
    size_t zeros = 0;
    for (int i = 0; i < DISTINCT_SHARDS; i++) {
        shard *s = &d->shards[i];
        pthread_mutex_lock(&s->mu);
        stored += s->count;
        for (int r = 0; r < HLL_PER_SHARD; r++) {
            sum += ldexp(1.0, -(int)s->hll[r]);
            zeros += s->hll[r] == 0;
        }
        pthread_mutex_unlock(&s->mu);
    }
    *exact = !atomic_load_explicit(&d->inexact, memory_order_relaxed);
    if (*exact) return stored;
    double e = hll_estimate(sum, zeros);
    uint64_t est = (uint64_t)(e + 0.5);
    return est > stored ? est : stored;
}
