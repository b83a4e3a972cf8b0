/* test_util.h -- tiny check/report helpers for standalone unit tests.
 *
 * tu_check(cond, fmt, ...) prints "ok   ..." or "FAIL ..." and counts it;
 * tu_summary() prints "N passed, M failed" and returns the exit status.
 * tu_rand() is a seeded xorshift64* generator (deterministic runs; a test
 * may set tu_rng_state first); tu_exact_percentile() is k6's percentile of
 * a sorted array, the reference the histogram tests compare against.
 * tu_capture_stderr()/tu_release_stderr() send stderr to a file for a while
 * and count the lines that have a string (warnings printed once). */
#ifndef LL_TEST_UTIL_H
#define LL_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int tu_passed, tu_failed;

__attribute__((format(printf, 2, 3)))
static inline int tu_check(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(ok ? "ok   " : "FAIL ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    if (ok) tu_passed++;
    else tu_failed++;
    return ok;
}

static uint64_t tu_rng_state = 0x9E3779B97F4A7C15ull;

static inline uint64_t tu_rand(void) {
    uint64_t x = tu_rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    tu_rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* qsort comparator for int64_t */
static inline int tu_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static inline int64_t tu_exact_percentile(const int64_t *sorted, int64_t n, double p) {
    double r = ceil(p / 100.0 * (double)n) - 1;
    int64_t i = r < 0 ? 0 : r > (double)(n - 1) ? n - 1 : (int64_t)r;
    return sorted[i];
}

typedef struct tu_captured {
    FILE *f;
    int saved;
} tu_captured;

static inline tu_captured tu_capture_stderr(void) {
    tu_captured c = {tmpfile(), dup(2)};
    fflush(stderr);
    dup2(fileno(c.f), 2);
    return c;
}

/* Restores stderr; returns how many captured lines contain needle (and
 * shows them all on stdout, in the test's log). */
static inline int tu_release_stderr(tu_captured c, const char *needle) {
    fflush(stderr);
    dup2(c.saved, 2);
    close(c.saved);
    rewind(c.f);
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof(line), c.f)) {
        n += strstr(line, needle) != NULL;
        fputs(line, stdout);
    }
    fclose(c.f);
    return n;
}

static inline int tu_summary(void) {
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

#endif
