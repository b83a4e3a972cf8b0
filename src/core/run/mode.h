/* mode.h -- a way of running a test, as a table of operations the app
 * hands to ll_engine_run: the script's own (ll_script_mode_ops,
 * script_mode.c) or quick mode's (src/core/quick/), whose iterations run
 * in C. The engine and vu.c call it and include nothing of the mode, so
 * the rooms above run/ stay above it, and never ask which one they have. */
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
typedef struct ll_mode ll_mode; /* the mode's state for one run (its own;
                                   * the script's mode has none: NULL) */

typedef struct ll_mode_ops {
    /* The state for cfg's run (stop interrupts what it does ahead): 0, or
     * an exit code with a one-line reason in err. */
    int (*open)(ll_mode **out, const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen);
    /* The script the run's states load in place of cfg->script_path (quick
     * mode's: its options alone); NULL: the script's. */
    const char *(*script)(const ll_mode *m);
    /* What the test is called where a script's path would be (the banner,
     * the report's header, a part's identity): quick mode's URL. */
    const char *(*target)(const ll_mode *m, const ll_config *cfg);
    /* The connections each VU holds: 1 (one each, known at the start, so
     * that VUs past the open-file limit are refused), -1 (some, maybe:
     * VUs past the limit get a warning) or 0; script_conns is what the
     * script's modules say (-1 when it loaded a network module, else 0). */
    int (*vu_conns)(const ll_mode *m, int script_conns);
    /* How the scenarios' VUs run an iteration (vu.h): the script's, or one
     * in C; setup() and teardown() always run the script's. */
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
    void (*close)(ll_mode *m); /* m NULL is fine */
} ll_mode_ops;

/* The script's own mode: its iterations in Lua, nothing else of its own. */
extern const ll_mode_ops ll_script_mode_ops;

#endif
