/* threshold_set.h -- the run's thresholds: each bound to its (sub-)metric,
 * checked against that metric's type before the run, evaluated on merged
 * metrics every second and at the end. */
#ifndef LL_THRESHOLD_SET_H
#define LL_THRESHOLD_SET_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "threshold.h"

typedef struct ll_threshold {
    char *metric_key;          /* as written: "http_req_duration{status:200}" */
    char *source;              /* as written: "p(95)<200" */
    int metric_id;
    ll_threshold_expr expr;
    int abort_on_fail;
    uint64_t delay_abort_us;   /* delayAbortEval */
    int failed;                /* at the last evaluation */
    double value;              /* the aggregated value it was compared with */
} ll_threshold;

typedef struct ll_threshold_set {
    ll_threshold *items;
    int n, cap;
} ll_threshold_set;

/* Parses source and binds it to metric_key (registering the sub-metric),
 * which must name an existing metric whose type has that aggregation.
 * Returns 0, or -1 with a one-line message quoting the threshold in err. */
int ll_threshold_set_add(ll_threshold_set *set, ll_registry *reg, const char *metric_key, const char *source,
                      int abort_on_fail, uint64_t delay_abort_us, char *err, size_t errlen);
void ll_threshold_set_free(ll_threshold_set *set);

/* Evaluates every threshold on total (merged shards) after elapsed_s of
 * test time. Returns how many failed; *abort is set when one that failed
 * has abortOnFail and its delayAbortEval has passed. */
int ll_threshold_set_evaluate(ll_threshold_set *set, const ll_registry *reg, const ll_shard *total,
                           double elapsed_s, int *abort);

/* The value of aggregation e of metric id in total, in the metric's unit
 * (milliseconds for time). */
double ll_threshold_set_aggregate(const ll_registry *reg, const ll_shard *total, int id, const ll_threshold_expr *e,
                           double elapsed_s);

#endif
