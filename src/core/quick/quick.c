/* quick.c -- quick mode's flags and the script they make (see quick.h).
 *
 * Owns: the quick-mode flag table (gopayloader's long names, hey's and
 * gobench's where they differ), the checks of their values and of their
 * combination, the URL list (a,b,c or @file), turning -r/--rate into a
 * scenario, and the script of options that scenario needs. What the flags
 * send is quick_native.c's. The flags every run has (-c, -d, -i, --out,
 * ...) are cli.c's. */
#include "quick.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "duration.h"
#include "http_req.h"
#include "xmalloc.h"

const ll_flag ll_quick_flags[] = { /* as many as quick.h says, or the two types conflict */
    {"-t", "--time", NULL, "D", NULL, "the same as -d"},
    {"-r", "--requests", NULL, "N", NULL, "N requests in all; with -d spread evenly over it (open model)"},
    {NULL, "--rate", NULL, "R", NULL, "R requests/s (open model), for -d or until -r are sent"},
    {"-m", "--method", NULL, "M", "GET POST PUT PATCH DELETE HEAD OPTIONS", "request method (default GET, POST with a body)"},
    {"-H", "--header", "--headers", "'NAME: VALUE'", NULL, "a request header (repeatable)"},
    {"-b", "--body", NULL, "S", NULL, "the request body"},
    {NULL, "--body-file", NULL, "F", "@file", "the request body, streamed from disk"},
    {"-k", "--disable-keep-alive", NULL, NULL, NULL, "a new connection for every request"},
    {NULL, "--http", NULL, "V", "1.1 2 3", "HTTP version: 1.1, 2 or 3"},
    {NULL, "--client", NULL, "C", "fasthttp-1 fasthttp-2 nethttp nethttp-3", "gopayloader's name for --http"},
    {NULL, "--parallel", NULL, NULL, NULL, "share HTTP/2 and HTTP/3 connections between VUs (multiplex)"},
    {NULL, "--skip-verify", "--insecure", NULL, NULL, "do not verify the server's certificate"},
    {NULL, "--mtls-cert", NULL, "F", "@file", "a client certificate (PEM)"},
    {NULL, "--mtls-key", NULL, "F", "@file", "its private key (PEM)"},
    {NULL, "--read-timeout", NULL, "D", NULL, "request timeout (the larger of this and --write-timeout)"},
    {NULL, "--write-timeout", NULL, "D", NULL, "request timeout (the larger of this and --read-timeout)"},
    {NULL, "--think", NULL, "D|A-B", NULL, "wait D (or between A and B) after each request"},
    {NULL, "--jwt-key", NULL, "F", "@file", "sign a fresh JWT for every request with this private key (PEM)"},
    {NULL, "--jwt-secret", NULL, "S", NULL, "sign a fresh JWT for every request with this HMAC secret"},
    {NULL, "--jwt-alg", NULL, "ALG", "HS256 HS384 HS512 RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA",
     "the JWT's algorithm (default: from the key)"},
    {NULL, "--jwt-kid", NULL, "KID", NULL, "the JWT header's kid"},
    {NULL, "--jwt-sub", NULL, "SUB", NULL, "the sub claim"},
    {NULL, "--jwt-aud", NULL, "AUD", NULL, "the aud claim"},
    {NULL, "--jwt-iss", NULL, "ISS", NULL, "the iss claim"},
    {NULL, "--jwt-claims", NULL, "JSON", NULL, "more claims, a JSON object"},
    {NULL, "--jwt-header", NULL, "NAME", NULL, "the header that carries it (default Authorization: Bearer)"},
    {NULL, "--jwt-exp", NULL, "D", NULL, "the tokens' lifetime (the exp claim)"},
    {NULL, "--jwt-cache", NULL, "DIR", "@dir", "keep signed tokens in DIR for the next run"},
    {"-f", "--jwts-filename", NULL, "F", "@file", "tokens to send, one per line, each once"},
    {NULL, "--ticker", NULL, "D", NULL, "with -v, a live line every D (default 1s)"},
};

static int find(const char *flag) {
    for (int i = 0; i < LL_QUICK_NFLAGS; i++) {
        const ll_flag *f = &ll_quick_flags[i];
        if ((f->short_name && strcmp(flag, f->short_name) == 0) || strcmp(flag, f->name) == 0 ||
            (f->alias && strcmp(flag, f->alias) == 0))
            return i;
    }
    return -1;
}

static int readable(const char *flag, const char *path) {
    if (access(path, R_OK) == 0) return 0;
    fprintf(stderr, "luaload: %s: cannot read %s: %s\n", flag, path, strerror(errno));
    return LL_EXIT_CONFIG;
}

static int duration(const char *flag, const char *v, uint64_t *us) {
    if (ll_duration_parse(v, us) != 0) return ll_config_bad(flag, v, "a duration such as 5s or 250ms");
    return 0;
}

/* --think 100ms or 100-200ms (a uniform draw between the two); a bare
 * first number takes the second's unit */
static int think(ll_quick *q, const char *flag, const char *v) {
    const char *expect = "a duration or a range such as 100-200ms";
    const char *dash = strchr(v, '-');
    char first[80];
    if (!dash) {
        if (ll_duration_parse(v, &q->think_min_us) != 0) return ll_config_bad(flag, v, expect);
        q->think_max_us = q->think_min_us;
        return 0;
    }
    if (ll_duration_parse(dash + 1, &q->think_max_us) != 0 || dash == v || dash - v > 40) return ll_config_bad(flag, v, expect);
    const char *unit = dash + 1 + strspn(dash + 1, "0123456789.");
    int bare = strspn(v, "0123456789.") == (size_t)(dash - v);
    snprintf(first, sizeof(first), "%.*s%s", (int)(dash - v), v, bare ? unit : "");
    if (ll_duration_parse(first, &q->think_min_us) != 0) return ll_config_bad(flag, v, expect);
    if (q->think_max_us < q->think_min_us) return ll_config_bad(flag, v, "a range whose second value is the larger");
    return 0;
}

/* -H "Name: value" (gopayloader writes "name:value") */
static int header(ll_quick *q, const char *flag, const char *v) {
    const char *colon = strchr(v, ':');
    char name[256];
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof(name)) return ll_config_bad(flag, v, "\"Name: value\"");
    snprintf(name, sizeof(name), "%.*s", (int)(colon - v), v);
    const char *value = colon + 1;
    if (!ll_http_token_ok(name)) return ll_config_bad(flag, v, "a header name of token characters before ':'");
    if (!ll_http_value_ok(value, strlen(value))) return ll_config_bad(flag, v, "a header value without CR, LF or NUL");
    q->headers = ll_xrealloc(q->headers, (size_t)(q->nheaders + 1) * sizeof(*q->headers));
    q->headers[q->nheaders++] = v;
    return 0;
}

/* --http 1.1|2|3, or gopayloader's --client names */
static int version(ll_quick *q, const char *flag, const char *v) {
    static const struct { const char *name, *version; } V[] = {
        {"1.1", "1.1"}, {"1", "1.1"}, {"2", "2"}, {"3", "3"}, {"fasthttp-1", "1.1"}, {"fasthttp-2", "2"},
        {"nethttp", NULL}, {"nethttp-2", "2"}, {"nethttp-3", "3"},
    };
    for (size_t i = 0; i < sizeof(V) / sizeof(V[0]); i++) {
        if (strcmp(v, V[i].name) != 0) continue;
        if (strcmp(flag, "--http") == 0 && strchr(V[i].name, 'h')) break; /* client names only for --client */
        q->http_version = V[i].version;
        return 0;
    }
    return ll_config_bad(flag, v, strcmp(flag, "--http") == 0 ? "1.1, 2 or 3"
                                                    : "fasthttp-1, fasthttp-2, nethttp, nethttp-2 or nethttp-3");
}

int ll_quick_flag(ll_config *cfg, const char *flag, const char *v) {
    ll_quick *q = &cfg->quick;
    int i = find(flag), rc = 0;
    if (i < 0) return LL_EXIT_CONFIG;
    const char *n = ll_quick_flags[i].name;
    if (strcmp(n, "--time") == 0) { /* the same as -d, which every run has */
        if (v[0] && strspn(v, "0123456789") == strlen(v)) /* -t 4: wrk's threads */
            return ll_config_bad(flag, v, "a duration such as 5s (-t is --time, as gopayloader's; wrk's -t threads "
                                          "is -w N)");
        rc = duration(flag, v, &cfg->run.duration_us);
        if (!rc && cfg->run.duration_us == 0) rc = ll_config_bad(flag, v, "a duration above 0");
        cfg->run.duration_set = cfg->run.shortcut_cli = 1;
        return rc;
    }
    if (strcmp(n, "--ticker") == 0) return duration(flag, v, &q->ticker_us); /* harmless with a script */
    if (!q->any) q->first_flag = ll_quick_flags[i].name;
    q->any = 1;
    if (strcmp(n, "--requests") == 0) {
        if (ll_duration_parse_int(v, &q->requests) != 0 || q->requests < 1) rc = ll_config_bad(flag, v, "an integer >= 1");
    } else if (strcmp(n, "--rate") == 0) {
        char *end;
        q->rate = strtod(v, &end);
        if (end == v || *end || !(q->rate > 0) || !isfinite(q->rate)) rc = ll_config_bad(flag, v, "requests per second above 0");
    } else if (strcmp(n, "--method") == 0) {
        if (!ll_http_token_ok(v)) rc = ll_config_bad(flag, v, "a method such as GET or POST");
        q->method = v;
    } else if (strcmp(n, "--header") == 0) {
        rc = header(q, flag, v);
    } else if (strcmp(n, "--body") == 0) {
        q->body = v;
    } else if (strcmp(n, "--body-file") == 0) {
        rc = readable(flag, v);
        q->body_file = v;
    } else if (strcmp(n, "--disable-keep-alive") == 0) {
        q->disable_keep_alive = 1;
    } else if (strcmp(n, "--http") == 0 || strcmp(n, "--client") == 0) {
        rc = version(q, flag, v);
    } else if (strcmp(n, "--parallel") == 0) {
        q->multiplex = 1;
    } else if (strcmp(n, "--skip-verify") == 0) {
        q->insecure = 1;
    } else if (strcmp(n, "--mtls-cert") == 0 || strcmp(n, "--mtls-key") == 0) {
        rc = readable(flag, v);
        *(n[7] == 'c' ? &q->mtls_cert : &q->mtls_key) = v;
    } else if (strcmp(n, "--read-timeout") == 0 || strcmp(n, "--write-timeout") == 0) {
        rc = duration(flag, v, n[2] == 'r' ? &q->read_timeout_us : &q->write_timeout_us);
    } else if (strcmp(n, "--think") == 0) {
        rc = think(q, flag, v);
    } else if (strcmp(n, "--jwt-key") == 0) {
        rc = readable(flag, v);
        q->jwt_key = v;
    } else if (strcmp(n, "--jwts-filename") == 0) {
        rc = readable(flag, v);
        q->jwts_file = v;
    } else if (strcmp(n, "--jwt-exp") == 0) {
        uint64_t us;
        rc = duration(flag, v, &us);
        q->jwt_exp = v;
    } else {
        static const char *const names[] = {"--jwt-secret", "--jwt-alg", "--jwt-kid", "--jwt-sub", "--jwt-aud",
                                            "--jwt-iss", "--jwt-claims", "--jwt-header", "--jwt-cache"};
        const char **slots[] = {&q->jwt_secret, &q->jwt_alg, &q->jwt_kid, &q->jwt_sub, &q->jwt_aud,
                                &q->jwt_iss, &q->jwt_claims, &q->jwt_header, &q->jwt_cache};
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (strcmp(n, names[k]) == 0) *slots[k] = v;
        if (strcmp(n, "--jwt-header") == 0 && !ll_http_token_ok(v)) rc = ll_config_bad(flag, v, "a header name");
        if (strcmp(n, "--jwt-claims") == 0 && v[strspn(v, " \t")] != '{') rc = ll_config_bad(flag, v, "a JSON object");
    }
    return rc;
}

static int add_url(ll_quick *q, char *u) {
    size_t len = strlen(u);
    while (len && (u[len - 1] == ' ' || u[len - 1] == '\t' || u[len - 1] == '\r')) u[--len] = 0;
    while (*u == ' ' || *u == '\t') u++;
    if (!*u || *u == '#') return 0;
    if (!ll_http_url_ok(u, strlen(u))) {
        char shown[128];
        fprintf(stderr, "luaload: invalid URL '%s' (expected http:// or https://, a host, and no spaces or control "
                        "characters)\n", ll_http_printable(shown, sizeof(shown), u, strlen(u)));
        return LL_EXIT_CONFIG;
    }
    q->urls = ll_xrealloc(q->urls, (size_t)(q->nurls + 1) * sizeof(*q->urls));
    q->urls[q->nurls++] = u;
    return 0;
}

int ll_quick_set_urls(ll_config *cfg, const char *arg) {
    ll_quick *q = &cfg->quick;
    const char *sep = ",";
    if (arg[0] == '@') {
        ll_buf b = {0};
        if (ll_buf_read_file(&b, arg + 1) != 0) {
            fprintf(stderr, "luaload: cannot read the URL list %s: %s\n", arg + 1, strerror(errno));
            ll_buf_free(&b);
            return LL_EXIT_CONFIG;
        }
        q->urls_text = b.p ? b.p : strdup("");
        sep = "\n";
    } else {
        q->urls_text = strdup(arg);
    }
    if (!q->urls_text) return LL_EXIT_CONFIG;
    char *save = NULL;
    for (char *u = strtok_r(q->urls_text, sep, &save); u; u = strtok_r(NULL, sep, &save))
        if (add_url(q, u)) return LL_EXIT_CONFIG;
    if (q->nurls == 0) {
        fprintf(stderr, "luaload: %s: no URL in it\n", arg[0] == '@' ? arg + 1 : arg);
        return LL_EXIT_CONFIG;
    }
    cfg->quick_url = q->urls[0];
    return 0;
}

int ll_quick_finish(ll_config *cfg) {
    ll_quick *q = &cfg->quick;
    if (cfg->script_path && q->any) {
        const char *f = q->first_flag, *use = "give a URL instead of a script";
        if (strcmp(f, "--skip-verify") == 0)
            use = "with a script, --insecure-skip-tls-verify (k6's) or options.insecureSkipTLSVerify = true";
        else if (strcmp(f, "--header") == 0)
            use = "with a script, the request's params: { headers = { [\"Name\"] = \"value\" } }";
        fprintf(stderr, "luaload: %s is a quick-mode flag: %s\n", f, use);
        return LL_EXIT_CONFIG;
    }
    if (!cfg->quick_url) return 0;
    if (cfg->rps_set) {
        fprintf(stderr, "luaload: --rps limits a script's requests; quick mode's is --rate R (requests/s)\n");
        return LL_EXIT_CONFIG;
    }
    if (q->body && q->body_file) {
        fprintf(stderr, "luaload: --body and --body-file: give one of them\n");
        return LL_EXIT_CONFIG;
    }
    if (!!q->mtls_cert != !!q->mtls_key) {
        fprintf(stderr, "luaload: --mtls-cert and --mtls-key go together\n");
        return LL_EXIT_CONFIG;
    }
    if (q->jwt_key && q->jwt_secret) {
        fprintf(stderr, "luaload: --jwt-key and --jwt-secret: give one of them\n");
        return LL_EXIT_CONFIG;
    }
    if (q->jwts_file && (q->jwt_key || q->jwt_secret)) {
        fprintf(stderr, "luaload: -f/--jwts-filename gives the tokens: drop --jwt-key/--jwt-secret\n");
        return LL_EXIT_CONFIG;
    }
    int jwt_opt = q->jwt_kid || q->jwt_sub || q->jwt_aud || q->jwt_iss || q->jwt_claims || q->jwt_alg || q->jwt_exp;
    if (jwt_opt && !q->jwt_key && !q->jwt_secret) {
        fprintf(stderr, "luaload: the --jwt-* claims need --jwt-key (or --jwt-secret) to sign with\n");
        return LL_EXIT_CONFIG;
    }
    if (q->jwt_header && !q->jwt_key && !q->jwt_secret && !q->jwts_file) {
        fprintf(stderr, "luaload: --jwt-header needs --jwt-key, --jwt-secret or -f\n");
        return LL_EXIT_CONFIG;
    }
    if (cfg->run.iterations_set && q->requests) {
        fprintf(stderr, "luaload: -i and -r both count requests: give one of them\n");
        return LL_EXIT_CONFIG;
    }
    if (q->rate == 0 && q->requests && !cfg->run.duration_set) { /* N requests over the connections */
        cfg->run.iterations = q->requests;
        cfg->run.iterations_set = 1;
    }
    if (q->rate > 0 && !cfg->run.duration_set && !q->requests) {
        fprintf(stderr, "luaload: --rate needs a duration (-d) or a request count (-r)\n");
        return LL_EXIT_CONFIG;
    }
    /* an open model: arrivals at a rate, whatever the server does (its
     * scenario is the script's, so the -c/-d shortcuts must not replace it) */
    double secs = cfg->run.duration_set ? (double)cfg->run.duration_us / 1e6 : 0;
    q->open_rate = q->rate > 0 ? q->rate : q->requests && secs > 0 ? (double)q->requests / secs : 0;
    if (q->open_rate <= 0) return 0;
    q->open_secs = secs > 0 ? secs : (double)q->requests / q->open_rate;
    q->open_vus = cfg->run.vus_set ? cfg->run.vus : 1;
    cfg->run.vus_set = cfg->run.duration_set = 0;
    cfg->run.shortcut_cli = cfg->run.stages_set;
    return 0;
}

/* The script of a quick run: its options (the open model's scenario, if
 * any) and an empty default; the iterations are quick_native.c's. */
char *ll_quick_script(const ll_config *cfg) {
    const ll_quick *q = &cfg->quick;
    char s[512];
    size_t n = 0;
    if (q->open_rate > 0)
        n = (size_t)snprintf(s, sizeof(s),
                             "options = { scenarios = { default = { executor = \"constant-arrival-rate\", rate = %.9g, "
                             "timeUnit = \"1s\", duration = %.3f, preAllocatedVUs = %lld, maxVUs = %lld } } }\n",
                             q->open_rate, q->open_secs * 1000.0, (long long)q->open_vus, (long long)q->open_vus);
    snprintf(s + n, sizeof(s) - n, "function default() end\n");
    return strdup(s);
}

