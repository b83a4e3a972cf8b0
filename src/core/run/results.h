/* results.h -- the outputs the run writes itself from the merged snapshots
 * (never from the samples, so they cost the VUs nothing and drop nothing):
 * --out hdrlog=FILE for luaload merge, --out html=FILE, the report. */
#ifndef LL_RESULTS_H
#define LL_RESULTS_H

#include "config.h"
#include "metrics.h"
#include "run.h"
#include "tally.h"

typedef struct cJSON cJSON;
typedef struct ll_results ll_results;

/* Before the script's init code: checks that every file the run will write
 * can be (--summary-export, --setup-data-out, --out json=/csv=/html=, the
 * web dashboard's export), finds hdrlog= and html= in cfg->outputs
 * (at most one each) and opens the hdrlog (emptied, its old sidecar
 * removed); *out is NULL when there are none. *others counts the other
 * outputs. 0, or an exit code after a one-line error. */
int ll_results_open(ll_results **out, const ll_config *cfg, ll_registry *reg, int *others);
/* Once the options are read, before the scenarios are split: what this part
 * of the test is (identity.h). 0, or an exit code after a one-line error. */
int ll_results_identify(ll_results *r, const ll_config *cfg, const char *target);
/* At the scenarios' start (run->t0). */
int ll_results_start(ll_results *r, const ll_run *run);
/* Whether the engine must merge snapshots every second for them, and the
 * workers count requests by name (the report's table, a part's sidecar). */
int ll_results_wanted(const ll_results *r);
/* Every second: the merged snapshot, taken t_s after the start, and the
 * workers' tallies so far (or NULL). */
void ll_results_tick(ll_results *r, const ll_shard *snap, double t_s, const ll_tally *tally);
/* The run is over: the series' last point, the hdrlog's last interval and
 * its sidecar, with how the run ended (run's flags, abandoned) and the
 * series and names for merge's report (tally: the final one, or NULL). 0,
 * or an exit code. */
int ll_results_end(ll_results *r, ll_run *run, const ll_config *cfg, const ll_shard *total, double elapsed,
                   int abandoned, const ll_tally *tally);
/* The report, with k6's summary data and the final tally (or NULL), after
 * ll_results_end. 0, or an exit code. */
int ll_results_report(ll_results *r, const cJSON *data, const ll_shard *total, double elapsed,
                      const ll_tally *tally);
/* Frees r; an hdrlog still open is closed without a sidecar. */
void ll_results_free(ll_results *r);

#endif
