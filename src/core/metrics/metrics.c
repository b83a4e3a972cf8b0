/* metrics.c -- registry of metric/sub-metric/check/group names and the
 * lock-free per-worker shards, merged at the end of the run (see metrics.h). */
#include "metrics.h"

#include "loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIST_LOWEST 1
#define HIST_HIGHEST 3600000000ll /* one hour in microseconds */

static const struct {
    const char *name;
    ll_metric_type type;
    ll_contains contains;
} builtins[LL_M_BUILTIN_COUNT] = {
    [LL_M_HTTP_REQS] = {"http_reqs", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_HTTP_REQ_DURATION] = {"http_req_duration", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_BLOCKED] = {"http_req_blocked", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_CONNECTING] = {"http_req_connecting", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_TLS_HANDSHAKING] = {"http_req_tls_handshaking", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_SENDING] = {"http_req_sending", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_WAITING] = {"http_req_waiting", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_RECEIVING] = {"http_req_receiving", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_HTTP_REQ_FAILED] = {"http_req_failed", LL_RATE, LL_CONTAINS_DEFAULT},
    [LL_M_DATA_SENT] = {"data_sent", LL_COUNTER, LL_CONTAINS_DATA},
    [LL_M_DATA_RECEIVED] = {"data_received", LL_COUNTER, LL_CONTAINS_DATA},
    [LL_M_ITERATIONS] = {"iterations", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_ITERATION_DURATION] = {"iteration_duration", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_VUS] = {"vus", LL_GAUGE, LL_CONTAINS_DEFAULT},
    [LL_M_VUS_MAX] = {"vus_max", LL_GAUGE, LL_CONTAINS_DEFAULT},
    [LL_M_CHECKS] = {"checks", LL_RATE, LL_CONTAINS_DEFAULT},
    [LL_M_DROPPED_ITERATIONS] = {"dropped_iterations", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_GROUP_DURATION] = {"group_duration", LL_TREND, LL_CONTAINS_TIME},
    /* arrival-rate executors: how late each iteration started, and its
     * duration from when it was due (wrk2's coordinated-omission fix) */
    [LL_M_ITERATION_START_LAG] = {"iteration_start_lag", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_ITERATION_DURATION_CORRECTED] = {"iteration_duration_corrected", LL_TREND, LL_CONTAINS_TIME},
};

/* Grows *arr (of elem-sized items) to hold at least need items. */
static int grow(void **arr, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    int n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

ll_registry *ll_registry_new(int sig_digits) {
    ll_registry *reg = calloc(1, sizeof(*reg));
    if (!reg) return NULL;
    pthread_mutex_init(&reg->mu, NULL);
    reg->sig_digits = sig_digits;
    for (int i = 0; i < LL_M_BUILTIN_COUNT; i++) {
        if (ll_registry_metric(reg, builtins[i].name, builtins[i].type, builtins[i].contains) != i) {
            ll_registry_free(reg);
            return NULL;
        }
    }
    return reg;
}

void ll_registry_free(ll_registry *reg) {
    if (!reg) return;
    for (int i = 0; i < reg->nmetrics; i++) {
        ll_metric *m = &reg->metrics[i];
        free(m->name);
        for (int j = 0; j < m->nsel; j++) {
            free(m->sel[j].key);
            free(m->sel[j].value);
        }
        free(m->sel);
        free(m->subs);
    }
    for (int i = 0; i < reg->ntags; i++) {
        free(reg->tags[i].key);
        free(reg->tags[i].value);
    }
    free(reg->tags);
    for (int i = 0; i < reg->nchecks; i++) {
        free(reg->checks[i].group_path);
        free(reg->checks[i].name);
    }
    for (int i = 0; i < reg->ngroups; i++) free(reg->groups[i]);
    free(reg->metrics);
    free(reg->checks);
    free(reg->groups);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

static int find_metric(ll_registry *reg, const char *name) {
    for (int i = 0; i < reg->nmetrics; i++)
        if (strcmp(reg->metrics[i].name, name) == 0) return i;
    return -1;
}

int ll_registry_find(ll_registry *reg, const char *name) {
    pthread_mutex_lock(&reg->mu);
    int id = find_metric(reg, name);
    pthread_mutex_unlock(&reg->mu);
    return id;
}

int ll_registry_metric(ll_registry *reg, const char *name, ll_metric_type type, ll_contains contains) {
    pthread_mutex_lock(&reg->mu);
    int id = find_metric(reg, name);
    if (id >= 0) {
        if (reg->metrics[id].type != type || reg->metrics[id].contains != contains) id = -1;
    } else if (grow((void **)&reg->metrics, &reg->metrics_cap, reg->nmetrics + 1, sizeof(ll_metric)) == 0) {
        ll_metric *m = &reg->metrics[reg->nmetrics];
        memset(m, 0, sizeof(*m));
        m->name = strdup(name);
        m->type = type;
        m->contains = contains;
        m->parent = -1;
        if (m->name) id = reg->nmetrics++;
    }
    pthread_mutex_unlock(&reg->mu);
    return id;
}

int ll_registry_submetric(ll_registry *reg, int parent, const char *const *keys, const char *const *values,
                          int n) {
    /* the canonical name: parent{k1:v1,k2:v2}, in the order given */
    size_t len = strlen(reg->metrics[parent].name) + 3;
    for (int i = 0; i < n; i++) len += strlen(keys[i]) + strlen(values[i]) + 2;
    char *name = malloc(len);
    if (!name) return -1;
    char *p = name + sprintf(name, "%s{", reg->metrics[parent].name);
    for (int i = 0; i < n; i++) p += sprintf(p, "%s%s:%s", i ? "," : "", keys[i], values[i]);
    strcpy(p, "}");

    int id = ll_registry_find(reg, name);
    if (id >= 0) {
        free(name);
        return id;
    }
    id = ll_registry_metric(reg, name, reg->metrics[parent].type, reg->metrics[parent].contains);
    free(name);
    if (id < 0) return -1;
    pthread_mutex_lock(&reg->mu);
    ll_metric *m = &reg->metrics[id];
    m->parent = parent;
    m->sel = calloc((size_t)(n > 0 ? n : 1), sizeof(ll_tag));
    int ok = m->sel != NULL;
    for (int i = 0; ok && i < n; i++) {
        m->sel[i].key = strdup(keys[i]);
        m->sel[i].value = strdup(values[i]);
        ok = m->sel[i].key && m->sel[i].value;
        m->nsel = i + 1;
    }
    ll_metric *pm = &reg->metrics[parent];
    int *subs = ok ? realloc(pm->subs, (size_t)(pm->nsubs + 1) * sizeof(int)) : NULL;
    if (subs) {
        pm->subs = subs;
        pm->subs[pm->nsubs++] = id;
    }
    pthread_mutex_unlock(&reg->mu);
    return subs ? id : -1;
}

int ll_registry_add_tag(ll_registry *reg, const char *key, const char *value) {
    for (int i = 0; i < reg->ntags; i++) {
        if (strcmp(reg->tags[i].key, key) != 0) continue;
        char *v = strdup(value);
        if (!v) return -1;
        free(reg->tags[i].value);
        reg->tags[i].value = v;
        return 0;
    }
    ll_tag *t = realloc(reg->tags, (size_t)(reg->ntags + 1) * sizeof(*t));
    if (!t) return -1;
    reg->tags = t;
    t[reg->ntags].key = strdup(key);
    t[reg->ntags].value = strdup(value);
    if (!t[reg->ntags].key || !t[reg->ntags].value) {
        free(t[reg->ntags].key);
        free(t[reg->ntags].value);
        return -1;
    }
    reg->ntags++;
    return 0;
}

int ll_registry_check(ll_registry *reg, const char *group_path, const char *name) {
    int id = -1;
    pthread_mutex_lock(&reg->mu);
    for (int i = 0; i < reg->nchecks; i++) {
        if (strcmp(reg->checks[i].name, name) == 0 && strcmp(reg->checks[i].group_path, group_path) == 0) {
            id = i;
            break;
        }
    }
    if (id < 0 && grow((void **)&reg->checks, &reg->checks_cap, reg->nchecks + 1, sizeof(ll_check)) == 0) {
        ll_check *c = &reg->checks[reg->nchecks];
        c->group_path = strdup(group_path);
        c->name = strdup(name);
        if (c->group_path && c->name) id = reg->nchecks++;
    }
    pthread_mutex_unlock(&reg->mu);
    return id;
}

int ll_registry_group(ll_registry *reg, const char *path) {
    int id = -1;
    pthread_mutex_lock(&reg->mu);
    for (int i = 0; i < reg->ngroups; i++) {
        if (strcmp(reg->groups[i], path) == 0) {
            id = i;
            break;
        }
    }
    if (id < 0 && grow((void **)&reg->groups, &reg->groups_cap, reg->ngroups + 1, sizeof(char *)) == 0) {
        reg->groups[reg->ngroups] = strdup(path);
        if (reg->groups[reg->ngroups]) id = reg->ngroups++;
    }
    pthread_mutex_unlock(&reg->mu);
    return id;
}

const char *ll_registry_group_path(ll_registry *reg, int id) {
    if (id < 0) return "";
    pthread_mutex_lock(&reg->mu);
    const char *p = id < reg->ngroups ? reg->groups[id] : "";
    pthread_mutex_unlock(&reg->mu);
    return p;
}

ll_shard *ll_shard_new(ll_registry *reg) {
    ll_shard *s = calloc(1, sizeof(*s));
    if (s) s->reg = reg;
    return s;
}

void ll_shard_free(ll_shard *s) {
    if (!s) return;
    for (int i = 0; i < s->nvalues; i++) ll_hist_free(s->values[i].hist);
    free(s->values);
    free(s->checks);
    free(s);
}

/* The value slot for metric id, growing the shard when the registry grew.
 * Returns NULL only when out of memory (the sample is then lost). */
static ll_value *slot(ll_shard *s, int id) {
    if (id < s->nvalues) return &s->values[id];
    int n = id + 16;
    ll_value *v = realloc(s->values, (size_t)n * sizeof(*v));
    if (!v) return NULL;
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
    if (!x) return;
    x->sum += v;
    x->total++;
}

static void set_one(ll_shard *s, int id, double v, uint64_t now) {
    ll_value *x = slot(s, id);
    if (!x) return;
    if (x->total == 0 || v < x->min) x->min = v;
    if (x->total == 0 || v > x->max) x->max = v;
    x->sum = v;
    x->stamp = now;
    x->total++;
}

static void rate_one(ll_shard *s, int id, int nonzero) {
    ll_value *x = slot(s, id);
    if (!x) return;
    x->passes += nonzero != 0;
    x->total++;
}

static void trend_one(ll_shard *s, int id, int64_t v) {
    ll_value *x = slot(s, id);
    if (!x) return;
    if (!x->hist) x->hist = ll_hist_new(HIST_LOWEST, HIST_HIGHEST, s->reg->sig_digits);
    if (x->hist) ll_hist_record(x->hist, v);
}

/* The next sub-metric of id (from *k on) whose selector matches t, or -1. */
static int next_sub(const ll_shard *s, int id, ll_tag_source *t, int *k) {
    const ll_metric *m = &s->reg->metrics[id];
    while (*k < m->nsubs) {
        int sub = m->subs[(*k)++];
        if (matches(s->reg, &s->reg->metrics[sub], t)) return sub;
    }
    return -1;
}

/* Hands the sample to the outputs, if any. */
static void emit(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t) {
    if (s->emit) s->emit(s->emit_ud, id, v, now ? now : ll_now_ns(), t);
}

void ll_shard_add(ll_shard *s, int id, double v, ll_tag_source *t) {
    emit(s, id, v, 0, t);
    add_one(s, id, v);
    for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) add_one(s, sub, v);
}

void ll_shard_set(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t) {
    emit(s, id, v, now, t);
    set_one(s, id, v, now);
    for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) set_one(s, sub, v, now);
}

void ll_shard_rate(ll_shard *s, int id, int nonzero, ll_tag_source *t) {
    emit(s, id, nonzero != 0, 0, t);
    rate_one(s, id, nonzero);
    for (int k = 0, sub; (sub = next_sub(s, id, t, &k)) >= 0;) rate_one(s, sub, nonzero);
}

void ll_shard_trend(ll_shard *s, int id, int64_t v, ll_tag_source *t) {
    emit(s, id, (double)v / 1000.0, 0, t);
    trend_one(s, id, v);
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

/* Makes room for check id in s's table. Returns -1 when out of memory. */
static int check_slot(ll_shard *s, int id) {
    if (id < s->nchecks) return 0;
    int n = id + 16;
    int64_t(*c)[2] = realloc(s->checks, (size_t)n * sizeof(*c));
    if (!c) return -1;
    memset(c + s->nchecks, 0, (size_t)(n - s->nchecks) * sizeof(*c));
    s->checks = c;
    s->nchecks = n;
    return 0;
}

void ll_shard_check(ll_shard *s, int check_id, int ok, ll_tag_source *t) {
    if (check_slot(s, check_id) < 0) return;
    s->checks[check_id][ok ? 0 : 1]++;
    ll_shard_rate(s, LL_M_CHECKS, ok, t);
}

void ll_shard_reset(ll_shard *s) {
    for (int i = 0; i < s->nvalues; i++) {
        ll_histogram *h = s->values[i].hist;
        if (h) ll_hist_reset(h);
        memset(&s->values[i], 0, sizeof(s->values[i]));
        s->values[i].hist = h;
    }
    if (s->checks) memset(s->checks, 0, (size_t)s->nchecks * sizeof(*s->checks));
}

static int merge_value(ll_shard *dst, int id, const ll_value *b, ll_metric_type type) {
    if (b->total == 0 && !b->hist) return 0;
    ll_value *a = slot(dst, id);
    if (!a) return -1;
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
        if (!a->hist) a->hist = ll_hist_new(b->hist->lowest, b->hist->highest, b->hist->sig_digits);
        if (!a->hist || ll_hist_merge(a->hist, b->hist) < 0) return -1;
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
        if (check_slot(dst, i) < 0) return -1;
        dst->checks[i][0] += src->checks[i][0];
        dst->checks[i][1] += src->checks[i][1];
    }
    return rc;
}
