/* worker.h -- a worker thread: its LuaJIT state, its VUs (coroutines), its
 * event loop, curl multi handles and metrics shard, and its share of each
 * scenario (ll_sched, executor.c). The engine also uses one worker on the
 * main thread to run init, setup() and teardown(). */
#ifndef LL_WORKER_H
#define LL_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "loop.h"
#include "metrics.h"
#include "scenario.h"
#include "transport.h"

typedef struct lua_State lua_State;
typedef struct ll_worker ll_worker;
typedef struct ll_sched ll_sched;

/* VUs sharing one curl multi handle: libcurl's connection-pool lookup is
 * linear in a multi handle's connections. Measured with callgrind, 50 VUs
 * cost 90.7k instructions per request at 100 VUs per multi handle, 84k at
 * 32 and 83k at 16; 2,000 VUs cost 103.5k at 100 and 84.8k at 16. */
#ifndef LL_VUS_PER_MULTI
#define LL_VUS_PER_MULTI 16
#endif

/* What every worker of a run shares (read-only once the workers start). */
typedef struct ll_run {
    const char *script_path;    /* NULL in quick mode */
    const char *script_source;  /* quick mode: the generated script */
    const char *chunkname;      /* "@script.lua" */
    const char *lib_dir;        /* the shipped lib/lua */
    char **env;                 /* KEY=VALUE, from -e */
    int nenv;
    const ll_scenarios *scenarios;
    uint64_t *vu_id_base;       /* per scenario: VU ids start after it */
    int nworkers;
    uint64_t t0;                /* when the scenarios start (ll_now_ns) */
    ll_registry *reg;
    char *setup_json;           /* setup()'s return value, NULL when none */
    atomic_int interrupt;       /* set on SIGINT: stop now */
    atomic_int aborted;         /* luaload.abort() was called: stop now */
    char abort_reason[256];     /* written once, by whoever set aborted */
    atomic_int threshold_abort; /* an abortOnFail threshold failed: stop now */
    int publish;                /* workers publish a snapshot every second */
    pthread_mutex_t mu;         /* guards finished */
    pthread_cond_t cv;          /* signalled when a worker finishes */
    int finished;
} ll_run;

/* Stops the run from a script (luaload.abort); the first reason is kept. */
void ll_run_abort(ll_run *run, const char *reason);
/* Whether the workers should stop now (SIGINT, abort, abortOnFail). */
int ll_run_stopped(ll_run *run);

typedef struct ll_vu {
    ll_worker *w;
    ll_sched *sched;            /* its scenario in this worker; NULL in setup */
    int id;                     /* 1-based, unique in the test */
    int index;                  /* in its worker (picks the multi handle) */
    int64_t g;                  /* index in its scenario, over all workers */
    int allowed;                /* ramping-vus: within the current target */
    uint64_t scheduled_ns;      /* arrival rates: when it was due */
    uint64_t disallowed_ns;     /* ramping-vus: when it fell out of the target */
    int64_t iteration;          /* 0-based, of this VU */
    lua_State *co;
    int co_ref;
    int in_iteration;
    int yielded;                /* the current iteration waited at least once */
    uint64_t iter_start_ns;
    uint64_t next_start_ns;     /* when the last iteration ended, if going on */
    ll_timer timer;             /* sleep() and deferred starts */
    ll_transfer **xfers;        /* one per http.Client, by client slot */
    uint64_t *xfer_owner;       /* the client (uid) each transfer was made for */
    int nxfers;
    int alive;                  /* will run (or is running) iterations */
    int group_id;               /* current group, -1 for the root */
    const char *group_path;     /* "" or "::a::b" (owned by the registry) */
    uint64_t group_start_ns;
    ll_http_req *oneoff;        /* scratch request of one-off http calls */
    int response_type;          /* of the request in flight */
    int result_ref;             /* single-call mode: return value */
    const char *last_error;     /* message of the last failed iteration */
} ll_vu;

typedef struct ll_error_count {
    char *msg;
    int64_t count;
} ll_error_count;

struct ll_worker {
    int index;
    ll_run *run;
    lua_State *L;
    ll_loop *loop;
    ll_transport *tp;
    ll_shard *shard;
    ll_vu *vus;                 /* the lifecycle worker's one VU */
    int nvus;
    ll_sched *scheds;           /* one per scenario */
    int nscheds;
    int vu_count;               /* VUs made so far (their index) */
    int env_ref;                /* the __ENV in force */
    ll_vu *current;             /* the VU whose coroutine is running */
    int active;                 /* scenarios (or the one call) not done */
    int single;                 /* running one call (setup/teardown) */
    uint64_t call_deadline_ns;  /* single call: interrupt it then (0: none) */
    int call_graceful_at_start; /* single call: the run was already stopping */
    int setup_ref;              /* setup data in this state */
    int exec_ref;               /* single call: the function */
    int nclients;               /* http.Client slots handed out */
    uint64_t next_client_uid;
    ll_error_count *errors;
    int nerrors;
    int64_t interrupted;        /* iterations cut by the hard end */
    ll_shard *published;        /* a copy of shard, refreshed every second */
    pthread_mutex_t pub_mu;     /* guards published */
    ll_timer pub_timer;
    pthread_t thread;
    int rc;                     /* exit code on failure (107...) */
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
/* Adds w's last published snapshot into dst (any thread). */
void ll_worker_read_published(ll_worker *w, ll_shard *dst);

/* One scenario's share in one worker (executor.c). */
struct ll_sched {
    const ll_scenario *sc;
    int index;                  /* of the scenario */
    ll_worker *w;
    int nw;                     /* workers taking part (<= its VUs) */
    int exec_ref;               /* its function in this state */
    int env_ref;                /* its __ENV */
    ll_vu *vus;                 /* cap slots, nvus made */
    int nvus, cap;
    int64_t iters_left;         /* shared-iterations: this worker's pool */
    uint64_t start_ns, end_ns, hard_end_ns;
    int phase;                  /* LL_SCHED_* */
    int alive;                  /* closed models: VUs that go on */
    int running;                /* VUs inside an iteration */
    ll_timer timer;             /* start, ramp ticks, arrivals */
    ll_vu **idle;               /* arrival rates: free VUs */
    int nidle;
    int64_t k_next;             /* arrival rates: next due iteration */
    _Atomic int64_t done_iters; /* for the progress line */
    _Atomic int active_vus;     /* for the vus gauge */
    _Atomic int made_vus;       /* for vus_max */
};

enum { LL_SCHED_WAITING, LL_SCHED_RUNNING, LL_SCHED_STOPPING, LL_SCHED_DONE };

/* executor.c: prepare, start (at its startTime) and stop a scenario share. */
int ll_sched_init(ll_sched *s, ll_worker *w, int index, char *err, size_t errlen);
void ll_sched_free(ll_sched *s);
void ll_sched_begin(ll_sched *s);            /* arms its start timer */
void ll_sched_tick(ll_sched *s, uint64_t now, int stop_now, int graceful); /* after each loop turn */
void ll_sched_vu_idle(ll_sched *s, ll_vu *vu);

/* The scenario tags of a VU's samples: scenario and the scenario's tags. */
const char *ll_vu_tag(const ll_vu *vu, const char *key);
void ll_vu_tags(const ll_vu *vu, ll_tag_fn *fn, void *ud);
/* A tag source with only the VU's scenario tags and group. */
ll_tag_source ll_vu_tag_source(const ll_vu *vu);

/* VU lifecycle (vu.c). */
void ll_vu_init(ll_vu *vu, ll_worker *w, int id);
void ll_vu_free(ll_vu *vu);
void ll_vu_start_iteration(ll_vu *vu); /* exec function with the setup data */
void ll_vu_interrupt(ll_vu *vu);       /* abandon the running iteration */
/* Called by vu.c when an iteration ended; the worker decides what's next. */
void ll_worker_vu_idle(ll_worker *w, ll_vu *vu);

/* VU glue used by the Lua API. */
void ll_vu_resume(ll_vu *vu, int nargs); /* the values are on vu->co */
void ll_vu_sleep(ll_vu *vu, uint64_t us);
/* The VU's connection slot for a client: slot is reused by later clients
 * once a client is collected, uid tells them apart. */
ll_transfer *ll_vu_transfer(ll_vu *vu, int slot, uint64_t uid, const ll_client_opts *opts);
/* Counts a script error under its message (the engine prints each distinct
 * message once with its count); returns the worker's stored copy of msg. */
const char *ll_worker_error(ll_worker *w, const char *msg);

#endif
