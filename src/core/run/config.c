/* config.c -- one run's configuration (see config.h): the LUALOAD_*
 * environment variables that sit between the flags and the script's
 * options, summary settings, stages, the seed's syntax, the execution
 * segment, the dns option and the source addresses (--local-ips), and
 * the implicit default scenario. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "transport.h"
#include "xmalloc.h"

void ll_config_free(ll_config *cfg) {
    free(cfg->env);
    cfg->env = NULL;
    free(cfg->tags);
    cfg->tags = NULL;
    cfg->ntags = 0;
    free(cfg->outputs);
    cfg->outputs = NULL;
    free(cfg->run.stages);
    cfg->run.stages = NULL;
    ll_scenarios_free(&cfg->run.scenarios);
    for (int i = 0; i < cfg->summary.ntrend_stats; i++) free(cfg->summary.trend_stats[i]);
    free(cfg->summary.trend_stats);
    cfg->summary.trend_stats = NULL;
    cfg->summary.ntrend_stats = 0;
    ll_threshold_set_free(&cfg->thresholds);
    ll_segment_seq_free(&cfg->dist.sequence);
    free(cfg->quick.urls);
    free(cfg->quick.urls_text);
    free(cfg->quick.headers);
    memset(&cfg->quick, 0, sizeof(cfg->quick));
    for (int i = 0; i < cfg->ncli_thresholds; i++) free(cfg->cli_threshold_keys[i]);
    free(cfg->cli_threshold_keys);
    free(cfg->cli_threshold_exprs);
    cfg->cli_threshold_keys = NULL;
    cfg->cli_threshold_exprs = NULL;
    cfg->ncli_thresholds = 0;
    ll_ip_pool_free(&cfg->local_ips);
    free(cfg->local_ips_text);
    cfg->local_ips_text = NULL;
}

int ll_config_set_local_ips(ll_config *cfg, const char *what, const char *text, int force, char *err, size_t errlen) {
    ll_ip_pool pool;
    char why[200];
    if (ll_ip_pool_parse(&pool, text, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "invalid value for %s: '%s' (%s)", what, text, why);
        return -1;
    }
    if (cfg->local_ips_text && !force) {
        ll_ip_pool_free(&pool);
        return 0;
    }
    ll_ip_pool_free(&cfg->local_ips);
    free(cfg->local_ips_text);
    cfg->local_ips = pool;
    cfg->local_ips_text = ll_xstrdup(text);
    return 0;
}

int ll_config_set_dns(ll_config *cfg, const char *what, const char *text, int force, char *err, size_t errlen) {
    const char *expected;
    if (ll_dns_config_parse(&cfg->dns, text, force, &expected) == 0) return 0;
    snprintf(err, errlen, "invalid value for %s: '%s' (expected %s)", what, text, expected);
    return -1;
}

int ll_config_parse_seed(const char *s, uint64_t *out) {
    if (!s || *s == 0 || strspn(s, "0123456789") != strlen(s)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

int ll_config_time_unit_valid(const char *s) {
    return strcmp(s, "") == 0 || strcmp(s, "s") == 0 || strcmp(s, "ms") == 0 || strcmp(s, "us") == 0;
}

/* avg, min, med, max, count, or p(N) with 0 <= N <= 100 */
static int trend_stat_valid(const char *s) {
    if (strcmp(s, "avg") == 0 || strcmp(s, "min") == 0 || strcmp(s, "med") == 0 || strcmp(s, "max") == 0 ||
        strcmp(s, "count") == 0)
        return 1;
    double p;
    int n = 0;
    if (sscanf(s, "p(%lf)%n", &p, &n) != 1 || s[n] != 0) return 0;
    return p >= 0 && p <= 100;
}

int ll_config_set_trend_stats(ll_config *cfg, const char *list, char *err, size_t errlen) {
    char *copy = ll_xstrdup(list);
    for (int i = 0; i < cfg->summary.ntrend_stats; i++) free(cfg->summary.trend_stats[i]);
    cfg->summary.ntrend_stats = 0;
    int rc = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        char *end = t + strlen(t);
        while (end > t && end[-1] == ' ') *--end = 0;
        if (!trend_stat_valid(t)) {
            snprintf(err, errlen, "a list of avg, min, med, max, count, p(N); '%s' is none of them", t);
            rc = -1;
            break;
        }
        cfg->summary.trend_stats = ll_xrealloc(cfg->summary.trend_stats, (size_t)(cfg->summary.ntrend_stats + 1) * sizeof(*cfg->summary.trend_stats));
        cfg->summary.trend_stats[cfg->summary.ntrend_stats++] = ll_xstrdup(t);
    }
    free(copy);
    if (rc == 0 && cfg->summary.ntrend_stats == 0) {
        snprintf(err, errlen, "at least one of avg, min, med, max, count, p(N)");
        rc = -1;
    }
    cfg->summary.trend_stats_set = rc == 0;
    return rc;
}

int ll_config_add_stage(ll_config *cfg, uint64_t duration_us, double target) {
    cfg->run.stages = ll_xrealloc(cfg->run.stages, (size_t)(cfg->run.nstages + 1) * sizeof(*cfg->run.stages));
    cfg->run.stages[cfg->run.nstages++] = (ll_stage){duration_us, target};
    return 0;
}

int ll_config_default_scenario(ll_config *cfg, char *err, size_t errlen) {
    if (cfg->run.scenarios.n > 0 && !cfg->run.shortcut_cli) return 0; /* options.scenarios rule */
    ll_scenarios_free(&cfg->run.scenarios);
    ll_executor_type e = cfg->run.stages_set ? LL_EX_RAMPING_VUS
                  : cfg->run.iterations_set ? LL_EX_SHARED_ITERATIONS
                  : cfg->run.duration_set ? LL_EX_CONSTANT_VUS : LL_EX_SHARED_ITERATIONS;
    ll_scenario *s = ll_scenarios_add(&cfg->run.scenarios, "default", e);
    s->vus = cfg->run.vus_set ? cfg->run.vus : 1;
    s->iterations = cfg->run.iterations_set ? cfg->run.iterations : 1;
    if (e == LL_EX_SHARED_ITERATIONS && s->vus > s->iterations) s->vus = s->iterations;
    if (cfg->run.duration_set) s->duration_us = s->max_duration_us = cfg->run.duration_us;
    if (cfg->run.graceful_stop_set) s->graceful_stop_us = cfg->run.graceful_stop_us;
    if (e == LL_EX_RAMPING_VUS) {
        s->start_vus = cfg->run.vus_set ? cfg->run.vus : 1;
        s->stages = ll_xmalloc((size_t)cfg->run.nstages * sizeof(ll_stage));
        memcpy(s->stages, cfg->run.stages, (size_t)cfg->run.nstages * sizeof(ll_stage));
        s->nstages = cfg->run.nstages;
    }
    return ll_scenario_validate(s, err, errlen);
}

int ll_config_set_segment(ll_config *cfg, const char *what, const char *value, int force, char *err, size_t errlen) {
    ll_segment seg;
    if (ll_segment_parse(value, what, &seg, err, errlen) != 0) return -1;
    if (cfg->dist.segment_set && !force) return 0;
    if (cfg->dist.shard_set) {
        snprintf(err, errlen, "%s: --shard gives the segment already; use one or the other", what);
        return -1;
    }
    cfg->dist.segment = seg;
    cfg->dist.segment_set = 1;
    return 0;
}

int ll_config_set_sequence(ll_config *cfg, const char *what, const char *value, int force, char *err,
                           size_t errlen) {
    ll_segment_seq seq;
    if (ll_segment_seq_parse(value, what, &seq, err, errlen) != 0) return -1;
    if ((cfg->dist.sequence_set && !force) || cfg->dist.shard_set) {
        ll_segment_seq_free(&seq);
        if (!force) return 0;
        snprintf(err, errlen, "%s: --shard gives the sequence already; use one or the other", what);
        return -1;
    }
    ll_segment_seq_free(&cfg->dist.sequence);
    cfg->dist.sequence = seq;
    cfg->dist.sequence_set = 1;
    return 0;
}

int ll_config_set_shard(ll_config *cfg, const char *what, const char *value, char *err, size_t errlen) {
    ll_segment seg;
    ll_segment_seq seq;
    if (ll_segment_parse_shard(value, what, &seg, &seq, err, errlen) != 0) return -1;
    if (cfg->dist.segment_set || cfg->dist.sequence_set) {
        ll_segment_seq_free(&seq);
        if (cfg->dist.shard_set) snprintf(err, errlen, "%s: given twice (one part per instance)", what);
        else snprintf(err, errlen, "%s: give --shard or --execution-segment (with --execution-segment-sequence), "
                                   "not both", what);
        return -1;
    }
    cfg->dist.segment = seg;
    cfg->dist.sequence = seq;
    cfg->dist.segment_set = cfg->dist.sequence_set = cfg->dist.shard_set = 1;
    return 0;
}

/* --threshold 'metric=expression', after the script's own (its custom
 * metrics exist by then) */
int ll_config_add_cli_thresholds(ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    for (int i = 0; i < cfg->ncli_thresholds && !cfg->no_thresholds; i++) {
        const char *key = cfg->cli_threshold_keys[i], *expr = cfg->cli_threshold_exprs[i];
        char why[320];
        if (ll_threshold_set_add(&cfg->thresholds, reg, key, expr, 0, 0, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--threshold '%s=%s': %s", key, expr, why);
            return LL_EXIT_CONFIG;
        }
    }
    return 0;
}

ll_summary_opts ll_config_summary_opts(const ll_config *cfg) {
    const char *nc = getenv("NO_COLOR");
    ll_summary_opts o = {cfg->summary.trend_stats, cfg->summary.ntrend_stats, cfg->summary.time_unit, &cfg->thresholds,
                         cfg->summary.no_color || (nc && *nc)};
    return o;
}

int ll_config_bad(const char *flag, const char *value, const char *expected) {
    fprintf(stderr, "luaload: invalid value for %s: '%s' (expected %s)\n", flag, value, expected);
    return LL_EXIT_CONFIG;
}

int ll_config_parse_count(const char *flag, const char *v, int64_t min, int64_t *out) {
    if (ll_duration_parse_int(v, out) != 0 || *out < min) {
        char what[64];
        snprintf(what, sizeof(what), "an integer >= %lld", (long long)min);
        return ll_config_bad(flag, v, what);
    }
    return 0;
}

/* A VU count: VU ids are ints, so at most INT_MAX. */
int ll_config_parse_vus(const char *flag, const char *v, int64_t *out) {
    int rc = ll_config_parse_count(flag, v, 1, out);
    if (!rc && *out > INT_MAX) rc = ll_config_bad(flag, v, "at most 2147483647 VUs");
    return rc;
}

int ll_config_parse_dur(const char *flag, const char *v, uint64_t *out) {
    if (ll_duration_parse(v, out) != 0)
        return ll_config_bad(flag, v, "a duration from 0 to about 292 years, such as 10s, 1m30s, 500ms");
    return 0;
}

/* What a config.c setter's failure comes to: its one-line reason printed
 * and LL_EXIT_CONFIG; 0 when it did not fail. */
int ll_config_failed(int failed, const char *why) {
    if (!failed) return 0;
    fprintf(stderr, "luaload: %s\n", why);
    return LL_EXIT_CONFIG;
}

int ll_config_read_env(ll_config *cfg) {
    const char *v;
    int rc = 0;
    if (!cfg->run.vus_set && (v = getenv("LUALOAD_VUS"))) {
        rc = ll_config_parse_vus("LUALOAD_VUS", v, &cfg->run.vus);
        cfg->run.vus_set = cfg->run.shortcut_cli = 1;
    }
    if (!rc && !cfg->run.duration_set && (v = getenv("LUALOAD_DURATION"))) {
        rc = ll_config_parse_dur("LUALOAD_DURATION", v, &cfg->run.duration_us);
        if (!rc && cfg->run.duration_us == 0) rc = ll_config_bad("LUALOAD_DURATION", v, "a duration above 0");
        cfg->run.duration_set = cfg->run.shortcut_cli = 1;
    }
    if (!rc && !cfg->run.iterations_set && (v = getenv("LUALOAD_ITERATIONS"))) {
        rc = ll_config_parse_count("LUALOAD_ITERATIONS", v, 1, &cfg->run.iterations);
        cfg->run.iterations_set = cfg->run.shortcut_cli = 1;
    }
    if (!rc && !cfg->transport && (v = getenv("LUALOAD_TRANSPORT")) && *v) {
        cfg->transport = ll_transport_find(v);
        if (!cfg->transport) rc = ll_config_bad("LUALOAD_TRANSPORT", v, "native or curl");
    }
    char why[300];
    if (!rc && (v = getenv("LUALOAD_DNS")) && *v)
        rc = ll_config_failed(ll_config_set_dns(cfg, "LUALOAD_DNS", v, 0, why, sizeof(why)) != 0, why);
    if (!rc && (v = getenv("LUALOAD_LOCAL_IPS")) && *v)
        rc = ll_config_failed(ll_config_set_local_ips(cfg, "LUALOAD_LOCAL_IPS", v, 0, why, sizeof(why)) != 0, why);
    const char *seg = "LUALOAD_EXECUTION_SEGMENT", *seq = "LUALOAD_EXECUTION_SEGMENT_SEQUENCE";
    if (!rc && (v = getenv(seg)) && *v)
        rc = ll_config_failed(ll_config_set_segment(cfg, seg, v, 0, why, sizeof(why)) != 0, why);
    if (!rc && (v = getenv(seq)) && *v)
        rc = ll_config_failed(ll_config_set_sequence(cfg, seq, v, 0, why, sizeof(why)) != 0, why);
    if (!rc && !cfg->run.seed_set && (v = getenv("LUALOAD_SEED"))) {
        if (ll_config_parse_seed(v, &cfg->run.seed) != 0) rc = ll_config_bad("LUALOAD_SEED", v, LL_CONFIG_SEED_RANGE);
        cfg->run.seed_set = 1;
    }
    return rc;
}

int ll_config_apply_tags(const ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    for (int i = 0; i < cfg->ntags; i++) {
        const char *eq = strchr(cfg->tags[i], '=');
        char key[256];
        if ((size_t)(eq - cfg->tags[i]) >= sizeof(key)) {
            snprintf(err, errlen, "--tag '%s': expected NAME=VALUE with a NAME of at most 255 bytes", cfg->tags[i]);
            return LL_EXIT_CONFIG;
        }
        snprintf(key, sizeof(key), "%.*s", (int)(eq - cfg->tags[i]), cfg->tags[i]);
        if (ll_registry_add_tag(reg, key, eq + 1) != 0) {
            snprintf(err, errlen, "out of memory");
            return LL_EXIT_FAILURE;
        }
    }
    return 0;
}
