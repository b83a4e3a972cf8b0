/* quick.h -- quick mode: `luaload run URL [flags]`, a load test without a
 * script. Its flags (gopayloader's, hey's and gobench's names) and the
 * scenario and per-request work they make (quick.c). */
#ifndef LL_QUICK_H
#define LL_QUICK_H

#include <stddef.h>
#include <stdint.h>

#include "flags.h"

typedef struct ll_config ll_config;

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

/* Quick mode's flags (cli.c parses them with luaload run's). */
#define LL_QUICK_NFLAGS 30
extern const ll_flag ll_quick_flags[LL_QUICK_NFLAGS];
/* Applies quick-mode flag (value v, NULL for a switch). Returns 0, or
 * LL_EXIT_CONFIG after printing a one-line error. */
int ll_quick_flag(ll_config *cfg, const char *flag, const char *v);
/* Sets the quick URL argument: one URL, a,b,c, or @file of URLs (one per
 * line, # comments). Returns 0 or LL_EXIT_CONFIG (error printed). */
int ll_quick_set_urls(ll_config *cfg, const char *arg);
/* After all flags: checks their combination, and turns -r/--rate into a
 * scenario. Returns 0 or LL_EXIT_CONFIG (error printed). */
int ll_quick_finish(ll_config *cfg);
/* The script quick mode runs: its options alone, the iterations being
 * quick_native.c's (malloc'd; NULL on out of memory). */
char *ll_quick_script(const ll_config *cfg);
void ll_quick_free(ll_quick *q);

#endif
