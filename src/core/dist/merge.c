/* merge.c -- `luaload merge [SCRIPT.lua] PART.hlog...`: the parts of a test
 * split with execution segments, each written with --out hdrlog=FILE, added
 * into one registry and one shard; then the end of a test as if one process
 * had run it all (engine.c's ll_engine_report): thresholds judged on the
 * merged data, the summary or the script's handle_summary, --summary-export;
 * and --out json/csv with the samples the histograms hold.
 *
 * Owns (the sidecars and logs read back by metrics/hdrlog_read.c): the
 * checks that the parts belong to one test (the same script, options and
 * segment sequence; segments that cover 0 to 1 once), and how each metric
 * type adds up: counters, rates, checks and histograms add; a gauge keeps
 * the value set last (by Unix time); vus and vus_max add (each part ran
 * its share of the VUs). */
#include "merge.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "config.h"
#include "engine.h"
#include "hdr_codec.h"
#include "hdrlog_read.h"
#include "identity.h"
#include "report.h"
#include "tally.h"
#include "timeline.h"
#include "xmalloc.h"
#include "output.h"
#include "output_hdrlog.h"
#include "segment.h"
#include "tagset.h"

typedef struct tag_id {
    const char *tag;      /* in the sidecar */
    int id;               /* the registry's */
} tag_id;

typedef struct part {
    const char *arg;      /* as given */
    char *log;            /* the hdrlog's path */
    char *side_path;      /* its sidecar's */
    cJSON *side;
    ll_segment seg;
    int *ids;             /* sidecar metric i -> registry id */
    int nids;
    tag_id *tags;         /* the Trends' tags, sorted */
    int ntags;
    ll_shard *shard;
} part;

typedef struct merge {
    ll_registry *reg;
    ll_histogram *like;   /* the layout every interval must have */
    part *parts;
    int n;
    char err[1200];
} merge;

static int fail(merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(merge *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof(m->err), fmt, ap);
    va_end(ap);
    return -1;
}

static const char *str_at(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_at(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}


static int bool_at(const cJSON *o, const char *key) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key)); }

/* ---- the sidecars ---- */

/* PART is the log (its sidecar is PART.json) or the sidecar itself. */
static int load_sidecar(merge *m, part *p) {
    size_t n = strlen(p->arg);
    if (n > 5 && strcmp(p->arg + n - 5, ".json") == 0) {
        p->side_path = ll_xstrdup(p->arg);
        p->log = ll_xstrndup(p->arg, n - 5);
    } else {
        p->log = ll_xstrdup(p->arg);
        p->side_path = ll_xmalloc(n + 6);
        snprintf(p->side_path, n + 6, "%s.json", p->arg);
    }
    if (!(p->side = ll_hdrlog_read_sidecar(p->side_path, m->err, sizeof(m->err)))) return -1;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(p->side, "run");
    const char *seg = str_at(run, "segment");
    char why[300];
    if (!seg || ll_segment_parse(seg, "segment", &p->seg, why, sizeof(why)) != 0)
        return fail(m, "%s: no valid \"run\".\"segment\"", p->side_path);
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(run, "outcome");
    if (!cJSON_IsObject(end)) return fail(m, "%s: no \"run\".\"outcome\"", p->side_path);
    const char *cut = bool_at(end, "interrupted") ? "was interrupted by a signal (exit 105)"
                      : bool_at(end, "aborted")   ? "was aborted (luaload.abort, exit 108)"
                      : bool_at(end, "abandoned") ? "had Lua code that did not stop and was given up on"
                                                  : NULL;
    if (cut) return fail(m, "%s: the part %s: it did not run all of its share of the test", p->arg, cut);
    return 0;
}

/* Whether b is a part of the same test as a. */
static int same_test(merge *m, const part *a, const part *b) {
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a->side, "run");
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b->side, "run");
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(ra, "script"), *sb = cJSON_GetObjectItemCaseSensitive(rb, "script");
    const cJSON *left[] = {cJSON_GetObjectItemCaseSensitive(sa, "sha256"), cJSON_GetObjectItemCaseSensitive(sa, "url"),
                           cJSON_GetObjectItemCaseSensitive(ra, "options"), cJSON_GetObjectItemCaseSensitive(ra, "sequence")};
    const cJSON *right[] = {cJSON_GetObjectItemCaseSensitive(sb, "sha256"), cJSON_GetObjectItemCaseSensitive(sb, "url"),
                            cJSON_GetObjectItemCaseSensitive(rb, "options"), cJSON_GetObjectItemCaseSensitive(rb, "sequence")};
    static const char *const why[] = {"another script (its SHA-256 differs)", "another URL", "other options",
                                      "another --execution-segment-sequence"};
    for (int i = 0; i < 4; i++) {
        if ((!left[i] && !right[i]) || cJSON_Compare(left[i], right[i], 1)) continue;
        snprintf(m->err, sizeof(m->err), "%s is not a part of the same test as %s: it ran %s", b->arg, a->arg, why[i]);
        return -1;
    }
    if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a->side, "histogram"),
                       cJSON_GetObjectItemCaseSensitive(b->side, "histogram"), 1))
        return fail(m, "%s and %s have histograms of different layouts", a->arg, b->arg);
    return 0;
}

/* The parts' segments must cover 0 to 1, each piece once. */
static int check_segments(merge *m) {
    int *order = ll_xcalloc((size_t)m->n, sizeof(*order));
    for (int i = 0; i < m->n; i++) order[i] = i;
    for (int i = 1; i < m->n; i++) /* insertion sort by start: a handful of parts */
        for (int j = i; j > 0 && ll_segment_rat_cmp(m->parts[order[j]].seg.from, m->parts[order[j - 1]].seg.from) < 0; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    ll_segment_rat at = {0, 1};
    const part *last = NULL;
    int rc = 0;
    for (int i = 0; i < m->n && !rc; i++) {
        const part *p = &m->parts[order[i]];
        int c = ll_segment_rat_cmp(p->seg.from, at);
        char s1[100], s2[100];
        if (c < 0) {
            ll_segment_format(&p->seg, s1, sizeof(s1));
            ll_segment_format(&last->seg, s2, sizeof(s2));
            snprintf(m->err, sizeof(m->err), "segments overlap: %s (%s) and %s (%s)", s2, last->arg, s1, p->arg);
            rc = -1;
        } else if (c > 0) {
            ll_segment gap = {at, p->seg.from};
            ll_segment_format(&gap, s1, sizeof(s1));
            snprintf(m->err, sizeof(m->err), "no part covers the segment %s (a part is missing)", s1);
            rc = -1;
        }
        at = p->seg.to;
        last = p;
    }
    if (!rc && ll_segment_rat_cmp(at, (ll_segment_rat){1, 1}) != 0) {
        char s1[100];
        ll_segment gap = {at, {1, 1}};
        ll_segment_format(&gap, s1, sizeof(s1));
        snprintf(m->err, sizeof(m->err), "no part covers the segment %s (a part is missing)", s1);
        rc = -1;
    }
    free(order);
    return rc;
}

/* ---- the registry: every part's metrics, by name ---- */

static ll_metric_type type_of(const char *s) {
    return strcmp(s, "counter") == 0 ? LL_COUNTER : strcmp(s, "gauge") == 0 ? LL_GAUGE : strcmp(s, "rate") == 0 ? LL_RATE
                                                                                                                : LL_TREND;
}

static ll_contains contains_of(const char *s) {
    return s && strcmp(s, "time") == 0 ? LL_CONTAINS_TIME : s && strcmp(s, "data") == 0 ? LL_CONTAINS_DATA
                                                                                         : LL_CONTAINS_DEFAULT;
}

static int register_metric(merge *m, const part *p, const cJSON *e) {
    const char *name = str_at(e, "name"), *type = str_at(e, "type"), *parent = str_at(e, "parent");
    if (!name || !type) return fail(m, "%s: a metric without a name or type", p->side_path);
    int id = ll_registry_find(m->reg, name);
    if (id < 0 && parent) {
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(e, "selector");
        int n = cJSON_GetArraySize(sel), pid = ll_registry_find(m->reg, parent);
        const char *keys[64], *values[64];
        if (pid < 0 || n < 1 || n > 64) return fail(m, "%s: sub-metric %s without its parent", p->side_path, name);
        for (int i = 0; i < n; i++) {
            const cJSON *kv = cJSON_GetArrayItem(sel, i);
            const cJSON *k = cJSON_GetArrayItem(kv, 0), *v = cJSON_GetArrayItem(kv, 1);
            if (!cJSON_IsString(k) || !cJSON_IsString(v))
                return fail(m, "%s: sub-metric %s has a bad selector", p->side_path, name);
            keys[i] = k->valuestring;
            values[i] = v->valuestring;
        }
        id = ll_registry_submetric(m->reg, pid, keys, values, n);
        if (id >= 0) m->reg->metrics[id].hidden = bool_at(e, "hidden");
    } else if (id < 0) {
        id = ll_registry_metric(m->reg, name, type_of(type), contains_of(str_at(e, "contains")));
    }
    if (id < 0 || m->reg->metrics[id].type != type_of(type))
        return fail(m, "%s: metric %s is of another type than in the other parts", p->side_path, name);
    return id;
}

/* The part's exact end values (all but the Trends' histograms) and its
 * checks into its shard. */
static int read_values(merge *m, part *p) {
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(p->side, "metrics");
    p->nids = cJSON_GetArraySize(ms);
    p->ids = ll_xcalloc(p->nids > 0 ? (size_t)p->nids : 1, sizeof(*p->ids));
    p->shard = ll_shard_new(m->reg);
    for (int i = 0; i < p->nids; i++) {
        const cJSON *e = cJSON_GetArrayItem(ms, i);
        int id = register_metric(m, p, e);
        if (id < 0) return -1;
        p->ids[i] = id;
        ll_value *v = ll_shard_value(p->shard, id);
        switch (m->reg->metrics[id].type) {
        case LL_COUNTER:
            v->sum = num_at(e, "sum");
            v->total = ll_hdrlog_count(e, "samples");
            break;
        case LL_GAUGE:
            v->sum = num_at(e, "value");
            v->min = num_at(e, "min");
            v->max = num_at(e, "max");
            v->total = ll_hdrlog_count(e, "samples");
            v->stamp = num_at(e, "set_unix_ns") > 0 ? (uint64_t)num_at(e, "set_unix_ns") : 0;
            break;
        case LL_RATE:
            v->passes = ll_hdrlog_count(e, "passes");
            v->total = ll_hdrlog_count(e, "total");
            break;
        case LL_TREND:
            if (ll_hdrlog_count(e, "count") < 0) v->total = -1;
            break;
        }
        if (v->total < 0 || v->passes < 0 || v->passes > v->total)
            return fail(m, "%s: metric %s has counts that are not whole numbers from 0 to 2^53", p->side_path,
                        m->reg->metrics[id].name);
        v->total = m->reg->metrics[id].type == LL_TREND ? 0 : v->total;
    }
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(p->side, "groups")) {
        if (cJSON_IsString(g)) ll_registry_group(m->reg, g->valuestring);
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p->side, "checks")) {
        const char *group = str_at(c, "group"), *name = str_at(c, "name");
        if (!group || !name) return fail(m, "%s: a check without a group or name", p->side_path);
        int id = ll_registry_check(m->reg, group, name, NULL);
        int64_t passes = ll_hdrlog_count(c, "passes"), fails = ll_hdrlog_count(c, "fails");
        if (id < 0) return fail(m, "out of memory");
        if (passes < 0 || fails < 0) return fail(m, "%s: check %s has bad counts", p->side_path, name);
        ll_shard_check_counts(p->shard, id, passes, fails);
    }
    return 0;
}

/* When the first part started (Unix ms): the whole test's start. */
static int64_t earliest_start_ms(const merge *m) {
    int64_t t0 = m->n ? ll_hdrlog_count(m->parts[0].side, "start_unix_ms") : 0;
    for (int i = 1; i < m->n; i++)
        if (ll_hdrlog_count(m->parts[i].side, "start_unix_ms") < t0) t0 = ll_hdrlog_count(m->parts[i].side, "start_unix_ms");
    return t0;
}

/* ---- the logs ---- */

static int tag_cmp(const void *a, const void *b) { return strcmp(((const tag_id *)a)->tag, ((const tag_id *)b)->tag); }

/* The tags of p's Trends, sorted for tag_metric. */
static int index_tags(merge *m, part *p) {
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(p->side, "metrics");
    p->tags = ll_xcalloc(p->nids > 0 ? (size_t)p->nids : 1, sizeof(*p->tags));
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ms) {
        const char *t = str_at(e, "tag");
        if (t && i < p->nids && m->reg->metrics[p->ids[i]].type == LL_TREND) p->tags[p->ntags++] = (tag_id){t, p->ids[i]};
        i++;
    }
    qsort(p->tags, (size_t)p->ntags, sizeof(*p->tags), tag_cmp);
    return 0;
}

/* The registry id of the Trend whose lines carry tag, or -1. */
static int tag_metric(const part *p, const char *tag, size_t n) {
    char key[600];
    if (n >= sizeof(key)) return -1;
    memcpy(key, tag, n);
    key[n] = 0;
    tag_id want = {key, -1};
    const tag_id *hit = bsearch(&want, p->tags, (size_t)p->ntags, sizeof(*p->tags), tag_cmp);
    return hit ? hit->id : -1;
}

/* One interval of the log, as read_log hands it on (hdrlog_read.c reads it). */
typedef ll_hdrlog_line interval;

typedef int interval_fn(merge *m, part *p, const interval *iv, void *ud);

typedef struct log_reader {
    merge *m;
    part *p;
    interval_fn *fn;
    void *ud;
} log_reader;

static int reader_tag(void *ud, const char *tag, size_t n) { return tag_metric(((log_reader *)ud)->p, tag, n); }

static int reader_line(void *ud, const ll_hdrlog_line *line) {
    log_reader *r = ud;
    return r->fn(r->m, r->p, line, r->ud);
}

/* Calls fn for every interval line of p's log. */
static int read_log(merge *m, part *p, interval_fn *fn, void *ud) {
    log_reader r = {m, p, fn, ud};
    return ll_hdrlog_read(p->log, m->like, p->side_path, reader_tag, reader_line, &r, m->err, sizeof(m->err));
}

static int add_interval(merge *m, part *p, const interval *iv, void *ud) {
    (void)ud;
    ll_value *v = ll_shard_value(p->shard, iv->id);
    if (!v->hist) v->hist = ll_histogram_new(iv->h->lowest, iv->h->highest, iv->h->sig_digits);
    if (!v->hist || ll_histogram_merge(v->hist, iv->h) != 0)
        return fail(m, "%s: intervals of %s with different layouts", p->log, m->reg->metrics[iv->id].name);
    return 0;
}

/* Each Trend's histogram (the sum of its intervals) must hold as many
 * samples as the sidecar says; its exact sum, min and max come from there. */
static int finish_trends(merge *m, part *p) {
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(p->side, "metrics");
    for (int i = 0; i < p->nids; i++) {
        int id = p->ids[i];
        if (m->reg->metrics[id].type != LL_TREND) continue;
        const cJSON *e = cJSON_GetArrayItem(ms, i);
        ll_histogram *h = ll_shard_value(p->shard, id)->hist;
        int64_t want = ll_hdrlog_count(e, "count"), have = h ? h->total_count : 0;
        if (want != have) {
            snprintf(m->err, sizeof(m->err), "%s: %lld samples of %s, but %s counts %lld (a truncated log?)", p->log,
                     (long long)have, m->reg->metrics[id].name, p->side_path, (long long)want);
            return -1;
        }
        if (!h) continue;
        h->sum = num_at(e, "sum");
        h->min = ll_hdrlog_count(e, "min");
        h->max = ll_hdrlog_count(e, "max");
        if (h->min < 0 || h->max < h->min)
            return fail(m, "%s: %s has a bad min or max", p->side_path, m->reg->metrics[id].name);
    }
    return 0;
}

/* ---- --out: the samples the merged data holds ---- */

typedef struct kv_tags {
    const char *k[2], *v[2];
    int n;
} kv_tags;

static const char *kv_get(const void *ctx, const char *key, char *buf, size_t len) {
    (void)buf;
    (void)len;
    const kv_tags *t = ctx;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->k[i], key) == 0) return t->v[i];
    return NULL;
}

static void kv_list(const void *ctx, ll_tag_fn *fn, void *ud) {
    const kv_tags *t = ctx;
    for (int i = 0; i < t->n; i++) fn(ud, t->k[i], t->v[i]);
}

typedef struct out {
    ll_output_sink **sinks;
    const char **names;  /* their --out specs */
    int n;
    ll_tagsets ts;
    ll_tagset_cache cache;
    int none;            /* the tag set without tags */
    int64_t end_ns;      /* the test's end, Unix ns */
} out;

static void out_sample(out *o, const ll_registry *reg, int id, double value, int64_t unix_ns, int tagset) {
    ll_out_sample x = {id, &reg->metrics[id], value, unix_ns, &o->ts, tagset};
    for (int i = 0; i < o->n; i++) o->sinks[i]->write(o->sinks[i], &x);
}

/* Every sample of a Trend's interval, at the interval's middle, with the
 * value of its histogram slot. Sub-metrics are not written: their samples
 * are their parent's (k6 writes no sub-metric samples either). */
static int out_interval(merge *m, part *p, const interval *iv, void *ud) {
    out *o = ud;
    if (m->reg->metrics[iv->id].parent >= 0) return 0;
    int64_t start_ms = ll_hdrlog_count(p->side, "start_unix_ms");
    int64_t at = start_ms * 1000000 + (int64_t)((iv->start_s + iv->len_s / 2) * 1e9);
    for (int32_t i = 0; i < iv->h->counts_len; i++)
        for (int64_t k = 0; k < iv->h->counts[i]; k++)
            out_sample(o, m->reg, iv->id, (double)ll_histogram_slot_value(iv->h, i) / 1000.0, at, o->none);
    return 0;
}

/* A rate's samples: passes ones and fails zeros. */
static void out_rate(out *o, const ll_registry *reg, int id, int64_t passes, int64_t fails, int tagset) {
    for (int64_t k = 0; k < passes; k++) out_sample(o, reg, id, 1, o->end_ns, tagset);
    for (int64_t k = 0; k < fails; k++) out_sample(o, reg, id, 0, o->end_ns, tagset);
}

/* The metrics other than Trends, at the test's end: a counter's total, a
 * gauge's value, a rate's (and each check's) passes and fails. */
static void out_totals(merge *m, out *o, const ll_shard *total) {
    const ll_registry *reg = m->reg;
    for (int id = 0; id < reg->nmetrics && id < total->nvalues; id++) {
        const ll_metric *mt = &reg->metrics[id];
        const ll_value *v = &total->values[id];
        if (mt->parent >= 0 || id == LL_M_CHECKS) continue;
        if (mt->type == LL_COUNTER && v->sum != 0) out_sample(o, reg, id, v->sum, o->end_ns, o->none);
        if (mt->type == LL_GAUGE && v->total) out_sample(o, reg, id, v->sum, o->end_ns, o->none);
        if (mt->type == LL_RATE) out_rate(o, reg, id, v->passes, v->total - v->passes, o->none);
    }
    for (int i = 0; i < reg->nchecks && i < total->nchecks; i++) {
        kv_tags t = {{"check", "group"}, {reg->checks[i].name, reg->checks[i].group_path}, 2};
        ll_tag_source src = {kv_get, kv_list, &t, -1, 0};
        int ts = ll_tagsets_intern(&o->ts, &o->cache, reg, &src);
        out_rate(o, reg, LL_M_CHECKS, total->checks[i][0], total->checks[i][1], ts);
    }
}

static int write_outputs(merge *m, const ll_config *cfg, const ll_shard *total, double elapsed_s) {
    out o;
    memset(&o, 0, sizeof(o));
    ll_tagsets_init(&o.ts);
    o.sinks = ll_xcalloc((size_t)cfg->noutputs, sizeof(*o.sinks));
    o.names = ll_xcalloc((size_t)cfg->noutputs, sizeof(*o.names));
    int rc = 0;
    for (int i = 0; !rc && i < cfg->noutputs; i++) {
        const char *spec = cfg->outputs[i];
        char why[600];
        ll_output_sink *s = NULL;
        if (strncmp(spec, "html=", 5) == 0) continue; /* ll_engine_report wrote it */
        if (strncmp(spec, "json=", 5) == 0 && spec[5]) s = ll_output_json_open(spec + 5, why, sizeof(why));
        else if (strncmp(spec, "csv=", 4) == 0 && spec[4]) s = ll_output_csv_open(spec + 4, why, sizeof(why));
        else snprintf(why, sizeof(why), "expected json=FILE or csv=FILE");
        if (!s) rc = fail(m, "--out %s: %s", spec, why);
        else {
            o.names[o.n] = spec;
            o.sinks[o.n++] = s;
        }
    }
    o.end_ns = earliest_start_ms(m) * 1000000 + (int64_t)(elapsed_s * 1e9);
    o.none = rc ? -1 : ll_tagsets_intern(&o.ts, &o.cache, m->reg, NULL);
    for (int i = 0; !rc && o.n && i < m->n; i++) rc = read_log(m, &m->parts[i], out_interval, &o);
    if (!rc && o.n) out_totals(m, &o, total);
    for (int i = 0; i < o.n; i++) {
        ll_output_sink *s = o.sinks[i];
        char err[256];
        if (s->flush) s->flush(s);
        s->close(s, err, sizeof(err)); /* closing can fail too (a full disk) */
        if (err[0] && !rc) rc = fail(m, "--out %s: %s", o.names[i], err);
    }
    free(o.sinks);
    free(o.names);
    ll_tagset_cache_free(&o.cache);
    ll_tagsets_free(&o.ts);
    return rc;
}

/* ---- --out html: the series from the parts' intervals and sidecars ---- */

/* What one part tells of one second of the whole test (the second its
 * middle is in): an interval of http_req_duration or iteration_duration
 * from its log, a point of the series in its sidecar, or a count by status
 * or error code in that point. */
enum { LINE_REQS, LINE_ITERS, POINT, CODE };

typedef struct second_line {
    int64_t second;             /* the bin (of lines.bin_s seconds) its middle is in */
    double mid;                 /* its middle, s after the earliest part's start */
    int part;
    int kind;
    double len_s;
    char *b64;                  /* LINE_*: the interval */
    ll_timeline_point pt;       /* POINT: its counts (reqs, iters, vus, failed, sent, recv) */
    int code_kind, code;        /* CODE: 0 status, 1 error_code; -1: the others */
    double count;
} second_line;

typedef struct lines {
    second_line *v;
    size_t n, cap;
    int64_t t0_ms; /* the earliest part's start */
    double longest; /* the longest point of the parts' series, s */
} lines;

static second_line *new_line(lines *ls, const part *p, int index, double start_s, double len_s, int kind) {
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? ls->cap * 2 : 1024;
        ls->v = ll_xrealloc(ls->v, ls->cap * sizeof(*ls->v));
    }
    second_line *l = &ls->v[ls->n++];
    memset(l, 0, sizeof(*l));
    double mid = (double)(ll_hdrlog_count(p->side, "start_unix_ms") - ls->t0_ms) / 1000.0 + start_s + len_s / 2;
    l->mid = mid > 0 ? mid : 0;
    l->part = index;
    l->kind = kind;
    l->len_s = len_s;
    return l;
}

static int keep_line(merge *m, part *p, const interval *iv, void *ud) {
    lines *ls = ud;
    if (iv->id != LL_M_HTTP_REQ_DURATION && iv->id != LL_M_ITERATION_DURATION) return 0;
    second_line *l = new_line(ls, p, (int)(p - m->parts), iv->start_s, iv->len_s,
                              iv->id == LL_M_ITERATION_DURATION ? LINE_ITERS : LINE_REQS);
    l->b64 = ll_xstrdup(iv->b64);
    return 0;
}

static double series_at(const cJSON *series, const char *key, int i) {
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(series, key), i);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

/* The points of p's series (its sidecar's run.report.series: per-second
 * rates at the end of each point) as counts. 0, or 1 when p has none. */
static int keep_points(merge *m, part *p, lines *ls) {
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->side, "run"), "report");
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(rep, "series");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(series, "t");
    if (!cJSON_IsArray(t)) return 1;
    double prev = 0;
    int n = cJSON_GetArraySize(t);
    for (int i = 0; i < n; i++) {
        double end = series_at(series, "t", i), dt = end - prev;
        if (!(dt > 0)) continue;
        if (dt > ls->longest) ls->longest = dt;
        second_line *l = new_line(ls, p, (int)(p - m->parts), prev, dt, POINT);
        double reqs = series_at(series, "reqs", i) * dt;
        l->pt = (ll_timeline_point){reqs, series_at(series, "iters", i) * dt, {0, 0, 0, 0}, 1,
                                    series_at(series, "vus", i), series_at(series, "failed", i) * reqs,
                                    series_at(series, "sent", i) * dt, series_at(series, "recv", i) * dt};
        for (int kind = 0; kind < 2; kind++) {
            const cJSON *codes = cJSON_GetObjectItemCaseSensitive(series, kind ? "errors" : "status"), *c;
            cJSON_ArrayForEach(c, codes) {
                double count = series_at(codes, c->string, i) * dt;
                if (count <= 0) continue;
                char *endp;
                long code = strtol(c->string, &endp, 10);
                second_line *cl = new_line(ls, p, (int)(p - m->parts), prev, dt, CODE);
                cl->code_kind = kind;
                cl->code = *endp || code < 0 || code > 9999 ? -1 : (int)code;
                cl->count = count;
            }
        }
        prev = end;
    }
    return 0;
}

static int by_second(const void *a, const void *b) {
    const second_line *x = a, *y = b;
    if (x->second != y->second) return x->second < y->second ? -1 : 1;
    return x->part < y->part ? -1 : x->part > y->part;
}

/* The series of the whole test, a point per bin of a second (or of the
 * parts' longest point, in powers of two, for a long run whose series had
 * their neighbours merged, so that no part's point straddles two bins): its
 * latency percentiles from every part's intervals; its requests,
 * iterations, VUs, failed requests, bytes and codes added over the parts'
 * series (a part's VUs: its highest in the bin). A part without a series
 * (a log without its report) leaves those unknown, the counts then from
 * the intervals. */
static int merged_timeline(merge *m, ll_timeline *tl) {
    lines ls = {NULL, 0, 0, earliest_start_ms(m), 0};
    int rc = 0, full = 1;
    for (int i = 0; !rc && i < m->n; i++) rc = read_log(m, &m->parts[i], keep_line, &ls);
    for (int i = 0; !rc && i < m->n; i++) full &= keep_points(m, &m->parts[i], &ls) == 0;
    double bin = 1;
    while (bin * 1.25 < ls.longest && bin < 65536) bin *= 2;
    for (size_t i = 0; i < ls.n; i++) ls.v[i].second = (int64_t)(ls.v[i].mid / bin);
    qsort(ls.v, ls.n, sizeof(*ls.v), by_second);
    ll_histogram *sum = ll_histogram_new(m->like->lowest, m->like->highest, m->like->sig_digits);
    static const double pcts[4] = {50, 90, 95, 99};
    for (size_t i = 0; !rc && i < ls.n;) {
        int64_t sec = ls.v[i].second;
        ll_timeline_point pt = {0, 0, {0, 0, 0, 0}, full, 0, 0, 0, 0}, lines_pt = pt;
        char why[300];
        size_t first = i;
        ll_histogram_reset(sum);
        int part = -1;
        double vus_part = 0; /* the part's highest VUs in the second so far */
        for (; !rc && i < ls.n && ls.v[i].second == sec; i++) {
            const second_line *l = &ls.v[i];
            if (l->part != part) part = l->part, vus_part = 0;
            if (l->kind == POINT) {
                pt.reqs += l->pt.reqs, pt.iters += l->pt.iters, pt.failed += l->pt.failed;
                pt.sent += l->pt.sent, pt.recv += l->pt.recv;
                if (l->pt.vus > vus_part) pt.vus += l->pt.vus - vus_part, vus_part = l->pt.vus;
            }
            if (l->kind != LINE_REQS && l->kind != LINE_ITERS) continue;
            ll_histogram *h = ll_hdr_codec_decode(l->b64, strlen(l->b64), m->like, why, sizeof(why));
            if (!h) rc = fail(m, "html: %s", why);
            else if (l->kind == LINE_ITERS) lines_pt.iters += (double)h->total_count;
            else lines_pt.reqs += (double)h->total_count, ll_histogram_merge(sum, h);
            ll_histogram_free(h);
        }
        if (!full) pt = lines_pt;
        for (int k = 0; k < 4; k++) pt.lat_us[k] = ll_histogram_percentile(sum, pcts[k]);
        if (rc) break;
        ll_timeline_add(tl, (double)sec * bin, bin, &pt);
        for (size_t k = first; full && k < i; k++)
            if (ls.v[k].kind == CODE) ll_timeline_add_code(tl, ls.v[k].code_kind, ls.v[k].code, ls.v[k].count);
    }
    for (size_t i = 0; i < ls.n; i++) free(ls.v[i].b64);
    free(ls.v);
    ll_histogram_free(sum);
    return rc;
}

/* The names' table of the whole test: the parts' added up. */
static int merged_names(merge *m, ll_tally *t) {
    for (int i = 0; i < m->n; i++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(m->parts[i].side, "run");
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "report"), "names");
        char why[400];
        if (ll_tally_names_load(t, names, why, sizeof(why)) != 0)
            return fail(m, "%s: %s", m->parts[i].side_path, why);
    }
    return 0;
}

/* The scenarios' table of the whole test, from the merged totals. */
static cJSON *merged_scenarios(merge *m, const ll_shard *total, double elapsed) {
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(m->parts[0].side, "run"), *sc;
    const cJSON *scs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "options"), "scenarios");
    int n = 0;
    const char **names = ll_xcalloc((size_t)cJSON_GetArraySize(scs) + 1, sizeof(*names));
    cJSON_ArrayForEach(sc, scs) names[n++] = sc->string;
    cJSON *a = ll_report_scenarios(m->reg, total, names, n, elapsed);
    free(names);
    return a;
}

/* The report's header for merged parts. */
static cJSON *merged_run(const merge *m, const ll_config *cfg, double elapsed) {
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(m->parts[0].side, "run");
    const cJSON *script = cJSON_GetObjectItemCaseSensitive(run, "script");
    cJSON *r = cJSON_CreateObject();
    const char *name = str_at(script, "path") ? str_at(script, "path") : str_at(script, "url");
    cJSON_AddStringToObject(r, "script", cfg->script_path ? cfg->script_path : name ? name : "");
    int64_t t0 = earliest_start_ms(m);
    for (int k = 0; k < 2; k++) {
        char when[64];
        time_t secs = (time_t)((t0 + (k ? (int64_t)(elapsed * 1000) : 0)) / 1000);
        struct tm tm;
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&secs, &tm));
        cJSON_AddStringToObject(r, k ? "ended" : "started", when);
    }
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(run, "options");
    cJSON *scs = cJSON_AddArrayToObject(r, "scenarios");
    const cJSON *sc;
    cJSON_ArrayForEach(sc, cJSON_GetObjectItemCaseSensitive(opts, "scenarios")) {
        cJSON_AddItemToArray(scs, cJSON_CreateString(sc->string));
    }
    char seg[64];
    snprintf(seg, sizeof(seg), "%d parts merged", m->n);
    cJSON_AddStringToObject(r, "segment", seg);
    cJSON_AddStringToObject(r, "version", str_at(m->parts[0].side, "luaload") ? str_at(m->parts[0].side, "luaload") : "");
    if (opts) cJSON_AddItemToObject(r, "options", cJSON_Duplicate(opts, 1));
    return r;
}

/* ---- putting it together ---- */

/* The parts' thresholds (the whole test's: every part has them all), then
 * --threshold; the parts' summary options unless the flags gave them. */
static int apply_options(merge *m, ll_config *cfg) {
    const cJSON *first = m->parts[0].side, *t;
    char why[400];
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(first, "thresholds")) {
        if (cfg->no_thresholds) break;
        const char *metric = str_at(t, "metric"), *src = str_at(t, "threshold");
        if (!metric || !src ||
            ll_threshold_set_add(&cfg->thresholds, m->reg, metric, src, cJSON_IsTrue(cJSON_GetObjectItem(t, "abortOnFail")),
                                 (uint64_t)num_at(t, "delayAbortEval_us"), why, sizeof(why)) != 0)
            return fail(m, "%s: a threshold merge cannot read: %s", m->parts[0].side_path, metric ? why : "no metric");
    }
    if (ll_config_add_cli_thresholds(cfg, m->reg, m->err, sizeof(m->err)) != 0) return -1;
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(first, "run"), "options");
    const cJSON *stats = cJSON_GetObjectItemCaseSensitive(opts, "summaryTrendStats"), *s;
    if (!cfg->summary.trend_stats_set && cJSON_IsArray(stats)) {
        ll_buf list = {0};
        cJSON_ArrayForEach(s, stats) {
            if (!cJSON_IsString(s)) continue;
            if (list.len) ll_buf_puts(&list, ",");
            ll_buf_puts(&list, s->valuestring);
        }
        int bad = list.p && ll_config_set_trend_stats(cfg, list.p, why, sizeof(why)) != 0;
        ll_buf_free(&list);
        if (bad) return fail(m, "%s: summaryTrendStats: %s", m->parts[0].side_path, why);
    }
    const char *unit = str_at(opts, "summaryTimeUnit");
    if (!cfg->summary.time_unit_set && unit && ll_config_time_unit_valid(unit)) cfg->summary.time_unit = unit;
    return 0;
}

/* A script given to merge must be the one the parts ran. */
static int check_script(merge *m, const ll_config *cfg) {
    if (!cfg->script_path) return 0;
    const cJSON *script = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m->parts[0].side, "run"),
                                                           "script");
    const char *want = str_at(script, "sha256");
    char hex[65], why[600];
    if (ll_identity_sha256_file(cfg->script_path, hex, why, sizeof(why)) != 0) return fail(m, "%s", why);
    if (!want || strcmp(want, hex) != 0)
        return fail(m, "%s is not the script the parts ran (%s has another SHA-256)", cfg->script_path,
                    m->parts[0].side_path);
    return 0;
}

/* vus and vus_max: each part had its share of the VUs, so they add. */
static void add_vus(merge *m, ll_shard *total) {
    const int ids[2] = {LL_M_VUS, LL_M_VUS_MAX};
    for (int k = 0; k < 2; k++) {
        ll_value *t = ll_shard_value(total, ids[k]);
        double sum = 0, min = 0, max = 0;
        for (int i = 0; i < m->n; i++) {
            const ll_value *v = ll_shard_value(m->parts[i].shard, ids[k]);
            sum += v->sum;
            min += v->min;
            max += v->max;
        }
        t->sum = sum;
        t->min = min;
        t->max = max;
    }
}

int ll_merge_run(ll_config *cfg, const ll_script_ops *script, char **args, int nargs) {
    merge m;
    memset(&m, 0, sizeof(m));
    int rc;
    ll_shard *total = NULL;
    ll_timeline *timeline = NULL;
    cJSON *page = NULL;
    ll_tally names = {0};
    m.parts = ll_xcalloc((size_t)nargs, sizeof(*m.parts));
    m.n = nargs;
    for (int i = 0; i < m.n; i++) m.parts[i].arg = args[i];
    rc = LL_EXIT_CONFIG; /* from here, the parts were refused */
    for (int i = 0; i < m.n; i++)
        if (load_sidecar(&m, &m.parts[i]) != 0 || (i > 0 && same_test(&m, &m.parts[0], &m.parts[i]) != 0)) goto done;
    if (check_segments(&m) != 0 || check_script(&m, cfg) != 0) goto done;
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(m.parts[0].side, "histogram");
    double sig = num_at(hp, "significant_digits");
    if (num_at(hp, "lowest") != LL_SHARD_HIST_LOWEST || num_at(hp, "highest") != (double)LL_SHARD_HIST_HIGHEST ||
        !(sig >= 1 && sig <= 5 && sig == floor(sig)) || !(m.reg = ll_registry_new((int)sig)) ||
        !(m.like = ll_histogram_new(LL_SHARD_HIST_LOWEST, LL_SHARD_HIST_HIGHEST, (int)sig))) {
        fail(&m, "%s: histograms of a layout this luaload does not use", m.parts[0].side_path);
        goto done;
    }
    double elapsed = 0;
    total = ll_shard_new(m.reg);
    for (int i = 0; i < m.n; i++) {
        part *p = &m.parts[i];
        if (read_values(&m, p) != 0 || index_tags(&m, p) != 0 || read_log(&m, p, add_interval, NULL) != 0 ||
            finish_trends(&m, p) != 0)
            goto done;
        if (ll_shard_merge(total, p->shard) != 0) {
            fail(&m, "%s: histograms of another layout", p->log);
            goto done;
        }
        double d = num_at(p->side, "duration_s");
        if (d > elapsed) elapsed = d; /* the parts ran side by side */
    }
    add_vus(&m, total);
    if (apply_options(&m, cfg) != 0) goto done;
    const char *html = NULL;
    for (int i = 0; i < cfg->noutputs; i++)
        if (strncmp(cfg->outputs[i], "html=", 5) == 0) html = cfg->outputs[i] + 5;
    if (html) {
        timeline = ll_timeline_new(m.reg);
        cJSON *head = merged_run(&m, cfg, elapsed);
        int trc = merged_timeline(&m, timeline), nrc = trc ? -1 : merged_names(&m, &names);
        const ll_value *d = ll_shard_get(total, LL_M_HTTP_REQ_DURATION);
        page = ll_report_data(head, NULL, timeline, d ? d->hist : NULL);
        cJSON_Delete(head);
        if (trc || nrc) goto done;
        cJSON_AddItemToObject(page, "scenarios", merged_scenarios(&m, total, elapsed));
        cJSON_AddItemToObject(page, "names", ll_tally_names_json(&names, elapsed));
    }
    m.err[0] = 0;
    rc = ll_engine_report(cfg, script, m.reg, total, elapsed, html, page);
    int stopped = 0, marked = 0; /* as one process would: an abortOnFail stop is a failed threshold */
    for (int i = 0; i < m.n; i++) {
        const cJSON *end = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m.parts[i].side, "run"),
                                                            "outcome");
        stopped |= bool_at(end, "threshold_abort");
        marked |= bool_at(end, "marked_failed");
    }
    if (rc == 0 && stopped) rc = LL_EXIT_THRESHOLDS;
    if (rc == 0 && marked) rc = LL_EXIT_MARKED_FAILED;
    if (cfg->noutputs && write_outputs(&m, cfg, total, elapsed) != 0 && (rc == 0 || rc == LL_EXIT_THRESHOLDS))
        rc = LL_EXIT_FAILURE;

done:
    if (m.err[0]) fprintf(stderr, "luaload: merge: %s\n", m.err);
    for (int i = 0; m.parts && i < m.n; i++) {
        free(m.parts[i].log);
        free(m.parts[i].side_path);
        free(m.parts[i].ids);
        free(m.parts[i].tags);
        cJSON_Delete(m.parts[i].side);
        ll_shard_free(m.parts[i].shard);
    }
    free(m.parts);
    ll_shard_free(total);
    ll_registry_free(m.reg);
    ll_histogram_free(m.like);
    ll_timeline_free(timeline);
    cJSON_Delete(page);
    ll_tally_free(&names);
    return rc;
}
