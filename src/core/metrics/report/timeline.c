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
    double codes[2][LL_TIMELINE_CODES + 1]; /* responses by tracked status, then the
                                            * others; the same by error code */
} point;

/* The codes of one kind (status, error code) charted one by one. */
_Static_assert(LL_TALLY_ERRORS == LL_TALLY_STATUSES, "seen[] holds either kind");
typedef struct tracked {
    int code[LL_TIMELINE_CODES];   /* in the order first seen */
    int ncodes;
    int64_t seen[LL_TALLY_STATUSES + 1]; /* cumulative counts at the last call */
} tracked;

struct ll_timeline {
    const ll_registry *reg;
    int partial;                   /* only requests, iterations and latency known (merge) */
    point *pts;
    int n;
    double last_t;
    double reqs, iters, sent, recv; /* cumulative at last_t */
    int64_t failed_passes;
    ll_histogram *prev, *cut;      /* http_req_duration at last_t, and one interval */
    tracked kind[2];               /* statuses, error codes */
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
        for (int k = 0; k < 2; k++)
            for (int j = 0; j <= LL_TIMELINE_CODES; j++) m.codes[k][j] = a.codes[k][j] + b.codes[k][j];
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

void ll_timeline_add(ll_timeline *t, double start_s, double dt_s, const ll_timeline_point *in) {
    if (t->n == LL_TIMELINE_MAX_POINTS) halve(t);
    point *p = &t->pts[t->n++];
    memset(p, 0, sizeof(*p));
    p->t = start_s;
    p->dt = dt_s;
    p->reqs = in->reqs;
    p->iters = in->iters;
    for (int j = 0; j < 4; j++) p->lat[j] = in->lat_us[j];
    if (in->full) {
        p->vus = in->vus;
        p->failed = in->failed;
        p->sent = in->sent;
        p->recv = in->recv;
    }
    t->partial |= !in->full;
}

/* count of code into slots, kind k's slot for it (the first
 * LL_TIMELINE_CODES codes seen, then "other"; other: not a code). */
static void count_code(tracked *k, double *slots, int code, int other, double count) {
    int j = 0;
    while (j < k->ncodes && k->code[j] != code) j++;
    if (j == k->ncodes && k->ncodes < LL_TIMELINE_CODES && !other) k->code[k->ncodes++] = code;
    slots[j < k->ncodes ? j : LL_TIMELINE_CODES] += count;
}

void ll_timeline_add_code(ll_timeline *t, int kind, int code, double count) {
    if (t->n == 0 || kind < 0 || kind > 1) return;
    count_code(&t->kind[kind], t->pts[t->n - 1].codes[kind], code, code < 0, count);
}

/* The growth of cum (n counts; index i is code base + i) since the last
 * call, into p's slots of kind k. */
static void track(tracked *k, double *slots, const int64_t *cum, int n, int base) {
    for (int c = 0; c < n; c++) {
        int64_t d = cum[c] - k->seen[c];
        if (d <= 0) continue;
        count_code(k, slots, base + c, c == n - 1, (double)d);
        k->seen[c] = cum[c];
    }
}

void ll_timeline_codes(ll_timeline *t, const ll_tally *cum) {
    if (!cum || t->n == 0) return;
    point *p = &t->pts[t->n - 1];
    track(&t->kind[0], p->codes[0], cum->status, LL_TALLY_STATUSES + 1, 0);
    track(&t->kind[1], p->codes[1], cum->error, LL_TALLY_ERRORS + 1, 1000);
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
    for (int kind = 0; kind < 2; kind++) {
        const tracked *k = &t->kind[kind];
        cJSON *st = cJSON_AddObjectToObject(o, kind ? "errors" : "status");
        for (int j = 0; j <= k->ncodes; j++) {
            int other = j == k->ncodes, slot = other ? LL_TIMELINE_CODES : j;
            double any = 0;
            for (int i = 0; i < t->n; i++) any += t->pts[i].codes[kind][slot];
            if (other && any == 0) break;
            char name[16];
            snprintf(name, sizeof(name), other ? "other" : "%d", other ? 0 : k->code[j]);
            cJSON *a = cJSON_AddArrayToObject(st, name);
            for (int i = 0; i < t->n; i++) {
                const point *p = &t->pts[i];
                cJSON_AddItemToArray(a, cJSON_CreateNumber(p->codes[kind][slot] / (p->dt > 0 ? p->dt : 1)));
            }
        }
    }
    return o;
}
