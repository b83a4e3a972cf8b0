/* test_util.h -- tiny check/report helpers for standalone unit tests.
 *
 * tu_check(cond, fmt, ...) prints "ok   ..." or "FAIL ..." and counts it;
 * tu_summary() prints "N passed, M failed" and returns the exit status. */
#ifndef LL_TEST_UTIL_H
#define LL_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>

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

static inline int tu_summary(void) {
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

#endif
