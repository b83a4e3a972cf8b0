/* config.c -- one run's configuration (see config.h): the LUALOAD_*
 * environment variables that sit between the flags and the script's
 * options, summary settings, stages, the seed's syntax, the execution
 * segment, the dns option and the source addresses (--local-ips), and
 * the implicit default scenario. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "xmalloc.h"

void ll_config_free(ll_config *cfg) {
    free(cfg->env);
    cfg->env = NULL;
    free(cfg->outputs);
    cfg->outputs = NULL;
    free(cfg->stages);
    cfg->stages = NULL;
    ll_scenarios_free(&cfg->scenarios);
    for (int i = 0; i < cfg->ntrend_stats; i++) free(cfg->trend_stats[i]);
    free(cfg->trend_stats);
    cfg->trend_stats = NULL;
    cfg->ntrend_stats = 0;
    ll_threshold_set_free(&cfg->thresholds);
    ll_segment_seq_free(&cfg->sequence);
    ll_quick_free(&cfg->quick);
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
    char *copy = strdup(list);
    if (!copy) return -1;
    for (int i = 0; i < cfg->ntrend_stats; i++) free(cfg->trend_stats[i]);
    cfg->ntrend_stats = 0;
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
        char **a = realloc(cfg->trend_stats, (size_t)(cfg->ntrend_stats + 1) * sizeof(*a));
        if (!a || !(a[cfg->ntrend_stats] = strdup(t))) {
            if (a) cfg->trend_stats = a;
            rc = -1;
            break;
        }
        cfg->trend_stats = a;
        cfg->ntrend_stats++;
    }
    free(copy);
    if (rc == 0 && cfg->ntrend_stats == 0) {
        snprintf(err, errlen, "at least one of avg, min, med, max, count, p(N)");
        rc = -1;
    }
    cfg->trend_stats_set = rc == 0;
    return rc;
}

int ll_config_add_stage(ll_config *cfg, uint64_t duration_us, double target) {
    ll_stage *st = realloc(cfg->stages, (size_t)(cfg->nstages + 1) * sizeof(*st));
    if (!st) return -1;
    cfg->stages = st;
    st[cfg->nstages++] = (ll_stage){duration_us, target};
    return 0;
}

int ll_config_default_scenario(ll_config *cfg, char *err, size_t errlen) {
    if (cfg->scenarios.n > 0 && !cfg->shortcut_cli) return 0; /* options.scenarios rule */
    ll_scenarios_free(&cfg->scenarios);
    ll_executor_type e = cfg->stages_set ? LL_EX_RAMPING_VUS
                  : cfg->iterations_set ? LL_EX_SHARED_ITERATIONS
                  : cfg->duration_set ? LL_EX_CONSTANT_VUS : LL_EX_SHARED_ITERATIONS;
    ll_scenario *s = ll_scenarios_add(&cfg->scenarios, "default", e);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->vus = cfg->vus_set ? cfg->vus : 1;
    s->iterations = cfg->iterations_set ? cfg->iterations : 1;
    if (e == LL_EX_SHARED_ITERATIONS && s->vus > s->iterations) s->vus = s->iterations;
    if (cfg->duration_set) s->duration_us = s->max_duration_us = cfg->duration_us;
    if (cfg->graceful_stop_set) s->graceful_stop_us = cfg->graceful_stop_us;
    if (e == LL_EX_RAMPING_VUS) {
        s->start_vus = cfg->vus_set ? cfg->vus : 1;
        s->stages = malloc((size_t)cfg->nstages * sizeof(ll_stage));
        if (!s->stages) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(s->stages, cfg->stages, (size_t)cfg->nstages * sizeof(ll_stage));
        s->nstages = cfg->nstages;
    }
    return ll_scenario_validate(s, err, errlen);
}

int ll_config_set_segment(ll_config *cfg, const char *what, const char *value, int force, char *err, size_t errlen) {
    ll_segment seg;
    if (ll_segment_parse(value, what, &seg, err, errlen) != 0) return -1;
    if (cfg->segment_set && !force) return 0;
    if (cfg->shard_set) {
        snprintf(err, errlen, "%s: --shard gives the segment already; use one or the other", what);
        return -1;
    }
    cfg->segment = seg;
    cfg->segment_set = 1;
    return 0;
}

int ll_config_set_sequence(ll_config *cfg, const char *what, const char *value, int force, char *err,
                           size_t errlen) {
    ll_segment_seq seq;
    if (ll_segment_seq_parse(value, what, &seq, err, errlen) != 0) return -1;
    if ((cfg->sequence_set && !force) || cfg->shard_set) {
        ll_segment_seq_free(&seq);
        if (!force) return 0;
        snprintf(err, errlen, "%s: --shard gives the sequence already; use one or the other", what);
        return -1;
    }
    ll_segment_seq_free(&cfg->sequence);
    cfg->sequence = seq;
    cfg->sequence_set = 1;
    return 0;
}

int ll_config_set_shard(ll_config *cfg, const char *what, const char *value, char *err, size_t errlen) {
    ll_segment seg;
    ll_segment_seq seq;
    if (ll_segment_parse_shard(value, what, &seg, &seq, err, errlen) != 0) return -1;
    if (cfg->segment_set || cfg->sequence_set) {
        ll_segment_seq_free(&seq);
        if (cfg->shard_set) snprintf(err, errlen, "%s: given twice (one part per instance)", what);
        else snprintf(err, errlen, "%s: give --shard or --execution-segment (with --execution-segment-sequence), "
                                   "not both", what);
        return -1;
    }
    cfg->segment = seg;
    cfg->sequence = seq;
    cfg->segment_set = cfg->sequence_set = cfg->shard_set = 1;
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
    ll_summary_opts o = {cfg->trend_stats, cfg->ntrend_stats, cfg->time_unit, &cfg->thresholds,
                         cfg->no_color || (nc && *nc)};
    return o;
}
