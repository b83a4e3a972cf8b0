/* progress.c -- the scenarios' shapes in words, the vus gauges and how far
 * each scenario is (see progress.h). */
#include "progress.h"

#include <stdio.h>
#include <string.h>

static void fmt_secs(double s, char *buf, size_t len) {
    long long w = (long long)s; /* durations end at about 292 years: within long long */
    if (s < 60) snprintf(buf, len, "%.0fs", s);
    else if (s < 3600) snprintf(buf, len, "%lldm%02llds", w / 60, w % 60);
    else snprintf(buf, len, "%lldh%02lldm", w / 3600, (w % 3600) / 60);
}

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

void ll_progress_describe(const ll_scenario *sc, char *buf, size_t len) {
    char d[32];
    fmt_secs((double)ll_scenario_duration_us(sc) / 1e6, d, sizeof(d));
    long long it = (long long)sc->iterations, vus = (long long)sc->vus, max = (long long)ll_scenario_max_vus(sc);
    double unit = (double)sc->time_unit_us / 1e6;
    switch (sc->executor) {
    case LL_EX_SHARED_ITERATIONS:
        snprintf(buf, len, "%lld iteration%s shared by %lld VU%s (max %s)", it, plural(it), vus, plural(vus), d);
        break;
    case LL_EX_PER_VU_ITERATIONS:
        if (vus == 1) snprintf(buf, len, "%lld iteration%s for 1 VU (max %s)", it, plural(it), d);
        else snprintf(buf, len, "%lld iteration%s for each of %lld VUs (max %s)", it, plural(it), vus, d);
        break;
    case LL_EX_CONSTANT_VUS: snprintf(buf, len, "%lld VU%s for %s", vus, plural(vus), d); break;
    case LL_EX_RAMPING_VUS:
        snprintf(buf, len, "up to %lld VU%s over %d stage%s, %s", max, plural(max), sc->nstages, plural(sc->nstages),
                 d);
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
        snprintf(buf, len, "%.6g iteration%s/%.6gs for %s (max %lld VU%s)", sc->rate, sc->rate == 1 ? "" : "s", unit,
                 d, max, plural(max));
        break;
    case LL_EX_RAMPING_ARRIVAL_RATE:
        snprintf(buf, len, "from %.6g iteration%s/%.6gs over %d stage%s, %s (max %lld VU%s)", sc->start_rate,
                 sc->start_rate == 1 ? "" : "s", unit, sc->nstages, plural(sc->nstages), d, max, plural(max));
        break;
    }
}

/* VUs a scenario runs at its start. */
static int64_t initial_vus(const ll_scenario *sc) {
    if (sc->start_time_us > 0) return 0;
    switch (sc->executor) {
    case LL_EX_RAMPING_VUS: return sc->start_vus;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE: return 0;
    default: return sc->vus;
    }
}

/* VUs a scenario plans to hold: an arrival-rate one its preAllocatedVUs. */
static int64_t planned_max_vus(const ll_scenario *sc) {
    int arrival = sc->executor == LL_EX_CONSTANT_ARRIVAL_RATE || sc->executor == LL_EX_RAMPING_ARRIVAL_RATE;
    return arrival ? sc->pre_allocated_vus : ll_scenario_max_vus(sc);
}

void ll_progress_sample(ll_shard *shard, const ll_scenarios *set, ll_worker *workers, int n, uint64_t now,
                        int initial) {
    int64_t vus = 0, max = 0;
    for (int s = 0; s < set->n; s++) {
        const ll_scenario *sc = &set->items[s];
        if (initial == 1) {
            vus += initial_vus(sc);
            max += planned_max_vus(sc);
            continue;
        }
        vus += ll_progress_active_vus(workers, n, s);
        max += ll_progress_made_vus(workers, n, s);
    }
    if (initial != LL_PROGRESS_WIND_DOWN) ll_shard_set(shard, LL_M_VUS, (double)vus, now, NULL);
    if (max > 0) ll_shard_set(shard, LL_M_VUS_MAX, (double)max, now, NULL);
}

void ll_progress_sample_max(ll_shard *shard, const ll_scenarios *set, uint64_t now) {
    int64_t max = 0;
    for (int s = 0; s < set->n; s++) max += planned_max_vus(&set->items[s]);
    if (max > 0) ll_shard_set(shard, LL_M_VUS_MAX, (double)max, now, NULL);
}

double ll_progress_fraction(const ll_scenario *sc, int64_t iters, uint64_t el_ns) {
    double own = (double)el_ns / 1e3 - (double)sc->start_time_us, d = (double)ll_scenario_duration_us(sc);
    double frac = d > 0 ? own / d : own >= 0;
    if (sc->executor == LL_EX_SHARED_ITERATIONS) frac = (double)iters / (double)sc->iterations;
    if (sc->executor == LL_EX_PER_VU_ITERATIONS) frac = (double)iters / (double)(sc->iterations * sc->vus);
    return frac > 1 ? 1 : frac < 0 ? 0 : frac;
}

int64_t ll_progress_iterations(ll_worker *workers, int n, int s) {
    int64_t iters = 0;
    for (int w = 0; w < n; w++)
        if (s < workers[w].nexecutors)
            iters += atomic_load_explicit(&workers[w].executors[s].done_iters, memory_order_relaxed);
    return iters;
}

int64_t ll_progress_active_vus(ll_worker *workers, int n, int s) {
    int64_t vus = 0;
    for (int w = 0; w < n; w++)
        if (s < workers[w].nexecutors)
            vus += atomic_load_explicit(&workers[w].executors[s].active_vus, memory_order_relaxed);
    return vus;
}

int64_t ll_progress_made_vus(ll_worker *workers, int n, int s) {
    int64_t vus = 0;
    for (int w = 0; w < n; w++)
        if (s < workers[w].nexecutors)
            vus += atomic_load_explicit(&workers[w].executors[s].made_vus, memory_order_relaxed);
    return vus;
}
