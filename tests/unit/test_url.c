/* test_url.c -- URLs taken apart and references resolved
 * (src/core/http/url.c). */
/* links: ll_http */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "url.h"

static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* s with its control characters shown as '?', for the report lines */
static const char *show(const char *s) {
    static char buf[4][128];
    static int k;
    char *out = buf[k++ % 4];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof(buf[0]); i++) out[i] = (unsigned char)s[i] < 32 ? '?' : s[i];
    out[i] = 0;
    return out;
}

static void parses(const char *s, const char *scheme, const char *host, int port, const char *path, const char *query) {
    ll_url u;
    int rc = ll_url_parse(&u, s);
    tu_check(rc == 0 && same(u.scheme, scheme) && same(u.host, host) && u.port == port && same(u.path, path) &&
                 same(u.query, query),
             "parse '%s' = %s | %s | %d | %s | %s (got %d: %s | %s | %d | %s | %s)", s, scheme, host, port, path,
             query ? query : "NULL", rc, u.scheme ? u.scheme : "NULL", u.host ? u.host : "NULL", u.port,
             u.path ? u.path : "NULL", u.query ? u.query : "NULL");
    ll_url_free(&u);
}

static void rejects(const char *s) {
    ll_url u;
    memset(&u, 0x5a, sizeof(u));
    int rc = ll_url_parse(&u, s);
    tu_check(rc == -1 && !u.scheme && !u.host && !u.path && !u.query && u.port == 0, "parse '%s' rejected, u zeroed",
             show(s));
    ll_url_free(&u);
}

static void resolves(const char *base, const char *ref, const char *want) {
    char *got = ll_url_resolve(base, ref);
    tu_check(same(got, want), "resolve '%s' against '%s' = %s (got %s)", show(ref), base, want ? want : "NULL",
             got ? got : "NULL");
    free(got);
}

static void test_parse(void) {
    parses("http://example.com", "http", "example.com", 80, "/", NULL);
    parses("https://example.com/", "https", "example.com", 443, "/", NULL);
    parses("http://example.com:8080/a/b?x=1&y=2#frag", "http", "example.com", 8080, "/a/b", "x=1&y=2");
    parses("https://example.com:443/p", "https", "example.com", 443, "/p", NULL);
    parses("HTTP://EXAMPLE.COM/Path", "http", "example.com", 80, "/Path", NULL);
    parses("HtTpS://WwW.Example.Org:8443", "https", "www.example.org", 8443, "/", NULL);
    parses("http://example.com/a/./b/../c/%7e", "http", "example.com", 80, "/a/c/%7e", NULL);
    parses("http://example.com/a/b/../../..", "http", "example.com", 80, "/", NULL);
    parses("http://example.com/?", "http", "example.com", 80, "/", NULL);
    parses("http://example.com?q", "http", "example.com", 80, "/", "q");
    parses("http://user:pass@example.com/x", "http", "example.com", 80, "/x", NULL);
    parses("http://[::1]:8080/x", "http", "::1", 8080, "/x", NULL);
    parses("https://[2001:DB8::1]/", "https", "2001:db8::1", 443, "/", NULL);
    parses("http://[fe80::1%25eth0]/", "http", "fe80::1%eth0", 80, "/", NULL);
    parses("http://127.0.0.1:9/", "http", "127.0.0.1", 9, "/", NULL);
}

static void test_invalid(void) {
    rejects("");
    rejects("example.com/x");
    rejects("/a/b");
    rejects("//example.com/a");
    rejects("ftp://example.com/");
    rejects("mailto:a@example.com");
    rejects("http://");
    rejects("http://exa mple.com/");
    rejects("http://example.com/a b");
    rejects("http://example.com:99999/");
    rejects("http://example.com:8x/");
    rejects("http://[::1/");
    rejects("http://example.com/\r\nX: y");
}

/* RFC 3986 5.4's examples, and Location headers as servers send them */
static void test_resolve(void) {
    const char *b = "http://a/b/c/d;p?q";
    resolves(b, "g", "http://a/b/c/g");
    resolves(b, "./g", "http://a/b/c/g");
    resolves(b, "g/", "http://a/b/c/g/");
    resolves(b, "/g", "http://a/g");
    resolves(b, "//g", "http://g/");
    resolves(b, "?y", "http://a/b/c/d;p?y");
    resolves(b, "g?y", "http://a/b/c/g?y");
    resolves(b, "#s", "http://a/b/c/d;p?q#s");
    resolves(b, ";x", "http://a/b/c/;x");
    resolves(b, "", "http://a/b/c/d;p?q");
    resolves(b, ".", "http://a/b/c/");
    resolves(b, "./", "http://a/b/c/");
    resolves(b, "..", "http://a/b/");
    resolves(b, "../g", "http://a/b/g");
    resolves(b, "../..", "http://a/");
    resolves(b, "../../g", "http://a/g");
    resolves(b, "../../../g", "http://a/g");
    resolves(b, "../../../../g", "http://a/g");
    resolves(b, "/./g", "http://a/g");
    resolves(b, "/../g", "http://a/g");
    resolves(b, "g.", "http://a/b/c/g.");
    resolves(b, "g..", "http://a/b/c/g..");
    resolves(b, "./../g", "http://a/b/g");
    resolves(b, "g/./h", "http://a/b/c/g/h");
    resolves(b, "g/../h", "http://a/b/c/h");

    resolves("https://example.com:8443/a/b?x", "https://other.org/p?q=1", "https://other.org/p?q=1");
    resolves("https://example.com/a", "HTTP://Other.ORG/X", "http://Other.ORG/X");
    resolves("https://example.com:8443/a/b", "//cdn.example.com/x", "https://cdn.example.com/x");
    resolves("http://example.com:8080/a/b", "/login?next=%2F", "http://example.com:8080/login?next=%2F");
    resolves("http://example.com/a/b", "c/d", "http://example.com/a/c/d");
    resolves("http://example.com/a/b?old", "?new", "http://example.com/a/b?new");
    resolves("http://[::1]:8080/a/b", "/c", "http://[::1]:8080/c");
    resolves("http://example.com/a/", "  /spaced\t", "http://example.com/spaced");
    resolves("http://example.com/a/", "b c", "http://example.com/a/b%20c");
    resolves("http://example.com/", "http://example.com/x/../y", "http://example.com/y");

    resolves("ftp://example.com/", "/x", NULL);
    resolves("/relative/base", "/x", NULL);
    resolves("http://example.com/", "ftp://example.com/x", NULL);
    resolves("http://example.com/", "mailto:a@example.com", NULL);
    resolves("http://example.com/", "http://[::1/", NULL);
    resolves("http://example.com/", "http://h:99999/", NULL);
    resolves("http://example.com/", "/a\r\nSet-Cookie: x=1", NULL);
}

static void test_same_origin(void) {
    ll_url a, b, c, d, e;
    int ok = 0;
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    memset(&d, 0, sizeof(d));
    memset(&e, 0, sizeof(e));
    ok = ll_url_parse(&a, "http://Example.com/a") == 0 && ll_url_parse(&b, "http://example.com:80/b?x") == 0 &&
             ll_url_parse(&c, "https://example.com/a") == 0 && ll_url_parse(&d, "http://example.com:8080/a") == 0 &&
             ll_url_parse(&e, "http://www.example.com/a") == 0;
    tu_check(ok, "parse the origins");
    if (ok) {
        tu_check(ll_url_same_origin_host(&a, &b) == 1, "same host, default and explicit port 80");
        tu_check(ll_url_same_origin_host(&a, &c) == 0, "port 80 and 443 differ");
        tu_check(ll_url_same_origin_host(&a, &d) == 0, "port 80 and 8080 differ");
        tu_check(ll_url_same_origin_host(&a, &e) == 0, "a subdomain is another host");
    }
    ll_url z;
    memset(&z, 0, sizeof(z));
    tu_check(ll_url_same_origin_host(&a, &z) == 0 && ll_url_same_origin_host(&z, &z) == 0, "an empty URL has no host");
    ll_url_free(&a);
    ll_url_free(&b);
    ll_url_free(&c);
    ll_url_free(&d);
    ll_url_free(&e);
}

/* s's authority: what Host and :authority carry */
static void authority(const char *s, const char *want) {
    ll_url u;
    char buf[64];
    int ok = ll_url_parse(&u, s) == 0;
    size_t n = ok ? ll_url_authority(&u, buf, sizeof(buf)) : 0;
    tu_check(ok && n == strlen(want) && memcmp(buf, want, n) == 0, "authority of '%s' = %s (got %.*s)", s, want,
             (int)(n < sizeof(buf) ? n : 0), buf);
    /* one byte short: the length is still told, nothing is written */
    char small[64];
    memset(small, '#', sizeof(small));
    size_t m = ok ? ll_url_authority(&u, small, n - 1) : 0;
    tu_check(m == n && small[0] == '#', "authority of '%s' into %zu bytes: length %zu, nothing written", s, n - 1, n);
    ll_url_free(&u);
}

static void test_authority(void) {
    authority("http://example.com/a", "example.com");
    authority("http://Example.com:80/a", "example.com");
    authority("https://example.com:443/", "example.com");
    authority("http://example.com:443/", "example.com:443");
    authority("https://example.com:80/", "example.com:80");
    authority("http://127.0.0.1:8080/x?y", "127.0.0.1:8080");
    authority("http://h:1/", "h:1");
    authority("http://h:65535/", "h:65535");
    authority("http://[::1]:9000/", "[::1]:9000");
    authority("https://[::1]/", "[::1]");
    authority("http://[fe80::1%25eth0]:81/", "[fe80::1]:81");
}

int main(void) {
    test_parse();
    test_authority();
    test_invalid();
    test_resolve();
    test_same_origin();
    return tu_summary();
}
