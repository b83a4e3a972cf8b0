/* test_histogram.c -- checks ll_histogram against exact statistics of sorted
 * samples (percentiles within 1%, exact min/max/count, mean), merging,
 * parameter validation, empty/clamp behaviour and fixed memory size. */
/* links: ll_metrics */
#include <stddef.h> /* histogram.h uses size_t without including it */
#include "histogram.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSAMPLES 1000000
#define LOWEST 1
#define HIGHEST 3600000000LL /* 1 hour in microseconds */
#define SIG 3

static const double pcts[] = {0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
#define NPCTS (int)(sizeof(pcts) / sizeof(pcts[0]))

static double rnd_unit(void) { /* (0,1), never 0 or 1 */
    return ((double)(tu_rand() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
static double rnd_normal(void) { /* Box-Muller, one value per call */
    return sqrt(-2.0 * log(rnd_unit())) * cos(6.283185307179586 * rnd_unit());
}
static int64_t round_pos(double x) {
    return x < 0 ? 0 : (int64_t)(x + 0.5);
}

static int64_t gen_uniform(void) { return 1 + (int64_t)(tu_rand() % 1000000); }
static int64_t gen_exponential(void) { return round_pos(-2000.0 * log(rnd_unit())); }
static int64_t gen_lognormal(void) { return round_pos(exp(log(5000.0) + 2.0 * rnd_normal())); }
static int64_t gen_bimodal(void) {
    if (tu_rand() % 10 < 8) return round_pos(1500.0 + 200.0 * rnd_normal());  /* fast path */
    return round_pos(exp(log(150000.0) + 0.3 * rnd_normal()));            /* slow path */
}
static int64_t gen_constant(void) { return 123457; }
static int64_t gen_small(void) { return 1 + (int64_t)(tu_rand() % 2048); }

typedef struct {
    const char *name;
    int64_t (*gen)(void);
    int exact; /* percentiles must match exactly */
} dist;

static const dist dists[] = {
    {"uniform", gen_uniform, 0},     {"exponential", gen_exponential, 0},
    {"lognormal", gen_lognormal, 0}, {"bimodal", gen_bimodal, 0},
    {"constant", gen_constant, 1},   {"small-1..2048", gen_small, 1},
};

static int64_t *samples, *sorted;

static void test_distribution(const dist *d) {
    for (int i = 0; i < NSAMPLES; i++) samples[i] = d->gen();
    ll_histogram *h = ll_histogram_new(LOWEST, HIGHEST, SIG);
    if (!tu_check(h != NULL, "%s: ll_histogram_new", d->name)) return;
    for (int i = 0; i < NSAMPLES; i++) ll_histogram_record(h, samples[i]);

    memcpy(sorted, samples, sizeof(int64_t) * NSAMPLES);
    qsort(sorted, NSAMPLES, sizeof(int64_t), tu_cmp_i64);
    long double sum = 0;
    for (int i = 0; i < NSAMPLES; i++) sum += sorted[i];
    double mean = (double)(sum / NSAMPLES);

    for (int k = 0; k < NPCTS; k++) {
        int64_t e = tu_exact_percentile(sorted, NSAMPLES, pcts[k]);
        int64_t g = ll_histogram_percentile(h, pcts[k]);
        double err = e ? fabs((double)(g - e)) / (double)e : (double)(g != e);
        int ok = d->exact ? g == e : err <= 0.01;
        tu_check(ok, "%s: p%g hist=%lld exact=%lld relerr=%.5f", d->name, pcts[k],
                 (long long)g, (long long)e, err);
    }
    double hm = ll_histogram_mean(h);
    tu_check(fabs(hm - mean) <= 1e-9 * fabs(mean), "%s: mean hist=%.6f exact=%.6f", d->name,
             hm, mean);
    tu_check(ll_histogram_min(h) == sorted[0], "%s: min hist=%lld exact=%lld", d->name,
             (long long)ll_histogram_min(h), (long long)sorted[0]);
    tu_check(ll_histogram_max(h) == sorted[NSAMPLES - 1], "%s: max hist=%lld exact=%lld", d->name,
             (long long)ll_histogram_max(h), (long long)sorted[NSAMPLES - 1]);
    tu_check(h->total_count == NSAMPLES, "%s: total_count=%lld", d->name,
             (long long)h->total_count);
    ll_histogram_free(h);
}

static void test_merge(void) {
    for (int i = 0; i < NSAMPLES; i++) samples[i] = gen_bimodal();
    ll_histogram *all = ll_histogram_new(LOWEST, HIGHEST, SIG);
    ll_histogram *merged = ll_histogram_new(LOWEST, HIGHEST, SIG);
    ll_histogram *shard[4];
    for (int s = 0; s < 4; s++) shard[s] = ll_histogram_new(LOWEST, HIGHEST, SIG);
    for (int i = 0; i < NSAMPLES; i++) {
        ll_histogram_record(all, samples[i]);
        ll_histogram_record(shard[i % 4], samples[i]);
    }
    int rc = 0;
    for (int s = 0; s < 4; s++) rc |= ll_histogram_merge(merged, shard[s]);
    tu_check(rc == 0, "merge: 4 shards merged (rc=%d)", rc);
    tu_check(merged->counts_len == all->counts_len &&
                 memcmp(merged->counts, all->counts, sizeof(int64_t) * (size_t)all->counts_len) == 0,
             "merge: counts identical");
    tu_check(merged->total_count == all->total_count, "merge: total %lld == %lld",
             (long long)merged->total_count, (long long)all->total_count);
    tu_check(merged->min == all->min, "merge: min %lld == %lld", (long long)merged->min,
             (long long)all->min);
    tu_check(merged->max == all->max, "merge: max %lld == %lld", (long long)merged->max,
             (long long)all->max);
    tu_check(merged->sum == all->sum, "merge: sum %.0f == %.0f", merged->sum, all->sum);

    ll_histogram *empty = ll_histogram_new(LOWEST, HIGHEST, SIG);
    ll_histogram_merge(merged, empty);
    tu_check(merged->min == all->min && merged->max == all->max &&
                 merged->total_count == all->total_count,
             "merge: merging an empty histogram changes nothing");
    ll_histogram_free(empty);
    for (int s = 0; s < 4; s++) ll_histogram_free(shard[s]);
    ll_histogram_free(merged);
    ll_histogram_free(all);
}

static void test_edges(void) {
    tu_check(ll_histogram_new(0, 1000, 3) == NULL, "params: lowest 0 -> NULL");
    tu_check(ll_histogram_new(-5, 1000, 3) == NULL, "params: lowest -5 -> NULL");
    tu_check(ll_histogram_new(1, 1000, 0) == NULL, "params: sig 0 -> NULL");
    tu_check(ll_histogram_new(1, 1000, 6) == NULL, "params: sig 6 -> NULL");
    tu_check(ll_histogram_new(10, 19, 3) == NULL, "params: highest < 2*lowest -> NULL");
    ll_histogram *ok = ll_histogram_new(10, 20, 3);
    tu_check(ok != NULL, "params: highest == 2*lowest accepted");
    ll_histogram_free(ok);
    ll_histogram *big = ll_histogram_new(1, INT64_MAX, 3);
    tu_check(big != NULL, "params: highest INT64_MAX accepted");
    if (big) {
        ll_histogram_record(big, INT64_MAX);
        tu_check(ll_histogram_percentile(big, 50) == INT64_MAX, "params: INT64_MAX recorded");
        ll_histogram_free(big);
    }

    ll_histogram *a = ll_histogram_new(1, 1000000, 3);
    ll_histogram *b = ll_histogram_new(1, 1000000, 2);
    ll_histogram *c = ll_histogram_new(1, 2000000, 3);
    ll_histogram *d = ll_histogram_new(2, 1000000, 3);
    tu_check(ll_histogram_merge(a, b) == -1, "merge: different sig_digits -> -1");
    tu_check(ll_histogram_merge(a, c) == -1, "merge: different highest -> -1");
    tu_check(ll_histogram_merge(a, d) == -1, "merge: different lowest -> -1");
    ll_histogram_free(b);
    ll_histogram_free(c);
    ll_histogram_free(d);

    tu_check(ll_histogram_percentile(a, 0) == 0 && ll_histogram_percentile(a, 50) == 0 &&
                 ll_histogram_percentile(a, 100) == 0,
             "empty: percentiles are 0");
    tu_check(ll_histogram_min(a) == 0 && ll_histogram_max(a) == 0 && ll_histogram_mean(a) == 0.0,
             "empty: min/max/mean are 0");

    ll_histogram_record(a, -7);
    tu_check(ll_histogram_min(a) == 0 && ll_histogram_max(a) == 0 && a->total_count == 1 &&
                 ll_histogram_percentile(a, 50) == 0,
             "negative: recorded as 0");
    ll_histogram_reset(a);
    tu_check(a->total_count == 0 && ll_histogram_min(a) == 0 && ll_histogram_percentile(a, 50) == 0,
             "reset: empty again");

    ll_histogram_record(a, 5000000000LL); /* above highest */
    tu_check(ll_histogram_max(a) == 5000000000LL && ll_histogram_percentile(a, 100) == 5000000000LL,
             "clamp: max exact (%lld)", (long long)ll_histogram_max(a));
    tu_check(ll_histogram_min(a) == 5000000000LL && ll_histogram_mean(a) == 5e9,
             "clamp: min/mean exact");
    ll_histogram_record(a, 10);
    int64_t p99 = ll_histogram_percentile(a, 99);
    tu_check(p99 >= 1000000 && p99 <= 5000000000LL,
             "clamp: p99 %lld within [highest, max]", (long long)p99);

    ll_histogram *r1 = ll_histogram_new(1, 1000000, 3), *r2 = ll_histogram_new(1, 1000000, 3);
    ll_histogram_record_n(r1, 4321, 1000);
    for (int i = 0; i < 1000; i++) ll_histogram_record(r2, 4321);
    tu_check(memcmp(r1->counts, r2->counts, sizeof(int64_t) * (size_t)r1->counts_len) == 0 &&
                 r1->total_count == r2->total_count && r1->sum == r2->sum,
             "record_n: same as n records");
    ll_histogram_free(r1);
    ll_histogram_free(r2);
    ll_histogram_free(a);
}

static void test_memory(void) {
    ll_histogram *h = ll_histogram_new(LOWEST, HIGHEST, SIG);
    size_t before = ll_histogram_memory(h);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < NSAMPLES; i++) ll_histogram_record(h, samples[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t after = ll_histogram_memory(h);
    tu_check(before == after, "memory: %zu bytes before, %zu after 1e6 records (buckets=%d, counts_len=%d)",
             before, after, h->bucket_count, h->counts_len);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / NSAMPLES;
    printf("info record: %.2f ns/value\n", ns);
    ll_histogram_free(h);
}

int main(void) {
    samples = malloc(sizeof(int64_t) * NSAMPLES);
    sorted = malloc(sizeof(int64_t) * NSAMPLES);
    if (!samples || !sorted) return 2;
    for (size_t i = 0; i < sizeof(dists) / sizeof(dists[0]); i++) test_distribution(&dists[i]);
    test_merge();
    test_edges();
    test_memory();
    free(samples);
    free(sorted);
    return tu_summary();
}
