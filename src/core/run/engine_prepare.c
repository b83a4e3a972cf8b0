/* engine_prepare.c -- the run's first phase: the mode's state (quick mode),
 * the script's init code and options on the lifecycle worker, the config
 * merged (environment, options, --threshold), the outputs opened, the
 * default scenario, this instance's segment, the limits checked, the
 * options as JSON, the workers counted and the banner. `luaload inspect`
 * ends here, printing the options. */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "engine_ctx.h"
#include "options_json.h"
#include "poster.h"
#include "progress.h"
#include "scenario_split.h"
#include "script.h"
#include "transport.h"
#include "xmalloc.h"

/* luaload inspect: the options a run would use, as JSON on stdout (k6
 * inspect's); with --execution-requirements also maxVUs and totalDuration
 * (k6's) and each scenario's VUs, start, duration and end. */
static int print_inspect(const ll_config *cfg, const char *options_json, int64_t max_vus) {
    cJSON *o = cJSON_Parse(options_json);
    if (!o) return LL_EXIT_FAILURE;
    if (cfg->inspect == 2) {
        char d[64];
        uint64_t total = 0;
        cJSON *req = cJSON_AddObjectToObject(o, "executionRequirements");
        cJSON *scs = cJSON_AddObjectToObject(req, "scenarios");
        for (int i = 0; i < cfg->run.scenarios.n; i++) {
            const ll_scenario *sc = &cfg->run.scenarios.items[i];
            cJSON *e = cJSON_AddObjectToObject(scs, sc->name);
            cJSON_AddStringToObject(e, "executor", ll_scenario_executor_name(sc->executor));
            cJSON_AddNumberToObject(e, "maxVUs", (double)ll_scenario_max_vus(sc));
            ll_duration_format(sc->start_time_us, d, sizeof(d));
            cJSON_AddStringToObject(e, "startTime", d);
            ll_duration_format(ll_scenario_duration_us(sc), d, sizeof(d));
            cJSON_AddStringToObject(e, "duration", d);
            ll_duration_format(ll_scenario_end_us(sc), d, sizeof(d));
            cJSON_AddStringToObject(e, "end", d); /* its start, duration and graceful stop */
            if (ll_scenario_end_us(sc) > total) total = ll_scenario_end_us(sc);
        }
        ll_duration_format(total, d, sizeof(d));
        cJSON_AddNumberToObject(req, "maxVUs", (double)max_vus);
        cJSON_AddStringToObject(req, "totalDuration", d);
        cJSON_AddNumberToObject(o, "maxVUs", (double)max_vus);
        cJSON_AddStringToObject(o, "totalDuration", d);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return LL_EXIT_FAILURE;
    puts(text);
    free(text);
    return 0;
}

static void print_banner(const ll_config *cfg, const char *target, int nworkers) {
    printf("\n  luaload v%s\n\n", LUALOAD_VERSION);
    printf("     script: %s (%d worker%s)\n", target, nworkers,
           nworkers == 1 ? "" : "s");
    /* which transport serves a Client's requests (ll_transport_pick) */
    if (cfg->transport) printf("  transport: %s for every request (--transport or LUALOAD_TRANSPORT)\n", cfg->transport->name);
    else printf("  transport: native for HTTP/1.1, HTTP/2 and HTTP/3, curl for proxies and NTLM\n");
    if (cfg->dns.ttl_set || cfg->dns.select_set || cfg->dns.policy_set) {
        char dns[128];
        ll_dns_config_format(&cfg->dns, dns, sizeof(dns));
        printf("        dns: %s\n", dns);
    }
    if (cfg->local_ips_text) printf("  local IPs: %s (one per VU, in turn)\n", cfg->local_ips_text);
    if (cfg->run.seed_set) printf("       seed: %llu\n", (unsigned long long)cfg->run.seed);
    else printf("       seed: %llu (random; --seed %llu to repeat)\n", (unsigned long long)cfg->run.seed,
                (unsigned long long)cfg->run.seed);
    if (cfg->dist.segment_set || cfg->dist.sequence_set) {
        char seg[128], seq[512];
        ll_segment_format(cfg->dist.segment_set ? &cfg->dist.segment : NULL, seg, sizeof(seg));
        ll_segment_seq_format(&cfg->dist.sequence, seq, sizeof(seq));
        printf("    segment: %s%s%s (this instance's part of the test)\n", seg, *seq ? " of " : "", seq);
    }
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        const ll_scenario *sc = &cfg->run.scenarios.items[i];
        char shape[256];
        ll_progress_describe(sc, shape, sizeof(shape));
        printf("%s%s: %s", i == 0 ? "  scenarios: " : "             ", sc->name, shape);
        if (sc->start_time_us) printf(", starting at %.6gs", (double)sc->start_time_us / 1e6);
        if (sc->none) printf(" -- none of it in this segment: this instance runs nothing of it");
        printf("\n");
    }
    printf("\n");
    fflush(stdout);
}

/* Every scenario's exec function must exist (checked in the lifecycle state,
 * before setup runs). */
static int check_exec_functions(ll_worker *life, const ll_config *cfg) {
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        const ll_scenario *sc = &cfg->run.scenarios.items[i];
        if (life->run->script->function(life, sc->exec, NULL, NULL)) continue;
        if (strcmp(sc->name, "default") == 0 && cfg->run.scenarios.n == 1)
            fprintf(stderr, "luaload: %s defines no function %s() to run as the iteration\n",
                    cfg->script_path ? cfg->script_path : "the script", sc->exec);
        else
            fprintf(stderr, "luaload: scenario %s: the script defines no function %s() (exec)\n", sc->name, sc->exec);
        return LL_EXIT_SCRIPT;
    }
    return 0;
}


/* The mode's state, the console, the outputs of results.c, then the
 * script's init code on the lifecycle worker. */
static engine_next prepare_script(ll_engine *e) {
    ll_config *cfg = e->cfg;
    ll_run *run = &e->run;
    if (!run->reg) {
        fprintf(stderr, "luaload: out of memory\n");
        return engine_end(e, LL_EXIT_FAILURE);
    }
    int rc = e->mode->open(&e->ms, cfg, &run->interrupt, e->err, sizeof(e->err));
    if (rc) {
        fprintf(stderr, "luaload: %s\n", e->err);
        return engine_end(e, rc);
    }
    run->script_source = e->mode->script(e->ms);
    run->target = e->mode->target(e->ms, cfg);
    run->mode = e->ms;
    run->iter = e->mode->iter;
    run->verbose = cfg->verbose;
    if (cfg->console_output && !cfg->inspect && !(run->console = fopen(cfg->console_output, "w"))) {
        fprintf(stderr, "luaload: --console-output: cannot write %s: %s\n", cfg->console_output, strerror(errno));
        return engine_end(e, LL_EXIT_CONFIG);
    }
    if (cfg->script_path && access(cfg->script_path, R_OK) != 0) {
        fprintf(stderr, "luaload: cannot read script %s: %s\n", cfg->script_path, strerror(errno));
        return engine_end(e, LL_EXIT_SCRIPT);
    }
    rc = cfg->inspect ? 0 : ll_results_open(&e->results, cfg, run->reg, &e->other_outputs); /* inspect writes nothing */
    if (rc) return engine_end(e, rc);
    run->tally_names = ll_results_wanted(e->results);
    rc = engine_life_init(e);
    if (atomic_load(&run->interrupt)) {
        fprintf(stderr, "luaload: interrupted by a signal while running the script's init code\n");
        return engine_sum_up(e, LL_EXIT_EXTERNAL_ABORT);
    }
    if (rc) {
        if (!atomic_load(&run->aborted) && !e->life_lost) fprintf(stderr, "luaload: %s\n", e->life.errmsg);
        return engine_end(e, rc);
    }
    return ENGINE_NEXT;
}

/* The config merged: the environment, the script's options, --threshold;
 * the outputs started; the scenarios and this instance's part of them. */
static engine_next prepare_config(ll_engine *e) {
    ll_config *cfg = e->cfg;
    ll_run *run = &e->run;
    int rc = ll_config_read_env(cfg); /* prints its own error */
    if (rc) return engine_end(e, rc);
    run->transport = cfg->transport; /* LUALOAD_TRANSPORT comes with the environment, after --transport */
    rc = run->script->read_options(&e->life, cfg, run->reg, e->err, sizeof(e->err));
    if (!rc) rc = ll_config_add_cli_thresholds(cfg, run->reg, e->err, sizeof(e->err));
    if (!rc) rc = ll_config_apply_tags(cfg, run->reg, e->err, sizeof(e->err));
    run->insecure_skip_verify = cfg->insecure_skip_verify; /* the flags win over the options */
    run->http_debug = cfg->http_debug;
    run->rps_interval_ns = cfg->rps > 0 ? (uint64_t)(1e9 / cfg->rps + 0.5) : 0;
    if (rc) {
        fprintf(stderr, "luaload: %s\n", e->err);
        return engine_end(e, rc);
    }
    /* k6 shows this sub-metric in every summary */
    const char *er_key = "expected_response", *er_value = "true";
    if (ll_registry_submetric(run->reg, LL_M_HTTP_REQ_DURATION, &er_key, &er_value, 1) < 0)
        return engine_end(e, LL_EXIT_FAILURE);
    if (e->other_outputs) {
        e->outputs = ll_outputs_open(cfg->outputs, cfg->noutputs, run->reg, &cfg->thresholds, &ll_poster_http, e->err,
                                     sizeof(e->err));
        if (e->outputs) ll_outputs_attach(e->outputs, e->life.shard);
        if (!e->outputs || ll_outputs_start(e->outputs) != 0) {
            fprintf(stderr, "luaload: %s\n", e->outputs ? "cannot start the outputs" : e->err);
            return engine_end(e, LL_EXIT_CONFIG);
        }
    }
    if (ll_config_default_scenario(cfg, e->err, sizeof(e->err)) != 0) {
        fprintf(stderr, "luaload: %s\n", e->err);
        return engine_end(e, LL_EXIT_CONFIG);
    }
    rc = check_exec_functions(&e->life, cfg);
    if (!rc) rc = ll_results_identify(e->results, cfg, run->target);
    if (rc) return engine_end(e, rc);
    if (cfg->dist.segment_set || cfg->dist.sequence_set) { /* one part of a test split over instances */
        if (ll_segment_tuple_init(&e->tuple, cfg->dist.segment_set ? &cfg->dist.segment : NULL,
                                  cfg->dist.sequence.n ? &cfg->dist.sequence : NULL, e->err, sizeof(e->err)) != 0 ||
            ll_scenario_split(&cfg->run.scenarios, &e->tuple, &run->stripes, e->err, sizeof(e->err)) != 0) {
            fprintf(stderr, "luaload: %s\n", e->err);
            return engine_end(e, LL_EXIT_CONFIG);
        }
        run->tuple = &e->tuple;
    }
    return ENGINE_NEXT;
}

/* The VU ids and counts, the limits, the timeouts' defaults, the options
 * as JSON (luaload inspect prints them and ends), the workers, the banner. */
static engine_next prepare_limits(ll_engine *e) {
    ll_config *cfg = e->cfg;
    ll_run *run = &e->run;
    size_t nsc = cfg->run.scenarios.n > 0 ? (size_t)cfg->run.scenarios.n : 1;
    run->vu_id_base = ll_xcalloc(nsc, sizeof(uint64_t));
    run->scenario_iters = ll_xcalloc(nsc, sizeof(*run->scenario_iters));
    int rc = engine_limits_vus(cfg, run->vu_id_base, &e->max_vus);
    if (!rc && !cfg->dist.setup_only && !cfg->inspect) /* no VU made yet */
        rc = engine_limits_fds(e, engine_limits_workers(cfg, e->max_vus));
    if (rc) return engine_end(e, rc);
    if (!cfg->run.setup_timeout_set) cfg->run.setup_timeout_us = 60000000; /* k6's defaults */
    if (!cfg->run.teardown_timeout_set) cfg->run.teardown_timeout_us = 60000000;
    run->options_json = ll_options_json(cfg);
    if (!run->options_json) return engine_end(e, LL_EXIT_FAILURE);
    if (cfg->inspect) return engine_end(e, print_inspect(cfg, run->options_json, e->max_vus));
    e->nworkers = run->nworkers = engine_limits_workers(cfg, e->max_vus);
    if (!cfg->quiet) print_banner(cfg, run->target, e->nworkers);
    return ENGINE_NEXT;
}

engine_next engine_prepare(ll_engine *e) {
    engine_next next = prepare_script(e);
    if (next == ENGINE_NEXT) next = prepare_config(e);
    if (next == ENGINE_NEXT) next = prepare_limits(e);
    return next;
}
