/* scenario_split.c -- the scenarios scaled to one instance's execution
 * segment (see scenario_split.h), after k6's executors' GetVUs,
 * GetIterations and GetNewExecutionTupleFromValue. */
#include "scenario_split.h"
#include "xmalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The VUs of value that t gives this instance (VU settings are whole). */
static int64_t vus_of(const ll_segment_tuple *t, double value) {
    return ll_segment_tuple_scale(t, (int64_t)llround(value));
}

/* Scenario s's own striping: t re-segmented by value things (k6's
 * GetNewExecutionTupleFromValue), or t itself when value is 0. Marks s
 * none when this instance gets none of value. */
static int stripe(ll_scenario *s, const ll_segment_tuple *t, int64_t value, ll_segment_tuple *out, char *err,
                  size_t errlen) {
    if (value > 0 && ll_segment_tuple_scale(t, value) == 0) {
        s->none = 1;
        value = 0;
    }
    if (value > 0) return ll_segment_tuple_rescale(t, value, out, err, errlen);
    return ll_segment_tuple_init(out, &t->seq.items[t->index], &t->seq, err, errlen);
}

static int split_one(ll_scenario *s, const ll_segment_tuple *t, ll_segment_tuple *out, char *err, size_t errlen) {
    int64_t by = 0; /* what the iterations are striped by */
    switch (s->executor) {
    case LL_EX_SHARED_ITERATIONS:
        by = s->vus;
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE:
        by = ll_scenario_max_vus(s); /* maxVUs, or preAllocatedVUs when it is not set */
        break;
    default:
        break;
    }
    if (stripe(s, t, by, out, err, errlen) != 0) return -1;
    switch (s->executor) {
    case LL_EX_SHARED_ITERATIONS:
        s->iterations = s->none ? 0 : ll_segment_tuple_scale(out, s->iterations);
        s->vus = vus_of(t, (double)s->vus);
        break;
    case LL_EX_PER_VU_ITERATIONS:
    case LL_EX_CONSTANT_VUS:
        s->vus = vus_of(t, (double)s->vus);
        break;
    case LL_EX_RAMPING_VUS: /* the stages stay: executor.c's ramp() compares each VU's index in the test */
        s->split_vus = ll_segment_tuple_scale(t, ll_scenario_max_vus(s));
        if (s->split_vus == 0) s->none = 1;
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE:
        s->pre_allocated_vus = vus_of(t, (double)s->pre_allocated_vus);
        if (s->max_vus) s->max_vus = vus_of(t, (double)s->max_vus);
        break;
    }
    if (ll_scenario_max_vus(s) == 0) s->none = 1;
    return 0;
}

int ll_scenario_split(ll_scenarios *set, const ll_segment_tuple *t, ll_segment_tuple **stripes, char *err,
                      size_t errlen) {
    *stripes = ll_xcalloc(set->n > 0 ? (size_t)set->n : 1, sizeof(**stripes));
    for (int i = 0; i < set->n; i++) {
        if (split_one(&set->items[i], t, &(*stripes)[i], err, errlen) == 0) continue;
        ll_scenario_split_free(*stripes, set->n);
        *stripes = NULL;
        return -1;
    }
    return 0;
}

void ll_scenario_split_free(ll_segment_tuple *stripes, int n) {
    if (!stripes) return;
    for (int i = 0; i < n; i++) ll_segment_tuple_free(&stripes[i]);
    free(stripes);
}
