/* test_tagset.c -- tag set interning for the outputs
 * (src/core/metrics/tagset.c): equal tags share an id, different tags do
 * not, the source's order and first-wins duplicates, registry tags
 * (options.tags) added after the sample's own, the per-worker cache, 5,000
 * distinct sets, several workers interning into one shared table, and the
 * bound: past max sets a new one is folded (url and name "(other)", then
 * the one "other" set), the table and the caches stop growing, the warning
 * comes once, and the sets admitted before keep their ids. */
/* links: ll_metrics */
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

static ll_tag_source src_of(kv *t) { return (ll_tag_source){kv_get, kv_list, t, -1, 0}; }

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
    ll_tag_source nolist = {kv_get, NULL, &none, -1, 0};
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


/* ---- the bound: folding past max sets ---- */

static int intern_url(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, const char *method, int i) {
    char url[64];
    snprintf(url, sizeof(url), "http://h/item/%d", i);
    const char *pairs[] = {"method", method, "url", url, "name", url, "status", "200"};
    return intern_pairs(ts, c, reg, pairs, 4);
}

static void test_fold(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_registry_add_tag(reg, "testid", "t1");
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    tu_check(ts.max == LL_TAGSETS_MAX && ts.max_folded == LL_TAGSETS_MAX_FOLDED && ts.other == -1,
             "fold: the default bound is %d sets and %d folded ones", ts.max, ts.max_folded);
    ts.max = 8;
    ts.max_folded = 3;
    ll_tagset_cache c = {0};
    listing l;
    tu_captured cap = tu_capture_stderr();

    int seq = 1;
    for (int i = 0; i < 8; i++) seq &= intern_url(&ts, &c, reg, "GET", i) == i;
    tu_check(seq && ts.n == 8 && c.used == 8, "fold: 8 distinct sets fill the table (ids 0..7, %d sets)", ts.n);

    int f1 = intern_url(&ts, &c, reg, "GET", 100);
    tu_check(f1 == 8 && strcmp(list_of(&ts, f1, &l), "method=GET;url=(other);name=(other);status=200;testid=t1;") == 0,
             "fold: the 9th set is folded: url and name \"(other)\", the other tags kept (%d: %s)", f1, l.s);
    tu_check(intern_url(&ts, &c, reg, "GET", 101) == f1 && intern_url(&ts, &c, reg, "GET", 100) == f1 && ts.n == 9,
             "fold: other URLs with the same other tags share the folded set (%d sets)", ts.n);
    tu_check(c.used == 8, "fold: folded sets are not cached by their own tags (cache %d)", c.used);
    int f2 = intern_url(&ts, &c, reg, "POST", 102);
    tu_check(f2 == 9 && strcmp(list_of(&ts, f2, &l), "method=POST;url=(other);name=(other);status=200;testid=t1;") == 0,
             "fold: another method folds to a set of its own (%d: %s)", f2, l.s);
    tu_check(intern_url(&ts, &c, reg, "GET", 3) == 3, "fold: a set admitted before the bound keeps its id");
    ll_tagset_cache fresh = {0};
    tu_check(intern_url(&ts, &fresh, reg, "GET", 5) == 5 && fresh.used == 1,
             "fold: ... also for another worker's cache, which caches it");
    ll_tagset_cache_free(&fresh);

    /* the folded sets have a bound too: then the one "other" set */
    int f3 = intern_url(&ts, &c, reg, "PUT", 103);
    int o1 = intern_url(&ts, &c, reg, "DELETE", 104);
    tu_check(f3 == 10 && o1 == 11 && ts.other == 11 && ts.n == 12,
             "fold: past 3 folded sets, the last-resort set (%d %d, other %d, %d sets)", f3, o1, ts.other, ts.n);
    tu_check(strcmp(list_of(&ts, o1, &l), "name=(other);url=(other);testid=t1;") == 0,
             "fold: the last-resort set is name and url \"(other)\" and the registry's tags (%s)", l.s);
    static const char *const noname[] = {"check", "id 1 ok", "group", ""};
    tu_check(intern_pairs(&ts, &c, reg, noname, 2) == o1, "fold: a new set without url or name goes there too");
    tu_check(intern_url(&ts, &c, reg, "PUT", 105) == f3 && intern_url(&ts, &c, reg, "GET", 106) == f1,
             "fold: the folded sets made before are still used");

    /* many more: nothing grows */
    int bounded = 1;
    for (int i = 1000; i < 21000; i++) {
        int id = intern_url(&ts, &c, reg, i % 2 ? "GET" : "PATCH", i);
        bounded &= id >= ts.max && id <= 11;
    }
    tu_check(bounded && ts.n == 12 && c.used == 8 && ts.index.used == 12,
             "fold: 20,000 more distinct sets: all folded, still 12 sets, cache 8, index %zu", ts.index.used);
    tu_check(ts.warned > 0, "fold: the table knows it warned");
    int warnings = tu_release_stderr(cap, "distinct tag sets");
    tu_check(warnings == 1, "fold: one warning for all the folding (%d)", warnings);

    ll_tagset_cache_free(&c);
    ll_tagsets_free(&ts);
    ll_registry_free(reg);
}

/* several workers folding at once: every worker gets the same id for a
 * set, the table stays within its bound */
enum { FOLD_WORKERS = 4, FOLD_SETS = 600 };
typedef struct fold_arg {
    ll_tagsets *ts;
    const ll_registry *reg;
    int w;
    int ids[FOLD_SETS];
} fold_arg;

static void *fold_worker(void *p) {
    fold_arg *a = p;
    ll_tagset_cache c = {0};
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < FOLD_SETS; k++) {
            int i = a->w % 2 ? FOLD_SETS - 1 - k : k; /* half the workers from the other end */
            int id = intern_url(a->ts, &c, a->reg, i % 3 ? "GET" : "POST", i);
            if (round == 0) a->ids[i] = id;
            else if (a->ids[i] != id) a->ids[i] = -2;
        }
    ll_tagset_cache_free(&c);
    return NULL;
}

static void test_fold_threads(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_tagsets ts;
    ll_tagsets_init(&ts);
    ts.max = 100;
    ts.max_folded = 10;
    tu_captured cap = tu_capture_stderr();
    pthread_t th[FOLD_WORKERS];
    fold_arg *args = calloc(FOLD_WORKERS, sizeof(fold_arg));
    for (int w = 0; w < FOLD_WORKERS; w++) {
        args[w] = (fold_arg){.ts = &ts, .reg = reg, .w = w};
        pthread_create(&th[w], NULL, fold_worker, &args[w]);
    }
    for (int w = 0; w < FOLD_WORKERS; w++) pthread_join(th[w], NULL);
    int warnings = tu_release_stderr(cap, "distinct tag sets");
    int agree = 1, admitted = 0, folded = 0;
    for (int i = 0; i < FOLD_SETS; i++) {
        for (int w = 0; w < FOLD_WORKERS; w++) agree &= args[w].ids[i] == args[0].ids[i] && args[w].ids[i] >= 0;
        admitted += args[0].ids[i] >= 0 && args[0].ids[i] < 100;
        folded += args[0].ids[i] >= 100;
    }
    tu_check(agree, "fold threads: 4 workers agree on every set's id, stable across rounds");
    tu_check(admitted == 100 && folded == FOLD_SETS - 100 && ts.n == 102,
             "fold threads: 100 sets admitted, %d folded into 2 sets (GET, POST), table %d", folded, ts.n);
    tu_check(warnings == 1, "fold threads: one warning (%d)", warnings);
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
    test_fold();
    test_fold_threads();
    return tu_summary();
}
