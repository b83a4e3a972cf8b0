/* test_output_text.c -- the text sinks' numbers and tag set texts
 * (src/core/metrics/output_text.c): every whole number of thousandths
 * prints as "%.6f" does and its short form reads back as the same double;
 * anything else (and NaN, infinities, 1e8 and more) is left to printf;
 * integers as "%lld"; a tag set's text is kept by id until freed. */
/* links: ll_metrics */
#include "output_text.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_milli(double x) {
    char got[32], want[64], shortf[32];
    size_t n6 = ll_text_milli(x, 1, got), n = ll_text_milli(x, 0, shortf);
    snprintf(want, sizeof(want), "%.6f", x);
    return n6 && n6 == strlen(got) && strcmp(got, want) == 0 && n == strlen(shortf) && strtod(shortf, NULL) == x &&
           !strchr(shortf, 'e') && (!strchr(shortf, '.') || shortf[n - 1] != '0');
}

static void test_milli(void) {
    int ok = 1;
    int64_t bad = 0;
    for (int64_t k = -200000; k <= 2000000 && ok; k++) {
        ok &= check_milli((double)k / 1000.0);
        if (!ok) bad = k;
    }
    tu_check(ok, "milli: k/1000 for k in -200,000..2,000,000 prints as %%.6f and its short form reads back (%lld)",
             (long long)bad);
    ok = 1;
    for (int i = 0; i < 200000 && ok; i++) {
        int64_t k = (int64_t)(tu_rand() % 99999999999ull); /* up to 1e8 - 0.001 */
        ok &= check_milli((double)k / 1000.0);
        if (!ok) bad = k;
    }
    tu_check(ok, "milli: 200,000 random thousandths below 1e8 too (%lld)", (long long)bad);
    char s[32];
    tu_check(ll_text_milli(12, 0, s) && strcmp(s, "12") == 0 && ll_text_milli(1.5, 0, s) && strcmp(s, "1.5") == 0 &&
                 ll_text_milli(0.123, 0, s) && strcmp(s, "0.123") == 0 && ll_text_milli(-0.02, 0, s) &&
                 strcmp(s, "-0.02") == 0 && ll_text_milli(0, 0, s) && strcmp(s, "0") == 0,
             "milli: short forms 12, 1.5, 0.123, -0.02, 0");
    tu_check(ll_text_milli(0.0001, 0, s) == 0 && ll_text_milli(1.0 / 3, 1, s) == 0 && ll_text_milli(1e8, 0, s) == 0 &&
                 ll_text_milli(-1e9, 1, s) == 0 && ll_text_milli(NAN, 0, s) == 0 && ll_text_milli(INFINITY, 0, s) == 0,
             "milli: 0.0001, 1/3, 1e8, -1e9, NaN, inf are left to printf");
}

static void test_int(void) {
    static const int64_t v[] = {0, 7, -7, 10, 1700000000, -1234567890123, INT64_MAX, INT64_MIN};
    int ok = 1;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char got[24], want[24];
        size_t n = ll_text_int(v[i], got);
        snprintf(want, sizeof(want), "%lld", (long long)v[i]);
        ok &= n == strlen(want) && strcmp(got, want) == 0;
    }
    tu_check(ok, "int: as %%lld, INT64_MIN and INT64_MAX too");
}

static void test_tagtext(void) {
    ll_tagtext t = {0};
    tu_check(ll_tagtext_get(&t, 0) == NULL && ll_tagtext_get(&t, -1) == NULL, "tagtext: nothing made yet");
    ll_buf_puts(ll_tagtext_make(&t, 5), "five");
    ll_tagtext_make(&t, 1000); /* made empty */
    const ll_buf *b = ll_tagtext_get(&t, 5), *e = ll_tagtext_get(&t, 1000);
    tu_check(b && b->len == 4 && strcmp(b->p, "five") == 0 && e && e->len == 0 && !ll_tagtext_get(&t, 4) &&
                 !ll_tagtext_get(&t, 999) && !ll_tagtext_get(&t, 5000),
             "tagtext: made texts are kept by id, an empty one too; others are not made");
    ll_tagtext_free(&t);
    tu_check(t.n == 0 && !ll_tagtext_get(&t, 5), "tagtext: free empties it");
}

int main(void) {
    test_milli();
    test_int();
    test_tagtext();
    return tu_summary();
}
