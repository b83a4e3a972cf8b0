/* fake_script.h -- run/script.h's operations with no Lua, for the engine's
 * unit tests (as fake_transport.h stands in for a transport): a script
 * whose functions are the names in fake_script_functions, each call of
 * which returns at once (or raises, for the names in fake_script_failing),
 * whose setup() returns fake_script_setup_json and whose summary records
 * the summary data. Every call is counted (atomics: the workers run on
 * threads of their own). */
#ifndef LL_FAKE_SCRIPT_H
#define LL_FAKE_SCRIPT_H

#include <stdatomic.h>

#include "script.h"

extern const ll_script_ops fake_script_ops;

/* Space-separated names the fake script defines ("setup default teardown"). */
extern const char *fake_script_functions;
/* Space-separated names whose calls raise "fake error" (a script error). */
extern const char *fake_script_failing;
/* What setup() returns, as JSON; NULL for nil. */
extern const char *fake_script_setup_json;

typedef struct fake_script_stats {
    atomic_int opens, closes;     /* states made and closed */
    atomic_int iterations;        /* calls of a scenario's exec function */
    atomic_int setups, teardowns; /* calls of setup() and teardown() */
    atomic_int with_data;         /* calls that got setup()'s data */
    atomic_int vus;               /* VU coroutines opened */
    atomic_int summaries;         /* summary calls */
    double summary_iterations;    /* iterations.count in the last summary's data */
    double summary_http_reqs;     /* http_reqs.count in it (0: none) */
    double summary_failed;        /* http_req_failed.passes in it (failed requests) */
} fake_script_stats;

extern fake_script_stats fake_script;

/* Zeroes the counters (before a run). */
void fake_script_reset(void);

#endif
