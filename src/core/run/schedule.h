/* schedule.h -- how a scenario is split over the workers so that the
 * per-worker shares add up exactly, and when its iterations are due. */
#ifndef LL_SCHEDULE_H
#define LL_SCHEDULE_H

#include <stdint.h>

#include "scenario.h"

/* Shares of worker w out of n: part of total (floor of the running share,
 * so shares add up exactly) and the VUs of global index g % n == w. */
int64_t ll_schedule_share(int64_t total, int w, int n);
int64_t ll_schedule_share_rr(int64_t total, int w, int n);

/* ramping-vus: the target VU count at t_us into the scenario. */
double ll_schedule_ramp_value(double start, const ll_stage *stages, int n, uint64_t t_us);
/* Arrival rates: when (µs into the scenario) the k-th iteration (0-based)
 * is due, or UINT64_MAX when it falls after the last stage / duration. */
uint64_t ll_schedule_arrival_time_us(const ll_scenario *s, int64_t k);
/* How many iterations are due by t_us into the scenario (all k with
 * ll_schedule_arrival_time_us(s, k) <= t_us). */
int64_t ll_schedule_arrival_count(const ll_scenario *s, uint64_t t_us);

#endif
