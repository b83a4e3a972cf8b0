/* duration.c -- duration and integer parsing shared by the CLI, script
 * options and the built-in server. */
#include "duration.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double unit_us(const char *s, size_t *len) {
    static const struct { const char *name; double us; } units[] = {
        {"ns", 0.001}, {"us", 1}, {"\xC2\xB5s", 1}, {"ms", 1000},
        {"s", 1e6}, {"m", 60e6}, {"h", 3600e6},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].name);
        if (strncmp(s, units[i].name, n) != 0) continue;
        /* "m" must not match the start of "ms" */
        if (n == 1 && s[0] == 'm' && s[1] == 's') continue;
        *len = n;
        return units[i].us;
    }
    return -1;
}

int ll_duration_parse(const char *s, uint64_t *us) {
    if (!s || !*s) return -1;
    if (strcmp(s, "0") == 0) {
        *us = 0;
        return 0;
    }
    long double total = 0; /* 64 bits of mantissa: sums near the longest duration stay exact */
    const char *p = s;
    while (*p) {
        /* digits with at most one '.': no sign, exponent or hex (as Go) */
        size_t n = strspn(p, "0123456789.");
        const char *dot = memchr(p, '.', n);
        if (n == 0 || n >= 64 || (n == 1 && *p == '.') || (dot && memchr(dot + 1, '.', n - (size_t)(dot - p) - 1)))
            return -1;
        char num[64];
        memcpy(num, p, n);
        num[n] = 0;
        char *end;
        errno = 0;
        double v = strtod(num, &end);
        if (*end || errno || v < 0) return -1;
        end = (char *)p + n;
        size_t ulen;
        double u = unit_us(end, &ulen);
        if (u < 0) return -1;
        total += (long double)v * u;
        p = end + ulen;
    }
    if (!(total < (long double)LL_DURATION_MAX_US + 1)) return -1; /* rounded down to us below */
    *us = (uint64_t)total;
    if (*us > LL_DURATION_MAX_US) return -1; /* the double rounded up */
    return 0;
}

int ll_duration_from_ms(double ms, uint64_t *us) {
    if (!(ms >= 0) || !(ms * 1000 <= (double)LL_DURATION_MAX_US)) return -1;
    *us = (uint64_t)(ms * 1000);
    if (*us > LL_DURATION_MAX_US) return -1;
    return 0;
}

uint64_t ll_duration_add(uint64_t a, uint64_t b) {
    if (a > LL_DURATION_MAX_US || b > LL_DURATION_MAX_US - a) return LL_DURATION_MAX_US + 1;
    return a + b;
}

int ll_duration_parse_int(const char *s, int64_t *out) {
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

/* whole.frac with frac of digits digits, without trailing zeros ("30",
 * "1.5", "0.25"). */
static void format_decimal(uint64_t whole, uint64_t frac, int digits, char *buf, size_t len) {
    snprintf(buf, len, "%llu.%0*llu", (unsigned long long)whole, digits, (unsigned long long)frac);
    char *end = buf + strlen(buf) - 1;
    while (*end == '0') *end-- = 0;
    if (*end == '.') *end = 0;
}

void ll_duration_format(uint64_t us, char *buf, size_t len) {
    char num[48];
    if (us == 0) {
        snprintf(buf, len, "0s");
    } else if (us < 1000) {
        snprintf(buf, len, "%llu\xC2\xB5s", (unsigned long long)us);
    } else if (us < 1000000) {
        format_decimal(us / 1000, us % 1000, 3, num, sizeof(num));
        snprintf(buf, len, "%sms", num);
    } else {
        uint64_t h = us / 3600000000ull, m = us / 60000000ull % 60, s = us % 60000000ull;
        format_decimal(s / 1000000, s % 1000000, 6, num, sizeof(num));
        if (h) snprintf(buf, len, "%lluh%llum%ss", (unsigned long long)h, (unsigned long long)m, num);
        else if (m) snprintf(buf, len, "%llum%ss", (unsigned long long)m, num);
        else snprintf(buf, len, "%ss", num);
    }
}
