/* test_engine.c -- the engine's phases, the executors and the workers,
 * driven through ll_engine_run with the fake script (fake_script.h) and,
 * for requests, the fake transport (fake_transport.h) under a mode of the
 * test's own (mode.h): no Lua and no network, so it links ll_run alone and
 * shows that the engine reaches Lua only through the script's table of
 * operations and other iterations only through the mode's. */
/* links: ll_run */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "exit.h"
#include "fake_script.h"
#include "fake_transport.h"
#include "http_exchange.h"
#include "test_util.h"
#include "worker.h"

static void config(ll_config *cfg) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->quiet = 1;
}

static int run(ll_config *cfg, const char *functions, const char *failing, const char *setup_json) {
    fake_script_reset();
    fake_script_functions = functions;
    fake_script_failing = failing;
    fake_script_setup_json = setup_json;
    int rc = ll_engine_run(cfg, &fake_script_ops, &ll_script_mode_ops);
    ll_config_free(cfg);
    return rc;
}

/* -u 3 -i 10: k6's shared-iterations, 10 iterations in all */
static void test_shared_iterations(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 3, cfg.run.vus_set = 1;
    cfg.run.iterations = 10, cfg.run.iterations_set = 1;
    int rc = run(&cfg, "default", "", NULL);
    tu_check(rc == 0, "shared-iterations: exit 0 (got %d)", rc);
    tu_check(fake_script.iterations == 10, "shared-iterations: 10 iterations run (got %d)", fake_script.iterations);
    tu_check(fake_script.summaries == 1, "the summary made once (got %d)", fake_script.summaries);
    tu_check(fake_script.summary_iterations == 10, "the summary data counts 10 iterations (got %g)",
             fake_script.summary_iterations);
    tu_check(fake_script.opens > 0 && fake_script.opens == fake_script.closes, "every state opened is closed (%d, %d)",
             fake_script.opens, fake_script.closes);
}

/* two scenarios: per-vu-iterations (2 VUs x 3) and shared-iterations (5) */
static void test_scenarios(void) {
    ll_config cfg;
    config(&cfg);
    ll_scenario *a = ll_scenarios_add(&cfg.run.scenarios, "each", LL_EX_PER_VU_ITERATIONS);
    a->vus = 2, a->iterations = 3;
    ll_scenario *b = ll_scenarios_add(&cfg.run.scenarios, "shared", LL_EX_SHARED_ITERATIONS);
    b->vus = 1, b->iterations = 5;
    int rc = run(&cfg, "default", "", NULL);
    tu_check(rc == 0, "two scenarios: exit 0 (got %d)", rc);
    tu_check(fake_script.iterations == 11, "two scenarios: 2 x 3 + 5 iterations (got %d)", fake_script.iterations);
    tu_check(fake_script.summary_iterations == 11, "two scenarios: the summary counts 11 (got %g)",
             fake_script.summary_iterations);
}

/* setup() runs once before the iterations and its data reaches each of
 * them and teardown(); teardown() runs once after */
static void test_setup_teardown(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 2, cfg.run.vus_set = 1;
    cfg.run.iterations = 4, cfg.run.iterations_set = 1;
    int rc = run(&cfg, "setup default teardown", "", "{\"token\":\"abc\"}");
    tu_check(rc == 0, "setup and teardown: exit 0 (got %d)", rc);
    tu_check(fake_script.setups == 1 && fake_script.teardowns == 1, "setup() and teardown() once each (%d, %d)",
             fake_script.setups, fake_script.teardowns);
    tu_check(fake_script.iterations == 4, "setup and teardown: 4 iterations (got %d)", fake_script.iterations);
    tu_check(fake_script.with_data == 5, "setup()'s data handed to the 4 iterations and teardown() (got %d)",
             fake_script.with_data);
}

/* iterations that fail are counted and the run goes on (k6: exit 0) */
static void test_failing_iterations(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 1, cfg.run.vus_set = 1;
    cfg.run.iterations = 3, cfg.run.iterations_set = 1;
    tu_captured c = tu_capture_stderr();
    int rc = run(&cfg, "default", "default", NULL);
    int said = tu_release_stderr(c, "fake error in default");
    tu_check(rc == 0, "failing iterations: exit 0 as in k6 (got %d)", rc);
    tu_check(fake_script.iterations == 3, "failing iterations: all 3 tried (got %d)", fake_script.iterations);
    tu_check(said >= 1, "failing iterations: the error reported (got %d)", said);
}

/* a setup() that fails ends the run before any iteration */
static void test_failing_setup(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 1, cfg.run.vus_set = 1;
    cfg.run.iterations = 3, cfg.run.iterations_set = 1;
    tu_captured c = tu_capture_stderr();
    int rc = run(&cfg, "setup default", "setup", NULL);
    int said = tu_release_stderr(c, "fake error in setup");
    tu_check(rc == LL_EXIT_SCRIPT, "failing setup(): exit %d (got %d)", LL_EXIT_SCRIPT, rc);
    tu_check(fake_script.iterations == 0, "failing setup(): no iteration (got %d)", fake_script.iterations);
    tu_check(said == 1, "failing setup(): its error printed once (got %d)", said);
}

/* no function to run: a script error before any state runs iterations */
static void test_no_exec_function(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 1, cfg.run.vus_set = 1;
    cfg.run.iterations = 1, cfg.run.iterations_set = 1;
    tu_captured c = tu_capture_stderr();
    int rc = run(&cfg, "setup", "", NULL);
    int said = tu_release_stderr(c, "defines no function default()");
    tu_check(rc == LL_EXIT_SCRIPT, "no default(): exit %d (got %d)", LL_EXIT_SCRIPT, rc);
    tu_check(said == 1, "no default(): says so (got %d)", said);
    tu_check(fake_script.iterations == 0 && fake_script.setups == 0, "no default(): nothing run");
}

/* constant-vus for a duration: every VU iterates, and the run ends */
static void test_constant_vus(void) {
    ll_config cfg;
    config(&cfg);
    ll_scenario *s = ll_scenarios_add(&cfg.run.scenarios, "steady", LL_EX_CONSTANT_VUS);
    s->vus = 4, s->duration_us = 200000;
    int rc = run(&cfg, "default", "", NULL);
    tu_check(rc == 0, "constant-vus: exit 0 (got %d)", rc);
    tu_check(fake_script.vus >= 4, "constant-vus: 4 VUs made (got %d)", fake_script.vus);
    tu_check(fake_script.iterations >= 4, "constant-vus: they iterated (got %d)", fake_script.iterations);
    tu_check(fake_script.summary_iterations == fake_script.iterations, "constant-vus: the summary counts them all");
}

/* A mode of the test's own (mode.h): its VUs' iterations run in C and end
 * at once, each keeping a little state per VU and per worker for the
 * table's vu_free and worker_free. */
static struct {
    atomic_int iterations, vu_allocs, vu_frees, worker_allocs, worker_frees, starts, reports;
} test_mode;

static void test_mode_iterate(ll_vu *vu) {
    atomic_fetch_add(&test_mode.iterations, 1);
    if (!vu->mode_data) {
        vu->mode_data = malloc(16);
        atomic_fetch_add(&test_mode.vu_allocs, 1);
    }
    if (!vu->w->mode_data) {
        vu->w->mode_data = malloc(16);
        atomic_fetch_add(&test_mode.worker_allocs, 1);
    }
    ll_vu_native_done(vu);
}

static void test_mode_vu_free(ll_vu *vu) {
    free(vu->mode_data);
    vu->mode_data = NULL;
    atomic_fetch_add(&test_mode.vu_frees, 1);
}

static void test_mode_worker_free(ll_worker *w) {
    free(w->mode_data);
    w->mode_data = NULL;
    atomic_fetch_add(&test_mode.worker_frees, 1);
}

static const ll_vu_iter test_mode_iter = {test_mode_iterate, test_mode_vu_free, test_mode_worker_free};

static int test_mode_open(ll_mode **out, const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen) {
    (void)cfg, (void)stop, (void)err, (void)errlen;
    *out = NULL;
    return 0;
}
static const char *test_mode_script(const ll_mode *m) { return (void)m, NULL; }
static const char *test_mode_target(const ll_mode *m, const ll_config *cfg) { return (void)m, (void)cfg, "test-mode"; }
static int test_mode_vu_conns(const ll_mode *m, int script_conns) { return (void)m, (void)script_conns, 0; }
static int test_mode_start(ll_mode *m, uint64_t t0) {
    (void)m, (void)t0;
    atomic_fetch_add(&test_mode.starts, 1);
    return 0;
}
static void test_mode_tick(ll_mode *m, ll_worker *ws, int n, uint64_t t0, uint64_t now) {
    (void)m, (void)ws, (void)n, (void)t0, (void)now;
}
static void test_mode_second(ll_mode *m, ll_worker *ws, int n, uint64_t now) { (void)m, (void)ws, (void)n, (void)now; }
static void test_mode_report(const ll_mode *m, ll_worker *ws, int n, const cJSON *data, FILE *f) {
    (void)m, (void)ws, (void)n, (void)data, (void)f;
    atomic_fetch_add(&test_mode.reports, 1);
}
static void test_mode_close(ll_mode *m) { (void)m; }

static const ll_mode_ops test_mode_ops = {
    .open = test_mode_open,
    .script = test_mode_script,
    .target = test_mode_target,
    .vu_conns = test_mode_vu_conns,
    .iter = &test_mode_iter,
    .start = test_mode_start,
    .tick = test_mode_tick,
    .second = test_mode_second,
    .report = test_mode_report,
    .close = test_mode_close,
};

/* A mode's table runs the scenarios' iterations (not the script's exec
 * function), setup() and teardown() still run the script's, and what the
 * mode kept per VU and per worker is freed through its table. */
static void test_mode_runs_iterations(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 3, cfg.run.vus_set = 1;
    cfg.run.iterations = 12, cfg.run.iterations_set = 1;
    memset(&test_mode, 0, sizeof(test_mode));
    fake_script_reset();
    fake_script_functions = "setup default teardown";
    fake_script_failing = "";
    fake_script_setup_json = "{}";
    int rc = ll_engine_run(&cfg, &fake_script_ops, &test_mode_ops);
    ll_config_free(&cfg);
    tu_check(rc == 0, "mode: exit 0 (got %d)", rc);
    tu_check(test_mode.iterations == 12, "mode: its table ran the 12 iterations (got %d)", test_mode.iterations);
    tu_check(fake_script.iterations == 0, "mode: the script's exec function never ran (got %d)",
             fake_script.iterations);
    tu_check(fake_script.setups == 1 && fake_script.teardowns == 1, "mode: setup() and teardown() are the script's");
    tu_check(fake_script.summary_iterations == 12, "mode: the summary counts its iterations (got %g)",
             fake_script.summary_iterations);
    tu_check(test_mode.vu_allocs > 0 && test_mode.vu_allocs == test_mode.vu_frees,
             "mode: each VU's own state freed by vu_free (%d made, %d freed)", test_mode.vu_allocs, test_mode.vu_frees);
    tu_check(test_mode.worker_allocs > 0 && test_mode.worker_allocs == test_mode.worker_frees,
             "mode: each worker's own state freed by worker_free (%d, %d)", test_mode.worker_allocs,
             test_mode.worker_frees);
    tu_check(test_mode.starts == 1 && test_mode.reports == 1, "mode: started and reported once (%d, %d)",
             test_mode.starts, test_mode.reports);
}

/* constant-arrival-rate: 100 iterations/s for 0.3 s is 30 iterations,
 * started on schedule by the preallocated VUs */
static void test_constant_arrival_rate(void) {
    ll_config cfg;
    config(&cfg);
    ll_scenario *s = ll_scenarios_add(&cfg.run.scenarios, "rate", LL_EX_CONSTANT_ARRIVAL_RATE);
    s->rate = 100, s->time_unit_us = 1000000, s->duration_us = 300000;
    s->pre_allocated_vus = 2, s->max_vus = 2;
    int rc = run(&cfg, "default", "", NULL);
    tu_check(rc == 0, "constant-arrival-rate: exit 0 (got %d)", rc);
    tu_check(fake_script.iterations >= 25 && fake_script.iterations <= 31,
             "constant-arrival-rate: about 30 iterations in 0.3 s at 100/s (got %d)", fake_script.iterations);
    tu_check(fake_script.vus <= 2 + 1, "constant-arrival-rate: no VU past maxVUs (got %d coroutines)",
             fake_script.vus);
}

/* per-vu-iterations: each of 4 VUs runs its 5 */
static void test_per_vu_iterations(void) {
    ll_config cfg;
    config(&cfg);
    ll_scenario *s = ll_scenarios_add(&cfg.run.scenarios, "each", LL_EX_PER_VU_ITERATIONS);
    s->vus = 4, s->iterations = 5;
    int rc = run(&cfg, "default", "", NULL);
    tu_check(rc == 0, "per-vu-iterations: exit 0 (got %d)", rc);
    tu_check(fake_script.iterations == 20, "per-vu-iterations: 4 x 5 iterations (got %d)", fake_script.iterations);
}

/* A mode whose iterations each make one request through the fake
 * transport (fake_transport.h), as quick mode's do through a real one: the
 * engine, the worker's transports, the VU's wait and its cancel, and the
 * HTTP metrics, with no network and no Lua. */
static const char *http_mode_url; /* what each iteration asks for */
static const ll_http_judge HTTP_MODE_JUDGE = {NULL, 1};
static ll_client_opts http_mode_opts;

static void http_mode_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    ll_http_call *call = ud;
    ll_vu *vu = call->owner;
    call->x = NULL;
    ll_http_exchange_record(vu, x->req, x->method, r, &HTTP_MODE_JUDGE);
    x->tp->ops->release(x);
    ll_vu_native_done(vu);
}

static void http_mode_cancel(void *ud) {
    ll_vu *vu = ud;
    ll_http_exchange_cancel(vu, &vu->http.call, &HTTP_MODE_JUDGE);
}

static void http_mode_iterate(ll_vu *vu) {
    ll_worker *w = vu->w;
    if (!vu->mode_data) { /* its request, made once */
        ll_http_req *req = calloc(1, sizeof(*req));
        ll_http_req_init(req);
        ll_http_req_set_method(req, "GET");
        ll_http_req_set_url(req, http_mode_url);
        vu->mode_data = req;
    }
    ll_http_req *req = vu->mode_data;
    ll_transport *tp = ll_http_worker_transport(&w->http, &fake_transport_ops);
    ll_transfer *x = tp ? ll_http_vu_transfer(&vu->http, tp, vu->index, 0, 0, 1, -1, &http_mode_opts) : NULL;
    ll_http_call *call = &vu->http.call;
    call->owner = vu;
    call->discard = 1;
    const char *err = "no transfer";
    if (x && tp->ops->start(x, req, req->method, NULL, http_mode_done, call, &err) == 0) {
        call->x = x;
        ll_vu_wait(vu, http_mode_cancel, vu);
        return;
    }
    ll_vu_native_done(vu);
}

static void http_mode_vu_free(ll_vu *vu) {
    ll_http_req_clear(vu->mode_data);
    free(vu->mode_data);
    vu->mode_data = NULL;
}

static const ll_vu_iter http_mode_iter = {http_mode_iterate, http_mode_vu_free, test_mode_worker_free};

static int http_mode_run(ll_config *cfg, const char *url) {
    ll_mode_ops ops = test_mode_ops;
    ops.iter = &http_mode_iter;
    http_mode_url = url;
    memset(&fake_transport_stats, 0, sizeof(fake_transport_stats));
    fake_script_reset();
    fake_script_functions = "default";
    fake_script_failing = "";
    fake_script_setup_json = NULL;
    int rc = ll_engine_run(cfg, &fake_script_ops, &ops);
    ll_config_free(cfg);
    return rc;
}

/* 9 iterations, one request each: each answered, recorded as k6's
 * http_reqs, none failed */
static void test_requests(void) {
    ll_config cfg;
    config(&cfg);
    cfg.run.vus = 3, cfg.run.vus_set = 1;
    cfg.run.iterations = 9, cfg.run.iterations_set = 1;
    int rc = http_mode_run(&cfg, "http://fake.test/status/200");
    tu_check(rc == 0, "requests: exit 0 (got %d)", rc);
    tu_check(fake_transport_stats.completions == 9, "requests: 9 answered by the transport (got %d)",
             fake_transport_stats.completions);
    tu_check(fake_script.summary_http_reqs == 9, "requests: http_reqs counts 9 (got %g)", fake_script.summary_http_reqs);
    tu_check(fake_script.summary_failed == 0, "requests: none failed (got %g)", fake_script.summary_failed);
    tu_check(fake_script.summary_iterations == 9, "requests: 9 iterations (got %g)", fake_script.summary_iterations);
}

/* a request that never ends: at the end of a 0.2 s constant-vus scenario
 * with no gracefulStop each VU's wait is cancelled through the slot it
 * registered, the request counted as cut off (a failed request), and no
 * iteration counts as completed */
static void test_requests_cut_off(void) {
    ll_config cfg;
    config(&cfg);
    ll_scenario *s = ll_scenarios_add(&cfg.run.scenarios, "hang", LL_EX_CONSTANT_VUS);
    s->vus = 2, s->duration_us = 200000, s->graceful_stop_us = 0;
    int rc = http_mode_run(&cfg, "http://fake.test/hang");
    tu_check(rc == 0, "cut off: exit 0 (got %d)", rc);
    tu_check(fake_transport_stats.starts == 2, "cut off: 2 requests started (got %d)", fake_transport_stats.starts);
    tu_check(fake_transport_stats.cancels == 2, "cut off: both cancelled through the VU's wait (got %d)",
             fake_transport_stats.cancels);
    tu_check(fake_script.summary_iterations <= 0, "cut off: no iteration completed (got %g)",
             fake_script.summary_iterations);
    tu_check(fake_script.summary_failed == 2, "cut off: the 2 requests count as failed (got %g)",
             fake_script.summary_failed);
}

int main(void) {
    setenv("LC_ALL", "C.UTF-8", 1);
    test_shared_iterations();
    test_scenarios();
    test_setup_teardown();
    test_failing_iterations();
    test_failing_setup();
    test_no_exec_function();
    test_constant_vus();
    test_mode_runs_iterations();
    test_constant_arrival_rate();
    test_per_vu_iterations();
    test_requests();
    test_requests_cut_off();
    return tu_summary();
}
