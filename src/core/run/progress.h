/* progress.h -- what the main thread reads of the workers while they run:
 * the vus / vus_max gauges (sampled every second) and each scenario's
 * progress, iterations and VUs (for exec.scenario.progress and the live
 * lines of progress_lines.h); and each scenario's shape in words. */
#ifndef LL_PROGRESS_H
#define LL_PROGRESS_H

#include <stdint.h>

#include "worker.h"

/* The scenario's shape in words, e.g. "250 VUs for 30s", "1 VU for 5s". */
void ll_progress_describe(const ll_scenario *sc, char *buf, size_t len);

/* Records vus and vus_max into shard (the main thread's) at now. initial:
 * 1, the planned VUs at the start, before any worker ran; 0, the VUs now;
 * LL_PROGRESS_WIND_DOWN, vus_max only (the VUs finishing their last
 * iterations are no count of the test's VUs). */
#define LL_PROGRESS_WIND_DOWN 2
void ll_progress_sample(ll_shard *shard, const ll_scenarios *set, ll_worker *workers, int n, uint64_t now,
                        int initial);
/* Records vus_max alone, the VUs planned (k6 emits it once its VUs are
 * made, before setup()): for a summary after a setup() that never
 * returned, whose lifecycle shard (with the gauges) is lost. */
void ll_progress_sample_max(ll_shard *shard, const ll_scenarios *set, uint64_t now);

/* How far scenario sc is, 0 to 1 (as k6's progress bars and
 * exec.scenario.progress): its iterations done out of its total for the
 * iterations executors, else its own time (el_ns since the test start,
 * less its start time) out of its duration. */
double ll_progress_fraction(const ll_scenario *sc, int64_t iters, uint64_t el_ns);
/* Scenario s's iterations done, VUs in an iteration now and VUs made,
 * summed over the workers. */
int64_t ll_progress_iterations(ll_worker *workers, int n, int s);
int64_t ll_progress_active_vus(ll_worker *workers, int n, int s);
int64_t ll_progress_made_vus(ll_worker *workers, int n, int s);

#endif
