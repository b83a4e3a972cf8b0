/* test_size.c -- byte sizes (src/core/base/size.c). */
/* links: ll_base */
#include <stdint.h>

#include "size.h"
#include "test_util.h"

static void good(const char *s, int64_t want) {
    int64_t v = -1;
    int rc = ll_size_parse(s, &v);
    tu_check(rc == 0 && v == want, "size '%s' = %lld (got rc %d, %lld)", s, (long long)want, rc, (long long)v);
}

static void bad(const char *s) {
    int64_t v;
    tu_check(ll_size_parse(s, &v) != 0, "size '%s' rejected", s);
}

int main(void) {
    good("0", 0);
    good("4096", 4096);
    good("64k", 65536);
    good("64K", 65536);
    good("64KB", 65536);
    good("64kib", 65536);
    good("512MiB", 512ll << 20);
    good("1m", 1 << 20);
    good("2GB", 2ll << 30);
    good("1g", 1 << 30);
    good("9223372036854775807", INT64_MAX);
    bad("");
    bad("k");
    bad("-1");
    bad("1.5M");
    bad("10 MB");
    bad("10TB");
    bad("10x");
    bad("9223372036854775808");
    bad("9000000000G");
    return tu_summary();
}
