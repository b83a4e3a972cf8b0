/* cli.c -- `luaload run` flags and the LUALOAD_* environment variables
 * (which sit between the flags and the script's options) -> ll_config,
 * and the choice between a script and a URL (quick mode, URL checked). */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "duration.h"
#include "http_req.h"
#include "transport.h"

static void usage(FILE *f) {
    fputs("usage: luaload run [flags] SCRIPT.lua | URL\n"
          "  -u, --vus N               virtual users (default 1)\n"
          "  -c, --connections N       same as --vus (wrk/hey style)\n"
          "  -d, --duration D          test duration, e.g. 30s, 1m30s\n"
          "  -i, --iterations N        iterations shared by all VUs\n"
          "  -s, --stage D:N           ramp to N VUs over D (repeatable): -s 30s:100 -s 1m:100\n"
          "  -w, --workers N           worker threads (default: one per core)\n"
          "  -e, --env KEY=VALUE       script environment variable (repeatable)\n"
          "      --graceful-stop D     time for running iterations to finish (default 30s)\n"
          "      --summary-export FILE write the end-of-test summary as JSON\n"
          "      --summary-trend-stats L  trend stats in the summary, e.g. avg,p(99),p(99.99),count\n"
          "      --summary-time-unit U time unit of the summary: s, ms or us\n"
          "      --no-summary          do not print the end-of-test summary\n"
          "      --no-thresholds       do not evaluate thresholds\n"
          "      --no-color            a summary without colors (also NO_COLOR=1)\n"
          "  -o, --out TYPE=TARGET     stream every sample: json=FILE, csv=FILE (.gz: gzip),\n"
          "                            influxdb=http://127.0.0.1:8086/k6, experimental-prometheus-rw\n"
          "                            (K6_PROMETHEUS_RW_*); the run's own: html=FILE (the report),\n"
          "                            web-dashboard (K6_WEB_DASHBOARD_*: the report served live),\n"
          "                            hdrlog=FILE (for luaload merge) (repeatable)\n"
          "      --seed N              seed of math.random, to repeat a run (default: random,\n"
          "                            printed in the banner)\n"
          "  -q, --quiet               print nothing but errors and the summary\n"
          "  -v, --verbose             show console.debug lines too\n"
          "      --console-output FILE write console.* lines to FILE instead of stderr\n"
          "      --threshold M=EXPR    a threshold, e.g. 'http_req_duration=p(95)<200' (repeatable)\n"
          "      --transport T         native or curl for every request (default: native for\n"
          "                            HTTP/1.1 and HTTP/2, curl for HTTP/3 and proxies)\n"
          "      --execution-segment A:B  run only this part of the test, e.g. 1/4:2/4 (k6's)\n"
          "      --execution-segment-sequence L  all the parts, e.g. 0,1/4,2/4,3/4,1\n"
          "      --shard I/N           the I-th of N equal parts (both of the above)\n"
          "  -p, --paused              wait before setup() until PATCH /v1/status {\"paused\": false}\n"
          "  -a, --address ADDR        serve k6's REST status API on ADDR (default with --paused:\n"
          "                            127.0.0.1:6565)\n"
          "      --start-at T          wait before setup() until the Unix time T (seconds)\n"
          "      --setup-only          run setup() only (with --setup-data-out FILE: keep its result)\n"
          "      --setup-data-out FILE write setup()'s result to FILE as JSON\n"
          "      --setup-data FILE     skip setup(): its result is FILE (from --setup-data-out)\n"
          "      --no-teardown         skip teardown() (another part of a split test runs it)\n"
          "\n"
          "quick mode (URL instead of a script; URL may be a,b,c or @file, used round-robin):\n"
          "  -t, --time D              the same as -d\n"
          "  -r, --requests N          N requests in all; with -d spread evenly over it (open model)\n"
          "      --rate R              R requests/s (open model), for -d or until -r are sent\n"
          "  -m, --method M            request method (default GET, POST with a body)\n"
          "  -H, --header 'N: V'       request header (repeatable)\n"
          "  -b, --body S              request body;   --body-file F  streamed from disk\n"
          "  -k, --disable-keep-alive  a new connection for every request\n"
          "      --http 1.1|2|3        HTTP version (--client fasthttp-1|fasthttp-2|nethttp|nethttp-3)\n"
          "      --parallel            share HTTP/2 and HTTP/3 connections between VUs (multiplex)\n"
          "      --skip-verify         do not verify the server's certificate (also --insecure)\n"
          "      --mtls-cert F, --mtls-key F   a client certificate\n"
          "      --read-timeout D, --write-timeout D   request timeout (the larger of the two)\n"
          "      --think D|A-B         wait D (or between A and B) after each request\n"
          "      --jwt-key F | --jwt-secret S   sign a fresh JWT for every request, with\n"
          "      --jwt-alg, --jwt-kid, --jwt-sub, --jwt-aud, --jwt-iss, --jwt-exp D, --jwt-claims JSON,\n"
          "      --jwt-header NAME (default Authorization: Bearer), --jwt-cache DIR\n"
          "  -f, --jwts-filename F     tokens to send, one per line, each once\n"
          "      --ticker D            with -v, a live line every D (default 1s)\n",
          f);
}

static int is(const char *flag, const char *short_name, const char *long_name) {
    return strcmp(flag, short_name) == 0 || strcmp(flag, long_name) == 0;
}

static int bad(const char *flag, const char *value, const char *expected) {
    fprintf(stderr, "luaload: invalid value for %s: '%s' (expected %s)\n", flag, value, expected);
    return LL_EXIT_CONFIG;
}

static int parse_count(const char *flag, const char *v, int64_t min, int64_t *out) {
    if (ll_duration_parse_int(v, out) != 0 || *out < min) {
        char what[64];
        snprintf(what, sizeof(what), "an integer >= %lld", (long long)min);
        return bad(flag, v, what);
    }
    return 0;
}

/* A VU count: VU ids are ints, so at most INT_MAX. */
static int parse_vus(const char *flag, const char *v, int64_t *out) {
    int rc = parse_count(flag, v, 1, out);
    if (!rc && *out > INT_MAX) rc = bad(flag, v, "at most 2147483647 VUs");
    return rc;
}

static int parse_stage(const char *flag, const char *v, ll_config *cfg) {
    const char *colon = strrchr(v, ':');
    char dur[64];
    uint64_t us;
    int64_t target;
    if (!colon || (size_t)(colon - v) >= sizeof(dur)) return bad(flag, v, "DURATION:TARGET such as 30s:100");
    snprintf(dur, sizeof(dur), "%.*s", (int)(colon - v), v);
    if (ll_duration_parse(dur, &us) != 0 || ll_duration_parse_int(colon + 1, &target) != 0)
        return bad(flag, v, "DURATION:TARGET such as 30s:100");
    if (target > INT_MAX) return bad(flag, v, "DURATION:TARGET with a TARGET of at most 2147483647 VUs");
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
    if (!eq || eq == v || !eq[1]) return bad(flag, v, "METRIC=EXPRESSION such as 'http_req_duration=p(95)<200'");
    int n = cfg->ncli_thresholds;
    char **keys = realloc(cfg->cli_threshold_keys, (size_t)(n + 1) * sizeof(*keys));
    if (keys) cfg->cli_threshold_keys = keys;
    const char **exprs = keys ? realloc(cfg->cli_threshold_exprs, (size_t)(n + 1) * sizeof(*exprs)) : NULL;
    if (exprs) cfg->cli_threshold_exprs = exprs;
    char *key = exprs ? strndup(v, (size_t)(eq - v)) : NULL;
    if (!key) return LL_EXIT_CONFIG;
    cfg->cli_threshold_keys[n] = key;
    cfg->cli_threshold_exprs[n] = eq + 1;
    cfg->ncli_thresholds = n + 1;
    return 0;
}

static int parse_dur(const char *flag, const char *v, uint64_t *out) {
    if (ll_duration_parse(v, out) != 0) return bad(flag, v, "a duration such as 10s, 1m30s, 500ms");
    return 0;
}

/* What a config.c setter's failure comes to: its one-line reason printed
 * and LL_EXIT_CONFIG; 0 when it did not fail. */
static int config_error(int failed, const char *why) {
    if (!failed) return 0;
    fprintf(stderr, "luaload: %s\n", why);
    return LL_EXIT_CONFIG;
}

/* Whether flag takes a value (the next argument unless --flag=value). */
static int takes_value(const char *flag) {
    return is(flag, "-s", "--stage") || is(flag, "-u", "--vus") || is(flag, "-c", "--connections") || is(flag, "-d", "--duration") ||
           is(flag, "-i", "--iterations") || is(flag, "-w", "--workers") || is(flag, "-e", "--env") ||
           is(flag, "--graceful-stop", "--graceful-stop") ||
           is(flag, "--summary-export", "--summary-export") ||
           is(flag, "--summary-trend-stats", "--summary-trend-stats") ||
           is(flag, "--summary-time-unit", "--summary-time-unit") || is(flag, "-o", "--out") ||
           is(flag, "--seed", "--seed") || is(flag, "--console-output", "--console-output") ||
           is(flag, "--threshold", "--threshold") || is(flag, "--transport", "--transport") ||
           is(flag, "--execution-segment", "--execution-segment") ||
           is(flag, "--execution-segment-sequence", "--execution-segment-sequence") ||
           is(flag, "--shard", "--shard") || is(flag, "--setup-data", "--setup-data") ||
           is(flag, "--setup-data-out", "--setup-data-out") || is(flag, "-a", "--address") ||
           is(flag, "--start-at", "--start-at") ||
           ll_quick_flag_kind(flag) == 1;
}

/* The flags and the script or URL of argv[1..argc-1] into cfg. */
static int parse_args(int argc, char **argv, ll_config *cfg) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        char flag[64];
        /* --flag=value */
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq) {
            snprintf(flag, sizeof(flag), "%.*s", (int)(eq - a), a);
            v = eq + 1;
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
            rc = parse_vus(flag, v, &cfg->vus);
            cfg->vus_set = 1;
            cfg->shortcut_cli = 1;
        } else if (is(flag, "-d", "--duration")) {
            rc = parse_dur(flag, v, &cfg->duration_us);
            if (!rc && cfg->duration_us == 0) rc = bad(flag, v, "a duration above 0");
            cfg->duration_set = 1;
            cfg->shortcut_cli = 1;
        } else if (is(flag, "-i", "--iterations")) {
            rc = parse_count(flag, v, 1, &cfg->iterations);
            cfg->iterations_set = 1;
        } else if (is(flag, "-s", "--stage")) {
            rc = parse_stage(flag, v, cfg);
            cfg->stages_set = 1;
            cfg->shortcut_cli = 1;
        } else if (is(flag, "-w", "--workers")) {
            int64_t n;
            rc = parse_count(flag, v, 1, &n);
            if (!rc && n > 1024) rc = bad(flag, v, "at most 1024 workers");
            cfg->workers = (int)n;
        } else if (is(flag, "--graceful-stop", "--graceful-stop")) {
            rc = parse_dur(flag, v, &cfg->graceful_stop_us);
            cfg->graceful_stop_set = 1;
        } else if (is(flag, "-e", "--env")) {
            if (!strchr(v, '=') || v[0] == '=') return bad(flag, v, "KEY=VALUE");
            char **env = realloc(cfg->env, (size_t)(cfg->nenv + 1) * sizeof(*env));
            if (!env) return LL_EXIT_CONFIG;
            cfg->env = env;
            cfg->env[cfg->nenv++] = (char *)v;
        } else if (is(flag, "-o", "--out")) {
            char **o = realloc(cfg->outputs, (size_t)(cfg->noutputs + 1) * sizeof(*o));
            if (!o) return LL_EXIT_CONFIG;
            cfg->outputs = o;
            cfg->outputs[cfg->noutputs++] = (char *)v;
        } else if (is(flag, "--summary-export", "--summary-export")) {
            cfg->summary_export = v;
        } else if (is(flag, "--summary-trend-stats", "--summary-trend-stats")) {
            if (ll_config_set_trend_stats(cfg, v, why, sizeof(why)) != 0) rc = bad(flag, v, why);
        } else if (is(flag, "--summary-time-unit", "--summary-time-unit")) {
            if (!ll_config_time_unit_valid(v) || !*v) rc = bad(flag, v, "s, ms or us");
            cfg->time_unit = v;
            cfg->time_unit_set = 1;
        } else if (is(flag, "--seed", "--seed")) {
            if (ll_config_parse_seed(v, &cfg->seed) != 0) rc = bad(flag, v, LL_CONFIG_SEED_RANGE);
            cfg->seed_set = 1;
        } else if (is(flag, "--no-summary", "--no-summary")) {
            cfg->no_summary = 1;
        } else if (is(flag, "--no-thresholds", "--no-thresholds")) {
            cfg->no_thresholds = 1;
        } else if (is(flag, "--no-color", "--no-color")) {
            cfg->no_color = 1;
        } else if (is(flag, "-q", "--quiet")) {
            cfg->quiet = 1;
        } else if (is(flag, "-v", "--verbose")) {
            cfg->verbose = 1;
        } else if (is(flag, "--console-output", "--console-output")) {
            if (!*v) rc = bad(flag, v, "a file path");
            cfg->console_output = v;
        } else if (is(flag, "--threshold", "--threshold")) {
            rc = add_threshold(cfg, flag, v);
        } else if (is(flag, "--transport", "--transport")) {
            cfg->transport = ll_transport_find(v);
            if (!cfg->transport) rc = bad(flag, v, "native or curl");
        } else if (is(flag, "--execution-segment", "--execution-segment")) {
            rc = config_error(ll_config_set_segment(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "--execution-segment-sequence", "--execution-segment-sequence")) {
            rc = config_error(ll_config_set_sequence(cfg, flag, v, 1, why, sizeof(why)) != 0, why);
        } else if (is(flag, "--paused", "--paused") || is(flag, "-p", "-p")) {
            cfg->paused = 1;
        } else if (is(flag, "-a", "--address")) {
            if (!*v) rc = bad(flag, v, "host:port, e.g. 127.0.0.1:6565");
            cfg->address = v;
        } else if (is(flag, "--start-at", "--start-at")) {
            char *end;
            cfg->start_at = strtod(v, &end);
            if (!*v || *end || !(cfg->start_at >= 0 && cfg->start_at < 1e11))
                rc = bad(flag, v, "a Unix time in seconds, e.g. 1767225600");
            cfg->start_at_set = 1;
        } else if (is(flag, "--setup-only", "--setup-only")) {
            cfg->setup_only = 1;
        } else if (is(flag, "--setup-data-out", "--setup-data-out")) {
            if (!*v) rc = bad(flag, v, "a file path");
            cfg->setup_data_out = v;
        } else if (is(flag, "--setup-data", "--setup-data")) {
            if (!*v) rc = bad(flag, v, "a file path");
            cfg->setup_data_in = v;
        } else if (is(flag, "--no-teardown", "--no-teardown")) {
            cfg->no_teardown = 1;
        } else if (is(flag, "--shard", "--shard")) {
            rc = config_error(ll_config_set_shard(cfg, flag, v, why, sizeof(why)) != 0, why);
        } else if (ll_quick_flag_kind(flag) >= 0) {
            rc = ll_quick_flag(cfg, flag, v);
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "luaload: unknown flag %s (see luaload run --help)\n", flag);
            return LL_EXIT_CONFIG;
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
    if (cfg->setup_only && cfg->setup_data_in) {
        fprintf(stderr, "luaload: --setup-only runs setup(); --setup-data skips it: give one of them\n");
        return LL_EXIT_CONFIG;
    }
    return ll_quick_finish(cfg);
}

int ll_cli_parse_env(ll_config *cfg) {
    const char *v;
    int rc = 0;
    if (!cfg->vus_set && (v = getenv("LUALOAD_VUS"))) {
        rc = parse_vus("LUALOAD_VUS", v, &cfg->vus);
        cfg->vus_set = cfg->shortcut_cli = 1;
    }
    if (!rc && !cfg->duration_set && (v = getenv("LUALOAD_DURATION"))) {
        rc = parse_dur("LUALOAD_DURATION", v, &cfg->duration_us);
        cfg->duration_set = cfg->shortcut_cli = 1;
    }
    if (!rc && !cfg->iterations_set && (v = getenv("LUALOAD_ITERATIONS"))) {
        rc = parse_count("LUALOAD_ITERATIONS", v, 1, &cfg->iterations);
        cfg->iterations_set = cfg->shortcut_cli = 1;
    }
    if (!rc && !cfg->transport && (v = getenv("LUALOAD_TRANSPORT")) && *v) {
        cfg->transport = ll_transport_find(v);
        if (!cfg->transport) rc = bad("LUALOAD_TRANSPORT", v, "native or curl");
    }
    char why[300];
    const char *seg = "LUALOAD_EXECUTION_SEGMENT", *seq = "LUALOAD_EXECUTION_SEGMENT_SEQUENCE";
    if (!rc && (v = getenv(seg)) && *v)
        rc = config_error(ll_config_set_segment(cfg, seg, v, 0, why, sizeof(why)) != 0, why);
    if (!rc && (v = getenv(seq)) && *v)
        rc = config_error(ll_config_set_sequence(cfg, seq, v, 0, why, sizeof(why)) != 0, why);
    if (!rc && !cfg->seed_set && (v = getenv("LUALOAD_SEED"))) {
        if (ll_config_parse_seed(v, &cfg->seed) != 0) rc = bad("LUALOAD_SEED", v, LL_CONFIG_SEED_RANGE);
        cfg->seed_set = 1;
    }
    return rc;
}

static void merge_usage(FILE *f) {
    fputs("usage: luaload merge [flags] [SCRIPT.lua] PART.hlog...\n"
          "  PART.hlog                 a part's --out hdrlog=FILE (its FILE.json beside it)\n"
          "  SCRIPT.lua                the test's script: its handle_summary() prints the summary\n"
          "  -e, --env KEY=VALUE       environment variable for the script (repeatable)\n"
          "      --summary-export FILE write the merged summary as JSON (k6's format)\n"
          "  -o, --out TYPE=FILE       the merged samples: json=FILE or csv=FILE (.gz: gzip);\n"
          "                            html=FILE: the HTML report\n"
          "      --summary-trend-stats L, --summary-time-unit U   instead of the parts' options\n"
          "      --threshold M=EXPR    one more threshold to judge the merged results (repeatable)\n"
          "      --no-thresholds       do not evaluate thresholds\n"
          "      --no-summary          do not print the summary\n"
          "      --no-color            a summary without colors (also NO_COLOR=1)\n"
          "exit code: 0, 99 when a threshold fails, 104 when the parts do not belong together\n",
          f);
}

/* The flags luaload merge takes; the others are luaload run's alone. */
static int merge_flag(const char *flag) {
    return is(flag, "-e", "--env") || is(flag, "-o", "--out") || is(flag, "--summary-export", "--summary-export") ||
           is(flag, "--summary-trend-stats", "--summary-trend-stats") ||
           is(flag, "--summary-time-unit", "--summary-time-unit") || is(flag, "--threshold", "--threshold") ||
           is(flag, "--no-thresholds", "--no-thresholds") || is(flag, "--no-summary", "--no-summary") ||
           is(flag, "--no-color", "--no-color") || is(flag, "-q", "--quiet");
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n > t && strcmp(s + n - t, tail) == 0;
}

int ll_cli_parse_merge(int argc, char **argv, ll_config *cfg, char ***parts, int *nparts) {
    memset(cfg, 0, sizeof(*cfg));
    *parts = calloc((size_t)argc + 1, sizeof(**parts));
    char **rest = calloc((size_t)argc + 1, sizeof(*rest)); /* what parse_args reads */
    *nparts = 0;
    int nrest = 0, rc = 0;
    if (!*parts || !rest) {
        free(rest);
        return LL_EXIT_FAILURE;
    }
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        char flag[64];
        snprintf(flag, sizeof(flag), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (is(flag, "-h", "--help")) {
            merge_usage(stdout);
            rc = -1;
        } else if (a[0] == '-' && a[1] && !merge_flag(flag)) {
            fprintf(stderr, "luaload: merge: unknown flag %s (see luaload merge --help)\n", flag);
            rc = LL_EXIT_CONFIG;
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
        rc = bad("--out", o, "json=FILE, csv=FILE or html=FILE");
    }
    if (!rc && *nparts == 0) {
        fprintf(stderr, "luaload: merge: no parts given (luaload merge part1.hlog part2.hlog ...)\n");
        rc = LL_EXIT_CONFIG;
    }
    return rc;
}
