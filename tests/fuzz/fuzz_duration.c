/* fuzz_duration.c -- libFuzzer target for src/core/duration.c: feeds the
 * input (NUL-terminated) to ll_duration_parse and ll_duration_parse_int; on success
 * parses it again and checks the result is the same and in range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';

    uint64_t us = 0, us2 = 1;
    if (ll_duration_parse(s, &us) == 0) {
        CHECK(s[0] != '\0');
        CHECK(us <= LL_DURATION_MAX_US);
        CHECK(ll_duration_parse(s, &us2) == 0 && us2 == us);
    }
    int64_t v = -1, v2 = -2;
    if (ll_duration_parse_int(s, &v) == 0) {
        CHECK(v >= 0);
        CHECK(ll_duration_parse_int(s, &v2) == 0 && v2 == v);
    }
    free(s);
    return 0;
}
