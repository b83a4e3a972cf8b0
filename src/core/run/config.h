/* config.h -- one run's configuration, merged k6-style: CLI flags win over
 * LUALOAD_* environment variables, which win over the script's options. */
#ifndef LL_CONFIG_H
#define LL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "segment.h"
#include "summary.h"
#include "threshold_set.h"

#include "dns_config.h"
#include "exit.h"
#include "ip_pool.h"

/* Quick mode's settings (`luaload run URL`): its flags, parsed by
 * quick/quick.c; the engine reads them only through the mode quick/ hands
 * it (engine.h), but for the connections each VU may hold. */
typedef struct ll_quick {
    char **urls;                /* round-robin targets (from a,b,c or @file) */
    int nurls;
    char *urls_text;            /* @file's contents, which urls point into */
    const char *method;         /* -m; NULL: GET, or POST with a body */
    const char **headers;       /* -H "Name: value", as given */
    int nheaders;
    const char *body;           /* -b */
    const char *body_file;      /* --body-file: streamed from disk */
    int disable_keep_alive;     /* -k */
    const char *http_version;   /* --http / --client: "1.1", "2", "3"; NULL: ALPN */
    int multiplex;              /* --parallel */
    int insecure;               /* --skip-verify, --insecure */
    const char *mtls_cert, *mtls_key;
    uint64_t read_timeout_us, write_timeout_us;
    int64_t requests;           /* -r: 0 none */
    double rate;                /* --rate: requests/s, 0 none */
    uint64_t think_min_us, think_max_us; /* --think */
    const char *jwt_key, *jwt_secret, *jwt_alg, *jwt_kid, *jwt_sub, *jwt_aud, *jwt_iss, *jwt_claims;
    const char *jwt_header;     /* the header it goes in; NULL: Authorization: Bearer */
    const char *jwt_exp;        /* --jwt-exp: a duration */
    const char *jwt_cache;      /* --jwt-cache DIR */
    const char *jwts_file;      /* -f: tokens, one per line */
    uint64_t ticker_us;         /* --ticker: live line every so often with -v */
    int verbose;                /* -v seen (the ticker) */
    double open_rate;           /* set by ll_quick_finish: the open model's */
    double open_secs;           /* requests/s, length and VUs (-r with -d, */
    int64_t open_vus;           /* or --rate), 0: a closed model */
    int any;                    /* a quick-mode-only flag was given */
    const char *first_flag;     /* the first of them, for the error message */
} ll_quick;

/* This instance's part of a test split over instances (dist/, k6's
 * execution segments), and how the parts hand setup()'s data over. */
typedef struct ll_config_dist {
    ll_segment segment;         /* --execution-segment / --shard / options.executionSegment */
    int segment_set;
    ll_segment_seq sequence;    /* --execution-segment-sequence / --shard; n == 0: none */
    int sequence_set;
    int shard_set;              /* --shard gave both */
    int setup_only;             /* --setup-only: run setup() and stop */
    const char *setup_data_out; /* --setup-data-out FILE: write setup()'s result there */
    const char *setup_data_in;  /* --setup-data FILE: take it from there, skip setup() */
    int no_teardown;            /* --no-teardown: another part runs it */
} ll_config_dist;

/* What holds a run before setup(): k6's REST status API and its pause,
 * and a start time. */
typedef struct ll_config_start {
    int paused;                 /* --paused: wait for PATCH /v1/status before setup() */
    const char *address;        /* -a/--address: k6's REST status API there (with
                                 * --paused: default 127.0.0.1:6565); NULL: none */
    double at;                  /* --start-at UNIX_TIME: wait until then before setup() */
    int at_set;
} ll_config_start;

/* What runs: the scenarios (options.scenarios, or the default one from
 * k6's shortcuts -u/-d/-i/-s and options.vus, duration, iterations,
 * stages), setup() and teardown()'s timeouts, the workers and the seed.
 * Each *_set: given by the command line, the environment or the options. */
typedef struct ll_config_run {
    int64_t vus;
    int vus_set;
    uint64_t duration_us;
    int duration_set;
    int64_t iterations;
    int iterations_set;
    uint64_t graceful_stop_us;
    int graceful_stop_set;
    ll_stage *stages;           /* -s / options.stages: a ramping-vus default */
    int nstages;
    int stages_set;
    int shortcut_cli;           /* -u/-d/-i/-s given on the command line or env */
    ll_scenarios scenarios;     /* options.scenarios */
    uint64_t setup_timeout_us, teardown_timeout_us;
    int setup_timeout_set, teardown_timeout_set;
    int workers;                /* 0: one per core */
    uint64_t seed;              /* the run's seed: --seed, LUALOAD_SEED, options.seed, */
    int seed_set;               /* else picked by the engine from getrandom(2) */
} ll_config_run;

/* The end-of-test summary: whether and how it is printed, and where its
 * JSON goes. */
typedef struct ll_config_summary {
    int off;                    /* --no-summary */
    int no_color;               /* --no-color: a summary without colors */
    const char *export;         /* --summary-export FILE */
    char **trend_stats;         /* summaryTrendStats; NULL: k6's default */
    int ntrend_stats;
    int trend_stats_set;
    const char *time_unit;      /* summaryTimeUnit: "", "s", "ms", "us" */
    int time_unit_set;
} ll_config_summary;

typedef struct ll_config {
    const char *script_path;    /* a script, or */
    const char *quick_url;      /* a URL to hit with GET (quick mode) */
    ll_quick quick;             /* quick mode's own flags and URLs */
    char **cli_threshold_keys;  /* --threshold 'metric=expr': the metrics */
    const char **cli_threshold_exprs; /* and the expressions */
    int ncli_thresholds;
    ll_config_run run;          /* what runs: scenarios, VUs, time, workers, seed */
    const struct ll_transport_ops *transport; /* --transport / LUALOAD_TRANSPORT; NULL: per request */
    char **env;                 /* -e KEY=VALUE */
    int nenv;
    int quiet;
    int inspect;                /* luaload inspect: 1 print the options, 2 with the
                                 * execution requirements; no test runs */
    int verbose;               /* -v: console.debug lines show (LUALOAD_VERBOSE=1) */
    const char *console_output; /* --console-output FILE: console.* lines go there */
    int no_thresholds;
    char **outputs;             /* -o type=target */
    int noutputs;
    ll_threshold_set thresholds;
    ll_config_summary summary;  /* the end-of-test summary */
    ll_config_dist dist;        /* this instance's part of a split test */
    ll_config_start start;      /* what holds the run before setup() */
    ll_dns_config dns;          /* --dns / LUALOAD_DNS / options.dns, field by field */
    ll_ip_pool local_ips;       /* --local-ips / LUALOAD_LOCAL_IPS / options.localIPs */
    char *local_ips_text;       /* as given; NULL: none */
    int insecure_skip_verify;   /* --insecure-skip-tls-verify: no Client verifies certificates */
    int http_debug;             /* --http-debug / options.httpDebug: 0 off, 1 headers, 2 full (bodies too) */
    int http_debug_set;
    double rps;                 /* --rps / options.rps: requests/s over all VUs, 0 no limit */
    int rps_set;
    int fail_all_failed;        /* --fail-when-all-iterations-fail / options.failWhenAllIterationsFail */
    int fail_all_failed_set;
    char **tags;                /* --tag NAME=VALUE, as given (test-wide tags over options.tags) */
    int ntags;
} ll_config;

void ll_config_free(ll_config *cfg);

/* Sets summaryTrendStats from a comma-separated list ("avg,p(99),count").
 * Returns 0, or -1 with a one-line reason in err. */
int ll_config_set_trend_stats(ll_config *cfg, const char *list, char *err, size_t errlen);
/* Appends a stage "DURATION:TARGET" (as -s 30s:100). Returns 0 or -1. */
int ll_config_add_stage(ll_config *cfg, uint64_t duration_us, double target);
/* Fills cfg->run.scenarios with the implicit default scenario (from -u, -d,
 * -i, -s / options.vus, duration, iterations, stages) when the options
 * gave none or the command line overrides them. */
int ll_config_default_scenario(ll_config *cfg, char *err, size_t errlen);

/* Sets the execution segment, its sequence, or both from "i/N" (--shard),
 * from value as `what` gives it ("--execution-segment",
 * "LUALOAD_EXECUTION_SEGMENT", "options.executionSegment"); a value set
 * already (the command line wins over the environment, which wins over
 * the options) is kept unless force. Returns 0, or -1 with a one-line
 * message in err that names what. */
int ll_config_set_segment(ll_config *cfg, const char *what, const char *value, int force, char *err, size_t errlen);
int ll_config_set_sequence(ll_config *cfg, const char *what, const char *value, int force, char *err,
                           size_t errlen);
int ll_config_set_shard(ll_config *cfg, const char *what, const char *value, char *err, size_t errlen);

/* The summary's settings: summaryTrendStats, summaryTimeUnit, the
 * thresholds, and no colors with --no-color or NO_COLOR. */
ll_summary_opts ll_config_summary_opts(const ll_config *cfg);

/* Adds the --threshold flags to cfg->thresholds (after the script's own:
 * its custom metrics exist by then). 0, or LL_EXIT_CONFIG with err set. */
int ll_config_add_cli_thresholds(ll_config *cfg, ll_registry *reg, char *err, size_t errlen);

/* Adds the --tag NAME=VALUE flags to the test-wide tags (after the
 * script's options.tags: a flag wins over the option of the same name).
 * 0, or an exit code with err set. */
int ll_config_apply_tags(const ll_config *cfg, ll_registry *reg, char *err, size_t errlen);

/* Sets the source addresses from text (--local-ips "10.0.0.10,10.0.0.20-10.0.0.30,
 * 10.0.1.0/27"), as `what` gives it; a list set already is kept unless
 * force. Returns 0, or -1 with a one-line message naming what in err. */
int ll_config_set_local_ips(ll_config *cfg, const char *what, const char *text, int force, char *err, size_t errlen);
/* Sets fields of the dns option from "ttl=1m,select=first,policy=any";
 * fields set already are kept unless force. Returns like the above. */
int ll_config_set_dns(ll_config *cfg, const char *what, const char *text, int force, char *err, size_t errlen);

/* Parses a seed: decimal digits only, 0 to 2^64-1. Returns 0 or -1. */
int ll_config_parse_seed(const char *s, uint64_t *out);
#define LL_CONFIG_SEED_RANGE "an integer from 0 to 18446744073709551615"

/* Whether s is a summary time unit: "s", "ms" or "us" (or "" for automatic). */
int ll_config_time_unit_valid(const char *s);

/* Fills what the CLI left unset from LUALOAD_VUS, LUALOAD_DURATION,
 * LUALOAD_ITERATIONS, LUALOAD_TRANSPORT, LUALOAD_DNS, LUALOAD_LOCAL_IPS, the
 * execution segment's and LUALOAD_SEED. Returns 0 or LL_EXIT_CONFIG (error
 * printed). */
int ll_config_read_env(ll_config *cfg);

/* The values of flags and variables, named by what (a flag, a variable):
 * each prints "luaload: invalid value for WHAT: 'V' (expected ...)" and
 * returns LL_EXIT_CONFIG when v is not one, else 0. */
int ll_config_bad(const char *what, const char *v, const char *expected); /* prints, LL_EXIT_CONFIG */
int ll_config_parse_count(const char *what, const char *v, int64_t min, int64_t *out);
int ll_config_parse_vus(const char *what, const char *v, int64_t *out); /* 1 to INT_MAX (VU ids are ints) */
int ll_config_parse_dur(const char *what, const char *v, uint64_t *out);
/* What a setter's failure comes to: its one-line reason printed and
 * LL_EXIT_CONFIG; 0 when it did not fail. */
int ll_config_failed(int failed, const char *why);

#endif
