/* output_csv.c -- `-o csv=FILE`: k6's CSV columns, one row per sample;
 * tags without a column of their own go to extra_tags as k=v&k=v. The
 * columns of each tag set are made once (output_text.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "output.h"
#include "output_file.h"
#include "output_text.h"

static const char *const COLUMNS[] = {"check", "error", "error_code", "expected_response", "group", "method",
                                      "name", "proto", "scenario", "service", "status", "subproto",
                                      "tls_version", "url"};
#define NCOLS (sizeof(COLUMNS) / sizeof(COLUMNS[0]))

typedef struct csv_sink {
    ll_output_sink base;
    ll_outfile *f;
    ll_buf extra; /* a row's extra_tags, whole however long */
    ll_buf row;
    ll_tagtext tails; /* ",check,...,url,extra_tags,\n" by tag set */
} csv_sink;

typedef struct row {
    const char *cols[NCOLS];
    ll_buf *extra;
} row;

static void to_row(void *ud, const char *key, const char *value) {
    row *r = ud;
    for (size_t i = 0; i < NCOLS; i++) {
        if (strcmp(COLUMNS[i], key) == 0) {
            r->cols[i] = value;
            return;
        }
    }
    if (r->extra->len) ll_buf_puts(r->extra, "&");
    ll_buf_puts(r->extra, key);
    ll_buf_puts(r->extra, "=");
    ll_buf_puts(r->extra, value);
}

/* A CSV field, quoted when it has a comma, quote or newline. */
static void field(ll_buf *b, const char *v) {
    ll_buf_append(b, ",", 1);
    if (!v) return;
    if (!strpbrk(v, ",\"\n\r")) {
        ll_buf_puts(b, v);
        return;
    }
    ll_buf_append(b, "\"", 1);
    for (const char *p = v; *p; p++) {
        if (*p == '"') ll_buf_append(b, "\"", 1);
        ll_buf_append(b, p, 1);
    }
    ll_buf_append(b, "\"", 1);
}

/* The end of a row, x's tags: made the first time for each set. */
static void add_tail(csv_sink *c, const ll_out_sample *x) {
    const ll_buf *t = ll_tagtext_get(&c->tails, x->tagset);
    if (t) {
        ll_buf_append(&c->row, t->p, t->len);
        return;
    }
    size_t at = c->row.len;
    row r;
    memset(r.cols, 0, sizeof(r.cols));
    r.extra = &c->extra;
    c->extra.len = 0;
    ll_buf_puts(&c->extra, ""); /* NUL-terminated even when empty */
    ll_tagset_each(x->tagsets, x->tagset, to_row, &r);
    for (size_t i = 0; i < NCOLS; i++) field(&c->row, r.cols[i]);
    field(&c->row, c->extra.p);
    ll_buf_append(&c->row, ",\n", 2); /* empty metadata column */
    if (x->tagset >= 0) ll_buf_append(ll_tagtext_make(&c->tails, x->tagset), c->row.p + at, c->row.len - at);
}

static int csv_write(ll_output_sink *s, const ll_out_sample *x) {
    csv_sink *c = (csv_sink *)s;
    char num[64];
    c->row.len = 0;
    ll_buf_puts(&c->row, x->metric->name);
    ll_buf_append(&c->row, ",", 1);
    ll_buf_append(&c->row, num, ll_text_int(x->unix_ns / 1000000000, num));
    ll_buf_append(&c->row, ",", 1);
    if (!ll_text_milli(x->value, 1, num)) snprintf(num, sizeof(num), "%.6f", x->value);
    ll_buf_puts(&c->row, num);
    add_tail(c, x);
    if (ll_output_file_write(c->f, c->row.p, c->row.len) != 0)
        ll_output_file_failed(s->err, sizeof(s->err), ll_output_file_error(c->f));
    return 0;
}

static int csv_flush(ll_output_sink *s) {
    csv_sink *c = (csv_sink *)s;
    if (ll_output_file_flush(c->f) == 0) return 0;
    ll_output_file_failed(s->err, sizeof(s->err), ll_output_file_error(c->f));
    return -1;
}

static void csv_close(ll_output_sink *s, char *err, size_t errlen) {
    csv_sink *c = (csv_sink *)s;
    char why[128];
    if (ll_output_file_close(c->f, why, sizeof(why)) != 0) ll_output_file_failed(s->err, sizeof(s->err), why);
    snprintf(err, errlen, "%s", s->err);
    ll_buf_free(&c->extra);
    ll_buf_free(&c->row);
    ll_tagtext_free(&c->tails);
    free(c);
}

ll_output_sink *ll_output_csv_open(const char *path, char *err, size_t errlen) {
    csv_sink *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->f = ll_output_file_open(path, err, errlen);
    if (!c->f) {
        free(c);
        return NULL;
    }
    ll_output_file_write(c->f, "metric_name,timestamp,metric_value", 34);
    for (size_t i = 0; i < NCOLS; i++) ll_output_file_printf(c->f, ",%s", COLUMNS[i]);
    ll_output_file_write(c->f, ",extra_tags,metadata\n", 21);
    c->base.write = csv_write;
    c->base.flush = csv_flush;
    c->base.close = csv_close;
    return &c->base;
}
