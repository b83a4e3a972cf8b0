/* report.c -- `--out html=FILE` (and luaload merge --out html=FILE): one HTML
 * file that opens in any browser without a network (see report.h).
 *
 * Owns: the report's data -- the run, k6's summary data, the per-second
 * series, the full http_req_duration histogram (its non-empty slots) and its
 * percentile spectrum -- as JSON, gzip-compressed and base64-encoded into the
 * page, which is built into luaload (report_assets.c, made by
 * cmake/embed.cmake from page/ and uPlot). */
#include "report.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base64.h"
#include "buf.h"
#include "xmalloc.h"

extern const char ll_report_page_html[], ll_report_page_css[], ll_report_page_js[], ll_report_uplot_css[],
    ll_report_uplot_js[];

/* The non-empty slots of h as [value ms, count], and its percentile
 * spectrum as [percentile, value ms] from 0 to 99.999 (finer near the top). */
static void histogram_json(cJSON *data, const ll_histogram *h) {
    cJSON *slots = cJSON_AddArrayToObject(data, "slots"), *spectrum = cJSON_AddArrayToObject(data, "spectrum");
    if (!h || h->total_count == 0) return;
    for (int32_t i = 0; i < h->counts_len; i++) {
        if (!h->counts[i]) continue;
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)ll_histogram_slot_value(h, i) / 1000.0));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)h->counts[i]));
        cJSON_AddItemToArray(slots, pair);
    }
    for (int k = 0; k <= 200; k++) {
        double p = 100.0 * (1.0 - pow(10.0, -(double)k / 40.0)); /* 0, ..., 99.999 */
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber(p));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)ll_histogram_percentile(h, p) / 1000.0));
        cJSON_AddItemToArray(spectrum, pair);
    }
}

/* text gzip-compressed (zlib's gzip wrapper), then base64. */
static char *gzip_base64(const char *text, char *err, size_t errlen) {
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
        snprintf(err, errlen, "zlib deflateInit2 failed");
        return NULL;
    }
    size_t n = strlen(text), cap = deflateBound(&z, (uLong)n);
    unsigned char *out = ll_xmalloc(cap);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t zlen = cap - z.avail_out;
    deflateEnd(&z);
    char *b64 = rc == Z_STREAM_END ? ll_base64_encode(out, zlen, NULL) : NULL;
    if (!b64) snprintf(err, errlen, "zlib deflate failed");
    free(out);
    return b64;
}

/* The page with each marker replaced: the CSS, uPlot, the page's JS and the
 * data. */
static int write_page(ll_buf *out, const char *b64) {
    static const struct {
        const char *marker;
        const char *text;
    } parts[] = {{"/*@UPLOT_CSS@*/", NULL}, {"/*@PAGE_CSS@*/", NULL}, {"@DATA@", NULL},
                 {"/*@UPLOT_JS@*/", NULL}, {"/*@PAGE_JS@*/", NULL}};
    const char *texts[] = {ll_report_uplot_css, ll_report_page_css, b64, ll_report_uplot_js, ll_report_page_js};
    const char *at = ll_report_page_html;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        const char *m = strstr(at, parts[i].marker);
        if (!m) return -1; /* the page and this file disagree: a build error */
        if (ll_buf_append(out, at, (size_t)(m - at)) < 0 || ll_buf_puts(out, texts[i]) < 0) return -1;
        at = m + strlen(parts[i].marker);
    }
    return ll_buf_puts(out, at) < 0 ? -1 : 0;
}

/* The figures of metric id for the scenarios' table: the metric itself with
 * one scenario, else its sub-metric {scenario:name} (NULL when none). */
static const ll_value *scenario_value(ll_registry *reg, const ll_shard *s, int id, const char *name, int n) {
    if (n == 1) return ll_shard_get(s, id);
    char full[512];
    snprintf(full, sizeof(full), "%s{scenario:%s}", reg->metrics[id].name, name);
    return ll_shard_get(s, ll_registry_find(reg, full));
}

cJSON *ll_report_scenarios(ll_registry *reg, const ll_shard *s, const char *const *names, int n, double elapsed) {
    static const int ids[4] = {LL_M_HTTP_REQS, LL_M_HTTP_REQ_DURATION, LL_M_HTTP_REQ_FAILED, LL_M_ITERATIONS};
    static const double pcts[3] = {50, 95, 99};
    static const char *const keys[3] = {"p50", "p95", "p99"};
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const ll_value *v[4];
        for (int k = 0; k < 4; k++) v[k] = scenario_value(reg, s, ids[k], names[i], n);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", names[i]);
        double reqs = v[0] ? v[0]->sum : 0;
        cJSON_AddNumberToObject(o, "reqs", reqs);
        cJSON_AddNumberToObject(o, "rps", elapsed > 0 ? reqs / elapsed : 0);
        cJSON_AddNumberToObject(o, "failed", v[2] && v[2]->total ? (double)v[2]->passes / (double)v[2]->total : 0);
        const ll_histogram *h = v[1] ? v[1]->hist : NULL;
        for (int k = 0; k < 3; k++)
            cJSON_AddNumberToObject(o, keys[k], h ? (double)ll_histogram_percentile(h, pcts[k]) / 1000.0 : 0);
        cJSON_AddNumberToObject(o, "iterations", v[3] ? v[3]->sum : 0);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

cJSON *ll_report_data(const cJSON *run, const cJSON *summary, const ll_timeline *tl, const ll_histogram *duration) {
    cJSON *data = cJSON_CreateObject();
    cJSON_AddItemToObject(data, "run", run ? cJSON_Duplicate(run, 1) : cJSON_CreateObject());
    cJSON_AddItemToObject(data, "summary", summary ? cJSON_Duplicate(summary, 1) : cJSON_CreateObject());
    cJSON_AddItemToObject(data, "series", tl ? ll_timeline_json(tl) : cJSON_CreateObject());
    histogram_json(data, duration);
    return data;
}

int ll_report_page(ll_buf *out, const cJSON *data, char *err, size_t errlen) {
    char *text = data ? cJSON_PrintUnformatted(data) : NULL;
    char *b64 = text ? gzip_base64(text, err, errlen) : NULL;
    if (!text) snprintf(err, errlen, "out of memory");
    free(text);
    int rc = b64 && write_page(out, b64) == 0 ? 0 : -1;
    if (b64 && rc) snprintf(err, errlen, "out of memory");
    free(b64);
    return rc;
}

int ll_report_write_data(const char *path, const cJSON *data, char *err, size_t errlen) {
    ll_buf page = {0};
    int rc = ll_report_page(&page, data, err, errlen);
    if (rc) {
        ll_buf_free(&page);
        return -1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(page.p, 1, page.len, f) == page.len;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "html: cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    ll_buf_free(&page);
    return ok ? 0 : -1;
}
