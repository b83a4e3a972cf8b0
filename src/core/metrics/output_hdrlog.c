/* output_hdrlog.c -- `--out hdrlog=FILE` (see output_hdrlog.h): the
 * HdrHistogram interval log of every Trend, and its JSON sidecar with the
 * exact end values of every metric.
 *
 * Owns: the log's header and interval lines (one per Trend and second,
 * cut from cumulative snapshots), the tags, and the sidecar's layout, which
 * merge.c reads back. */
#include "output_hdrlog.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hdr_codec.h"
#include "xmalloc.h"

struct ll_hdrlog {
    FILE *f;
    char *path;
    const ll_registry *reg;
    int64_t start_unix_ms;
    uint64_t start_mono_ns;
    double last_t;         /* where the next interval starts (s) */
    ll_histogram **prev;   /* by metric id: the cumulative histogram last written */
    ll_histogram *cut;     /* scratch: one interval */
    int nprev;
    int failed;            /* a write failed: errno kept in err_no */
    int err_no;
};

void ll_hdrlog_tag(const char *name, char *out, size_t len) {
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++) {
        unsigned char c = (unsigned char)name[i];
        out[i] = c == ',' || c == ' ' || c < 0x21 || c == 0x7f ? '_' : (char)c;
    }
    if (len) out[i] = 0;
}

/* The tag of metric id: its name made safe, and made unique with "~id"
 * when something had to be replaced. */
static void metric_tag(const ll_registry *reg, int id, char *out, size_t len) {
    const char *name = reg->metrics[id].name;
    ll_hdrlog_tag(name, out, len - 16); /* room for "~id" */
    if (strcmp(out, name) != 0) {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "~%d", id);
    }
}

ll_hdrlog *ll_hdrlog_open(const char *path, const ll_registry *reg, char *err, size_t errlen) {
    char side[4200];
    snprintf(side, sizeof(side), "%s.json", path);
    FILE *f = fopen(path, "w");
    if (!f || (unlink(side) != 0 && errno != ENOENT)) {
        snprintf(err, errlen, "hdrlog: cannot write %s: %s", f ? side : path, strerror(errno));
        if (f) fclose(f);
        return NULL;
    }
    ll_hdrlog *l = ll_xcalloc(1, sizeof(*l));
    l->f = f;
    l->path = ll_xstrdup(path);
    l->reg = reg;
    return l;
}

int ll_hdrlog_start(ll_hdrlog *l, int64_t start_unix_ms, uint64_t start_mono_ns) {
    l->start_unix_ms = start_unix_ms;
    l->start_mono_ns = start_mono_ns;
    time_t secs = (time_t)(start_unix_ms / 1000);
    char when[64];
    struct tm tm;
    strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", gmtime_r(&secs, &tm));
    double start = (double)start_unix_ms / 1000.0;
    fprintf(l->f, "#[Histogram log format version 1.2]\n");
    fprintf(l->f, "#[luaload %s: one tag per Trend and sub-metric, values in microseconds; exact totals in %s.json]\n",
            LUALOAD_VERSION, l->path);
    fprintf(l->f, "#[StartTime: %.3f (seconds since epoch), %s]\n", start, when);
    fprintf(l->f, "#[BaseTime: %.3f (seconds since epoch)]\n", start);
    fprintf(l->f, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n");
    if (fflush(l->f) != 0 && !l->failed) {
        l->failed = 1;
        l->err_no = errno;
    }
    return l->failed ? -1 : 0;
}

/* Writes the part of metric id's histogram h beyond what was last written. */
static void write_cut(ll_hdrlog *l, int id, const ll_histogram *h, double t_s) {
    if (id >= l->nprev) {
        int n = l->reg->nmetrics > id ? l->reg->nmetrics : id + 1;
        l->prev = ll_xrealloc(l->prev, (size_t)n * sizeof(*l->prev));
        memset(l->prev + l->nprev, 0, (size_t)(n - l->nprev) * sizeof(*l->prev));
        l->nprev = n;
    }
    ll_histogram **prev = &l->prev[id];
    if (!*prev) *prev = ll_histogram_new(h->lowest, h->highest, h->sig_digits);
    if (!l->cut) l->cut = ll_histogram_new(h->lowest, h->highest, h->sig_digits);
    if (!*prev || !l->cut || (*prev)->total_count == h->total_count) return;
    if (ll_hdr_codec_subtract(l->cut, h, *prev) != 0) return; /* not a later snapshot of the same run */
    char *b64 = ll_hdr_codec_encode(l->cut);
    if (!b64) return;
    char tag[512];
    metric_tag(l->reg, id, tag, sizeof(tag));
    if (fprintf(l->f, "Tag=%s,%.3f,%.3f,%.3f,%s\n", tag, l->last_t, t_s - l->last_t,
                (double)ll_histogram_max(l->cut) / 1000.0, b64) < 0 && !l->failed) {
        l->failed = 1;
        l->err_no = errno;
    }
    free(b64);
    ll_histogram_reset(*prev);
    ll_histogram_merge(*prev, h);
}

int ll_hdrlog_interval(ll_hdrlog *l, const ll_shard *cumulative, double t_s) {
    if (t_s < l->last_t) t_s = l->last_t;
    for (int id = 0; id < cumulative->nvalues && id < l->reg->nmetrics; id++) {
        const ll_histogram *h = cumulative->values[id].hist;
        if (l->reg->metrics[id].type == LL_TREND && h && h->total_count > 0) write_cut(l, id, h, t_s);
    }
    l->last_t = t_s;
    if (fflush(l->f) != 0 && !l->failed) {
        l->failed = 1;
        l->err_no = errno;
    }
    return l->failed ? -1 : 0;
}

/* ---- the sidecar ---- */

static cJSON *metric_json(const ll_hdrlog *l, int id, const ll_value *v) {
    const ll_metric *m = &l->reg->metrics[id];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "type", ll_metric_type_name(m->type));
    cJSON_AddStringToObject(o, "contains", ll_metric_contains_name(m->contains));
    if (m->hidden) cJSON_AddBoolToObject(o, "hidden", 1);
    if (m->parent >= 0) {
        cJSON_AddStringToObject(o, "parent", l->reg->metrics[m->parent].name);
        cJSON *sel = cJSON_AddArrayToObject(o, "selector");
        for (int i = 0; i < m->nsel; i++) {
            cJSON *kv = cJSON_CreateArray();
            cJSON_AddItemToArray(kv, cJSON_CreateString(m->sel[i].key));
            cJSON_AddItemToArray(kv, cJSON_CreateString(m->sel[i].value));
            cJSON_AddItemToArray(sel, kv);
        }
    }
    switch (m->type) {
    case LL_COUNTER:
        cJSON_AddNumberToObject(o, "sum", v ? v->sum : 0);
        cJSON_AddNumberToObject(o, "samples", v ? (double)v->total : 0);
        break;
    case LL_GAUGE:
        cJSON_AddNumberToObject(o, "value", v ? v->sum : 0);
        cJSON_AddNumberToObject(o, "min", v ? v->min : 0);
        cJSON_AddNumberToObject(o, "max", v ? v->max : 0);
        cJSON_AddNumberToObject(o, "samples", v ? (double)v->total : 0);
        /* when it was last set, as Unix ns, so that parts merge "last" */
        cJSON_AddNumberToObject(o, "set_unix_ns", v && v->total ? (double)l->start_unix_ms * 1e6 +
                                                                      ((double)v->stamp - (double)l->start_mono_ns)
                                                                : 0);
        break;
    case LL_RATE:
        cJSON_AddNumberToObject(o, "passes", v ? (double)v->passes : 0);
        cJSON_AddNumberToObject(o, "total", v ? (double)v->total : 0);
        break;
    case LL_TREND: {
        char tag[512];
        metric_tag(l->reg, id, tag, sizeof(tag));
        const ll_histogram *h = v ? v->hist : NULL;
        cJSON_AddStringToObject(o, "tag", tag);
        cJSON_AddNumberToObject(o, "count", h ? (double)h->total_count : 0);
        cJSON_AddNumberToObject(o, "sum", h ? h->sum : 0);
        cJSON_AddNumberToObject(o, "min", h ? (double)ll_histogram_min(h) : 0);
        cJSON_AddNumberToObject(o, "max", h ? (double)ll_histogram_max(h) : 0);
        break;
    }
    }
    return o;
}

static cJSON *sidecar_json(const ll_hdrlog *l, const ll_shard *total, double t_s, const ll_threshold_set *th,
                           const cJSON *run) {
    const ll_registry *reg = l->reg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", LL_HDRLOG_FORMAT);
    cJSON_AddStringToObject(o, "luaload", LUALOAD_VERSION);
    const char *slash = strrchr(l->path, '/');
    cJSON_AddStringToObject(o, "hdrlog", slash ? slash + 1 : l->path);
    cJSON_AddNumberToObject(o, "start_unix_ms", (double)l->start_unix_ms);
    cJSON_AddNumberToObject(o, "duration_s", t_s);
    cJSON *hp = cJSON_AddObjectToObject(o, "histogram");
    cJSON_AddNumberToObject(hp, "lowest", (double)LL_SHARD_HIST_LOWEST);
    cJSON_AddNumberToObject(hp, "highest", (double)LL_SHARD_HIST_HIGHEST);
    cJSON_AddNumberToObject(hp, "significant_digits", reg->sig_digits);
    cJSON_AddStringToObject(hp, "unit", "1/1000 of the metric's unit (us for time)");
    if (run) cJSON_AddItemToObject(o, "run", cJSON_Duplicate(run, 1));
    cJSON *ms = cJSON_AddArrayToObject(o, "metrics");
    for (int id = 0; id < reg->nmetrics; id++) {
        const ll_value *v = ll_shard_get(total, id);
        cJSON_AddItemToArray(ms, metric_json(l, id, v));
    }
    cJSON *gs = cJSON_AddArrayToObject(o, "groups");
    for (int i = 0; i < reg->ngroups; i++) cJSON_AddItemToArray(gs, cJSON_CreateString(reg->groups[i]));
    cJSON *cs = cJSON_AddArrayToObject(o, "checks");
    for (int i = 0; i < reg->nchecks; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "group", reg->checks[i].group_path);
        cJSON_AddStringToObject(c, "name", reg->checks[i].name);
        cJSON_AddNumberToObject(c, "passes", i < total->nchecks ? (double)total->checks[i][0] : 0);
        cJSON_AddNumberToObject(c, "fails", i < total->nchecks ? (double)total->checks[i][1] : 0);
        cJSON_AddItemToArray(cs, c);
    }
    cJSON *ts = cJSON_AddArrayToObject(o, "thresholds");
    for (int i = 0; th && i < th->n; i++) {
        const ll_threshold *t = &th->items[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "metric", t->metric_key);
        cJSON_AddStringToObject(x, "threshold", t->source);
        cJSON_AddBoolToObject(x, "abortOnFail", t->abort_on_fail);
        cJSON_AddNumberToObject(x, "delayAbortEval_us", (double)t->delay_abort_us);
        cJSON_AddItemToArray(ts, x);
    }
    return o;
}

static int write_sidecar(const ll_hdrlog *l, const cJSON *j, char *err, size_t errlen) {
    char path[4200], tmp[4300];
    snprintf(path, sizeof(path), "%s.json", l->path);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    char *text = cJSON_Print(j);
    FILE *f = text ? fopen(tmp, "w") : NULL;
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "hdrlog: cannot write %s: %s", path, text ? strerror(errno) : "out of memory");
        unlink(tmp);
    }
    free(text);
    return ok ? 0 : -1;
}

static void hdrlog_free(ll_hdrlog *l) {
    for (int i = 0; i < l->nprev; i++) ll_histogram_free(l->prev[i]);
    free(l->prev);
    ll_histogram_free(l->cut);
    free(l->path);
    free(l);
}

int ll_hdrlog_close(ll_hdrlog *l, const ll_shard *total, double t_s, const ll_threshold_set *th, const cJSON *run,
                    char *err, size_t errlen) {
    if (!total) { /* the run did not come to an end: no sidecar */
        fclose(l->f);
        hdrlog_free(l);
        return 0;
    }
    int rc = ll_hdrlog_interval(l, total, t_s);
    if (fclose(l->f) != 0 && !l->failed) {
        l->failed = 1;
        l->err_no = errno;
    }
    if (l->failed) {
        snprintf(err, errlen, "hdrlog: cannot write %s: %s", l->path, strerror(l->err_no));
        rc = -1;
    }
    cJSON *j = rc == 0 ? sidecar_json(l, total, t_s, th, run) : NULL;
    if (rc == 0 && (!j || write_sidecar(l, j, err, errlen) != 0)) {
        if (!j) snprintf(err, errlen, "hdrlog: out of memory");
        rc = -1;
    }
    cJSON_Delete(j);
    hdrlog_free(l);
    return rc;
}

int64_t ll_hdrlog_count(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    return isfinite(d) && d >= 0 && d <= 9007199254740992.0 && d == floor(d) ? (int64_t)d : -1;
}
