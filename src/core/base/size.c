/* size.c -- byte sizes with binary units (see size.h). */
#include "size.h"

#include <string.h>
#include <strings.h>

int ll_size_parse(const char *s, int64_t *out) {
    static const struct { const char *unit; int64_t mult; } units[] = {
        {"", 1},
        {"k", 1 << 10}, {"kb", 1 << 10}, {"kib", 1 << 10},
        {"m", 1 << 20}, {"mb", 1 << 20}, {"mib", 1 << 20},
        {"g", 1 << 30}, {"gb", 1 << 30}, {"gib", 1 << 30},
    };
    int64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - (*p - '0')) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(p, units[i].unit) != 0) continue;
        if (v > INT64_MAX / units[i].mult) return -1;
        *out = v * units[i].mult;
        return 0;
    }
    return -1;
}
