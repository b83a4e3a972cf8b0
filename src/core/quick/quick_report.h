/* quick_report.h -- what quick mode shows beside k6's summary, as
 * gopayloader's table: requests/s per second (average, min, max), request
 * and response sizes, a count per status code; and the live ticker of -v
 * (quick_report.c). */
#ifndef LL_QUICK_REPORT_H
#define LL_QUICK_REPORT_H

#include <stdint.h>
#include <stdio.h>

typedef struct ll_worker ll_worker;
typedef struct cJSON cJSON;

typedef struct ll_quick_report {
    int64_t last;               /* requests at the last whole second */
    uint64_t last_ns;
    double min, max;            /* requests in a whole second */
    int seconds;                /* whole seconds measured */
    uint64_t ticker_ns;         /* 0: no ticker */
    uint64_t next_tick_ns;
    int64_t tick_last;
    uint64_t tick_last_ns;
} ll_quick_report;

/* Starts measuring at t0; ticker_ns > 0 prints a line that often. */
void ll_quick_report_start(ll_quick_report *r, uint64_t t0, uint64_t ticker_ns);
/* Called by the engine's watcher on each whole second (now). */
void ll_quick_report_second(ll_quick_report *r, ll_worker *ws, int n, uint64_t now);
/* Called by the watcher as often as it wakes: the ticker line on stderr. */
void ll_quick_report_tick(ll_quick_report *r, ll_worker *ws, int n, uint64_t t0, uint64_t now);
/* The table, from the summary data and the workers' status counts (the
 * workers are done). */
void ll_quick_report_print(const ll_quick_report *r, ll_worker *ws, int n, const cJSON *data, FILE *f);

#endif
