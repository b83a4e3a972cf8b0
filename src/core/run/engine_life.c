/* engine_life.c -- the steps the engine runs on its lifecycle worker (the
 * script's init code, setup(), teardown(), handle_summary), each on a thread
 * of its own watched against its timeout and the signals (lifecycle.c). A
 * step given up on leaves the lifecycle worker lost: its thread may still run
 * Lua code in the state, so neither is touched again. */
#include <stdlib.h>

#include "crash.h"
#include "engine_ctx.h"
#include "lifecycle.h"
#include "script.h"
#include "xmalloc.h"

typedef struct life_step {
    ll_worker *w;
    ll_run *run;
    const char *fname, *data;
    char **out;
    uint64_t timeout_us;
    int timeout_rc;
    const cJSON *summary;
} life_step;

static int step_init(void *p) {
    life_step *a = p;
    return ll_worker_init(a->w, a->run, -1);
}

static int step_call(void *p) {
    life_step *a = p;
    return ll_worker_call(a->w, a->fname, a->data, a->out, a->timeout_us, a->timeout_rc);
}

static int step_summary(void *p) {
    life_step *a = p;
    return a->w->run->script->summary(a->w, a->summary);
}

/* Runs fn(a) on the lifecycle worker with a's timeout and the signal budget
 * signal_ns. Returns what fn returned, or -1 when it was given up on: the
 * lifecycle worker is then lost (e->life_lost). */
static int life_run(ll_engine *e, ll_lifecycle_fn *fn, const life_step *a, uint64_t signal_ns) {
    life_step *held = ll_xmalloc(sizeof(*held)); /* the thread's, if it is left running */
    *held = *a;
    uint64_t deadline = a->timeout_us ? ll_loop_now_ns() + a->timeout_us * 1000 : 0;
    int rc;
    if (!ll_lifecycle_run(&e->run, &e->life, fn, held, deadline, signal_ns, &rc)) {
        e->life_lost = 1;
        if (atomic_load(&e->life.crashed)) {
            char why[400];
            fprintf(stderr, "luaload: %s\n", ll_crash_describe(&e->life, why, sizeof(why)));
            return LL_EXIT_CRASH;
        }
        return -1;
    }
    free(held);
    return rc;
}

int engine_life_init(ll_engine *e) {
    life_step step = {.w = &e->life, .run = &e->run};
    return life_run(e, step_init, &step, 0);
}

int engine_life_call(ll_engine *e, const char *fname, const char *data, char **out, uint64_t timeout_us,
                     int timeout_rc, uint64_t signal_ns) {
    life_step step = {.w = &e->life, .run = &e->run, .fname = fname, .data = data, .out = out,
                      .timeout_us = timeout_us, .timeout_rc = timeout_rc};
    e->life_timeout_us = timeout_us;
    return life_run(e, step_call, &step, signal_ns);
}

int engine_life_summary(ll_engine *e, const cJSON *data, uint64_t signal_ns) {
    life_step step = {.w = &e->life, .run = &e->run, .summary = data, .timeout_us = e->life_timeout_us};
    return life_run(e, step_summary, &step, signal_ns);
}
