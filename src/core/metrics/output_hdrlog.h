/* output_hdrlog.h -- `--out hdrlog=FILE`: the run's results in a form that
 * merges exactly (`luaload merge`).
 *
 * FILE is an HdrHistogram interval log (format v1.2): one line per Trend
 * and Trend sub-metric per second, tagged, each the histogram of that
 * second's samples in the V2 compressed encoding (HISTFAAA...), values in
 * microseconds (thousandths of the metric's unit). HdrHistogram's own tools
 * read it. FILE.json, the sidecar, holds what a histogram cannot: every
 * metric's exact end values (counters, rates, gauges, and each Trend's
 * count, sum, min and max), the checks and groups, the thresholds, the
 * histogram parameters, and the caller's description of the run (script,
 * options, segment, versions).
 *
 * Intervals are cut from cumulative snapshots (the workers' published
 * shards): each line is what a snapshot holds beyond the one before, and
 * the last is cut from the run's final totals, so the lines of one tag add
 * up to exactly the run's histogram for it. */
#ifndef LL_OUTPUT_HDRLOG_H
#define LL_OUTPUT_HDRLOG_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "threshold_set.h"

typedef struct cJSON cJSON;
typedef struct ll_hdrlog ll_hdrlog;

#define LL_HDRLOG_FORMAT "luaload-hdrlog/1" /* the sidecar's "format" */

/* Opens path before the run (an empty log; an old sidecar beside it is
 * removed, so that a run that fails before its end leaves nothing merge
 * would take). NULL with a one-line reason in err. */
ll_hdrlog *ll_hdrlog_open(const char *path, const ll_registry *reg, char *err, size_t errlen);

/* Writes the log's header when the scenarios start. start_unix_ms and
 * start_mono_ns are that instant on the two clocks; gauge stamps are
 * turned into Unix time with them. */
int ll_hdrlog_start(ll_hdrlog *l, int64_t start_unix_ms, uint64_t start_mono_ns);

/* Writes one interval ending t_s seconds after the start (when the
 * snapshots were taken): what cumulative holds beyond what the last call
 * (or the start) had. */
int ll_hdrlog_interval(ll_hdrlog *l, const ll_shard *cumulative, double t_s);

/* Writes the last interval (from total, the run's final totals), then the
 * sidecar with the thresholds and run (an object the caller keeps: what the
 * part is and how it ended) -- to FILE.json.tmp, then renamed, so that no
 * reader sees half of it -- and frees l. 0, or -1 with a one-line reason in err (l is freed either way).
 * With total NULL (a run that failed before its end) it only closes the log
 * and writes no sidecar, so that merge refuses the part. */
int ll_hdrlog_close(ll_hdrlog *l, const ll_shard *total, double t_s, const ll_threshold_set *th, const cJSON *run,
                    char *err, size_t errlen);

/* The tag a metric's lines carry: its name with the characters a log line
 * cannot hold in a tag (',', ' ', control bytes) as '_'. */
void ll_hdrlog_tag(const char *name, char *out, size_t len);
/* A count in a sidecar (luaload merge reads them): key's value in o as a
 * whole number from 0 to 2^53 (what a double holds exactly); 0 when o has
 * no key, -1 when it is anything else. */
int64_t ll_hdrlog_count(const cJSON *o, const char *key);

#endif
