/* fuzz_thresholds.c -- libFuzzer target for src/core/thresholds.c: feeds the
 * input (NUL-terminated) to ll_threshold_parse and ll_threshold_metric_key_parse and
 * checks that what they return on success is sane; on failure, that err is
 * a non-empty single line. Buffers are malloc'ed at their exact size so
 * AddressSanitizer sees any write past them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threshold.h"
#include "fuzz_check.h"

#define MAX_TAGS 3

static void check_err(const char *err, size_t errlen) {
    size_t n = strnlen(err, errlen);
    CHECK(n > 0 && n < errlen);
    CHECK(!memchr(err, '\n', n));
}

static int inside(const char *p, const char *buf, size_t len) {
    return p && p >= buf && p < buf + len && memchr(p, '\0', (size_t)(buf + len - p));
}

static void fuzz_threshold(const char *s) {
    char *err = malloc(96);
    ll_threshold_expr e;
    int rc = ll_threshold_parse(s, &e, err, 96);
    CHECK(rc == 0 || rc == -1);
    if (rc == -1) {
        check_err(err, 96);
        free(err);
        return;
    }
    CHECK(e.agg >= LL_AGG_COUNT && e.agg <= LL_AGG_PERCENTILE);
    CHECK(e.op >= LL_OP_LT && e.op <= LL_OP_NE);
    CHECK(isfinite(e.target));
    if (e.agg == LL_AGG_PERCENTILE) CHECK(e.percentile >= 0 && e.percentile <= 100);

    char name[16];
    const char *n = ll_threshold_agg_name(&e, name, sizeof(name));
    CHECK(n && strlen(n) < sizeof(name));
    (void)ll_threshold_holds(&e, e.target);
    (void)ll_threshold_holds(&e, NAN);

    /* Round trip: the canonical text parses back to the same expression. */
    static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
    char text[128];
    if (e.agg == LL_AGG_PERCENTILE)
        snprintf(text, sizeof(text), "p(%.17g) %s %.17g", e.percentile, ops[e.op], e.target);
    else
        snprintf(text, sizeof(text), "%s %s %.17g", n, ops[e.op], e.target);
    ll_threshold_expr e2;
    CHECK(ll_threshold_parse(text, &e2, err, 96) == 0);
    CHECK(e2.agg == e.agg && e2.op == e.op && e2.target == e.target);
    if (e.agg == LL_AGG_PERCENTILE) CHECK(e2.percentile == e.percentile);
    free(err);
}

static int name_char(char c, int first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

static void fuzz_metric_key(const char *s, size_t buflen) {
    char *buf = malloc(buflen ? buflen : 1);
    char *err = malloc(80);
    const char *name = NULL, *keys[MAX_TAGS], *values[MAX_TAGS];
    int n = ll_threshold_metric_key_parse(s, buflen ? buf : NULL, buflen, &name, keys, values, MAX_TAGS, err, 80);
    CHECK(n >= -1 && n <= MAX_TAGS);
    if (n == -1) {
        check_err(err, 80);
    } else {
        CHECK(inside(name, buf, buflen));
        size_t nl = strlen(name);
        CHECK(nl >= 1 && nl <= 128);
        for (size_t i = 0; i < nl; i++) CHECK(name_char(name[i], i == 0));
        for (int i = 0; i < n; i++) {
            CHECK(inside(keys[i], buf, buflen));
            CHECK(inside(values[i], buf, buflen));
            CHECK(keys[i][0] != '\0');
        }
    }
    free(err);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    fuzz_threshold(s);
    fuzz_metric_key(s, size + 1); /* always large enough */
    fuzz_metric_key(s, size / 2); /* often too small */
    free(s);
    return 0;
}
