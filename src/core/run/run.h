/* run.h -- what every worker of a run shares: the script, the scenarios,
 * the registry, the setup data, and the flags that stop the run (read-only
 * once the workers start, but for the atomics). */
#ifndef LL_RUN_H
#define LL_RUN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "ip_pool.h"
#include "metrics.h"
#include "scenario.h"
#include "segment.h"
#include "transport.h"

typedef struct ll_worker ll_worker;
typedef struct ll_mode ll_mode;
typedef struct ll_vu ll_vu;

typedef struct ll_script_ops ll_script_ops;

typedef struct ll_run {
    const ll_script_ops *script; /* the door down to Lua (script.h) */
    const char *script_path;    /* NULL in quick mode */
    const char *script_source;  /* quick mode: the generated script */
    const char *target;         /* what the test is called: the script's path,
                                 * or the mode's target (quick mode's URL) */
    const char *chunkname;      /* "@script.lua" */
    const char *lib_dir;        /* the shipped lib/lua */
    char **env;                 /* KEY=VALUE, from -e */
    int nenv;
    const ll_scenarios *scenarios;
    uint64_t *vu_id_base;       /* per scenario: VU ids start after it */
    int nworkers;
    const uint64_t *seed;       /* the run's seed (the config's): final once the
                                 * options are read; NULL: each generator from
                                 * the OS */
    uint64_t t0;                /* when the scenarios start (ll_loop_now_ns) */
    int64_t t0_unix_ms;         /* the same instant in Unix time, ms */
    ll_worker *workers;         /* the scenario workers, nworkers of them
                                 * (luaload.execution reads their counters) */
    _Atomic int64_t *scenario_iters; /* per scenario: iterations numbered so
                                 * far over all workers (iteration_in_test) */
    atomic_int number_iters;    /* luaload.execution is loaded: number each
                                 * iteration as it starts */
    FILE *console;              /* where console.* writes (--console-output),
                                 * NULL: stderr */
    int verbose;                /* -v: console.debug lines show */
    char *options_json;         /* the consolidated options (test.options) */
    const struct ll_vu_iter *iter; /* how the scenarios' VUs run an iteration: the
                                 * script's (vu.h) or the mode's (mode.h) */
    const ll_mode *mode;        /* the mode's state; NULL: none */
    ll_registry *reg;
    int m_worker_busy, m_loop_lag; /* luaload's own metrics (worker.c's probe):
                                 * their ids, 0 when not registered (no probe) */
    const ll_segment_tuple *tuple; /* this instance's execution segment, or NULL: the whole test */
    ll_segment_tuple *stripes;  /* with a tuple, per scenario: how its iterations
                                 * are striped over the instances (scenario_split.h) */
    const ll_transport_ops *transport; /* forced for every Client (LUALOAD_TRANSPORT), or NULL */
    const ll_dns_config *dns;   /* the dns option */
    const ll_ip_pool *local_ips; /* --local-ips, handed to VUs by id (n 0: none) */
    int insecure_skip_verify;   /* --insecure-skip-tls-verify: every Client skips verification */
    int http_debug;             /* --http-debug: 0 off, 1 headers, 2 full (LL_HTTP_DEBUG_*) */
    uint64_t rps_interval_ns;   /* --rps: the time between two requests over all
                                 * workers; 0: no limit (set before the workers'
                                 * states open: their http module reads it) */
    _Atomic uint64_t rps_next_ns; /* the next free request slot (ll_loop_now_ns) */
    char *setup_json;           /* setup()'s return value, NULL when none */
    atomic_int interrupt;       /* set on SIGINT/SIGTERM: stop */
    _Atomic uint64_t interrupt_ns; /* when (ll_loop_now_ns), set before interrupt */
    atomic_int interrupt_sig;   /* which signal (SIGINT, SIGTERM), set before interrupt */
    atomic_int aborted;         /* luaload.abort() was called: stop now */
    char abort_reason[256];     /* written once, by whoever set aborted */
    atomic_int threshold_abort; /* an abortOnFail threshold failed: stop now */
    atomic_int marked_failed;   /* test.fail() was called: exit 110, go on */
    atomic_int scenarios_ended; /* ll_worker_end_scenarios: end them gracefully */
    atomic_int crashed;         /* a thread running Lua code faulted (crash.c):
                                 * stop now, exit 109 after the summary */
    int publish;                /* workers publish a snapshot every second */
    int tally_names;            /* workers count requests by name (the report's table) */
    pthread_mutex_t mu;         /* guards finished */
    pthread_cond_t cv;          /* signalled when a worker finishes */
    int finished;
} ll_run;

/* After one SIGINT or SIGTERM the summary is out within 2 s: running
 * iterations get at most LL_RUN_SIGNAL_GRACE_NS to finish (their
 * gracefulStop when shorter), teardown() must be done by
 * LL_RUN_SIGNAL_TEARDOWN_NS and the summary by LL_RUN_SIGNAL_SUMMARY_NS
 * after the signal; past them the code is interrupted, and given up on
 * when it does not yield. */
#define LL_RUN_SIGNAL_GRACE_NS 400000000ull
#define LL_RUN_SIGNAL_TEARDOWN_NS 900000000ull
#define LL_RUN_SIGNAL_SUMMARY_NS 1300000000ull

/* Stops the run from a script (luaload.abort); the first reason is kept. */
void ll_run_abort(ll_run *run, const char *reason);
/* Whether the workers should stop now (SIGINT, abort, abortOnFail). */
int ll_run_stopped(ll_run *run);

#endif
