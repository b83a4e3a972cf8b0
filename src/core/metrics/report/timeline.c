/* timeline.c -- the per-second series of a run for the HTML report (see
 * timeline.h), cut from the cumulative snapshots the engine already merges
 * every second: so the workers never wait for it.
 *
 * Owns: the points (at most LL_TIMELINE_MAX_POINTS; when full, neighbours
 * are merged in pairs, so a day-long run keeps as many points as an hour's),
 * and their JSON. */
#include "timeline.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr_codec.h"
#include "xmalloc.h"

typedef struct point {
    double t, dt;                 /* start and length (s) */
    double reqs, iters, sent, recv, failed, vus;
    int64_t lat[4];               /* p50, p90, p95, p99 of http_req_duration in the point, µs */
    double codes[LL_TIMELINE_CODES + 1]; /* responses by tracked status, then the others */
} point;

struct ll_timeline {
    const ll_registry *reg;
    int partial;                   /* only requests, iterations and latency known (merge) */
    point *pts;
    int n;
    double last_t;
    double reqs, iters, sent, recv; /* cumulative at last_t */
    int64_t failed_passes;
    ll_histogram *prev, *cut;      /* http_req_duration at last_t, and one interval */
    int code[LL_TIMELINE_CODES];   /* the status codes tracked, in the order first seen */
    int ncodes;
    int64_t *seen;                 /* cumulative responses by status at the last call */
    int nseen;
};

static const double PCTS[4] = {50, 90, 95, 99};

ll_timeline *ll_timeline_new(const ll_registry *reg) {
    ll_timeline *t = ll_xcalloc(1, sizeof(*t));
    t->reg = reg;
    t->pts = ll_xcalloc(LL_TIMELINE_MAX_POINTS, sizeof(*t->pts));
    return t;
}

void ll_timeline_free(ll_timeline *t) {
    if (!t) return;
    free(t->pts);
    free(t->seen);
    ll_histogram_free(t->prev);
    ll_histogram_free(t->cut);
    free(t);
}

static double sum_of(const ll_shard *s, int id) {
    const ll_value *v = ll_shard_get(s, id);
    return v ? v->sum : 0;
}

/* Two neighbours become one: sums add, the VUs and the percentiles are the
 * higher of the two (a percentile of two seconds is not known from theirs). */
static void halve(ll_timeline *t) {
    int k = 0;
    for (int i = 0; i + 1 < t->n; i += 2, k++) {
        point a = t->pts[i], b = t->pts[i + 1];
        point m = a;
        m.dt = a.dt + b.dt;
        m.reqs = a.reqs + b.reqs;
        m.iters = a.iters + b.iters;
        m.sent = a.sent + b.sent;
        m.recv = a.recv + b.recv;
        m.failed = a.failed + b.failed;
        m.vus = a.vus > b.vus ? a.vus : b.vus;
        for (int j = 0; j < 4; j++) m.lat[j] = a.lat[j] > b.lat[j] ? a.lat[j] : b.lat[j];
        for (int j = 0; j <= LL_TIMELINE_CODES; j++) m.codes[j] = a.codes[j] + b.codes[j];
        t->pts[k] = m;
    }
    if (t->n % 2) t->pts[k++] = t->pts[t->n - 1];
    t->n = k;
}

void ll_timeline_tick(ll_timeline *t, const ll_shard *cum, double t_s) {
    if (t_s <= t->last_t) return;
    if (sum_of(cum, LL_M_HTTP_REQS) == t->reqs && sum_of(cum, LL_M_ITERATIONS) == t->iters && t_s - t->last_t < 0.5)
        return; /* the final totals after a last snapshot that had them all */
    if (t->n == LL_TIMELINE_MAX_POINTS) halve(t);
    point *p = &t->pts[t->n++];
    memset(p, 0, sizeof(*p));
    p->t = t->last_t;
    p->dt = t_s - t->last_t;
    double reqs = sum_of(cum, LL_M_HTTP_REQS), iters = sum_of(cum, LL_M_ITERATIONS);
    double sent = sum_of(cum, LL_M_DATA_SENT), recv = sum_of(cum, LL_M_DATA_RECEIVED);
    const ll_value *f = ll_shard_get(cum, LL_M_HTTP_REQ_FAILED), *vus = ll_shard_get(cum, LL_M_VUS);
    p->reqs = reqs - t->reqs;
    p->iters = iters - t->iters;
    p->sent = sent - t->sent;
    p->recv = recv - t->recv;
    p->failed = (double)((f ? f->passes : 0) - t->failed_passes);
    p->vus = vus ? vus->sum : 0;
    t->reqs = reqs;
    t->iters = iters;
    t->sent = sent;
    t->recv = recv;
    t->failed_passes = f ? f->passes : 0;
    const ll_value *d = ll_shard_get(cum, LL_M_HTTP_REQ_DURATION);
    if (d && d->hist) {
        const ll_histogram *h = d->hist;
        if (!t->prev) t->prev = ll_histogram_new(h->lowest, h->highest, h->sig_digits);
        if (!t->cut) t->cut = ll_histogram_new(h->lowest, h->highest, h->sig_digits);
        if (t->prev && t->cut && ll_hdr_codec_subtract(t->cut, h, t->prev) == 0) {
            for (int j = 0; j < 4; j++) p->lat[j] = ll_histogram_percentile(t->cut, PCTS[j]);
            ll_histogram_reset(t->prev);
            ll_histogram_merge(t->prev, h);
        }
    }
    t->last_t = t_s;
}

void ll_timeline_add(ll_timeline *t, double start_s, double dt_s, double reqs, double iters, const int64_t lat_us[4]) {
    if (t->n == LL_TIMELINE_MAX_POINTS) halve(t);
    point *p = &t->pts[t->n++];
    memset(p, 0, sizeof(*p));
    p->t = start_s;
    p->dt = dt_s;
    p->reqs = reqs;
    p->iters = iters;
    for (int j = 0; j < 4; j++) p->lat[j] = lat_us[j];
    t->partial = 1;
}

void ll_timeline_statuses(ll_timeline *t, const int64_t *cum, int n) {
    if (!cum || t->n == 0) return;
    if (!t->seen) {
        t->seen = ll_xcalloc((size_t)n, sizeof(*t->seen));
        t->nseen = n;
    }
    point *p = &t->pts[t->n - 1];
    for (int c = 0; c < n && c < t->nseen; c++) {
        int64_t d = cum[c] - t->seen[c];
        if (d <= 0) continue;
        int k = 0;
        while (k < t->ncodes && t->code[k] != c) k++;
        if (k == t->ncodes && t->ncodes < LL_TIMELINE_CODES) t->code[t->ncodes++] = c;
        p->codes[k < t->ncodes ? k : LL_TIMELINE_CODES] += (double)d;
        t->seen[c] = cum[c];
    }
}

static cJSON *column(const ll_timeline *t, int which) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < t->n; i++) {
        const point *p = &t->pts[i];
        double dt = p->dt > 0 ? p->dt : 1, v = 0;
        switch (which) {
        case 0: v = p->t + p->dt; break;              /* the point's end, s */
        case 1: v = p->vus; break;
        case 2: v = p->reqs / dt; break;              /* per second */
        case 3: v = p->iters / dt; break;
        case 4: v = p->reqs > 0 ? p->failed / p->reqs : 0; break;
        case 5: v = p->sent / dt; break;
        case 6: v = p->recv / dt; break;
        default: v = p->reqs > 0 ? (double)p->lat[which - 7] / 1000.0 : 0; break; /* ms */
        }
        int unknown = t->partial && (which == 1 || (which >= 4 && which <= 6));
        cJSON_AddItemToArray(a, unknown ? cJSON_CreateNull() : cJSON_CreateNumber(v));
    }
    return a;
}

cJSON *ll_timeline_json(const ll_timeline *t) {
    static const char *const names[] = {"t", "vus", "reqs", "iters", "failed", "sent", "recv",
                                        "p50", "p90", "p95", "p99"};
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < 11; i++) cJSON_AddItemToObject(o, names[i], column(t, i));
    cJSON *st = cJSON_AddObjectToObject(o, "status");
    for (int k = 0; k <= t->ncodes; k++) {
        int other = k == t->ncodes;
        double any = 0;
        for (int i = 0; i < t->n; i++) any += t->pts[i].codes[other ? LL_TIMELINE_CODES : k];
        if (other && any == 0) break;
        char name[16];
        snprintf(name, sizeof(name), other ? "other" : "%d", other ? 0 : t->code[k]);
        cJSON *a = cJSON_AddArrayToObject(st, name);
        for (int i = 0; i < t->n; i++) {
            const point *p = &t->pts[i];
            double dt = p->dt > 0 ? p->dt : 1;
            cJSON_AddItemToArray(a, cJSON_CreateNumber(p->codes[other ? LL_TIMELINE_CODES : k] / dt));
        }
    }
    return o;
}
