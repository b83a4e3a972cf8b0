/* summary.c -- turns the merged shard into k6's summary data (the object
 * handle_summary receives; the text summary is formatted from it in
 * lib/lua/luaload/summary.lua) and writes the --summary-export file. */
#include "summary.h"

#include <cJSON.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const DEFAULT_STATS[] = {"avg", "min", "med", "max", "p(90)", "p(95)"};

/* k6 identifies groups and checks by the md5 of their path. */
static void md5_id(const char *path, char out[33]) {
    unsigned char d[16];
    unsigned int n = 0;
    EVP_Digest(path, strlen(path), d, &n, EVP_md5(), NULL);
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* One summaryTrendStats column of a trend, in the metric's unit. */
static double trend_stat(const ll_histogram *h, const char *st) {
    if (strcmp(st, "count") == 0) return (double)h->total_count;
    if (strcmp(st, "avg") == 0) return ll_histogram_mean(h) / 1000.0;
    if (strcmp(st, "min") == 0) return (double)ll_histogram_min(h) / 1000.0;
    if (strcmp(st, "max") == 0) return (double)ll_histogram_max(h) / 1000.0;
    if (strcmp(st, "med") == 0) return (double)ll_histogram_percentile(h, 50) / 1000.0;
    double p = 0;
    sscanf(st, "p(%lf)", &p);
    return (double)ll_histogram_percentile(h, p) / 1000.0;
}

static cJSON *metric_values(const ll_metric *m, const ll_value *v, double duration_s, const ll_summary_opts *o) {
    cJSON *out = cJSON_CreateObject();
    switch (m->type) {
    case LL_COUNTER:
        cJSON_AddNumberToObject(out, "count", v->sum);
        cJSON_AddNumberToObject(out, "rate", duration_s > 0 ? v->sum / duration_s : 0);
        break;
    case LL_GAUGE:
        cJSON_AddNumberToObject(out, "value", v->sum);
        cJSON_AddNumberToObject(out, "min", v->min);
        cJSON_AddNumberToObject(out, "max", v->max);
        break;
    case LL_RATE:
        cJSON_AddNumberToObject(out, "rate", v->total ? (double)v->passes / (double)v->total : 0);
        cJSON_AddNumberToObject(out, "passes", (double)v->passes);
        cJSON_AddNumberToObject(out, "fails", (double)(v->total - v->passes));
        break;
    case LL_TREND: {
        int n = o->trend_stats ? o->ntrend_stats : (int)(sizeof(DEFAULT_STATS) / sizeof(DEFAULT_STATS[0]));
        for (int i = 0; i < n; i++) {
            const char *st = o->trend_stats ? o->trend_stats[i] : DEFAULT_STATS[i];
            cJSON_AddNumberToObject(out, st, v->hist ? trend_stat(v->hist, st) : 0);
        }
        break;
    }
    }
    return out;
}

static cJSON *new_group(const char *name, const char *path) {
    char id[33];
    md5_id(path, id);
    cJSON *g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "name", name);
    cJSON_AddStringToObject(g, "path", path);
    cJSON_AddStringToObject(g, "id", id);
    cJSON_AddItemToObject(g, "groups", cJSON_CreateArray());
    cJSON_AddItemToObject(g, "checks", cJSON_CreateArray());
    return g;
}

/* The group object for path ("" = root), created along the way. */
static cJSON *find_group(cJSON *root, const char *path) {
    cJSON *g = root;
    const char *p = path;
    while (*p) {
        const char *name = p + 2; /* skip "::" */
        const char *next = strstr(name, "::");
        size_t n = next ? (size_t)(next - name) : strlen(name);
        size_t plen = (size_t)(name + n - path);
        cJSON *child = NULL;
        cJSON *kids = cJSON_GetObjectItem(g, "groups");
        cJSON_ArrayForEach(child, kids) {
            const char *cp = cJSON_GetObjectItem(child, "path")->valuestring;
            if (strlen(cp) == plen && strncmp(cp, path, plen) == 0) break;
        }
        if (!child) {
            char nm[512], pth[1024];
            snprintf(nm, sizeof(nm), "%.*s", (int)n, name);
            snprintf(pth, sizeof(pth), "%.*s", (int)plen, path);
            child = new_group(nm, pth);
            cJSON_AddItemToArray(kids, child);
        }
        g = child;
        p = name + n;
    }
    return g;
}

static cJSON *root_group(ll_registry *reg, const ll_shard *total) {
    cJSON *root = new_group("", "");
    pthread_mutex_lock(&reg->mu);
    for (int i = 0; i < reg->ngroups; i++) find_group(root, reg->groups[i]);
    for (int i = 0; i < reg->nchecks; i++) {
        const ll_check *c = &reg->checks[i];
        int64_t passes = i < total->nchecks ? total->checks[i][0] : 0;
        int64_t fails = i < total->nchecks ? total->checks[i][1] : 0;
        char path[1024], id[33];
        snprintf(path, sizeof(path), "%s::%s", c->group_path, c->name);
        md5_id(path, id);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c->name);
        cJSON_AddStringToObject(o, "path", path);
        cJSON_AddStringToObject(o, "id", id);
        cJSON_AddNumberToObject(o, "passes", (double)passes);
        cJSON_AddNumberToObject(o, "fails", (double)fails);
        cJSON_AddItemToArray(cJSON_GetObjectItem(find_group(root, c->group_path), "checks"), o);
    }
    pthread_mutex_unlock(&reg->mu);
    return root;
}

static int has_thresholds(const ll_summary_opts *o, int id) {
    for (int i = 0; o->thresholds && i < o->thresholds->n; i++)
        if (o->thresholds->items[i].metric_id == id) return 1;
    return 0;
}

cJSON *ll_summary_data(ll_registry *reg, const ll_shard *total, double duration_s, const ll_summary_opts *o) {
    static const ll_value empty = {0};
    cJSON *data = cJSON_CreateObject();
    cJSON *metrics = cJSON_AddObjectToObject(data, "metrics");
    for (int i = 0; i < reg->nmetrics; i++) {
        const ll_value *v = ll_shard_get(total, i) ? ll_shard_get(total, i) : &empty;
        const ll_metric *m = &reg->metrics[i];
        int seen = m->type == LL_TREND ? v->hist && v->hist->total_count > 0 : v->total > 0;
        if ((!seen || m->hidden) && !has_thresholds(o, i)) continue;
        cJSON *obj = cJSON_AddObjectToObject(metrics, m->name);
        cJSON_AddStringToObject(obj, "type", ll_metric_type_name(m->type));
        cJSON_AddStringToObject(obj, "contains", ll_metric_contains_name(m->contains));
        cJSON_AddItemToObject(obj, "values", metric_values(m, v, duration_s, o));
        if (!has_thresholds(o, i)) continue;
        cJSON *th = cJSON_AddObjectToObject(obj, "thresholds");
        for (int t = 0; t < o->thresholds->n; t++) {
            const ll_threshold *x = &o->thresholds->items[t];
            if (x->metric_id != i) continue;
            cJSON *r = cJSON_AddObjectToObject(th, x->source);
            cJSON_AddBoolToObject(r, "ok", !x->failed);
            /* the aggregate it was compared with (p(99.9), ...), which the
             * text summary shows even when it is not one of the columns */
            if (x->value == x->value) cJSON_AddNumberToObject(r, "value", x->value);
        }
    }
    cJSON_AddItemToObject(data, "root_group", root_group(reg, total));
    cJSON *opts = cJSON_AddObjectToObject(data, "options");
    cJSON *stats = cJSON_AddArrayToObject(opts, "summaryTrendStats");
    int n = o->trend_stats ? o->ntrend_stats : (int)(sizeof(DEFAULT_STATS) / sizeof(DEFAULT_STATS[0]));
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(stats, cJSON_CreateString(o->trend_stats ? o->trend_stats[i] : DEFAULT_STATS[i]));
    cJSON_AddStringToObject(opts, "summaryTimeUnit", o->time_unit ? o->time_unit : "");
    cJSON_AddBoolToObject(opts, "noColor", o->no_color);
    cJSON *state = cJSON_AddObjectToObject(data, "state");
    cJSON_AddBoolToObject(state, "isStdOutTTY", isatty(1));
    cJSON_AddBoolToObject(state, "isStdErrTTY", isatty(2));
    cJSON_AddNumberToObject(state, "testRunDurationMs", duration_s * 1000);
    return data;
}

/* k6's export keys groups and checks by name instead of listing them. */
static cJSON *export_group(const cJSON *g) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "name", cJSON_Duplicate(cJSON_GetObjectItem(g, "name"), 1));
    cJSON_AddItemToObject(o, "path", cJSON_Duplicate(cJSON_GetObjectItem(g, "path"), 1));
    cJSON_AddItemToObject(o, "id", cJSON_Duplicate(cJSON_GetObjectItem(g, "id"), 1));
    cJSON *groups = cJSON_AddObjectToObject(o, "groups");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "groups"))
        cJSON_AddItemToObject(groups, cJSON_GetObjectItem(c, "name")->valuestring, export_group(c));
    cJSON *checks = cJSON_AddObjectToObject(o, "checks");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "checks"))
        cJSON_AddItemToObject(checks, cJSON_GetObjectItem(c, "name")->valuestring, cJSON_Duplicate(c, 1));
    return o;
}

int ll_summary_export(const cJSON *data, const char *path, char *err, size_t errlen) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "root_group", export_group(cJSON_GetObjectItem(data, "root_group")));
    cJSON *metrics = cJSON_AddObjectToObject(out, "metrics");
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(data, "metrics")) {
        const char *type = cJSON_GetObjectItem(m, "type")->valuestring;
        const cJSON *values = cJSON_GetObjectItem(m, "values");
        cJSON *o = cJSON_Duplicate(values, 1);
        if (strcmp(type, "rate") == 0) { /* k6 calls the rate "value" here */
            cJSON *rate = cJSON_DetachItemFromObject(o, "rate");
            cJSON_AddItemToObject(o, "value", rate);
        }
        const cJSON *th = cJSON_GetObjectItem(m, "thresholds"), *t;
        if (th) { /* k6's export: threshold -> whether it failed */
            cJSON *out_th = cJSON_AddObjectToObject(o, "thresholds");
            cJSON_ArrayForEach(t, th) cJSON_AddBoolToObject(out_th, t->string, !cJSON_IsTrue(cJSON_GetObjectItem(t, "ok")));
        }
        cJSON_AddItemToObject(metrics, m->string, o);
    }
    char *text = cJSON_Print(out);
    cJSON_Delete(out);
    FILE *f = text ? fopen(path, "w") : NULL;
    int rc = 0;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (f && fclose(f) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    cJSON_free(text);
    return rc;
}
