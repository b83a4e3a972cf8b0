/* script_mode.c -- the script's own mode (mode.h): the run a script asks
 * for, with its iterations in Lua (vu.h's ll_vu_script_iter) and nothing
 * of its own to print. The engine always runs a mode, this one or one the
 * app hands in (quick mode), so it never asks which one it has. */
#include <stddef.h>

#include "mode.h"
#include "vu.h"

static int script_mode_open(ll_mode **out, const ll_config *cfg, const atomic_int *stop, char *err,
                            size_t errlen) {
    (void)cfg, (void)stop, (void)err, (void)errlen;
    *out = NULL; /* no state: the script's is in the workers' Lua states */
    return 0;
}

static const char *script_mode_script(const ll_mode *m) {
    (void)m;
    return NULL; /* the run's states load cfg->script_path */
}

static const char *script_mode_target(const ll_mode *m, const ll_config *cfg) {
    (void)m;
    return cfg->script_path;
}

static int script_mode_vu_conns(const ll_mode *m, int script_conns) {
    (void)m;
    return script_conns;
}

static int script_mode_start(ll_mode *m, uint64_t t0) {
    (void)m, (void)t0;
    return 0; /* the engine's progress lines are the live output */
}

static void script_mode_tick(ll_mode *m, ll_worker *ws, int n, uint64_t t0, uint64_t now) {
    (void)m, (void)ws, (void)n, (void)t0, (void)now;
}

static void script_mode_second(ll_mode *m, ll_worker *ws, int n, uint64_t now) {
    (void)m, (void)ws, (void)n, (void)now;
}

static void script_mode_report(const ll_mode *m, ll_worker *ws, int n, const cJSON *data, FILE *f) {
    (void)m, (void)ws, (void)n, (void)data, (void)f;
}

static void script_mode_close(ll_mode *m) { (void)m; }

const ll_mode_ops ll_script_mode_ops = {
    .open = script_mode_open,
    .script = script_mode_script,
    .target = script_mode_target,
    .vu_conns = script_mode_vu_conns,
    .iter = &ll_vu_script_iter,
    .start = script_mode_start,
    .tick = script_mode_tick,
    .second = script_mode_second,
    .report = script_mode_report,
    .close = script_mode_close,
};
