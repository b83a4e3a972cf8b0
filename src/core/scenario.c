/* scenario.c -- scenario settings, their validation, per-worker shares and
 * the schedule math of the executors (see scenario.h). */
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const NAMES[] = {
    [LL_EX_SHARED_ITERATIONS] = "shared-iterations",
    [LL_EX_PER_VU_ITERATIONS] = "per-vu-iterations",
    [LL_EX_CONSTANT_VUS] = "constant-vus",
    [LL_EX_RAMPING_VUS] = "ramping-vus",
    [LL_EX_CONSTANT_ARRIVAL_RATE] = "constant-arrival-rate",
    [LL_EX_RAMPING_ARRIVAL_RATE] = "ramping-arrival-rate",
};
#define NEXECUTORS (int)(sizeof(NAMES) / sizeof(NAMES[0]))

int ll_executor_parse(const char *name) {
    for (int i = 0; i < NEXECUTORS; i++)
        if (strcmp(NAMES[i], name) == 0) return i;
    return -1;
}

ll_scenario *ll_scenarios_add(ll_scenarios *set, const char *name, ll_executor e) {
    if (set->n == set->cap) {
        int cap = set->cap ? set->cap * 2 : 4;
        ll_scenario *items = realloc(set->items, (size_t)cap * sizeof(*items));
        if (!items) return NULL;
        set->items = items;
        set->cap = cap;
    }
    ll_scenario *s = &set->items[set->n];
    memset(s, 0, sizeof(*s));
    s->name = strdup(name);
    s->exec = strdup("default");
    if (!s->name || !s->exec) {
        free(s->name);
        free(s->exec);
        return NULL;
    }
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
    for (int i = 0; i < s->nstages; i++) t += s->stages[i].duration_us;
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
    return s->start_time_us + ll_scenario_duration_us(s) + extra;
}

int64_t ll_share(int64_t total, int w, int n) {
    /* floor(total*(w+1)/n) - floor(total*w/n), in 128 bits to be safe */
    __int128 a = (__int128)total * (w + 1) / n, b = (__int128)total * w / n;
    return (int64_t)(a - b);
}

int64_t ll_share_rr(int64_t total, int w, int n) { return total > w ? (total - w + n - 1) / n : 0; }

double ll_ramp_value(double start, const ll_stage *stages, int n, uint64_t t_us) {
    double from = start;
    for (int i = 0; i < n; i++) {
        uint64_t d = stages[i].duration_us;
        if (t_us < d) return from + (stages[i].target - from) * ((double)t_us / (double)d);
        t_us -= d;
        from = stages[i].target;
    }
    return from;
}

uint64_t ll_arrival_time_us(const ll_scenario *s, int64_t k) {
    double unit = (double)s->time_unit_us;
    if (s->executor == LL_EX_CONSTANT_ARRIVAL_RATE) {
        double t = (double)k * unit / s->rate;
        return t < (double)s->duration_us ? (uint64_t)t : UINT64_MAX;
    }
    /* ramping: the rate (per µs) is linear within a stage, so the count of
     * due iterations N(t) is quadratic there; find the stage where N passes
     * k and solve N(t) = k in it. */
    double n0 = 0, from = s->start_rate / unit, t0 = 0, want = (double)k;
    for (int i = 0; i < s->nstages; i++) {
        double d = (double)s->stages[i].duration_us, to = s->stages[i].target / unit;
        double n1 = n0 + (from + to) / 2 * d;
        if (want < n1) {
            double a = (to - from) / (2 * d), b = from, c = n0 - want, x;
            if (fabs(a) < 1e-18) x = b > 0 ? -c / b : 0;
            else x = (-b + sqrt(fmax(b * b - 4 * a * c, 0))) / (2 * a);
            if (x < 0) x = 0;
            if (x >= d) x = d - 1;
            return (uint64_t)(t0 + x);
        }
        n0 = n1;
        t0 += d;
        from = to;
    }
    return UINT64_MAX;
}

int64_t ll_arrival_count(const ll_scenario *s, uint64_t t_us) {
    double unit = (double)s->time_unit_us, t = (double)t_us, n;
    if (s->executor == LL_EX_CONSTANT_ARRIVAL_RATE) {
        if (t_us >= s->duration_us) t = (double)s->duration_us - 1;
        n = floor(t * s->rate / unit) + 1;
    } else { /* the area under the rate curve up to t, plus the one at 0 */
        double area = 0, from = s->start_rate / unit, left = t;
        for (int i = 0; i < s->nstages && left > 0; i++) {
            double d = (double)s->stages[i].duration_us, to = s->stages[i].target / unit;
            double x = left < d ? left : d, r = from + (to - from) * (x / d);
            area += (from + r) / 2 * x;
            left -= x;
            from = to;
        }
        n = floor(area) + 1;
    }
    /* never more than ll_arrival_time_us would hand out */
    while (n > 0 && ll_arrival_time_us(s, (int64_t)n - 1) == UINT64_MAX) n--;
    return (int64_t)n;
}
