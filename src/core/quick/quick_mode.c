/* quick_mode.c -- quick mode's table of operations for the engine
 * (run/mode.h): the generated script (quick.c), the plan of native
 * iterations (quick_native.c) and gopayloader's table and ticker
 * (quick_report.c), held together for one run. */
#include "quick_mode.h"

#include <stdio.h>
#include <stdlib.h>

#include "quick.h"
#include "quick_report.h"
#include "xmalloc.h"

struct ll_mode {
    const ll_config *cfg;
    char *script;         /* the options alone (ll_quick_script) */
    ll_quick_plan *plan;
    ll_quick_report report;
};

static void quick_mode_close(ll_mode *m) {
    if (!m) return;
    free(m->script);
    ll_quick_plan_free(m->plan);
    free(m);
}

static int quick_mode_open(ll_mode **out, const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen) {
    ll_mode *m = ll_xcalloc(1, sizeof(*m));
    m->cfg = cfg;
    *out = NULL;
    if (!(m->script = ll_quick_script(cfg))) {
        snprintf(err, errlen, "out of memory");
        quick_mode_close(m);
        return LL_EXIT_FAILURE;
    }
    if (!(m->plan = ll_quick_plan_new(cfg, stop, err, errlen))) {
        quick_mode_close(m);
        return LL_EXIT_CONFIG;
    }
    *out = m;
    return 0;
}

static const char *quick_mode_script(const ll_mode *m) { return m->script; }

static const char *quick_mode_target(const ll_mode *m, const ll_config *cfg) {
    (void)cfg; /* the same as m->cfg */
    return m->cfg->quick_url;
}

/* One connection each, but with --parallel: shared HTTP/2 connections, or
 * one each on HTTP/1.1. */
static int quick_mode_vu_conns(const ll_mode *m, int script_conns) {
    (void)script_conns; /* its script makes no requests */
    return m->cfg->quick.multiplex ? -1 : 1;
}

/* With -v, the ticker is the live output (not the engine's progress lines). */
static int quick_mode_start(ll_mode *m, uint64_t t0) {
    uint64_t tick = m->cfg->quick.ticker_us ? m->cfg->quick.ticker_us : 1000000;
    ll_quick_report_start(&m->report, t0, m->cfg->verbose ? tick * 1000 : 0);
    return m->cfg->verbose != 0;
}

static void quick_mode_tick(ll_mode *m, ll_worker *ws, int n, uint64_t t0, uint64_t now) {
    ll_quick_report_tick(&m->report, ws, n, t0, now);
}

static void quick_mode_second(ll_mode *m, ll_worker *ws, int n, uint64_t now) {
    ll_quick_report_second(&m->report, ws, n, now);
}

static void quick_mode_report(const ll_mode *m, ll_worker *ws, int n, const cJSON *data, FILE *f) {
    ll_quick_report_print(&m->report, ws, n, data, f);
    ll_quick_plan_report(m->plan, f);
}

const ll_quick_plan *ll_quick_mode_plan(const ll_mode *m) { return m->plan; }

/* Its VUs' iterations: one request each, in C (quick_native.c). */
static const ll_vu_iter quick_iter = {
    .start = ll_quick_native_start,
    .vu_free = ll_quick_native_vu_free,
    .worker_free = ll_quick_native_worker_free,
};

const ll_mode_ops ll_quick_mode_ops = {
    .open = quick_mode_open,
    .script = quick_mode_script,
    .target = quick_mode_target,
    .vu_conns = quick_mode_vu_conns,
    .iter = &quick_iter,
    .start = quick_mode_start,
    .tick = quick_mode_tick,
    .second = quick_mode_second,
    .report = quick_mode_report,
    .close = quick_mode_close,
};
