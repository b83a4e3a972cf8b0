/* mode.h -- a way of running iterations other than the script's (quick
 * mode, src/core/quick/), as a table of operations the app hands to
 * ll_engine_run: the engine and vu.c call it and include nothing of the
 * mode, so the rooms above run/ stay above it. */
#ifndef LL_MODE_H
#define LL_MODE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

typedef struct cJSON cJSON;
typedef struct ll_vu ll_vu;
typedef struct ll_worker ll_worker;
typedef struct ll_vu_iter ll_vu_iter;
typedef struct ll_mode ll_mode; /* the mode's state for one run (its own) */

typedef struct ll_mode_ops {
    /* The state for cfg's run (stop interrupts what it does ahead): 0, or
     * an exit code with a one-line reason in err. */
    int (*open)(ll_mode **out, const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen);
    /* The script the run's states load: its options alone. */
    const char *(*script)(const ll_mode *m);
    /* What the test is called where a script's path would be (the banner,
     * the report's header, a part's identity): quick mode's URL. */
    const char *(*target)(const ll_mode *m);
    /* The connections each VU holds: 1 (one each, known at the start, so
     * that VUs past the open-file limit are refused), or -1 (some, maybe:
     * VUs past the limit get a warning). */
    int (*vu_conns)(const ll_mode *m);
    /* How the scenarios' VUs run an iteration in C (vu.h): in place of the
     * script's; setup() and teardown() still run the script's. */
    const ll_vu_iter *iter;
    /* The scenarios start at t0. Returns 1 when it prints a live line of
     * its own on stderr (the engine's progress lines are off then), else 0. */
    int (*start)(ll_mode *m, uint64_t t0);
    /* The engine's watcher: as often as it wakes (tick), and on each whole
     * second (second). */
    void (*tick)(ll_mode *m, ll_worker *ws, int n, uint64_t t0, uint64_t now);
    void (*second)(ll_mode *m, ll_worker *ws, int n, uint64_t now);
    /* What it prints after k6's summary (data), the workers done. */
    void (*report)(const ll_mode *m, ll_worker *ws, int n, const cJSON *data, FILE *f);
    void (*close)(ll_mode *m); /* NULL is fine */
} ll_mode_ops;

#endif
