/* test_tagset.c -- tag set interning for the outputs
 * (src/core/metrics/tagset.c): equal tags share an id, different tags do
 * not, the source's order and first-wins duplicates, registry tags
 * (options.tags) added after the sample's own, the per-worker cache, 5,000
 * distinct sets, and several workers interning into one shared table. */
#include "tagset.h"
#include "test_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tag source over key/value pairs (a NULL value: no such tag) ---- */

typedef struct kv {
    const char *const *pairs;
    int n;
    int lists; /* list() calls */
} kv;

static const char *kv_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const kv *t = ctx;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->pairs[2 * i], key) == 0) return t->pairs[2 * i + 1];
    return NULL;
}

static void kv_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    kv *t = (kv *)ctx;
    t->lists++;
    for (int i = 0; i < t->n; i++) fn(ud, t->pairs[2 * i], t->pairs[2 * i + 1]);
}

static ll_tag_source src_of(kv *t) { return (ll_tag_source){kv_get, kv_list, t, -1}; }

/* ll_tagset_each's output as "k=v;k=v;" */
typedef struct listing {
    char s[512];
    int n;
} listing;

static void to_listing(void *ud, const char *key, const char *value) {
    listing *l = ud;
    size_t used = strlen(l->s);
    snprintf(l->s + used, sizeof(l->s) - used, "%s=%s;", key, value);
    l->n++;
}

static const char *list_of(const ll_tagsets *ts, int id, listing *l) {
    l->s[0] = 0;
    l->n = 0;
    ll_tagset_each(ts, id, to_listing, l);
    return l->s;
}

static int intern_pairs(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, const char *const *pairs,
                        int n) {
    kv t = {pairs, n, 0};
    ll_tag_source s = src_of(&t);
    return ll_tagsets_intern(ts, c, reg, &s);
}

static void test_basics(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    ll_tagset_cache c = {0};
    listing l;

    int empty = ll_tagsets_intern(&ts, &c, reg, NULL);
    tu_check(empty == 0 && ts.n == 1 && ts.sets[0].ntags == 0 && ts.sets[0].len == 0,
             "basics: no tags at all is set 0 with 0 tags");
    tu_check(strcmp(list_of(&ts, empty, &l), "") == 0 && l.n == 0, "basics: the empty set lists nothing");
    tu_check(ll_tagsets_intern(&ts, &c, reg, NULL) == empty, "basics: the empty set again -> same id");
    kv none = {NULL, 0, 0};
    ll_tag_source sn = src_of(&none);
    ll_tag_source nolist = {kv_get, NULL, &none, -1};
    tu_check(ll_tagsets_intern(&ts, &c, reg, &sn) == empty && ll_tagsets_intern(&ts, &c, reg, &nolist) == empty,
             "basics: a source with no tags, or without list(), is the empty set");

    static const char *const a[] = {"method", "GET", "status", "200"};
    static const char *const a2[] = {"method", "GET", "status", "200"}; /* other storage, same text */
    static const char *const b[] = {"method", "GET", "status", "404"};
    static const char *const cdiffkey[] = {"method", "GET", "code", "200"};
    static const char *const sub[] = {"method", "GET"};
    int ia = intern_pairs(&ts, &c, reg, a, 2);
    int ia2 = intern_pairs(&ts, &c, reg, a2, 2);
    int ib = intern_pairs(&ts, &c, reg, b, 2);
    int ic = intern_pairs(&ts, &c, reg, cdiffkey, 2);
    int is = intern_pairs(&ts, &c, reg, sub, 1);
    tu_check(ia == 1 && ia2 == ia, "same: the same tags twice (different storage) -> the same id %d", ia);
    tu_check(ib == 2 && ic == 3 && is == 4, "different: another value, another key, a subset -> new ids (%d %d %d)", ib,
             ic, is);
    tu_check(ts.n == 5, "different: 5 sets in the table (%d)", ts.n);
    tu_check(strcmp(list_of(&ts, ia, &l), "method=GET;status=200;") == 0 && l.n == 2 && ts.sets[ia].ntags == 2,
             "each: lists exactly the interned pairs (%s)", l.s);
    tu_check(strcmp(list_of(&ts, ib, &l), "method=GET;status=404;") == 0, "each: set %d is %s", ib, l.s);
    tu_check(strcmp(list_of(&ts, is, &l), "method=GET;") == 0 && l.n == 1, "each: set %d is %s", is, l.s);
    tu_check(strcmp(list_of(&ts, -1, &l), "") == 0 && strcmp(list_of(&ts, ts.n, &l), "") == 0 &&
                 strcmp(list_of(&ts, 1 << 30, &l), "") == 0,
             "each: ids out of range list nothing");

    /* The serialization keeps the source's order (tagset.c does not sort),
     * so a reordered source is a distinct set; both list the same pairs in
     * their own order. Harmless for the outputs, one extra id. */
    static const char *const rev[] = {"status", "200", "method", "GET"};
    int ir = intern_pairs(&ts, &c, reg, rev, 2);
    tu_check(ir != ia && ir == 5, "order: reordered keys are a new set (%d vs %d): the code keeps source order", ir, ia);
    tu_check(strcmp(list_of(&ts, ir, &l), "status=200;method=GET;") == 0, "order: and it lists in its order (%s)", l.s);

    /* duplicates: the first value of a key wins; NULL values are skipped;
     * an empty value is a tag */
    static const char *const dup[] = {"method", "GET", "status", "200", "method", "POST"};
    static const char *const withnull[] = {"method", "GET", "error_code", NULL, "status", "200"};
    static const char *const emptyval[] = {"method", ""};
    tu_check(intern_pairs(&ts, &c, reg, dup, 3) == ia, "dup: a repeated key keeps its first value (same id as %d)", ia);
    tu_check(intern_pairs(&ts, &c, reg, withnull, 3) == ia, "null: a NULL value is no tag (same id as %d)", ia);
    int ie = intern_pairs(&ts, &c, reg, emptyval, 1);
    tu_check(ie == 6 && strcmp(list_of(&ts, ie, &l), "method=;") == 0 && l.n == 1,
             "empty value: method=\"\" is a tag of its own set (%d: %s)", ie, l.s);
    tu_check(ts.n == 7, "table: 7 sets after the duplicates (%d)", ts.n);

    /* serialization is unambiguous: "a"+"bc" vs "ab"+"c" */
    static const char *const x1[] = {"a", "bc"};
    static const char *const x2[] = {"ab", "c"};
    tu_check(intern_pairs(&ts, &c, reg, x1, 1) != intern_pairs(&ts, &c, reg, x2, 1),
             "boundaries: {a:bc} and {ab:c} are different sets");

    ll_tagset_cache_free(&c);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

static void test_registry_tags(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_registry_add_tag(reg, "env", "prod");
    ll_registry_add_tag(reg, "scenario", "default");
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    ll_tagset_cache c = {0};
    listing l;

    int base = ll_tagsets_intern(&ts, &c, reg, NULL);
    tu_check(strcmp(list_of(&ts, base, &l), "env=prod;scenario=default;") == 0 && ts.sets[base].ntags == 2,
             "registry: a sample without tags carries the registry's (%s)", l.s);
    static const char *const s200[] = {"status", "200"};
    int i200 = intern_pairs(&ts, &c, reg, s200, 1);
    tu_check(i200 != base && strcmp(list_of(&ts, i200, &l), "status=200;env=prod;scenario=default;") == 0,
             "registry: the sample's tags first, then the registry's (%s)", l.s);
    static const char *const own_env[] = {"env", "dev", "status", "200"};
    int iown = intern_pairs(&ts, &c, reg, own_env, 2);
    tu_check(strcmp(list_of(&ts, iown, &l), "env=dev;status=200;scenario=default;") == 0 && l.n == 3,
             "registry: a sample's own key wins over the registry's (%s)", l.s);
    /* a sample that itself gives the registry's tags, in the registry's
     * order, serializes the same as a sample without tags */
    static const char *const same_env[] = {"env", "prod", "scenario", "default"};
    tu_check(intern_pairs(&ts, &c, reg, same_env, 2) == base,
             "registry: a sample giving exactly the registry's tags in its order is the base set");

    /* changing a registry tag gives new sets (new serialization) */
    ll_registry_add_tag(reg, "env", "stage");
    int base2 = ll_tagsets_intern(&ts, &c, reg, NULL);
    tu_check(base2 != base && strcmp(list_of(&ts, base2, &l), "env=stage;scenario=default;") == 0,
             "registry: after add_tag replaces env, a new base set (%s)", l.s);
    tu_check(strcmp(list_of(&ts, base, &l), "env=prod;scenario=default;") == 0,
             "registry: the old set keeps its tags (ids are stable)");
    ll_registry_add_tag(reg, "extra", "1");
    int i200b = intern_pairs(&ts, &c, reg, s200, 1);
    tu_check(strcmp(list_of(&ts, i200b, &l), "status=200;env=stage;scenario=default;extra=1;") == 0 && l.n == 4,
             "registry: a third registry tag is appended (%s)", l.s);
    ll_tagset_cache_free(&c);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

static void test_cache(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_tagsets ts, other;
    ll_tagsets_init(&ts);
    ll_tagsets_init(&other);
    ll_tagset_cache c1 = {0}, c2 = {0};
    static const char *const a[] = {"method", "GET", "url", "http://x/"};
    kv t = {a, 2, 0};
    ll_tag_source s = src_of(&t);

    int id1 = ll_tagsets_intern(&ts, &c1, reg, &s);
    tu_check(c1.used == 1 && c1.cap >= 2, "cache: first intern fills the worker's cache (used %d, cap %d)", c1.used,
             c1.cap);
    /* a cache hit answers without the shared table: interning through c1
     * "into" an empty table still returns the cached id and adds nothing */
    int hit = ll_tagsets_intern(&other, &c1, reg, &s);
    tu_check(hit == id1 && other.n == 0, "cache: a known set is answered from the cache, not the table (%d, table %d)",
             hit, other.n);
    int id2 = ll_tagsets_intern(&ts, &c2, reg, &s);
    tu_check(id2 == id1 && ts.n == 1 && c2.used == 1,
             "cache: a second worker's cache finds the same id in the shared table (%d)", id2);
    tu_check(t.lists == 3, "cache: each intern lists the source once (%d)", t.lists);
    ll_tagset_cache_free(&c1);
    tu_check(c1.cap == 0 && c1.used == 0 && c1.keys == NULL, "cache: free empties it");
    tu_check(ll_tagsets_intern(&ts, &c1, reg, &s) == id1 && ts.n == 1, "cache: a freed cache can be used again");
    ll_tagset_cache_free(&c1);
    ll_tagset_cache_free(&c2);
    ll_tagsets_free(&other);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

/* ---- 5,000 distinct sets ---- */

enum { MANY = 5000 };

static void many_tags(int i, char vu[16], char iter[16], char name[32], const char *pairs[8]) {
    snprintf(vu, 16, "%d", i);
    snprintf(iter, 16, "%d", i % 7);
    snprintf(name, 32, "http://h/%d", i * 7919 % 10007);
    pairs[0] = "vu";
    pairs[1] = vu;
    pairs[2] = "iter";
    pairs[3] = iter;
    pairs[4] = "name";
    pairs[5] = name;
    pairs[6] = "method";
    pairs[7] = i % 2 ? "GET" : "POST";
}

static int intern_many(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, int i) {
    char vu[16], iter[16], name[32];
    const char *pairs[8];
    many_tags(i, vu, iter, name, pairs);
    return intern_pairs(ts, c, reg, pairs, 4);
}

static void test_many(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_registry_add_tag(reg, "testid", "t1");
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    ll_tagset_cache c = {0}, fresh = {0};
    int *ids = malloc(sizeof(int) * MANY);
    int seq = 1;
    for (int i = 0; i < MANY; i++) {
        ids[i] = intern_many(&ts, &c, reg, i);
        seq &= ids[i] == i;
    }
    tu_check(seq && ts.n == MANY, "many: 5000 distinct sets get ids 0..4999 (table %d)", ts.n);
    tu_check(c.used == MANY && c.cap >= 2 * MANY && (c.cap & (c.cap - 1)) == 0,
             "many: the cache holds all 5000 (used %d, cap %d, a power of two at most half full)", c.used, c.cap);
    int again = 1;
    for (int i = MANY - 1; i >= 0; i--) again &= intern_many(&ts, &c, reg, i) == ids[i];
    tu_check(again && ts.n == MANY, "many: interning all again (cached) gives the same ids, no new sets");
    int fresh_ok = 1;
    for (int i = 0; i < MANY; i += 3) fresh_ok &= intern_many(&ts, &fresh, reg, i) == ids[i];
    tu_check(fresh_ok && ts.n == MANY, "many: a fresh cache finds the same ids in the shared table");
    int listed = 1, ntags_ok = 1;
    listing l;
    for (int i = 0; i < MANY; i++) {
        char vu[16], iter[16], name[32], want[160];
        const char *pairs[8];
        many_tags(i, vu, iter, name, pairs);
        snprintf(want, sizeof(want), "vu=%s;iter=%s;name=%s;method=%s;testid=t1;", vu, iter, name, pairs[7]);
        listed &= strcmp(list_of(&ts, ids[i], &l), want) == 0 && l.n == 5;
        ntags_ok &= ts.sets[ids[i]].ntags == 5;
    }
    tu_check(listed && ntags_ok, "many: every set lists exactly its 4 tags + the registry's");
    ll_tagset_cache_free(&fresh);
    ll_tagset_cache_free(&c);
    free(ids);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

/* ---- several workers, one shared table ---- */

enum { WORKERS = 4, PER_WORKER = 400 };
typedef struct worker_arg {
    ll_tagsets *ts;
    const ll_registry *reg;
    int w;
    int ids[PER_WORKER];
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    ll_tagset_cache c = {0};
    /* each worker interns the same 400 sets, in its own order, twice */
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < PER_WORKER; k++) {
            static const int mult[WORKERS] = {1, 3, 7, 9}; /* coprime to 400: a permutation */
            int i = (k * mult[a->w] + a->w * 37) % PER_WORKER;
            int id = intern_many(a->ts, &c, a->reg, i);
            if (round == 0) a->ids[i] = id;
            else if (a->ids[i] != id) a->ids[i] = -2;
        }
    ll_tagset_cache_free(&c);
    return NULL;
}

static void test_threads(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    pthread_t th[WORKERS];
    worker_arg *args = calloc(WORKERS, sizeof(worker_arg));
    for (int w = 0; w < WORKERS; w++) {
        args[w] = (worker_arg){.ts = &ts, .reg = reg, .w = w};
        pthread_create(&th[w], NULL, worker, &args[w]);
    }
    for (int w = 0; w < WORKERS; w++) pthread_join(th[w], NULL);
    int agree = 1, in_range = 1;
    for (int i = 0; i < PER_WORKER; i++)
        for (int w = 0; w < WORKERS; w++) {
            agree &= args[w].ids[i] == args[0].ids[i];
            in_range &= args[w].ids[i] >= 0 && args[w].ids[i] < PER_WORKER;
        }
    tu_check(ts.n == PER_WORKER, "threads: 4 workers interning the same 400 sets make 400 (%d)", ts.n);
    tu_check(agree && in_range, "threads: all workers got the same id for each set, stable across rounds");
    int distinct = 1;
    char *seen = calloc(PER_WORKER, 1);
    for (int i = 0; i < PER_WORKER; i++) {
        int id = args[0].ids[i];
        if (id < 0 || id >= PER_WORKER || seen[id]) distinct = 0;
        else seen[id] = 1;
    }
    tu_check(distinct, "threads: the 400 ids are distinct");
    free(seen);
    free(args);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

int main(void) {
    test_basics();
    test_registry_tags();
    test_cache();
    test_many();
    test_threads();
    return tu_summary();
}
