/* engine_limits.c -- what a run needs of the machine, checked before the
 * test: VU counts that fit (VU ids are ints), memory for them, open files
 * for the workers and the VUs' connections; the number of workers; and, at
 * the end, the connections that were refused for want of open files. */
#include <limits.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine_ctx.h"
#include "net.h"
#include "script.h"

/* Memory per VU, for the estimate: about 16 KB was measured for an idle VU
 * (its coroutine in the worker's LuaJIT state and a keep-alive connection);
 * twice that, to be safe. */
#define ENGINE_VU_BYTES (32 * 1024)
/* Open files besides the VUs' connections: stdio, outputs, the script,
 * name resolution, the end's reserve (ENGINE_FD_END); and per worker (the
 * lifecycle one too) its epoll descriptor and libcurl's wake-up pair, with
 * room. */
#define ENGINE_FD_RESERVE 64
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

/* The connections each VU may hold (mode.h's vu_conns): the mode says,
 * from what the script says: its VUs may hold some (-1) when it loaded a
 * network module, else none (0). */
static int engine_vu_conns(ll_engine *e) {
    int script_conns = 0;
    for (size_t i = 0; i < sizeof(ENGINE_NET_MODULES) / sizeof(ENGINE_NET_MODULES[0]); i++)
        if (e->run.script->loaded(&e->life, ENGINE_NET_MODULES[i])) script_conns = -1;
    return e->mode->vu_conns(e->ms, script_conns);
}

/* Raises the open-file limit to the hard limit and checks what the run
 * needs of it. The workers' own descriptors and the reserve must fit, or
 * the run is refused. A VU holds descriptors only through its Clients'
 * connections: quick mode's VUs hold one each (without --parallel), known
 * at the start, so too many are refused; a VU of a script that loaded no
 * network module (a sleep-only script) holds none; a script's VUs may hold
 * one per Client and host (HTTP/1.1, k6's HTTP/2), share a few multiplexed
 * ones, or make no request at all -- unknown until they run, so too many
 * get a warning, and the connections that cannot be made fail (counted at
 * the end: engine_limits_report_fds). */
int engine_limits_fds(ll_engine *e, int nworkers) {
    int64_t vus = e->max_vus;
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
    int conns = engine_vu_conns(e);
    if (conns == 1) {
        fprintf(stderr, "luaload: %lld VUs need about %lld open files, but the limit is %lld "
                        "(raise it with ulimit -n / LimitNOFILE, or use fewer VUs)\n",
                (long long)vus, (long long)(vus + own), (long long)limit);
        return LL_EXIT_CONFIG;
    }
    if (!conns) return 0;
    fprintf(stderr, "luaload: warning: %lld VUs may need about %lld open files if each holds a connection "
                    "(HTTP/1.1 keeps one per VU and Client; multiplexed Clients share theirs), but the limit is "
                    "%lld: connections past it will fail (raise it with ulimit -n / LimitNOFILE)\n",
            (long long)vus, (long long)(vus + own), (long long)limit);
    return 0;
}

/* The connections that could not be made for want of open files, with
 * the limit that stopped them and how to raise it. */
void engine_limits_report_fds(void) {
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
int engine_limits_vus(const ll_config *cfg, uint64_t *id_base, int64_t *max_vus) {
    *max_vus = 0;
    for (int i = 0; i < cfg->run.scenarios.n; i++)
        if (!engine_scenario_vus_ok(&cfg->run.scenarios.items[i])) return LL_EXIT_CONFIG;
    for (int i = 0; i < cfg->run.scenarios.n; i++) {
        id_base[i] = (uint64_t)*max_vus;
        *max_vus += ll_scenario_max_vus(&cfg->run.scenarios.items[i]);
    }
    if (*max_vus <= INT_MAX) return engine_check_memory(*max_vus);
    fprintf(stderr, "luaload: the scenarios have %lld VUs in all, more than 2147483647\n", (long long)*max_vus);
    return LL_EXIT_CONFIG;
}

/* The worker threads: one per core (or --workers), no more than VUs. */
int engine_limits_workers(const ll_config *cfg, int64_t max_vus) {
    int n = cfg->run.workers > 0 ? cfg->run.workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > max_vus) n = max_vus > 0 ? (int)max_vus : 1;
    return n;
}
