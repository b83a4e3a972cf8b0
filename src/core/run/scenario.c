/* scenario.c -- scenario settings and their validation (see scenario.h). */
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "xmalloc.h"

static const char *const NAMES[] = {
    [LL_EX_SHARED_ITERATIONS] = "shared-iterations",
    [LL_EX_PER_VU_ITERATIONS] = "per-vu-iterations",
    [LL_EX_CONSTANT_VUS] = "constant-vus",
    [LL_EX_RAMPING_VUS] = "ramping-vus",
    [LL_EX_CONSTANT_ARRIVAL_RATE] = "constant-arrival-rate",
    [LL_EX_RAMPING_ARRIVAL_RATE] = "ramping-arrival-rate",
};
#define NEXECUTORS (int)(sizeof(NAMES) / sizeof(NAMES[0]))

int ll_scenario_executor_parse(const char *name) {
    for (int i = 0; i < NEXECUTORS; i++)
        if (strcmp(NAMES[i], name) == 0) return i;
    return -1;
}

const char *ll_scenario_executor_name(ll_executor_type e) { return NAMES[e]; }

ll_scenario *ll_scenarios_add(ll_scenarios *set, const char *name, ll_executor_type e) {
    if (set->n == set->cap) {
        int cap = set->cap ? set->cap * 2 : 4;
        set->items = ll_xrealloc(set->items, (size_t)cap * sizeof(*set->items));
        set->cap = cap;
    }
    ll_scenario *s = &set->items[set->n];
    memset(s, 0, sizeof(*s));
    s->name = ll_xstrdup(name);
    s->exec = ll_xstrdup("default");
    s->executor = e;
    s->graceful_stop_us = 30000000;
    s->graceful_ramp_down_us = 30000000;
    s->vus = 1;
    s->iterations = 1;
    s->max_duration_us = 600000000;
    s->time_unit_us = 1000000;
    set->n++;
    return s;
}

static void free_tags(ll_tag *t, int n) {
    for (int i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

void ll_scenarios_free(ll_scenarios *set) {
    for (int i = 0; i < set->n; i++) {
        ll_scenario *s = &set->items[i];
        free(s->name);
        free(s->exec);
        free(s->stages);
        free_tags(s->env, s->nenv);
        free_tags(s->tags, s->ntags);
    }
    free(set->items);
    memset(set, 0, sizeof(*set));
}

int ll_scenario_validate(const ll_scenario *s, char *err, size_t errlen) {
    const char *n = s->name;
    if (ll_scenario_end_us(s) > LL_DURATION_MAX_US) { /* its end in ns would wrap past 2^64 */
        snprintf(err, errlen, "scenario %s: startTime + duration (or the stages) + gracefulStop (or "
                              "gracefulRampDown) is past the longest duration, about 292 years", n);
        return -1;
    }
    switch (s->executor) {
    case LL_EX_SHARED_ITERATIONS:
        if (s->iterations < s->vus) {
            snprintf(err, errlen, "scenario %s: iterations (%lld) must be at least vus (%lld)", n,
                     (long long)s->iterations, (long long)s->vus);
            return -1;
        }
        /* fall through */
    case LL_EX_PER_VU_ITERATIONS:
        if (s->vus < 1 || s->iterations < 1 || s->max_duration_us == 0) {
            snprintf(err, errlen, "scenario %s: vus and iterations must be at least 1, maxDuration above 0", n);
            return -1;
        }
        return 0;
    case LL_EX_CONSTANT_VUS:
        if (s->vus < 1 || s->duration_us == 0) {
            snprintf(err, errlen, "scenario %s: constant-vus needs vus >= 1 and a duration above 0", n);
            return -1;
        }
        return 0;
    case LL_EX_RAMPING_VUS:
        if (s->nstages == 0 || s->start_vus < 0) {
            snprintf(err, errlen, "scenario %s: ramping-vus needs stages = { { duration = ..., target = ... } }", n);
            return -1;
        }
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
        if (s->rate <= 0 || s->duration_us == 0) {
            snprintf(err, errlen, "scenario %s: constant-arrival-rate needs rate > 0 and a duration above 0", n);
            return -1;
        }
        break;
    case LL_EX_RAMPING_ARRIVAL_RATE:
        if (s->nstages == 0 || s->start_rate < 0) {
            snprintf(err, errlen, "scenario %s: ramping-arrival-rate needs stages = { { duration = ..., target = ... } }", n);
            return -1;
        }
        break;
    }
    for (int i = 0; i < s->nstages; i++) {
        if (s->stages[i].target < 0) {
            snprintf(err, errlen, "scenario %s: stage %d has a negative target", n, i + 1);
            return -1;
        }
    }
    if ((s->executor == LL_EX_CONSTANT_ARRIVAL_RATE || s->executor == LL_EX_RAMPING_ARRIVAL_RATE) &&
        (s->pre_allocated_vus < 1 || (s->max_vus && s->max_vus < s->pre_allocated_vus) || s->time_unit_us == 0)) {
        snprintf(err, errlen, "scenario %s: %s needs preAllocatedVUs >= 1, maxVUs >= preAllocatedVUs and a "
                              "timeUnit above 0", n, NAMES[s->executor]);
        return -1;
    }
    return 0;
}

int64_t ll_scenario_max_vus(const ll_scenario *s) {
    switch (s->executor) {
    case LL_EX_RAMPING_VUS: {
        if (s->split_vus || s->none) return s->split_vus;
        double m = (double)s->start_vus;
        for (int i = 0; i < s->nstages; i++)
            if (s->stages[i].target > m) m = s->stages[i].target;
        return (int64_t)ceil(m);
    }
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE:
        return s->max_vus > s->pre_allocated_vus ? s->max_vus : s->pre_allocated_vus;
    default: return s->vus;
    }
}

static uint64_t stages_us(const ll_scenario *s) {
    uint64_t t = 0;
    for (int i = 0; i < s->nstages; i++) t = ll_duration_add(t, s->stages[i].duration_us);
    return t;
}

uint64_t ll_scenario_duration_us(const ll_scenario *s) {
    switch (s->executor) {
    case LL_EX_SHARED_ITERATIONS:
    case LL_EX_PER_VU_ITERATIONS: return s->max_duration_us;
    case LL_EX_CONSTANT_VUS:
    case LL_EX_CONSTANT_ARRIVAL_RATE: return s->duration_us;
    default: return stages_us(s);
    }
}

uint64_t ll_scenario_end_us(const ll_scenario *s) {
    uint64_t extra = s->graceful_stop_us;
    if (s->executor == LL_EX_RAMPING_VUS && s->graceful_ramp_down_us > extra) extra = s->graceful_ramp_down_us;
    return ll_duration_add(ll_duration_add(s->start_time_us, ll_scenario_duration_us(s)), extra);
}

const char *ll_scenario_tag(const ll_scenario *s, const char *key) {
    for (int i = 0; i < s->ntags; i++)
        if (strcmp(s->tags[i].key, key) == 0) return s->tags[i].value;
    return strcmp(key, "scenario") == 0 ? s->name : NULL;
}

void ll_scenario_tags(const ll_scenario *s, ll_tag_fn *fn, void *ud) {
    for (int i = 0; i < s->ntags; i++) fn(ud, s->tags[i].key, s->tags[i].value);
    fn(ud, "scenario", s->name);
}
