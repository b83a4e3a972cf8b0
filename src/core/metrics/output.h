/* output.h -- the -o/--out outputs: every sample streamed to JSON lines,
 * CSV or InfluxDB, off the workers' hot path.
 *
 * A shard with outputs attached pushes each sample (metric id, tag set id,
 * value, time: 24 bytes) into its own bounded single-producer ring; one
 * output thread drains the rings a few times a second and hands the samples
 * to the sinks. A ring that is full drops the sample and counts it: VUs
 * never wait for an output and memory stays bounded. */
#ifndef LL_OUTPUT_H
#define LL_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "tagset.h"
#include "threshold_set.h"

/* A sample as the sinks see it. */
typedef struct ll_out_sample {
    int metric_id;
    const ll_metric *metric;
    double value;              /* ms for time trends */
    int64_t unix_ns;
    const ll_tagsets *tagsets; /* read without a lock: sets never change */
    int tagset;
} ll_out_sample;

/* How an output reaches an HTTP server (InfluxDB): blocking POSTs on the
 * output thread. metrics/ has no HTTP library; the run passes http/'s
 * (poster.c). post returns the status (an error text in err unless 2xx),
 * or 0 with err set when the request failed. */
typedef struct ll_output_post {
    const char *url;
    const char *const *headers; /* "Name: value", NULL-terminated; NULL for none */
    const char *userpwd;        /* "user:password" for basic auth, or NULL */
    int insecure;               /* do not verify the server's certificate */
    long timeout_ms;            /* 0: the poster's own (10 s) */
} ll_output_post;

typedef struct ll_output_http {
    void *(*open)(void);
    long (*post)(void *conn, const ll_output_post *to, const char *body, size_t len, char *err, size_t errlen);
    void (*close)(void *conn);
} ll_output_http;

typedef struct ll_output_sink ll_output_sink;
struct ll_output_sink {
    int (*write)(ll_output_sink *s, const ll_out_sample *x);
    int (*flush)(ll_output_sink *s); /* about once a second, and at the end */
    /* The run is over (from another thread, while write may run): what
     * is left must not keep the end waiting long. NULL when nothing waits. */
    void (*end)(ll_output_sink *s);
    /* Closes and frees s; puts its error in err ("" when none): the first
     * one of the run, or of the close itself (a full disk often shows
     * only when the last buffer or gzip's trailer is written). */
    void (*close)(ll_output_sink *s, char *err, size_t errlen);
    const ll_threshold_set *thresholds;
    char err[256];                    /* the last error, reported once */
};

/* Sinks (output_json.c, output_csv.c, output_influxdb.c, output_promrw.c).
 * A path ending in .gz is written gzip-compressed. */
ll_output_sink *ll_output_json_open(const char *path, char *err, size_t errlen);
ll_output_sink *ll_output_csv_open(const char *path, char *err, size_t errlen);
ll_output_sink *ll_output_influxdb_open(const char *url, const ll_output_http *http, char *err, size_t errlen);
/* k6's experimental-prometheus-rw, configured by K6_PROMETHEUS_RW_* (output_promrw.c). */
ll_output_sink *ll_output_promrw_open(const ll_registry *reg, const ll_output_http *http, char *err, size_t errlen);

typedef struct ll_outputs ll_outputs;

/* Opens each "type=target" spec (json=FILE, csv=FILE, influxdb=URL; http
 * serves the influxdb output; hdrlog=FILE is skipped: the run writes it,
 * output_hdrlog.h). Returns NULL with a one-line reason in err. */
ll_outputs *ll_outputs_open(char **specs, int n, ll_registry *reg, const ll_threshold_set *th,
                            const ll_output_http *http, char *err, size_t errlen);
/* Makes shard send its samples to the outputs (before the run starts). */
void ll_outputs_attach(ll_outputs *o, ll_shard *shard);
int ll_outputs_start(ll_outputs *o);
/* Drains what is left, flushes and closes the sinks, reports drops and
 * write errors on stderr. Returns the number of samples dropped. */
int64_t ll_outputs_stop(ll_outputs *o);
void ll_outputs_free(ll_outputs *o);

#endif
