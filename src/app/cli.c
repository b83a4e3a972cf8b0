/* cli.c -- `luaload run` and `luaload merge` flags -> ll_config, and the
 * choice between a script and a URL (quick mode, URL checked). The
 * LUALOAD_* environment variables, which sit between the flags and the
 * script's options, are config.c's (the engine reads them). */
#include "cli.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "duration.h"
#include "http_req.h"
#include "quick.h"
#include "transport.h"
#include "xmalloc.h"

/* luaload run's flags (quick mode's are quick.c's). */
static const ll_flag RUN_FLAGS[] = {
    {"-u", "--vus", NULL, "N", NULL, "virtual users (default 1)"},
    {"-c", "--connections", NULL, "N", NULL, "the same as --vus (wrk's and hey's name)"},
    {"-d", "--duration", NULL, "D", NULL, "test duration, e.g. 30s, 1m30s"},
    {"-i", "--iterations", NULL, "N", NULL, "iterations shared by all VUs"},
    {"-s", "--stage", NULL, "D:N", NULL, "ramp to N VUs over D (repeatable): -s 30s:100 -s 1m:100"},
    {"-w", "--workers", NULL, "N", NULL, "worker threads (default: one per core)"},
    {"-e", "--env", NULL, "KEY=VALUE", NULL, "a script environment variable, in __ENV (repeatable)"},
    {NULL, "--graceful-stop", NULL, "D", NULL, "time for running iterations to finish (default 30s)"},
    {NULL, "--summary-export", NULL, "FILE", "@file", "write the end-of-test summary as JSON (k6's format)"},
    {NULL, "--summary-trend-stats", NULL, "LIST", NULL, "trend stats in the summary, e.g. avg,p(99),p(99.99),count"},
    {NULL, "--summary-time-unit", NULL, "UNIT", "s ms us", "time unit of the summary: s, ms or us"},
    {NULL, "--no-summary", NULL, NULL, NULL, "do not print the end-of-test summary"},
    {NULL, "--no-thresholds", NULL, NULL, NULL, "do not evaluate thresholds"},
    {NULL, "--no-color", NULL, NULL, NULL, "a summary without colors (also NO_COLOR=1)"},
    {"-o", "--out", NULL, "TYPE=TARGET",
     "json= csv= influxdb= experimental-prometheus-rw html= web-dashboard hdrlog=",
     "stream every sample: json=FILE, csv=FILE (.gz: gzip), influxdb=http://127.0.0.1:8086/k6, "
     "experimental-prometheus-rw (K6_PROMETHEUS_RW_*); the run's own: html=FILE (the report), web-dashboard "
     "(K6_WEB_DASHBOARD_*: the report served live), hdrlog=FILE (for luaload merge) (repeatable)"},
    {NULL, "--seed", NULL, "N", NULL, "seed of math.random, to repeat a run (default: random, printed in the banner)"},
    {"-q", "--quiet", NULL, NULL, NULL, "print nothing but errors and the summary"},
    {"-v", "--verbose", NULL, NULL, NULL, "show console.debug lines too"},
    {NULL, "--console-output", NULL, "FILE", "@file", "write console.* lines to FILE instead of stderr"},
    {NULL, "--threshold", NULL, "M=EXPR", NULL, "a threshold, e.g. 'http_req_duration=p(95)<200' (repeatable)"},
    {NULL, "--tag", NULL, "NAME=VALUE", NULL, "a tag on every sample of the test, over options.tags (repeatable)"},
    {NULL, "--rps", NULL, "N", NULL,
     "at most N requests/s over all VUs (k6's rps; the wait is not in the request's or iteration's timings)"},
    {NULL, "--http-debug", NULL, NULL, NULL,
     "print every request and response on stderr, headers only; --http-debug=full: the bodies too"},
    {NULL, "--insecure-skip-tls-verify", NULL, NULL, NULL, "no Client verifies the server's certificate"},
    {NULL, "--fail-when-all-iterations-fail", NULL, NULL, NULL,
     "exit 107 when every iteration failed with a script error (else a warning)"},
    {NULL, "--dns", NULL, "LIST", NULL,
     "name resolution, k6's dns option: ttl=5m (0: no cache, inf: forever), select=random|first|roundRobin, "
     "policy=preferIPv4|preferIPv6|onlyIPv4|onlyIPv6|any, e.g. ttl=1m,select=first"},
    {NULL, "--local-ips", NULL, "LIST", NULL,
     "source addresses handed to VUs in turn: addresses, ranges and CIDRs, e.g. 10.0.0.10,10.0.0.20-10.0.0.30,10.0.1.0/27"},
    {NULL, "--transport", NULL, "T", "native curl",
     "native or curl for every request (default: native for HTTP/1.1, HTTP/2 and HTTP/3, curl for proxies and NTLM)"},
    {NULL, "--execution-segment", NULL, "A:B", NULL, "run only this part of the test, e.g. 1/4:2/4 (k6's)"},
    {NULL, "--execution-segment-sequence", NULL, "LIST", NULL, "all the parts, e.g. 0,1/4,2/4,3/4,1"},
    {NULL, "--shard", NULL, "I/N", NULL, "the I-th of N equal parts (both of the above)"},
    {"-p", "--paused", NULL, NULL, NULL, "wait before setup() until PATCH /v1/status {\"paused\": false}"},
    {"-a", "--address", NULL, "ADDR", NULL,
     "serve k6's REST status API on ADDR (default with --paused: 127.0.0.1:6565)"},
    {NULL, "--start-at", NULL, "T", NULL, "wait before setup() until the Unix time T (seconds)"},
    {NULL, "--setup-only", NULL, NULL, NULL, "run setup() only (with --setup-data-out FILE: keep its result)"},
    {NULL, "--setup-data-out", NULL, "FILE", "@file", "write setup()'s result to FILE as JSON"},
    {NULL, "--setup-data", NULL, "FILE", "@file", "skip setup(): its result is FILE (from --setup-data-out)"},
    {NULL, "--no-teardown", NULL, NULL, NULL, "skip teardown() (another part of a split test runs it)"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_cli_run_groups[2] = {
    {NULL, RUN_FLAGS, (int)(sizeof(RUN_FLAGS) / sizeof(RUN_FLAGS[0]))},
    {"quick mode (a URL instead of a script; URL may be a,b,c or @file, used round-robin)", ll_quick_flags,
     LL_QUICK_NFLAGS},
};

static void usage(FILE *f) {
    fputs("usage: luaload run [flags] SCRIPT.lua | URL\n", f);
    ll_flag_usage(f, ll_cli_run_groups, 2);
}

static int is(const char *flag, const char *short_name, const char *long_name) {
    return strcmp(flag, short_name) == 0 || strcmp(flag, long_name) == 0;
}




static int parse_stage(const char *flag, const char *v, ll_config *cfg) {
    const char *colon = strrchr(v, ':');
    char dur[64];
    uint64_t us;
    int64_t target;
    if (!colon || (size_t)(colon - v) >= sizeof(dur)) return ll_config_bad(flag, v, "DURATION:TARGET such as 30s:100");
    snprintf(dur, sizeof(dur), "%.*s", (int)(colon - v), v);
    if (ll_duration_parse(dur, &us) != 0 || ll_duration_parse_int(colon + 1, &target) != 0)
        return ll_config_bad(flag, v, "DURATION:TARGET such as 30s:100");
    if (target > INT_MAX) return ll_config_bad(flag, v, "DURATION:TARGET with a TARGET of at most 2147483647 VUs");
    if (ll_config_add_stage(cfg, us, (double)target) != 0) return LL_EXIT_CONFIG;
    return 0;
}

/* Whether a run argument means a URL rather than a script: it has a
 * scheme ("ftp://x" too, refused later), or it is no file and starts like
 * a mistyped http URL ("http//x", "https:x"). */
static int cli_is_url(const char *a) {
    size_t n = 0;
    while (isalnum((unsigned char)a[n]) || a[n] == '+' || a[n] == '-' || a[n] == '.') n++;
    if (n > 0 && isalpha((unsigned char)a[0]) && strncmp(a + n, "://", 3) == 0) return 1;
    if (access(a, F_OK) == 0) return 0;
    size_t scheme = strncasecmp(a, "https", 5) == 0 ? 5 : strncasecmp(a, "http", 4) == 0 ? 4 : 0;
    return scheme && (a[scheme] == ':' || a[scheme] == '/');
}

/* The quick-mode URL, shown with its control characters as '?'. */
static int cli_check_url(const char *url) {
    size_t len = strlen(url);
    if (ll_http_url_ok(url, len)) return 0;
    char shown[128];
    fprintf(stderr, "luaload: invalid URL '%s' (expected http:// or https://, a host, and no spaces or control "
                    "characters)\n", ll_http_printable(shown, sizeof(shown), url, len));
    return LL_EXIT_CONFIG;
}

/* --threshold 'metric=expression' (checked with the options, once the
 * script's metrics exist) */
static int add_threshold(ll_config *cfg, const char *flag, const char *v) {
    const char *eq = strchr(v, '=');
    /* the metric part ends at the first '=' outside a {tag:value} selector */
    const char *brace = strchr(v, '{');
    if (brace && eq && brace < eq) {
        const char *close = strchr(brace, '}');
        eq = close ? strchr(close, '=') : NULL;
    }
    if (!eq || eq == v || !eq[1]) return ll_config_bad(flag, v, "METRIC=EXPRESSION such as 'http_req_duration=p(95)<200'");
    int n = cfg->ncli_thresholds;
    cfg->cli_threshold_keys = ll_xrealloc(cfg->cli_threshold_keys, (size_t)(n + 1) * sizeof(*cfg->cli_threshold_keys));
    cfg->cli_threshold_exprs =
        ll_xrealloc(cfg->cli_threshold_exprs, (size_t)(n + 1) * sizeof(*cfg->cli_threshold_exprs));
    cfg->cli_threshold_keys[n] = ll_xstrndup(v, (size_t)(eq - v));
    cfg->cli_threshold_exprs[n] = eq + 1;
    cfg->ncli_thresholds = n + 1;
    return 0;
}



/* Whether flag takes a value (the next argument unless --flag=value). */
static int takes_value(const char *flag) {
    const ll_flag *f = ll_flag_find(ll_cli_run_groups, 2, flag);
    return f && f->arg;
}

/* Whether a is a short flag that takes a value with the value attached:
 * "-c50" is "-c 50". */
static int attached_value(const char *a) {
    if (a[0] != '-' || !a[1] || a[1] == '-' || !a[2] || ll_flag_find(ll_cli_run_groups, 2, a)) return 0;
    char f[3] = {a[0], a[1], 0};
    return takes_value(f);
}

/* wrk's, hey's and ab's flags that luaload spells otherwise: what to use. */
static const char *const FOREIGN[][2] = {
    {"-n", "-r N (hey's and ab's -n: the requests in all)"},
    {"-z", "-d D (hey's -z: the duration)"},
    {"--timeout", "--read-timeout D (wrk's --timeout)"},
    {"-T", "-H 'Content-Type: ...' (hey's and ab's -T)"},
    {"-D", "--body-file F (hey's -D)"},
    {"--latency", "nothing: the summary always has the latency percentiles (wrk's --latency)"},
};

/* An unknown flag: the luaload flag for a wrk/hey/ab one, else the nearest. */
static int unknown_flag(const char *cmd, const char *flag) {
    for (size_t i = 0; i < sizeof(FOREIGN) / sizeof(FOREIGN[0]); i++) {
        if (strcmp(flag, FOREIGN[i][0]) != 0) continue;
        fprintf(stderr, "luaload: %s: unknown flag %s: use %s (see luaload %s --help)\n", cmd, flag, FOREIGN[i][1], cmd);
        return LL_EXIT_CONFIG;
    }
    return ll_flag_unknown(cmd, "flag", flag, ll_cli_run_groups, 2);
}

/* k6's --tag, --rps, --http-debug[=full], --insecure-skip-tls-verify and
 * luaload's --fail-when-all-iterations-fail (v: the value, NULL for a
 * switch). Returns 0 or LL_EXIT_CONFIG. */
static const char *const K6_FLAGS[] = {"--tag", "--rps", "--http-debug", "--insecure-skip-tls-verify",
                                       "--fail-when-all-iterations-fail", NULL};

static int k6_flag(const char *flag) {
    for (int i = 0; K6_FLAGS[i]; i++)
        if (strcmp(flag, K6_FLAGS[i]) == 0) return 1;
    return 0;
}

static int parse_k6_flag(ll_config *cfg, const char *flag, const char *v) {
    int rc = 0;
    if (strcmp(flag, "--tag") == 0) {
        if (!strchr(v, '=') || v[0] == '=') return ll_config_bad(flag, v, "NAME=VALUE");
        cfg->tags = ll_xrealloc(cfg->tags, (size_t)(cfg->ntags + 1) * sizeof(*cfg->tags));
        cfg->tags[cfg->ntags++] = (char *)v;
    } else if (strcmp(flag, "--rps") == 0) {
        char *end;
        cfg->rps = strtod(v, &end);
        if (end == v || *end || !(cfg->rps > 0 && cfg->rps <= 1e9)) rc = ll_config_bad(flag, v, "requests per second above 0");
        cfg->rps_set = 1;
    } else if (strcmp(flag, "--http-debug") == 0) {
        if (v && strcmp(v, "full") != 0 && strcmp(v, "headers") != 0) rc = ll_config_bad(flag, v, "nothing (headers) or full");
        cfg->http_debug = v && strcmp(v, "full") == 0 ? 2 : 1;
        cfg->http_debug_set = 1;
    } else if (strcmp(flag, "--insecure-skip-tls-verify") == 0) {
        cfg->insecure_skip_verify = 1;
    } else {
        cfg->fail_all_failed = cfg->fail_all_failed_set = 1;
    }
    return rc;
}

/* The flags and the script or URL of argv[1..argc-1] into cfg. */
static int parse_args(int argc, char **argv, ll_config *cfg) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        char flag[64];
        /* --flag=value, or a short flag with its value attached (-c50), as getopt reads it */
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq) {
            snprintf(flag, sizeof(flag), "%.*s", (int)(eq - a), a);
            v = eq + 1;
        } else if (attached_value(a)) {
            snprintf(flag, sizeof(flag), "%.2s", a);
            v = a + 2;
        } else {
            snprintf(flag, sizeof(flag), "%s", a);
        }
        int needs = takes_value(flag);
        if (needs && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "luaload: flag %s needs a value\n", flag);
                return LL_EXIT_CONFIG;
            }
            v = argv[++i];
        }
        int rc = 0;
        char why[300]; /* a config.c setter's reason */
        if (is(flag, "-h", "--help")) {
            usage(stdout);
            return -1;
        } else if (is(flag, "-u", "--vus") || is(flag, "-c", "--connections")) {
            rc = ll_config_parse_vus(flag, v, &cfg->run.vus);
            cfg->run.vus_set = 1;
            cfg->run.shortcut_cli = 1;
        } else if (is(flag, "-d", "--duration")) {
            rc = ll_config_parse_dur(flag, v, &cfg->run.duration_us);
            if (!rc && cfg->run.duration_us == 0) rc = ll_config_bad(flag, v, "a duration above 0");
            cfg->run.duration_set = 1;
            cfg->run.shortcut_cli = 1;
        } else if (is(flag, "-i", "--iterations")) {
            rc = ll_config_parse_count(flag, v, 1, &cfg->run.iterations);
            cfg->run.iterations_set = 1;
        } else if (is(flag, "-s", "--stage")) {
            rc = parse_stage(flag, v, cfg);
            cfg->run.stages_set = 1;
            cfg->run.shortcut_cli = 1;
        } else if (is(flag, "-w", "--workers")) {
            int64_t n;
            rc = ll_config_parse_count(flag, v, 1, &n);
            if (!rc && n > 1024) rc = ll_config_bad(flag, v, "at most 1024 workers");
            cfg->run.workers = (int)n;
        } else if (is(flag, "--graceful-stop", "--graceful-stop")) {
            rc = ll_config_parse_dur(flag, v, &cfg->run.graceful_stop_us);
            cfg->run.graceful_stop_set = 1;
        } else if (is(flag, "-e", "--env")) {
            if (!strchr(v, '=') || v[0] == '=') return ll_config_bad(flag, v, "KEY=VALUE");
            cfg->env = ll_xrealloc(cfg->env, (size_t)(cfg->nenv + 1) * sizeof(*cfg->env));
            cfg->env[cfg->nenv++] = (char *)v;
        } else if (is(flag, "-o", "--out")) {
            cfg->outputs = ll_xrealloc(cfg->outputs, (size_t)(cfg->noutputs + 1) * sizeof(*cfg->outputs));
            cfg->outputs[cfg->noutputs++] = (char *)v;
        } else if (is(flag, "--summary-export", "--summary-export")) {
            cfg->summary.export = v;
        } else if (is(flag, "--summary-trend-stats", "--summary-trend-stats")) {
            if (ll_config_set_trend_stats(cfg, v, why, sizeof(why)) != 0) rc = ll_config_bad(flag, v, why);
        } else if (is(flag, "--summary-time-unit", "--summary-time-unit")) {
            if (!ll_config_time_unit_valid(v) || !*v) rc = ll_config_bad(flag, v, "s, ms or us");
            cfg->summary.time_unit = v;
            cfg->summary.time_unit_set = 1;
        } else if (is(flag, "--seed", "--seed")) {
            if (ll_config_parse_seed(v, &cfg->run.seed) != 0) rc = ll_config_bad(flag, v, LL_CONFIG_SEED_RANGE);
            cfg->run.seed_set = 1;
        } else if (is(flag, "--no-summary", "--no-summary")) {
            cfg->summary.off = 1;
        } else if (is(flag, "--no-thresholds", "--no-thresholds")) {
            cfg->no_thresholds = 1;
        } else if (is(flag, "--no-color", "--no-color")) {
            cfg->summary.no_color = 1;
        } else if (is(flag, "-q", "--quiet")) {
            cfg->quiet = 1;
        } else if (is(flag, "-v", "--verbose")) {
            cfg->verbose = 1;
        } else if (is(flag, "--console-output", "--console-output")) {
            if (!*v) rc = ll_config_bad(flag, v, "a file path");
            cfg->console_output = v;
        } else if (is(flag, "--threshold", "--threshold")) {
            rc = add_threshold(cfg, flag, v);
        } else if (k6_flag(flag)) {
            rc = parse_k6_flag(cfg, flag, v);
        } else if (is(flag, "--transport", "--transport")) {
            cfg->transport = ll_transport_find(v);
            if (!cfg->transport) rc = ll_config_bad(flag, v, "native or curl");
        } else if (is(flag, "--dns", "--dns")) {
            rc = ll_config_failed(ll_config_set_dns(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "--local-ips", "--local-ips")) {
            rc = ll_config_failed(ll_config_set_local_ips(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "--execution-segment", "--execution-segment")) {
            rc = ll_config_failed(ll_config_set_segment(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "--execution-segment-sequence", "--execution-segment-sequence")) {
            rc = ll_config_failed(ll_config_set_sequence(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "-p", "--paused")) {
            cfg->start.paused = 1;
        } else if (is(flag, "-a", "--address")) {
            if (!*v) rc = ll_config_bad(flag, v, "host:port, e.g. 127.0.0.1:6565");
            cfg->start.address = v;
        } else if (is(flag, "--start-at", "--start-at")) {
            char *end;
            cfg->start.at = strtod(v, &end);
            if (!*v || *end || !(cfg->start.at >= 0 && cfg->start.at < 1e11))
                rc = ll_config_bad(flag, v, "a Unix time in seconds, e.g. 1767225600");
            cfg->start.at_set = 1;
        } else if (is(flag, "--setup-only", "--setup-only")) {
            cfg->dist.setup_only = 1;
        } else if (is(flag, "--setup-data-out", "--setup-data-out")) {
            if (!*v) rc = ll_config_bad(flag, v, "a file path");
            cfg->dist.setup_data_out = v;
        } else if (is(flag, "--setup-data", "--setup-data")) {
            if (!*v) rc = ll_config_bad(flag, v, "a file path");
            cfg->dist.setup_data_in = v;
        } else if (is(flag, "--no-teardown", "--no-teardown")) {
            cfg->dist.no_teardown = 1;
        } else if (is(flag, "--shard", "--shard")) {
            rc = ll_config_failed(ll_config_set_shard(cfg, flag, v, why, sizeof(why)) != 0, why);
        } else if (ll_flag_find(&ll_cli_run_groups[1], 1, flag)) {
            rc = ll_quick_flag(cfg, flag, v);
        } else if (a[0] == '-' && a[1] != 0) {
            return unknown_flag(argv[0], flag);
        } else if (cfg->script_path || cfg->quick_url) {
            fprintf(stderr, "luaload: more than one script or URL given: '%s'\n", a);
            return LL_EXIT_CONFIG;
        } else if (a[0] == '@' || cli_is_url(a)) {
            rc = strchr(a, ',') || a[0] == '@' ? 0 : cli_check_url(a);
            if (!rc) rc = ll_quick_set_urls(cfg, a);
        } else {
            cfg->script_path = a;
        }
        if (rc) return rc;
    }
    return 0;
}

int ll_cli_parse_run(int argc, char **argv, ll_config *cfg) {
    memset(cfg, 0, sizeof(*cfg));
    int rc = parse_args(argc, argv, cfg);
    if (rc) return rc;
    if (!cfg->script_path && !cfg->quick_url) {
        fprintf(stderr, "luaload: run needs a script or a URL (luaload run script.lua)\n");
        return LL_EXIT_CONFIG;
    }
    if (cfg->dist.setup_only && cfg->dist.setup_data_in) {
        fprintf(stderr, "luaload: --setup-only runs setup(); --setup-data skips it: give one of them\n");
        return LL_EXIT_CONFIG;
    }
    return ll_quick_finish(cfg);
}


/* The flags luaload merge takes (parsed as luaload run's); the others are
 * luaload run's alone. */
static const ll_flag MERGE_FLAGS[] = {
    {"-e", "--env", NULL, "KEY=VALUE", NULL, "an environment variable for the script (repeatable)"},
    {NULL, "--summary-export", NULL, "FILE", "@file", "write the merged summary as JSON (k6's format)"},
    {"-o", "--out", NULL, "TYPE=FILE", "json= csv= html=",
     "the merged samples: json=FILE or csv=FILE (.gz: gzip); html=FILE: the HTML report"},
    {NULL, "--summary-trend-stats", NULL, "LIST", NULL, "trend stats in the summary, instead of the parts' options"},
    {NULL, "--summary-time-unit", NULL, "UNIT", "s ms us", "time unit of the summary, instead of the parts' options"},
    {NULL, "--threshold", NULL, "M=EXPR", NULL, "one more threshold to judge the merged results (repeatable)"},
    {NULL, "--no-thresholds", NULL, NULL, NULL, "do not evaluate thresholds"},
    {NULL, "--no-summary", NULL, NULL, NULL, "do not print the summary"},
    {NULL, "--no-color", NULL, NULL, NULL, "a summary without colors (also NO_COLOR=1)"},
    {"-q", "--quiet", NULL, NULL, NULL, "print nothing but errors and the summary"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_cli_merge_groups[1] = {{NULL, MERGE_FLAGS, (int)(sizeof(MERGE_FLAGS) / sizeof(MERGE_FLAGS[0]))}};

static void merge_usage(FILE *f) {
    fputs("usage: luaload merge [flags] [SCRIPT.lua] PART.hlog...\n"
          "  PART.hlog                 a part's --out hdrlog=FILE (its FILE.json beside it)\n"
          "  SCRIPT.lua                the test's script: its handle_summary() prints the summary\n",
          f);
    ll_flag_usage(f, ll_cli_merge_groups, 1);
    fputs("exit code: 0, 99 when a threshold fails, 104 when the parts do not belong together\n", f);
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n > t && strcmp(s + n - t, tail) == 0;
}

int ll_cli_parse_merge(int argc, char **argv, ll_config *cfg, char ***parts, int *nparts) {
    memset(cfg, 0, sizeof(*cfg));
    *parts = ll_xcalloc((size_t)argc + 1, sizeof(**parts));
    char **rest = ll_xcalloc((size_t)argc + 1, sizeof(*rest)); /* what parse_args reads */
    *nparts = 0;
    int nrest = 0, rc = 0;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        char flag[64];
        snprintf(flag, sizeof(flag), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (is(flag, "-h", "--help")) {
            merge_usage(stdout);
            rc = -1;
        } else if (a[0] == '-' && a[1] && !ll_flag_find(ll_cli_merge_groups, 1, flag)) {
            rc = ll_flag_unknown("merge", "flag", flag, ll_cli_merge_groups, 1);
        } else if (a[0] == '-' && a[1]) {
            rest[nrest++] = argv[i];
            if (!eq && takes_value(flag) && i + 1 < argc) rest[nrest++] = argv[++i];
        } else if (ends_with(a, ".lua")) {
            rest[nrest++] = argv[i];
        } else {
            (*parts)[(*nparts)++] = argv[i];
        }
    }
    if (!rc) rc = parse_args(nrest, rest, cfg);
    free(rest);
    for (int i = 0; !rc && i < cfg->noutputs; i++) {
        const char *o = cfg->outputs[i];
        if ((strncmp(o, "json=", 5) == 0 && o[5]) || (strncmp(o, "csv=", 4) == 0 && o[4]) ||
            (strncmp(o, "html=", 5) == 0 && o[5]))
            continue;
        rc = ll_config_bad("--out", o, "json=FILE, csv=FILE or html=FILE");
    }
    if (!rc && *nparts == 0) {
        fprintf(stderr, "luaload: merge: no parts given (luaload merge part1.hlog part2.hlog ...)\n");
        rc = LL_EXIT_CONFIG;
    }
    return rc;
}
