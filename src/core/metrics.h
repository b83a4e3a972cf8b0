/* metrics.h -- the metrics registry (names, types, checks, groups) and the
 * per-worker shards that samples are recorded into.
 *
 * A shard belongs to one thread and is written without locks; the registry
 * is touched only when a new metric, check or group name is first seen
 * (init time, cold path) and when shards are merged. Trends are recorded
 * into fixed-size histograms, in microseconds for time metrics. */
#ifndef LL_METRICS_H
#define LL_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "histogram.h"

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
    LL_M_BUILTIN_COUNT
};

typedef struct ll_metric {
    char *name;
    ll_metric_type type;
    ll_contains contains;
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
    int sig_digits; /* histogram precision */
} ll_registry;

typedef struct ll_value {
    double sum;           /* counter: sum; gauge: last value */
    double min, max;      /* gauge */
    uint64_t stamp;       /* gauge: when last set (ns), to merge "last" */
    int64_t passes, total;/* rate; gauge: total = times set */
    ll_histogram *hist;   /* trend, allocated on first sample */
} ll_value;

typedef struct ll_shard {
    ll_registry *reg;
    ll_value *values;
    int nvalues;
    int64_t (*checks)[2]; /* [id][0] passes, [id][1] fails */
    int nchecks;
} ll_shard;

ll_registry *ll_registry_new(int sig_digits);
void ll_registry_free(ll_registry *reg);
/* Returns the id of metric name, registering it when new; -1 when the name
 * exists with another type or contains. */
int ll_registry_metric(ll_registry *reg, const char *name, ll_metric_type type, ll_contains contains);
int ll_registry_find(ll_registry *reg, const char *name); /* -1 when absent */
int ll_registry_check(ll_registry *reg, const char *group_path, const char *name);
int ll_registry_group(ll_registry *reg, const char *path);
/* The path of group id (stable for the registry's life); "" for id < 0. */
const char *ll_registry_group_path(ll_registry *reg, int id);

ll_shard *ll_shard_new(ll_registry *reg);
void ll_shard_free(ll_shard *s);
void ll_shard_add(ll_shard *s, int id, double v);              /* counter */
void ll_shard_set(ll_shard *s, int id, double v, uint64_t now);/* gauge */
void ll_shard_rate(ll_shard *s, int id, int nonzero);          /* rate */
void ll_shard_trend(ll_shard *s, int id, int64_t v);           /* trend */
void ll_shard_check(ll_shard *s, int check_id, int ok);        /* + checks rate */
/* Adds src's samples into dst (same registry). Returns -1 on out of memory. */
int ll_shard_merge(ll_shard *dst, const ll_shard *src);

#endif
