/* worker.h -- a worker thread: its LuaJIT state, its event loop, its HTTP
 * transports, its metrics shard and its share of each scenario (one
 * executor each), and its script and request errors counted by message.
 * The engine also uses one worker, the lifecycle worker,
 * to run init, setup(), teardown() and the summary, each on a thread of
 * its own (lifecycle.c). The struct is run/'s own: lua_api sees a worker
 * only as an opaque type, through script_host.h. */
#ifndef LL_WORKER_H
#define LL_WORKER_H

#include <pthread.h>
#include <stdint.h>

#include "errors.h"
#include "executor.h"
#include "http_worker.h"
#include "loop.h"
#include "metrics.h"
#include "run.h"
#include "tally.h"
#include "vu.h"

/* The saturation probe (worker.c): every LL_WORKER_PROBE_NS a worker
 * records how late the probe's timer fired (luaload_loop_lag, ms) and the
 * share of the interval its loop was busy rather than waiting for events
 * (luaload_worker_busy, percent); an interval at least
 * LL_WORKER_SATURATED_PCT busy counts as saturated. */
#define LL_WORKER_PROBE_NS 100000000ull
#define LL_WORKER_SATURATED_PCT 90

/* Distinct failed-request messages a worker keeps (http_errors). */
#define LL_WORKER_HTTP_ERRORS_MAX 32

/* Failed requests of setup() or teardown() told as they fail, as k6's
 * "Request Failed" warnings; the others are counted in one line. */
#define LL_WORKER_CALL_WARNINGS 5

/* Distinct script error messages a worker keeps (an error that carries a
 * counter or an id in its text must not grow the table without end). */
#define LL_WORKER_SCRIPT_ERRORS_MAX 256

struct ll_worker {
    int index;
    ll_run *run;
    lua_State *L;
    ll_loop *loop;
    ll_http_worker http;        /* its transports */
    ll_shard *shard;
    ll_vu *vus;                 /* the lifecycle worker's one VU */
    int nvus;
    ll_executor *executors;     /* one per scenario */
    int nexecutors;
    int vu_count;               /* VUs made so far (their index) */
    int env_ref;                /* the __ENV in force */
    ll_vu *current;             /* the VU whose coroutine is running */
    int active;                 /* scenarios (or the one call) not done */
    int single;                 /* running one call (setup/teardown) */
    uint64_t call_deadline_ns;  /* single call: interrupt it then (0: none) */
    int call_graceful_at_start; /* single call: the run was already stopping */
    const char *call_name;      /* single call: the function ("setup") */
    int64_t call_failed_reqs;   /* single call: its requests that failed with
                                 * no response (each of the first
                                 * LL_WORKER_CALL_WARNINGS told at once) */
    int setup_ref;              /* setup data in this state */
    int exec_ref;               /* single call: the function */
    struct ll_lua_cache *lua_cache; /* lua_api's per-state lookups of every
                                 * request (lua_api/state.h), with L */
    int nclients;               /* http.Client slots handed out */
    uint64_t next_client_uid;
    ll_errors errors;           /* script errors of its iterations */
    ll_errors http_errors;      /* its failed requests by message (at most
                                 * LL_WORKER_HTTP_ERRORS_MAX, then "other") */
    _Atomic int64_t http_reqs;  /* responses and failures so far (the
                                 * main thread reads it for requests/s) */
    ll_tally tally;             /* responses by status and error code, requests
                                 * by name when run->tally_names (read once the
                                 * worker is done) */
    _Atomic int64_t interrupted; /* iterations cut by the hard end (read by
                                 * other workers' luaload.execution) */
    ll_errors cut_waits;        /* what the requests cut off were doing ("a
                                 * request to URL, in the TLS handshake") */
    uint64_t cut_longest_ns;    /* how long the oldest of them had been going */
    atomic_int in_lua;          /* a VU's coroutine is running (read by the
                                 * main thread when the worker does not stop) */
    ll_shard *published;        /* a copy of shard, refreshed every second */
    pthread_mutex_t pub_mu;     /* guards published and published_at */
    ll_tally pub_tally;         /* tally when published was taken */
    uint64_t published_at;      /* when published was taken (ll_loop_now_ns); 0: not
                                 * yet, UINT64_MAX: the last, the worker is done */
    ll_timer pub_timer;
    ll_timer probe_timer;       /* the saturation probe */
    uint64_t probe_due;         /* when it should fire */
    uint64_t probe_at, probe_idle; /* the last probe's time and ll_loop_idle_ns */
    uint64_t probed_ns;         /* time covered by probes (read once the worker is done) */
    uint64_t saturated_ns;      /* of it, in saturated intervals */
    pthread_t thread;
    int finished;               /* its thread is done (under run->mu) */
    int abandoned;              /* it did not stop: never touch it again */
    atomic_int halted;          /* its Lua code was asked to stop: no more
                                 * iterations (set from the main thread) */
    void *mode_data;            /* the mode's own (mode.h's worker_free frees it) */
    atomic_int crashed;         /* its thread faulted or Lua panicked (crash.c):
                                 * it is parked for good, never touch it again */
    int crash_sig;              /* the signal, 0 for a Lua panic */
    int crash_overflow;         /* the fault was in the C stack's guard */
    char crash_what[160];       /* a Lua panic's message */
    int rc;                     /* exit code on failure (LL_EXIT_*) */
    char errmsg[1024];
};

/* Creates the worker's loop, state and shard, runs the script's init code
 * and prepares its share of each scenario (index -1: the lifecycle worker,
 * no scenarios). Returns 0, or an exit code with w->errmsg set. */
int ll_worker_init(ll_worker *w, ll_run *run, int index);
void ll_worker_free(ll_worker *w);

/* Runs fname once in a VU of this worker with data_json (may be NULL) as its
 * argument; *out_json gets its return value as JSON (NULL for nil). A missing
 * function is not an error (returns 0, *out_json NULL). timeout_us > 0
 * interrupts it then (exit code timeout_rc). */
int ll_worker_call(ll_worker *w, const char *fname, const char *data_json, char **out_json, uint64_t timeout_us,
                   int timeout_rc);

/* Runs the worker's VUs until its iterations or duration are done. */
int ll_worker_start_thread(ll_worker *w);
int ll_worker_join(ll_worker *w);
/* Counts a response (status 0: none) with its error_code in w->tally and
 * w->http_reqs. */
void ll_worker_count_response(ll_worker *w, int status, int error_code);

/* Adds w's last published snapshot into dst (any thread). */
uint64_t ll_worker_read_published(ll_worker *w, ll_shard *dst); /* returns its published_at */
/* Adds the tally of w's last snapshot into sum (any thread). */
void ll_worker_read_tally(ll_worker *w, ll_tally *sum);

#endif
