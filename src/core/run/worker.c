/* worker.c -- a worker: one thread with its event loop, Lua state, VUs,
 * transports and metrics shard. Drives its executors until they are done,
 * publishes a snapshot of its shard every second, probes its own
 * saturation (busy share, loop lag), and runs single calls (setup,
 * teardown) on the lifecycle worker. And what the Lua bindings may ask of
 * a worker through script_host.h: its state, the run's settings, stopping
 * and counting the run. */
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "cstack.h"
#include "rng.h"
#include "xmalloc.h"
#include "script.h"
#include "mode.h"

int ll_worker_init(ll_worker *w, ll_run *run, int index) {
    memset(w, 0, sizeof(*w));
    w->index = index;
    w->run = run;
    w->setup_ref = LL_SCRIPT_NOREF;
    w->exec_ref = LL_SCRIPT_NOREF;
    w->env_ref = LL_SCRIPT_NOREF;
    pthread_mutex_init(&w->pub_mu, NULL);
    w->loop = ll_loop_new();
    if (!w->loop) {
        snprintf(w->errmsg, sizeof(w->errmsg), "cannot make the event loop of worker %d", index);
        return w->rc = LL_EXIT_FAILURE;
    }
    ll_http_worker_init(&w->http, w->loop, run->dns);
    w->shard = ll_shard_new(run->reg);
    if (run->publish) w->published = ll_shard_new(run->reg);
    int nscenarios = index >= 0 ? run->scenarios->n : 0;
    if (index < 0) w->vus = ll_xcalloc(1, sizeof(ll_vu));
    if (nscenarios) w->executors = ll_xcalloc((size_t)nscenarios, sizeof(ll_executor));
    int rc = w->run->script->open(w);
    if (rc) return w->rc = rc;
    for (int i = 0; i < nscenarios; i++) {
        rc = ll_executor_init(&w->executors[i], w, i, w->errmsg, sizeof(w->errmsg));
        w->nexecutors = i + 1;
        if (rc) return w->rc = rc;
    }
    return 0;
}

void ll_worker_free(ll_worker *w) {
    for (int i = 0; i < w->nvus; i++) ll_vu_free(&w->vus[i]);
    free(w->vus);
    for (int i = 0; i < w->nexecutors; i++) ll_executor_free(&w->executors[i]);
    free(w->executors);
    if (w->run) w->run->script->close(w); /* a worker never made (zeroed) has no state */
    ll_http_worker_free(&w->http);
    ll_loop_free(w->loop);
    ll_shard_free(w->shard);
    ll_shard_free(w->published);
    pthread_mutex_destroy(&w->pub_mu);
    ll_tally_free(&w->tally);
    ll_tally_free(&w->pub_tally);
    ll_errors_free(&w->errors);
    ll_errors_free(&w->http_errors);
    ll_errors_free(&w->cut_waits);
    if (w->mode_data) w->run->iter->worker_free(w);
    memset(w, 0, sizeof(*w));
}

/* The one call of the lifecycle worker is over (its VU's on_idle). */
static void call_done(ll_vu *vu, void *ud) {
    ll_worker *w = ud;
    vu->alive = 0;
    w->active--;
}

/* Runs the loop until every scenario (or the one call) is done. */
static void drive(ll_worker *w) {
    while (w->active > 0) {
        ll_loop_turn(w->loop, 100);
        uint64_t now = ll_loop_now_ns();
        ll_run *run = w->run;
        int signalled = atomic_load_explicit(&run->interrupt, memory_order_relaxed);
        uint64_t signal_ns = signalled ? atomic_load(&run->interrupt_ns) : 0;
        /* a signal gives running iterations a short grace, a failed
         * abortOnFail threshold their gracefulStop */
        int stop_now = atomic_load_explicit(&run->aborted, memory_order_relaxed) ||
                       atomic_load_explicit(&run->crashed, memory_order_relaxed) ||
                       atomic_load_explicit(&w->halted, memory_order_relaxed) ||
                       (signalled && now >= signal_ns + LL_RUN_SIGNAL_GRACE_NS);
        int graceful = signalled || atomic_load_explicit(&run->threshold_abort, memory_order_relaxed);
        int ended = graceful || atomic_load_explicit(&run->scenarios_ended, memory_order_relaxed);
        for (int i = 0; i < w->nexecutors; i++) ll_executor_tick(&w->executors[i], now, stop_now, ended);
        if (!w->single || !w->vus[0].alive) continue;
        /* setup/teardown: stopped by abort(), its timeout, or a Ctrl-C that
         * came while it ran; teardown still runs after a stop, for as long
         * as a signal leaves it */
        int late = w->call_deadline_ns && now >= w->call_deadline_ns;
        int interrupted = (graceful && !w->call_graceful_at_start) ||
                          (signalled && now >= signal_ns + LL_RUN_SIGNAL_TEARDOWN_NS);
        if (atomic_load_explicit(&run->aborted, memory_order_relaxed) || late || interrupted) {
            ll_vu_interrupt(&w->vus[0]);
            w->vus[0].alive = 0;
            w->active--;
        }
    }
}

#define PUBLISH_EVERY_US 1000000

/* A copy of the shard for other threads; at is when it was taken
 * (UINT64_MAX: the last, when the worker is done). */
static void publish_at(ll_worker *w, uint64_t at) {
    pthread_mutex_lock(&w->pub_mu);
    ll_shard_reset(w->published);
    ll_shard_merge(w->published, w->shard);
    ll_tally_copy(&w->pub_tally, &w->tally);
    w->published_at = at;
    pthread_mutex_unlock(&w->pub_mu);
}

static void publish(ll_loop *loop, void *ud) {
    ll_worker *w = ud;
    publish_at(w, ll_loop_now_ns());
    ll_loop_timer_start(loop, &w->pub_timer, PUBLISH_EVERY_US);
}

/* The saturation probe (worker.h): one clock read per LL_WORKER_PROBE_NS,
 * two trend samples. A timer that fires more than a period late (Lua code
 * that held the loop) is due again a period after it fired. */
static void probe_arm(ll_worker *w, uint64_t now) {
    w->probe_due = w->probe_due + LL_WORKER_PROBE_NS > now ? w->probe_due + LL_WORKER_PROBE_NS
                                                           : now + LL_WORKER_PROBE_NS;
    ll_loop_timer_at(w->loop, &w->probe_timer, w->probe_due);
}

static void probe(ll_loop *loop, void *ud) {
    ll_worker *w = ud;
    ll_run *run = w->run;
    uint64_t now = ll_loop_now_ns(), idle = ll_loop_idle_ns(loop);
    uint64_t span = now - w->probe_at, waited = idle - w->probe_idle;
    if (waited > span) waited = span;
    double busy = span ? 100.0 * (double)(span - waited) / (double)span : 0;
    ll_shard_trend(w->shard, run->m_loop_lag, (int64_t)((now - w->probe_due) / 1000), NULL);
    ll_shard_trend(w->shard, run->m_worker_busy, (int64_t)(busy * 1000 + 0.5), NULL);
    w->probed_ns += span;
    if (busy >= LL_WORKER_SATURATED_PCT) w->saturated_ns += span;
    w->probe_at = now;
    w->probe_idle = idle;
    probe_arm(w, now);
}

void ll_worker_count_response(ll_worker *w, int status, int error_code) {
    ll_tally_response(&w->tally, status, error_code);
    atomic_fetch_add_explicit(&w->http_reqs, 1, memory_order_relaxed);
}

void ll_worker_read_tally(ll_worker *w, ll_tally *sum) {
    pthread_mutex_lock(&w->pub_mu);
    ll_tally_add(sum, &w->pub_tally);
    pthread_mutex_unlock(&w->pub_mu);
}

uint64_t ll_worker_read_published(ll_worker *w, ll_shard *dst) {
    pthread_mutex_lock(&w->pub_mu);
    if (w->published) ll_shard_merge(dst, w->published);
    uint64_t at = w->published_at;
    pthread_mutex_unlock(&w->pub_mu);
    return at;
}

/* Once its scenarios are done a worker closes every connection it holds
 * (its VUs' and its transports' shared ones): the end of the run (teardown,
 * outputs, the summary and its files) must not find the descriptors used
 * up by a test that ran into the open-file limit. ll_worker_free frees
 * what is left. */
static void hang_up(ll_worker *w) {
    for (int e = 0; e < w->nexecutors; e++)
        for (int i = 0; i < w->executors[e].nvus; i++) ll_http_vu_free(&w->executors[e].vus[i].http);
    ll_http_worker_free(&w->http);
}

static void *thread_main(void *arg) {
    ll_worker *w = arg;
    ll_crash_enter(w);
    if (w->run->setup_json) {
        char err[256];
        if (w->run->script->decode(w, w->run->setup_json, &w->setup_ref, err, sizeof(err)) != 0)
            w->setup_ref = LL_SCRIPT_NOREF;
    }
    if (w->published) {
        ll_loop_timer_init(&w->pub_timer, publish, w);
        ll_loop_timer_start(w->loop, &w->pub_timer, PUBLISH_EVERY_US);
    }
    if (w->run->m_loop_lag > 0) {
        ll_loop_timer_init(&w->probe_timer, probe, w);
        w->probe_due = w->probe_at = ll_loop_now_ns();
        w->probe_idle = ll_loop_idle_ns(w->loop);
        probe_arm(w, w->probe_at);
    }
    w->active = w->nexecutors;
    for (int i = 0; i < w->nexecutors; i++) ll_executor_begin(&w->executors[i]);
    drive(w);
    if (w->run->m_loop_lag > 0) ll_loop_timer_stop(w->loop, &w->probe_timer);
    if (w->published) {
        ll_loop_timer_stop(w->loop, &w->pub_timer);
        publish_at(w, UINT64_MAX);
    }
    hang_up(w);
    ll_crash_leave();
    pthread_mutex_lock(&w->run->mu);
    w->finished = 1;
    w->run->finished++;
    pthread_cond_signal(&w->run->cv);
    pthread_mutex_unlock(&w->run->mu);
    return NULL;
}

int ll_worker_start_thread(ll_worker *w) {
    pthread_attr_t a;
    if (ll_cstack_attr(&a) != 0) return -1;
    int rc = pthread_create(&w->thread, &a, thread_main, w);
    pthread_attr_destroy(&a);
    return rc == 0 ? 0 : -1;
}

int ll_worker_join(ll_worker *w) { return pthread_join(w->thread, NULL); }

int ll_worker_call(ll_worker *w, const char *fname, const char *data_json, char **out_json, uint64_t timeout_us,
                   int timeout_rc) {
    *out_json = NULL;
    const char *type = NULL;
    if (!w->run->script->function(w, fname, &w->exec_ref, &type)) {
        if (strcmp(type, "nil") == 0) return 0;
        snprintf(w->errmsg, sizeof(w->errmsg), "%s is a %s, expected a function", fname, type);
        return w->rc = LL_EXIT_SCRIPT;
    }
    w->setup_ref = LL_SCRIPT_NOREF;
    if (data_json && w->run->script->decode(w, data_json, &w->setup_ref, w->errmsg, sizeof(w->errmsg)) != 0) {
        w->run->script->unref(w, w->exec_ref);
        w->exec_ref = LL_SCRIPT_NOREF;
        return w->rc = LL_EXIT_SCRIPT;
    }
    ll_vu *vu = &w->vus[0];
    if (!vu->w) ll_vu_init(vu, w, 0, &ll_vu_script_iter, call_done, w); /* setup(), teardown() */
    w->nvus = 1;
    w->single = 1;
    w->call_deadline_ns = timeout_us ? ll_loop_now_ns() + timeout_us * 1000 : 0;
    w->call_graceful_at_start = atomic_load(&w->run->interrupt) || atomic_load(&w->run->threshold_abort);
    int64_t cut_before = w->interrupted;
    w->call_name = fname;
    w->call_failed_reqs = 0;
    vu->last_error = NULL;
    vu->next_start_ns = 0;
    vu->alive = 1;
    w->active = 1;
    ll_vu_start_iteration(vu);
    drive(w);
    if (w->call_failed_reqs > LL_WORKER_CALL_WARNINGS)
        fprintf(stderr, "luaload: WARN %s(): %lld more request%s failed\n", fname,
                (long long)(w->call_failed_reqs - LL_WORKER_CALL_WARNINGS),
                w->call_failed_reqs - LL_WORKER_CALL_WARNINGS == 1 ? "" : "s");

    int rc = 0;
    if (atomic_load(&w->run->aborted)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() aborted the test: %s", fname, w->run->abort_reason);
        rc = w->rc = LL_EXIT_ABORTED;
    } else if (vu->last_error) { /* w->errmsg holds it */
        rc = w->rc = LL_EXIT_SCRIPT;
    } else if (w->interrupted != cut_before && atomic_load(&w->run->interrupt)) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() interrupted by a signal", fname);
        rc = w->rc = LL_EXIT_EXTERNAL_ABORT;
    } else if (w->interrupted != cut_before) {
        snprintf(w->errmsg, sizeof(w->errmsg), "%s() timed out after %.6gs", fname, (double)timeout_us / 1e6);
        rc = w->rc = timeout_rc;
    } else if (vu->result_ref != LL_SCRIPT_NOREF) {
        char why[256] = "";
        *out_json = w->run->script->encode(w, vu->result_ref, why, sizeof(why));
        w->run->script->unref(w, vu->result_ref);
        vu->result_ref = LL_SCRIPT_NOREF;
        if (!*out_json && why[0]) {
            snprintf(w->errmsg, sizeof(w->errmsg), "%s() returned a value that cannot be passed on: %s", fname, why);
            rc = w->rc = LL_EXIT_SCRIPT;
        }
    }
    w->run->script->unref(w, w->exec_ref);
    w->run->script->unref(w, w->setup_ref);
    w->exec_ref = w->setup_ref = LL_SCRIPT_NOREF;
    return rc;
}

/* ---- what the Lua bindings ask of a worker (script_host.h) ---- */

lua_State *ll_worker_lua(const ll_worker *w) { return w->L; }
void ll_worker_set_lua(ll_worker *w, lua_State *L) { w->L = L; }
struct ll_lua_cache *ll_worker_lua_cache(const ll_worker *w) { return w->lua_cache; }
void ll_worker_set_lua_cache(ll_worker *w, struct ll_lua_cache *c) { w->lua_cache = c; }
void ll_worker_set_error(ll_worker *w, const char *msg) { snprintf(w->errmsg, sizeof(w->errmsg), "%s", msg); }
int ll_worker_index(const ll_worker *w) { return w->index; }
ll_loop *ll_worker_loop(const ll_worker *w) { return w->loop; }
ll_resolver *ll_worker_dns(ll_worker *w) { return ll_http_worker_dns(&w->http); }
ll_vu *ll_worker_current(const ll_worker *w) { return w->current; }
ll_registry *ll_worker_registry(const ll_worker *w) { return w->run->reg; }

ll_host_script ll_worker_script(const ll_worker *w) {
    const ll_run *run = w->run;
    ll_host_script s = {run->script_path, run->script_source, run->chunkname, run->lib_dir, run->env, run->nenv};
    return s;
}

FILE *ll_worker_console(const ll_worker *w) { return w && w->run && w->run->console ? w->run->console : stderr; }
int ll_worker_verbose(const ll_worker *w) { return w && w->run && w->run->verbose; }
const char *ll_worker_options_json(const ll_worker *w) { return w && w->run ? w->run->options_json : NULL; }

uint64_t ll_worker_seed(const ll_worker *w) {
    return w->run && w->run->seed ? *w->run->seed : ll_rng_entropy_seed();
}

const ll_transport_ops *ll_worker_transport(const ll_worker *w) { return w->run->transport; }

void ll_worker_client_overrides(const ll_worker *w, ll_client_opts *o) {
    if (w->run->insecure_skip_verify) o->insecure_skip_verify = 1;
    o->http_debug = w->run->http_debug;
}

int ll_worker_rate_limited(const ll_worker *w) { return w && w->run && w->run->rps_interval_ns; }
const atomic_int *ll_worker_interrupt_flag(const ll_worker *w) { return &w->run->interrupt; }
int ll_worker_new_client_slot(ll_worker *w) { return w->nclients++; }
uint64_t ll_worker_new_client_uid(ll_worker *w) { return ++w->next_client_uid; }

const char *ll_worker_abort(ll_worker *w, const char *reason) {
    ll_run_abort(w->run, reason);
    return w->run->abort_reason;
}

void ll_worker_mark_failed(ll_worker *w) {
    if (w->run) atomic_store(&w->run->marked_failed, 1);
}

int ll_worker_end_scenarios(ll_worker *w) {
    int expected = 0;
    return w->run && atomic_compare_exchange_strong(&w->run->scenarios_ended, &expected, 1);
}

const ll_segment_tuple *ll_worker_segment(const ll_worker *w) { return w->run ? w->run->tuple : NULL; }

void ll_worker_number_iterations(ll_worker *w) {
    if (w->run) atomic_store_explicit(&w->run->number_iters, 1, memory_order_relaxed);
}

uint64_t ll_worker_test_start_ns(const ll_worker *w) { return w->run ? w->run->t0 : 0; }
int64_t ll_worker_test_start_unix_ms(const ll_worker *w) { return w->run ? w->run->t0_unix_ms : 0; }

int64_t ll_worker_instance_count(const ll_worker *w, ll_instance_counter which) {
    const ll_run *run = w->run;
    int64_t n = 0;
    for (int i = 0; run && run->workers && i < run->nworkers; i++) {
        ll_worker *o = &run->workers[i];
        if (which == LL_INSTANCE_ITERATIONS_INTERRUPTED) {
            n += atomic_load_explicit(&o->interrupted, memory_order_relaxed);
            continue;
        }
        for (int s = 0; s < o->nexecutors; s++) {
            ll_executor *e = &o->executors[s];
            if (which == LL_INSTANCE_VUS_ACTIVE) n += atomic_load_explicit(&e->active_vus, memory_order_relaxed);
            else if (which == LL_INSTANCE_VUS_MADE) n += atomic_load_explicit(&e->made_vus, memory_order_relaxed);
            else n += atomic_load_explicit(&e->done_iters, memory_order_relaxed);
        }
    }
    return n;
}
