/* warnings.c -- the end-of-run warnings about the instrument itself
 * (warnings.h): saturated workers, dropped iterations, every iteration
 * failed. */
#include "warnings.h"

#include <cJSON.h>
#include <stdio.h>

static void add(cJSON *data, const char *text) {
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(data, "warnings"), cJSON_CreateString(text));
    fprintf(stderr, "luaload: warning: %s\n", text);
}

static int saturated(const ll_worker *w) {
    return !w->abandoned && w->saturated_ns >= LL_WARNINGS_SATURATED_MIN_NS &&
           (double)w->saturated_ns >= LL_WARNINGS_SATURATED_SHARE * (double)w->probed_ns;
}

static void add_saturated(cJSON *data, const ll_worker *workers, int n) {
    int count = 0, most = -1;
    for (int i = 0; i < n; i++) {
        if (!saturated(&workers[i])) continue;
        count++;
        if (most < 0 || workers[i].saturated_ns > workers[most].saturated_ns) most = i;
    }
    if (!count) return;
    const ll_worker *w = &workers[most];
    double sat = (double)w->saturated_ns / 1e9, all = (double)w->probed_ns / 1e9;
    char who[160], text[512];
    if (n == 1)
        snprintf(who, sizeof(who), "the worker was over %d%% busy for %.1fs of %.1fs (%.0f%%)",
                 LL_WORKER_SATURATED_PCT, sat, all, 100 * sat / all);
    else
        snprintf(who, sizeof(who), "%d of %d workers were over %d%% busy for a noticeable part of the run "
                                   "(worker %d the most: %.1fs of %.1fs, %.0f%%)",
                 count, n, LL_WORKER_SATURATED_PCT, most, sat, all, 100 * sat / all);
    snprintf(text, sizeof(text), "%s: the load generator, not the system under test, may have set the pace "
                                 "(see luaload_worker_busy and luaload_loop_lag; use more workers or machines, "
                                 "or lighter iterations)", who);
    add(data, text);
}

static void add_dropped(cJSON *data, const ll_shard *total) {
    const ll_value *v = ll_shard_get(total, LL_M_DROPPED_ITERATIONS);
    if (!v || v->sum <= 0) return;
    char text[400];
    snprintf(text, sizeof(text), "%.0f iteration%s dropped (dropped_iterations): an arrival-rate scenario "
                                 "had no free VU when they were due (raise preAllocatedVUs/maxVUs, or the "
                                 "iterations are slower than planned)",
             v->sum, v->sum == 1 ? " was" : "s were");
    add(data, text);
}

/* Every iteration ended in a script error: the run measured the errors
 * only (k6 exits 0 there, as luaload does unless told otherwise). */
static int add_all_failed(cJSON *data, const ll_worker *workers, int n, const ll_shard *total) {
    const ll_value *v = ll_shard_get(total, LL_M_ITERATIONS);
    int64_t failed = 0;
    for (int i = 0; i < n; i++) {
        if (workers[i].abandoned) continue;
        failed += workers[i].errors.other;
        for (int e = 0; e < workers[i].errors.n; e++) failed += workers[i].errors.items[e].count;
    }
    if (!v || v->sum <= 0 || (double)failed < v->sum) return 0;
    char text[400];
    snprintf(text, sizeof(text), "every iteration (%.0f) failed with a script error: the results measure the "
                                 "errors, not the system under test (see the script errors above; "
                                 "--fail-when-all-iterations-fail makes such a run exit 107)", v->sum);
    add(data, text);
    return 1;
}

int ll_warnings_add(cJSON *data, const ll_worker *workers, int n, const ll_shard *total) {
    if (!data || !cJSON_AddArrayToObject(data, "warnings")) return 0;
    if (workers) add_saturated(data, workers, n);
    add_dropped(data, total);
    return workers ? add_all_failed(data, workers, n, total) : 0;
}
