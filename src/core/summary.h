/* summary.h -- the end-of-test data (k6's handleSummary shape) built from
 * the merged metrics, and the --summary-export file (k6's legacy format). */
#ifndef LL_SUMMARY_H
#define LL_SUMMARY_H

#include <stddef.h>

#include "metrics.h"

typedef struct cJSON cJSON;

/* metrics -> type, contains, values; root_group -> groups, checks;
 * options; state. Trend times are in milliseconds. */
cJSON *ll_summary_data(ll_registry *reg, const ll_shard *total, double duration_s);

/* Writes data in k6's --summary-export format. Returns 0 or -1 (err set). */
int ll_summary_export(const cJSON *data, const char *path, char *err, size_t errlen);

#endif
