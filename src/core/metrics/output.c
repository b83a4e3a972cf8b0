/* output.c -- per-shard sample rings and the output thread that drains them
 * into the sinks (see output.h). */
#include "output.h"
#include "xmalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop.h"

#define RING_SIZE 65536 /* samples per shard: 1.5 MiB */
#define DRAIN_EVERY_NS 10000000ull /* at 2M samples/s a worker's ring is a third full */
#define FLUSH_EVERY_NS 1000000000ull

typedef struct ring_entry {
    int32_t metric_id;
    int32_t tagset;
    double value;
    uint64_t mono_ns;
} ring_entry;

/* One shard's ring: the shard's thread writes at head, the output thread
 * reads at tail. */
typedef struct ring {
    ring_entry *slots;
    _Atomic uint64_t head, tail;
    _Atomic int64_t dropped;
    _Atomic int64_t folded; /* samples whose tag set was folded (tagset.h) */
    ll_tagset_cache cache; /* the producer's */
    int base_tagset;       /* samples without tags */
    ll_outputs *o;
} ring;

struct ll_outputs {
    ll_registry *reg;
    ll_tagsets tagsets;
    ll_output_sink **sinks;
    char **names;
    int nsinks;
    ring **rings;
    int nrings;
    pthread_t thread;
    int started;
    atomic_int stop;
    int64_t mono_to_unix_ns;
};

static void emit(void *ud, int id, double value, uint64_t now, ll_tag_source *t) {
    ring *r = ud;
    int tagset = r->base_tagset;
    if (t) {
        if (t->tagset < 0) t->tagset = ll_tagsets_intern(&r->o->tagsets, &r->cache, r->o->reg, t);
        tagset = t->tagset;
        if (tagset >= r->o->tagsets.max) atomic_fetch_add_explicit(&r->folded, 1, memory_order_relaxed);
    }
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail >= RING_SIZE || tagset < 0) {
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
        return;
    }
    r->slots[head & (RING_SIZE - 1)] = (ring_entry){id, tagset, value, now};
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

static int open_sink(ll_outputs *o, const char *spec, const ll_output_http *http, char *err, size_t errlen) {
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
    ll_output_sink *s = NULL;
    if (n == 26 && strncmp(spec, "experimental-prometheus-rw", n) == 0) {
        s = ll_output_promrw_open(o->reg, http, err, errlen); /* K6_PROMETHEUS_RW_*; as k6, no argument */
    } else if (!eq || eq == spec || !eq[1]) {
        snprintf(err, errlen, "invalid output '%s' (expected json=FILE, csv=FILE, influxdb=URL, hdrlog=FILE, html=FILE or "
                              "experimental-prometheus-rw)", spec);
        return -1;
    } else if (n == 4 && strncmp(spec, "json", n) == 0) {
        s = ll_output_json_open(eq + 1, err, errlen);
    } else if (n == 3 && strncmp(spec, "csv", n) == 0) {
        s = ll_output_csv_open(eq + 1, err, errlen);
    } else if (n == 8 && strncmp(spec, "influxdb", n) == 0) {
        s = ll_output_influxdb_open(eq + 1, http, err, errlen);
    } else {
        snprintf(err, errlen, "unknown output type '%.*s' in '%s' (expected json, csv, influxdb, hdrlog, html or "
                              "experimental-prometheus-rw)", (int)n, spec, spec);
        return -1;
    }
    if (!s) return -1;
    o->sinks = ll_xrealloc(o->sinks, (size_t)(o->nsinks + 1) * sizeof(*o->sinks));
    o->names = ll_xrealloc(o->names, (size_t)(o->nsinks + 1) * sizeof(*o->names));
    o->names[o->nsinks] = ll_xstrdup(spec);
    o->sinks[o->nsinks++] = s;
    return 0;
}

ll_outputs *ll_outputs_open(char **specs, int n, ll_registry *reg, const ll_threshold_set *th,
                            const ll_output_http *http, char *err, size_t errlen) {
    ll_outputs *o = ll_xcalloc(1, sizeof(*o));
    o->reg = reg;
    ll_tagsets_init(&o->tagsets);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    o->mono_to_unix_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (int64_t)ll_loop_now_ns();
    for (int i = 0; i < n; i++) {
        if (strncmp(specs[i], "hdrlog=", 7) == 0 || strncmp(specs[i], "html=", 5) == 0 ||
            strncmp(specs[i], "web-dashboard", 13) == 0)
            continue; /* the run writes them itself (run/results.c) */
        if (open_sink(o, specs[i], http, err, errlen) != 0) {
            ll_outputs_free(o);
            return NULL;
        }
        o->sinks[o->nsinks - 1]->thresholds = th;
    }
    return o;
}

void ll_outputs_attach(ll_outputs *o, ll_shard *shard) {
    ring *r = ll_xcalloc(1, sizeof(*r));
    o->rings = ll_xrealloc(o->rings, (size_t)(o->nrings + 1) * sizeof(*o->rings));
    r->slots = ll_xmalloc(RING_SIZE * sizeof(ring_entry));
    r->o = o;
    r->base_tagset = ll_tagsets_intern(&o->tagsets, &r->cache, o->reg, NULL);
    o->rings[o->nrings++] = r;
    shard->emit = emit;
    shard->emit_ud = r;
}

/* Hands every queued sample to the sinks; returns how many. */
static uint64_t drain(ll_outputs *o) {
    uint64_t n = 0;
    for (int i = 0; i < o->nrings; i++) {
        ring *r = o->rings[i];
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        for (; tail != head; tail++) {
            const ring_entry *e = &r->slots[tail & (RING_SIZE - 1)];
            ll_out_sample x = {e->metric_id, &o->reg->metrics[e->metric_id], e->value,
                               (int64_t)e->mono_ns + o->mono_to_unix_ns, &o->tagsets, e->tagset};
            for (int s = 0; s < o->nsinks; s++) o->sinks[s]->write(o->sinks[s], &x);
        }
        n += tail - atomic_load_explicit(&r->tail, memory_order_relaxed);
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
    return n;
}

static void flush_all(ll_outputs *o) {
    for (int s = 0; s < o->nsinks; s++) o->sinks[s]->flush(o->sinks[s]);
}

static void *thread_main(void *arg) {
    ll_outputs *o = arg;
    uint64_t last_flush = ll_loop_now_ns();
    uint64_t last = 0;
    while (!atomic_load(&o->stop)) {
        struct timespec ts = {0, (long)DRAIN_EVERY_NS};
        if (last < RING_SIZE / 4) nanosleep(&ts, NULL); /* busy rings: drain again at once */
        last = drain(o);
        if (ll_loop_now_ns() - last_flush >= FLUSH_EVERY_NS) {
            flush_all(o);
            last_flush = ll_loop_now_ns();
        }
    }
    return NULL;
}

int ll_outputs_start(ll_outputs *o) {
    if (pthread_create(&o->thread, NULL, thread_main, o) != 0) return -1;
    o->started = 1;
    return 0;
}

int64_t ll_outputs_stop(ll_outputs *o) {
    for (int s = 0; s < o->nsinks; s++)
        if (o->sinks[s]->end) o->sinks[s]->end(o->sinks[s]);
    if (o->started) {
        atomic_store(&o->stop, 1);
        pthread_join(o->thread, NULL);
        o->started = 0;
    }
    drain(o);
    flush_all(o);
    int64_t dropped = 0, folded = 0;
    for (int i = 0; i < o->nrings; i++) {
        dropped += atomic_load(&o->rings[i]->dropped);
        folded += atomic_load(&o->rings[i]->folded);
    }
    if (dropped > 0)
        fprintf(stderr, "luaload: warning: the outputs could not keep up: %lld samples dropped\n", (long long)dropped);
    if (folded > 0)
        fprintf(stderr, "luaload: warning: %lld samples went to the outputs with their url and name tags folded into "
                        "\"%s\" (more than %d distinct tag sets)\n", (long long)folded, LL_TAGSETS_OTHER,
                o->tagsets.max);
    for (int s = 0; s < o->nsinks; s++) { /* closed first: closing can fail too (a full disk) */
        char err[256];
        o->sinks[s]->close(o->sinks[s], err, sizeof(err));
        o->sinks[s] = NULL;
        if (err[0]) fprintf(stderr, "luaload: warning: output %s: %s\n", o->names[s], err);
    }
    return dropped;
}

void ll_outputs_free(ll_outputs *o) {
    if (!o) return;
    if (o->started) ll_outputs_stop(o);
    char ignored[256]; /* the run failed before its outputs started */
    for (int s = 0; s < o->nsinks; s++)
        if (o->sinks[s]) o->sinks[s]->close(o->sinks[s], ignored, sizeof(ignored));
    for (int s = 0; s < o->nsinks; s++) free(o->names[s]);
    free(o->sinks);
    free(o->names);
    for (int i = 0; i < o->nrings; i++) {
        ll_tagset_cache_free(&o->rings[i]->cache);
        free(o->rings[i]->slots);
        free(o->rings[i]);
    }
    free(o->rings);
    ll_tagsets_free(&o->tagsets);
    free(o);
}
