/* output_influxdb.c -- `-o influxdb=http://host:8086/db`: k6's InfluxDB v1
 * output. Samples become line protocol (measurement = metric name, the
 * sample's tags as tags except url, which is a field as in k6, value =
 * the value, nanosecond timestamps) and are POSTed to /write about once a
 * second by a sender thread (output_sender.h), so the output thread goes
 * on draining while InfluxDB takes a batch. A line is a few copies: each
 * metric's measurement and each tag set's tags made once (output_text.h).
 * The database is created at start, as k6 does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "buf.h"
#include "output.h"
#include "output_sender.h"
#include "output_text.h"

#define MAX_BATCH (8u << 20) /* send early past this many bytes */

typedef struct influx_sink {
    ll_output_sink base;
    ll_sender *sender;
    ll_buf batch;
    ll_tagtext names; /* measurement by metric id */
    ll_tagtext tags;  /* ",k=v,... url=\"...\"," by tag set */
    long failures;    /* reported so far */
} influx_sink;

static void add(ll_buf *b, const char *s, size_t n) { ll_buf_append(b, s, n); }

/* Appends s with a backslash before each character of special. */
static void add_escaped(ll_buf *b, const char *s, const char *special) {
    for (const char *p = s; *p; p++) {
        if (strchr(special, *p)) add(b, "\\", 1);
        add(b, p, 1);
    }
}

typedef struct tags_ctx {
    ll_buf *b;
    const char *url;
} tags_ctx;

static void add_tag(void *ud, const char *key, const char *value) {
    tags_ctx *c = ud;
    if (strcmp(key, "url") == 0) { /* a field, as k6's default TagsAsFields */
        c->url = value;
        return;
    }
    if (!*value) return; /* line protocol has no empty tag values */
    add(c->b, ",", 1);
    add_escaped(c->b, key, ", =");
    add(c->b, "=", 1);
    add_escaped(c->b, value, ", =");
}

/* x's measurement, then its tags up to the value field: each made once. */
static void add_head(influx_sink *f, const ll_out_sample *x) {
    const ll_buf *name = ll_tagtext_get(&f->names, x->metric_id);
    if (!name) {
        ll_buf *made = ll_tagtext_make(&f->names, x->metric_id);
        add_escaped(made, x->metric->name, ", ");
        name = made;
    }
    add(&f->batch, name->p, name->len);
    const ll_buf *t = x->tagset >= 0 ? ll_tagtext_get(&f->tags, x->tagset) : NULL;
    if (t) {
        add(&f->batch, t->p, t->len);
        return;
    }
    size_t at = f->batch.len;
    tags_ctx c = {&f->batch, NULL};
    ll_tagset_each(x->tagsets, x->tagset, add_tag, &c);
    add(&f->batch, " ", 1);
    if (c.url) {
        add(&f->batch, "url=\"", 5);
        add_escaped(&f->batch, c.url, "\"\\");
        add(&f->batch, "\",", 2);
    }
    if (x->tagset >= 0) add(ll_tagtext_make(&f->tags, x->tagset), f->batch.p + at, f->batch.len - at);
}

/* Hands the batch to the sender (or keeps it while the sender's queue is
 * full, waiting only when wait is set), then reports new failures. */
static int send_batch(ll_output_sink *s, int wait) {
    influx_sink *f = (influx_sink *)s;
    ll_sender_post(f->sender, &f->batch, wait);
    char why[200];
    long failures = ll_sender_failures(f->sender, why, sizeof(why));
    if (failures == f->failures) return 0;
    f->failures = failures;
    snprintf(s->err, sizeof(s->err), "%ld write(s) failed, the last: %s", failures, why);
    return -1;
}

static int influx_flush(ll_output_sink *s) { return send_batch(s, 0); }

static void influx_end(ll_output_sink *s) { ll_sender_end(((influx_sink *)s)->sender); }

static int influx_write(ll_output_sink *s, const ll_out_sample *x) {
    influx_sink *f = (influx_sink *)s;
    char num[96];
    add_head(f, x);
    add(&f->batch, "value=", 6);
    size_t n = ll_text_milli(x->value, 0, num);
    if (!n) n = (size_t)snprintf(num, sizeof(num), "%.17g", x->value);
    add(&f->batch, num, n);
    add(&f->batch, " ", 1);
    add(&f->batch, num, ll_text_int(x->unix_ns, num));
    add(&f->batch, "\n", 1);
    if (f->batch.len > MAX_BATCH) send_batch(s, 1);
    return 0;
}

static void influx_close(ll_output_sink *s, char *err, size_t errlen) {
    influx_sink *f = (influx_sink *)s;
    char why[200];
    if (f->sender) {
        long failures = ll_sender_close(f->sender, &f->batch, why, sizeof(why)); /* once what is queued is sent */
        if (failures != f->failures)
            snprintf(s->err, sizeof(s->err), "%ld write(s) failed, the last: %s", failures, why);
        f->sender = NULL;
    }
    snprintf(err, errlen, "%s", s->err);
    ll_buf_free(&f->batch);
    ll_tagtext_free(&f->names);
    ll_tagtext_free(&f->tags);
    free(f);
}
ll_output_sink *ll_output_influxdb_open(const char *url, const ll_output_http *http, char *err, size_t errlen) {
    /* http(s)://host[:port][/db]; db defaults to k6 */
    const char *hostpart = strstr(url, "://");
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        snprintf(err, errlen, "influxdb output: expected a URL such as http://127.0.0.1:8086/k6, got '%s'", url);
        return NULL;
    }
    const char *slash = strchr(hostpart + 3, '/');
    char base[512], db[256];
    snprintf(base, sizeof(base), "%.*s", slash ? (int)(slash - url) : (int)strlen(url), url);
    snprintf(db, sizeof(db), "%s", slash && slash[1] ? slash + 1 : "k6");
    if (strpbrk(db, "/?&#\" ")) {
        snprintf(err, errlen, "influxdb output: invalid database name '%s'", db);
        return NULL;
    }
    void *conn = http->open();
    if (!conn) {
        snprintf(err, errlen, "influxdb output: cannot make an HTTP client");
        return NULL;
    }
    char q[1024], why[200] = "";
    snprintf(q, sizeof(q), "%s/query?q=CREATE%%20DATABASE%%20%%22%s%%22", base, db);
    ll_output_post create = {q, NULL, NULL, 0, 0};
    long status = http->post(conn, &create, "", 0, why, sizeof(why));
    http->close(conn);
    if (status / 100 != 2) {
        snprintf(err, errlen, "influxdb output: cannot create database %s at %s: %s", db, base, why);
        return NULL;
    }
    snprintf(q, sizeof(q), "%s/write?db=%s&precision=ns", base, db);
    ll_output_post write = {q, NULL, NULL, 0, 0};
    influx_sink *f = ll_xcalloc(1, sizeof(*f));
    if (!(f->sender = ll_sender_open(http, &write))) {
        free(f);
        snprintf(err, errlen, "influxdb output: cannot make an HTTP client");
        return NULL;
    }
    f->base.write = influx_write;
    f->base.flush = influx_flush;
    f->base.end = influx_end;
    f->base.close = influx_close;
    return &f->base;
}
