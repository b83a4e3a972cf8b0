/* results.c -- the outputs the run writes itself, from the snapshots the
 * engine merges every second rather than from the samples: --out hdrlog
 * (output_hdrlog.h, with the part's identity for luaload merge) and
 * --out html (report.h, with its per-second timeline). See results.h. */
#include "results.h"

#include <cJSON.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dashboard.h"
#include "exit.h"
#include "identity.h"
#include "options_json.h"
#include "output_hdrlog.h"
#include "report.h"
#include "summary.h"
#include "timeline.h"
#include "worker.h"
#include "xmalloc.h"

struct ll_results {
    const ll_config *cfg;
    ll_registry *reg;
    const ll_run *run;
    const char *hdrlog_file, *html_file;
    ll_hdrlog *hdrlog;
    ll_timeline *timeline;
    cJSON *identity;   /* what this part is (hdrlog's sidecar) */
    int started;       /* the scenarios ran */
    ll_dashboard_settings dash;
    ll_dashboard *dashboard;
    double next_push_s; /* the dashboard's next data */
};

static const int SCENARIO_METRICS[4] = {LL_M_HTTP_REQS, LL_M_HTTP_REQ_DURATION, LL_M_HTTP_REQ_FAILED, LL_M_ITERATIONS};

/* For the report's table of scenarios (ll_report_scenarios): with more
 * than one scenario, a hidden sub-metric {scenario:NAME} of four metrics
 * per scenario (one a threshold names already stays shown). */
static void add_scenario_metrics(ll_results *r, const ll_config *cfg) {
    if (cfg->run.scenarios.n < 2) return;
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        const char *key = "scenario", *value = cfg->run.scenarios.items[i].name;
        for (int k = 0; k < 4; k++) {
            char full[512];
            snprintf(full, sizeof(full), "%s{scenario:%s}", r->reg->metrics[SCENARIO_METRICS[k]].name, value);
            if (ll_registry_find(r->reg, full) >= 0) continue; /* a threshold's */
            int id = ll_registry_submetric(r->reg, SCENARIO_METRICS[k], &key, &value, 1);
            if (id >= 0) r->reg->metrics[id].hidden = 1;
        }
    }
}

/* The FILE of --out TYPE=FILE for an output the run writes itself
 * ("hdrlog", "html"; NULL when none). -1 after a one-line error when there
 * are two, or no FILE. */
static int own_output(const ll_config *cfg, const char *type, const char **path) {
    size_t n = strlen(type);
    *path = NULL;
    for (int i = 0; i < cfg->noutputs; i++) {
        const char *o = cfg->outputs[i];
        if (strncmp(o, type, n) != 0 || o[n] != '=') continue;
        if (*path || !o[n + 1]) {
            fprintf(stderr, "luaload: --out %s: %s%s%s\n", o, *path ? "only one " : "expected ", type,
                    *path ? " output per run" : "=FILE");
            return -1;
        }
        *path = o + n + 1;
    }
    return 0;
}

/* Whether the report can be written to path at the end (it is written
 * only then): the file is writable, or its directory is one and is. -1
 * after a one-line error naming the output (what), as every output that
 * cannot be opened stops the run before it starts. */
static int check_writable(const char *what, const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else snprintf(dir, sizeof(dir), ".");
    if (access(path, W_OK) == 0) return 0;
    struct stat st;
    int why = errno;
    if (why == ENOENT) why = stat(dir, &st) != 0              ? errno
                             : !S_ISDIR(st.st_mode)           ? ENOTDIR
                             : access(dir, W_OK | X_OK) != 0 ? errno
                                                              : 0;
    if (!why) return 0;
    fprintf(stderr, "luaload: %s: cannot write %s: %s\n", what, path, strerror(why));
    return -1;
}

/* The report's header: script, start and end, scenarios, segment, seed,
 * version, options. */
static cJSON *run_header(const ll_config *cfg, const ll_run *run, double elapsed) {
    char when[64];
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "script", run->target ? run->target : "");
    for (int k = 0; k < 2; k++) {
        int64_t ms = run->t0_unix_ms + (k ? (int64_t)(elapsed * 1000) : 0);
        time_t secs = (time_t)(ms / 1000);
        struct tm tm;
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&secs, &tm));
        cJSON_AddStringToObject(r, k ? "ended" : "started", when);
    }
    cJSON *scs = cJSON_AddArrayToObject(r, "scenarios");
    for (int i = 0; i < cfg->run.scenarios.n; i++) cJSON_AddItemToArray(scs, cJSON_CreateString(cfg->run.scenarios.items[i].name));
    char seg[256] = "0:1";
    if (cfg->dist.segment_set) ll_segment_format(&cfg->dist.segment, seg, sizeof(seg));
    cJSON_AddStringToObject(r, "segment", seg);
    char seed[24]; /* a string: a JSON number is a double, which a 64-bit seed does not fit */
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)cfg->run.seed);
    cJSON_AddStringToObject(r, "seed", seed);
    cJSON_AddStringToObject(r, "version", LUALOAD_VERSION);
    cJSON *opts = cJSON_Parse(run->options_json ? run->options_json : "{}");
    if (opts) cJSON_AddItemToObject(r, "options", opts);
    return r;
}

/* The report's data from s (a snapshot or the totals) t_s after the start,
 * with k6's summary data: the run's header, the series, the histogram, the
 * scenarios' and the names' tables (tally: the workers', or NULL). */
static cJSON *page_data(const ll_results *r, const cJSON *summary, const ll_shard *s, double t_s,
                        const ll_tally *tally) {
    cJSON *head = run_header(r->cfg, r->run, t_s);
    const ll_value *d = s ? ll_shard_get(s, LL_M_HTTP_REQ_DURATION) : NULL;
    cJSON *data = ll_report_data(head, summary, r->timeline, d ? d->hist : NULL);
    if (s) {
        int n = r->cfg->run.scenarios.n;
        const char **names = ll_xcalloc(n > 0 ? (size_t)n : 1, sizeof(*names));
        for (int i = 0; i < n; i++) names[i] = r->cfg->run.scenarios.items[i].name;
        cJSON_AddItemToObject(data, "scenarios", ll_report_scenarios(r->reg, s, names, n, t_s));
        free(names);
    }
    if (tally) cJSON_AddItemToObject(data, "names", ll_tally_names_json(tally, t_s));
    cJSON_Delete(head);
    return data;
}

/* --out html=FILE (or the dashboard's export): the report. 0, or
 * LL_EXIT_FAILURE after a one-line error. */
static int write_report(const ll_results *r, const char *path, const cJSON *summary, const ll_shard *total,
                        double elapsed, const ll_tally *tally) {
    char err[1024];
    cJSON *page = page_data(r, summary, total, elapsed, tally);
    int rc = ll_report_write_data(path, page, err, sizeof(err));
    cJSON_Delete(page);
    if (rc) fprintf(stderr, "luaload: --out html: %s\n", err);
    return rc ? LL_EXIT_FAILURE : 0;
}

/* The dashboard's data: the report's, from a snapshot, marked live. */
static void push_dashboard(ll_results *r, const ll_shard *snap, double t_s, const ll_tally *tally) {
    ll_summary_opts so = ll_config_summary_opts(r->cfg);
    cJSON *summary = snap ? ll_summary_data(r->reg, snap, t_s, &so) : NULL;
    cJSON *data = page_data(r, summary, snap, t_s, tally);
    cJSON *live = cJSON_AddObjectToObject(data, "live");
    cJSON_AddNumberToObject(live, "period", (double)r->dash.period_us / 1e6);
    cJSON_Delete(summary);
    ll_dashboard_update(r->dashboard, data);
}

/* Writes the last interval and the sidecar of --out hdrlog: what the part
 * is (id) and how it ended, which merge reads to refuse a part that did
 * not run all of its share. 0, or LL_EXIT_FAILURE after a one-line error. */
static int close_hdrlog(ll_hdrlog *l, ll_run *run, const ll_shard *total, double elapsed, const ll_config *cfg,
                        cJSON *id, int abandoned) {
    char err[1024];
    cJSON *end = cJSON_AddObjectToObject(id, "outcome");
    cJSON_AddBoolToObject(end, "interrupted", atomic_load(&run->interrupt));
    cJSON_AddBoolToObject(end, "aborted", atomic_load(&run->aborted));
    if (atomic_load(&run->aborted)) cJSON_AddStringToObject(end, "abort_reason", run->abort_reason);
    cJSON_AddBoolToObject(end, "abandoned", abandoned);
    cJSON_AddBoolToObject(end, "threshold_abort", atomic_load(&run->threshold_abort));
    cJSON_AddBoolToObject(end, "marked_failed", atomic_load(&run->marked_failed));
    int rc = ll_hdrlog_close(l, total, elapsed, &cfg->thresholds, id, err, sizeof(err));
    if (rc) fprintf(stderr, "luaload: --out hdrlog: %s\n", err);
    return rc ? LL_EXIT_FAILURE : 0;
}

/* Every other file the run writes, checked before the script's init code
 * (k6's config error, exit 104) rather than found unwritable at the end:
 * --summary-export, --setup-data-out, --out json=/csv= (opened once the
 * options are read). */
static int check_files(const ll_config *cfg) {
    if (cfg->summary.export && check_writable("--summary-export", cfg->summary.export) != 0) return -1;
    if (cfg->dist.setup_data_out && check_writable("--setup-data-out", cfg->dist.setup_data_out) != 0) return -1;
    for (int i = 0; i < cfg->noutputs; i++) {
        const char *o = cfg->outputs[i], *eq = strchr(o, '=');
        char what[64];
        if (!eq || !eq[1] || (strncmp(o, "json=", 5) != 0 && strncmp(o, "csv=", 4) != 0)) continue;
        snprintf(what, sizeof(what), "--out %.*s", (int)(eq - o), o);
        if (check_writable(what, eq + 1) != 0) return -1;
    }
    return 0;
}

int ll_results_open(ll_results **out, const ll_config *cfg, ll_registry *reg, int *others) {
    char err[1024];
    *out = NULL;
    if (check_files(cfg) != 0) return LL_EXIT_CONFIG;
    ll_results *r = ll_xcalloc(1, sizeof(*r));
    if (own_output(cfg, "hdrlog", &r->hdrlog_file) != 0 || own_output(cfg, "html", &r->html_file) != 0) {
        free(r);
        return LL_EXIT_CONFIG;
    }
    if (ll_dashboard_read_settings(cfg->outputs, cfg->noutputs, &r->dash, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        free(r);
        return LL_EXIT_CONFIG;
    }
    char what[64 + sizeof(r->dash.export_file)];
    snprintf(what, sizeof(what), "--out html=%s", r->html_file ? r->html_file : "");
    if ((r->html_file && check_writable(what, r->html_file) != 0) ||
        (r->dash.export_file[0] && check_writable("web-dashboard export", r->dash.export_file) != 0)) {
        free(r);
        return LL_EXIT_CONFIG;
    }
    int dash_spec = 0;
    for (int i = 0; i < cfg->noutputs; i++) dash_spec += !strncmp(cfg->outputs[i], "web-dashboard", 13);
    *others = cfg->noutputs - (r->hdrlog_file != NULL) - (r->html_file != NULL) - dash_spec;
    if (!r->hdrlog_file && !r->html_file && !r->dash.on) {
        free(r);
        return 0;
    }
    r->cfg = cfg;
    r->reg = reg;
    r->timeline = ll_timeline_new(reg); /* a part's series go in its sidecar, for merge's report */
    if (r->hdrlog_file && !(r->hdrlog = ll_hdrlog_open(r->hdrlog_file, reg, err, sizeof(err)))) {
        fprintf(stderr, "luaload: --out %s\n", err);
        ll_results_free(r);
        return LL_EXIT_CONFIG;
    }
    *out = r;
    return 0;
}

int ll_results_identify(ll_results *r, const ll_config *cfg, const char *target) {
    if (r) add_scenario_metrics(r, cfg);
    if (!r || !r->hdrlog) return 0;
    char err[1024], *whole = ll_options_json(cfg); /* before the split: what every part shares */
    r->identity = whole ? ll_identity_json(cfg, target, whole, err, sizeof(err)) : NULL;
    if (!whole) snprintf(err, sizeof(err), "out of memory");
    free(whole);
    if (r->identity) return 0;
    fprintf(stderr, "luaload: --out hdrlog: %s\n", err);
    return LL_EXIT_FAILURE;
}

int ll_results_start(ll_results *r, const ll_run *run) {
    if (!r) return 0;
    r->started = 1;
    r->run = run;
    if (r->dash.on && r->dash.port >= 0) {
        char err[1024];
        if (!(r->dashboard = ll_dashboard_start(&r->dash, err, sizeof(err)))) {
            fprintf(stderr, "luaload: %s\n", err);
            return LL_EXIT_CONFIG;
        }
        push_dashboard(r, NULL, 0, NULL);
        r->next_push_s = (double)r->dash.period_us / 1e6;
        fprintf(stderr, "luaload: web dashboard on http://%s%s%s:%d/\n", strchr(r->dash.host, ':') ? "[" : "",
                r->dash.host, strchr(r->dash.host, ':') ? "]" : "", ll_dashboard_port(r->dashboard));
    }
    if (!r->hdrlog || ll_hdrlog_start(r->hdrlog, run->t0_unix_ms, run->t0) == 0) return 0;
    fprintf(stderr, "luaload: --out hdrlog: cannot write %s: %s\n", r->hdrlog_file, strerror(errno));
    return LL_EXIT_FAILURE;
}

int ll_results_wanted(const ll_results *r) { return r != NULL; }

void ll_results_tick(ll_results *r, const ll_shard *snap, double t_s, const ll_tally *tally) {
    if (!r) return;
    if (r->hdrlog) ll_hdrlog_interval(r->hdrlog, snap, t_s); /* a write error is reported at the end */
    ll_timeline_tick(r->timeline, snap, t_s);
    ll_timeline_codes(r->timeline, tally);
    if (r->dashboard && t_s >= r->next_push_s) {
        push_dashboard(r, snap, t_s, tally);
        while (r->next_push_s <= t_s) r->next_push_s += (double)r->dash.period_us / 1e6;
    }
}

int ll_results_end(ll_results *r, ll_run *run, const ll_config *cfg, const ll_shard *total, double elapsed,
                   int abandoned, const ll_tally *tally) {
    if (!r || !r->started) return 0;
    ll_timeline_tick(r->timeline, total, elapsed);
    ll_timeline_codes(r->timeline, tally);
    if (!r->hdrlog || !r->identity) return 0;
    cJSON *rep = cJSON_AddObjectToObject(r->identity, "report"); /* what merge's report needs beyond the log */
    cJSON_AddItemToObject(rep, "series", ll_timeline_json(r->timeline));
    cJSON_AddItemToObject(rep, "names", tally ? ll_tally_names_save(tally) : cJSON_CreateArray());
    int rc = close_hdrlog(r->hdrlog, run, total, elapsed, cfg, r->identity, abandoned);
    r->hdrlog = NULL;
    return rc;
}

int ll_results_report(ll_results *r, const cJSON *data, const ll_shard *total, double elapsed,
                      const ll_tally *tally) {
    if (!r || !r->started) return 0;
    int rc = r->html_file ? write_report(r, r->html_file, data, total, elapsed, tally) : 0;
    if (r->dash.export_file[0]) {
        int erc = write_report(r, r->dash.export_file, data, total, elapsed, tally);
        if (!rc) rc = erc;
    }
    if (r->dashboard) { /* the final figures, then the end of the streams */
        push_dashboard(r, total, elapsed, tally);
        ll_dashboard_stop(r->dashboard);
        r->dashboard = NULL;
    }
    return rc;
}

void ll_results_free(ll_results *r) {
    if (!r) return;
    if (r->hdrlog) ll_hdrlog_close(r->hdrlog, NULL, 0, NULL, NULL, NULL, 0); /* the run failed before its end */
    ll_dashboard_stop(r->dashboard);
    ll_timeline_free(r->timeline);
    cJSON_Delete(r->identity);
    free(r);
}
