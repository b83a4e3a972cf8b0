/* quick_report.c -- quick mode's table and ticker (see quick_report.h).
 * Requests are counted by the workers as responses arrive
 * (ll_worker_count_response); this file only reads the counts: the
 * per-second rates from the watcher's whole seconds, the sizes from the
 * summary's data_sent and data_received. */
#include "quick_report.h"

#include <cJSON.h>
#include <stdatomic.h>

#include "worker.h"

static int64_t requests(ll_worker *ws, int n) {
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += atomic_load_explicit(&ws[i].http_reqs, memory_order_relaxed);
    return total;
}

void ll_quick_report_start(ll_quick_report *r, uint64_t t0, uint64_t ticker_ns) {
    *r = (ll_quick_report){0};
    r->last_ns = r->tick_last_ns = t0;
    r->ticker_ns = ticker_ns;
    r->next_tick_ns = t0 + ticker_ns;
}

void ll_quick_report_second(ll_quick_report *r, ll_worker *ws, int n, uint64_t now) {
    int64_t total = requests(ws, n);
    double secs = (double)(now - r->last_ns) / 1e9;
    if (secs > 0.5) { /* a whole second (the watcher may wake a little late) */
        double rate = (double)(total - r->last) / secs;
        if (r->seconds == 0 || rate < r->min) r->min = rate;
        if (r->seconds == 0 || rate > r->max) r->max = rate;
        r->seconds++;
    }
    r->last = total;
    r->last_ns = now;
}

void ll_quick_report_tick(ll_quick_report *r, ll_worker *ws, int n, uint64_t t0, uint64_t now) {
    if (!r->ticker_ns || now < r->next_tick_ns) return;
    while (r->next_tick_ns <= now) r->next_tick_ns += r->ticker_ns;
    int64_t total = requests(ws, n);
    double dt = (double)(now - r->tick_last_ns) / 1e9;
    fprintf(stderr, "luaload: %8.1fs %12lld requests %12.0f/s\n", (double)(now - t0) / 1e9, (long long)total,
            dt > 0 ? (double)(total - r->tick_last) / dt : 0.0);
    r->tick_last = total;
    r->tick_last_ns = now;
}

static double metric_value(const cJSON *data, const char *metric, const char *value) {
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(data, "metrics"), metric);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "values"), value);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void bytes(char *buf, size_t len, double b) {
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (b >= 1000 && u < 4) {
        b /= 1000;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

void ll_quick_report_print(const ll_quick_report *r, ll_worker *ws, int n, const cJSON *data, FILE *f) {
    double reqs = metric_value(data, "http_reqs", "count"), rate = metric_value(data, "http_reqs", "rate");
    double sent = metric_value(data, "data_sent", "count"), got = metric_value(data, "data_received", "count");
    char a[32], b[32];
    if (r->seconds >= 2)
        fprintf(f, "     requests/s.....................: avg=%.2f min=%.0f max=%.0f (%d whole seconds)\n", rate,
                r->min, r->max, r->seconds);
    else /* one second's count is no lowest and highest, and the run's average takes in its start and end */
        fprintf(f, "     requests/s.....................: avg=%.2f (under 2 whole seconds: no per-second figures)\n",
                rate);
    bytes(a, sizeof(a), reqs > 0 ? sent / reqs : 0);
    bytes(b, sizeof(b), sent);
    fprintf(f, "     request size...................: %s each, %s in all\n", a, b);
    bytes(a, sizeof(a), reqs > 0 ? got / reqs : 0);
    bytes(b, sizeof(b), got);
    fprintf(f, "     response size..................: %s each, %s in all\n", a, b);
    for (int s = 0; s <= LL_TALLY_STATUSES; s++) {
        int64_t count = 0;
        for (int i = 0; i < n; i++) count += ws[i].abandoned ? 0 : ws[i].tally.status[s];
        if (!count) continue;
        if (s == 0) fprintf(f, "     no response....................: %lld\n", (long long)count);
        else if (s == LL_TALLY_STATUSES) fprintf(f, "     status other...................: %lld\n", (long long)count);
        else fprintf(f, "     status %d.....................: %lld\n", s, (long long)count);
    }
    fputc('\n', f);
}
