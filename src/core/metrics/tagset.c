/* tagset.c -- tag set interning for the outputs (see tagset.h). */
#include "tagset.h"
#include "xmalloc.h"

#include "buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    ll_buf b;  /* "key\0value\0..." */
    int ntags;
} buf;

/* Appends s with its NUL. */
static void put(buf *t, const char *s) { ll_buf_append(&t->b, s, strlen(s) + 1); }

/* Whether the serialized tags in b already have key. */
static int has_key(const buf *t, const char *key) {
    size_t off = 0;
    for (int i = 0; i < t->ntags; i++) {
        const char *k = t->b.p + off;
        off += strlen(k) + 1;
        if (strcmp(k, key) == 0) return 1;
        off += strlen(t->b.p + off) + 1;
    }
    return 0;
}

static void collect(void *ud, const char *key, const char *value) {
    buf *b = ud;
    if (!value || has_key(b, key)) return;
    put(b, key);
    put(b, value);
    b->ntags++;
}

static uint64_t hash(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

void ll_tagsets_init(ll_tagsets *ts) {
    memset(ts, 0, sizeof(*ts));
    pthread_mutex_init(&ts->mu, NULL);
}

void ll_tagsets_free(ll_tagsets *ts) {
    for (int i = 0; i < ts->n; i++) free(ts->sets[i].data);
    free(ts->sets);
    pthread_mutex_destroy(&ts->mu);
    memset(ts, 0, sizeof(*ts));
}

void ll_tagset_cache_free(ll_tagset_cache *c) {
    for (int i = 0; i < c->cap; i++) free(c->keys[i]);
    free(c->keys);
    free(c->ids);
    free(c->lens);
    memset(c, 0, sizeof(*c));
}

static int cache_find(const ll_tagset_cache *c, const char *p, size_t n, uint64_t h) {
    if (!c->cap) return -1;
    for (int i = (int)(h & (uint64_t)(c->cap - 1));; i = (i + 1) & (c->cap - 1)) {
        if (!c->keys[i]) return -1;
        if (c->lens[i] == n && memcmp(c->keys[i], p, n) == 0) return c->ids[i];
    }
}

static void cache_put(ll_tagset_cache *c, char *p, size_t n, int id);

static void cache_grow(ll_tagset_cache *c) {
    ll_tagset_cache old = *c;
    int cap = old.cap ? old.cap * 2 : 64;
    c->keys = ll_xcalloc((size_t)cap, sizeof(char *));
    c->ids = ll_xcalloc((size_t)cap, sizeof(int));
    c->lens = ll_xcalloc((size_t)cap, sizeof(size_t));
    c->cap = cap;
    c->used = 0;
    for (int i = 0; i < old.cap; i++)
        if (old.keys[i]) cache_put(c, old.keys[i], old.lens[i], old.ids[i]);
    free(old.keys);
    free(old.ids);
    free(old.lens);
}

/* Takes ownership of p. */
static void cache_put(ll_tagset_cache *c, char *p, size_t n, int id) {
    if ((c->used + 1) * 2 > c->cap) cache_grow(c);
    int i = (int)(hash(p, n) & (uint64_t)(c->cap - 1));
    while (c->keys[i]) i = (i + 1) & (c->cap - 1);
    c->keys[i] = p;
    c->lens[i] = n;
    c->ids[i] = id;
    c->used++;
}

/* The id of the serialized set in the shared table, adding it if new. */
static int shared_id(ll_tagsets *ts, const ll_buf *b, int ntags) {
    int id = -1;
    pthread_mutex_lock(&ts->mu);
    for (int i = ts->n - 1; i >= 0 && id < 0; i--)
        if (ts->sets[i].len == b->len && memcmp(ts->sets[i].data, b->p, b->len) == 0) id = i;
    if (id < 0 && ts->n == ts->cap) {
        int cap = ts->cap ? ts->cap * 2 : 64;
        ts->sets = ll_xrealloc(ts->sets, (size_t)cap * sizeof(*ts->sets));
        ts->cap = cap;
    }
    if (id < 0) {
        char *copy = ll_xmalloc(b->len ? b->len : 1);
        memcpy(copy, b->p, b->len);
        ts->sets[ts->n] = (ll_tagset){copy, b->len, ntags};
        id = ts->n++;
    }
    pthread_mutex_unlock(&ts->mu);
    return id;
}

int ll_tagsets_intern(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, ll_tag_source *t) {
    buf tags = {{0}, 0};
    if (t && t->list) t->list(t->ctx, collect, &tags);
    for (int i = 0; i < reg->ntags; i++) collect(&tags, reg->tags[i].key, reg->tags[i].value);
    ll_buf *b = &tags.b;
    if (!b->p) ll_buf_append(b, "", 0); /* no tags at all: still a key */
    if (b->failed) {
        ll_buf_free(b);
        return -1;
    }
    uint64_t h = hash(b->p, b->len);
    int id = cache_find(c, b->p, b->len, h);
    if (id < 0) {
        id = shared_id(ts, b, tags.ntags);
        cache_put(c, b->p, b->len, id);
        b->p = NULL; /* the cache owns it */
    }
    ll_buf_free(b);
    return id;
}

void ll_tagset_each(const ll_tagsets *ts, int id, ll_tag_fn *fn, void *ud) {
    if (id < 0 || id >= ts->n) return;
    const char *p = ts->sets[id].data;
    for (int i = 0; i < ts->sets[id].ntags; i++) {
        const char *k = p;
        const char *v = k + strlen(k) + 1;
        fn(ud, k, v);
        p = v + strlen(v) + 1;
    }
}
