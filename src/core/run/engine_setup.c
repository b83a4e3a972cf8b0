/* engine_setup.c -- the phase before the scenarios: the status API (-a,
 * --paused: wait for the resume), --start-at, then setup() on the lifecycle
 * worker, or its result from --setup-data; --setup-data-out keeps it, and
 * --setup-only ends the run there. */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "engine_ctx.h"

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

/* The status API (-a, or --paused's default address), and with --paused
 * the wait for PATCH /v1/status; then --start-at's wait. */
static engine_next setup_wait(ll_engine *e) {
    ll_config *cfg = e->cfg;
    if (cfg->start.paused || cfg->start.address) {
        const char *addr = cfg->start.address ? cfg->start.address : "127.0.0.1:6565";
        e->api = ll_api_start(addr, &e->run.interrupt, &e->run.marked_failed, cfg->start.paused, e->err, sizeof(e->err));
        if (!e->api) {
            fprintf(stderr, "luaload: %s\n", e->err);
            return engine_end(e, LL_EXIT_CONFIG);
        }
        ll_api_set_vus_max(e->api, e->max_vus);
        if (cfg->start.paused) {
            fprintf(stderr, "luaload: paused: waiting for PATCH http://%s/v1/status {\"data\":{\"attributes\":"
                            "{\"paused\":false}}}\n", addr);
            if (ll_api_wait_resume(e->api) != 0) return engine_end(e, LL_EXIT_EXTERNAL_ABORT);
        }
    }
    if (cfg->start.at_set && wait_until(&e->run, cfg->start.at) != 0) return engine_end(e, LL_EXIT_EXTERNAL_ABORT);
    return ENGINE_NEXT;
}

/* setup() on the lifecycle worker, its result in run.setup_json. */
static engine_next setup_call(ll_engine *e) {
    ll_config *cfg = e->cfg;
    ll_run *run = &e->run;
    int rc = engine_life_call(e, "setup", NULL, &run->setup_json, cfg->run.setup_timeout_us, LL_EXIT_SETUP_TIMEOUT, 0);
    if (e->life_lost && atomic_load(&e->life.crashed)) return engine_end(e, rc); /* described; rc: LL_EXIT_CRASH */
    if (e->life_lost) {
        if (atomic_load(&run->interrupt)) {
            fprintf(stderr, "luaload: setup() interrupted by a signal (its Lua code did not stop)\n");
            return engine_sum_up(e, LL_EXIT_EXTERNAL_ABORT);
        }
        fprintf(stderr, "luaload: setup() failed: setup() timed out after %.6gs (its Lua code did not stop)\n",
                (double)cfg->run.setup_timeout_us / 1e6);
        return engine_end(e, LL_EXIT_SETUP_TIMEOUT);
    }
    if (rc == LL_EXIT_EXTERNAL_ABORT) {
        fprintf(stderr, "luaload: %s\n", e->life.errmsg);
        return engine_sum_up(e, rc);
    }
    if (rc) {
        if (!atomic_load(&run->aborted)) fprintf(stderr, "luaload: setup() failed: %s\n", e->life.errmsg);
        return engine_end(e, rc);
    }
    e->setup_done = 1;
    return ENGINE_NEXT;
}

engine_next engine_setup(ll_engine *e) {
    ll_config *cfg = e->cfg;
    engine_next next = setup_wait(e);
    if (next != ENGINE_NEXT) return next;
    ll_api_set_status(e->api, LL_API_STATUS_SETUP);
    if (cfg->dist.setup_data_in) { /* setup() ran once elsewhere (after this part was started, maybe): its result is here */
        int rc = read_setup_data(cfg->dist.setup_data_in, &e->run.setup_json);
        if (rc) return engine_end(e, rc);
        e->setup_done = 1;
        return ENGINE_NEXT;
    }
    next = setup_call(e);
    if (next != ENGINE_NEXT) return next;
    if (cfg->dist.setup_data_out) {
        int rc = write_setup_data(cfg->dist.setup_data_out, e->run.setup_json);
        if (rc) return engine_end(e, rc);
    }
    if (cfg->dist.setup_only) {
        if (!cfg->quiet) printf("luaload: setup() ran%s%s; --setup-only: no scenarios run\n",
                                cfg->dist.setup_data_out ? ", its result is in " : "",
                                cfg->dist.setup_data_out ? cfg->dist.setup_data_out : "");
        return engine_end(e, 0);
    }
    return ENGINE_NEXT;
}
