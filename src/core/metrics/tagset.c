/* tagset.c -- tag set interning for the outputs: the shared, bounded table
 * with its hash index and folding, and the workers' caches (see tagset.h). */
#include "tagset.h"
#include "xmalloc.h"

#include "buf.h"

#include <stdint.h>
#include <stdio.h>
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

void ll_tagsets_init(ll_tagsets *ts) {
    memset(ts, 0, sizeof(*ts));
    pthread_mutex_init(&ts->mu, NULL);
    ts->max = LL_TAGSETS_MAX;
    ts->max_folded = LL_TAGSETS_MAX_FOLDED;
    ts->other = -1;
}

void ll_tagsets_free(ll_tagsets *ts) {
    int n = atomic_load(&ts->n);
    for (int i = 0; i < n; i++) free(ts->sets[i].data);
    free(ts->sets);
    ll_hashidx_free(&ts->index);
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

/* ---- the worker's cache ---- */

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
    int i = (int)(ll_hash_bytes(p, n) & (uint64_t)(c->cap - 1));
    while (c->keys[i]) i = (i + 1) & (c->cap - 1);
    c->keys[i] = p;
    c->lens[i] = n;
    c->ids[i] = id;
    c->used++;
}

/* ---- the shared table (called with ts->mu held) ---- */

typedef struct key {
    const ll_tagsets *ts;
    const char *p;
    size_t len;
} key;

static int same(const void *ud, int id) {
    const key *k = ud;
    const ll_tagset *s = &k->ts->sets[id];
    return s->len == k->len && memcmp(s->data, k->p, k->len) == 0;
}

static int find(const ll_tagsets *ts, const ll_buf *b, uint64_t h) {
    key k = {ts, b->p, b->len};
    return ll_hashidx_find(&ts->index, h, same, &k);
}

/* Adds the serialized set b (a copy) as the next id. */
static int add(ll_tagsets *ts, const ll_buf *b, int ntags, uint64_t h) {
    if (!ts->sets) ts->sets = ll_xcalloc((size_t)(ts->max + ts->max_folded + 1), sizeof(*ts->sets));
    int id = atomic_load_explicit(&ts->n, memory_order_relaxed);
    char *copy = ll_xmalloc(b->len ? b->len : 1);
    memcpy(copy, b->p, b->len);
    ts->sets[id] = (ll_tagset){copy, b->len, ntags};
    ll_hashidx_add(&ts->index, h, id);
    atomic_store_explicit(&ts->n, id + 1, memory_order_release); /* the set is whole before its id is */
    return id;
}

/* b with the values of url and name replaced by "(other)"; 0 when it has
 * neither (folding would not change it). */
static int fold_url_name(const buf *b, buf *out) {
    const char *p = b->b.p;
    int changed = 0;
    for (int i = 0; i < b->ntags; i++) {
        const char *k = p, *v = k + strlen(k) + 1;
        p = v + strlen(v) + 1;
        int fold = strcmp(k, "url") == 0 || strcmp(k, "name") == 0;
        put(out, k);
        put(out, fold ? LL_TAGSETS_OTHER : v);
        changed |= fold;
    }
    out->ntags = b->ntags;
    return changed;
}

/* The one-time warning: which set was the first one folded. */
static void warn(ll_tagsets *ts, const buf *b) {
    if (ts->warned++) return;
    const char *what = "", *p = b->b.p;
    for (int i = 0; i < b->ntags; i++) {
        const char *k = p, *v = k + strlen(k) + 1;
        p = v + strlen(v) + 1;
        if (strcmp(k, "name") == 0 || (!*what && strcmp(k, "url") == 0)) what = v;
    }
    fprintf(stderr,
            "luaload: warning: the outputs have seen %d distinct tag sets; the samples of a new one are written "
            "with url and name \"%s\" (the first: name=%.200s). A URL with an id in it makes a tag set per "
            "request: give such requests a name tag, as http.get(url, { tags = { name = \"item\" } })\n",
            ts->max, LL_TAGSETS_OTHER, *what ? what : "(none)");
}

/* The last-resort set: name and url "(other)" and the registry's tags. */
static int other(ll_tagsets *ts, const ll_registry *reg) {
    if (ts->other >= 0) return ts->other;
    buf o = {{0}, 0};
    collect(&o, "name", LL_TAGSETS_OTHER);
    collect(&o, "url", LL_TAGSETS_OTHER);
    for (int i = 0; i < reg->ntags; i++) collect(&o, reg->tags[i].key, reg->tags[i].value);
    if (!o.b.failed) {
        uint64_t h = ll_hash_bytes(o.b.p, o.b.len);
        int id = find(ts, &o.b, h);
        ts->other = id >= 0 ? id : add(ts, &o.b, o.ntags, h);
    }
    ll_buf_free(&o.b);
    return ts->other;
}

/* The id of a new set past max: its fold, or the last-resort set. */
static int fold(ll_tagsets *ts, const ll_registry *reg, const buf *b) {
    warn(ts, b);
    buf f = {{0}, 0};
    int id = -1;
    if (fold_url_name(b, &f) && !f.b.failed) {
        uint64_t h = ll_hash_bytes(f.b.p, f.b.len);
        id = find(ts, &f.b, h);
        if (id < 0 && atomic_load_explicit(&ts->n, memory_order_relaxed) < ts->max + ts->max_folded)
            id = add(ts, &f.b, f.ntags, h);
    }
    ll_buf_free(&f.b);
    return id >= 0 ? id : other(ts, reg);
}

/* The id of the serialized set in the shared table: found, added, or
 * folded (*folded set). */
static int shared_id(ll_tagsets *ts, const ll_registry *reg, const buf *b, uint64_t h, int *folded) {
    pthread_mutex_lock(&ts->mu);
    int id = find(ts, &b->b, h);
    *folded = 0;
    if (id < 0 && atomic_load_explicit(&ts->n, memory_order_relaxed) < ts->max) {
        id = add(ts, &b->b, b->ntags, h);
    } else if (id < 0) {
        id = fold(ts, reg, b);
        *folded = 1;
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
    uint64_t h = ll_hash_bytes(b->p, b->len);
    int id = cache_find(c, b->p, b->len, h), folded = 0;
    if (id < 0) {
        id = shared_id(ts, reg, &tags, h, &folded);
        if (!folded) {
            cache_put(c, b->p, b->len, id);
            b->p = NULL; /* the cache owns it */
        }
    }
    ll_buf_free(b);
    return id;
}

void ll_tagset_each(const ll_tagsets *ts, int id, ll_tag_fn *fn, void *ud) {
    if (id < 0 || id >= atomic_load_explicit(&((ll_tagsets *)ts)->n, memory_order_acquire)) return;
    const char *p = ts->sets[id].data;
    for (int i = 0; i < ts->sets[id].ntags; i++) {
        const char *k = p;
        const char *v = k + strlen(k) + 1;
        fn(ud, k, v);
        p = v + strlen(v) + 1;
    }
}
