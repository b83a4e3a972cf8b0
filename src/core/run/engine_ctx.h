/* engine_ctx.h -- the insides of the engine, shared by its files: one
 * context (ll_engine) that a run's phases fill in and read, in order:
 *
 *   engine.c            the driver: the context, the phases in turn, one
 *                       cleanup (engine_free); the signals, the lib dir
 *   engine_prepare.c    prepare: the script's init code and options, the
 *                       config, thresholds, outputs, segment, the limits,
 *                       the workers' count (luaload inspect ends here)
 *   engine_limits.c     the VU counts, memory and open files a run needs
 *   engine_setup.c      setup: the status API, --paused, --start-at,
 *                       setup() or --setup-data
 *   engine_scenarios.c  scenarios: the workers started, watched, stopped
 *   engine_teardown.c   teardown: the metrics summed, teardown()
 *   engine_report.c     report: errors, outputs, summary, export, the exit
 *                       code; what `luaload merge` shares (ll_engine_report)
 *   engine_life.c       the steps run on the lifecycle worker (init code,
 *                       setup(), teardown(), handle_summary)
 *
 * Nothing outside these files sees the context. */
#ifndef LL_ENGINE_CTX_H
#define LL_ENGINE_CTX_H

#include <stdint.h>

#include "api.h"
#include "config.h"
#include "fdreserve.h"
#include "metrics.h"
#include "mode.h"
#include "output.h"
#include "results.h"
#include "run.h"
#include "segment.h"
#include "worker.h"

typedef struct cJSON cJSON;

/* Open files kept aside from the start for the end of the run (fdreserve.h):
 * the summary export, handle_summary's files, the report, the outputs' last
 * flush; the workers close their connections as they finish, but one given
 * up on keeps its own. */
#define ENGINE_FD_END 16

typedef struct ll_engine {
    ll_config *cfg;
    const ll_mode_ops *mode;    /* the script's (ll_script_mode_ops) or quick mode's */
    ll_mode *ms;                /* its state for this run (the script's: NULL) */
    ll_run run;                 /* what the workers share */
    ll_segment_tuple tuple;     /* this instance's part of a split test */
    ll_worker life;             /* the lifecycle worker: init, setup(), teardown(), summary */
    int life_lost;              /* given up on: its thread may still run Lua code */
    uint64_t life_timeout_us;   /* the last call's timeout (setup's, teardown's):
                                 * handle_summary() is held to it too */
    ll_worker *workers;         /* the scenario workers, nworkers of them made */
    int nworkers;
    int64_t max_vus;            /* the most VUs the scenarios have at once */
    ll_api *api;                /* the status API (-a, --paused), or NULL */
    ll_results *results;        /* --out hdrlog, --out html */
    ll_outputs *outputs;        /* the other --out outputs */
    int other_outputs;          /* there are some */
    int outputs_stopped;
    ll_fdreserve end_fds;       /* open files kept for the end (fdreserve.h) */
    int setup_done;             /* setup() ran (or its data was read) */
    double elapsed;             /* the scenarios' length, s */
    ll_shard *total;            /* every worker's metrics, summed */
    int borrowed;               /* run.reg and total are the caller's (merge) */
    cJSON *data;                /* the summary data */
    int failed;                 /* a threshold failed */
    int all_failed;             /* every iteration failed with a script error (warnings.h) */
    char *teardown_out;
    int rc;                     /* the exit code so far */
    int told_interrupt;         /* the signal's line is out */
    char libbuf[4200];
    char err[1024];
} ll_engine;

/* What a phase says comes next. */
typedef enum engine_next {
    ENGINE_NEXT,   /* the next phase */
    ENGINE_SUM_UP, /* straight to teardown and the report (a signal) */
    ENGINE_END,    /* nothing more but the cleanup */
} engine_next;

static inline engine_next engine_end(ll_engine *e, int rc) {
    e->rc = rc;
    return ENGINE_END;
}

static inline engine_next engine_sum_up(ll_engine *e, int rc) {
    e->rc = rc;
    return ENGINE_SUM_UP;
}

/* engine.c: the parts of the context every use shares (a run, or merge's
 * report), the signal handlers installed; and the one cleanup, after which
 * e holds nothing. */
void engine_init(ll_engine *e, ll_config *cfg, const ll_script_ops *script);
void engine_free(ll_engine *e);
/* Whether a thread was given up on: a worker, or the lifecycle worker. */
int engine_abandoned(const ll_engine *e);
/* After a SIGINT or SIGTERM, once: "luaload: interrupted by SIGINT: what"
 * (what NULL: nothing more). */
void engine_tell_interrupt(ll_engine *e, const char *what);

/* The phases, in order; each sets e->rc. */
engine_next engine_prepare(ll_engine *e);
engine_next engine_setup(ll_engine *e);
engine_next engine_scenarios(ll_engine *e);
void engine_teardown(ll_engine *e);
void engine_report(ll_engine *e);

/* engine_limits.c: each returns 0 or LL_EXIT_CONFIG after a one-line error. */
int engine_limits_vus(const ll_config *cfg, uint64_t *id_base, int64_t *max_vus); /* sets both */
int engine_limits_fds(ll_engine *e, int nworkers); /* for e->max_vus */
int engine_limits_workers(const ll_config *cfg, int64_t max_vus); /* how many workers */
void engine_limits_report_fds(void); /* the connections refused for want of files */

/* engine_life.c: steps on the lifecycle worker, each watched against its
 * timeout and the signal budget signal_ns (run.h). Each returns what the
 * step returned, or, when it was given up on (e->life_lost set), -1 or
 * LL_EXIT_CRASH (the crash described). */
int engine_life_init(ll_engine *e);
int engine_life_call(ll_engine *e, const char *fname, const char *data, char **out, uint64_t timeout_us,
                     int timeout_rc, uint64_t signal_ns);
int engine_life_summary(ll_engine *e, const cJSON *data, uint64_t signal_ns);

#endif
