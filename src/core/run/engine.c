/* engine.c -- one run, start to end: load the script in a lifecycle state
 * (init code, options), merge the config, refuse VU counts that cannot fit
 * (open files, memory), run setup(), start the workers with their share of
 * the VUs and iterations, wait, merge their shards, run teardown(), report
 * errors, print and export the summary, and choose the exit code. */
#include "engine.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "results.h"
#include "report.h"
#include "timeline.h"
#include "poster.h"
#include "progress.h"
#include "script.h"
#include "summary.h"
#include "transport.h"
#include "crash.h"
#include "lifecycle.h"
#include "options_json.h"
#include "api.h"
#include "buf.h"
#include "scenario_split.h"
#include "warnings.h"
#include "worker.h"
#include "xmalloc.h"
#include "duration.h"
#include "fdreserve.h"
#include "net.h"


static ll_run *g_run; /* for the signal handler */

/* The first SIGINT/SIGTERM stops the run (see run.h); a second one exits
 * at once, unless it came with the first: `timeout` and process managers
 * send theirs to the process and to its group. */
#define SIGNAL_REPEAT_NS 250000000ull

static void on_signal(int sig) {
    (void)sig;
    if (!g_run) return;
    uint64_t now = ll_loop_now_ns();
    if (atomic_load(&g_run->interrupt)) {
        if (now - atomic_load(&g_run->interrupt_ns) >= SIGNAL_REPEAT_NS) _exit(LL_EXIT_EXTERNAL_ABORT);
        return;
    }
    atomic_store(&g_run->interrupt_ns, now);
    atomic_store(&g_run->interrupt, 1);
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

/* The shipped lib/lua: next to the binary (build tree or install prefix),
 * then the source tree and install paths compiled in. */
const char *ll_engine_lib_dir(char *buf, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        const char *rel[] = {"/../share/luaload/lua", "/../lib/lua"}; /* installed, then the source tree */
        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
            char probe[4400];
            snprintf(buf, len, "%s%s", exe, rel[i]);
            snprintf(probe, sizeof(probe), "%s/luaload.lua", buf);
            if (file_exists(probe)) return buf;
        }
    }
    const char *fixed[] = {LUALOAD_SOURCE_LUA_DIR, LUALOAD_INSTALL_LUA_DIR};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        char probe[4400];
        snprintf(probe, sizeof(probe), "%s/luaload.lua", fixed[i]);
        if (file_exists(probe)) return fixed[i];
    }
    return LUALOAD_SOURCE_LUA_DIR;
}

/* ---- limits: VU counts that cannot fit are refused before the test ---- */

/* Memory per VU, for the estimate: about 16 KB was measured for an idle VU
 * (its coroutine in the worker's LuaJIT state and a keep-alive connection);
 * twice that, to be safe. */
#define ENGINE_VU_BYTES (32 * 1024)
/* Open files besides the VUs' connections: stdio, outputs, the script,
 * name resolution, the end's reserve (ENGINE_FD_END); and per worker (the
 * lifecycle one too) its epoll descriptor and libcurl's wake-up pair, with
 * room. */
#define ENGINE_FD_RESERVE 64
/* Kept aside from the start for the end of the run (fdreserve.h): the
 * summary export, handle_summary's files, the report, the outputs' last
 * flush; the workers close their connections as they finish, but one
 * given up on keeps its own. */
#define ENGINE_FD_END 16
#define ENGINE_FD_PER_WORKER 8

/* One VU setting of a scenario (startVUs, a stage target, ...), as a double
 * so that no value can overflow: 0 to INT_MAX, as VU ids are ints. */
static int engine_vus_field_ok(const ll_scenario *sc, const char *field, int stage, double v) {
    if (v >= 0 && v <= INT_MAX) return 1;
    char where[64];
    if (stage) snprintf(where, sizeof(where), "stages[%d].target", stage);
    else snprintf(where, sizeof(where), "%s", field);
    fprintf(stderr, "luaload: scenario %s: %s = %.15g VUs is out of range (at most 2147483647)\n", sc->name, where,
            v);
    return 0;
}

static int engine_scenario_vus_ok(const ll_scenario *sc) {
    switch (sc->executor) {
    case LL_EX_RAMPING_VUS:
        if (!engine_vus_field_ok(sc, "startVUs", 0, (double)sc->start_vus)) return 0;
        for (int i = 0; i < sc->nstages; i++)
            if (!engine_vus_field_ok(sc, NULL, i + 1, sc->stages[i].target)) return 0;
        return 1;
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE:
        return engine_vus_field_ok(sc, "preAllocatedVUs", 0, (double)sc->pre_allocated_vus) &&
               engine_vus_field_ok(sc, "maxVUs", 0, (double)sc->max_vus);
    default: return engine_vus_field_ok(sc, "vus", 0, (double)sc->vus);
    }
}

/* "30.5 GiB" */
static const char *engine_bytes(double b, char *buf, size_t len) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (b >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
    return buf;
}

/* MemAvailable from /proc/meminfo, else the physical memory; 0: unknown. */
static double engine_available_memory(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb) return (double)kb * 1024;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

static int engine_check_memory(int64_t vus) {
    double need = (double)vus * ENGINE_VU_BYTES, have = engine_available_memory();
    if (!have || need <= have) return 0;
    char a[32], b[32];
    fprintf(stderr, "luaload: %lld VUs need about %s of memory (about %d KiB each), but %s is available "
                    "(use fewer VUs, or more machines)\n",
            (long long)vus, engine_bytes(need, a, sizeof(a)), ENGINE_VU_BYTES / 1024, engine_bytes(have, b, sizeof(b)));
    return LL_EXIT_CONFIG;
}

/* The modules through which a VU can hold connections. */
static const char *const ENGINE_NET_MODULES[] = {"luaload.http"};

/* Raises the open-file limit to the hard limit and checks what the run
 * needs of it. The workers' own descriptors and the reserve must fit, or
 * the run is refused. A VU holds descriptors only through its Clients'
 * connections: quick mode's VUs hold one each (without --parallel), known
 * at the start, so too many are refused; a VU of a script that loaded no
 * network module (a sleep-only script) holds none; a script's VUs may hold
 * one per Client and host (HTTP/1.1, k6's HTTP/2), share a few multiplexed
 * ones, or make no request at all -- unknown until they run, so too many
 * get a warning, and the connections that cannot be made fail (counted at
 * the end: report_fd_refusals). */
static int engine_check_fd_limit(const ll_config *cfg, ll_worker *life, int64_t vus, int nworkers) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) getrlimit(RLIMIT_NOFILE, &rl); /* keep what is in force */
    }
    if (rl.rlim_cur == RLIM_INFINITY) return 0;
    int64_t limit = (int64_t)rl.rlim_cur, own = ENGINE_FD_RESERVE + (int64_t)ENGINE_FD_PER_WORKER * (nworkers + 1);
    if (own > limit) {
        fprintf(stderr, "luaload: %d worker%s need about %lld open files of their own, but the limit is %lld "
                        "(raise it with ulimit -n / LimitNOFILE, or use fewer --workers)\n",
                nworkers, nworkers == 1 ? "" : "s", (long long)own, (long long)limit);
        return LL_EXIT_CONFIG;
    }
    if (vus + own <= limit) return 0;
    if (cfg->quick_url && !cfg->quick.multiplex) {
        fprintf(stderr, "luaload: %lld VUs need about %lld open files, but the limit is %lld "
                        "(raise it with ulimit -n / LimitNOFILE, or use fewer VUs)\n",
                (long long)vus, (long long)(vus + own), (long long)limit);
        return LL_EXIT_CONFIG;
    }
    int net = cfg->quick_url != NULL; /* --parallel: shared HTTP/2 connections, or one each on HTTP/1.1 */
    for (size_t i = 0; i < sizeof(ENGINE_NET_MODULES) / sizeof(ENGINE_NET_MODULES[0]); i++)
        net |= ll_script_loaded(life, ENGINE_NET_MODULES[i]);
    if (!net) return 0;
    fprintf(stderr, "luaload: warning: %lld VUs may need about %lld open files if each holds a connection "
                    "(HTTP/1.1 keeps one per VU and Client; multiplexed Clients share theirs), but the limit is "
                    "%lld: connections past it will fail (raise it with ulimit -n / LimitNOFILE)\n",
            (long long)vus, (long long)(vus + own), (long long)limit);
    return 0;
}

/* The connections that could not be made for want of open files, with
 * the limit that stopped them and how to raise it. */
static void report_fd_refusals(void) {
    int64_t n = ll_net_fd_refusals();
    struct rlimit rl;
    if (!n || getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    fprintf(stderr, "luaload: %lld connection%s could not be made: the open-file limit (%llu) was reached "
                    "(raise it with ulimit -n / LimitNOFILE, use fewer VUs, or multiplexed Clients)\n",
            (long long)n, n == 1 ? "" : "s", (unsigned long long)rl.rlim_cur);
}

/* The most VUs the scenarios can have at once (each scenario's VU ids
 * start at its base), refusing any count that cannot fit; returns 0 or
 * LL_EXIT_CONFIG (error printed). */
static int engine_check_vus(const ll_config *cfg, uint64_t *id_base, int64_t *max_vus) {
    *max_vus = 0;
    for (int i = 0; i < cfg->scenarios.n; i++)
        if (!engine_scenario_vus_ok(&cfg->scenarios.items[i])) return LL_EXIT_CONFIG;
    for (int i = 0; i < cfg->scenarios.n; i++) {
        id_base[i] = (uint64_t)*max_vus;
        *max_vus += ll_scenario_max_vus(&cfg->scenarios.items[i]);
    }
    if (*max_vus <= INT_MAX) return engine_check_memory(*max_vus);
    fprintf(stderr, "luaload: the scenarios have %lld VUs in all, more than 2147483647\n", (long long)*max_vus);
    return LL_EXIT_CONFIG;
}

/* The worker threads: one per core (or --workers), no more than VUs. */
static int engine_nworkers(const ll_config *cfg, int64_t max_vus) {
    int n = cfg->workers > 0 ? cfg->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > max_vus) n = max_vus > 0 ? (int)max_vus : 1;
    return n;
}


/* luaload inspect: the options a run would use, as JSON on stdout (k6
 * inspect's); with --execution-requirements also maxVUs and totalDuration
 * (k6's) and each scenario's VUs, start, duration and end. */
static int print_inspect(const ll_config *cfg, const char *options_json, int64_t max_vus) {
    cJSON *o = cJSON_Parse(options_json);
    if (!o) return LL_EXIT_FAILURE;
    if (cfg->inspect == 2) {
        char d[64];
        uint64_t total = 0;
        cJSON *req = cJSON_AddObjectToObject(o, "executionRequirements");
        cJSON *scs = cJSON_AddObjectToObject(req, "scenarios");
        for (int i = 0; i < cfg->scenarios.n; i++) {
            const ll_scenario *sc = &cfg->scenarios.items[i];
            cJSON *e = cJSON_AddObjectToObject(scs, sc->name);
            cJSON_AddStringToObject(e, "executor", ll_scenario_executor_name(sc->executor));
            cJSON_AddNumberToObject(e, "maxVUs", (double)ll_scenario_max_vus(sc));
            ll_duration_format(sc->start_time_us, d, sizeof(d));
            cJSON_AddStringToObject(e, "startTime", d);
            ll_duration_format(ll_scenario_duration_us(sc), d, sizeof(d));
            cJSON_AddStringToObject(e, "duration", d);
            ll_duration_format(ll_scenario_end_us(sc), d, sizeof(d));
            cJSON_AddStringToObject(e, "end", d); /* its start, duration and graceful stop */
            if (ll_scenario_end_us(sc) > total) total = ll_scenario_end_us(sc);
        }
        ll_duration_format(total, d, sizeof(d));
        cJSON_AddNumberToObject(req, "maxVUs", (double)max_vus);
        cJSON_AddStringToObject(req, "totalDuration", d);
        cJSON_AddNumberToObject(o, "maxVUs", (double)max_vus);
        cJSON_AddStringToObject(o, "totalDuration", d);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return LL_EXIT_FAILURE;
    puts(text);
    free(text);
    return 0;
}

static void print_banner(const ll_config *cfg, int nworkers) {
    printf("\n  luaload v%s\n\n", LUALOAD_VERSION);
    printf("     script: %s (%d worker%s)\n", cfg->script_path ? cfg->script_path : cfg->quick_url, nworkers,
           nworkers == 1 ? "" : "s");
    /* which transport serves a Client's requests (ll_transport_pick) */
    if (cfg->transport) printf("  transport: %s for every request (--transport or LUALOAD_TRANSPORT)\n", cfg->transport->name);
    else printf("  transport: native for HTTP/1.1 and HTTP/2, curl for HTTP/3 and proxies\n");
    if (cfg->dns.ttl_set || cfg->dns.select_set || cfg->dns.policy_set) {
        char dns[128];
        ll_dns_config_format(&cfg->dns, dns, sizeof(dns));
        printf("        dns: %s\n", dns);
    }
    if (cfg->local_ips_text) printf("  local IPs: %s (one per VU, in turn)\n", cfg->local_ips_text);
    if (cfg->seed_set) printf("       seed: %llu\n", (unsigned long long)cfg->seed);
    else printf("       seed: %llu (random; --seed %llu to repeat)\n", (unsigned long long)cfg->seed,
                (unsigned long long)cfg->seed);
    if (cfg->segment_set || cfg->sequence_set) {
        char seg[128], seq[512];
        ll_segment_format(cfg->segment_set ? &cfg->segment : NULL, seg, sizeof(seg));
        ll_segment_seq_format(&cfg->sequence, seq, sizeof(seq));
        printf("    segment: %s%s%s (this instance's part of the test)\n", seg, *seq ? " of " : "", seq);
    }
    for (int i = 0; i < cfg->scenarios.n; i++) {
        const ll_scenario *sc = &cfg->scenarios.items[i];
        char shape[256];
        ll_progress_describe(sc, shape, sizeof(shape));
        printf("%s%s: %s", i == 0 ? "  scenarios: " : "             ", sc->name, shape);
        if (sc->start_time_us) printf(", starting at %.6gs", (double)sc->start_time_us / 1e6);
        if (sc->none) printf(" -- none of it in this segment: this instance runs nothing of it");
        printf("\n");
    }
    printf("\n");
    fflush(stdout);
}

/* Prints each distinct script error once with how often it happened, in
 * the order they first appeared, the first ENGINE_SCRIPT_ERRORS_SHOWN of
 * them (workers that were given up on are skipped: they may still write). */
#define ENGINE_SCRIPT_ERRORS_SHOWN 20

static void report_errors(ll_worker *workers, int n) {
    ll_errors all;
    memset(&all, 0, sizeof(all));
    for (int i = 0; i < n; i++)
        if (!workers[i].abandoned) ll_errors_merge(&all, &workers[i].errors);
    int64_t more = all.other;
    for (int e = 0; e < all.n; e++) {
        if (e >= ENGINE_SCRIPT_ERRORS_SHOWN) {
            more += all.items[e].count;
            continue;
        }
        fprintf(stderr, "luaload: script error in %lld iteration%s: %s\n", (long long)all.items[e].count,
                all.items[e].count == 1 ? "" : "s", all.items[e].msg);
    }
    if (more)
        fprintf(stderr, "luaload: script errors with other messages in %lld more iteration%s\n", (long long)more,
                more == 1 ? "" : "s");
    ll_errors_free(&all);
}

/* The failed requests by message, merged over the workers (and the
 * lifecycle worker's setup and teardown; life NULL: it was lost), the
 * most frequent first; nothing when no request failed. */
#define ENGINE_TOP_ERRORS 5

static void report_http_errors(ll_worker *workers, int n, const ll_worker *life) {
    ll_errors all;
    memset(&all, 0, sizeof(all));
    for (int i = 0; workers && i < n; i++)
        if (!workers[i].abandoned) ll_errors_merge(&all, &workers[i].http_errors);
    if (life) ll_errors_merge(&all, &life->http_errors);
    ll_errors_sort(&all);
    if (all.n > ENGINE_TOP_ERRORS)
        fprintf(stderr, "luaload: failed requests by error (top %d of %d):\n", ENGINE_TOP_ERRORS, all.n);
    else if (all.n || all.other)
        fprintf(stderr, "luaload: failed requests by error:\n");
    for (int i = 0; i < all.n && i < ENGINE_TOP_ERRORS; i++)
        fprintf(stderr, "luaload:   %lld × %s\n", (long long)all.items[i].count, all.items[i].msg);
    if (all.other)
        fprintf(stderr, "luaload:   %lld × other errors (a worker keeps %d distinct messages)\n", (long long)all.other,
                LL_WORKER_HTTP_ERRORS_MAX);
    ll_errors_free(&all);
}

/* When the last scenario ends as planned, its gracefulStop included. */
static uint64_t planned_end_ns(const ll_config *cfg, uint64_t t0, uint64_t *max_grace_ns) {
    uint64_t end = 0, grace = 0;
    for (int i = 0; i < cfg->scenarios.n; i++) {
        const ll_scenario *sc = &cfg->scenarios.items[i];
        uint64_t e = ll_scenario_end_us(sc);
        if (e > end) end = e;
        if (sc->graceful_stop_us > grace) grace = sc->graceful_stop_us;
    }
    *max_grace_ns = grace * 1000;
    return t0 + end * 1000;
}

/* Gives up on the workers whose thread crashed (crash.c), at once: their
 * metrics are those of their last snapshot. */
static void abandon_crashed(ll_run *run, ll_worker *workers, int n) {
    for (int i = 0; i < n; i++) {
        ll_worker *w = &workers[i];
        if (w->finished || w->abandoned || !atomic_load(&w->crashed)) continue;
        w->abandoned = 1;
        run->finished++;
        char why[400];
        fprintf(stderr, "luaload: %s\n", ll_crash_describe(w, why, sizeof(why)));
    }
}

/* Gives up on the workers that did not stop by their due time: their Lua
 * code never yields. Their metrics are those of their last snapshot. */
static void abandon_stuck(ll_run *run, ll_worker *workers, int n) {
    abandon_crashed(run, workers, n);
    for (int i = 0; i < n; i++) {
        ll_worker *w = &workers[i];
        if (w->finished || w->abandoned) continue;
        w->abandoned = 1;
        run->finished++;
        int64_t busy = 0;
        for (int e = 0; e < w->nexecutors; e++) busy += atomic_load(&w->executors[e].active_vus);
        fprintf(stderr,
                "luaload: worker %d did not stop: its Lua code does not yield (a loop with no request or sleep?); "
                "%lld iteration%s abandoned, its metrics are from its last snapshot (up to 1 s old)\n",
                i, (long long)busy, busy == 1 ? "" : "s");
    }
}

/* Waits for the workers; every second meanwhile: samples the vus gauges,
 * redraws the progress lines, and (with thresholds) merges the workers'
 * published snapshots and evaluates the thresholds, stopping the run when
 * one with abortOnFail fails. Workers still running once they are due to
 * have stopped (the planned end, or sooner after a signal, abort() or a
 * failed abortOnFail threshold) are asked to stop their Lua code, then
 * given up on (abandoned). */
static void watch_workers(ll_run *run, ll_worker *workers, int n, ll_worker *life, ll_config *cfg, uint64_t t0,
                          const ll_mode_ops *mode, ll_mode *ms, ll_results *results) {
    ll_shard *snap = cfg->thresholds.n || ll_results_wanted(results) ? ll_shard_new(run->reg) : NULL;
    int progress = !cfg->quiet && isatty(2), asked = 0;
    uint64_t max_grace, due = planned_end_ns(cfg, t0, &max_grace);
    int seen_abort = 0, seen_threshold = 0;
    ll_progress_sample(life->shard, &cfg->scenarios, workers, n, t0, 1);
    uint64_t next = t0 + 1000000000ull;
    pthread_mutex_lock(&run->mu);
    while (run->finished < n) {
        struct timespec until = ll_loop_deadline(CLOCK_REALTIME, 100000000ull);
        pthread_cond_timedwait(&run->cv, &run->mu, &until);
        if (run->finished >= n) break;
        uint64_t now = ll_loop_now_ns();
        if (atomic_load(&run->crashed)) { /* a crashed worker is parked for good: the others stop now */
            abandon_crashed(run, workers, n);
            if (now < due) due = now;
            if (run->finished >= n) break;
        }
        if (!seen_abort && atomic_load(&run->aborted)) {
            seen_abort = 1;
            if (now < due) due = now;
        }
        if (!seen_threshold && atomic_load(&run->threshold_abort)) {
            seen_threshold = 1;
            if (now + max_grace < due) due = now + max_grace;
        }
        uint64_t by = ll_lifecycle_due(run, due, LL_RUN_SIGNAL_GRACE_NS);
        if (!asked && now >= by + LL_LIFECYCLE_STOP_AFTER_NS) {
            for (int i = 0; i < n; i++) {
                if (workers[i].finished) continue;
                atomic_store(&workers[i].halted, 1);
                ll_script_stop(&workers[i]);
            }
            asked = 1;
        }
        if (now >= by + LL_LIFECYCLE_GIVE_UP_AFTER_NS) {
            abandon_stuck(run, workers, n);
            break;
        }
        if (ms) mode->tick(ms, workers, n, t0, now);
        if (now < next) continue;
        while (next <= now) next += 1000000000ull; /* on the grid of whole seconds */
        pthread_mutex_unlock(&run->mu);
        if (ms) mode->second(ms, workers, n, now);
        ll_progress_sample(life->shard, &cfg->scenarios, workers, n, now, 0);
        if (progress) ll_progress_draw(&cfg->scenarios, workers, n, t0, now, 0);
        if (snap) {
            ll_shard_reset(snap);
            uint64_t upto = now; /* the snapshots hold the samples up to the oldest running one's time */
            ll_tally tally = {0};
            for (int i = 0; i < n; i++) {
                uint64_t at = ll_worker_read_published(&workers[i], snap);
                if (ll_results_wanted(results)) ll_worker_read_tally(&workers[i], &tally);
                if (at != UINT64_MAX && (at ? at : t0) < upto) upto = at ? at : t0;
            }
            ll_shard_merge(snap, life->shard);
            int abort = 0;
            double elapsed = (double)(now - t0) / 1e9;
            ll_results_tick(results, snap, (double)(upto - t0) / 1e9, &tally);
            ll_tally_free(&tally);
            ll_threshold_set_evaluate(&cfg->thresholds, run->reg, snap, elapsed, &abort);
            if (abort && !atomic_exchange(&run->threshold_abort, 1))
                fprintf(stderr, "luaload: a threshold with abortOnFail failed after %.1fs: stopping the test\n",
                        elapsed);
        }
        pthread_mutex_lock(&run->mu);
    }
    pthread_mutex_unlock(&run->mu);
    ll_shard_free(snap);
    for (int i = 0; i < n; i++) {
        if (workers[i].abandoned) {
            pthread_detach(workers[i].thread);
        } else {
            ll_worker_join(&workers[i]);
            ll_script_collect(&workers[i]);
        }
    }
    if (progress) ll_progress_draw(&cfg->scenarios, workers, n, t0, ll_loop_now_ns(), 1);
}

/* One line per failed threshold, on stderr, for CI logs. */
static void report_thresholds(const ll_threshold_set *set, const ll_registry *reg) {
    for (int i = 0; i < set->n; i++) {
        const ll_threshold *t = &set->items[i];
        if (!t->failed) continue;
        char agg[32];
        fprintf(stderr, "luaload: threshold failed: %s '%s' (%s=%g)\n", reg->metrics[t->metric_id].name,
                t->source, ll_threshold_agg_name(&t->expr, agg, sizeof(agg)), t->value);
    }
}

/* Every scenario's exec function must exist (checked in the lifecycle state,
 * before setup runs). */
static int check_exec_functions(ll_worker *life, const ll_config *cfg) {
    for (int i = 0; i < cfg->scenarios.n; i++) {
        const ll_scenario *sc = &cfg->scenarios.items[i];
        if (ll_script_function(life, sc->exec, NULL, NULL)) continue;
        if (strcmp(sc->name, "default") == 0 && cfg->scenarios.n == 1)
            fprintf(stderr, "luaload: %s defines no function %s() to run as the iteration\n",
                    cfg->script_path ? cfg->script_path : "the script", sc->exec);
        else
            fprintf(stderr, "luaload: scenario %s: the script defines no function %s() (exec)\n", sc->name, sc->exec);
        return LL_EXIT_SCRIPT;
    }
    return 0;
}

/* ---- lifecycle steps (run on their own thread: lifecycle.c) ---- */

typedef struct life_step {
    ll_worker *w;
    ll_run *run;
    const char *fname, *data;
    char **out;
    uint64_t timeout_us;
    int timeout_rc;
    const cJSON *summary;
} life_step;

static int step_init(void *p) {
    life_step *a = p;
    return ll_worker_init(a->w, a->run, -1);
}

static int step_call(void *p) {
    life_step *a = p;
    return ll_worker_call(a->w, a->fname, a->data, a->out, a->timeout_us, a->timeout_rc);
}

static int step_summary(void *p) {
    life_step *a = p;
    return ll_script_summary(a->w, a->summary);
}

/* --start-at: sleeps until the Unix time t (at once when it is past). 0,
 * or -1 when interrupted while waiting. */
static int wait_until(ll_run *run, double t) {
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double left = t - ((double)now.tv_sec + (double)now.tv_nsec / 1e9);
        if (left <= 0) return 0;
        if (atomic_load(&run->interrupt)) return -1;
        struct timespec ts = {0, left < 0.01 ? (long)(left * 1e9) : 10000000};
        nanosleep(&ts, NULL);
    }
}

/* --setup-data FILE: setup()'s result as --setup-data-out wrote it (JSON;
 * "null" when setup() returned nothing). 0, or LL_EXIT_CONFIG after a
 * one-line error. */
static int read_setup_data(const char *path, char **out) {
    ll_buf text = {0};
    if (ll_buf_read_file(&text, path) != 0) {
        fprintf(stderr, "luaload: --setup-data %s: %s\n", path, strerror(errno));
        ll_buf_free(&text);
        return LL_EXIT_CONFIG;
    }
    cJSON *j = cJSON_Parse(text.p ? text.p : "");
    if (!j) {
        fprintf(stderr, "luaload: --setup-data %s: not JSON (expected what --setup-data-out wrote)\n", path);
        ll_buf_free(&text);
        return LL_EXIT_CONFIG;
    }
    int none = cJSON_IsNull(j);
    cJSON_Delete(j);
    if (none) ll_buf_free(&text);
    *out = text.p;
    return 0;
}

/* --setup-data-out FILE: setup()'s result as JSON, "null" when none. */
static int write_setup_data(const char *path, const char *json) {
    FILE *f = fopen(path, "wb");
    int ok = f && fputs(json ? json : "null", f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f) != 0) ok = 0;
    if (ok) return 0;
    fprintf(stderr, "luaload: --setup-data-out %s: %s\n", path, strerror(errno));
    return LL_EXIT_FAILURE;
}

/* Runs fn(a) on the lifecycle worker with a's timeout and the signal budget
 * signal_ns. Returns what fn returned, or -1 when it was given up on: the
 * lifecycle worker is then lost (*lost). */
static int life_run(ll_run *run, ll_worker *life, int *lost, ll_lifecycle_fn *fn, const life_step *a,
                    uint64_t signal_ns) {
    life_step *held = ll_xmalloc(sizeof(*held)); /* the thread's, if it is left running */
    *held = *a;
    uint64_t deadline = a->timeout_us ? ll_loop_now_ns() + a->timeout_us * 1000 : 0;
    int rc;
    if (!ll_lifecycle_run(run, life, fn, held, deadline, signal_ns, &rc)) {
        *lost = 1;
        if (atomic_load(&life->crashed)) {
            char why[400];
            fprintf(stderr, "luaload: %s\n", ll_crash_describe(life, why, sizeof(why)));
            return LL_EXIT_CRASH;
        }
        return -1;
    }
    free(held);
    return rc;
}

/* The summary from a state without the script, when the script's is lost. */
static int bare_summary(ll_run *run, const cJSON *data) {
    ll_worker w;
    memset(&w, 0, sizeof(w));
    w.run = run;
    int rc = ll_script_open_bare(&w) == 0 ? ll_script_summary(&w, data) : -1;
    if (rc) fprintf(stderr, "luaload: cannot print the summary: %s\n", w.errmsg);
    ll_script_close(&w);
    return rc;
}

/* Whether a thread was given up on: a worker, or the lifecycle (life_lost). */
static int any_abandoned(const ll_worker *workers, int n, int life_lost) {
    int any = life_lost;
    for (int i = 0; workers && i < n; i++) any |= workers[i].abandoned;
    return any;
}

int ll_engine_run(ll_config *cfg, const ll_mode_ops *mode) {
    char libbuf[4200], err[1024];
    ll_run run;
    ll_segment_tuple tuple;
    ll_api *api = NULL;
    memset(&run, 0, sizeof(run));
    memset(&tuple, 0, sizeof(tuple));
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    run.script_path = cfg->script_path;
    run.chunkname = "=quick";
    run.lib_dir = ll_engine_lib_dir(libbuf, sizeof(libbuf));
    run.env = cfg->env;
    run.nenv = cfg->nenv;
    run.scenarios = &cfg->scenarios;
    if (!cfg->seed_set) cfg->seed = ll_random_entropy_seed(); /* LUALOAD_SEED or options.seed may replace it */
    run.seed = &cfg->seed;
    run.reg = ll_registry_new(3);
    if (run.reg) { /* luaload's own (worker.c's probe), before the thresholds name them */
        run.m_worker_busy = ll_registry_metric(run.reg, "luaload_worker_busy", LL_TREND, LL_CONTAINS_DEFAULT);
        run.m_loop_lag = ll_registry_metric(run.reg, "luaload_loop_lag", LL_TREND, LL_CONTAINS_TIME);
    }
    run.transport = cfg->transport;
    run.dns = &cfg->dns;             /* final once the options are read, before */
    run.local_ips = &cfg->local_ips; /* any request or VU */
    run.publish = 1; /* snapshots for thresholds and for workers given up on */
    ll_mode *ms = NULL; /* the mode's state (quick mode), NULL: the script's iterations */

    int rc = 0, nworkers = 0, life_lost = 0, setup_done = 0, outputs_stopped = 0;
    ll_worker life, *workers = NULL;
    ll_outputs *outputs = NULL;
    ll_results *results = NULL; /* --out hdrlog, --out html */
    int other_outputs = 0;
    memset(&life, 0, sizeof(life));
    ll_shard *total = NULL;
    cJSON *data = NULL;
    char *teardown_out = NULL;
    double elapsed = 0;
    life_step step = {&life, &run, NULL, NULL, NULL, 0, 0, NULL};
    ll_fdreserve end_fds;
    ll_fdreserve_take(&end_fds, ENGINE_FD_END);

    g_run = &run;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    ll_crash_install();

    if (!run.reg) {
        fprintf(stderr, "luaload: out of memory\n");
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    if (mode && (rc = mode->open(&ms, cfg, &run.interrupt, err, sizeof(err))) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        goto done;
    }
    if (ms) {
        run.script_source = mode->script(ms);
        run.mode = ms;
        run.iterate = mode->iterate;
    }
    run.verbose = cfg->verbose;
    if (cfg->console_output && !cfg->inspect && !(run.console = fopen(cfg->console_output, "w"))) {
        fprintf(stderr, "luaload: --console-output: cannot write %s: %s\n", cfg->console_output, strerror(errno));
        rc = LL_EXIT_CONFIG;
        goto done;
    }
    if (cfg->script_path && !file_exists(cfg->script_path)) {
        fprintf(stderr, "luaload: cannot read script %s: %s\n", cfg->script_path, strerror(errno));
        rc = LL_EXIT_SCRIPT;
        goto done;
    }
    rc = cfg->inspect ? 0 : ll_results_open(&results, cfg, run.reg, &other_outputs); /* inspect writes nothing */
    if (rc) goto done;
    run.tally_names = ll_results_wanted(results);
    rc = life_run(&run, &life, &life_lost, step_init, &step, 0);
    if (atomic_load(&run.interrupt)) {
        fprintf(stderr, "luaload: interrupted by a signal while running the script's init code\n");
        rc = LL_EXIT_EXTERNAL_ABORT;
        goto summarize;
    }
    if (rc) {
        if (!atomic_load(&run.aborted) && !life_lost) fprintf(stderr, "luaload: %s\n", life.errmsg);
        goto done;
    }
    rc = ll_config_read_env(cfg); /* prints its own error */
    if (rc) goto done;
    run.transport = cfg->transport; /* LUALOAD_TRANSPORT comes with the environment, after --transport */
    rc = ll_script_read_options(&life, cfg, run.reg, err, sizeof(err));
    if (!rc) rc = ll_config_add_cli_thresholds(cfg, run.reg, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "luaload: %s\n", err);
        goto done;
    }
    /* k6 shows this sub-metric in every summary */
    const char *er_key = "expected_response", *er_value = "true";
    if (ll_registry_submetric(run.reg, LL_M_HTTP_REQ_DURATION, &er_key, &er_value, 1) < 0) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    if (other_outputs) {
        outputs = ll_outputs_open(cfg->outputs, cfg->noutputs, run.reg, &cfg->thresholds, &ll_poster_http, err,
                                  sizeof(err));
        if (outputs) ll_outputs_attach(outputs, life.shard);
        if (!outputs || ll_outputs_start(outputs) != 0) {
            fprintf(stderr, "luaload: %s\n", outputs ? "cannot start the outputs" : err);
            rc = LL_EXIT_CONFIG;
            goto done;
        }
    }
    if (ll_config_default_scenario(cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        rc = LL_EXIT_CONFIG;
        goto done;
    }
    rc = check_exec_functions(&life, cfg);
    if (rc) goto done;
    rc = ll_results_identify(results, cfg);
    if (rc) goto done;
    if (cfg->segment_set || cfg->sequence_set) { /* one part of a test split over instances */
        if (ll_segment_tuple_init(&tuple, cfg->segment_set ? &cfg->segment : NULL,
                                  cfg->sequence.n ? &cfg->sequence : NULL, err, sizeof(err)) != 0 ||
            ll_scenario_split(&cfg->scenarios, &tuple, &run.stripes, err, sizeof(err)) != 0) {
            fprintf(stderr, "luaload: %s\n", err);
            rc = LL_EXIT_CONFIG;
            goto done;
        }
        run.tuple = &tuple;
    }
    int64_t max_vus = 0;
    run.vu_id_base = ll_xcalloc(cfg->scenarios.n > 0 ? (size_t)cfg->scenarios.n : 1, sizeof(uint64_t));
    run.scenario_iters = ll_xcalloc(cfg->scenarios.n > 0 ? (size_t)cfg->scenarios.n : 1, sizeof(*run.scenario_iters));
    rc = engine_check_vus(cfg, run.vu_id_base, &max_vus);
    if (!rc && !cfg->setup_only && !cfg->inspect) /* no VU made yet */
        rc = engine_check_fd_limit(cfg, &life, max_vus, engine_nworkers(cfg, max_vus));
    if (rc) goto done;
    if (!cfg->setup_timeout_set) cfg->setup_timeout_us = 60000000; /* k6's defaults */
    if (!cfg->teardown_timeout_set) cfg->teardown_timeout_us = 60000000;
    run.options_json = ll_options_json(cfg);
    if (!run.options_json) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    if (cfg->inspect) {
        rc = print_inspect(cfg, run.options_json, max_vus);
        goto done;
    }
    nworkers = engine_nworkers(cfg, max_vus);
    run.nworkers = nworkers;
    if (!cfg->quiet) print_banner(cfg, nworkers);
    if (cfg->paused || cfg->address) {
        const char *addr = cfg->address ? cfg->address : "127.0.0.1:6565";
        api = ll_api_start(addr, &run.interrupt, &run.marked_failed, cfg->paused, err, sizeof(err));
        if (!api) {
            fprintf(stderr, "luaload: %s\n", err);
            rc = LL_EXIT_CONFIG;
            goto done;
        }
        ll_api_set_vus_max(api, max_vus);
        if (cfg->paused) {
            fprintf(stderr, "luaload: paused: waiting for PATCH http://%s/v1/status {\"data\":{\"attributes\":"
                            "{\"paused\":false}}}\n", addr);
            if (ll_api_wait_resume(api) != 0) {
                rc = LL_EXIT_EXTERNAL_ABORT;
                goto done;
            }
        }
    }
    if (cfg->start_at_set && wait_until(&run, cfg->start_at) != 0) {
        rc = LL_EXIT_EXTERNAL_ABORT;
        goto done;
    }
    ll_api_set_status(api, LL_API_STATUS_SETUP);
    if (cfg->setup_data_in) { /* setup() ran once elsewhere (after this part was started, maybe): its result is here */
        rc = read_setup_data(cfg->setup_data_in, &run.setup_json);
        if (rc) goto done;
        setup_done = 1;
        goto setup_ran;
    }
    step.fname = "setup";
    step.out = &run.setup_json;
    step.timeout_us = cfg->setup_timeout_us;
    step.timeout_rc = LL_EXIT_SETUP_TIMEOUT;
    rc = life_run(&run, &life, &life_lost, step_call, &step, 0);
    if (life_lost && atomic_load(&life.crashed)) goto done; /* life_run said so; rc: LL_EXIT_CRASH */
    if (life_lost) {
        if (atomic_load(&run.interrupt)) {
            fprintf(stderr, "luaload: setup() interrupted by a signal (its Lua code did not stop)\n");
            rc = LL_EXIT_EXTERNAL_ABORT;
            goto summarize;
        }
        fprintf(stderr, "luaload: setup() failed: setup() timed out after %.6gs (its Lua code did not stop)\n",
                (double)cfg->setup_timeout_us / 1e6);
        rc = LL_EXIT_SETUP_TIMEOUT;
        goto done;
    }
    if (rc == LL_EXIT_EXTERNAL_ABORT) {
        fprintf(stderr, "luaload: %s\n", life.errmsg);
        goto summarize;
    }
    if (rc) {
        if (!atomic_load(&run.aborted)) fprintf(stderr, "luaload: setup() failed: %s\n", life.errmsg);
        goto done;
    }
    setup_done = 1;
    if (cfg->setup_data_out) {
        rc = write_setup_data(cfg->setup_data_out, run.setup_json);
        if (rc) goto done;
    }
    if (cfg->setup_only) {
        if (!cfg->quiet) printf("luaload: setup() ran%s%s; --setup-only: no scenarios run\n",
                                cfg->setup_data_out ? ", its result is in " : "",
                                cfg->setup_data_out ? cfg->setup_data_out : "");
        goto done;
    }

setup_ran:
    ll_api_set_status(api, LL_API_STATUS_RUNNING);
    workers = ll_xcalloc((size_t)nworkers, sizeof(*workers));
    run.workers = workers;
    for (int i = 0; i < nworkers; i++) {
        rc = ll_worker_init(&workers[i], &run, i);
        if (rc) {
            if (!atomic_load(&run.aborted)) fprintf(stderr, "luaload: worker %d: %s\n", i, workers[i].errmsg);
            nworkers = i + 1;
            goto done;
        }
        if (outputs) ll_outputs_attach(outputs, workers[i].shard);
    }

    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    run.t0_unix_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    uint64_t t0 = run.t0 = ll_loop_now_ns();
    rc = ll_results_start(results, &run);
    if (rc) goto done;
    for (int i = 0; i < nworkers; i++) {
        if (ll_worker_start_thread(&workers[i]) != 0) {
            fprintf(stderr, "luaload: cannot start worker thread %d\n", i);
            atomic_store(&run.interrupt_ns, ll_loop_now_ns());
            atomic_store(&run.interrupt, 1);
            nworkers = i;
            rc = LL_EXIT_FAILURE;
            break;
        }
    }
    if (ms) mode->start(ms, t0);
    watch_workers(&run, workers, nworkers, &life, cfg, t0, mode, ms, results);
    elapsed = (double)(ll_loop_now_ns() - t0) / 1e9;
    if (rc) goto done;
    report_errors(workers, nworkers);
    int64_t cut = 0;
    for (int i = 0; i < nworkers; i++) cut += workers[i].abandoned ? 0 : workers[i].interrupted;
    if (cut > 0)
        fprintf(stderr, "luaload: %lld iteration%s still running at the end were interrupted (not counted)\n",
                (long long)cut, cut == 1 ? "" : "s");

summarize:
    total = ll_shard_new(run.reg);
    for (int i = 0; workers && i < nworkers; i++) {
        /* a crashed worker's thread is parked for good, its shard still: all it recorded counts */
        if (workers[i].abandoned && !atomic_load(&workers[i].crashed)) ll_worker_read_published(&workers[i], total);
        else ll_shard_merge(total, workers[i].shard);
    }
    if (!life_lost && life.shard) { /* setup's metrics and the vus gauges; teardown's come after */
        ll_shard_merge(total, life.shard);
        ll_shard_reset(life.shard);
    }
    int interrupted = atomic_load(&run.interrupt);
    if (setup_done && !life_lost && !atomic_load(&run.aborted) && !atomic_load(&run.crashed) && !cfg->no_teardown) {
        ll_api_set_status(api, LL_API_STATUS_TEARDOWN);
        step.fname = "teardown";
        step.data = run.setup_json;
        step.out = &teardown_out;
        step.timeout_us = cfg->teardown_timeout_us;
        step.timeout_rc = LL_EXIT_TEARDOWN_TIMEOUT;
        int trc = life_run(&run, &life, &life_lost, step_call, &step, LL_RUN_SIGNAL_TEARDOWN_NS);
        if (life_lost && atomic_load(&life.crashed))
            trc = LL_EXIT_CRASH; /* life_run said so */
        else if (life_lost)
            fprintf(stderr, "luaload: teardown() failed: %s (its Lua code did not stop)\n",
                    interrupted || atomic_load(&run.interrupt) ? "interrupted by a signal" : "timed out");
        else if (trc && !atomic_load(&run.aborted))
            fprintf(stderr, "luaload: teardown() failed: %s\n", life.errmsg);
        if (life_lost && trc != LL_EXIT_CRASH)
            trc = atomic_load(&run.interrupt) ? LL_EXIT_EXTERNAL_ABORT : LL_EXIT_TEARDOWN_TIMEOUT;
        if (!life_lost) ll_shard_merge(total, life.shard);
        if (!rc) rc = trc;
    }
    interrupted = atomic_load(&run.interrupt);
    ll_fdreserve_release(&end_fds); /* for the outputs' last flush, the summary and its files */

    report_http_errors(workers, nworkers, life_lost ? NULL : &life);
    report_fd_refusals();
    if (outputs) ll_outputs_stop(outputs);
    outputs_stopped = 1;
    ll_registry_report_folds(run.reg, stderr); /* checks and groups past their bounds */
    ll_tally tally = {0}; /* the scenarios', setup's and teardown's */
    for (int i = 0; workers && i < nworkers; i++) ll_worker_read_tally(&workers[i], &tally);
    if (!life_lost) ll_tally_add(&tally, &life.tally);
    int hrc = ll_results_end(results, &run, cfg, total, elapsed, any_abandoned(workers, nworkers, life_lost), &tally);
    if (!rc) rc = hrc;
    int abort_unused, failed = ll_threshold_set_evaluate(&cfg->thresholds, run.reg, total, elapsed, &abort_unused);
    ll_summary_opts sopts = ll_config_summary_opts(cfg);
    data = ll_summary_data(run.reg, total, elapsed, &sopts);
    ll_warnings_add(data, workers, nworkers, total);
    hrc = ll_results_report(results, data, total, elapsed, &tally);
    ll_tally_free(&tally);
    if (!rc) rc = hrc;
    if (!cfg->no_summary) {
        int src = -1;
        if (!life_lost && life.L) {
            step.summary = data;
            src = life_run(&run, &life, &life_lost, step_summary, &step, LL_RUN_SIGNAL_SUMMARY_NS);
            if (life_lost && !atomic_load(&life.crashed))
                fprintf(stderr, "luaload: handle_summary() did not return: printing the default summary\n");
        }
        if (life_lost || !life.L) src = bare_summary(&run, data);
        if (src != 0 && !rc) rc = LL_EXIT_FAILURE;
    }
    if (ms && !cfg->no_summary && workers) { /* quick mode: gopayloader's table too */
        mode->report(ms, workers, nworkers, data, stdout);
        fflush(stdout);
    }
    interrupted = atomic_load(&run.interrupt); /* a signal during the summary */
    report_thresholds(&cfg->thresholds, run.reg);
    if (cfg->summary_export && ll_summary_export(data, cfg->summary_export, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        if (!rc) rc = LL_EXIT_FAILURE;
    }
    if (!rc && (failed || atomic_load(&run.threshold_abort))) rc = LL_EXIT_THRESHOLDS;
    if (!rc && atomic_load(&run.marked_failed)) rc = LL_EXIT_MARKED_FAILED;
    if ((!rc || rc == LL_EXIT_TEARDOWN_TIMEOUT) && interrupted) rc = LL_EXIT_EXTERNAL_ABORT;

done:
    ll_fdreserve_release(&end_fds);
    ll_api_set_status(api, atomic_load(&run.interrupt) ? LL_API_STATUS_INTERRUPTED : LL_API_STATUS_ENDED);
    ll_api_stop(api);
    if (atomic_load(&run.aborted)) {
        fprintf(stderr, "luaload: test aborted: %s\n", run.abort_reason);
        rc = LL_EXIT_ABORTED;
    }
    if (atomic_load(&run.crashed)) rc = LL_EXIT_CRASH; /* a fault caught by the crash guard (crash.c) */
    if (any_abandoned(workers, nworkers, life_lost)) { /* threads still run Lua code in their states: free nothing, leave */
        if (outputs && !outputs_stopped) ll_outputs_stop(outputs);
        fflush(NULL);
        _exit(rc);
    }
    g_run = NULL;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ll_outputs_free(outputs); /* before the shards it writes from */
    ll_results_free(results);
    cJSON_Delete(data);
    free(teardown_out);
    ll_shard_free(total);
    for (int i = 0; workers && i < nworkers; i++) ll_worker_free(&workers[i]);
    free(workers);
    ll_worker_free(&life);
    free(run.setup_json);
    ll_registry_free(run.reg);
    free(run.vu_id_base);
    free(run.scenario_iters);
    ll_scenario_split_free(run.stripes, cfg->scenarios.n);
    ll_segment_tuple_free(&tuple);
    free(run.options_json);
    if (run.console) fclose(run.console);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    if (ms) mode->close(ms);
    return rc;
}

int ll_engine_report(ll_config *cfg, ll_registry *reg, const ll_shard *total, double elapsed_s, const char *html,
                     cJSON *page) {
    char libbuf[4200], err[1024];
    ll_run run;
    ll_worker life;
    memset(&run, 0, sizeof(run));
    memset(&life, 0, sizeof(life));
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    run.script_path = cfg->script_path;
    run.lib_dir = ll_engine_lib_dir(libbuf, sizeof(libbuf));
    run.env = cfg->env;
    run.nenv = cfg->nenv;
    run.scenarios = &cfg->scenarios;
    if (!cfg->seed_set) cfg->seed = ll_random_entropy_seed();
    run.seed = &cfg->seed;
    run.reg = reg;
    life_step step = {&life, &run, NULL, NULL, NULL, 0, 0, NULL};
    int rc = 0, lost = 0;
    g_run = &run;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int abort_unused, failed = ll_threshold_set_evaluate(&cfg->thresholds, reg, total, elapsed_s, &abort_unused);
    ll_summary_opts sopts = ll_config_summary_opts(cfg);
    cJSON *data = ll_summary_data(reg, total, elapsed_s, &sopts);
    ll_warnings_add(data, NULL, 0, total); /* dropped iterations; the workers' busy share is not in the files */
    if (!data) {
        rc = LL_EXIT_FAILURE;
        goto done;
    }
    int script_rc = 0; /* the script's init code failed: the default summary, then its exit code */
    if (!cfg->no_summary && cfg->script_path) { /* the script's handle_summary */
        script_rc = life_run(&run, &life, &lost, step_init, &step, 0);
        if (script_rc && !lost) fprintf(stderr, "luaload: %s: printing the default summary\n", life.errmsg);
        step.summary = data;
        if (!script_rc && !lost && life_run(&run, &life, &lost, step_summary, &step, LL_RUN_SIGNAL_SUMMARY_NS) != 0)
            rc = LL_EXIT_FAILURE;
        if (lost) {
            fprintf(stderr, "luaload: the script's init code or handle_summary() did not return\n");
            rc = LL_EXIT_EXTERNAL_ABORT;
            goto done;
        }
    }
    if (!cfg->no_summary && (!cfg->script_path || script_rc) && bare_summary(&run, data) != 0) rc = LL_EXIT_FAILURE;
    report_thresholds(&cfg->thresholds, reg);
    if (cfg->summary_export && ll_summary_export(data, cfg->summary_export, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: %s\n", err);
        if (!rc) rc = LL_EXIT_FAILURE;
    }
    if (html && page) cJSON_ReplaceItemInObjectCaseSensitive(page, "summary", cJSON_Duplicate(data, 1));
    if (html && ll_report_write_data(html, page, err, sizeof(err)) != 0) {
        fprintf(stderr, "luaload: --out html: %s\n", err);
        if (!rc) rc = LL_EXIT_FAILURE;
    }
    if (!rc) rc = script_rc;
    if (!rc && failed) rc = LL_EXIT_THRESHOLDS;

done:
    cJSON_Delete(data);
    if (lost) { /* a thread still runs Lua code in the state: free nothing, leave */
        fflush(NULL);
        _exit(rc);
    }
    g_run = NULL;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ll_worker_free(&life);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    return rc;
}
