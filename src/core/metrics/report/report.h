/* report.h -- the HTML report: one self-contained file (no network) with
 * the run's header, thresholds, k6's summary tables, checks by group,
 * per-second charts, and the latency distribution and percentile spectrum
 * of the full http_req_duration histogram; uPlot draws the charts. */
#ifndef LL_REPORT_H
#define LL_REPORT_H

#include <stddef.h>

#include "buf.h"
#include "histogram.h"
#include "timeline.h"

typedef struct cJSON cJSON;

/* The report's data: {run, summary, series, slots, spectrum}. */
cJSON *ll_report_data(const cJSON *run, const cJSON *summary, const ll_timeline *tl, const ll_histogram *duration);
/* The page with data built in (gzip, base64), appended to out. 0, or -1
 * with err set. */
int ll_report_page(ll_buf *out, const cJSON *data, char *err, size_t errlen);

/* Writes the page of data to path (through path.tmp, renamed). 0, or -1
 * with a one-line reason in err. */
int ll_report_write_data(const char *path, const cJSON *data, char *err, size_t errlen);

/* Writes the report to path (through path.tmp, renamed). run: the header's
 * fields (script, started, ended, scenarios, segment, seed, version,
 * options); summary: k6's summary data (ll_summary_data); tl and duration
 * may be NULL. 0, or -1 with a one-line reason in err. */
int ll_report_write(const char *path, const cJSON *run, const cJSON *summary, const ll_timeline *tl,
                    const ll_histogram *duration, char *err, size_t errlen);

#endif
