/* test_alt_svc.c -- reading Alt-Svc values and the table of origins'
 * HTTP/3 alternatives (src/core/http/alt_svc.c): RFC 7838's syntax (the
 * first h3 of a list, quoted authorities, parameters, ma), "clear",
 * expiry, forgetting, the bound, and values that do not parse. */
/* links: ll_http */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alt_svc.h"
#include "test_util.h"

#define SEC 1000000000ull
#define NOW (1000 * SEC)

static int heard(ll_alt_svc *a, const char *v) { return ll_alt_svc_heard(a, "example.com", 443, v, strlen(v), NOW); }

/* the alternative of example.com:443 at t as "host:port" ("" for the
 * origin's host), or "none" */
static const char *alt_at(ll_alt_svc *a, uint64_t t) {
    static char buf[300];
    const ll_alt_svc_entry *e = ll_alt_svc_find(a, "example.com", 443, t);
    if (!e) return "none";
    snprintf(buf, sizeof(buf), "%s:%d", e->host, e->port);
    return buf;
}

static void expect(ll_alt_svc *a, uint64_t t, const char *want, const char *what) {
    const char *got = alt_at(a, t);
    tu_check(strcmp(got, want) == 0, "%s: %s (want %s)", what, got, want);
}

static void test_syntax(void) {
    ll_alt_svc a = {0};
    tu_check(heard(&a, "h3=\":8443\"") == 1, "h3=\":8443\" is remembered");
    expect(&a, NOW + 1, ":8443", "the origin's host, port 8443");
    expect(&a, NOW + 86399 * SEC, ":8443", "24 hours by default: still there after 86399 s");
    expect(&a, NOW + 86400 * SEC, "none", "24 hours by default: gone at 86400 s");
    memset(&a, 0, sizeof(a));
    heard(&a, "h2=\":443\", h3-29=\":1\"; ma=100, h3=\"alt.example.com:9443\"; ma=60; persist=1");
    expect(&a, NOW + 59 * SEC, "alt.example.com:9443", "the first h3 of a list, past h2 and h3-29; another host");
    expect(&a, NOW + 60 * SEC, "none", "ma=60: gone after 60 s");
    heard(&a, "h3=\":1\" ; ma=5 , h3=\":2\"");
    expect(&a, NOW + 1, ":1", "blanks around ; and , and the first of two h3");
    heard(&a, "h3=\"[::1]:7443\"; ma=\"30\"");
    expect(&a, NOW + 1, "::1:7443", "an IPv6 alternative, a quoted ma");
    heard(&a, "h3=\"example.com:443\"");
    expect(&a, NOW + 1, ":443", "the origin's own host is kept as \"\"");
    heard(&a, "h3=\"\\:\\9\\4\\4\\3\"");
    expect(&a, NOW + 1, ":9443", "escapes in a quoted authority are undone");
}

static void test_clear_and_forget(void) {
    ll_alt_svc a = {0};
    heard(&a, "h3=\":8443\"");
    tu_check(heard(&a, "clear") == 0, "clear remembers nothing");
    expect(&a, NOW + 1, "none", "clear forgets the origin's alternative");
    heard(&a, "h3=\":8443\"");
    heard(&a, "  CLEAR  ");
    expect(&a, NOW + 1, "none", "clear in any case, with blanks");
    heard(&a, "h3=\":8443\"");
    heard(&a, "clear, h3=\":1\"");
    expect(&a, NOW + 1, ":8443", "\"clear, ...\" is not clear (and does not parse: nothing changes)");
    ll_alt_svc_forget(&a, "example.com", 443);
    expect(&a, NOW + 1, "none", "forget");
    ll_alt_svc_heard(&a, "other.com", 443, "h3=\":2\"", 7, NOW);
    expect(&a, NOW + 1, "none", "another origin's alternative is its own");
    tu_check(ll_alt_svc_find(&a, "other.com", 443, NOW + 1) != NULL, "other.com has its own");
    tu_check(ll_alt_svc_find(&a, "other.com", 8443, NOW + 1) == NULL, "a port is part of the origin");
}

static void test_garbage(void) {
    ll_alt_svc a = {0};
    static const char *const bad[] = {"",           "h3",          "h3=",          "h3=\":8443",  "h3=\"8443\"",
                                      "h3=\":0\"",   "h3=\":65536\"", "h3=\":84x3\"", "h3=\":\"",    "=\":1\"",
                                      "h2=\":443\"", "h3=\":1\"; ma=0", "h3=\":1\"; ma", ";;;,,,",    "h3=\":1\" junk"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int r = heard(&a, bad[i]);
        tu_check(r == 0 && a.n == 0, "'%s' remembers nothing", bad[i]);
    }
    /* a value cut anywhere, and every byte, never crashes or overruns */
    const char *v = "h3=\"alt.example.com:9443\"; ma=60; persist=1, h3=\":1\"";
    for (size_t n = 0; n <= strlen(v); n++) ll_alt_svc_heard(&a, "example.com", 443, v, n, NOW);
    char junk[64];
    for (int k = 0; k < 2000; k++) {
        size_t n = tu_rand() % sizeof(junk);
        for (size_t i = 0; i < n; i++) junk[i] = "h3=\":;,\\ 19ma"[tu_rand() % 14];
        ll_alt_svc_heard(&a, "example.com", 443, junk, n, NOW);
    }
    tu_check(a.n <= 1, "random values leave at most the origin's one entry (%d)", a.n);
}

static void test_bound(void) {
    ll_alt_svc a = {0};
    char host[32];
    for (int i = 0; i < LL_ALT_SVC_MAX + 10; i++) {
        snprintf(host, sizeof(host), "h%d.example", i);
        char v[32];
        snprintf(v, sizeof(v), "h3=\":1\"; ma=%d", 100 + i);
        ll_alt_svc_heard(&a, host, 443, v, strlen(v), NOW);
    }
    tu_check(a.n == LL_ALT_SVC_MAX, "at most %d origins (%d)", LL_ALT_SVC_MAX, a.n);
    tu_check(ll_alt_svc_find(&a, "h0.example", 443, NOW + 1) == NULL, "the one that expires first went");
    snprintf(host, sizeof(host), "h%d.example", LL_ALT_SVC_MAX + 9);
    tu_check(ll_alt_svc_find(&a, host, 443, NOW + 1) != NULL, "the newest is there");
}

int main(void) {
    test_syntax();
    test_clear_and_forget();
    test_garbage();
    test_bound();
    return tu_summary();
}
