/* registry.c -- the registry of metric, sub-metric, check and group names
 * and the tags every sample carries (see metrics.h). */
#include "metrics.h"

#include "xmalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    /* luaload.ws (k6/ws): the open, the session, its messages, ping to pong */
    [LL_M_WS_CONNECTING] = {"ws_connecting", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_WS_SESSION_DURATION] = {"ws_session_duration", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_WS_SESSIONS] = {"ws_sessions", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_WS_MSGS_SENT] = {"ws_msgs_sent", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_WS_MSGS_RECEIVED] = {"ws_msgs_received", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_WS_PING] = {"ws_ping", LL_TREND, LL_CONTAINS_TIME},
    /* luaload.grpc (k6/net/grpc) */
    [LL_M_GRPC_REQ_DURATION] = {"grpc_req_duration", LL_TREND, LL_CONTAINS_TIME},
    [LL_M_GRPC_STREAMS] = {"grpc_streams", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_GRPC_STREAMS_MSGS_SENT] = {"grpc_streams_msgs_sent", LL_COUNTER, LL_CONTAINS_DEFAULT},
    [LL_M_GRPC_STREAMS_MSGS_RECEIVED] = {"grpc_streams_msgs_received", LL_COUNTER, LL_CONTAINS_DEFAULT},
    /* HTTP/3 requests sent as 0-RTT early data that the server accepted */
    [LL_M_HTTP_REQ_ZERO_RTT] = {"http_req_zero_rtt", LL_COUNTER, LL_CONTAINS_DEFAULT},
};

ll_registry *ll_registry_new(int sig_digits) {
    ll_registry *reg = ll_xcalloc(1, sizeof(*reg));
    pthread_mutex_init(&reg->mu, NULL);
    reg->sig_digits = sig_digits;
    reg->max_checks = LL_REGISTRY_MAX_CHECKS;
    reg->max_groups = LL_REGISTRY_MAX_GROUPS;
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
    ll_hashidx_free(&reg->check_index);
    ll_hashidx_free(&reg->group_index);
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
    } else {
        ll_xgrow((void **)&reg->metrics, &reg->metrics_cap, reg->nmetrics + 1, sizeof(ll_metric));
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

/* ---- checks and groups: hash indexes, bounds (called with reg->mu held) ---- */

typedef struct check_key {
    const ll_registry *reg;
    const char *group_path, *name;
} check_key;

static uint64_t check_hash(const char *group_path, const char *name) {
    return ll_hash_more(ll_hash_bytes(group_path, strlen(group_path) + 1), name, strlen(name));
}

static int same_check(const void *ud, int id) {
    const check_key *k = ud;
    const ll_check *c = &k->reg->checks[id];
    return strcmp(c->name, k->name) == 0 && strcmp(c->group_path, k->group_path) == 0;
}

/* The check's id, added when new (past the bound only when force). */
static int check_id(ll_registry *reg, const char *group_path, const char *name, int force) {
    check_key k = {reg, group_path, name};
    uint64_t h = check_hash(group_path, name);
    int id = ll_hashidx_find(&reg->check_index, h, same_check, &k);
    if (id >= 0 || (reg->nchecks >= reg->max_checks && !force)) return id;
    ll_xgrow((void **)&reg->checks, &reg->checks_cap, reg->nchecks + 1, sizeof(ll_check));
    ll_check *c = &reg->checks[reg->nchecks];
    c->group_path = ll_xstrdup(group_path);
    c->name = ll_xstrdup(name);
    ll_hashidx_add(&reg->check_index, h, reg->nchecks);
    return reg->nchecks++;
}

int ll_registry_check(ll_registry *reg, const char *group_path, const char *name, int *folded) {
    pthread_mutex_lock(&reg->mu);
    int id = check_id(reg, group_path, name, 0);
    if (folded) *folded = id < 0;
    if (id < 0) { /* past the bound: the group's "(other)", at most one per group */
        if (reg->checks_folded++ == 0)
            fprintf(stderr,
                    "luaload: warning: more than %d distinct checks: the results of the check \"%.200s\"%s%.200s%s "
                    "and of every later new one are counted as the check \"%s\" of their group. Keep ids and other "
                    "changing values out of check names\n",
                    reg->max_checks, name, *group_path ? " (group \"" : "", group_path, *group_path ? "\")" : "",
                    LL_REGISTRY_OTHER);
        id = check_id(reg, group_path, LL_REGISTRY_OTHER, 1);
    }
    pthread_mutex_unlock(&reg->mu);
    return id;
}

static int same_group(const void *ud, int id) {
    const check_key *k = ud;
    return strcmp(k->reg->groups[id], k->group_path) == 0;
}

/* The group's id, added when new (past the bound only when force). */
static int group_id(ll_registry *reg, const char *path, int force) {
    check_key k = {reg, path, NULL};
    uint64_t h = ll_hash_bytes(path, strlen(path));
    int id = ll_hashidx_find(&reg->group_index, h, same_group, &k);
    if (id >= 0 || (reg->ngroups >= reg->max_groups && !force)) return id;
    ll_xgrow((void **)&reg->groups, &reg->groups_cap, reg->ngroups + 1, sizeof(char *));
    reg->groups[reg->ngroups] = ll_xstrdup(path);
    ll_hashidx_add(&reg->group_index, h, reg->ngroups);
    return reg->ngroups++;
}

int ll_registry_group(ll_registry *reg, const char *path) {
    pthread_mutex_lock(&reg->mu);
    int id = group_id(reg, path, 0);
    if (id < 0) {
        if (reg->groups_folded++ == 0)
            fprintf(stderr,
                    "luaload: warning: more than %d distinct groups: the group \"%.200s\" and every later new one "
                    "are counted as the group \"::%s\". Keep ids and other changing values out of group names\n",
                    reg->max_groups, path, LL_REGISTRY_OTHER);
        id = group_id(reg, "::" LL_REGISTRY_OTHER, 1);
    }
    pthread_mutex_unlock(&reg->mu);
    return id;
}

void ll_registry_report_folds(ll_registry *reg, FILE *f) {
    pthread_mutex_lock(&reg->mu);
    if (reg->checks_folded)
        fprintf(f, "luaload: warning: %lld check results were counted as \"%s\" (more than %d distinct checks)\n",
                (long long)reg->checks_folded, LL_REGISTRY_OTHER, reg->max_checks);
    if (reg->groups_folded)
        fprintf(f, "luaload: warning: %lld group runs were counted as \"::%s\" (more than %d distinct groups)\n",
                (long long)reg->groups_folded, LL_REGISTRY_OTHER, reg->max_groups);
    pthread_mutex_unlock(&reg->mu);
}

const char *ll_registry_group_path(ll_registry *reg, int id) {
    if (id < 0) return "";
    pthread_mutex_lock(&reg->mu);
    const char *p = id < reg->ngroups ? reg->groups[id] : "";
    pthread_mutex_unlock(&reg->mu);
    return p;
}

const char *ll_metric_type_name(ll_metric_type t) {
    return t == LL_COUNTER ? "counter" : t == LL_GAUGE ? "gauge" : t == LL_RATE ? "rate" : "trend";
}

const char *ll_metric_contains_name(ll_contains c) {
    return c == LL_CONTAINS_TIME ? "time" : c == LL_CONTAINS_DATA ? "data" : "default";
}
