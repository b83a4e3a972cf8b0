/* options_json.c -- the run's consolidated options as JSON, in k6's names
 * and formats (durations as "30s", executors by name), for the script's
 * luaload.execution test.options: what the script's options became once
 * the command line, the environment and k6's defaults were applied. */
#include "options_json.h"

#include <cJSON.h>

#include "duration.h"

static void add_duration(cJSON *o, const char *key, uint64_t us) {
    char buf[64];
    ll_duration_format(us, buf, sizeof(buf));
    cJSON_AddStringToObject(o, key, buf);
}

static cJSON *stages_json(const ll_stage *st, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        add_duration(o, "duration", st[i].duration_us);
        cJSON_AddNumberToObject(o, "target", st[i].target);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *tags_json(const ll_tag *t, int n) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < n; i++) cJSON_AddStringToObject(o, t[i].key, t[i].value);
    return o;
}

/* The settings that apply to the scenario's executor, as k6 lists them. */
static cJSON *scenario_json(const ll_scenario *sc) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "executor", ll_scenario_executor_name(sc->executor));
    cJSON_AddStringToObject(o, "exec", sc->exec);
    add_duration(o, "startTime", sc->start_time_us);
    add_duration(o, "gracefulStop", sc->graceful_stop_us);
    switch (sc->executor) {
    case LL_EX_SHARED_ITERATIONS:
    case LL_EX_PER_VU_ITERATIONS:
        cJSON_AddNumberToObject(o, "vus", (double)sc->vus);
        cJSON_AddNumberToObject(o, "iterations", (double)sc->iterations);
        add_duration(o, "maxDuration", sc->max_duration_us);
        break;
    case LL_EX_CONSTANT_VUS:
        cJSON_AddNumberToObject(o, "vus", (double)sc->vus);
        add_duration(o, "duration", sc->duration_us);
        break;
    case LL_EX_RAMPING_VUS:
        cJSON_AddNumberToObject(o, "startVUs", (double)sc->start_vus);
        cJSON_AddItemToObject(o, "stages", stages_json(sc->stages, sc->nstages));
        add_duration(o, "gracefulRampDown", sc->graceful_ramp_down_us);
        break;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
        cJSON_AddNumberToObject(o, "rate", sc->rate);
        add_duration(o, "timeUnit", sc->time_unit_us);
        add_duration(o, "duration", sc->duration_us);
        cJSON_AddNumberToObject(o, "preAllocatedVUs", (double)sc->pre_allocated_vus);
        cJSON_AddNumberToObject(o, "maxVUs", (double)sc->max_vus);
        break;
    case LL_EX_RAMPING_ARRIVAL_RATE:
        cJSON_AddNumberToObject(o, "startRate", sc->start_rate);
        add_duration(o, "timeUnit", sc->time_unit_us);
        cJSON_AddItemToObject(o, "stages", stages_json(sc->stages, sc->nstages));
        cJSON_AddNumberToObject(o, "preAllocatedVUs", (double)sc->pre_allocated_vus);
        cJSON_AddNumberToObject(o, "maxVUs", (double)sc->max_vus);
        break;
    }
    if (sc->nenv) cJSON_AddItemToObject(o, "env", tags_json(sc->env, sc->nenv));
    if (sc->ntags) cJSON_AddItemToObject(o, "tags", tags_json(sc->tags, sc->ntags));
    return o;
}

/* thresholds = { metric = { "expr", ... } }, the table form for the ones
 * with abortOnFail or delayAbortEval */
static cJSON *thresholds_json(const ll_threshold_set *set) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < set->n; i++) {
        const ll_threshold *t = &set->items[i];
        cJSON *list = cJSON_GetObjectItemCaseSensitive(o, t->metric_key);
        if (!list) list = cJSON_AddArrayToObject(o, t->metric_key);
        if (!list) break;
        if (!t->abort_on_fail && !t->delay_abort_us) {
            cJSON_AddItemToArray(list, cJSON_CreateString(t->source));
            continue;
        }
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "threshold", t->source);
        cJSON_AddBoolToObject(e, "abortOnFail", t->abort_on_fail);
        if (t->delay_abort_us) add_duration(e, "delayAbortEval", t->delay_abort_us);
        cJSON_AddItemToArray(list, e);
    }
    return o;
}

char *ll_options_json(const ll_config *cfg) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (cfg->run.vus_set) cJSON_AddNumberToObject(o, "vus", (double)cfg->run.vus);
    if (cfg->run.duration_set) add_duration(o, "duration", cfg->run.duration_us);
    if (cfg->run.iterations_set) cJSON_AddNumberToObject(o, "iterations", (double)cfg->run.iterations);
    if (cfg->run.stages_set) cJSON_AddItemToObject(o, "stages", stages_json(cfg->run.stages, cfg->run.nstages));
    cJSON *scs = cJSON_AddObjectToObject(o, "scenarios");
    for (int i = 0; scs && i < cfg->run.scenarios.n; i++)
        cJSON_AddItemToObject(scs, cfg->run.scenarios.items[i].name, scenario_json(&cfg->run.scenarios.items[i]));
    cJSON_AddItemToObject(o, "thresholds", thresholds_json(&cfg->thresholds));
    add_duration(o, "setupTimeout", cfg->run.setup_timeout_us);
    add_duration(o, "teardownTimeout", cfg->run.teardown_timeout_us);
    if (cfg->summary.ntrend_stats) {
        cJSON *a = cJSON_AddArrayToObject(o, "summaryTrendStats");
        for (int i = 0; a && i < cfg->summary.ntrend_stats; i++) cJSON_AddItemToArray(a, cJSON_CreateString(cfg->summary.trend_stats[i]));
    }
    if (cfg->summary.time_unit && *cfg->summary.time_unit) cJSON_AddStringToObject(o, "summaryTimeUnit", cfg->summary.time_unit);
    cJSON *dns = cJSON_AddObjectToObject(o, "dns");
    if (dns) {
        char ttl[64] = "inf";
        int64_t ms = ll_dns_ttl_ms(&cfg->dns);
        if (ms != LL_DNS_TTL_FOREVER) ll_duration_format((uint64_t)ms * 1000, ttl, sizeof(ttl));
        cJSON_AddStringToObject(dns, "ttl", ttl);
        cJSON_AddStringToObject(dns, "select", ll_dns_select_name(cfg->dns.select));
        cJSON_AddStringToObject(dns, "policy", ll_dns_policy_name(cfg->dns.policy));
    }
    if (cfg->local_ips_text) cJSON_AddStringToObject(o, "localIPs", cfg->local_ips_text);
    if (cfg->rps > 0) cJSON_AddNumberToObject(o, "rps", cfg->rps);
    if (cfg->http_debug) cJSON_AddStringToObject(o, "httpDebug", cfg->http_debug == 2 ? "full" : "headers");
    if (cfg->insecure_skip_verify) cJSON_AddBoolToObject(o, "insecureSkipTLSVerify", 1);
    if (cfg->fail_all_failed) cJSON_AddBoolToObject(o, "failWhenAllIterationsFail", 1);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
