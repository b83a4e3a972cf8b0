/* scenario_split.h -- one instance's share of the scenarios when a test is
 * split with execution segments (--execution-segment, --shard): each
 * executor's settings scaled as k6 scales them, and the tuple by which an
 * executor stripes its iterations over the instances (segment.h). */
#ifndef LL_SCENARIO_SPLIT_H
#define LL_SCENARIO_SPLIT_H

#include <stddef.h>

#include "scenario.h"
#include "segment.h"

/* Scales every scenario of set to this instance's segment of t, as k6's
 * executors do:
 *   shared-iterations    vus scaled; iterations scaled by t re-segmented by vus
 *   per-vu-iterations    vus scaled; iterations per VU unchanged
 *   constant-vus         vus scaled
 *   ramping-vus          its part of the most VUs; the stages unchanged: a VU
 *                        runs while its index in the test is under the ramp
 *   arrival rates        preAllocatedVUs and maxVUs scaled; the rate and its
 *                        period unchanged: the instance starts the global
 *                        iterations that t re-segmented by maxVUs gives it
 * A scenario this instance gets no share of is marked none (it runs
 * nothing). stripes[i] (allocated, set->n entries, freed with
 * ll_scenario_split_free) is the tuple that stripes scenario i's
 * iterations: its global indexes are iteration_in_test. Returns 0, or -1
 * with a message in err (out of memory). */
int ll_scenario_split(ll_scenarios *set, const ll_segment_tuple *t, ll_segment_tuple **stripes, char *err,
                      size_t errlen);
void ll_scenario_split_free(ll_segment_tuple *stripes, int n);

#endif
