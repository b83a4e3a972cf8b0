/* timeline.h -- a run's per-second series for the HTML report: VUs,
 * requests/s, iterations/s, the failed rate, bytes out and in per second,
 * and p50/p90/p95/p99 of http_req_duration in each second. Bounded: at
 * most LL_TIMELINE_MAX_POINTS points, neighbours merged when it is full. */
#ifndef LL_TIMELINE_H
#define LL_TIMELINE_H

#include "metrics.h"
#include "tally.h"

#define LL_TIMELINE_MAX_POINTS 1800
#define LL_TIMELINE_CODES 12 /* status codes charted one by one */

typedef struct cJSON cJSON;
typedef struct ll_timeline ll_timeline;

ll_timeline *ll_timeline_new(const ll_registry *reg);
void ll_timeline_free(ll_timeline *t);
/* One point ending t_s seconds after the start: what cumulative (a merged
 * snapshot, or the final totals) holds beyond the last tick. */
void ll_timeline_tick(ll_timeline *t, const ll_shard *cumulative, double t_s);
/* The responses by status and by error code up to the last tick (the
 * workers' cumulative tally; NULL when unknown): the point gets their
 * growth. Call right after ll_timeline_tick. */
void ll_timeline_codes(ll_timeline *t, const ll_tally *cum);
/* A point known from elsewhere (luaload merge, from the parts' logs and
 * sidecars): its requests, iterations, latency percentiles (p50, p90, p95,
 * p99 in µs) and, when full, its VUs, failed requests and bytes (else they
 * are unknown: null). */
typedef struct ll_timeline_point {
    double reqs, iters;
    int64_t lat_us[4];
    int full;
    double vus, failed, sent, recv;
} ll_timeline_point;
void ll_timeline_add(ll_timeline *t, double start_s, double dt_s, const ll_timeline_point *p);
/* count responses of status code (kind 0) or requests of error_code
 * (kind 1) in the last point added. */
void ll_timeline_add_code(ll_timeline *t, int kind, int code, double count);
/* {"t": [end of each point, s], "vus", "reqs" (/s), "iters" (/s), "failed"
 * (0..1), "sent", "recv" (bytes/s), "p50", "p90", "p95", "p99" (ms),
 * "status": {"200": [responses/s], ...} (the first LL_TIMELINE_CODES codes
 * seen, the rest as "other"; "0" is no response), "errors": {"1211":
 * [requests/s], ...} by k6 error_code, the same way}. */
cJSON *ll_timeline_json(const ll_timeline *t);

#endif
