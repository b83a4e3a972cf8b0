/* tally.h -- what the report counts beside the metrics' shard, per worker:
 * responses by status code and by k6 error_code, and requests by their
 * `name` tag (count, failed, a histogram of http_req_duration), for the
 * report's "per second by code" charts and its per-name table.
 *
 * Bounded: LL_TALLY_STATUSES codes one by one, LL_TALLY_ERRORS error codes
 * from 1000, LL_TALLY_NAMES distinct names (the rest as one "other" row). A
 * tally belongs to one thread; copies go to others under the worker's
 * publishing lock. */
#ifndef LL_TALLY_H
#define LL_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

#define LL_TALLY_STATUSES 1000 /* statuses 0 (no response) to 999; the last slot: others */
#define LL_TALLY_ERRORS 1000   /* error codes 1000 to 1999; the last slot: others */
#define LL_TALLY_NAMES 40      /* names kept one by one; the last row: "other" */

typedef struct cJSON cJSON;

typedef struct ll_tally_name {
    char *name;               /* NULL: the "other" row */
    int64_t reqs, failed;
    ll_histogram *duration;   /* µs, 2 significant digits; NULL until a sample */
} ll_tally_name;

typedef struct ll_tally {
    int64_t status[LL_TALLY_STATUSES + 1];
    int64_t error[LL_TALLY_ERRORS + 1];
    ll_tally_name *names;     /* LL_TALLY_NAMES + 1 slots once the first name comes */
    int nnames;               /* named rows in use (the "other" row is names[LL_TALLY_NAMES]) */
} ll_tally;

/* A response (status 0: none) and its error_code (0: none). */
void ll_tally_response(ll_tally *t, int status, int error_code);
/* A request named name, whether it failed and its duration in µs (< 0:
 * none, a request lost without a response). */
void ll_tally_name_add(ll_tally *t, const char *name, int failed, int64_t duration_us);
/* dst becomes a copy of src (dst's allocations are kept). */
void ll_tally_copy(ll_tally *dst, const ll_tally *src);
/* Adds src into dst (names matched by their text). */
void ll_tally_add(ll_tally *dst, const ll_tally *src);
void ll_tally_free(ll_tally *t);
/* [{name, reqs, rps, failed (0..1), p50, p95, p99 (ms)}], busiest first,
 * "other" last; elapsed is the run's length so far in seconds. */
cJSON *ll_tally_names_json(const ll_tally *t, double elapsed);
/* The name table for a part's sidecar (luaload merge): [{name (null: the
 * "other" row), reqs, failed, duration: HdrHistogram V2 text}]. */
cJSON *ll_tally_names_save(const ll_tally *t);
/* Adds a table ll_tally_names_save wrote into t. -1 with a one-line error
 * when it is malformed. */
int ll_tally_names_load(ll_tally *t, const cJSON *rows, char *err, size_t errlen);

#endif
