/* warnings.h -- the end-of-run warnings about the instrument itself: a
 * worker saturated for a noticeable part of the run (the generator, not
 * the server, may have set the pace), dropped iterations, and a run whose
 * every iteration failed with a script error. They go into
 * the summary data (data.warnings, shown by the text summary) and on
 * stderr. */
#ifndef LL_WARNINGS_H
#define LL_WARNINGS_H

#include "metrics.h"
#include "worker.h"

typedef struct cJSON cJSON;

/* A worker was saturated for a noticeable part of the run when its
 * saturated intervals (worker.h) add up to at least this share of the
 * time it probed, and to at least LL_WARNINGS_SATURATED_MIN_NS: a short
 * burst (making the VUs at the start) is no warning. */
#define LL_WARNINGS_SATURATED_SHARE 0.10
#define LL_WARNINGS_SATURATED_MIN_NS 500000000ull

/* Sets data.warnings to the warnings of a run (an array of strings, empty
 * when there is none) and prints each on stderr. workers: the
 * scenario workers, those given up on skipped; total: the merged shard.
 * Returns 1 when every iteration (at least one) failed with a script
 * error, else 0. */
int ll_warnings_add(cJSON *data, const ll_worker *workers, int n, const ll_shard *total);

#endif
