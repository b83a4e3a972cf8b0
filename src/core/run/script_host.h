/* script_host.h -- the one door up from Lua into run/ (script.h is the one
 * down): what the Lua bindings of src/lua_api may ask of their host, the
 * worker whose state they run in and the VU they run for. ll_worker and
 * ll_vu are opaque here, as ll_loop is: lua_api includes no other run/
 * header but script.h (which it implements) and config.h (which options.c
 * fills), and reads no field of a worker, a VU or the run; this header
 * gives it functions instead (defined in worker.c, vu.c and, for a VU's
 * requests on the wire, http_exchange.c, whose header it includes). The
 * run/ files that own the structs include it through worker.h and vu.h.
 * Release builds inline the small ones across files (LTO). */
#ifndef LL_SCRIPT_HOST_H
#define LL_SCRIPT_HOST_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "http_exchange.h"
#include "http_vu.h"
#include "loop.h"
#include "metrics.h"
#include "scenario.h"
#include "segment.h"
#include "transport.h"

typedef struct lua_State lua_State;
typedef struct ll_worker ll_worker;
typedef struct ll_vu ll_vu;
struct ll_lua_cache;

/* ---- the worker and its Lua state (lua_api/state.c, script.c) ---- */

lua_State *ll_worker_lua(const ll_worker *w);
void ll_worker_set_lua(ll_worker *w, lua_State *L);
/* lua_api's per-state lookups (lua_api/state.h), kept with the state. */
struct ll_lua_cache *ll_worker_lua_cache(const ll_worker *w);
void ll_worker_set_lua_cache(ll_worker *w, struct ll_lua_cache *c);
/* The error a failed script operation leaves for the engine (script.h). */
void ll_worker_set_error(ll_worker *w, const char *msg);
/* Its index: -1 for the lifecycle worker, else 0 to workers - 1. */
int ll_worker_index(const ll_worker *w);
/* Its event loop: where the bindings' own timers run (luaload.timers). */
ll_loop *ll_worker_loop(const ll_worker *w);
/* Its resolver (the native transport's), for a WebSocket's open; NULL
 * when it cannot be made. */
ll_resolver *ll_worker_dns(ll_worker *w);

/* What the worker's state opens: the script (path NULL in quick mode,
 * whose generated source is in source), the shipped lib/lua, -e's
 * KEY=VALUE pairs. */
typedef struct ll_host_script {
    const char *path;
    const char *source;
    const char *chunkname;
    const char *lib_dir;
    char **env;
    int nenv;
} ll_host_script;
ll_host_script ll_worker_script(const ll_worker *w);

/* ---- the run's settings a binding reads ---- */

/* These four take a NULL w too (a state without a worker): the defaults. */
FILE *ll_worker_console(const ll_worker *w);      /* console.*: --console-output, else stderr */
int ll_worker_verbose(const ll_worker *w);        /* -v */
const char *ll_worker_options_json(const ll_worker *w); /* test.options; NULL: none yet */
/* Whether --rps limits the requests (then luaload.http gates each). */
int ll_worker_rate_limited(const ll_worker *w);
/* The run's seed, or a fresh one from the OS when it has none. */
uint64_t ll_worker_seed(const ll_worker *w);
/* The transport forced for every Client (LUALOAD_TRANSPORT), or NULL. */
const ll_transport_ops *ll_worker_transport(const ll_worker *w);
/* The run's overrides of a Client's options: --insecure-skip-tls-verify,
 * --http-debug. */
void ll_worker_client_overrides(const ll_worker *w, ll_client_opts *o);
/* The flag a long job polls to give up when the run is interrupted. */
const atomic_int *ll_worker_interrupt_flag(const ll_worker *w);
/* An http.Client's connection slot in every VU of the worker (a new
 * one; lua_api reuses those of collected clients), and its unique id. */
int ll_worker_new_client_slot(ll_worker *w);
uint64_t ll_worker_new_client_uid(ll_worker *w);

/* ---- the run: stopping it, counting it ---- */

/* luaload.abort(reason): stops the run (exit 108); returns the reason
 * kept (the first one given). */
const char *ll_worker_abort(ll_worker *w, const char *reason);
/* test.fail(): the run goes on and exits with 110. */
void ll_worker_mark_failed(ll_worker *w);
/* Ends the scenarios as at the end of their duration (running iterations
 * get their gracefulStop, no new one starts; the exit code is not
 * touched): a data.stream's unique rows ran out. Returns 1 the first time. */
int ll_worker_end_scenarios(ll_worker *w);
/* This instance's execution segment, NULL for the whole test (or before
 * the options are read: in init code). */
const ll_segment_tuple *ll_worker_segment(const ll_worker *w);
/* A Lua panic (what: its message) on this thread: the crash guard ends the
 * run as for a fault (crash.c). Does not return. */
void ll_crash_panic(const char *what);
/* luaload.execution is loaded: number each iteration as it starts. */
void ll_worker_number_iterations(ll_worker *w);
/* When the scenarios started, on ll_loop_now_ns's clock (0: not yet) and
 * in Unix ms. */
uint64_t ll_worker_test_start_ns(const ll_worker *w);
int64_t ll_worker_test_start_unix_ms(const ll_worker *w);
/* This instance's counters over every worker (luaload.execution's
 * instance). */
typedef enum {
    LL_INSTANCE_VUS_ACTIVE,
    LL_INSTANCE_VUS_MADE,
    LL_INSTANCE_ITERATIONS_DONE,
    LL_INSTANCE_ITERATIONS_INTERRUPTED,
} ll_instance_counter;
int64_t ll_worker_instance_count(const ll_worker *w, ll_instance_counter which);
/* The run's registry: metrics, checks and groups by name. */
ll_registry *ll_worker_registry(const ll_worker *w);

/* ---- the VU running now and its identity ---- */

/* The VU whose coroutine is running in w's state; NULL in init code. */
ll_vu *ll_worker_current(const ll_worker *w);
ll_worker *ll_vu_worker(const ll_vu *vu);
int ll_vu_id(const ll_vu *vu);                    /* 1-based, in this instance; 0: setup/teardown */
int ll_vu_index(const ll_vu *vu);                 /* in its worker */
int64_t ll_vu_iteration(const ll_vu *vu);         /* 0-based, of this VU */
/* The running iteration's number in its scenario over all workers,
 * drawn from the run's counter on first use (0-based, dense: every
 * number is used once); -1 outside a scenario's iteration. */
int64_t ll_vu_scenario_iteration(ll_vu *vu);
/* The same and the VU's id across every instance of a test split with
 * execution segments (k6's iterationInTest, idInTest); the instance's own
 * ones when it is not split. */
int64_t ll_vu_iteration_in_test(ll_vu *vu);
int64_t ll_vu_id_in_test(const ll_vu *vu);
/* Its scenario, NULL in setup() and teardown(); how far the scenario is,
 * 0 to 1 (exec.scenario.progress). */
const ll_scenario *ll_vu_scenario(const ll_vu *vu);
double ll_vu_scenario_progress(const ll_vu *vu);
/* Its math.random generator (4 words, lua_api/random.c). */
uint64_t *ll_vu_rng(ll_vu *vu);
/* The error about to unwind the running iteration is not the script's:
 * the iteration ends uncounted (as after abort()), not as a failure. */
void ll_vu_unwind(ll_vu *vu);

/* ---- its coroutines, their waits and its event loop ---- */

/* A coroutine of the VU (vu.h): its iteration's own, or a callback's. */
typedef struct ll_vu_task ll_vu_task;
typedef void ll_vu_cancel_fn(void *ud);

/* The coroutine running now: the running task's; else the iteration's own
 * (made by script.h's vu_open). */
lua_State *ll_vu_co(const ll_vu *vu);
int ll_vu_co_ref(const ll_vu *vu);
void ll_vu_set_co(ll_vu *vu, lua_State *co, int ref); /* the iteration's own */

/* Registers how to cancel the wait the running task's coroutine is about
 * to yield in (called right before every yield) and returns that task: what
 * ends the wait resumes it with ll_vu_task_resume. */
ll_vu_task *ll_vu_wait(ll_vu *vu, ll_vu_cancel_fn *cancel, void *ud);
/* Ends t's wait and resumes its coroutine with the nargs values on its
 * stack. */
void ll_vu_task_resume(ll_vu_task *t, int nargs);
/* Cancels t's wait, if any, and clears its slot. */
void ll_vu_task_cancel_wait(ll_vu_task *t);
/* The task running now (NULL outside Lua), its VU and its coroutine. */
ll_vu_task *ll_vu_running(const ll_vu *vu);
ll_vu *ll_vu_task_vu(const ll_vu_task *t);
lua_State *ll_vu_task_co(const ll_vu_task *t);
/* Its one-off request's call and scratch request (http.c): a request in
 * flight belongs to the task that waits for it. */
ll_http_call *ll_vu_task_call(ll_vu_task *t);
ll_http_req *ll_vu_task_oneoff(ll_vu_task *t);
/* A wait of us microseconds on the running task's timer, registered in
 * its slot: the task resumes with no values (sleep, the --rps gate). */
ll_vu_task *ll_vu_wait_timer(ll_vu *vu, uint64_t us);

/* A callback's coroutine co (ref: what keeps it, freed with the task
 * through script.h's unref) as a new task of vu's iteration, started with
 * the function and nargs values on co's stack. Only while an iteration
 * runs (ll_vu_in_iteration). What it raises fails the iteration, as an
 * error in the iteration's function does. */
void ll_vu_task_start(ll_vu *vu, lua_State *co, int ref, int nargs);
int ll_vu_in_iteration(const ll_vu *vu);
/* Around Lua a binding runs for vu outside its coroutines, from the loop (a
 * callback that cannot wait, such as params.on_chunk): vu is its worker's
 * current VU meanwhile, as inside its coroutines. */
void ll_vu_enter(ll_vu *vu);
void ll_vu_leave(ll_vu *vu);

/* Something else the iteration waits for (a timer not yet due): it keeps
 * the iteration going until ll_vu_pending_del, and cancel(ud) is called if
 * the iteration is cut first. The caller owns p. */
typedef struct ll_vu_pending {
    ll_vu_cancel_fn *cancel;
    void *ud;
    struct ll_vu_pending *prev, *next;
} ll_vu_pending;
void ll_vu_pending_add(ll_vu *vu, ll_vu_pending *p, ll_vu_cancel_fn *cancel, void *ud);
/* p is over (it came, or the script gave it up): the iteration may end
 * once nothing else is left. */
void ll_vu_pending_del(ll_vu *vu, ll_vu_pending *p);
/* --rps: takes the next n request slots of the run; returns how long the
 * VU must wait for them, in ns (0: go now), kept out of the iteration's
 * duration. */
uint64_t ll_vu_rate_take(ll_vu *vu, int64_t n);

/* ---- its HTTP side, group, tags and samples ---- */

/* Its transfers, one-off requests, batch and cookie jar (http/'s). */
ll_http_vu *ll_vu_http(ll_vu *vu);

/* Its group: id (-1 for the root) and path ("" or "::a::b"). */
int ll_vu_group_id(const ll_vu *vu);
const char *ll_vu_group_path(const ll_vu *vu);
/* Enters the group of path (registered on first use). Returns 0, or -1
 * when out of memory. */
int ll_vu_group_enter(ll_vu *vu, const char *path);
/* Leaves the group entered at start_ns (ll_loop_now_ns, as a Lua number
 * keeps it) for prev (an id of ll_vu_group_id), recording group_duration. */
void ll_vu_group_leave(ll_vu *vu, int prev, double start_ns);

/* Sets the VU's own tag key (value NULL: removes it). Returns 0, or -1
 * when out of memory. */
int ll_vu_set_tag(ll_vu *vu, const char *key, const char *value);
/* The tags of a VU's samples: its own, then its scenario's (scenario and
 * the scenario's tags). */
const char *ll_vu_tag(const ll_vu *vu, const char *key);
void ll_vu_tags(const ll_vu *vu, ll_tag_fn *fn, void *ud);
/* A tag source with only the VU's scenario tags and group. */
ll_tag_source ll_vu_tag_source(const ll_vu *vu);

/* Samples of the VU into its worker's shard, with tags t: a custom
 * metric's value (now), a check's pass or fail, a counter's n (with the
 * VU's own tags). */
void ll_vu_sample(ll_vu *vu, int metric, double value, ll_tag_source *t);
void ll_vu_check(ll_vu *vu, int check, int ok, ll_tag_source *t);
void ll_vu_count(ll_vu *vu, int metric, double n);
/* The id of check name in the VU's group (*folded: past the registry's
 * bound, the group's "(other)"). */
int ll_vu_check_id(const ll_vu *vu, const char *name, int *folded);

#endif
