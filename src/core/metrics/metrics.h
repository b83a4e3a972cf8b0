/* metrics.h -- the metrics registry (names, types, sub-metrics, checks,
 * groups) and the per-worker shards that samples are recorded into.
 *
 * A shard belongs to one thread and is written without locks. Metrics and
 * sub-metrics are registered before the workers start (init code, options,
 * thresholds), so the metric table is read without locks while they run;
 * checks and groups are registered under the registry's mutex when first
 * seen (cold path), found through hash indexes in O(1). Checks and groups
 * are bounded: past LL_REGISTRY_MAX_CHECKS checks a new one is counted as
 * the check "(other)" of its group, past LL_REGISTRY_MAX_GROUPS groups a
 * new one is the group "::(other)" (an id in a check's or group's name
 * makes one per iteration); the first fold of each warns on stderr, naming
 * it, and the end counts what was folded. Trends are recorded into fixed-size histograms in
 * thousandths of the metric's unit: microseconds for time metrics (ms).
 *
 * Every sample has tags, given as a lookup function (ll_tag_source) so that
 * nothing is built per sample: a sub-metric (e.g.
 * http_req_duration{status:200}) receives the samples of its parent whose
 * tags match its selector, and only metrics that have sub-metrics pay for
 * the matching. */
#ifndef LL_METRICS_H
#define LL_METRICS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "hashidx.h"
#include "histogram.h"

#define LL_REGISTRY_MAX_CHECKS 1000
#define LL_REGISTRY_MAX_GROUPS 1000
#define LL_REGISTRY_OTHER "(other)" /* the name past the bounds */

typedef enum { LL_COUNTER, LL_GAUGE, LL_RATE, LL_TREND } ll_metric_type;
typedef enum { LL_CONTAINS_DEFAULT, LL_CONTAINS_TIME, LL_CONTAINS_DATA } ll_contains;

/* Built-in metrics, registered in this order by ll_registry_new. */
enum {
    LL_M_HTTP_REQS,
    LL_M_HTTP_REQ_DURATION,
    LL_M_HTTP_REQ_BLOCKED,
    LL_M_HTTP_REQ_CONNECTING,
    LL_M_HTTP_REQ_TLS_HANDSHAKING,
    LL_M_HTTP_REQ_SENDING,
    LL_M_HTTP_REQ_WAITING,
    LL_M_HTTP_REQ_RECEIVING,
    LL_M_HTTP_REQ_FAILED,
    LL_M_DATA_SENT,
    LL_M_DATA_RECEIVED,
    LL_M_ITERATIONS,
    LL_M_ITERATION_DURATION,
    LL_M_VUS,
    LL_M_VUS_MAX,
    LL_M_CHECKS,
    LL_M_DROPPED_ITERATIONS,
    LL_M_GROUP_DURATION,
    LL_M_ITERATION_START_LAG,
    LL_M_ITERATION_DURATION_CORRECTED,
    LL_M_WS_CONNECTING,
    LL_M_WS_SESSION_DURATION,
    LL_M_WS_SESSIONS,
    LL_M_WS_MSGS_SENT,
    LL_M_WS_MSGS_RECEIVED,
    LL_M_WS_PING,
    LL_M_GRPC_REQ_DURATION,
    LL_M_GRPC_STREAMS,
    LL_M_GRPC_STREAMS_MSGS_SENT,
    LL_M_GRPC_STREAMS_MSGS_RECEIVED,
    LL_M_HTTP_REQ_ZERO_RTT,
    LL_M_BUILTIN_COUNT
};

typedef struct ll_tag {
    char *key;
    char *value;
} ll_tag;

/* The tags of one sample: get() returns the value of key (it may format
 * into buf) or NULL when the sample has no such tag; list() calls fn for
 * every tag (outputs need them all). tagset caches the interned tag set
 * (-1 until an output asked), so samples sharing a source intern it once. */
typedef void ll_tag_fn(void *ud, const char *key, const char *value);
typedef struct ll_tag_source {
    const char *(*get)(const void *ctx, const char *key, char *buf, size_t len);
    void (*list)(const void *ctx, ll_tag_fn *fn, void *ud);
    const void *ctx;
    int tagset;
    uint64_t now; /* the outputs' time of its samples (one request's share it): 0 until the first is emitted */
} ll_tag_source;



typedef struct ll_metric {
    char *name;                /* "http_req_duration{status:200}" for a sub-metric */
    ll_metric_type type;
    ll_contains contains;
    int parent;                /* the parent's id for a sub-metric, else -1 */
    ll_tag *sel;               /* a sub-metric's selector */
    int nsel;
    int *subs;                 /* ids of this metric's sub-metrics */
    int nsubs;
    int hidden;                /* kept for the report (per scenario), not in the summary */
} ll_metric;

typedef struct ll_check {
    char *group_path; /* "" for the root group, "::a::b" for nested groups */
    char *name;
} ll_check;

typedef struct ll_registry {
    pthread_mutex_t mu;
    ll_metric *metrics;
    int nmetrics, metrics_cap;
    ll_check *checks;
    int nchecks, checks_cap;
    char **groups; /* group paths, in the order first seen */
    int ngroups, groups_cap;
    ll_hashidx check_index, group_index; /* (group path, name) -> check id; path -> group id */
    int max_checks, max_groups; /* LL_REGISTRY_MAX_*; a test may lower them */
    int64_t checks_folded, groups_folded; /* look-ups answered with "(other)" */
    int sig_digits; /* histogram precision */
    ll_tag *tags;   /* tags of every sample: options.tags, scenario */
    int ntags;
} ll_registry;

/* The range of every Trend's histogram, in 1/1000 of the metric's unit:
 * 1 us to one hour for time metrics (larger values are clamped). */
#define LL_SHARD_HIST_LOWEST 1
#define LL_SHARD_HIST_HIGHEST 3600000000ll

typedef struct ll_value {
    double sum;           /* counter: sum; gauge: last value */
    double min, max;      /* gauge */
    uint64_t stamp;       /* gauge: when last set (ns), to merge "last" */
    int64_t passes, total;/* rate; gauge: total = times set */
    ll_histogram *hist;   /* trend, allocated on first sample */
} ll_value;

/* Where a shard sends every sample when outputs are on (output.c): value
 * in the metric's unit (ms for time trends), now in CLOCK_MONOTONIC ns. */
typedef void ll_emit_fn(void *ud, int id, double value, uint64_t now, ll_tag_source *t);

typedef struct ll_shard {
    ll_registry *reg;
    ll_emit_fn *emit;           /* NULL: no outputs */
    void *emit_ud;
    ll_value *values;
    int nvalues;
    int64_t (*checks)[2]; /* [id][0] passes, [id][1] fails */
    int nchecks;
} ll_shard;

/* k6's names: "counter", "gauge", "rate", "trend"; "default", "time", "data". */
const char *ll_metric_type_name(ll_metric_type t);
const char *ll_metric_contains_name(ll_contains c);

ll_registry *ll_registry_new(int sig_digits);
void ll_registry_free(ll_registry *reg);
/* Returns the id of metric name, registering it when new; -1 when the name
 * exists with another type or contains. */
int ll_registry_metric(ll_registry *reg, const char *name, ll_metric_type type, ll_contains contains);
int ll_registry_find(ll_registry *reg, const char *name); /* -1 when absent */
/* Returns the id of parent{keys[i]:values[i],...}, registering it when new;
 * -1 when out of memory. */
int ll_registry_submetric(ll_registry *reg, int parent, const char *const *keys, const char *const *values,
                          int n);
/* Adds a tag every sample carries (options.tags); replaces an existing key. */
int ll_registry_add_tag(ll_registry *reg, const char *key, const char *value);
/* The id of check name in group_path, registering it when new; past the
 * bound the group's "(other)" check, and *folded (may be NULL) set: a
 * caller that caches ids must not cache name's. -1 when out of memory. */
int ll_registry_check(ll_registry *reg, const char *group_path, const char *name, int *folded);
/* The id of group path, registering it when new; past the bound the group
 * "::(other)". -1 when out of memory. */
int ll_registry_group(ll_registry *reg, const char *path);
/* At the end: how many check results and group runs went to "(other)",
 * one line each on f (nothing when none). */
void ll_registry_report_folds(ll_registry *reg, FILE *f);
/* The path of group id (stable for the registry's life); "" for id < 0. */
const char *ll_registry_group_path(ll_registry *reg, int id);

ll_shard *ll_shard_new(ll_registry *reg);
void ll_shard_free(ll_shard *s);
/* Record a sample of metric id (and of its matching sub-metrics); tags may
 * be NULL for a sample that has only the registry's tags. */
void ll_shard_add(ll_shard *s, int id, double v, ll_tag_source *t);               /* counter */
void ll_shard_set(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t); /* gauge */
void ll_shard_rate(ll_shard *s, int id, int nonzero, ll_tag_source *t);           /* rate */
void ll_shard_trend(ll_shard *s, int id, int64_t v, ll_tag_source *t);            /* trend, 1/1000 units */
/* A check result: its own counts, and the checks rate (tags: check, group). */
void ll_shard_check(ll_shard *s, int check_id, int ok, ll_tag_source *t);
/* Any metric type, v in the metric's unit (ms for time trends). */
void ll_shard_sample(ll_shard *s, int id, double v, uint64_t now, ll_tag_source *t);
/* For results read back from elsewhere (luaload merge): metric id's value
 * slot, and a check's counts added without touching the checks rate. */
ll_value *ll_shard_value(ll_shard *s, int id);
/* Metric id's value in s, NULL when s has none for it yet (readers). */
const ll_value *ll_shard_get(const ll_shard *s, int id);
void ll_shard_check_counts(ll_shard *s, int check_id, int64_t passes, int64_t fails);
/* Zeroes every value (keeps the allocations), for snapshots. */
void ll_shard_reset(ll_shard *s);
/* Adds src's samples into dst (same registry). Returns -1 when a trend
 * cannot be merged (histograms of different layouts). */
int ll_shard_merge(ll_shard *dst, const ll_shard *src);

#endif
