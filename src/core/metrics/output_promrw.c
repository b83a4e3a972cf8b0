/* output_promrw.c -- `-o experimental-prometheus-rw`: k6's Prometheus
 * remote-write output, so that the Grafana dashboards made for k6 work.
 *
 * Owns: its K6_PROMETHEUS_RW_* settings, one aggregate per series (metric
 * and tag set) since the start, k6's series names, and the pushes:
 * protobuf (prompb.proto, through protoc-c) compressed with snappy, POSTed
 * every push interval through the run's ll_output_http.
 *
 * As k6 names them: a Counter is k6_NAME_total (its sum), a Gauge k6_NAME
 * (its last value), a Rate k6_NAME_rate (passes / total), a Trend one
 * series per trend stat, k6_NAME_p99, _avg, _min, _max, _med, _count, _sum
 * (p(99.9) -> p999), every stat of a time Trend in seconds (count too, as
 * k6 divides it as well). Labels are the sample's tags (empty ones left
 * out) and __name__, sorted. A series is sent when it has a sample newer
 * (by the millisecond) than the last push, stamped with its newest
 * sample's time. Trends are kept in 2-digit histograms (1 % error).
 *
 * Series are bounded (each Trend's histogram is about 27 KB): past
 * LL_PROMRW_MAX_SERIES, the samples of a new series go to its metric's one
 * overflow series, labelled name and url "(other)" with the registry's
 * tags (options.tags); the first time says so on stderr, the end counts the
 * samples that went there. */
#include <errno.h>
#include <math.h>
#include <snappy-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "duration.h"
#include "flags.h"
#include "histogram.h"
#include "loop.h"
#include "output.h"
#include "prompb.pb-c.h"
#include "xmalloc.h"

#define ENV "K6_PROMETHEUS_RW_"
#define MAX_STATS 16
#define MAX_HEADERS 32
#define LL_PROMRW_MAX_SERIES 2000
#define OVERFLOW_TAGSET (-1) /* a metric's overflow series */

typedef struct series {
    int metric_id, tagset;     /* the key; metric_id -1: a free slot */
    char **labels;             /* name, value, name, value... sorted by name, without __name__ */
    int nlabels;
    int64_t newest_ms, sent_ms;  /* the newest sample; the stamp of the last push that got through */
    int dirty;                   /* samples since that push */
    double sum;                /* counter: sum; gauge: last value */
    int64_t passes, total;     /* rate */
    ll_histogram *h;           /* trend, in 1/1000 of the metric's unit */
} series;

typedef struct promrw_sink {
    ll_output_sink base;
    const ll_output_http *http;
    void *conn;
    const ll_registry *reg;
    char url[2048];
    char userpwd[512];
    char *headers[MAX_HEADERS + 5]; /* the user's, k6's four, NULL */
    int nheaders;
    int insecure, stale_markers;
    uint64_t push_every_ns, next_push_ns;
    char *stats[MAX_STATS];    /* "p(99)", "avg", ... */
    int nstats;
    series *map;               /* open addressing on (metric, tagset) */
    size_t cap, used;
    size_t max_series;         /* LL_PROMRW_MAX_SERIES, overflow series aside */
    int64_t overflowed;        /* samples that went to an overflow series */
    long failures;
} promrw_sink;

/* ---- settings ---- */

static int env_bool(const char *name, int *out, char *err, size_t errlen) {
    const char *v = getenv(name);
    if (!v) return 0;
    *out = ll_flag_bool(v);
    if (*out >= 0) return 0;
    snprintf(err, errlen, "%s: '%s' is not a boolean (true or false)", name, v);
    return -1;
}

/* "p(99)" -> "p99", "p(99.9)" -> "p999"; others as they are. */
static void stat_suffix(const char *st, char *out, size_t len) {
    if (strncmp(st, "p(", 2) != 0) {
        snprintf(out, len, "%s", st);
        return;
    }
    size_t n = 0;
    out[n++] = 'p';
    for (const char *p = st + 2; *p && *p != ')' && n + 1 < len; p++)
        if (*p != '.') out[n++] = *p;
    out[n] = 0;
}

static int valid_stat(const char *st) {
    if (!strcmp(st, "avg") || !strcmp(st, "min") || !strcmp(st, "max") || !strcmp(st, "med") ||
        !strcmp(st, "count") || !strcmp(st, "sum"))
        return 1;
    double p;
    char close, extra;
    return sscanf(st, "p(%lf%c%c", &p, &close, &extra) == 2 && close == ')' && p >= 0 && p <= 100;
}

static int add_header(promrw_sink *p, const char *name, const char *value, char *err, size_t errlen) {
    if (p->nheaders >= MAX_HEADERS || !*name) {
        snprintf(err, errlen, "%s", *name ? "more than 32 headers" : "a header without a name");
        return -1;
    }
    size_t n = strlen(name) + strlen(value) + 3;
    p->headers[p->nheaders] = ll_xmalloc(n);
    snprintf(p->headers[p->nheaders++], n, "%s: %s", name, value);
    return 0;
}

static int read_settings(promrw_sink *p, char *err, size_t errlen) {
    const char *v = getenv(ENV "SERVER_URL");
    snprintf(p->url, sizeof(p->url), "%s", v && *v ? v : "http://localhost:9090/api/v1/write");
    if (strncmp(p->url, "http://", 7) != 0 && strncmp(p->url, "https://", 8) != 0) {
        snprintf(err, errlen, ENV "SERVER_URL: '%s' is not an http:// or https:// URL", p->url);
        return -1;
    }
    uint64_t us = 5000000;
    v = getenv(ENV "PUSH_INTERVAL");
    if (v && (ll_duration_parse(v, &us) != 0 || us < 1000)) {
        snprintf(err, errlen, ENV "PUSH_INTERVAL: '%s' is not a duration such as 5s or 500ms", v);
        return -1;
    }
    p->push_every_ns = us * 1000;
    v = getenv(ENV "TREND_STATS");
    char list[1024];
    snprintf(list, sizeof(list), "%s", v && *v ? v : "p(99)");
    for (char *save = NULL, *st = strtok_r(list, ",", &save); st; st = strtok_r(NULL, ",", &save)) {
        if (!valid_stat(st) || p->nstats >= MAX_STATS) {
            snprintf(err, errlen, ENV "TREND_STATS: '%s' is not one of avg, min, max, med, count, sum, p(N) "
                                  "(comma-separated, no spaces; 16 at most)", st);
            return -1;
        }
        p->stats[p->nstats++] = ll_xstrdup(st);
    }
    int native = 0;
    if (env_bool(ENV "TREND_AS_NATIVE_HISTOGRAM", &native, err, errlen) != 0 ||
        env_bool(ENV "STALE_MARKERS", &p->stale_markers, err, errlen) != 0 ||
        env_bool(ENV "INSECURE_SKIP_TLS_VERIFY", &p->insecure, err, errlen) != 0)
        return -1;
    if (native) {
        snprintf(err, errlen, ENV "TREND_AS_NATIVE_HISTOGRAM: native histograms are not supported yet "
                              "(trends are sent as " ENV "TREND_STATS)");
        return -1;
    }
    if (getenv(ENV "SIGV4_REGION") || getenv(ENV "CLIENT_CERTIFICATE")) {
        snprintf(err, errlen, ENV "SIGV4_* and " ENV "CLIENT_CERTIFICATE* are not supported yet");
        return -1;
    }
    const char *user = getenv(ENV "USERNAME");
    if (user) snprintf(p->userpwd, sizeof(p->userpwd), "%s:%s", user, getenv(ENV "PASSWORD") ? getenv(ENV "PASSWORD") : "");
    extern char **environ;
    for (char **e = environ; *e; e++) { /* K6_PROMETHEUS_RW_HEADERS_<Name>=value */
        if (strncmp(*e, ENV "HEADERS_", sizeof(ENV "HEADERS_") - 1) != 0) continue;
        const char *name = *e + sizeof(ENV "HEADERS_") - 1, *eq = strchr(name, '=');
        char hn[256];
        snprintf(hn, sizeof(hn), "%.*s", eq ? (int)(eq - name) : 0, name);
        if (eq && add_header(p, hn, eq + 1, err, errlen) != 0) return -1;
    }
    v = getenv(ENV "HTTP_HEADERS"); /* k1:v1,k2:v2 */
    if (v && *v) {
        char copy[4096];
        snprintf(copy, sizeof(copy), "%s", v);
        for (char *save = NULL, *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(kv, ':');
            if (!colon || strchr(colon + 1, ':')) {
                snprintf(err, errlen, ENV "HTTP_HEADERS: '%s' is not name:value", kv);
                return -1;
            }
            *colon = 0;
            if (add_header(p, kv, colon + 1, err, errlen) != 0) return -1;
        }
    }
    v = getenv(ENV "BEARER_TOKEN");
    if (v && *v) {
        char bearer[4096];
        snprintf(bearer, sizeof(bearer), "Bearer %s", v);
        for (int i = 0; i < p->nheaders; i++)
            if (strncasecmp(p->headers[i], "Authorization:", 14) == 0) p->headers[i][0] = 0; /* replaced */
        if (add_header(p, "Authorization", bearer, err, errlen) != 0) return -1;
    }
    int k = p->nheaders; /* k6's own, last, as k6 sets them over the user's */
    p->headers[k++] = ll_xstrdup("User-Agent: k6-prometheus-rw-output");
    p->headers[k++] = ll_xstrdup("Content-Encoding: snappy");
    p->headers[k++] = ll_xstrdup("Content-Type: application/x-protobuf");
    p->headers[k++] = ll_xstrdup("X-Prometheus-Remote-Write-Version: 0.1.0");
    p->nheaders = k;
    return 0;
}

/* ---- series ---- */

typedef struct label_ctx {
    series *s;
} label_ctx;

static void add_label(void *ud, const char *key, const char *value) {
    series *s = ((label_ctx *)ud)->s;
    if (!*key || !*value || (key[0] == '_' && key[1] == '_')) return; /* __name__ and co. are Prometheus's */
    s->labels = ll_xrealloc(s->labels, (size_t)(s->nlabels + 1) * 2 * sizeof(*s->labels));
    s->labels[2 * s->nlabels] = ll_xstrdup(key);
    s->labels[2 * s->nlabels + 1] = ll_xstrdup(value);
    s->nlabels++;
}

static int label_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t slot_of(int metric_id, int tagset, size_t cap) {
    uint64_t h = ((uint64_t)(uint32_t)metric_id << 32 | (uint32_t)tagset) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static void grow(promrw_sink *p) {
    size_t cap = p->cap ? p->cap * 2 : 256;
    series *map = ll_xcalloc(cap, sizeof(*map));
    for (size_t i = 0; i < cap; i++) map[i].metric_id = -1;
    for (size_t i = 0; i < p->cap; i++) {
        if (p->map[i].metric_id < 0) continue;
        size_t j = slot_of(p->map[i].metric_id, p->map[i].tagset, cap);
        while (map[j].metric_id >= 0) j = (j + 1) & (cap - 1);
        map[j] = p->map[i];
    }
    free(p->map);
    p->map = map;
    p->cap = cap;
}

/* The slot of series (metric_id, tagset): its own, or the free one where
 * it would go. */
static series *slot(promrw_sink *p, int metric_id, int tagset) {
    size_t i = slot_of(metric_id, tagset, p->cap);
    while (p->map[i].metric_id >= 0 && (p->map[i].metric_id != metric_id || p->map[i].tagset != tagset))
        i = (i + 1) & (p->cap - 1);
    return &p->map[i];
}

/* An overflow series' labels: name and url "(other)", the registry's tags. */
static void overflow_labels(promrw_sink *p, series *s) {
    label_ctx c = {s};
    add_label(&c, "name", LL_TAGSETS_OTHER);
    add_label(&c, "url", LL_TAGSETS_OTHER);
    for (int i = 0; i < p->reg->ntags; i++)
        if (strcmp(p->reg->tags[i].key, "name") != 0 && strcmp(p->reg->tags[i].key, "url") != 0)
            add_label(&c, p->reg->tags[i].key, p->reg->tags[i].value);
}

static void warn_overflow(promrw_sink *p, const ll_out_sample *x) {
    char first[256] = "";
    label_ctx c = {&(series){0}};
    ll_tagset_each(x->tagsets, x->tagset, add_label, &c);
    for (int i = 0; i < c.s->nlabels; i++) {
        if (strcmp(c.s->labels[2 * i], "name") == 0) snprintf(first, sizeof(first), "%.200s", c.s->labels[2 * i + 1]);
        free(c.s->labels[2 * i]);
        free(c.s->labels[2 * i + 1]);
    }
    free(c.s->labels);
    fprintf(stderr,
            "luaload: warning: experimental-prometheus-rw: more than %zu series; the samples of a new one go to "
            "one series per metric labelled name and url \"%s\" (the first: k6_%s, name=%s). Give requests "
            "whose URL has an id in it a name tag, as http.get(url, { tags = { name = \"item\" } })\n",
            p->max_series, LL_TAGSETS_OTHER, x->metric->name, first[0] ? first : "(none)");
}

/* The series of x's metric and tag set, made (labels copied) when new, or
 * past the bound its metric's overflow series. */
static series *find(promrw_sink *p, const ll_out_sample *x) {
    if ((p->used + 1) * 2 > p->cap) grow(p);
    int tagset = x->tagset;
    series *s = slot(p, x->metric_id, tagset);
    if (s->metric_id >= 0) return s;
    if (p->used >= p->max_series) { /* the overflow series is made past the bound, one per metric */
        if (p->overflowed++ == 0) warn_overflow(p, x);
        tagset = OVERFLOW_TAGSET;
        s = slot(p, x->metric_id, tagset);
        if (s->metric_id >= 0) return s;
    }
    memset(s, 0, sizeof(*s));
    s->metric_id = x->metric_id;
    s->tagset = tagset;
    s->sent_ms = -1;
    if (tagset == OVERFLOW_TAGSET) {
        overflow_labels(p, s);
    } else {
        label_ctx c = {s};
        ll_tagset_each(x->tagsets, x->tagset, add_label, &c);
    }
    qsort(s->labels, (size_t)s->nlabels, 2 * sizeof(*s->labels), label_cmp);
    if (x->metric->type == LL_TREND) s->h = ll_histogram_new(1, LL_SHARD_HIST_HIGHEST, 2);
    p->used++;
    return s;
}

static int promrw_write(ll_output_sink *sk, const ll_out_sample *x) {
    promrw_sink *p = (promrw_sink *)sk;
    series *s = find(p, x);
    switch (x->metric->type) {
    case LL_COUNTER: s->sum += x->value; break;
    case LL_GAUGE: s->sum = x->value; break;
    case LL_RATE:
        s->passes += x->value != 0;
        s->total++;
        break;
    case LL_TREND:
        if (s->h) ll_histogram_record(s->h, (int64_t)llround(x->value * 1000.0));
        break;
    }
    int64_t ms = x->unix_ns / 1000000;
    if (ms > s->newest_ms) s->newest_ms = ms;
    s->dirty = 1;
    return 0;
}

/* ---- pushes ---- */

/* One stat of a trend, in the metric's unit (seconds for time: k6 divides
 * every stat of a time trend by 1000, the count too). */
static double trend_stat(const series *s, const char *st, int is_time) {
    const ll_histogram *h = s->h;
    double v = !strcmp(st, "count") ? (double)h->total_count
               : !strcmp(st, "sum") ? h->sum
               : !strcmp(st, "avg") ? ll_histogram_mean(h)
               : !strcmp(st, "min") ? (double)ll_histogram_min(h)
               : !strcmp(st, "max") ? (double)ll_histogram_max(h)
               : !strcmp(st, "med") ? (double)ll_histogram_percentile(h, 50)
                                    : (double)ll_histogram_percentile(h, strtod(st + 2, NULL));
    if (strcmp(st, "count") != 0) v /= 1000.0; /* back to the metric's unit (ms for time) */
    return is_time ? v / 1000.0 : v;
}

/* The request being built: every series, label and sample in arrays that
 * live until it is sent. */
typedef struct request {
    Prometheus__TimeSeries *ts;
    Prometheus__TimeSeries **tsp;
    Prometheus__Label *labels;
    Prometheus__Label **labelp;
    Prometheus__Sample *samples;
    Prometheus__Sample **samplep;
    char **names;
    size_t nts, nlabels;
} request;

static void add_series(request *r, const series *s, const char *name, double value, int64_t ms) {
    Prometheus__TimeSeries *t = &r->ts[r->nts];
    prometheus__time_series__init(t);
    r->tsp[r->nts] = t;
    Prometheus__Sample *smp = &r->samples[r->nts];
    prometheus__sample__init(smp);
    smp->value = value;
    smp->timestamp = ms;
    r->samplep[r->nts] = smp;
    t->n_samples = 1;
    t->samples = &r->samplep[r->nts];
    r->names[r->nts] = ll_xstrdup(name);
    t->labels = &r->labelp[r->nlabels];
    int named = 0; /* __name__ in its sorted place: '_' sorts after capitals, before lowercase */
    for (int i = 0; i <= s->nlabels; i++) {
        const char *k = i < s->nlabels ? s->labels[2 * i] : NULL;
        if (!named && (!k || strcmp("__name__", k) < 0)) {
            Prometheus__Label *l = &r->labels[r->nlabels];
            prometheus__label__init(l);
            l->name = "__name__";
            l->value = r->names[r->nts];
            r->labelp[r->nlabels++] = l;
            t->n_labels++;
            named = 1;
        }
        if (!k) break;
        Prometheus__Label *l = &r->labels[r->nlabels];
        prometheus__label__init(l);
        l->name = s->labels[2 * i];
        l->value = s->labels[2 * i + 1];
        r->labelp[r->nlabels++] = l;
        t->n_labels++;
    }
    r->nts++;
}

/* Sends every series with a sample newer than the last push (all of them,
 * as stale markers, when stale). */
static int push(promrw_sink *p, int stale, int64_t stale_ms) {
    size_t most = 0, labels = 0;
    for (size_t i = 0; i < p->cap; i++) {
        const series *s = &p->map[i];
        if (s->metric_id < 0 || (!stale && !s->dirty)) continue;
        size_t k = p->reg->metrics[s->metric_id].type == LL_TREND ? (size_t)p->nstats : 1;
        most += k;
        labels += k * (size_t)(s->nlabels + 1);
    }
    if (most == 0) return 0;
    request r;
    memset(&r, 0, sizeof(r));
    r.ts = ll_xcalloc(most, sizeof(*r.ts));
    r.tsp = ll_xcalloc(most, sizeof(*r.tsp));
    r.samples = ll_xcalloc(most, sizeof(*r.samples));
    r.samplep = ll_xcalloc(most, sizeof(*r.samplep));
    r.names = ll_xcalloc(most, sizeof(*r.names));
    r.labels = ll_xcalloc(labels, sizeof(*r.labels));
    r.labelp = ll_xcalloc(labels, sizeof(*r.labelp));
    double nan_stale;
    uint64_t bits = 0x7ff0000000000002ull; /* Prometheus's stale marker */
    memcpy(&nan_stale, &bits, sizeof(nan_stale));
    for (size_t i = 0; i < p->cap; i++) {
        series *s = &p->map[i];
        if (s->metric_id < 0 || (!stale && !s->dirty)) continue;
        const ll_metric *m = &p->reg->metrics[s->metric_id];
        /* a stamp past the last one that got through: Prometheus refuses a repeated one */
        int64_t ms = stale ? stale_ms : s->newest_ms > s->sent_ms ? s->newest_ms : s->sent_ms + 1;
        char name[600];
        if (m->type == LL_TREND) {
            for (int k = 0; k < p->nstats; k++) {
                char suffix[64];
                stat_suffix(p->stats[k], suffix, sizeof(suffix));
                snprintf(name, sizeof(name), "k6_%s_%s", m->name, suffix);
                add_series(&r, s, name, stale ? nan_stale : trend_stat(s, p->stats[k], m->contains == LL_CONTAINS_TIME),
                           ms);
            }
        } else {
            snprintf(name, sizeof(name), "k6_%s%s", m->name,
                     m->type == LL_COUNTER ? "_total" : m->type == LL_RATE ? "_rate" : "");
            double v = m->type == LL_RATE ? (s->total ? (double)s->passes / (double)s->total : 0) : s->sum;
            add_series(&r, s, name, stale ? nan_stale : v, ms);
        }
    }
    Prometheus__WriteRequest wr;
    prometheus__write_request__init(&wr);
    wr.n_timeseries = r.nts;
    wr.timeseries = r.tsp;
    size_t plen = prometheus__write_request__get_packed_size(&wr);
    uint8_t *packed = ll_xmalloc(plen ? plen : 1);
    prometheus__write_request__pack(&wr, packed);
    size_t zlen = snappy_max_compressed_length(plen);
    char *z = ll_xmalloc(zlen);
    int rc = snappy_compress((const char *)packed, plen, z, &zlen) == SNAPPY_OK ? 0 : -1;
    char why[256] = "snappy failed";
    if (rc == 0) {
        ll_output_post to = {p->url, (const char *const *)p->headers, p->userpwd[0] ? p->userpwd : NULL,
                             p->insecure, 0};
        long status = p->http->post(p->conn, &to, z, zlen, why, sizeof(why));
        rc = status / 100 == 2 ? 0 : -1;
    }
    for (size_t i = 0; rc == 0 && !stale && i < p->cap; i++) { /* sent: a failed push is tried again next time */
        series *s = &p->map[i];
        if (s->metric_id < 0 || !s->dirty) continue;
        s->sent_ms = s->newest_ms > s->sent_ms ? s->newest_ms : s->sent_ms + 1;
        s->dirty = 0;
    }
    if (rc != 0 && p->failures++ == 0)
        snprintf(p->base.err, sizeof(p->base.err), "remote write to %.100s failed: %.120s", p->url, why);
    for (size_t i = 0; i < r.nts; i++) free(r.names[i]);
    free(z);
    free(packed);
    free(r.ts);
    free(r.tsp);
    free(r.samples);
    free(r.samplep);
    free(r.names);
    free(r.labels);
    free(r.labelp);
    return rc;
}

static int promrw_flush(ll_output_sink *sk) {
    promrw_sink *p = (promrw_sink *)sk;
    uint64_t now = ll_loop_now_ns();
    if (now < p->next_push_ns) return 0;
    p->next_push_ns = now + p->push_every_ns;
    return push(p, 0, 0);
}

static void promrw_free(promrw_sink *p) {
    for (size_t i = 0; i < p->cap; i++) {
        series *s = &p->map[i];
        if (s->metric_id < 0) continue;
        for (int k = 0; k < 2 * s->nlabels; k++) free(s->labels[k]);
        free(s->labels);
        ll_histogram_free(s->h);
    }
    free(p->map);
    for (int i = 0; i < p->nstats; i++) free(p->stats[i]);
    for (int i = 0; i < p->nheaders; i++) free(p->headers[i]);
    if (p->conn) p->http->close(p->conn);
    free(p);
}

/* The last push and the stale markers, then the run's error, if any. */
static void promrw_close(ll_output_sink *sk, char *err, size_t errlen) {
    promrw_sink *p = (promrw_sink *)sk;
    push(p, 0, 0); /* what is left, at once */
    if (p->stale_markers) { /* after every stamp sent, whatever the wall clock did */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t at = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        for (size_t i = 0; i < p->cap; i++)
            if (p->map[i].metric_id >= 0 && p->map[i].sent_ms >= at) at = p->map[i].sent_ms;
        push(p, 1, at + 1);
    }
    err[0] = 0;
    if (p->failures) snprintf(err, errlen, "%s (%ld of the pushes failed)", p->base.err, p->failures);
    if (p->overflowed)
        fprintf(stderr, "luaload: warning: experimental-prometheus-rw: %lld samples went to the series labelled "
                        "name and url \"%s\" (more than %zu series)\n", (long long)p->overflowed, LL_TAGSETS_OTHER,
                p->max_series);
    promrw_free(p);
}

ll_output_sink *ll_output_promrw_open(const ll_registry *reg, const ll_output_http *http, char *err, size_t errlen) {
    promrw_sink *p = ll_xcalloc(1, sizeof(*p));
    p->reg = reg;
    p->http = http;
    p->max_series = LL_PROMRW_MAX_SERIES;
    if (read_settings(p, err, errlen) != 0) {
        promrw_free(p);
        return NULL;
    }
    p->conn = http->open();
    if (!p->conn) {
        snprintf(err, errlen, "experimental-prometheus-rw: cannot make an HTTP client");
        promrw_free(p);
        return NULL;
    }
    p->next_push_ns = ll_loop_now_ns() + p->push_every_ns;
    p->base.write = promrw_write;
    p->base.flush = promrw_flush;
    p->base.close = promrw_close;
    return &p->base;
}
