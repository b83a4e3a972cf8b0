/* histogram.h -- fixed-size, mergeable log-linear histogram (HdrHistogram's
 * layout: integer values, configurable significant digits).
 *
 * Values are non-negative integers (luaload records times in microseconds).
 * Memory depends only on the value range and precision, never on the number
 * of samples. Two histograms with the same parameters merge exactly. Values
 * above the highest trackable value are clamped to it (min/max/sum stay
 * exact). */
#ifndef LL_HISTOGRAM_H
#define LL_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct ll_histogram {
    int64_t lowest;            /* lowest discernible value (>= 1) */
    int64_t highest;           /* highest trackable value */
    int sig_digits;            /* 1..5 */
    int unit_magnitude;
    int sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count;
    int32_t sub_bucket_half_count;
    int64_t sub_bucket_mask;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t total_count;
    int64_t min, max;          /* exact; min = INT64_MAX when empty */
    double sum;                /* exact sum of recorded values (before clamping) */
    int64_t *counts;
} ll_histogram;

/* Returns NULL on bad parameters (lowest < 1, highest < 2*lowest, sig not 1..5). */
ll_histogram *ll_histogram_new(int64_t lowest, int64_t highest, int sig_digits);
void ll_histogram_free(ll_histogram *h);
void ll_histogram_reset(ll_histogram *h);
void ll_histogram_record(ll_histogram *h, int64_t value);          /* negative -> 0 */
void ll_histogram_record_n(ll_histogram *h, int64_t value, int64_t n);
/* Adds src into dst; both must have the same lowest/highest/sig_digits (-1 if not). */
int ll_histogram_merge(ll_histogram *dst, const ll_histogram *src);
/* Value at percentile p in [0,100] (HdrHistogram semantics: the highest value
 * equivalent to the bucket holding the p-th percentile, clamped to max);
 * 0 when empty. p <= 0 gives min, p >= 100 gives max. */
int64_t ll_histogram_percentile(const ll_histogram *h, double p);
double ll_histogram_mean(const ll_histogram *h);
int64_t ll_histogram_min(const ll_histogram *h);  /* 0 when empty */
int64_t ll_histogram_max(const ll_histogram *h);
size_t ll_histogram_memory(const ll_histogram *h);
/* The highest value that counts[i] holds (what a percentile landing in
 * that slot reports), for walking the counts. */
int64_t ll_histogram_slot_value(const ll_histogram *h, int32_t i);

#endif
