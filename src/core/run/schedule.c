/* schedule.c -- the executors' schedule math: per-worker shares, the
 * ramping-vus target and the arrival times of the arrival-rate executors
 * (see schedule.h). Pure functions, unit-tested in tests/unit. */
#include "schedule.h"

#include <math.h>

int64_t ll_schedule_share(int64_t total, int w, int n) {
    /* floor(total*(w+1)/n) - floor(total*w/n), in 128 bits to be safe */
    __int128 a = (__int128)total * (w + 1) / n, b = (__int128)total * w / n;
    return (int64_t)(a - b);
}

int64_t ll_schedule_share_rr(int64_t total, int w, int n) { return total > w ? (total - w + n - 1) / n : 0; }

double ll_schedule_ramp_value(double start, const ll_stage *stages, int n, uint64_t t_us) {
    double from = start;
    for (int i = 0; i < n; i++) {
        uint64_t d = stages[i].duration_us;
        if (t_us < d) return from + (stages[i].target - from) * ((double)t_us / (double)d);
        t_us -= d;
        from = stages[i].target;
    }
    return from;
}

uint64_t ll_schedule_arrival_time_us(const ll_scenario *s, int64_t k) {
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

int64_t ll_schedule_arrival_count(const ll_scenario *s, uint64_t t_us) {
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
    while (n > 0 && ll_schedule_arrival_time_us(s, (int64_t)n - 1) == UINT64_MAX) n--;
    return (int64_t)n;
}
