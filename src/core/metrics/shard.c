/* shard.c -- the per-worker shards samples are recorded into without
 * locks (a sub-metric gets the samples of its parent whose tags match),
 * reset for snapshots and merged across workers (see metrics.h). */
#include "metrics.h"

#include "loop.h"
#include "xmalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


ll_shard *ll_shard_new(ll_registry *reg) {
    ll_shard *s = ll_xcalloc(1, sizeof(*s));
    s->reg = reg;
    return s;
}

void ll_shard_free(ll_shard *s) {
    if (!s) return;
    for (int i = 0; i < s->nvalues; i++) ll_histogram_free(s->values[i].hist);
    free(s->values);
    free(s->checks);
    free(s);
}

/* The value slot for metric id, growing the shard when the registry grew. */
static ll_value *slot(ll_shard *s, int id) {
    if (id < s->nvalues) return &s->values[id];
    int n = id + 16;
    ll_value *v = ll_xrealloc(s->values, (size_t)n * sizeof(*v));
    memset(v + s->nvalues, 0, (size_t)(n - s->nvalues) * sizeof(*v));
    s->values = v;
    s->nvalues = n;
    return &v[id];
}

/* ---- recording ---- */

static const char *tag_value(const ll_registry *reg, ll_tag_source *t, const char *key, char *buf,
                             size_t len) {
    const char *v = t ? t->get(t->ctx, key, buf, len) : NULL;
    for (int i = 0; !v && i < reg->ntags; i++)
        if (strcmp(reg->tags[i].key, key) == 0) v = reg->tags[i].value;
    return v;
}

static int matches(const ll_registry *reg, const ll_metric *sub, ll_tag_source *t) {
    char buf[64];
    for (int i = 0; i < sub->nsel; i++) {
        const char *v = tag_value(reg, t, sub->sel[i].key, buf, sizeof(buf));
        if (!v || strcmp(v, sub->sel[i].value) != 0) return 0;
    }
    return 1;
}

static void add_one(ll_shard *s, int id, double v) {
    ll_value *x = slot(s, id);
    x->sum += v;
    x->total++;
}

static void set_one(ll_shard *s, int id, double v, uint64_t now) {
    ll_value *x = slot(s, id);
    if (x->total == 0 || v < x->min) x->min = v;
    if (x->total == 0 || v > x->max) x->max = v;
    x->sum = v;
    x->stamp = now;
    x->total++;
}

static void rate_one(ll_shard *s, int id, int nonzero) {
    ll_value *x = slot(s, id);
    x->passes += nonzero != 0;
    x->total++;
}

static void trend_one(ll_shard *s, int id, int64_t v) {
    ll_value *x = slot(s, id);
    if (!x->hist) x->hist = ll_histogram_new(LL_SHARD_HIST_LOWEST, LL_SHARD_HIST_HIGHEST, s->reg->sig_digits);
    if (x->hist) ll_histogram_record(x->hist, v);
}

/* Whether id has sub-metrics: most have none, and skip the matching. */
static int has_subs(const ll_shard *s, int id) { return s->reg->metrics[id].nsubs > 0; }

/* The next sub-metric of id (from *k on) whose selector matches t, or -1. */
static int next_sub(const ll_shard *s, int id, ll_tag_source *t, int *k) {
    const ll_metric *m = &s->reg->metrics[id];
    while (*k < m->nsubs) {
        int sub = m->subs[(*k)++];
        if (matches(s->reg, &s->reg->metrics[sub], t)) return sub;
    }
    return -1;
}

/* Hands the sample to the outputs, if any, at now, or else at its tag
 * source's time: the samples of one request are stamped alike, as in k6, and
 * read the clock once. */
static void emit(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t) {
    if (!s->emit) return;
    if (!now && t) now = t->now ? t->now : (t->now = ll_loop_now_ns());
    s->emit(s->emit_ud, id, v, now ? now : ll_loop_now_ns(), t);
}

void ll_shard_add(ll_shard *s, int id, double v, ll_tag_source *t) {
    emit(s, id, v, 0, t);
    add_one(s, id, v);
    if (has_subs(s, id))
        for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) add_one(s, sub, v);
}

void ll_shard_set(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t) {
    emit(s, id, v, now, t);
    set_one(s, id, v, now);
    if (has_subs(s, id))
        for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) set_one(s, sub, v, now);
}

void ll_shard_rate(ll_shard *s, int id, int nonzero, ll_tag_source *t) {
    emit(s, id, nonzero != 0, 0, t);
    rate_one(s, id, nonzero);
    if (has_subs(s, id))
        for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) rate_one(s, sub, nonzero);
}

void ll_shard_trend(ll_shard *s, int id, int64_t v, ll_tag_source *t) {
    emit(s, id, (double)v / 1000.0, 0, t);
    trend_one(s, id, v);
    if (has_subs(s, id))
        for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) trend_one(s, sub, v);
}

void ll_shard_sample(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t) {
    switch (s->reg->metrics[id].type) {
    case LL_COUNTER: ll_shard_add(s, id, v, t); break;
    case LL_GAUGE: ll_shard_set(s, id, v, now, t); break;
    case LL_RATE: ll_shard_rate(s, id, v != 0, t); break;
    case LL_TREND: ll_shard_trend(s, id, (int64_t)llround(v * 1000.0), t); break;
    }
}

/* Makes room for check id in s's table. */
static void check_slot(ll_shard *s, int id) {
    if (id < s->nchecks) return;
    int n = id + 16;
    int64_t(*c)[2] = ll_xrealloc(s->checks, (size_t)n * sizeof(*c));
    memset(c + s->nchecks, 0, (size_t)(n - s->nchecks) * sizeof(*c));
    s->checks = c;
    s->nchecks = n;
}

void ll_shard_check(ll_shard *s, int check_id, int ok, ll_tag_source *t) {
    check_slot(s, check_id);
    s->checks[check_id][ok ? 0 : 1]++;
    ll_shard_rate(s, LL_M_CHECKS, ok, t);
}

ll_value *ll_shard_value(ll_shard *s, int id) { return slot(s, id); }

const ll_value *ll_shard_get(const ll_shard *s, int id) {
    return id >= 0 && id < s->nvalues ? &s->values[id] : NULL;
}

void ll_shard_check_counts(ll_shard *s, int check_id, int64_t passes, int64_t fails) {
    check_slot(s, check_id);
    s->checks[check_id][0] += passes;
    s->checks[check_id][1] += fails;
}

void ll_shard_reset(ll_shard *s) {
    for (int i = 0; i < s->nvalues; i++) {
        ll_histogram *h = s->values[i].hist;
        if (h) ll_histogram_reset(h);
        memset(&s->values[i], 0, sizeof(s->values[i]));
        s->values[i].hist = h;
    }
    if (s->checks) memset(s->checks, 0, (size_t)s->nchecks * sizeof(*s->checks));
}

static int merge_value(ll_shard *dst, int id, const ll_value *b, ll_metric_type type) {
    if (b->total == 0 && !b->hist) return 0;
    ll_value *a = slot(dst, id);
    switch (type) {
    case LL_COUNTER:
        a->sum += b->sum;
        break;
    case LL_GAUGE:
        if (a->total == 0 || b->min < a->min) a->min = b->min;
        if (a->total == 0 || b->max > a->max) a->max = b->max;
        if (a->total == 0 || b->stamp >= a->stamp) {
            a->sum = b->sum;
            a->stamp = b->stamp;
        }
        break;
    case LL_RATE:
        a->passes += b->passes;
        break;
    case LL_TREND:
        if (!b->hist) break;
        if (!a->hist) a->hist = ll_histogram_new(b->hist->lowest, b->hist->highest, b->hist->sig_digits);
        if (!a->hist || ll_histogram_merge(a->hist, b->hist) < 0) return -1;
        break;
    }
    a->total += b->total;
    return 0;
}

int ll_shard_merge(ll_shard *dst, const ll_shard *src) {
    int rc = 0;
    for (int i = 0; i < src->nvalues && i < src->reg->nmetrics; i++)
        rc |= merge_value(dst, i, &src->values[i], src->reg->metrics[i].type);
    for (int i = 0; i < src->nchecks; i++) {
        if (src->checks[i][0] + src->checks[i][1] == 0) continue;
        check_slot(dst, i);
        dst->checks[i][0] += src->checks[i][0];
        dst->checks[i][1] += src->checks[i][1];
    }
    return rc;
}
