/* hashidx.c -- hash to id index with linear probing (see hashidx.h). */
#include "hashidx.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

uint64_t ll_hash_more(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * FNV_PRIME;
    return h;
}

uint64_t ll_hash_bytes(const void *p, size_t n) { return ll_hash_more(FNV_OFFSET, p, n); }

/* The first slot to probe: FNV's high bits are its best mixed. */
static size_t home(uint64_t hash, size_t cap) { return (size_t)(hash ^ (hash >> 29)) & (cap - 1); }

int ll_hashidx_find(const ll_hashidx *x, uint64_t hash, int (*eq)(const void *ud, int id), const void *ud) {
    if (!x->cap) return -1;
    for (size_t i = home(hash, x->cap);; i = (i + 1) & (x->cap - 1)) {
        const ll_hashidx_slot *s = &x->slots[i];
        if (!s->id) return -1;
        if (s->hash == hash && eq(ud, s->id - 1)) return s->id - 1;
    }
}

static void put(ll_hashidx_slot *slots, size_t cap, uint64_t hash, int id1) {
    size_t i = home(hash, cap);
    while (slots[i].id) i = (i + 1) & (cap - 1);
    slots[i].hash = hash;
    slots[i].id = id1;
}

void ll_hashidx_add(ll_hashidx *x, uint64_t hash, int id) {
    if ((x->used + 1) * 2 > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        ll_hashidx_slot *slots = ll_xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < x->cap; i++)
            if (x->slots[i].id) put(slots, cap, x->slots[i].hash, x->slots[i].id);
        free(x->slots);
        x->slots = slots;
        x->cap = cap;
    }
    put(x->slots, x->cap, hash, id + 1);
    x->used++;
}

void ll_hashidx_free(ll_hashidx *x) {
    free(x->slots);
    memset(x, 0, sizeof(*x));
}
