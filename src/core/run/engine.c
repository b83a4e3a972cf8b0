/* engine.c -- one run, start to end: load the script in a lifecycle state
 * (init code, options), merge the config, run setup(), start the workers
 * with their share of the VUs and iterations, wait, merge their shards, run
 * teardown(), print and export the summary, and choose the exit code. */
#include "engine.h"

#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "poster.h"
#include "progress.h"
#include "script.h"
#include "summary.h"
#include "transport.h"
#include "worker.h"


static ll_run *g_run; /* for the signal handler */

static void on_signal(int sig) {
    (void)sig;
    if (!g_run) return;
    if (atomic_exchange(&g_run->interrupt, 1)) _exit(LL_EXIT_EXTERNAL_ABORT);
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

/* The shipped lib/lua: next to the binary (build tree or install prefix),
 * then the source tree and install paths compiled in. */
static const char *find_lib_dir(char *buf, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        const char *rel[] = {"/../lib/lua", "/../share/luaload/lua"};
        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
            char probe[4400];
            snprintf(buf, len, "%s%s", exe, rel[i]);
            snprintf(probe, sizeof(probe), "%s/luaload.lua", buf);
            if (file_exists(probe)) return buf;
        }
    }
    const char *fixed[] = {LUALOAD_SOURCE_LUA_DIR, LUALOAD_INSTALL_LUA_DIR};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        char probe[4400];
        snprintf(probe, sizeof(probe), "%s/luaload.lua", fixed[i]);
        if (file_exists(probe)) return fixed[i];
    }
    return LUALOAD_SOURCE_LUA_DIR;
}

/* Raises the open-file limit to the hard limit; warns when the VUs asked
 * for (one connection each) cannot fit. */
static void check_fd_limit(int64_t vus) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int64_t need = vus + 64;
    if (rl.rlim_cur != RLIM_INFINITY && (int64_t)rl.rlim_cur < need)
        fprintf(stderr,
                "luaload: warning: %lld VUs need about %lld open files but the limit is %llu "
                "(raise it: ulimit -Hn / LimitNOFILE); connections beyond it will fail\n",
                (long long)vus, (long long)need, (unsigned long long)rl.rlim_cur);
}

static char *quick_script(const char *url) {
    const char *fmt = "local http = require(\"luaload.http\")\n"
                      "local client = http.Client{}\n"
                      "local req = http.Request([==[%s]==], { response_type = \"none\" })\n"
                      "function default() client:get(req) end\n";
    size_t n = strlen(fmt) + strlen(url) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, fmt, url);
    return s;
}

static void print_banner(const ll_config *cfg, int nworkers) {
    printf("\n  luaload v%s\n\n", LUALOAD_VERSION);
    printf("     script: %s (%d worker%s)\n", cfg->script_path ? cfg->script_path : cfg->quick_url, nworkers,
           nworkers == 1 ? "" : "s");
    for (int i = 0; i < cfg->scenarios.n; i++) {
        const ll_scenario *sc = &cfg->scenarios.items[i];
        char shape[256];
        ll_progress_describe(sc, shape, sizeof(shape));
        printf("%s%s: %s", i == 0 ? "  scenarios: " : "             ", sc->name, shape);
        if (sc->start_time_us) printf(", starting at %.6gs", (double)sc->start_time_us / 1e6);
        printf("\n");
    }
    printf("\n");
    fflush(stdout);
}

/* Prints each distinct script error once with how often it happened. */
static void report_errors(ll_worker *workers, int n) {
    for (int i = 0; i < n; i++) {
        for (int e = 0; e < workers[i].errors.n; e++) {
            const char *msg = workers[i].errors.items[e].msg;
            int64_t count = 0;
            int first = 1;
            for (int j = 0; j < n && first; j++)
                for (int f = 0; f < workers[j].errors.n && (j < i || (j == i && f < e)); f++)
                    if (strcmp(workers[j].errors.items[f].msg, msg) == 0) first = 0;
            if (!first) continue;
            for (int j = 0; j < n; j++)
                for (int f = 0; f < workers[j].errors.n; f++)
                    if (strcmp(workers[j].errors.items[f].msg, msg) == 0) count += workers[j].errors.items[f].count;
            fprintf(stderr, "luaload: script error in %lld iteration%s: %s\n", (long long)count,
                    count == 1 ? "" : "s", msg);
        }
    }
}

/* Waits for the workers; every second meanwhile: samples the vus gauges,
 * redraws the progress lines, and (with thresholds) merges the workers'
 * published snapshots and evaluates the thresholds, stopping the run when
 * one with abortOnFail fails. */
static void watch_workers(ll_run *run, ll_worker *workers, int n, ll_worker *life, ll_config *cfg, uint64_t t0) {
    ll_shard *snap = run->publish ? ll_shard_new(run->reg) : NULL;
    int progress = !cfg->quiet && isatty(2);
    ll_progress_sample(life->shard, &cfg->scenarios, workers, n, t0, 1);
    uint64_t next = t0 + 1000000000ull;
    pthread_mutex_lock(&run->mu);
    while (run->finished < n) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&run->cv, &run->mu, &until);
        if (run->finished >= n) break;
        uint64_t now = ll_loop_now_ns();
        if (now < next) continue; /* woken by a worker that finished */
        next = now + 1000000000ull;
        pthread_mutex_unlock(&run->mu);
        ll_progress_sample(life->shard, &cfg->scenarios, workers, n, now, 0);
        if (progress) ll_progress_draw(&cfg->scenarios, workers, n, t0, now, 0);
        if (snap) {
            ll_shard_reset(snap);
            for (int i = 0; i < n; i++) ll_worker_read_published(&workers[i], snap);
            ll_shard_merge(snap, life->shard);
            int abort = 0;
            double elapsed = (double)(now - t0) / 1e9;
            ll_threshold_set_evaluate(&cfg->thresholds, run->reg, snap, elapsed, &abort);
            if (abort && !atomic_exchange(&run->threshold_abort, 1))
                fprintf(stderr, "luaload: a threshold with abortOnFail failed after %.1fs: stopping the test\n",
                        elapsed);
        }
        pthread_mutex_lock(&run->mu);
    }
    pthread_mutex_unlock(&run->mu);
    ll_shard_free(snap);
    for (int i = 0; i < n; i++) ll_worker_join(&workers[i]);
    if (progress) ll_progress_draw(&cfg->scenarios, workers, n, t0, ll_loop_now_ns(), 1);
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

/* Every scenario's exec function must exist (checked in the lifecycle state,
 * before setup runs). */
static int check_exec_functions(ll_worker *life, const ll_config *cfg) {
    for (int i = 0; i < cfg->scenarios.n; i++) {
        const ll_scenario *sc = &cfg->scenarios.items[i];
        if (ll_script_function(life, sc->exec, NULL, NULL)) continue;
        if (strcmp(sc->name, "default") == 0 && cfg->scenarios.n == 1)
            fprintf(stderr, "luaload: %s defines no function %s() to run as the iteration\n",
                    cfg->script_path ? cfg->script_path : "the script", sc->exec);
        else
            fprintf(stderr, "luaload: scenario %s: the script defines no function %s() (exec)\n", sc->name, sc->exec);
        return LL_EXIT_SCRIPT;
    }
    return 0;
}

int ll_engine_run(ll_config *cfg) {
    char libbuf[4200], err[1024];
    ll_run run;
    memset(&run, 0, sizeof(run));
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    run.script_path = cfg->script_path;
    run.chunkname = "=quick";
    run.lib_dir = find_lib_dir(libbuf, sizeof(libbuf));
    run.env = cfg->env;
    run.nenv = cfg->nenv;
    run.scenarios = &cfg->scenarios;
    run.reg = ll_registry_new(3);
    run.transport = ll_transport_default();
    char *quick = cfg->quick_url ? quick_script(cfg->quick_url) : NULL;
    run.script_source = quick;

    int rc = 0, nworkers = 0;
    ll_worker life, *workers = NULL;
    ll_outputs *outputs = NULL;
    memset(&life, 0, sizeof(life));
    ll_shard *total = NULL;
    cJSON *data = NULL;
    char *teardown_out = NULL;

    if (!run.reg || (cfg->quick_url && !quick)) {
        fprintf(stderr, "luaload: out of memory\n");
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    if (cfg->script_path && !file_exists(cfg->script_path)) {
        fprintf(stderr, "luaload: cannot read script %s\n", cfg->script_path);
        rc = LL_EXIT_SCRIPT;
        goto done;
    }
    rc = ll_worker_init(&life, &run, -1);
    if (rc) {
        if (!atomic_load(&run.aborted)) fprintf(stderr, "luaload: %s\n", life.errmsg);
        goto done;
    }
    rc = ll_cli_parse_env(cfg); /* prints its own error */
    if (rc) goto done;
    rc = ll_script_read_options(&life, cfg, run.reg, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "luaload: %s\n", err);
        goto done;
    }
    /* k6 shows this sub-metric in every summary */
    const char *er_key = "expected_response", *er_value = "true";
    if (ll_registry_submetric(run.reg, LL_M_HTTP_REQ_DURATION, &er_key, &er_value, 1) < 0) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    run.publish = cfg->thresholds.n > 0;
    if (cfg->noutputs) {
        outputs = ll_outputs_open(cfg->outputs, cfg->noutputs, run.reg, &cfg->thresholds, &ll_poster_http, err,
                                  sizeof(err));
        if (outputs) ll_outputs_attach(outputs, life.shard);
        if (!outputs || ll_outputs_start(outputs) != 0) {
            fprintf(stderr, "luaload: %s\n", outputs ? "cannot start the outputs" : err);
            rc = LL_EXIT_CONFIG;
            goto done;
        }
    }
    if (ll_config_default_scenario(cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        rc = LL_EXIT_CONFIG;
        goto done;
    }
    rc = check_exec_functions(&life, cfg);
    if (rc) goto done;
    int64_t max_vus = 0;
    run.vu_id_base = calloc(cfg->scenarios.n > 0 ? (size_t)cfg->scenarios.n : 1, sizeof(uint64_t));
    if (!run.vu_id_base) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    for (int i = 0; i < cfg->scenarios.n; i++) {
        run.vu_id_base[i] = (uint64_t)max_vus;
        max_vus += ll_scenario_max_vus(&cfg->scenarios.items[i]);
    }
    check_fd_limit(max_vus);
    if (!cfg->setup_timeout_set) cfg->setup_timeout_us = 60000000; /* k6's defaults */
    if (!cfg->teardown_timeout_set) cfg->teardown_timeout_us = 60000000;
    nworkers = cfg->workers > 0 ? cfg->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nworkers < 1) nworkers = 1;
    if (nworkers > max_vus) nworkers = max_vus > 0 ? (int)max_vus : 1;
    run.nworkers = nworkers;
    if (!cfg->quiet) print_banner(cfg, nworkers);

    g_run = &run;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    rc = ll_worker_call(&life, "setup", NULL, &run.setup_json, cfg->setup_timeout_us, LL_EXIT_SETUP_TIMEOUT);
    if (rc) {
        if (!atomic_load(&run.aborted)) fprintf(stderr, "luaload: setup() failed: %s\n", life.errmsg);
        goto done;
    }

    workers = calloc((size_t)nworkers, sizeof(*workers));
    if (!workers) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    for (int i = 0; i < nworkers; i++) {
        rc = ll_worker_init(&workers[i], &run, i);
        if (rc) {
            if (!atomic_load(&run.aborted)) fprintf(stderr, "luaload: worker %d: %s\n", i, workers[i].errmsg);
            nworkers = i + 1;
            goto done;
        }
        if (outputs) ll_outputs_attach(outputs, workers[i].shard);
    }

    uint64_t t0 = run.t0 = ll_loop_now_ns();
    for (int i = 0; i < nworkers; i++) {
        if (ll_worker_start_thread(&workers[i]) != 0) {
            fprintf(stderr, "luaload: cannot start worker thread %d\n", i);
            atomic_store(&run.interrupt, 1);
            nworkers = i;
            rc = LL_EXIT_FAILURE;
            break;
        }
    }
    watch_workers(&run, workers, nworkers, &life, cfg, t0);
    double elapsed = (double)(ll_loop_now_ns() - t0) / 1e9;
    if (rc) goto done;
    report_errors(workers, nworkers);
    int64_t cut = 0;
    for (int i = 0; i < nworkers; i++) cut += workers[i].interrupted;
    if (cut > 0)
        fprintf(stderr, "luaload: %lld iteration%s still running at the end were interrupted (not counted)\n",
                (long long)cut, cut == 1 ? "" : "s");

    total = ll_shard_new(run.reg);
    for (int i = 0; i < nworkers; i++) ll_shard_merge(total, workers[i].shard);

    int interrupted = atomic_load(&run.interrupt);
    if (!atomic_load(&run.aborted)) {
        rc = ll_worker_call(&life, "teardown", run.setup_json, &teardown_out, cfg->teardown_timeout_us,
                            LL_EXIT_TEARDOWN_TIMEOUT);
        if (rc && !atomic_load(&run.aborted)) fprintf(stderr, "luaload: teardown() failed: %s\n", life.errmsg);
    }
    ll_shard_merge(total, life.shard);

    if (outputs) ll_outputs_stop(outputs);
    int abort_unused, failed = ll_threshold_set_evaluate(&cfg->thresholds, run.reg, total, elapsed, &abort_unused);
    ll_summary_opts sopts = {cfg->trend_stats, cfg->ntrend_stats, cfg->time_unit, &cfg->thresholds};
    data = ll_summary_data(run.reg, total, elapsed, &sopts);
    if (!cfg->no_summary && ll_script_summary(&life, data) != 0 && !rc) rc = LL_EXIT_FAILURE;
    report_thresholds(&cfg->thresholds, run.reg);
    if (cfg->summary_export && ll_summary_export(data, cfg->summary_export, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        if (!rc) rc = LL_EXIT_FAILURE;
    }
    if (!rc && (failed || atomic_load(&run.threshold_abort))) rc = LL_EXIT_THRESHOLDS;
    if (!rc && interrupted) rc = LL_EXIT_EXTERNAL_ABORT;

done:
    if (atomic_load(&run.aborted)) {
        fprintf(stderr, "luaload: test aborted: %s\n", run.abort_reason);
        rc = LL_EXIT_ABORTED;
    }
    g_run = NULL;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ll_outputs_free(outputs); /* before the shards it writes from */
    cJSON_Delete(data);
    free(teardown_out);
    ll_shard_free(total);
    for (int i = 0; workers && i < nworkers; i++) ll_worker_free(&workers[i]);
    free(workers);
    ll_worker_free(&life);
    free(run.setup_json);
    ll_registry_free(run.reg);
    free(run.vu_id_base);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    free(quick);
    return rc;
}
