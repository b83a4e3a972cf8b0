/* threshold_set.c -- binds parsed thresholds to metrics and evaluates them
 * (see threshold_set.h; the expression grammar is in thresholds.c). */
#include "threshold_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SELECTOR 16

static int agg_fits(ll_metric_type t, ll_agg a) {
    switch (t) {
    case LL_COUNTER: return a == LL_AGG_COUNT || a == LL_AGG_RATE;
    case LL_GAUGE: return a == LL_AGG_VALUE;
    case LL_RATE: return a == LL_AGG_RATE;
    default: return a == LL_AGG_AVG || a == LL_AGG_MIN || a == LL_AGG_MAX || a == LL_AGG_MED || a == LL_AGG_PERCENTILE;
    }
}

static const char *aggs_of(ll_metric_type t) {
    switch (t) {
    case LL_COUNTER: return "count or rate";
    case LL_GAUGE: return "value";
    case LL_RATE: return "rate";
    default: return "avg, min, max, med or p(N)";
    }
}

int ll_threshold_set_add(ll_threshold_set *set, ll_registry *reg, const char *metric_key, const char *source,
                      int abort_on_fail, uint64_t delay_abort_us, char *err, size_t errlen) {
    char why[256], buf[1024];
    const char *name, *keys[MAX_SELECTOR], *values[MAX_SELECTOR];
    ll_threshold t = {0};
    if (ll_threshold_parse(source, &t.expr, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "invalid threshold '%s' on %s: %s", source, metric_key, why);
        return -1;
    }
    int n = ll_threshold_metric_key_parse(metric_key, buf, sizeof(buf), &name, keys, values, MAX_SELECTOR, why, sizeof(why));
    if (n < 0) {
        snprintf(err, errlen, "invalid threshold metric '%s': %s", metric_key, why);
        return -1;
    }
    int id = ll_registry_find(reg, name);
    if (id < 0 || reg->metrics[id].parent >= 0) {
        snprintf(err, errlen, "invalid threshold on '%s': no metric named '%s' (built-in, or created with "
                              "luaload.metrics in init code)", metric_key, name);
        return -1;
    }
    ll_metric_type type = reg->metrics[id].type;
    if (!agg_fits(type, t.expr.agg)) {
        snprintf(err, errlen, "invalid threshold '%s' on %s: %s is a %s, so expected %s", source, metric_key, name,
                 ll_metric_type_name(type), aggs_of(type));
        return -1;
    }
    if (n > 0) id = ll_registry_submetric(reg, id, keys, values, n);
    if (id < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    reg->metrics[id].hidden = 0; /* a threshold shows it in the summary */
    if (set->n == set->cap) {
        int cap = set->cap ? set->cap * 2 : 8;
        ll_threshold *items = realloc(set->items, (size_t)cap * sizeof(*items));
        if (!items) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        set->items = items;
        set->cap = cap;
    }
    t.metric_key = strdup(metric_key);
    t.source = strdup(source);
    t.metric_id = id;
    t.abort_on_fail = abort_on_fail;
    t.delay_abort_us = delay_abort_us;
    if (!t.metric_key || !t.source) {
        free(t.metric_key);
        free(t.source);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    set->items[set->n++] = t;
    return 0;
}

void ll_threshold_set_free(ll_threshold_set *set) {
    for (int i = 0; i < set->n; i++) {
        free(set->items[i].metric_key);
        free(set->items[i].source);
    }
    free(set->items);
    memset(set, 0, sizeof(*set));
}

double ll_threshold_set_aggregate(const ll_registry *reg, const ll_shard *total, int id, const ll_threshold_expr *e,
                           double elapsed_s) {
    static const ll_value empty = {0};
    const ll_value *v = ll_shard_get(total, id) ? ll_shard_get(total, id) : &empty;
    const ll_histogram *h = v->hist;
    switch (reg->metrics[id].type) {
    case LL_COUNTER:
        if (e->agg == LL_AGG_RATE) return elapsed_s > 0 ? v->sum / elapsed_s : 0;
        return v->sum;
    case LL_GAUGE: return v->sum;
    case LL_RATE: return v->total ? (double)v->passes / (double)v->total : 0;
    case LL_TREND: break;
    }
    if (!h || h->total_count == 0) return 0;
    switch (e->agg) {
    case LL_AGG_AVG: return ll_histogram_mean(h) / 1000.0;
    case LL_AGG_MIN: return (double)ll_histogram_min(h) / 1000.0;
    case LL_AGG_MAX: return (double)ll_histogram_max(h) / 1000.0;
    case LL_AGG_MED: return (double)ll_histogram_percentile(h, 50) / 1000.0;
    default: return (double)ll_histogram_percentile(h, e->percentile) / 1000.0;
    }
}

int ll_threshold_set_evaluate(ll_threshold_set *set, const ll_registry *reg, const ll_shard *total,
                           double elapsed_s, int *abort) {
    int failed = 0;
    *abort = 0;
    for (int i = 0; i < set->n; i++) {
        ll_threshold *t = &set->items[i];
        t->value = ll_threshold_set_aggregate(reg, total, t->metric_id, &t->expr, elapsed_s);
        t->failed = !ll_threshold_holds(&t->expr, t->value);
        if (!t->failed) continue;
        failed++;
        if (t->abort_on_fail && elapsed_s * 1e6 >= (double)t->delay_abort_us) *abort = 1;
    }
    return failed;
}
