/* serve.c -- `luaload serve`, the built-in HTTP/1.1 target server: the
 * subcommand itself.
 *
 * Owns: the serve subcommand's flags (usage, parsing into a serve_cfg) and
 * ll_serve_main, which raises the descriptor limit, opens one listener and
 * event loop per worker thread (listener.c), seeds each worker's fault draw,
 * starts the threads, stops them on SIGINT/SIGTERM or --die-after's SIGALRM,
 * prints the stats line and frees everything. Connections are conn.c's,
 * request parsing request.c's, responses routes.c's, faults faults.c's,
 * --echo-header's counting headers.c's, the counters' JSON stats.c's. */
#include "serve.h"
#include "addr.h"
#include "xmalloc.h"
#include "duration.h"
#include "size.h"
#include "exit.h"
#include "flags.h"
#include "serve_internal.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

/* ---- flags ---- */

/* A setter that can say more than "expected ..." writes its reason here. */
static char flag_why[256];

static int parse_u64(const char *s, uint64_t *out) { return ll_request_parse_u64n(s, strlen(s), out); }

static int parse_int_range(const char *s, int lo, int hi, int *out) {
    uint64_t v;
    if (parse_u64(s, &v) < 0 || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
    *out = (int)v;
    return 0;
}

static int set_host(serve_cfg *cfg, const char *v) {
    if (ll_addr_parse(v, 0, &cfg->addr, &cfg->addrlen) != 0) return -1; /* the port is set when it listens */
    const void *ip = cfg->addr.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&cfg->addr)->sin6_addr
                                                      : (const void *)&((struct sockaddr_in *)&cfg->addr)->sin_addr;
    inet_ntop(cfg->addr.ss_family, ip, cfg->host_text, sizeof(cfg->host_text));
    return 0;
}

static int set_port(serve_cfg *cfg, const char *v) { return parse_int_range(v, 0, 65535, &cfg->port); }
static int set_threads(serve_cfg *cfg, const char *v) { return parse_int_range(v, 1, MAX_THREADS, &cfg->threads); }
static int set_status(serve_cfg *cfg, const char *v) { return parse_int_range(v, 100, 999, &cfg->status); }
/* "4096", "64k", "1M", "1MiB" (size.h: binary units) */
static int set_body_size(serve_cfg *cfg, const char *v) {
    int64_t n;
    if (ll_size_parse(v, &n) != 0) return -1;
    cfg->body_size = (uint64_t)n;
    return 0;
}
static int set_delay(serve_cfg *cfg, const char *v) { return ll_duration_parse(v, &cfg->delay_us); }
static int set_faults(serve_cfg *cfg, const char *v) { return ll_faults_parse(cfg, v, flag_why, sizeof(flag_why)); }

static int set_seed(serve_cfg *cfg, const char *v) {
    cfg->seed_set = 1;
    return parse_u64(v, &cfg->seed);
}

static int set_echo_header(serve_cfg *cfg, const char *v) {
    return ll_headers_add_name(cfg, v, flag_why, sizeof(flag_why));
}

static int set_echo_header_limit(serve_cfg *cfg, const char *v) {
    return parse_u64(v, &cfg->hdr_limit) < 0 || cfg->hdr_limit > 1000000000 ? -1 : 0;
}

static int set_die_after(serve_cfg *cfg, const char *v) {
    if (ll_duration_parse(v, &cfg->die_after_us) < 0 || cfg->die_after_us == 0) return -1;
    return 0;
}

static const struct flag {
    const char *name;
    const char *expect;
    int (*set)(serve_cfg *cfg, const char *value);
} flags[] = {
    {"--host", "an IP address such as 127.0.0.1 or ::1", set_host},
    {"--port", "an integer from 0 to 65535", set_port},
    {"--threads", "an integer from 1 to 1024", set_threads},
    {"--body-size", "a byte count such as 12, 64k or 1m", set_body_size},
    {"--status", "an integer from 100 to 999", set_status},
    {"--delay", "a duration such as 0, 250us, 10ms, 1.5s, 2m or 1h", set_delay},
    {"--faults", "NAME=PERCENT items such as reset=1%,stall=0.5%", set_faults},
    {"--seed", "an integer from 0 to 18446744073709551615", set_seed},
    {"--die-after", "a duration above 0 such as 500ms, 2s or 1m", set_die_after},
    {"--echo-header", "a header name such as Authorization", set_echo_header},
    {"--echo-header-limit", "an integer from 0 to 1000000000", set_echo_header_limit},
};

/* The flags as luaload's help, completion and command reference see them
 * (flags[] above checks their values). */
static const ll_flag SERVE_FLAGS[] = {
    {NULL, "--host", NULL, "ADDR", NULL, "address to listen on (default 127.0.0.1; ::1 for IPv6)"},
    {NULL, "--port", NULL, "N", NULL, "port (default 8080; 0 picks a free port)"},
    {NULL, "--threads", NULL, "N", NULL, "worker threads (default: number of online CPUs)"},
    {NULL, "--body-size", NULL, "N", NULL,
     "default route's body size, k/m suffixes (default 12: \"hello world\\n\"; otherwise N 'x' bytes)"},
    {NULL, "--status", NULL, "N", NULL, "default route's status, 100..999 (default 200)"},
    {NULL, "--delay", NULL, "DURATION", NULL,
     "delay before each default-route response (0, 250us, 10ms, 1.5s, 2m, 1h; default 0)"},
    {NULL, "--faults", NULL, "SPEC", NULL,
     "inject at most one fault per request with these chances, e.g. reset=1%,close-body=0.5%,stall=0.1% "
     "(sum <= 100%); faults: reset, close-headers, close-body, garbage, slow-headers, slow-body, stall, "
     "huge-headers, early-hints"},
    {NULL, "--seed", NULL, "N", NULL, "seed of the fault draw (default: from the time and pid)"},
    {NULL, "--die-after", NULL, "DUR", NULL, "exit by itself DUR after it starts listening (e.g. 2s)"},
    {NULL, "--echo-header", NULL, "NAME", NULL,
     "count the requests with header NAME (any case) and its distinct values, in /stats' \"headers\" (up to 8 "
     "names)"},
    {NULL, "--echo-header-limit", NULL, "N", NULL,
     "values each name's exact set holds (default 4000000); past it \"distinct\" is an estimate"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_serve_flag_groups[1] = {{NULL, SERVE_FLAGS, (int)(sizeof(SERVE_FLAGS) / sizeof(SERVE_FLAGS[0]))}};

const char ll_serve_h2_notes[] =
    "HTTP/2 with prior knowledge (h2c) on the same port answers gRPC only, as an echo: a POST with\n"
    "content-type application/grpc to any /package.Service/Method gets each request message back as\n"
    "soon as it has arrived, and grpc-status 0 when the client ends its stream; request metadata\n"
    "x-echo-status: N (0..16) ends the call with status N instead (nothing echoed); a compressed or\n"
    "malformed message ends it with 13 (INTERNAL). Anything else over HTTP/2 gets a 404.\n";

static void usage(FILE *f) {
    fputs("usage: luaload serve [options]\n"
          "\n"
          "Runs a fast HTTP/1.1 keep-alive server to point load tests at; stops on\n"
          "SIGINT/SIGTERM (or --die-after) and prints what it counted on stderr.\n"
          "\n",
          f);
    ll_flag_usage(f, ll_serve_flag_groups, 1);
    fputs("\n"
          "Routes (the query string is ignored, except by /ws/ and /sse):\n"
          "  /status/NNN   respond with status NNN\n"
          "  /bytes/N      respond with N bytes\n"
          "  /delay/MS     respond after MS milliseconds\n"
          "  /echo         respond with the request body\n"
          "  /close        respond, then close the connection\n"
          "  /sha256       the SHA-256 of the request body (X-Body-Size: its size)\n"
          "  /multipart    the parts of a multipart/form-data body, as JSON\n"
          "  /api/login, /api/items[/ID]   the demo application's JSON API (token auth)\n"
          "  /login, /welcome              its form login (CSRF token, session cookie)\n"
          "  /fault/NAME   the fault NAME (see --faults), whatever --faults says\n"
          "  /ws/echo      WebSocket: echoes each message, answers pings, echoes the close\n"
          "  /ws/send?n=N&size=B&interval=MS\n"
          "                WebSocket: N text messages of B bytes MS apart, then close 1000\n"
          "  /sse?n=N&interval=MS&event=NAME&retry=MS&lines=L\n"
          "                N server-sent events MS apart, then the end of the stream\n"
          "  /stats        JSON counts of requests, bytes, routes, faults, methods,\n"
          "                connections, WebSocket sessions, SSE streams and\n"
          "                --echo-header's headers so far\n"
          "                (not counted itself; never faulted)\n"
          "  anything else the default route (--status, --body-size, --delay)\n"
          "\n",
          f);
    fputs(ll_serve_h2_notes, f);
}

/* Returns -1 to go on serving, otherwise the exit code. */
static int parse_args(serve_cfg *cfg, int argc, char **argv) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    memset(cfg, 0, sizeof(*cfg));
    set_host(cfg, "127.0.0.1");
    cfg->port = 8080;
    cfg->threads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
    cfg->status = 200;
    cfg->body_size = 12;
    cfg->hdr_limit = HEADERS_LIMIT_DEFAULT;
    flag_why[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return LL_EXIT_OK;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const struct flag *f = NULL;
        for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
            if (strlen(flags[k].name) == name_len && strncmp(arg, flags[k].name, name_len) == 0) f = &flags[k];
        if (!f) {
            char name[64], hint[96] = "";
            ll_flag_split(arg, name, sizeof(name));
            if (arg[0] == '-') ll_flag_hint(hint, sizeof(hint), ll_serve_flag_groups, 1, name);
            fprintf(stderr, "luaload serve: unknown %s '%s'%s (see luaload serve --help)\n",
                    arg[0] == '-' ? "flag" : "argument", arg, hint);
            return LL_EXIT_CONFIG;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!value) {
            fprintf(stderr, "luaload serve: %s: missing value, expected %s\n", f->name, f->expect);
            return LL_EXIT_CONFIG;
        }
        if (f->set(cfg, value) < 0) {
            if (flag_why[0]) fprintf(stderr, "luaload serve: %s: %s\n", f->name, flag_why);
            else fprintf(stderr, "luaload serve: %s: expected %s, got '%s'\n", f->name, f->expect, value);
            return LL_EXIT_CONFIG;
        }
    }
    return -1;
}

/* ---- signals and threads ---- */

static void on_stop_signal(int sig) {
    (void)sig;
    ll_listener_set_stop(1);
}

/* --die-after: SIGALRM (on_stop_signal) once, us after now; 0 disarms. */
static void set_die_timer(uint64_t us) {
    struct itimerval it;
    memset(&it, 0, sizeof(it));
    it.it_value.tv_sec = (time_t)(us / 1000000);
    it.it_value.tv_usec = (suseconds_t)(us % 1000000);
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Without --seed: the time and the pid, so runs differ. */
static uint64_t default_seed(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
}

static void print_stats(const worker *ws, int n) {
    ll_buf b = {0};
    ll_stats_json(&b, ws, n);
    if (!b.failed) fprintf(stderr, "luaload serve: stats %s\n", b.p);
    ll_buf_free(&b);
}

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max) return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

int ll_serve_main(int argc, char **argv) {
    serve_cfg cfg;
    worker *ws = NULL;
    struct sigaction sa, old_int, old_term, old_alrm;
    int code = parse_args(&cfg, argc, argv);
    int port, v6, started = 0, signals_set = 0;
    if (code >= 0) return code;
    code = LL_EXIT_FAILURE;
    raise_nofile();
    ll_conn_fill_init();
    ll_faults_init();
    ll_listener_set_stop(0);
    ws = ll_xcalloc((size_t)cfg.threads, sizeof(*ws));
    cfg.workers = ws;
    if (!cfg.seed_set) cfg.seed = default_seed();
    ll_routes_build_fast(&cfg);
    ll_app_init();
    for (int i = 0; i < cfg.threads; i++) {
        ws[i].lfd = -1;
        ll_faults_seed(&ws[i], cfg.seed, i);
    }
    if (ll_headers_init(&cfg) < 0) goto out;
    if (cfg.port != 0 && ll_listener_probe_port(&cfg) < 0) goto out;
    port = cfg.port;
    for (int i = 0; i < cfg.threads; i++)
        if (ll_listener_setup(&ws[i], &cfg, port, &port) < 0) goto out;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGALRM, &sa, &old_alrm);
    signals_set = 1;

    v6 = cfg.addr.ss_family == AF_INET6;
    printf("luaload serve: listening on http://%s%s%s:%d/ (%d threads)\n", v6 ? "[" : "", cfg.host_text,
           v6 ? "]" : "", port, cfg.threads);
    if (cfg.faults_on) printf("luaload serve: injecting faults, --seed %" PRIu64 "\n", cfg.seed);
    fflush(stdout);
    if (cfg.die_after_us) set_die_timer(cfg.die_after_us);

    code = LL_EXIT_OK;
    for (; started < cfg.threads; started++) {
        int err = pthread_create(&ws[started].tid, NULL, ll_listener_run, &ws[started]);
        if (err != 0) {
            fprintf(stderr, "luaload serve: cannot start a thread: %s\n", strerror(err));
            ll_listener_set_stop(1);
            code = LL_EXIT_FAILURE;
            break;
        }
    }
    for (int i = 0; i < started; i++) pthread_join(ws[i].tid, NULL);
    if (code == LL_EXIT_OK) print_stats(ws, cfg.threads);

out:
    if (signals_set) {
        set_die_timer(0);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGALRM, &old_alrm, NULL);
    }
    for (int i = 0; i < cfg.threads; i++) ll_listener_free(&ws[i]);
    free(ws);
    free(cfg.fast);
    ll_headers_free(&cfg);
    ll_app_free();
    return code;
}
