/* test_shard.c -- the metrics registry and per-worker shards
 * (src/core/metrics/metrics.h): recording counters, rates, gauges and trends
 * into two shards and merging them (exact sums and counts, gauge min/max and
 * "last by stamp", histograms within their 3-digit precision), sub-metrics
 * keyed by sample tags and by registry tags, checks, resetting and merging
 * into a reset shard (the engine's snapshot pattern), the emit hook, and the
 * registry's name/id rules. */
/* links: ll_metrics */
#include "metrics.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tag source over a fixed list of key/value pairs ---- */

typedef struct kv {
    const char *const *pairs; /* k0, v0, k1, v1, ... */
    int n;                    /* pairs */
    int gets;                 /* get() calls, to see that matching used it */
} kv;

static const char *kv_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    kv *t = (kv *)ctx;
    t->gets++;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->pairs[2 * i], key) == 0) return t->pairs[2 * i + 1];
    return NULL;
}

static void kv_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const kv *t = ctx;
    for (int i = 0; i < t->n; i++) fn(ud, t->pairs[2 * i], t->pairs[2 * i + 1]);
}

static ll_tag_source src_of(kv *t) { return (ll_tag_source){kv_get, kv_list, t, -1, 0}; }

/* A status tag formatted into buf, as the http module does. */
static const char *status_get(const void *ctx, const char *key, char *buf, size_t len) {
    if (strcmp(key, "status") != 0) return NULL;
    snprintf(buf, len, "%d", *(const int *)ctx);
    return buf;
}

static const ll_value zero_value;
/* The value slot of id in s (a zero value when s never grew that far). */
static const ll_value *val(const ll_shard *s, int id) { return id < s->nvalues ? &s->values[id] : &zero_value; }

static int64_t hist_count(const ll_shard *s, int id) {
    const ll_value *v = val(s, id);
    return v->hist ? v->hist->total_count : 0;
}

/* ---- registry ---- */

static void test_registry(void) {
    ll_registry *reg = ll_registry_new(3);
    if (!tu_check(reg != NULL, "registry: new")) return;
    tu_check(reg->nmetrics == LL_M_BUILTIN_COUNT, "registry: %d built-in metrics", reg->nmetrics);
    tu_check(ll_registry_find(reg, "http_req_duration") == LL_M_HTTP_REQ_DURATION &&
                 ll_registry_find(reg, "checks") == LL_M_CHECKS && ll_registry_find(reg, "vus") == LL_M_VUS &&
                 ll_registry_find(reg, "nope") == -1,
             "registry: find built-ins by name, -1 when absent");
    tu_check(reg->metrics[LL_M_HTTP_REQ_DURATION].type == LL_TREND &&
                 reg->metrics[LL_M_HTTP_REQ_DURATION].contains == LL_CONTAINS_TIME &&
                 reg->metrics[LL_M_HTTP_REQS].type == LL_COUNTER && reg->metrics[LL_M_VUS].type == LL_GAUGE &&
                 reg->metrics[LL_M_CHECKS].type == LL_RATE && reg->metrics[LL_M_DATA_SENT].contains == LL_CONTAINS_DATA,
             "registry: built-in types and contains");
    int c = ll_registry_metric(reg, "my_counter", LL_COUNTER, LL_CONTAINS_DEFAULT);
    tu_check(c == LL_M_BUILTIN_COUNT, "registry: a new metric gets the next id (%d)", c);
    tu_check(ll_registry_metric(reg, "my_counter", LL_COUNTER, LL_CONTAINS_DEFAULT) == c,
             "registry: same name and type -> same id");
    tu_check(ll_registry_metric(reg, "my_counter", LL_GAUGE, LL_CONTAINS_DEFAULT) == -1 &&
                 ll_registry_metric(reg, "my_counter", LL_COUNTER, LL_CONTAINS_DATA) == -1,
             "registry: same name, other type or contains -> -1");
    tu_check(ll_registry_metric(reg, "http_reqs", LL_TREND, LL_CONTAINS_TIME) == -1,
             "registry: a built-in cannot be re-registered with another type");

    const char *k[] = {"status", "method"}, *v[] = {"200", "GET"};
    int s1 = ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, k, v, 1);
    int s2 = ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, k, v, 2);
    tu_check(s1 > c && s2 == s1 + 1, "registry: sub-metrics get new ids (%d, %d)", s1, s2);
    tu_check(s1 >= 0 && strcmp(reg->metrics[s1].name, "http_req_duration{status:200}") == 0 &&
                 strcmp(reg->metrics[s2].name, "http_req_duration{status:200,method:GET}") == 0,
             "registry: sub-metric names are parent{k:v,...} in the order given");
    tu_check(reg->metrics[s1].parent == LL_M_HTTP_REQ_DURATION && reg->metrics[s1].type == LL_TREND &&
                 reg->metrics[s1].contains == LL_CONTAINS_TIME && reg->metrics[s1].nsel == 1 &&
                 reg->metrics[s2].nsel == 2,
             "registry: sub-metric inherits type/contains, knows its parent and selector");
    tu_check(ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, k, v, 1) == s1 &&
                 reg->metrics[LL_M_HTTP_REQ_DURATION].nsubs == 2,
             "registry: the same selector again -> same id, not added twice to the parent");
    tu_check(ll_registry_find(reg, "http_req_duration{status:200}") == s1, "registry: sub-metric found by name");

    int ch0 = ll_registry_check(reg, "", "status is 200", NULL);
    int ch1 = ll_registry_check(reg, "::g", "status is 200", NULL);
    tu_check(ch0 == 0 && ch1 == 1 && ll_registry_check(reg, "", "status is 200", NULL) == 0 && reg->nchecks == 2,
             "registry: checks are keyed by (group, name)");
    int g0 = ll_registry_group(reg, "::a"), g1 = ll_registry_group(reg, "::a::b");
    tu_check(g0 == 0 && g1 == 1 && ll_registry_group(reg, "::a") == 0, "registry: group ids in the order first seen");
    tu_check(strcmp(ll_registry_group_path(reg, g1), "::a::b") == 0 && strcmp(ll_registry_group_path(reg, -1), "") == 0 &&
                 strcmp(ll_registry_group_path(reg, 99), "") == 0,
             "registry: group paths, \"\" for -1 and unknown ids");

    tu_check(ll_registry_add_tag(reg, "env", "dev") == 0 && ll_registry_add_tag(reg, "region", "eu") == 0 &&
                 ll_registry_add_tag(reg, "env", "prod") == 0,
             "registry: add tags");
    tu_check(reg->ntags == 2 && strcmp(reg->tags[0].key, "env") == 0 && strcmp(reg->tags[0].value, "prod") == 0 &&
                 strcmp(reg->tags[1].value, "eu") == 0,
             "registry: add_tag replaces an existing key (2 tags, env=prod)");
    ll_registry_free(reg);
}

/* ---- counters, rates, gauges: exact merges ---- */

static void test_merge_scalars(void) {
    ll_registry *reg = ll_registry_new(3);
    int cnt = ll_registry_metric(reg, "my_counter", LL_COUNTER, LL_CONTAINS_DEFAULT);
    int rate = ll_registry_metric(reg, "my_rate", LL_RATE, LL_CONTAINS_DEFAULT);
    int gauge = ll_registry_metric(reg, "my_gauge", LL_GAUGE, LL_CONTAINS_DEFAULT);
    ll_shard *a = ll_shard_new(reg), *b = ll_shard_new(reg), *total = ll_shard_new(reg);

    for (int i = 1; i <= 100; i++) ll_shard_add(a, cnt, i, NULL);       /* 5050 */
    for (int i = 0; i < 50; i++) ll_shard_add(b, cnt, 0.5, NULL);       /* 25 */
    ll_shard_add(b, cnt, 0, NULL);                                       /* counts as a sample */
    for (int i = 0; i < 100; i++) ll_shard_rate(a, rate, i % 10 < 3, NULL);              /* 30/100 */
    for (int i = 0; i < 10; i++) ll_shard_rate(b, rate, i < 7 ? (i ? -i : 5) : 0, NULL); /* 7/10 */
    ll_shard_add(a, LL_M_HTTP_REQS, 1, NULL);
    ll_shard_add(a, LL_M_HTTP_REQS, 1, NULL);
    ll_shard_add(b, LL_M_HTTP_REQS, 1, NULL);

    ll_shard_set(a, gauge, 5, 100, NULL);
    ll_shard_set(a, gauge, 1, 200, NULL);
    ll_shard_set(a, gauge, 9, 300, NULL); /* a: last 9 @300, min 1, max 9 */
    ll_shard_set(b, gauge, 20, 150, NULL);
    ll_shard_set(b, gauge, -3, 250, NULL); /* b: last -3 @250, min -3, max 20 */

    const ll_value *ga = val(a, gauge);
    tu_check(ga->sum == 9 && ga->min == 1 && ga->max == 9 && ga->stamp == 300 && ga->total == 3,
             "gauge: one shard keeps last 9, min 1, max 9, stamp 300, 3 sets");
    tu_check(val(a, cnt)->sum == 5050 && val(a, cnt)->total == 100, "counter: one shard sums 1..100 = %g",
             val(a, cnt)->sum);

    tu_check(ll_shard_merge(total, a) == 0 && ll_shard_merge(total, b) == 0, "merge: a and b into an empty shard");
    const ll_value *c = val(total, cnt), *r = val(total, rate), *g = val(total, gauge);
    tu_check(c->sum == 5075 && c->total == 151, "merge counter: sum %g (want 5075), %lld samples (want 151)", c->sum,
             (long long)c->total);
    tu_check(r->passes == 37 && r->total == 110, "merge rate: %lld/%lld (want 37/110)", (long long)r->passes,
             (long long)r->total);
    tu_check(val(total, LL_M_HTTP_REQS)->sum == 3 && val(total, LL_M_HTTP_REQS)->total == 3,
             "merge built-in counter http_reqs: 3");
    tu_check(g->sum == 9 && g->stamp == 300, "merge gauge: last is the latest stamp's value (9 @300), got %g @%llu",
             g->sum, (unsigned long long)g->stamp);
    tu_check(g->min == -3 && g->max == 20 && g->total == 5, "merge gauge: min %g max %g over %lld sets (want -3, 20, 5)",
             g->min, g->max, (long long)g->total);

    /* the other order gives the same gauge */
    ll_shard *t2 = ll_shard_new(reg);
    ll_shard_merge(t2, b);
    ll_shard_merge(t2, a);
    const ll_value *g2 = val(t2, gauge);
    tu_check(g2->sum == 9 && g2->stamp == 300 && g2->min == -3 && g2->max == 20 && g2->total == 5,
             "merge gauge: order of merging does not matter (b then a: last %g)", g2->sum);
    tu_check(val(t2, cnt)->sum == 5075 && val(t2, rate)->passes == 37, "merge: b then a, same counter and rate");

    /* later stamp in the shard merged second wins; merging into a non-empty shard */
    ll_shard_set(b, gauge, 42, 400, NULL);
    ll_shard_merge(a, b); /* a: dst with its own samples */
    const ll_value *ga2 = val(a, gauge);
    tu_check(ga2->sum == 42 && ga2->stamp == 400 && ga2->min == -3 && ga2->max == 42 && ga2->total == 6,
             "merge gauge: a later stamp from src replaces dst's last (42 @400, min -3, max 42, 6 sets)");
    tu_check(val(a, cnt)->sum == 5075 && val(a, cnt)->total == 151, "merge counter into a non-empty shard");

    /* an empty shard merges as nothing */
    ll_shard *empty = ll_shard_new(reg);
    ll_shard_merge(total, empty);
    tu_check(val(total, cnt)->sum == 5075 && val(total, rate)->total == 110 && val(total, gauge)->sum == 9 &&
                 val(total, gauge)->min == -3,
             "merge: an empty shard changes nothing");
    /* a gauge never set in src does not disturb dst's min/max */
    ll_shard *only_cnt = ll_shard_new(reg);
    ll_shard_add(only_cnt, cnt, 1, NULL);
    ll_shard_merge(total, only_cnt);
    tu_check(val(total, gauge)->min == -3 && val(total, gauge)->total == 5 && val(total, cnt)->sum == 5076,
             "merge: values src never recorded are left alone");
    ll_shard_free(only_cnt);
    ll_shard_free(empty);
    ll_shard_free(t2);
    ll_shard_free(a);
    ll_shard_free(b);
    ll_shard_free(total);
    ll_registry_free(reg);
}

/* ---- trends: histogram merge and percentiles ---- */

static void test_merge_trends(void) {
    enum { NA = 20000, NB = 30000 };
    ll_registry *reg = ll_registry_new(3);
    ll_shard *a = ll_shard_new(reg), *b = ll_shard_new(reg), *total = ll_shard_new(reg);
    int64_t *all = malloc(sizeof(int64_t) * (NA + NB));
    for (int i = 0; i < NA; i++) { /* fast: 100 us .. 5 ms */
        all[i] = 100 + (int64_t)(tu_rand() % 4900);
        ll_shard_trend(a, LL_M_HTTP_REQ_DURATION, all[i], NULL);
    }
    for (int i = NA; i < NA + NB; i++) { /* slow: 20 ms .. 2 s, log-uniform-ish */
        all[i] = (int64_t)(20000.0 * pow(100.0, (double)(tu_rand() % 1000000) / 1e6));
        ll_shard_trend(b, LL_M_HTTP_REQ_DURATION, all[i], NULL);
    }
    tu_check(hist_count(a, LL_M_HTTP_REQ_DURATION) == NA && hist_count(b, LL_M_HTTP_REQ_DURATION) == NB,
             "trend: each shard's histogram counts its samples");
    tu_check(val(a, LL_M_HTTP_REQ_DURATION)->hist->sig_digits == 3 &&
                 val(a, LL_M_HTTP_REQ_DURATION)->hist->lowest == 1 &&
                 val(a, LL_M_HTTP_REQ_DURATION)->hist->highest == 3600000000ll,
             "trend: histogram is 1 us .. 1 h at the registry's 3 digits");
    tu_check(ll_shard_merge(total, a) == 0 && ll_shard_merge(total, b) == 0, "trend: merge");
    const ll_histogram *h = val(total, LL_M_HTTP_REQ_DURATION)->hist;
    if (!tu_check(h != NULL, "trend: merged shard has a histogram")) return;

    qsort(all, NA + NB, sizeof(int64_t), tu_cmp_i64);
    double sum = 0;
    for (int i = 0; i < NA + NB; i++) sum += (double)all[i];
    tu_check(h->total_count == NA + NB, "trend: merged count %lld", (long long)h->total_count);
    tu_check(ll_histogram_min(h) == all[0] && ll_histogram_max(h) == all[NA + NB - 1], "trend: min %lld max %lld exact",
             (long long)ll_histogram_min(h), (long long)ll_histogram_max(h));
    tu_check(fabs(ll_histogram_mean(h) - sum / (NA + NB)) <= 1e-9 * sum / (NA + NB), "trend: mean %.3f exact",
             ll_histogram_mean(h));
    static const double pcts[] = {1, 10, 25, 39.9, 40, 40.1, 50, 75, 90, 95, 99, 99.9};
    for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
        int64_t e = tu_exact_percentile(all, NA + NB, pcts[k]);
        int64_t got = ll_histogram_percentile(h, pcts[k]);
        /* 3 significant digits: the bucket's highest value, at most 0.1% above */
        tu_check(got >= e && (double)got <= (double)e * 1.001 + 1, "trend: p%g = %lld (exact %lld, rel err %.5f)",
                 pcts[k], (long long)got, (long long)e, (double)(got - e) / (double)e);
    }

    /* the merged histogram is the one that would have recorded everything */
    ll_histogram *direct = ll_histogram_new(1, 3600000000ll, 3);
    for (int i = 0; i < NA + NB; i++) ll_histogram_record(direct, all[i]);
    tu_check(direct->counts_len == h->counts_len &&
                 memcmp(direct->counts, h->counts, sizeof(int64_t) * (size_t)h->counts_len) == 0,
             "trend: merged counts equal a direct recording of all samples");
    ll_histogram_free(direct);

    /* a trend only in src gets a histogram in dst; one only in dst is kept */
    ll_shard *c = ll_shard_new(reg);
    ll_shard_trend(c, LL_M_ITERATION_DURATION, 1234, NULL);
    ll_shard_trend(total, LL_M_HTTP_REQ_WAITING, 77, NULL);
    ll_shard_merge(total, c);
    tu_check(hist_count(total, LL_M_ITERATION_DURATION) == 1 && ll_histogram_max(val(total, LL_M_ITERATION_DURATION)->hist) == 1234,
             "trend: a trend only src has appears in dst");
    tu_check(hist_count(total, LL_M_HTTP_REQ_WAITING) == 1 && hist_count(total, LL_M_HTTP_REQ_DURATION) == NA + NB,
             "trend: dst's other trends unchanged");
    tu_check(hist_count(c, LL_M_ITERATION_DURATION) == 1 && hist_count(a, LL_M_HTTP_REQ_DURATION) == NA,
             "trend: merging leaves src unchanged");

    ll_shard_free(c);
    free(all);
    ll_shard_free(a);
    ll_shard_free(b);
    ll_shard_free(total);
    ll_registry_free(reg);
}

/* ---- sub-metrics: series keyed by tags stay apart ---- */

static void test_submetrics(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_registry_add_tag(reg, "scenario", "default");
    const char *ks[] = {"status"}, *v200[] = {"200"}, *v404[] = {"404"};
    const char *kmg[] = {"method", "status"}, *vmg[] = {"GET", "200"};
    const char *ksc[] = {"scenario"}, *vsc[] = {"default"};
    const char *kex[] = {"expected_response"}, *vex[] = {"true"};
    int d200 = ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, ks, v200, 1);
    int d404 = ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, ks, v404, 1);
    int dget200 = ll_registry_submetric(reg, LL_M_HTTP_REQ_DURATION, kmg, vmg, 2);
    int r200 = ll_registry_submetric(reg, LL_M_HTTP_REQS, ks, v200, 1);
    int rsc = ll_registry_submetric(reg, LL_M_HTTP_REQS, ksc, vsc, 1);
    int fex = ll_registry_submetric(reg, LL_M_HTTP_REQ_FAILED, kex, vex, 1);
    tu_check(d200 >= 0 && d404 >= 0 && dget200 >= 0 && r200 >= 0 && rsc >= 0 && fex >= 0, "sub: registered");

    static const char *const get200[] = {"method", "GET", "status", "200", "expected_response", "true"};
    static const char *const post200[] = {"method", "POST", "status", "200", "expected_response", "true"};
    static const char *const post404[] = {"method", "POST", "status", "404", "expected_response", "false"};
    static const char *const other_sc[] = {"status", "200", "scenario", "other"};
    kv tg = {get200, 3, 0}, tp = {post200, 3, 0}, t4 = {post404, 3, 0}, to = {other_sc, 2, 0};
    ll_tag_source sg = src_of(&tg), sp = src_of(&tp), s4 = src_of(&t4), so = src_of(&to);

    ll_shard *a = ll_shard_new(reg), *b = ll_shard_new(reg), *total = ll_shard_new(reg);
    /* worker a: 30 GET 200 (1000 us) and 20 POST 200 (3000 us) */
    for (int i = 0; i < 30; i++) {
        ll_shard_add(a, LL_M_HTTP_REQS, 1, &sg);
        ll_shard_trend(a, LL_M_HTTP_REQ_DURATION, 1000, &sg);
        ll_shard_rate(a, LL_M_HTTP_REQ_FAILED, 0, &sg);
    }
    for (int i = 0; i < 20; i++) {
        ll_shard_add(a, LL_M_HTTP_REQS, 1, &sp);
        ll_shard_trend(a, LL_M_HTTP_REQ_DURATION, 3000, &sp);
        ll_shard_rate(a, LL_M_HTTP_REQ_FAILED, 0, &sp);
    }
    tu_check(tg.gets > 0, "sub: matching asked the tag source (%d gets)", tg.gets);
    /* worker b: 10 POST 404 (50000 us), 5 samples tagged scenario=other, 4 with no source */
    for (int i = 0; i < 10; i++) {
        ll_shard_add(b, LL_M_HTTP_REQS, 1, &s4);
        ll_shard_trend(b, LL_M_HTTP_REQ_DURATION, 50000, &s4);
        ll_shard_rate(b, LL_M_HTTP_REQ_FAILED, 1, &s4);
    }
    for (int i = 0; i < 5; i++) ll_shard_add(b, LL_M_HTTP_REQS, 1, &so);
    for (int i = 0; i < 4; i++) ll_shard_add(b, LL_M_HTTP_REQS, 1, NULL);
    /* a status formatted into the caller's buffer */
    int status = 200;
    ll_tag_source sf = {status_get, NULL, &status, -1, 0};
    ll_shard_add(b, LL_M_HTTP_REQS, 1, &sf);

    tu_check(hist_count(a, d404) == 0 && hist_count(b, d200) == 0, "sub: each worker only has its own series");
    tu_check(ll_shard_merge(total, a) == 0 && ll_shard_merge(total, b) == 0, "sub: merge");

    tu_check(val(total, LL_M_HTTP_REQS)->sum == 70, "sub: parent http_reqs has all 70 samples (%g)",
             val(total, LL_M_HTTP_REQS)->sum);
    tu_check(val(total, r200)->sum == 56, "sub: http_reqs{status:200} = 30+20+5+1 = 56 (got %g)", val(total, r200)->sum);
    tu_check(val(total, rsc)->sum == 65,
             "sub: http_reqs{scenario:default} matches the registry tag: 70 - 5 tagged 'other' = 65 (got %g)",
             val(total, rsc)->sum);
    tu_check(hist_count(total, LL_M_HTTP_REQ_DURATION) == 60, "sub: parent duration has 60 samples");
    const ll_histogram *h200 = val(total, d200)->hist, *h404 = val(total, d404)->hist, *hg = val(total, dget200)->hist;
    tu_check(h200 && h200->total_count == 50 && ll_histogram_min(h200) == 1000 && ll_histogram_max(h200) == 3000,
             "sub: duration{status:200}: 50 samples, 1000..3000 us");
    tu_check(h404 && h404->total_count == 10 && ll_histogram_min(h404) == 50000 && ll_histogram_max(h404) == 50000,
             "sub: duration{status:404}: 10 samples, all 50000 us");
    tu_check(hg && hg->total_count == 30 && ll_histogram_max(hg) == 1000,
             "sub: duration{method:GET,status:200}: only the 30 GETs");
    tu_check(val(total, LL_M_HTTP_REQ_FAILED)->passes == 10 && val(total, LL_M_HTTP_REQ_FAILED)->total == 60,
             "sub: http_req_failed 10/60");
    tu_check(val(total, fex)->passes == 0 && val(total, fex)->total == 50,
             "sub: http_req_failed{expected_response:true} 0/50");

    /* a metric registered after the shards grew: slots grow on demand */
    int late = -1;
    for (int i = 0; i < 60; i++) {
        char name[32];
        snprintf(name, sizeof(name), "late_%d", i);
        late = ll_registry_metric(reg, name, LL_COUNTER, LL_CONTAINS_DEFAULT);
    }
    int late_id_beyond = late >= a->nvalues && late >= total->nvalues;
    ll_shard *c = ll_shard_new(reg);
    ll_shard_add(c, late, 2.5, NULL);
    ll_shard_add(c, late, 2.5, NULL);
    tu_check(late_id_beyond, "sub: a metric registered late (id %d) is beyond the shards' slots (%d, %d)", late,
             a->nvalues, total->nvalues);
    tu_check(ll_shard_merge(total, c) == 0 && val(total, late)->sum == 5 && val(total, late)->total == 2 &&
                 total->nvalues > late && val(total, LL_M_HTTP_REQS)->sum == 70,
             "sub: merging it grows dst's slots and keeps the old values");
    ll_shard_add(a, late, 1, NULL);
    tu_check(a->nvalues > late && val(a, late)->sum == 1, "sub: recording it grows the recording shard");
    ll_shard_free(c);
    ll_shard_free(a);
    ll_shard_free(b);
    ll_shard_free(total);
    ll_registry_free(reg);
}

/* ---- checks ---- */

static void test_checks(void) {
    ll_registry *reg = ll_registry_new(3);
    int c0 = ll_registry_check(reg, "", "status is 200", NULL);
    int c1 = ll_registry_check(reg, "::login", "body has token", NULL);
    const char *kc[] = {"check"}, *vc[] = {"body has token"};
    int sub = ll_registry_submetric(reg, LL_M_CHECKS, kc, vc, 1);
    static const char *const t0[] = {"check", "status is 200", "group", ""};
    static const char *const t1[] = {"check", "body has token", "group", "::login"};
    kv k0 = {t0, 2, 0}, k1 = {t1, 2, 0};
    ll_tag_source s0 = src_of(&k0), s1 = src_of(&k1);

    ll_shard *a = ll_shard_new(reg), *b = ll_shard_new(reg), *total = ll_shard_new(reg);
    for (int i = 0; i < 4; i++) ll_shard_check(a, c0, i != 3, &s0); /* 3 pass, 1 fail */
    for (int i = 0; i < 2; i++) ll_shard_check(b, c0, 1, &s0);      /* 2 pass */
    for (int i = 0; i < 4; i++) ll_shard_check(b, c1, 0, &s1);      /* 4 fail */
    ll_shard_check(b, c1, 7, &s1);                                   /* nonzero ok: pass */
    tu_check(a->checks[c0][0] == 3 && a->checks[c0][1] == 1, "checks: one shard counts 3 passes, 1 fail");
    ll_shard_merge(total, a);
    ll_shard_merge(total, b);
    tu_check(total->nchecks > c1 && total->checks[c0][0] == 5 && total->checks[c0][1] == 1,
             "checks: merged 'status is 200' 5 passes, 1 fail (got %lld/%lld)", (long long)total->checks[c0][0],
             (long long)total->checks[c0][1]);
    tu_check(total->checks[c1][0] == 1 && total->checks[c1][1] == 4, "checks: merged 'body has token' 1 pass, 4 fails");
    tu_check(val(total, LL_M_CHECKS)->passes == 6 && val(total, LL_M_CHECKS)->total == 11,
             "checks: the checks rate is 6/11 (got %lld/%lld)", (long long)val(total, LL_M_CHECKS)->passes,
             (long long)val(total, LL_M_CHECKS)->total);
    tu_check(val(total, sub)->passes == 1 && val(total, sub)->total == 5, "checks: checks{check:body has token} is 1/5");

    /* a check first seen by a later shard: dst's table grows */
    int c9 = -1;
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof(name), "check %d", i);
        c9 = ll_registry_check(reg, "", name, NULL);
    }
    ll_shard *d = ll_shard_new(reg);
    ll_shard_check(d, c9, 0, NULL);
    tu_check(ll_shard_merge(total, d) == 0 && total->nchecks > c9 && total->checks[c9][1] == 1 &&
                 total->checks[c0][0] == 5,
             "checks: a check id beyond dst's table (%d) merges", c9);
    ll_shard_free(d);
    ll_shard_free(a);
    ll_shard_free(b);
    ll_shard_free(total);
    ll_registry_free(reg);
}

/* ---- reset and merging into a reset shard (engine/worker snapshots) ---- */

static void test_reset(void) {
    ll_registry *reg = ll_registry_new(3);
    int cnt = ll_registry_metric(reg, "c", LL_COUNTER, LL_CONTAINS_DEFAULT);
    int g = ll_registry_metric(reg, "g", LL_GAUGE, LL_CONTAINS_DEFAULT);
    int ch = ll_registry_check(reg, "", "ok", NULL);
    ll_shard *w = ll_shard_new(reg), *snap = ll_shard_new(reg);
    ll_shard_add(w, cnt, 3, NULL);
    ll_shard_set(w, g, 7, 10, NULL);
    ll_shard_set(w, g, 4, 20, NULL);
    ll_shard_rate(w, LL_M_HTTP_REQ_FAILED, 1, NULL);
    ll_shard_trend(w, LL_M_HTTP_REQ_DURATION, 1500, NULL);
    ll_shard_check(w, ch, 1, NULL);

    /* a snapshot holding older, larger values */
    ll_shard_add(snap, cnt, 1000, NULL);
    ll_shard_set(snap, g, -50, 5, NULL);
    ll_shard_set(snap, g, 99, 999, NULL); /* later stamp than w's gauge */
    ll_shard_trend(snap, LL_M_HTTP_REQ_DURATION, 900000, NULL);
    ll_shard_check(snap, ch, 0, NULL);
    ll_histogram *kept = val(snap, LL_M_HTTP_REQ_DURATION)->hist;

    ll_shard_reset(snap);
    int all_zero = 1;
    for (int i = 0; i < snap->nvalues; i++) {
        const ll_value *v = &snap->values[i];
        all_zero &= v->sum == 0 && v->min == 0 && v->max == 0 && v->stamp == 0 && v->passes == 0 && v->total == 0;
        if (v->hist) all_zero &= v->hist->total_count == 0 && v->hist->max == 0 && v->hist->sum == 0;
    }
    for (int i = 0; i < snap->nchecks; i++) all_zero &= snap->checks[i][0] == 0 && snap->checks[i][1] == 0;
    tu_check(all_zero, "reset: every value, histogram and check count is zero");
    tu_check(val(snap, LL_M_HTTP_REQ_DURATION)->hist == kept && ll_histogram_percentile(kept, 50) == 0,
             "reset: the histogram allocation is kept (and empty)");

    ll_shard_merge(snap, w);
    const ll_value *vg = val(snap, g);
    tu_check(val(snap, cnt)->sum == 3 && val(snap, cnt)->total == 1, "reset+merge: counter 3 (old 1000 gone)");
    tu_check(vg->sum == 4 && vg->min == 4 && vg->max == 7 && vg->stamp == 20 && vg->total == 2,
             "reset+merge: gauge last 4, min 4, max 7 (old -50/99 gone), got last %g min %g max %g", vg->sum, vg->min,
             vg->max);
    tu_check(val(snap, LL_M_HTTP_REQ_FAILED)->passes == 1 && val(snap, LL_M_HTTP_REQ_FAILED)->total == 1,
             "reset+merge: rate 1/1");
    tu_check(hist_count(snap, LL_M_HTTP_REQ_DURATION) == 1 && ll_histogram_max(val(snap, LL_M_HTTP_REQ_DURATION)->hist) == 1500 &&
                 ll_histogram_min(val(snap, LL_M_HTTP_REQ_DURATION)->hist) == 1500,
             "reset+merge: trend has only the new 1500 us sample");
    tu_check(snap->checks[ch][0] == 1 && snap->checks[ch][1] == 0, "reset+merge: check counts 1/0");

    /* resetting twice, and resetting a shard that never recorded */
    ll_shard_reset(snap);
    ll_shard_reset(snap);
    ll_shard *fresh = ll_shard_new(reg);
    ll_shard_reset(fresh);
    tu_check(val(snap, cnt)->sum == 0 && fresh->nvalues == 0, "reset: twice, and on a fresh shard, is harmless");
    /* repeated snapshots of a growing worker shard always equal the shard */
    int same = 1;
    for (int round = 0; round < 5; round++) {
        ll_shard_add(w, cnt, 1, NULL);
        ll_shard_trend(w, LL_M_HTTP_REQ_DURATION, 1000 + round, NULL);
        ll_shard_reset(snap);
        ll_shard_merge(snap, w);
        same &= val(snap, cnt)->sum == val(w, cnt)->sum &&
                hist_count(snap, LL_M_HTTP_REQ_DURATION) == hist_count(w, LL_M_HTTP_REQ_DURATION);
    }
    tu_check(same && val(snap, cnt)->sum == 8 && hist_count(snap, LL_M_HTTP_REQ_DURATION) == 6,
             "reset+merge: 5 snapshots each equal the worker shard (counter 8, 6 trend samples)");
    ll_shard_free(fresh);
    ll_shard_free(w);
    ll_shard_free(snap);
    ll_registry_free(reg);
}

/* ---- ll_shard_sample and the emit hook ---- */

typedef struct emitted {
    int n;
    int id[16];
    double v[16];
    uint64_t now[16];
    ll_tag_source *t[16];
} emitted;

static void on_emit(void *ud, int id, double value, uint64_t now, ll_tag_source *t) {
    emitted *e = ud;
    if (e->n < 16) {
        e->id[e->n] = id;
        e->v[e->n] = value;
        e->now[e->n] = now;
        e->t[e->n] = t;
    }
    e->n++;
}

static void test_sample_emit(void) {
    ll_registry *reg = ll_registry_new(3);
    int cnt = ll_registry_metric(reg, "c", LL_COUNTER, LL_CONTAINS_DEFAULT);
    int g = ll_registry_metric(reg, "g", LL_GAUGE, LL_CONTAINS_DEFAULT);
    int r = ll_registry_metric(reg, "r", LL_RATE, LL_CONTAINS_DEFAULT);
    int t = ll_registry_metric(reg, "t", LL_TREND, LL_CONTAINS_TIME);
    const char *ks[] = {"status"}, *vs[] = {"200"};
    int sub = ll_registry_submetric(reg, cnt, ks, vs, 1);
    ll_shard *s = ll_shard_new(reg);
    emitted e = {0};
    s->emit = on_emit;
    s->emit_ud = &e;
    static const char *const p200[] = {"status", "200"};
    kv k = {p200, 1, 0};
    ll_tag_source src = src_of(&k);

    ll_shard_sample(s, cnt, 2.5, 0, &src);
    ll_shard_sample(s, g, 17, 12345, NULL);
    ll_shard_sample(s, r, 0.0, 0, NULL);
    ll_shard_sample(s, r, 3, 0, NULL);
    ll_shard_sample(s, t, 2.5, 0, NULL); /* ms -> 2500 us */
    ll_shard_trend(s, t, 777, NULL);     /* us -> emits 0.777 ms */
    tu_check(val(s, cnt)->sum == 2.5 && val(s, sub)->sum == 2.5, "sample: counter (and its matching sub-metric) 2.5");
    tu_check(val(s, g)->sum == 17 && val(s, g)->stamp == 12345, "sample: gauge 17 stamped 12345");
    tu_check(val(s, r)->passes == 1 && val(s, r)->total == 2, "sample: rate 0 -> fail, 3 -> pass");
    tu_check(hist_count(s, t) == 2 && ll_histogram_max(val(s, t)->hist) == 2500 && ll_histogram_min(val(s, t)->hist) == 777,
             "sample: trend 2.5 ms recorded as 2500 us");
    tu_check(e.n == 6, "emit: one emit per sample, none for sub-metrics (%d)", e.n);
    tu_check(e.id[0] == cnt && e.v[0] == 2.5 && e.t[0] == &src && e.now[0] > 0,
             "emit: counter id/value/tags, now filled in from the clock when 0");
    tu_check(e.id[1] == g && e.v[1] == 17 && e.now[1] == 12345, "emit: gauge keeps the caller's now");
    tu_check(e.v[2] == 0 && e.v[3] == 1, "emit: rate emits 0 and 1");
    tu_check(e.id[4] == t && e.v[4] == 2.5 && fabs(e.v[5] - 0.777) < 1e-12, "emit: trend in ms (2.5, 0.777)");
    ll_shard_free(s);
    ll_registry_free(reg);
}

int main(void) {
    test_registry();
    test_merge_scalars();
    test_merge_trends();
    test_submetrics();
    test_checks();
    test_reset();
    test_sample_emit();
    return tu_summary();
}
