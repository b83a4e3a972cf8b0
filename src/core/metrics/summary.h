/* summary.h -- the end-of-test data (k6's handleSummary shape) built from
 * the merged metrics, and the --summary-export file (k6's legacy format). */
#ifndef LL_SUMMARY_H
#define LL_SUMMARY_H

#include <stddef.h>

#include "metrics.h"
#include "threshold_set.h"

typedef struct cJSON cJSON;

typedef struct ll_summary_opts {
    char **trend_stats;        /* NULL: avg, min, med, max, p(90), p(95) */
    int ntrend_stats;
    const char *time_unit;     /* "", "s", "ms", "us" */
    const ll_threshold_set *thresholds; /* evaluated; may be NULL */
    int no_color;              /* --no-color or NO_COLOR: options.noColor */
} ll_summary_opts;

/* metrics -> type, contains, values (thresholds -> {ok, value}); root_group ->
 * groups, checks; options; state. Trend times are in milliseconds. */
cJSON *ll_summary_data(ll_registry *reg, const ll_shard *total, double duration_s, const ll_summary_opts *o);

/* Writes data in k6's --summary-export format. Returns 0 or -1 (err set). */
int ll_summary_export(const cJSON *data, const char *path, char *err, size_t errlen);

#endif
