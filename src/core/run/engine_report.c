/* engine_report.c -- the end of a run: the failed requests by error, the
 * connections refused, the outputs' last flush, the thresholds judged, the
 * summary data, the summary (handle_summary, else the default one), quick
 * mode's table, the failed thresholds, --summary-export and the exit code.
 * `luaload merge` ends the same way (ll_engine_report): the judging and the
 * export are shared. */
#include <cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_ctx.h"
#include "report.h"
#include "script.h"
#include "summary.h"
#include "warnings.h"

/* The failed requests by message, merged over the workers (and the
 * lifecycle worker's setup and teardown; life NULL: it was lost), the
 * most frequent first; nothing when no request failed. */
#define ENGINE_TOP_ERRORS 5

static void report_http_errors(ll_worker *workers, int n, const ll_worker *life) {
    ll_errors all;
    memset(&all, 0, sizeof(all));
    for (int i = 0; workers && i < n; i++)
        if (!workers[i].abandoned) ll_errors_merge(&all, &workers[i].http_errors);
    if (life) ll_errors_merge(&all, &life->http_errors);
    ll_errors_sort(&all);
    if (all.n > ENGINE_TOP_ERRORS)
        fprintf(stderr, "luaload: failed requests by error (top %d of %d):\n", ENGINE_TOP_ERRORS, all.n);
    else if (all.n || all.other)
        fprintf(stderr, "luaload: failed requests by error:\n");
    for (int i = 0; i < all.n && i < ENGINE_TOP_ERRORS; i++)
        fprintf(stderr, "luaload:   %lld × %s\n", (long long)all.items[i].count, all.items[i].msg);
    if (all.other)
        fprintf(stderr, "luaload:   %lld × other errors (a worker keeps %d distinct messages)\n", (long long)all.other,
                LL_WORKER_HTTP_ERRORS_MAX);
    ll_errors_free(&all);
}

/* One line per failed threshold, on stderr, for CI logs. */
static void report_thresholds(const ll_threshold_set *set, const ll_registry *reg) {
    for (int i = 0; i < set->n; i++) {
        const ll_threshold *t = &set->items[i];
        if (!t->failed) continue;
        char agg[32];
        fprintf(stderr, "luaload: threshold failed: %s '%s' (%s=%g)\n", reg->metrics[t->metric_id].name,
                t->source, ll_threshold_agg_name(&t->expr, agg, sizeof(agg)), t->value);
    }
}

/* The summary from a state without the script, when the script's is lost. */
static int bare_summary(ll_run *run, const cJSON *data) {
    ll_worker w;
    memset(&w, 0, sizeof(w));
    w.run = run;
    int rc = run->script->open_bare(&w) == 0 ? run->script->summary(&w, data) : -1;
    if (rc) fprintf(stderr, "luaload: cannot print the summary: %s\n", w.errmsg);
    run->script->close(&w);
    return rc;
}


/* The thresholds judged on e->total and the summary data made (with its
 * warnings: saturated workers, dropped iterations). */
static void report_judge(ll_engine *e) {
    int abort_unused;
    e->failed = ll_threshold_set_evaluate(&e->cfg->thresholds, e->run.reg, e->total, e->elapsed, &abort_unused);
    ll_summary_opts sopts = ll_config_summary_opts(e->cfg);
    e->data = ll_summary_data(e->run.reg, e->total, e->elapsed, &sopts);
    e->all_failed = ll_warnings_add(e->data, e->workers, e->nworkers, e->total);
}

/* The failed thresholds on stderr, then --summary-export. */
static void report_export(ll_engine *e) {
    const char *path = e->cfg->summary.export;
    report_thresholds(&e->cfg->thresholds, e->run.reg);
    if (path && ll_summary_export(e->data, path, e->err, sizeof(e->err)) != 0) {
        fprintf(stderr, "luaload: %s\n", e->err);
        if (!e->rc) e->rc = LL_EXIT_FAILURE;
    }
}

/* What a run leaves besides the summary: the failed requests by error, the
 * connections refused, the outputs' last flush, the checks and groups past
 * their bounds, results.c's files; and the thresholds judged. */
static void report_run_end(ll_engine *e) {
    ll_fdreserve_release(&e->end_fds); /* for the outputs' last flush, the summary and its files */
    report_http_errors(e->workers, e->nworkers, e->life_lost ? NULL : &e->life);
    engine_limits_report_fds();
    if (e->outputs) ll_outputs_stop(e->outputs);
    e->outputs_stopped = 1;
    ll_registry_report_folds(e->run.reg, stderr); /* checks and groups past their bounds */
    ll_tally tally = {0}; /* the scenarios', setup's and teardown's */
    for (int i = 0; e->workers && i < e->nworkers; i++) ll_worker_read_tally(&e->workers[i], &tally);
    if (!e->life_lost) ll_tally_add(&tally, &e->life.tally);
    int rc = ll_results_end(e->results, &e->run, e->cfg, e->total, e->elapsed, engine_abandoned(e), &tally);
    if (!e->rc) e->rc = rc;
    report_judge(e);
    rc = ll_results_report(e->results, e->data, e->total, e->elapsed, &tally);
    ll_tally_free(&tally);
    if (!e->rc) e->rc = rc;
}

/* The script's handle_summary(), or the default summary when its state is
 * lost; then quick mode's table. */
static void report_summary(ll_engine *e) {
    ll_config *cfg = e->cfg;
    if (cfg->summary.off) return;
    int rc = -1;
    if (!e->life_lost && e->life.L) {
        rc = engine_life_summary(e, e->data, LL_RUN_SIGNAL_SUMMARY_NS);
        if (e->life_lost && !atomic_load(&e->life.crashed))
            fprintf(stderr, "luaload: handle_summary() did not return: printing the default summary\n");
    }
    if (e->life_lost || !e->life.L) rc = bare_summary(&e->run, e->data);
    if (rc != 0 && !e->rc) e->rc = LL_EXIT_FAILURE;
    if (e->workers) { /* the mode's own (quick mode: gopayloader's table) */
        e->mode->report(e->ms, e->workers, e->nworkers, e->data, stdout);
        fflush(stdout);
    }
}

void engine_report(ll_engine *e) {
    report_run_end(e);
    report_summary(e);
    int interrupted = atomic_load(&e->run.interrupt); /* a signal during the summary too */
    report_export(e);
    int rc = e->rc;
    if (!rc && (e->failed || atomic_load(&e->run.threshold_abort))) rc = LL_EXIT_THRESHOLDS;
    if (!rc && atomic_load(&e->run.marked_failed)) rc = LL_EXIT_MARKED_FAILED;
    if (!rc && e->all_failed && e->cfg->fail_all_failed) rc = LL_EXIT_SCRIPT; /* --fail-when-all-iterations-fail */
    if ((!rc || rc == LL_EXIT_TEARDOWN_TIMEOUT) && interrupted) rc = LL_EXIT_EXTERNAL_ABORT;
    e->rc = rc;
}

/* luaload merge's summary: the script's handle_summary() after its init
 * code, else (no script, or its init code failed) the default one. Returns
 * the init code's exit code; e->life_lost when a step did not return. */
static int report_merged_summary(ll_engine *e) {
    ll_config *cfg = e->cfg;
    int script_rc = 0;
    if (cfg->summary.off) return 0;
    if (cfg->script_path) {
        script_rc = engine_life_init(e);
        if (script_rc && !e->life_lost) fprintf(stderr, "luaload: %s: printing the default summary\n", e->life.errmsg);
        if (!script_rc && !e->life_lost && engine_life_summary(e, e->data, LL_RUN_SIGNAL_SUMMARY_NS) != 0)
            e->rc = LL_EXIT_FAILURE;
        if (e->life_lost) {
            fprintf(stderr, "luaload: the script's init code or handle_summary() did not return\n");
            e->rc = LL_EXIT_EXTERNAL_ABORT;
            return script_rc;
        }
    }
    if ((!cfg->script_path || script_rc) && bare_summary(&e->run, e->data) != 0) e->rc = LL_EXIT_FAILURE;
    return script_rc;
}

int ll_engine_report(ll_config *cfg, const ll_script_ops *script, ll_registry *reg, const ll_shard *total,
                     double elapsed_s, const char *html, cJSON *page) {
    ll_engine e;
    engine_init(&e, cfg, script);
    e.borrowed = 1; /* merge's: read here, freed there */
    e.run.reg = reg;
    e.total = (ll_shard *)total;
    e.elapsed = elapsed_s;
    e.nworkers = 0; /* the workers' busy share is not in the files: dropped iterations only */
    report_judge(&e);
    if (!e.data) e.rc = LL_EXIT_FAILURE;
    int script_rc = e.data ? report_merged_summary(&e) : 0;
    if (e.data && !e.life_lost) {
        report_export(&e);
        if (html && page) cJSON_ReplaceItemInObjectCaseSensitive(page, "summary", cJSON_Duplicate(e.data, 1));
        if (html && ll_report_write_data(html, page, e.err, sizeof(e.err)) != 0) {
            fprintf(stderr, "luaload: --out html: %s\n", e.err);
            if (!e.rc) e.rc = LL_EXIT_FAILURE;
        }
        if (!e.rc) e.rc = script_rc;
        if (!e.rc && e.failed) e.rc = LL_EXIT_THRESHOLDS;
    }
    int rc = e.rc;
    if (e.life_lost) { /* a thread still runs Lua code in the state: free nothing, leave */
        fflush(NULL);
        _exit(rc);
    }
    engine_free(&e);
    return rc;
}
