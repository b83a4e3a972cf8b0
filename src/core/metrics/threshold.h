/* threshold.h -- k6 threshold expressions: parsing and evaluation.
 *
 * A threshold is "<aggregation> <operator> <number>", e.g. "p(99.9)<300",
 * "avg < 100", "rate<0.01", "count>10", "value==5". Aggregations: count,
 * rate, value, avg, min, max, med, p(N) with 0 <= N <= 100 (fractional N
 * allowed). Operators: < <= > >= == === != (=== is ==). Whitespace around
 * tokens is allowed. Times are compared in milliseconds, as in k6. */
#ifndef LL_THRESHOLD_H
#define LL_THRESHOLD_H

#include <stddef.h>

typedef enum {
    LL_AGG_COUNT,
    LL_AGG_RATE,
    LL_AGG_VALUE,
    LL_AGG_AVG,
    LL_AGG_MIN,
    LL_AGG_MAX,
    LL_AGG_MED,
    LL_AGG_PERCENTILE
} ll_agg;

typedef enum { LL_OP_LT, LL_OP_LE, LL_OP_GT, LL_OP_GE, LL_OP_EQ, LL_OP_NE } ll_op;

typedef struct ll_threshold_expr {
    ll_agg agg;
    double percentile; /* for LL_AGG_PERCENTILE, 0..100 */
    ll_op op;
    double target;
} ll_threshold_expr;

/* Parses src. Returns 0, or -1 with a one-line reason in err (what was
 * expected and where), e.g. "unknown aggregation 'p95' (expected count,
 * rate, value, avg, min, max, med or p(N))". */
int ll_threshold_parse(const char *src, ll_threshold_expr *out, char *err, size_t errlen);

/* Whether value <op> target holds. */
int ll_threshold_holds(const ll_threshold_expr *e, double value);

/* "p(99.9)" style name of the aggregation, for messages and summaries. */
const char *ll_threshold_agg_name(const ll_threshold_expr *e, char *buf, size_t len);

/* A metric key with an optional sub-metric selector:
 *   "http_req_duration", "http_req_duration{status:200}",
 *   "http_req_duration{name:login, method:POST}".
 * Splits it into the metric name and up to max_tags key/value pairs,
 * written into buf (NUL-separated; the pointers point into buf). Values may
 * be quoted ('..' or ".."). Returns the number of pairs, or -1 with a
 * one-line reason in err. */
int ll_threshold_metric_key_parse(const char *key, char *buf, size_t buflen, const char **name,
                        const char **keys, const char **values, int max_tags, char *err, size_t errlen);

#endif
