/* output_influxdb.c -- `-o influxdb=http://host:8086/db`: k6's InfluxDB v1
 * output. Samples become line protocol (measurement = metric name, the
 * sample's tags as tags except url, which is a field as in k6, value =
 * the value, nanosecond timestamps) and are POSTed to /write about once a
 * second through the run's ll_output_http (blocking, on the output thread).
 * The database is created at start, as k6 does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "buf.h"
#include "output.h"

#define MAX_BATCH (8u << 20) /* send early past this many bytes */

typedef struct influx_sink {
    ll_output_sink base;
    const ll_output_http *http;
    void *conn;
    char write_url[1024];
    ll_buf batch;
    long failures;
} influx_sink;

static void add(influx_sink *f, const char *s, size_t n) { ll_buf_append(&f->batch, s, n); }

/* Appends s with a backslash before each character of special. */
static void add_escaped(influx_sink *f, const char *s, const char *special) {
    for (const char *p = s; *p; p++) {
        if (strchr(special, *p)) add(f, "\\", 1);
        add(f, p, 1);
    }
}

typedef struct tags_ctx {
    influx_sink *f;
    const char *url;
} tags_ctx;

static void add_tag(void *ud, const char *key, const char *value) {
    tags_ctx *c = ud;
    if (strcmp(key, "url") == 0) { /* a field, as k6's default TagsAsFields */
        c->url = value;
        return;
    }
    if (!*value) return; /* line protocol has no empty tag values */
    add(c->f, ",", 1);
    add_escaped(c->f, key, ", =");
    add(c->f, "=", 1);
    add_escaped(c->f, value, ", =");
}

static int influx_flush(ll_output_sink *s) {
    influx_sink *f = (influx_sink *)s;
    if (f->batch.len == 0) return 0;
    char why[200] = "";
    ll_output_post to = {f->write_url, NULL, NULL, 0};
    long status = f->http->post(f->conn, &to, f->batch.p, f->batch.len, why, sizeof(why));
    f->batch.len = 0;
    if (status / 100 == 2) return 0;
    f->failures++;
    snprintf(s->err, sizeof(s->err), "%ld write(s) failed, the last: %s", f->failures, why);
    return -1;
}

static int influx_write(ll_output_sink *s, const ll_out_sample *x) {
    influx_sink *f = (influx_sink *)s;
    char num[96];
    add_escaped(f, x->metric->name, ", ");
    tags_ctx c = {f, NULL};
    ll_tagset_each(x->tagsets, x->tagset, add_tag, &c);
    add(f, " ", 1);
    if (c.url) {
        add(f, "url=\"", 5);
        add_escaped(f, c.url, "\"\\");
        add(f, "\",", 2);
    }
    int n = snprintf(num, sizeof(num), "value=%.17g %lld\n", x->value, (long long)x->unix_ns);
    add(f, num, (size_t)n);
    if (f->batch.len > MAX_BATCH) influx_flush(s);
    return 0;
}

static void influx_close(ll_output_sink *s, char *err, size_t errlen) {
    influx_sink *f = (influx_sink *)s;
    snprintf(err, errlen, "%s", s->err);
    if (f->conn) f->http->close(f->conn);
    ll_buf_free(&f->batch);
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
    influx_sink *f = ll_xcalloc(1, sizeof(*f));
    f->http = http;
    if (!(f->conn = http->open())) {
        free(f);
        snprintf(err, errlen, "influxdb output: cannot make an HTTP client");
        return NULL;
    }
    char q[1024], why[200] = "";
    snprintf(q, sizeof(q), "%s/query?q=CREATE%%20DATABASE%%20%%22%s%%22", base, db);
    ll_output_post to = {q, NULL, NULL, 0};
    long status = http->post(f->conn, &to, "", 0, why, sizeof(why));
    if (status / 100 != 2) {
        snprintf(err, errlen, "influxdb output: cannot create database %s at %s: %s", db, base, why);
        char ignored[256];
        influx_close(&f->base, ignored, sizeof(ignored));
        return NULL;
    }
    snprintf(f->write_url, sizeof(f->write_url), "%s/write?db=%s&precision=ns", base, db);
    f->base.write = influx_write;
    f->base.flush = influx_flush;
    f->base.close = influx_close;
    return &f->base;
}
