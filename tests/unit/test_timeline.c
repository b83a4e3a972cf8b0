/* test_timeline.c -- the report's per-second series (metrics/report/
 * timeline.c): rates and percentiles per point from cumulative snapshots,
 * and the bound: a day of one-second ticks keeps at most
 * LL_TIMELINE_MAX_POINTS points, with no request lost when neighbours merge. */
/* links: ll_metrics */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#include "metrics.h"
#include "test_util.h"
#include "timeline.h"

static double sum_array(const cJSON *a, const cJSON *t) {
    double s = 0, prev = 0;
    for (int i = 0; i < cJSON_GetArraySize(a); i++) {
        double end = cJSON_GetArrayItem(t, i)->valuedouble;
        s += cJSON_GetArrayItem(a, i)->valuedouble * (end - prev); /* per second * the point's length */
        prev = end;
    }
    return s;
}

int main(void) {
    ll_registry *reg = ll_registry_new(3);
    ll_shard *cum = ll_shard_new(reg);
    ll_timeline *tl = ll_timeline_new(reg);
    /* a day: 100 requests of 2 ms and 1 failed per second */
    const int seconds = 86400;
    for (int s = 1; s <= seconds; s++) {
        for (int k = 0; k < 100; k++) {
            ll_shard_add(cum, LL_M_HTTP_REQS, 1, NULL);
            ll_shard_trend(cum, LL_M_HTTP_REQ_DURATION, 2000, NULL);
            ll_shard_rate(cum, LL_M_HTTP_REQ_FAILED, k == 0, NULL);
        }
        ll_timeline_tick(tl, cum, (double)s);
    }
    cJSON *j = ll_timeline_json(tl);
    const cJSON *t = cJSON_GetObjectItem(j, "t"), *reqs = cJSON_GetObjectItem(j, "reqs");
    int n = cJSON_GetArraySize(t);
    tu_check(n > 0 && n <= LL_TIMELINE_MAX_POINTS, "a day of ticks keeps %d points (at most %d)", n, LL_TIMELINE_MAX_POINTS);
    tu_check(cJSON_GetArrayItem(t, n - 1)->valuedouble == seconds, "the last point ends at the day's end");
    double total = sum_array(reqs, t);
    tu_check(total > seconds * 100.0 - 0.5 && total < seconds * 100.0 + 0.5, "no request lost in the merges: %.1f", total);
    tu_check(cJSON_GetArrayItem(reqs, n / 2)->valuedouble == 100, "a merged point's rate is still 100/s");
    tu_check(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "failed"), 3)->valuedouble == 0.01, "the failed rate: 1%%");
    double p99 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "p99"), 7)->valuedouble;
    tu_check(p99 >= 1.99 && p99 <= 2.01, "p99 of a point in ms: %g", p99);
    cJSON_Delete(j);
    ll_timeline_free(tl);
    ll_shard_free(cum);
    ll_registry_free(reg);
    return tu_summary();
}
