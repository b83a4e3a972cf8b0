/* histogram.c -- fixed-size log-linear latency histogram (see histogram.h).
 *
 * Owns: the bucket layout (HdrHistogram-style), recording, merging, and the
 * percentile/mean/min/max queries. Counts live in the same allocation as the
 * struct, so one histogram is one malloc and its size never changes.
 *
 * Layout: values are split into buckets that double in width. Every bucket
 * has sub_bucket_count linear sub-buckets; bucket 0 uses all of them, later
 * buckets only their upper half (the lower half overlaps the previous
 * bucket). With sub_bucket_count >= 2*10^sig every value is stored with at
 * least sig significant decimal digits. */
#include <stddef.h> /* histogram.h uses size_t without including it */
#include "histogram.h"
#include "xmalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Index into counts[] for a value already clamped to [0, highest]. */
static inline int32_t counts_index(const ll_histogram *h, int64_t v) {
    int pow2ceil = 64 - __builtin_clzll((uint64_t)(v | h->sub_bucket_mask));
    int bucket = pow2ceil - h->unit_magnitude - (h->sub_bucket_half_count_magnitude + 1);
    int32_t sub = (int32_t)(v >> (bucket + h->unit_magnitude));
    return ((bucket + 1) << h->sub_bucket_half_count_magnitude) + (sub - h->sub_bucket_half_count);
}

/* Highest value that maps to the same counts[] slot as index i. */
static int64_t highest_equivalent(const ll_histogram *h, int32_t i) {
    int bucket = (i >> h->sub_bucket_half_count_magnitude) - 1;
    int64_t sub = (i & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (bucket < 0) {
        sub -= h->sub_bucket_half_count;
        bucket = 0;
    }
    int shift = bucket + h->unit_magnitude;
    return (sub << shift) + (((int64_t)1 << shift) - 1); /* no overflow at 2^63-1 */
}

ll_histogram *ll_histogram_new(int64_t lowest, int64_t highest, int sig_digits) {
    if (lowest < 1 || sig_digits < 1 || sig_digits > 5 || highest / 2 < lowest)
        return NULL;

    int64_t largest_single_unit = 2;
    for (int i = 0; i < sig_digits; i++) largest_single_unit *= 10;
    int sub_bucket_count_magnitude = 0;
    while (((int64_t)1 << sub_bucket_count_magnitude) < largest_single_unit)
        sub_bucket_count_magnitude++;
    int half_mag = sub_bucket_count_magnitude - 1;
    int unit_mag = 63 - __builtin_clzll((uint64_t)lowest);
    if (unit_mag + half_mag > 61) return NULL;

    int64_t sub_bucket_count = (int64_t)1 << (half_mag + 1);
    int64_t smallest_untrackable = sub_bucket_count << unit_mag;
    int64_t buckets = 1;
    while (smallest_untrackable <= highest) {
        if (smallest_untrackable > INT64_MAX / 2) {
            buckets++;
            break;
        }
        smallest_untrackable <<= 1;
        buckets++;
    }
    int64_t counts_len = (buckets + 1) * (sub_bucket_count / 2);
    if (counts_len > INT32_MAX) return NULL;

    ll_histogram *h = ll_xcalloc(1, sizeof(*h) + (size_t)counts_len * sizeof(int64_t));
    h->lowest = lowest;
    h->highest = highest;
    h->sig_digits = sig_digits;
    h->unit_magnitude = unit_mag;
    h->sub_bucket_half_count_magnitude = half_mag;
    h->sub_bucket_count = (int32_t)sub_bucket_count;
    h->sub_bucket_half_count = (int32_t)(sub_bucket_count / 2);
    h->sub_bucket_mask = (sub_bucket_count - 1) << unit_mag;
    h->bucket_count = (int32_t)buckets;
    h->counts_len = (int32_t)counts_len;
    h->counts = (int64_t *)(h + 1); /* sizeof(*h) is a multiple of 8 */
    h->min = INT64_MAX;
    return h;
}

void ll_histogram_free(ll_histogram *h) {
    free(h);
}

void ll_histogram_reset(ll_histogram *h) {
    memset(h->counts, 0, (size_t)h->counts_len * sizeof(int64_t));
    h->total_count = 0;
    h->min = INT64_MAX;
    h->max = 0;
    h->sum = 0;
}

void ll_histogram_record_n(ll_histogram *h, int64_t value, int64_t n) {
    if (n <= 0) return;
    if (value < 0) value = 0;
    int64_t v = value > h->highest ? h->highest : value;
    h->counts[counts_index(h, v)] += n;
    h->total_count += n;
    h->sum += (double)value * (double)n;
    if (value < h->min) h->min = value;
    if (value > h->max) h->max = value;
}

void ll_histogram_record(ll_histogram *h, int64_t value) {
    if (value < 0) value = 0;
    int64_t v = value > h->highest ? h->highest : value;
    h->counts[counts_index(h, v)]++;
    h->total_count++;
    h->sum += (double)value;
    if (value < h->min) h->min = value;
    if (value > h->max) h->max = value;
}

int ll_histogram_merge(ll_histogram *dst, const ll_histogram *src) {
    if (dst->lowest != src->lowest || dst->highest != src->highest ||
        dst->sig_digits != src->sig_digits)
        return -1;
    for (int32_t i = 0; i < dst->counts_len; i++) dst->counts[i] += src->counts[i];
    dst->total_count += src->total_count;
    dst->sum += src->sum;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    return 0;
}

int64_t ll_histogram_percentile(const ll_histogram *h, double p) {
    if (h->total_count == 0) return 0;
    if (!(p > 0)) return h->min; /* also catches NaN */
    if (p >= 100) return h->max;

    double t = ceil(p / 100.0 * (double)h->total_count);
    int64_t target = t < 1 ? 1 : t > (double)h->total_count ? h->total_count : (int64_t)t;
    int64_t seen = 0;
    for (int32_t i = 0; i < h->counts_len; i++) {
        seen += h->counts[i];
        if (seen >= target) {
            int64_t v = highest_equivalent(h, i);
            /* v < min only if every value was clamped above highest */
            return v > h->max ? h->max : v < h->min ? h->min : v;
        }
    }
    return h->max; /* not reached: counts sum to total_count */
}

double ll_histogram_mean(const ll_histogram *h) {
    return h->total_count ? h->sum / (double)h->total_count : 0.0;
}

int64_t ll_histogram_min(const ll_histogram *h) {
    return h->total_count ? h->min : 0;
}

int64_t ll_histogram_max(const ll_histogram *h) {
    return h->total_count ? h->max : 0;
}

size_t ll_histogram_memory(const ll_histogram *h) {
    return sizeof(*h) + (size_t)h->counts_len * sizeof(int64_t);
}

int64_t ll_histogram_slot_value(const ll_histogram *h, int32_t i) {
    return highest_equivalent(h, i);
}
