/* test_scenario.c -- per-worker shares and the executors' schedule math
 * (src/core/scenario.c). */
/* links: ll_run */
#include <stdint.h>
#include <string.h>

#include "scenario.h"
#include "schedule.h"
#include "test_util.h"

static int64_t count_arrivals(const ll_scenario *s, int64_t limit) {
    int64_t k = 0;
    uint64_t prev = 0;
    while (k < limit) {
        uint64_t t = ll_schedule_arrival_time_us(s, k);
        if (t == UINT64_MAX) break;
        if (t < prev) return -1; /* must not go back in time */
        prev = t;
        k++;
    }
    return k;
}

int main(void) {
    for (int n = 1; n <= 7; n++) {
        for (int64_t total = 0; total <= 50; total += 7) {
            int64_t sum = 0, sum_rr = 0, max = 0, min = total;
            for (int w = 0; w < n; w++) {
                int64_t x = ll_schedule_share(total, w, n);
                sum += x;
                sum_rr += ll_schedule_share_rr(total, w, n);
                if (x > max) max = x;
                if (x < min) min = x;
            }
            tu_check(sum == total && sum_rr == total && max - min <= 1, "shares of %lld over %d workers add up and are even",
                     (long long)total, n);
        }
    }
    ll_stage st[] = {{10000000, 100}, {5000000, 100}, {10000000, 0}};
    tu_check(ll_schedule_ramp_value(0, st, 3, 0) == 0, "ramp at 0");
    tu_check(ll_schedule_ramp_value(0, st, 3, 5000000) == 50, "ramp halfway up");
    tu_check(ll_schedule_ramp_value(0, st, 3, 12000000) == 100, "ramp plateau");
    tu_check(ll_schedule_ramp_value(0, st, 3, 20000000) == 50, "ramp halfway down");
    tu_check(ll_schedule_ramp_value(0, st, 3, 99000000) == 0, "ramp after the end");

    ll_scenarios set = {0};
    ll_scenario *c = ll_scenarios_add(&set, "c", LL_EX_CONSTANT_ARRIVAL_RATE);
    c->rate = 200;
    c->duration_us = 5000000;
    tu_check(count_arrivals(c, 100000) == 1000, "constant-arrival-rate 200/s for 5 s: 1000 iterations");
    tu_check(ll_schedule_arrival_time_us(c, 1) == 5000, "second iteration 5 ms after the first");
    tu_check(ll_schedule_arrival_count(c, 0) == 1 && ll_schedule_arrival_count(c, 4999) == 1 && ll_schedule_arrival_count(c, 5000) == 2,
             "constant: due counts at 0, 4.999 and 5 ms");
    tu_check(ll_schedule_arrival_count(c, 99000000) == 1000, "constant: no more than 1000 due after the end");
    c->time_unit_us = 60000000; /* 200 per minute */
    tu_check(count_arrivals(c, 100000) == 17, "200/min for 5 s: 17 iterations");

    ll_scenario *r = ll_scenarios_add(&set, "r", LL_EX_RAMPING_ARRIVAL_RATE);
    ll_stage rs[] = {{10000000, 100}, {10000000, 100}};
    r->stages = rs;
    r->nstages = 2;
    r->start_rate = 0;
    tu_check(count_arrivals(r, 100000) == 1500, "0 -> 100/s over 10 s then 10 s at 100/s: 1500 iterations");
    uint64_t t = ll_schedule_arrival_time_us(r, 500);
    tu_check(t >= 9999000 && t <= 10001000, "the 500th is due at 10 s (got %llu)", (unsigned long long)t);
    t = ll_schedule_arrival_time_us(r, 125);
    tu_check(t >= 4999000 && t <= 5001000, "the 125th is due at 5 s (got %llu)", (unsigned long long)t);
    int64_t ok = 1;
    for (int64_t k = 0; k < 1500; k += 37) /* the count and the times agree */
        ok &= ll_schedule_arrival_count(r, ll_schedule_arrival_time_us(r, k) + 1) >= k + 1; /* times are whole µs */
    tu_check(ok, "ramping: every iteration is due by its own time");
    tu_check(ll_schedule_arrival_count(r, 10000000) >= 500 && ll_schedule_arrival_count(r, 10000000) <= 502, "ramping: ~501 due at 10 s");
    tu_check(ll_schedule_arrival_count(r, 99000000) == 1500, "ramping: 1500 due after the end");
    r->stages = NULL; /* not ours */
    r->nstages = 0;

    char err[256];
    ll_scenario *bad = ll_scenarios_add(&set, "bad", LL_EX_CONSTANT_ARRIVAL_RATE);
    tu_check(ll_scenario_validate(bad, err, sizeof(err)) != 0 && strstr(err, "rate > 0"), "arrival rate without rate: %s", err);
    ll_scenario *si = ll_scenarios_add(&set, "si", LL_EX_SHARED_ITERATIONS);
    si->vus = 10;
    si->iterations = 5;
    tu_check(ll_scenario_validate(si, err, sizeof(err)) != 0 && strstr(err, "at least vus"), "iterations < vus: %s", err);
    tu_check(ll_scenario_executor_parse("ramping-vus") == LL_EX_RAMPING_VUS && ll_scenario_executor_parse("nope") == -1, "executor names");
    ll_scenarios_free(&set);
    return tu_summary();
}
