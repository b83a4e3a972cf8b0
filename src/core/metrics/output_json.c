/* output_json.c -- `-o json=FILE`: k6's JSON lines, a "Metric" line the
 * first time a metric shows up, then one "Point" per sample with its time,
 * value and tags. A sample is a few copies: each tag set's JSON is made
 * once (output_text.h), the time's date and seconds once a second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "output.h"
#include "output_file.h"
#include "output_text.h"

typedef struct json_sink {
    ll_output_sink base;
    ll_outfile *f;
    unsigned char *declared; /* by metric id */
    int ndeclared;
    ll_buf line;
    ll_tagtext tags;         /* ,"tags":{...}}}\n by tag set */
    int64_t second;          /* of when: "YYYY-MM-DDTHH:MM:SS" */
    char when[32];
} json_sink;

static void add(json_sink *j, const char *s) { ll_buf_puts(&j->line, s); }

/* s as a JSON string, whole however long (a URL of any length). */
static void add_string(json_sink *j, const char *s) {
    add(j, "\"");
    const char *run = s;
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        ll_buf_append(&j->line, run, (size_t)(p - run));
        if (!c) break;
        char esc[8];
        if (c == '"' || c == '\\') snprintf(esc, sizeof(esc), "\\%c", c);
        else snprintf(esc, sizeof(esc), "\\u%04x", c);
        add(j, esc);
        run = p + 1;
    }
    add(j, "\"");
}

static void declare(json_sink *j, const ll_out_sample *x) {
    if (x->metric_id >= j->ndeclared) {
        int n = x->metric_id + 32;
        unsigned char *d = realloc(j->declared, (size_t)n);
        if (!d) return;
        memset(d + j->ndeclared, 0, (size_t)(n - j->ndeclared));
        j->declared = d;
        j->ndeclared = n;
    }
    if (j->declared[x->metric_id]) return;
    j->declared[x->metric_id] = 1;
    const ll_metric *m = x->metric;
    j->line.len = 0;
    add(j, "{\"type\":\"Metric\",\"data\":{\"name\":");
    add_string(j, m->name);
    add(j, ",\"type\":\"");
    add(j, ll_metric_type_name(m->type));
    add(j, "\",\"contains\":\"");
    add(j, ll_metric_contains_name(m->contains));
    add(j, "\",\"thresholds\":[");
    int first = 1;
    const ll_threshold_set *th = j->base.thresholds;
    for (int i = 0; th && i < th->n; i++) {
        if (th->items[i].metric_id != x->metric_id) continue;
        if (!first) add(j, ",");
        add_string(j, th->items[i].source);
        first = 0;
    }
    add(j, "],\"submetrics\":null},\"metric\":");
    add_string(j, m->name);
    add(j, "}\n");
    ll_output_file_write(j->f, j->line.p, j->line.len);
}

typedef struct tag_ctx {
    json_sink *j;
    int n;
} tag_ctx;

static void add_tag(void *ud, const char *key, const char *value) {
    tag_ctx *c = ud;
    if (c->n++) add(c->j, ",");
    add_string(c->j, key);
    add(c->j, ":");
    add_string(c->j, value);
}

/* The end of a Point line, x's tags: made the first time for each set. */
static void add_tags(json_sink *j, const ll_out_sample *x) {
    const ll_buf *t = ll_tagtext_get(&j->tags, x->tagset);
    if (t) {
        ll_buf_append(&j->line, t->p, t->len);
        return;
    }
    size_t at = j->line.len;
    add(j, ",\"tags\":{");
    tag_ctx c = {j, 0};
    ll_tagset_each(x->tagsets, x->tagset, add_tag, &c);
    add(j, "}}}\n");
    if (x->tagset >= 0) ll_buf_append(ll_tagtext_make(&j->tags, x->tagset), j->line.p + at, j->line.len - at);
}

/* "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" of unix_ns: the date part made once a second. */
static void add_time(json_sink *j, int64_t unix_ns) {
    int64_t secs = unix_ns / 1000000000, ns = unix_ns % 1000000000;
    if (!j->when[0] || secs != j->second) {
        time_t t = (time_t)secs;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(j->when, sizeof(j->when), "%Y-%m-%dT%H:%M:%S", &tm);
        j->second = secs;
    }
    char frac[12] = ".000000000Z";
    for (int i = 9; i >= 1 && ns > 0; i--, ns /= 10) frac[i] = (char)('0' + ns % 10);
    add(j, j->when);
    ll_buf_append(&j->line, frac, 11);
}

static int json_write(ll_output_sink *s, const ll_out_sample *x) {
    json_sink *j = (json_sink *)s;
    declare(j, x);
    char num[64];
    j->line.len = 0;
    add(j, "{\"metric\":");
    add_string(j, x->metric->name);
    add(j, ",\"type\":\"Point\",\"data\":{\"time\":\"");
    add_time(j, x->unix_ns);
    add(j, "\",\"value\":");
    if (!ll_text_milli(x->value, 0, num)) snprintf(num, sizeof(num), "%.17g", x->value);
    add(j, num);
    add_tags(j, x);
    if (ll_output_file_write(j->f, j->line.p, j->line.len) != 0)
        ll_output_file_failed(s->err, sizeof(s->err), ll_output_file_error(j->f));
    return 0;
}

static int json_flush(ll_output_sink *s) {
    json_sink *j = (json_sink *)s;
    if (ll_output_file_flush(j->f) == 0) return 0;
    ll_output_file_failed(s->err, sizeof(s->err), ll_output_file_error(j->f));
    return -1;
}

static void json_close(ll_output_sink *s, char *err, size_t errlen) {
    json_sink *j = (json_sink *)s;
    char why[128];
    if (ll_output_file_close(j->f, why, sizeof(why)) != 0) ll_output_file_failed(s->err, sizeof(s->err), why);
    snprintf(err, errlen, "%s", s->err);
    free(j->declared);
    ll_buf_free(&j->line);
    ll_tagtext_free(&j->tags);
    free(j);
}

ll_output_sink *ll_output_json_open(const char *path, char *err, size_t errlen) {
    json_sink *j = calloc(1, sizeof(*j));
    if (!j) return NULL;
    j->f = ll_output_file_open(path, err, errlen);
    if (!j->f) {
        free(j);
        return NULL;
    }
    j->base.write = json_write;
    j->base.flush = json_flush;
    j->base.close = json_close;
    return &j->base;
}
