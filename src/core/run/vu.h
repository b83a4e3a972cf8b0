/* vu.h -- a virtual user: a coroutine in its worker's Lua state that runs
 * one iteration at a time and yields whenever it waits, and its small
 * event loop: the tasks (coroutines of its callbacks: a timer's, a
 * promise's) and the pending things (a timer not yet due, a request in
 * flight for no coroutine) its iteration may have beside its own.
 *
 * Every wait registers how to cancel it in its task's pending-operation
 * slot before the coroutine yields (as lua-nginx-module's coroutine cleanup
 * does): an HTTP request its transfer, sleep() its timer; every pending
 * thing registers its own cancel too. An iteration ends when its function
 * has returned and nothing of it is left (k6's event-loop rule); an
 * interrupt cancels every wait and pending thing through what they
 * registered, so this file knows nothing of transfers or sleeps. When an
 * iteration ends, the VU tells its owner (an executor, or the worker
 * running setup/teardown) through on_idle. What the Lua bindings may ask
 * of a VU (its identity, coroutine, waits, group, tags and samples) is
 * declared in script_host.h, the door up from lua_api: there the struct is
 * opaque. */
#ifndef LL_VU_H
#define LL_VU_H

#include <stdint.h>

#include "http_vu.h"
#include "loop.h"
#include "metrics.h"
#include "script_host.h"

typedef struct ll_executor ll_executor;

typedef void ll_vu_idle_fn(ll_vu *vu, void *ud);

/* How a VU runs an iteration, as wrk's struct sock: the script's (a call of
 * its function in the VU's coroutine, ll_vu_script_iter) or a mode's in C
 * (quick mode's, handed in through mode.h). vu.c calls it and never asks
 * which one it has. */
typedef struct ll_vu_iter {
    /* Starts vu's iteration; a C one ends it with ll_vu_native_done. */
    void (*start)(ll_vu *vu);
    /* Free what start kept in vu->mode_data and w->mode_data (called only
     * when it is not NULL); NULL when it keeps nothing. */
    void (*vu_free)(ll_vu *vu);
    void (*worker_free)(ll_worker *w);
} ll_vu_iter;

/* The script's iterations: the scenario's exec function (or the one call's)
 * with the setup data, in the VU's coroutine. */
extern const ll_vu_iter ll_vu_script_iter;

/* A coroutine of the VU: its iteration's own (vu->main) or a callback's,
 * with the wait it is in and what its requests and sleeps use. */
struct ll_vu_task {
    ll_vu *vu;
    lua_State *co;              /* lua_api's (script.h's vu_open, or lua_api's own) */
    int co_ref;
    ll_vu_cancel_fn *cancel;    /* the pending-operation slot: how to cancel */
    void *cancel_ud;            /* the wait the coroutine is in, or NULL */
    ll_timer timer;             /* its sleeps */
    ll_http_call *call;         /* its one-off requests (the main task's: the VU's) */
    ll_http_req **oneoff;
    ll_http_call own_call;      /* a callback task's */
    ll_http_req *own_oneoff;
    struct ll_vu_task *prev, *next; /* the VU's callback tasks */
};

struct ll_vu {
    ll_worker *w;
    ll_executor *executor;      /* its scenario in this worker; NULL in setup */
    const ll_vu_iter *iter;     /* how it runs an iteration */
    ll_vu_idle_fn *on_idle;     /* an iteration ended */
    void *idle_ud;
    int id;                     /* 1-based, unique in the test */
    int index;                  /* in its worker (transports group by it) */
    int64_t g;                  /* index in its scenario, over all workers */
    int allowed;                /* ramping-vus: within the current target */
    uint64_t scheduled_ns;      /* arrival rates: when it was due */
    uint64_t disallowed_ns;     /* ramping-vus: when it fell out of the target */
    int64_t iteration;          /* 0-based, of this VU */
    int64_t scenario_iter;      /* the iteration's number in its scenario over
                                 * all workers, -1 until drawn (vu.c) */
    ll_vu_task main;            /* the coroutine its iterations run in */
    ll_vu_task *running;        /* the task whose coroutine runs now, or NULL */
    ll_vu_task *tasks;          /* its callbacks' tasks, running or waiting */
    ll_vu_pending *pending;     /* what else its iteration waits for */
    int main_done;              /* the iteration's function returned */
    int in_iteration;
    int yielded;                /* the current iteration waited at least once */
    int unwinding;              /* its error is ll_vu_unwind's, not the script's */
    uint64_t iter_start_ns;
    uint64_t rate_wait_ns;      /* of this iteration, waited for --rps: not in its duration */
    uint64_t next_start_ns;     /* when the last iteration ended, if going on */
    ll_timer timer;             /* the owner's deferred starts, or a C iteration's wait */
    ll_http_vu http;            /* its connections, one per http.Client */
    int alive;                  /* will run (or is running) iterations */
    int group_id;               /* current group, -1 for the root */
    const char *group_path;     /* "" or "::a::b" (owned by the registry) */
    uint64_t group_start_ns;
    int result_ref;             /* single-call mode: return value */
    const char *last_error;     /* message of the last failed iteration */
    uint64_t rng[4];            /* its math.random generator (lua_api/random.c) */
    void *mode_data;            /* the iteration's own (iter->vu_free frees it) */
    ll_tag *tags;               /* its own tags (exec.vu.tags), on all its
                                 * samples from then on, over its scenario's */
    int ntags, cap_tags;
};

void ll_vu_init(ll_vu *vu, ll_worker *w, int id, const ll_vu_iter *iter, ll_vu_idle_fn *on_idle,
                void *idle_ud);
void ll_vu_free(ll_vu *vu);
void ll_vu_start_iteration(ll_vu *vu); /* exec function with the setup data */
void ll_vu_interrupt(ll_vu *vu);       /* abandon the running iteration */
/* Ends an iteration that ran in C (a mode's iter->start). */
void ll_vu_native_done(ll_vu *vu);

#endif
