/* test_duration.c -- duration and integer parsing (src/core/duration.c). */
/* links: ll_base */
#include <stdint.h>
#include <string.h>

#include "duration.h"
#include "test_util.h"

static void good(const char *s, uint64_t want_us) {
    uint64_t us = 12345;
    int rc = ll_duration_parse(s, &us);
    tu_check(rc == 0 && us == want_us, "duration '%s' = %llu us (got rc %d, %llu)", s,
             (unsigned long long)want_us, rc, (unsigned long long)us);
}

static void shown(uint64_t us, const char *want) {
    char buf[64];
    ll_duration_format(us, buf, sizeof(buf));
    tu_check(strcmp(buf, want) == 0, "%llu us shows as %s (got %s)", (unsigned long long)us, want, buf);
    uint64_t back;
    tu_check(ll_duration_parse(buf, &back) == 0 && back == us, "formatted duration parses back");
}

static void bad(const char *s) {
    uint64_t us;
    tu_check(ll_duration_parse(s, &us) != 0, "duration '%s' rejected", s ? s : "(null)");
}

int main(void) {
    good("0", 0);
    good("10s", 10000000);
    good("1.5s", 1500000);
    good("250ms", 250000);
    good("100us", 100);
    good("100µs", 100);
    good("1500ns", 1);
    good("2m", 120000000);
    good("1m30s", 90000000);
    good("1h", 3600000000ull);
    good("1h2m3s", 3723000000ull);
    good("0.5m", 30000000);
    good("1m500ms", 60500000);
    bad(NULL);
    bad("");
    bad("10");
    bad("s");
    bad("10x");
    bad("-5s");
    bad("5 s");
    bad("1.2.3s");
    bad("10s ");
    bad("ms");
    bad("0x10s");
    bad("1e3ms");
    bad(".s");
    bad("+5s");
    /* what int64 nanoseconds hold (Go's time.Duration), no more: 2^64 ns
     * once wrapped to 3.6 s */
    good("2562047h47m16s854775us", LL_DURATION_MAX_US);
    good("2562047h47m16.854775807s", LL_DURATION_MAX_US); /* 2^63-1 ns exactly */
    bad("2562047h47m16s854776us");
    bad("5124095.577h");
    bad("99999999999999999999999h");
    uint64_t us = 0;
    tu_check(ll_duration_from_ms(1500, &us) == 0 && us == 1500000, "1500 ms");
    tu_check(ll_duration_from_ms(-1, &us) != 0, "-1 ms rejected");
    tu_check(ll_duration_from_ms(0.0 / 0.0, &us) != 0, "NaN ms rejected");
    tu_check(ll_duration_from_ms(1e300, &us) != 0, "1e300 ms rejected");
    tu_check(ll_duration_from_ms(18446744073709551.616, &us) != 0, "2^64 ns in ms rejected");
    tu_check(ll_duration_add(1, 2) == 3, "1 + 2");
    tu_check(ll_duration_add(LL_DURATION_MAX_US, 1) > LL_DURATION_MAX_US, "a sum past the longest duration");
    tu_check(ll_duration_add(LL_DURATION_MAX_US + 5, 0) > LL_DURATION_MAX_US, "a term past the longest");

    int64_t v;
    tu_check(ll_duration_parse_int("42", &v) == 0 && v == 42, "int 42");
    tu_check(ll_duration_parse_int("0", &v) == 0 && v == 0, "int 0");
    tu_check(ll_duration_parse_int("-1", &v) != 0, "int -1 rejected");
    tu_check(ll_duration_parse_int("12abc", &v) != 0, "int 12abc rejected");
    tu_check(ll_duration_parse_int("", &v) != 0, "int empty rejected");
    tu_check(ll_duration_parse_int("99999999999999999999", &v) != 0, "int overflow rejected");

    shown(0, "0s");
    shown(250, "250\xC2\xB5s");
    shown(1500, "1.5ms");
    shown(300000, "300ms");
    shown(1500000, "1.5s");
    shown(30000000, "30s");
    shown(90000000, "1m30s");
    shown(600000000, "10m0s");
    shown(3600000000ull, "1h0m0s");
    shown(3725500000ull, "1h2m5.5s");
    return tu_summary();
}
