/* hashidx.h -- an index from 64-bit hashes to small int ids, for the tables
 * that keep their keys themselves (tag sets, check and group names).
 *
 * Open addressing with linear probing, kept at most half full, so a look-up
 * costs O(1) however many keys there are. Each slot holds the key's hash
 * beside its id: a probe compares hashes first and asks the caller to
 * compare keys (eq) only when they are equal, and growing never rehashes a
 * key. Not thread-safe: the owner locks around it. */
#ifndef LL_HASHIDX_H
#define LL_HASHIDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ll_hashidx_slot {
    uint64_t hash;
    int id; /* id + 1; 0: empty */
} ll_hashidx_slot;

typedef struct ll_hashidx {
    ll_hashidx_slot *slots;
    size_t cap, used; /* cap: 0 or a power of two */
} ll_hashidx;

/* FNV-1a of n bytes; ll_hash_more continues a hash over another piece. */
uint64_t ll_hash_bytes(const void *p, size_t n);
uint64_t ll_hash_more(uint64_t h, const void *p, size_t n);

/* The id added with hash whose key eq(ud, id) says is the one sought, or
 * -1. */
int ll_hashidx_find(const ll_hashidx *x, uint64_t hash, int (*eq)(const void *ud, int id), const void *ud);
/* Adds id (>= 0) under hash; the caller has checked it is not there. */
void ll_hashidx_add(ll_hashidx *x, uint64_t hash, int id);
void ll_hashidx_free(ll_hashidx *x);

#endif
