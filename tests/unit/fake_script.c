/* fake_script.c -- run/script.h with no Lua (see fake_script.h). A
 * function's reference is its place in fake_script_functions plus one; a
 * VU's co_ref holds the function its next resume runs. */
#include "fake_script.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define REF_SETUP_RESULT 900 /* what setup() returned */
#define REF_DATA 901         /* setup()'s data decoded in a worker */

const char *fake_script_functions = "default";
const char *fake_script_failing = "";
const char *fake_script_setup_json = NULL;
fake_script_stats fake_script;

void fake_script_reset(void) { memset(&fake_script, 0, sizeof(fake_script)); }

/* The place (1-based) of name among the space-separated names of list; 0 when absent. */
static int place(const char *list, const char *name) {
    size_t n = strlen(name);
    int i = 1;
    for (const char *p = list; *p; i++) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return i;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* The name of function reference ref, in buf. */
static const char *name_of(int ref, char *buf, size_t len) {
    const char *p = fake_script_functions;
    for (int i = 1; i < ref && p; i++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    if (!p) return "";
    size_t n = strcspn(p, " ");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return buf;
}

static int fake_open(ll_worker *w) {
    (void)w;
    atomic_fetch_add(&fake_script.opens, 1);
    return 0;
}

static int fake_open_bare(ll_worker *w) { return fake_open(w); }

static void fake_close(ll_worker *w) {
    (void)w;
    atomic_fetch_add(&fake_script.closes, 1);
}

static void fake_nothing(ll_worker *w) { (void)w; }

static int fake_read_options(ll_worker *w, ll_config *cfg, ll_registry *reg, char *err, size_t errlen) {
    (void)w, (void)cfg, (void)reg, (void)err, (void)errlen;
    return 0;
}

static int fake_loaded(ll_worker *w, const char *name) {
    (void)w, (void)name;
    return 0;
}

static int fake_function(ll_worker *w, const char *name, int *ref, const char **type) {
    (void)w;
    int at = place(fake_script_functions, name);
    if (at && ref) *ref = at;
    if (!at && type) *type = "nil";
    return at > 0;
}

static int fake_scenario_env(ll_worker *w, const ll_scenario *sc) {
    (void)w, (void)sc;
    return LL_SCRIPT_NOREF;
}

static void fake_use_env(ll_worker *w, int env_ref) { (void)w, (void)env_ref; }

static int fake_decode(ll_worker *w, const char *json, int *ref, char *err, size_t errlen) {
    (void)w;
    if (!fake_script_setup_json || strcmp(json, fake_script_setup_json) != 0) {
        snprintf(err, errlen, "fake script: unexpected data %s", json);
        return -1;
    }
    *ref = REF_DATA;
    return 0;
}

static char *fake_encode(ll_worker *w, int ref, char *err, size_t errlen) {
    (void)w;
    err[0] = '\0';
    if (ref != REF_SETUP_RESULT || !fake_script_setup_json) return NULL;
    (void)errlen;
    return strdup(fake_script_setup_json);
}

static void fake_unref(ll_worker *w, int ref) { (void)w, (void)ref; }

static void fake_vu_open(ll_vu *vu) {
    vu->main.co_ref = LL_SCRIPT_NOREF;
    atomic_fetch_add(&fake_script.vus, 1);
}

static void fake_vu_close(ll_vu *vu) { vu->main.co_ref = LL_SCRIPT_NOREF; }

static int fake_vu_call(ll_vu *vu, int fn_ref, int arg_ref) {
    vu->main.co_ref = fn_ref;
    if (arg_ref == REF_DATA) atomic_fetch_add(&fake_script.with_data, 1);
    return arg_ref == LL_SCRIPT_NOREF ? 0 : 1;
}

static int fake_vu_resume(ll_vu *vu, int nargs, char *err, size_t errlen) {
    (void)nargs;
    char buf[64];
    const char *name = name_of(vu->main.co_ref, buf, sizeof(buf));
    if (strcmp(name, "setup") == 0) atomic_fetch_add(&fake_script.setups, 1);
    else if (strcmp(name, "teardown") == 0) atomic_fetch_add(&fake_script.teardowns, 1);
    else atomic_fetch_add(&fake_script.iterations, 1);
    if (place(fake_script_failing, name)) {
        snprintf(err, errlen, "fake error in %s", name);
        return LL_SCRIPT_FAILED;
    }
    return LL_SCRIPT_RETURNED;
}

static int fake_vu_result(ll_vu *vu, int keep) {
    char buf[64];
    int setup = strcmp(name_of(vu->main.co_ref, buf, sizeof(buf)), "setup") == 0;
    return keep && setup && fake_script_setup_json ? REF_SETUP_RESULT : LL_SCRIPT_NOREF;
}

static int fake_summary(ll_worker *w, const cJSON *data) {
    (void)w;
    atomic_fetch_add(&fake_script.summaries, 1);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(data, "metrics");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(m, "iterations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "values");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(v, "count");
    fake_script.summary_iterations = cJSON_IsNumber(count) ? count->valuedouble : -1;
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "http_reqs"), "values");
    count = cJSON_GetObjectItemCaseSensitive(v, "count");
    fake_script.summary_http_reqs = cJSON_IsNumber(count) ? count->valuedouble : 0;
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "http_req_failed"), "values");
    count = cJSON_GetObjectItemCaseSensitive(v, "passes");
    fake_script.summary_failed = cJSON_IsNumber(count) ? count->valuedouble : 0;
    return 0;
}

const ll_script_ops fake_script_ops = {
    .open = fake_open,
    .open_bare = fake_open_bare,
    .close = fake_close,
    .stop = fake_nothing,
    .stop_clear = fake_nothing,
    .collect = fake_nothing,
    .read_options = fake_read_options,
    .loaded = fake_loaded,
    .function = fake_function,
    .scenario_env = fake_scenario_env,
    .use_env = fake_use_env,
    .decode = fake_decode,
    .encode = fake_encode,
    .unref = fake_unref,
    .vu_open = fake_vu_open,
    .vu_close = fake_vu_close,
    .vu_call = fake_vu_call,
    .vu_resume = fake_vu_resume,
    .vu_result = fake_vu_result,
    .summary = fake_summary,
};
