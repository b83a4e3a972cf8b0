/* output_influxdb.c -- `-o influxdb=http://host:8086/db`: k6's InfluxDB v1
 * output. Samples become line protocol (measurement = metric name, the
 * sample's tags as tags except url, which is a field as in k6, value =
 * the value, nanosecond timestamps) and are POSTed to /write about once a
 * second with libcurl, from the output thread. The database is created at
 * start, as k6 does. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "output.h"

#define MAX_BATCH (8u << 20) /* send early past this many bytes */

typedef struct influx_sink {
    ll_output_sink base;
    CURL *curl;
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

static CURLcode post(influx_sink *f, const char *url, const char *body, size_t len, long *status) {
    curl_easy_setopt(f->curl, CURLOPT_URL, url);
    curl_easy_setopt(f->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(f->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode rc = curl_easy_perform(f->curl);
    *status = 0;
    curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, status);
    return rc;
}

static int influx_flush(ll_output_sink *s) {
    influx_sink *f = (influx_sink *)s;
    if (f->batch.len == 0) return 0;
    long status;
    CURLcode rc = post(f, f->write_url, f->batch.p, f->batch.len, &status);
    f->batch.len = 0;
    if (rc == CURLE_OK && status / 100 == 2) return 0;
    f->failures++;
    snprintf(s->err, sizeof(s->err), "%ld write(s) failed, the last: %s", f->failures,
             rc != CURLE_OK ? curl_easy_strerror(rc) : "the server answered with an error status");
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

static void influx_close(ll_output_sink *s) {
    influx_sink *f = (influx_sink *)s;
    curl_easy_cleanup(f->curl);
    ll_buf_free(&f->batch);
    free(f);
}

static size_t discard(char *p, size_t size, size_t n, void *ud) {
    (void)p;
    (void)ud;
    return size * n;
}

ll_output_sink *ll_output_influxdb_open(const char *url, char *err, size_t errlen) {
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
    influx_sink *f = calloc(1, sizeof(*f));
    if (!f || !(f->curl = curl_easy_init())) {
        free(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    curl_easy_setopt(f->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(f->curl, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(f->curl, CURLOPT_PROXY, "");
    curl_easy_setopt(f->curl, CURLOPT_WRITEFUNCTION, discard);
    char q[1024];
    snprintf(q, sizeof(q), "%s/query?q=CREATE%%20DATABASE%%20%%22%s%%22", base, db);
    long status;
    CURLcode rc = post(f, q, "", 0, &status);
    if (rc != CURLE_OK || status / 100 != 2) {
        snprintf(err, errlen, "influxdb output: cannot create database %s at %s: %s", db, base,
                 rc != CURLE_OK ? curl_easy_strerror(rc) : "the server answered with an error status");
        influx_close(&f->base);
        return NULL;
    }
    snprintf(f->write_url, sizeof(f->write_url), "%s/write?db=%s&precision=ns", base, db);
    f->base.write = influx_write;
    f->base.flush = influx_flush;
    f->base.close = influx_close;
    return &f->base;
}
