/* quick_native.c -- quick mode's native iterations: each iteration of a
 * VU sends the next URL's prepared request straight on the transport,
 * records k6's metrics of every hop (http_exchange.c), waits the think
 * time on the VU's timer and ends, with no Lua at all. The requests and
 * the client options are made once from the flags (ll_quick_plan_new) and
 * read by every worker; each VU has its own connection, as a script's
 * http.Client gives it.
 *
 * JWTs (--jwt-key/--jwt-secret, -f): every request takes the next token
 * of a token stream (token_stream.h) through its worker's cursor, into the
 * VU's own copy of the request: from the cache when the count is known
 * (-r, -i: pre-generated on every core before the test, jwt_cache.h),
 * signed ahead by a background thread otherwise, or from the user's
 * file. A file that runs out stops the test, saying so. */
#include "quick_native.h"
#include "quick_mode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "duration.h"
#include "http_exchange.h"
#include "jwt_cache.h"
#include "redirect.h"
#include "rng.h"
#include "token_stream.h"
#include "worker.h"
#include "xmalloc.h"

/* the uid of quick mode's one client in every VU's connection slots (the
 * script's Clients count up from 1 and never reach it) */
#define QUICK_CLIENT_UID UINT64_MAX

struct ll_quick_plan {
    ll_http_req *reqs;
    int n;
    ll_client_opts opts;
    uint64_t think_min_us, think_max_us;
    int body_fd;                /* --body-file, or -1 */
    ll_jwt_gen *gen;            /* --jwt-key / --jwt-secret, or NULL */
    ll_token_stream *tokens;    /* a JWT per request, or NULL */
    const char *token_file;     /* the user's file it reads, or NULL */
    int from_cache;             /* it reads the JWT cache (pre-generated) */
    char *token_name;           /* the header it goes in */
    int bearer;                 /* "Bearer " before it (Authorization) */
};

/* The token stream of the --jwt-* flags or -f: the user's file, the cache
 * (n known: pre-generated now), or live signing threads. */
static int open_tokens(ll_quick_plan *p, const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen) {
    const ll_quick *q = &cfg->quick;
    char why[512], path[4096];
    if (q->jwts_file) {
        p->token_file = q->jwts_file;
        p->tokens = ll_token_stream_open(q->jwts_file, why, sizeof(why));
        if (!p->tokens) snprintf(err, errlen, "-f: %s", why);
        return p->tokens ? 0 : -1;
    }
    uint64_t exp_us = 0;
    if (q->jwt_exp && ll_duration_parse(q->jwt_exp, &exp_us) != 0) exp_us = 0;
    ll_jwt_settings st = {q->jwt_key, q->jwt_secret, q->jwt_secret ? strlen(q->jwt_secret) : 0, q->jwt_alg,
                          q->jwt_kid, q->jwt_sub, q->jwt_aud, q->jwt_iss, (int64_t)(exp_us / 1000000), q->jwt_claims, 0};
    if (!(p->gen = ll_jwt_gen_new(&st, why, sizeof(why)))) {
        snprintf(err, errlen, "--jwt-%s: %s", q->jwt_key ? "key" : "secret", why);
        return -1;
    }
    int64_t n = q->requests ? q->requests : cfg->run.iterations_set ? cfg->run.iterations : 0;
    if (n > 0) { /* as gopayloader: all of them ahead, from the cache when it has them */
        ll_jwt_cache_opts o = {q->jwt_cache, 0, 0, stop};
        if (ll_jwt_cache_ensure(p->gen, (uint64_t)n, &o, path, sizeof(path), why, sizeof(why)) != 0) {
            snprintf(err, errlen, "jwt: %s", why);
            return -1;
        }
        p->from_cache = 1;
        p->tokens = ll_token_stream_open(path, why, sizeof(why));
    } else {
        p->tokens = ll_token_stream_live(p->gen, 65536, 1, why, sizeof(why));
    }
    if (!p->tokens) snprintf(err, errlen, "jwt: %s", why);
    return p->tokens ? 0 : -1;
}

static int version_of(const char *v) {
    if (!v) return LL_HTTP_DEFAULT;
    return strcmp(v, "1.1") == 0 ? LL_HTTP_1_1 : strcmp(v, "2") == 0 ? LL_HTTP_2 : LL_HTTP_3;
}

/* the request for url, from the flags (-m, -H, -b, --body-file) */
static int make_request(ll_http_req *r, const char *url, const ll_quick *q, int body_fd, uint64_t body_len) {
    ll_http_req_init(r);
    const char *method = q->method ? q->method : (q->body || q->body_file) ? "POST" : "GET";
    if (ll_http_req_set_url(r, url) < 0 || ll_http_req_set_method(r, method) < 0) return -1;
    for (int i = 0; i < q->nheaders; i++) {
        const char *h = q->headers[i], *colon = strchr(h, ':'), *value = colon + 1;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(colon - h), h);
        while (*value == ' ' || *value == '\t') value++;
        if (ll_http_req_add_header(r, name, value) < 0) return -1;
    }
    if (q->body && ll_body_set_memory(&r->body, q->body, strlen(q->body)) < 0) return -1;
    if (body_fd >= 0) ll_body_set_file(&r->body, body_fd, 0, body_len);
    r->response_type = LL_RESPONSE_NONE;
    r->http_version = -1; /* the client's */
    r->max_redirects = -1;
    return ll_http_req_apply_auth(r); /* the URL's credentials, as Basic (as curl and wrk's Lua do) */
}

ll_quick_plan *ll_quick_plan_new(const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen) {
    const ll_quick *q = &cfg->quick;
    ll_quick_plan *p = ll_xcalloc(1, sizeof(*p));
    p->body_fd = -1;
    uint64_t body_len = 0;
    if (q->body_file) {
        struct stat st;
        p->body_fd = open(q->body_file, O_RDONLY | O_CLOEXEC);
        if (p->body_fd < 0 || fstat(p->body_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "--body-file: cannot read %s: %s", q->body_file,
                     p->body_fd < 0 ? strerror(errno) : "not a regular file");
            ll_quick_plan_free(p);
            return NULL;
        }
        body_len = (uint64_t)st.st_size;
    }
    p->reqs = ll_xcalloc((size_t)q->nurls, sizeof(*p->reqs));
    for (; p->n < q->nurls; p->n++)
        if (make_request(&p->reqs[p->n], q->urls[p->n], q, p->body_fd, body_len) < 0) goto oom;
    ll_client_opts *o = &p->opts;
    o->timeout_ms = 60000; /* k6's default; --read/--write-timeout: the larger */
    uint64_t t = q->read_timeout_us > q->write_timeout_us ? q->read_timeout_us : q->write_timeout_us;
    if (t) o->timeout_ms = (long)((t + 999) / 1000);
    o->max_redirects = LL_REDIRECTS_DEFAULT;
    o->http_version = version_of(q->http_version);
    o->multiplex = q->multiplex;
    o->disable_keep_alive = q->disable_keep_alive;
    o->insecure_skip_verify = q->insecure || cfg->insecure_skip_verify; /* --skip-verify, or k6's flag */
    o->http_debug = cfg->http_debug;
    o->discard_bodies = LL_RESPONSE_NONE;
    if (q->mtls_cert) {
        o->certificate = ll_xstrdup(q->mtls_cert);
        o->private_key = ll_xstrdup(q->mtls_key);
    }
    p->think_min_us = q->think_min_us;
    p->think_max_us = q->think_max_us;
    if (q->jwt_key || q->jwt_secret || q->jwts_file) {
        const char *name = q->jwt_header ? q->jwt_header : "Authorization";
        p->bearer = strcasecmp(name, "Authorization") == 0;
        p->token_name = ll_xstrdup(name);
        if (open_tokens(p, cfg, stop, err, errlen) != 0) {
            ll_quick_plan_free(p);
            return NULL;
        }
    }
    return p;
oom:
    snprintf(err, errlen, "out of memory");
    ll_quick_plan_free(p);
    return NULL;
}

void ll_quick_plan_report(const ll_quick_plan *p, FILE *f) {
    if (!p || !p->tokens) return;
    unsigned long long sent = (unsigned long long)ll_token_stream_handed(p->tokens);
    if (p->token_file || p->from_cache) {
        fprintf(f, "     jwt tokens.....................: %llu from %s\n\n", sent,
                p->token_file ? p->token_file : "the cache (made ahead)");
        return;
    }
    unsigned long long behind = (unsigned long long)ll_token_stream_fell_behind(p->tokens);
    fprintf(f, "     jwt tokens.....................: %llu signed during the run, %s\n\n", sent,
            behind ? "the signer fell behind" : "the signer kept ahead");
    if (behind) fprintf(f, "     (%llu requests waited for a token to be signed)\n\n", behind);
}

void ll_quick_plan_free(ll_quick_plan *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) ll_http_req_clear(&p->reqs[i]);
    free(p->reqs);
    free(p->opts.certificate);
    free(p->opts.private_key);
    if (p->body_fd >= 0) close(p->body_fd);
    if (p->tokens) ll_token_stream_close(p->tokens);
    ll_jwt_gen_free(p->gen);
    free(p->token_name);
    free(p);
}

/* ---- an iteration ---- */

static const ll_http_judge K6_JUDGE = {NULL, 1}; /* 200 to 399 are expected */

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud);

/* splitmix64 on the VU's generator state (seeded from the run's seed; no
 * Lua draws from it in quick mode) */
static uint64_t next_draw(ll_vu *vu) { return ll_rng_splitmix64(&vu->rng[0]); }

static void think_over(ll_loop *loop, void *ud) {
    ll_vu *vu = ud;
    ll_loop_timer_stop(loop, &vu->timer);
    ll_vu_native_done(vu);
}

static void cancel_think(void *ud) {
    ll_vu *vu = ud;
    ll_loop_timer_stop(vu->w->loop, &vu->timer);
}

/* the request cut off by the end of the test: counted as k6 counts it */
static void cancel_request(void *ud) {
    ll_vu *vu = ud;
    ll_http_exchange_cancel(vu, &vu->http.call, &K6_JUDGE);
}

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    ll_http_call *call = ud;
    ll_vu *vu = call->owner;
    const ll_quick_plan *p = ll_quick_mode_plan(vu->w->run->mode);
    call->x = NULL;
    ll_http_exchange_record(vu, x->req, x->method, r, &K6_JUDGE);
    ll_http_vu_store_cookies(&vu->http, x->req->url, r, (int64_t)time(NULL));
    if (ll_http_exchange_follow(vu, call, x, x->req, x->method, r, on_done)) return;
    x->tp->ops->release(x);
    if (!p->think_max_us) {
        ll_vu_native_done(vu);
        return;
    }
    uint64_t span = p->think_max_us - p->think_min_us;
    uint64_t wait = p->think_min_us + (span ? next_draw(vu) % (span + 1) : 0);
    vu->timer.fn = think_over;
    ll_loop_timer_start(vu->w->loop, &vu->timer, wait);
    ll_vu_wait(vu, cancel_think, vu);
}

void ll_quick_native_vu_free(ll_vu *vu) {
    ll_http_req_clear(vu->mode_data);
    free(vu->mode_data);
    vu->mode_data = NULL;
}

void ll_quick_native_worker_free(ll_worker *w) {
    ll_token_stream_cursor_free(w->mode_data);
    w->mode_data = NULL;
}

/* req with the next token, in the VU's own copy (its dyn_header, so the
 * transport rewrites that line alone); NULL when there is none: *why (or
 * err) says why, *out when the file ran out */
static const ll_http_req *with_token(ll_vu *vu, const ll_quick_plan *p, const ll_http_req *req, const char **why,
                                     int *out, char *err, size_t errlen) {
    ll_worker *w = vu->w;
    const char *tok;
    size_t len;
    *out = 0;
    if (!w->mode_data && !(w->mode_data = ll_token_stream_cursor(p->tokens))) {
        *why = "out of memory";
        return NULL;
    }
    int rc = ll_token_stream_next(w->mode_data, &tok, &len, err, errlen);
    if (rc <= 0) {
        *out = rc == 0;
        *why = rc == 0 ? "no token left" : err;
        return NULL;
    }
    ll_http_req *r = vu->mode_data; /* its request with a token */
    if (!r || r->url == NULL || strcmp(r->url, req->url) != 0) { /* a new copy when the URL changes */
        if (!r) r = vu->mode_data = ll_xcalloc(1, sizeof(*r));
        ll_http_req_clear(r);
        ll_http_req_init(r);
        if (ll_http_req_copy(r, req) < 0 || ll_http_req_add_header(r, p->token_name, "-") < 0) goto oom;
        r->dyn_header = r->nheaders - 1;
    }
    ll_header *h = &r->headers[r->nheaders - 1];
    char *v = malloc(len + 8);
    if (!v) goto oom;
    memcpy(v, "Bearer ", p->bearer ? 7 : 0);
    memcpy(v + (p->bearer ? 7 : 0), tok, len);
    v[len + (p->bearer ? 7 : 0)] = 0;
    free(h->value);
    h->value = v;
    r->dyn_gen++; /* the transport rewrites that one header line */
    return r;
oom:
    *why = "out of memory";
    return NULL;
}

void ll_quick_native_start(ll_vu *vu) {
    ll_worker *w = vu->w;
    const ll_quick_plan *p = ll_quick_mode_plan(w->run->mode);
    const ll_http_req *req = &p->reqs[(uint64_t)(vu->id - 1 + vu->iteration) % (uint64_t)p->n]; /* round-robin */
    if (p->tokens) {
        const char *why = NULL;
        char err[256];
        int out = 0;
        req = with_token(vu, p, req, &why, &out, err, sizeof(err));
        if (!req && out) { /* every token was used: the test cannot go on as asked */
            char msg[300];
            unsigned long long n = (unsigned long long)ll_token_stream_handed(p->tokens);
            if (p->token_file) snprintf(msg, sizeof(msg), "-f %s: every token was used (%llu)", p->token_file, n);
            else snprintf(msg, sizeof(msg), "jwt: the %llu pre-generated tokens were all used", n);
            ll_run_abort(w->run, msg);
        }
        if (!req) {
            ll_errors_add(&w->errors, why, LL_WORKER_SCRIPT_ERRORS_MAX);
            ll_vu_native_done(vu);
            return;
        }
    }
    ll_transport *tp = ll_http_worker_transport(&w->http, ll_transport_pick(&p->opts, req, w->run->transport));
    ll_transfer *x = tp ? ll_http_vu_transfer(&vu->http, tp, vu->index, 0, 0, QUICK_CLIENT_UID, -1, &p->opts) : NULL;
    const char *err = "cannot make a connection slot";
    ll_http_call *call = &vu->http.call;
    call->owner = vu;
    call->lane = 0;
    call->index = 0;
    call->redirects_left = LL_REDIRECTS_DEFAULT;
    call->discard = 1;
    const char *cookie = ll_http_vu_cookie(&vu->http, req, (int64_t)time(NULL));
    if (x && tp->ops->start(x, req, req->method, cookie, on_done, call, &err) == 0) {
        call->x = x;
        vu->yielded = 1; /* it waits: its next iteration may start at once */
        ll_vu_wait(vu, cancel_request, vu);
        return;
    }
    ll_errors_add(&w->errors, err, LL_WORKER_SCRIPT_ERRORS_MAX); /* as a script error: the iteration fails */
    ll_vu_native_done(vu);
}
