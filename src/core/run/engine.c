/* engine.c -- one run, start to end, as phases over one context (engine_ctx.h):
 * prepare (the script's init code and options, the config, the limits),
 * setup (setup()), scenarios (the workers started, watched, stopped),
 * teardown (teardown()) and report (the summary and the exit code). A phase
 * says what comes next; whatever happened, one cleanup frees what the context
 * holds. Also the signal handlers and where the shipped lib/lua is. */
#include "engine.h"

#include <cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "engine_ctx.h"
#include "rng.h"
#include "scenario_split.h"

static ll_run *g_run; /* for the signal handler */

/* The first SIGINT/SIGTERM stops the run (see run.h); a second one exits
 * at once, unless it came with the first: `timeout` and process managers
 * send theirs to the process and to its group. */
#define SIGNAL_REPEAT_NS 250000000ull

static void on_signal(int sig) {
    if (!g_run) return;
    uint64_t now = ll_loop_now_ns();
    if (atomic_load(&g_run->interrupt)) {
        if (now - atomic_load(&g_run->interrupt_ns) >= SIGNAL_REPEAT_NS) _exit(LL_EXIT_EXTERNAL_ABORT);
        return;
    }
    atomic_store(&g_run->interrupt_ns, now);
    atomic_store(&g_run->interrupt_sig, sig);
    atomic_store(&g_run->interrupt, 1);
}

void engine_tell_interrupt(ll_engine *e, const char *what) {
    if (e->told_interrupt || !atomic_load(&e->run.interrupt)) return;
    e->told_interrupt = 1;
    int sig = atomic_load(&e->run.interrupt_sig);
    fprintf(stderr, "luaload: interrupted by %s%s%s\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
            what ? ": " : "", what ? what : "");
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

/* The shipped lib/lua: next to the binary (build tree or install prefix),
 * then the source tree and install paths compiled in. */
const char *ll_engine_lib_dir(char *buf, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        const char *rel[] = {"/../share/luaload/lua", "/../lib/lua"}; /* installed, then the source tree */
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

void engine_init(ll_engine *e, ll_config *cfg, const ll_script_ops *script) {
    memset(e, 0, sizeof(*e));
    e->cfg = cfg;
    ll_run *run = &e->run;
    run->script = script;
    pthread_mutex_init(&run->mu, NULL);
    pthread_cond_init(&run->cv, NULL);
    run->script_path = cfg->script_path;
    run->lib_dir = ll_engine_lib_dir(e->libbuf, sizeof(e->libbuf));
    run->env = cfg->env;
    run->nenv = cfg->nenv;
    run->scenarios = &cfg->run.scenarios;
    if (!cfg->run.seed_set) cfg->run.seed = ll_rng_entropy_seed(); /* LUALOAD_SEED or options.seed may replace it */
    run->seed = &cfg->run.seed;
    g_run = run;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

int engine_abandoned(const ll_engine *e) {
    int any = e->life_lost;
    for (int i = 0; e->workers && i < e->nworkers; i++) any |= e->workers[i].abandoned;
    return any;
}

void engine_free(ll_engine *e) {
    g_run = NULL; /* the handlers stay: a signal after the run (a second Ctrl-C
                   * as it frees) is ignored, the process exits with its code */
    ll_fdreserve_release(&e->end_fds);
    ll_outputs_free(e->outputs); /* before the shards it writes from */
    ll_results_free(e->results);
    cJSON_Delete(e->data);
    free(e->teardown_out);
    for (int i = 0; e->workers && i < e->nworkers; i++) ll_worker_free(&e->workers[i]);
    free(e->workers);
    ll_worker_free(&e->life);
    if (!e->borrowed) {
        ll_shard_free(e->total);
        ll_registry_free(e->run.reg);
    }
    free(e->run.setup_json);
    free(e->run.vu_id_base);
    free(e->run.scenario_iters);
    ll_scenario_split_free(e->run.stripes, e->cfg->run.scenarios.n);
    ll_segment_tuple_free(&e->tuple);
    free(e->run.options_json);
    if (e->run.console) fclose(e->run.console);
    pthread_cond_destroy(&e->run.cv);
    pthread_mutex_destroy(&e->run.mu);
    if (e->mode) e->mode->close(e->ms);
    memset(e, 0, sizeof(*e));
}

/* The run's own parts of the context: its registry with luaload's own
 * metrics, the transport, DNS and source addresses the VUs use, the open
 * files kept for the end, the crash guard. */
static void engine_open(ll_engine *e, ll_config *cfg, const ll_script_ops *script, const ll_mode_ops *mode) {
    engine_init(e, cfg, script);
    e->mode = mode;
    ll_run *run = &e->run;
    run->chunkname = "=quick";
    run->reg = ll_registry_new(3);
    if (run->reg) { /* luaload's own (worker.c's probe), before the thresholds name them */
        run->m_worker_busy = ll_registry_metric(run->reg, "luaload_worker_busy", LL_TREND, LL_CONTAINS_DEFAULT);
        run->m_loop_lag = ll_registry_metric(run->reg, "luaload_loop_lag", LL_TREND, LL_CONTAINS_TIME);
    }
    run->transport = cfg->transport;
    run->dns = &cfg->dns;             /* final once the options are read, before */
    run->local_ips = &cfg->local_ips; /* any request or VU */
    run->publish = 1; /* snapshots for thresholds and for workers given up on */
    ll_fdreserve_take(&e->end_fds, ENGINE_FD_END);
    ll_crash_install();
}

/* How the run ended, whatever the phases said: the status API told and
 * stopped, abort() and a crash override the exit code; with a thread given
 * up on (it may still run Lua code in its state) nothing is freed and the
 * process leaves. */
static int engine_close(ll_engine *e) {
    int rc = e->rc;
    engine_tell_interrupt(e, NULL); /* when no phase told it */
    ll_fdreserve_release(&e->end_fds);
    ll_api_set_status(e->api, atomic_load(&e->run.interrupt) ? LL_API_STATUS_INTERRUPTED : LL_API_STATUS_ENDED);
    ll_api_stop(e->api);
    if (atomic_load(&e->run.aborted)) {
        fprintf(stderr, "luaload: test aborted: %s\n", e->run.abort_reason);
        rc = LL_EXIT_ABORTED;
    }
    if (atomic_load(&e->run.crashed)) rc = LL_EXIT_CRASH; /* a fault caught by the crash guard (crash.c) */
    if (engine_abandoned(e)) {
        if (e->outputs && !e->outputs_stopped) ll_outputs_stop(e->outputs);
        fflush(NULL);
        _exit(rc);
    }
    engine_free(e);
    return rc;
}

int ll_engine_run(ll_config *cfg, const ll_script_ops *script, const ll_mode_ops *mode) {
    ll_engine e;
    engine_open(&e, cfg, script, mode);
    engine_next next = engine_prepare(&e);
    if (next == ENGINE_NEXT) next = engine_setup(&e);
    if (next == ENGINE_NEXT) next = engine_scenarios(&e);
    if (next != ENGINE_END) { /* what ran is summed up */
        engine_teardown(&e);
        engine_report(&e);
    }
    return engine_close(&e);
}
