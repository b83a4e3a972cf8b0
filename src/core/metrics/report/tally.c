/* tally.c -- responses by status and error code, requests by name (see
 * tally.h).
 *
 * Owns: the bounded name table (linear search over at most LL_TALLY_NAMES
 * names: a script names a handful of requests; unnamed ones are named by
 * their URL, and past the bound they share the "other" row) and its JSON
 * for the report. */
#include "tally.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr_codec.h"
#include "metrics.h"
#include "output_hdrlog.h"
#include "xmalloc.h"

#define NAME_SIG_DIGITS 2

void ll_tally_response(ll_tally *t, int status, int error_code) {
    t->status[status >= 0 && status < LL_TALLY_STATUSES ? status : LL_TALLY_STATUSES]++;
    if (error_code <= 0) return;
    int e = error_code - 1000;
    t->error[e >= 0 && e < LL_TALLY_ERRORS ? e : LL_TALLY_ERRORS]++;
}

/* The row of name, made when new (the "other" row when the table is full). */
static ll_tally_name *table(ll_tally *t) {
    if (!t->names) t->names = ll_xcalloc(LL_TALLY_NAMES + 1, sizeof(*t->names));
    return t->names;
}

static ll_tally_name *row(ll_tally *t, const char *name) {
    table(t);
    for (int i = 0; i < t->nnames; i++)
        if (t->names[i].name[0] == name[0] && strcmp(t->names[i].name, name) == 0) return &t->names[i];
    if (t->nnames == LL_TALLY_NAMES) return &t->names[LL_TALLY_NAMES];
    ll_tally_name *r = &t->names[t->nnames++];
    r->name = ll_xstrdup(name);
    return r;
}

static void add_row(ll_tally_name *r, int64_t reqs, int64_t failed, const ll_histogram *h) {
    r->reqs += reqs;
    r->failed += failed;
    if (!h || h->total_count == 0) return;
    if (!r->duration) r->duration = ll_histogram_new(h->lowest, h->highest, h->sig_digits);
    ll_histogram_merge(r->duration, h);
}

void ll_tally_name_add(ll_tally *t, const char *name, int failed, int64_t duration_us) {
    ll_tally_name *r = row(t, name ? name : "");
    r->reqs++;
    r->failed += failed != 0;
    if (duration_us < 0) return;
    if (!r->duration) r->duration = ll_histogram_new(LL_SHARD_HIST_LOWEST, LL_SHARD_HIST_HIGHEST, NAME_SIG_DIGITS);
    ll_histogram_record(r->duration, duration_us < LL_SHARD_HIST_HIGHEST ? duration_us : LL_SHARD_HIST_HIGHEST);
}

void ll_tally_copy(ll_tally *dst, const ll_tally *src) {
    memset(dst->status, 0, sizeof(dst->status));
    memset(dst->error, 0, sizeof(dst->error));
    for (int i = 0; dst->names && i <= LL_TALLY_NAMES; i++) {
        dst->names[i].reqs = dst->names[i].failed = 0;
        if (dst->names[i].duration) ll_histogram_reset(dst->names[i].duration);
    }
    ll_tally_add(dst, src);
}

void ll_tally_add(ll_tally *dst, const ll_tally *src) {
    for (int i = 0; i <= LL_TALLY_STATUSES; i++) dst->status[i] += src->status[i];
    for (int i = 0; i <= LL_TALLY_ERRORS; i++) dst->error[i] += src->error[i];
    if (!src->names) return;
    for (int i = 0; i < src->nnames; i++) {
        const ll_tally_name *s = &src->names[i];
        add_row(row(dst, s->name), s->reqs, s->failed, s->duration);
    }
    const ll_tally_name *o = &src->names[LL_TALLY_NAMES];
    if (o->reqs) {
        add_row(&table(dst)[LL_TALLY_NAMES], o->reqs, o->failed, o->duration);
    }
}

void ll_tally_free(ll_tally *t) {
    for (int i = 0; t->names && i <= LL_TALLY_NAMES; i++) {
        free(t->names[i].name);
        ll_histogram_free(t->names[i].duration);
    }
    free(t->names);
    t->names = NULL;
    t->nnames = 0;
}

static int busiest_first(const void *a, const void *b) {
    const ll_tally_name *x = *(const ll_tally_name *const *)a, *y = *(const ll_tally_name *const *)b;
    if (x->reqs != y->reqs) return x->reqs > y->reqs ? -1 : 1;
    return strcmp(x->name, y->name);
}

static cJSON *row_json(const ll_tally_name *r, const char *name, double elapsed) {
    static const double pcts[3] = {50, 95, 99};
    static const char *const keys[3] = {"p50", "p95", "p99"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddNumberToObject(o, "reqs", (double)r->reqs);
    cJSON_AddNumberToObject(o, "rps", elapsed > 0 ? (double)r->reqs / elapsed : 0);
    cJSON_AddNumberToObject(o, "failed", r->reqs ? (double)r->failed / (double)r->reqs : 0);
    for (int k = 0; k < 3; k++) {
        double ms = r->duration ? (double)ll_histogram_percentile(r->duration, pcts[k]) / 1000.0 : 0;
        cJSON_AddNumberToObject(o, keys[k], ms);
    }
    return o;
}

cJSON *ll_tally_names_json(const ll_tally *t, double elapsed) {
    cJSON *a = cJSON_CreateArray();
    if (!t->names) return a;
    const ll_tally_name **order = ll_xcalloc((size_t)t->nnames + 1, sizeof(*order));
    int n = 0;
    for (int i = 0; i < t->nnames; i++)
        if (t->names[i].reqs) order[n++] = &t->names[i];
    qsort(order, (size_t)n, sizeof(*order), busiest_first);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, row_json(order[i], order[i]->name, elapsed));
    if (t->names[LL_TALLY_NAMES].reqs) cJSON_AddItemToArray(a, row_json(&t->names[LL_TALLY_NAMES], "other", elapsed));
    free(order);
    return a;
}

static cJSON *save_row(const ll_tally_name *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "name", r->name ? cJSON_CreateString(r->name) : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "reqs", (double)r->reqs);
    cJSON_AddNumberToObject(o, "failed", (double)r->failed);
    char *b64 = r->duration ? ll_hdr_codec_encode(r->duration) : NULL;
    if (b64) cJSON_AddStringToObject(o, "duration", b64);
    free(b64);
    return o;
}

cJSON *ll_tally_names_save(const ll_tally *t) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; t->names && i < t->nnames; i++) cJSON_AddItemToArray(a, save_row(&t->names[i]));
    if (t->names && t->names[LL_TALLY_NAMES].reqs) cJSON_AddItemToArray(a, save_row(&t->names[LL_TALLY_NAMES]));
    return a;
}

/* A count of a row (ll_hdrlog_count), -1 when it is missing too. */
static int64_t count_at(const cJSON *o, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(o, key) ? ll_hdrlog_count(o, key) : -1;
}

int ll_tally_names_load(ll_tally *t, const cJSON *rows, char *err, size_t errlen) {
    const cJSON *o;
    if (rows && !cJSON_IsArray(rows)) {
        snprintf(err, errlen, "names: expected an array");
        return -1;
    }
    ll_histogram *like = ll_histogram_new(LL_SHARD_HIST_LOWEST, LL_SHARD_HIST_HIGHEST, NAME_SIG_DIGITS);
    int rc = 0;
    cJSON_ArrayForEach(o, rows) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(o, "duration");
        int64_t reqs = count_at(o, "reqs"), failed = count_at(o, "failed");
        char why[256] = "";
        ll_histogram *h = NULL;
        if (cJSON_IsString(dur)) h = ll_hdr_codec_decode(dur->valuestring, strlen(dur->valuestring), like, why, sizeof(why));
        if (!(cJSON_IsString(name) || cJSON_IsNull(name)) || reqs < 0 || failed < 0 || failed > reqs || (dur && !h)) {
            snprintf(err, errlen, "names: a malformed row%s%s", why[0] ? ": " : "", why);
            rc = -1;
            break;
        }
        add_row(cJSON_IsString(name) ? row(t, name->valuestring) : &table(t)[LL_TALLY_NAMES], reqs, failed, h);
        ll_histogram_free(h);
    }
    ll_histogram_free(like);
    return rc;
}
