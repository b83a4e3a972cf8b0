/* report.h -- the HTML report: one self-contained file (no network) with
 * the run's header, thresholds, k6's summary tables, checks by group,
 * per-second charts, and the latency distribution and percentile spectrum
 * of the full http_req_duration histogram; uPlot draws the charts. */
#ifndef LL_REPORT_H
#define LL_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "histogram.h"
#include "metrics.h"
#include "timeline.h"

typedef struct cJSON cJSON;

/* The report's data: {run, summary, series, slots, spectrum}; the callers
 * add "scenarios" (ll_report_scenarios) and "names" (ll_tally_names_json). */
cJSON *ll_report_data(const cJSON *run, const cJSON *summary, const ll_timeline *tl, const ll_histogram *duration);
/* The scenarios' table: [{name, reqs, rps, failed (0..1), p50, p95, p99
 * (ms), iterations}] from s, with one scenario the whole test's metrics,
 * else their sub-metrics {scenario:NAME} (results.c registers them). */
cJSON *ll_report_scenarios(ll_registry *reg, const ll_shard *s, const char *const *names, int n, double elapsed);
/* The page with data built in (gzip, base64), appended to out. 0, or -1
 * with err set. */
int ll_report_page(ll_buf *out, const cJSON *data, char *err, size_t errlen);

/* Writes the page of data to path (through path.tmp, renamed). 0, or -1
 * with a one-line reason in err. */
int ll_report_write_data(const char *path, const cJSON *data, char *err, size_t errlen);

#endif
