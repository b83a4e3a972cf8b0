/* scenario.h -- the run's scenarios (k6's options.scenarios and the
 * implicit default one) and their executors' settings. */
#ifndef LL_SCENARIO_H
#define LL_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

typedef enum {
    LL_EX_SHARED_ITERATIONS,
    LL_EX_PER_VU_ITERATIONS,
    LL_EX_CONSTANT_VUS,
    LL_EX_RAMPING_VUS,
    LL_EX_CONSTANT_ARRIVAL_RATE,
    LL_EX_RAMPING_ARRIVAL_RATE
} ll_executor_type;

typedef struct ll_stage {
    uint64_t duration_us;
    double target;           /* VUs (ramping-vus) or iterations per timeUnit */
} ll_stage;

typedef struct ll_scenario {
    char *name;
    ll_executor_type executor;
    char *exec;              /* the function each iteration runs */
    uint64_t start_time_us;
    uint64_t graceful_stop_us;
    uint64_t graceful_ramp_down_us;
    int64_t vus;             /* shared/per-vu iterations, constant-vus */
    int64_t iterations;      /* shared: in all; per-vu: each */
    uint64_t duration_us;    /* constant-vus, constant-arrival-rate */
    uint64_t max_duration_us;/* the iterations executors */
    int64_t start_vus;       /* ramping-vus */
    ll_stage *stages;        /* ramping-vus, ramping-arrival-rate */
    int nstages;
    double rate;             /* constant-arrival-rate, per time_unit */
    double start_rate;       /* ramping-arrival-rate */
    uint64_t time_unit_us;
    int64_t pre_allocated_vus, max_vus;
    ll_tag *env;             /* extra __ENV for its VUs */
    int nenv;
    ll_tag *tags;            /* extra tags of its samples */
    int ntags;
    int none;                /* this instance's execution segment has no share of it */
    int64_t split_vus;       /* ramping-vus in a split test: this instance's most VUs (its
                              * stages stay the whole test's: a VU runs while its index in
                              * the test is under the ramp, as in k6); 0: not split */
} ll_scenario;

typedef struct ll_scenarios {
    ll_scenario *items;
    int n, cap;
} ll_scenarios;

/* Executor names as k6 spells them; -1 for an unknown name. */
int ll_scenario_executor_parse(const char *name);
const char *ll_scenario_executor_name(ll_executor_type e);

/* A scenario with k6's defaults for executor e (gracefulStop 30s, exec
 * "default", timeUnit 1s, maxDuration 10m, ...); NULL on out of memory. */
ll_scenario *ll_scenarios_add(ll_scenarios *set, const char *name, ll_executor_type e);
void ll_scenarios_free(ll_scenarios *set);

/* Checks the settings k6 requires for the executor (e.g. a rate for the
 * arrival-rate ones). Returns 0 or -1 with a one-line message in err. */
int ll_scenario_validate(const ll_scenario *s, char *err, size_t errlen);

/* The tags of the scenario's samples: its own tags, then scenario=<name>.
 * ll_scenario_tag returns NULL for a key it does not have. */
const char *ll_scenario_tag(const ll_scenario *s, const char *key);
void ll_scenario_tags(const ll_scenario *s, ll_tag_fn *fn, void *ud);

/* The most VUs the scenario can use, and when it is over (from the test
 * start, including its graceful stop). */
int64_t ll_scenario_max_vus(const ll_scenario *s);
uint64_t ll_scenario_end_us(const ll_scenario *s);
/* How long it runs before graceful stop (its own time, not start time). */
uint64_t ll_scenario_duration_us(const ll_scenario *s);

#endif
