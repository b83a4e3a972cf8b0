/* test_cookie_jar.c -- Set-Cookie parsing and the cookie jar
 * (src/core/http/cookie_jar.c): k6's (Go's cookiejar) rules for domains,
 * paths, Secure, expiry, replacement and order, jar.set / delete / clear,
 * the size bounds, and garbage input. */
/* links: ll_http */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cookie_jar.h"
#include "test_util.h"
#include "url.h"

#define NOW 1700000000ll /* Tue, 14 Nov 2023 22:13:20 GMT */
#define OCT21 1445412480ll /* Wed, 21 Oct 2015 07:28:00 GMT */

/* NULL-safe string equality */
static int eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* s with control characters and bytes over 126 shown as '?' (for the report lines) */
static const char *show(const char *s, size_t n) {
    static char buf[4][96];
    static int k;
    char *out = buf[k++ % 4];
    size_t i = 0;
    for (; s && i < n && i + 1 < sizeof(buf[0]); i++)
        out[i] = (unsigned char)s[i] < 32 || (unsigned char)s[i] > 126 ? '?' : s[i];
    out[i] = 0;
    return out;
}

static ll_url urls[64]; /* the last 64 URLs U parsed stay valid */
static int nurls;

/* s parsed (kept until urls_free) */
static const ll_url *U(const char *s) {
    ll_url *u = &urls[nurls++ % 64];
    ll_url_free(u);
    if (ll_url_parse(u, s) != 0) tu_check(0, "test URL '%s' parses", s);
    return u;
}

static void urls_free(void) {
    for (int i = 0; i < 64; i++) ll_url_free(&urls[i]);
}

static int store(ll_cookie_jar *j, const char *url, const char *set_cookie, int64_t now) {
    return ll_cookie_jar_store(j, set_cookie, strlen(set_cookie), U(url), now);
}

/* The Cookie header for url at now ("" when there is none), valid until the next call */
static const char *header(const ll_cookie_jar *j, const char *url, int64_t now) {
    static char buf[4096];
    char *out = NULL;
    int n = ll_cookie_jar_header(j, U(url), now, NULL, &out);
    if (n < 0 || (n == 0) != (out == NULL)) tu_check(0, "header for %s: count %d and value %p agree", url, n, out);
    snprintf(buf, sizeof(buf), "%s", out ? out : "");
    free(out);
    return buf;
}

static int header_is(const ll_cookie_jar *j, const char *url, int64_t now, const char *want) {
    const char *got = header(j, url, now);
    return tu_check(strcmp(got, want) == 0, "Cookie for %s = '%s' (got '%s')", url, want, got);
}

static const ll_cookie *find(const ll_cookie_jar *j, const char *name) {
    for (int i = 0; i < j->n; i++)
        if (strcmp(j->c[i].name, name) == 0) return &j->c[i];
    return NULL;
}

static void parses(const char *url, const char *sc, int64_t now, ll_cookie *c) {
    int rc = ll_cookie_parse(c, sc, strlen(sc), U(url), now);
    tu_check(rc == 0, "parse '%s' from %s", sc, url);
}

static void rejects_len(const char *url, const char *sc, size_t len, const char *what) {
    ll_cookie c;
    memset(&c, 0x5a, sizeof(c));
    int rc = ll_cookie_parse(&c, sc, len, U(url), NOW);
    tu_check(rc == -1 && !c.name && !c.value && !c.domain && !c.path && !c.same_site,
             "reject %s from %s (out zeroed)", what, url);
    ll_cookie_free(&c);
}

static void rejects(const char *url, const char *sc) { rejects_len(url, sc, strlen(sc), show(sc, strlen(sc))); }

static void test_parse(void) {
    ll_cookie c;
    parses("http://Example.COM/x/y?q=1", "a=1", NOW, &c);
    tu_check(eq(c.name, "a") && eq(c.value, "1") && eq(c.domain, "example.com") &&
                 c.host_only && eq(c.path, "/x") && !c.secure && !c.http_only && c.expires == 0 &&
                 c.max_age == 0 && !c.same_site,
             "plain cookie: host-only, default path /x, session (got %s=%s %s %d %s %lld)", c.name, c.value, c.domain,
             c.host_only, c.path, (long long)c.expires);
    ll_cookie_free(&c);

    parses("https://example.com/", "SID=31d4d96e407aad42; Path=/; Secure; HttpOnly; SameSite=Lax", NOW, &c);
    tu_check(eq(c.value, "31d4d96e407aad42") && eq(c.path, "/") && c.secure && c.http_only &&
                 c.same_site && eq(c.same_site, "Lax"),
             "attributes Path, Secure, HttpOnly, SameSite");
    ll_cookie_free(&c);

    parses("http://example.com/", "  a = b c ;  path = /p ;secure", NOW, &c);
    tu_check(eq(c.name, "a") && eq(c.value, "b c") && eq(c.path, "/p") && c.secure,
             "spaces around names, values and attributes are trimmed (value '%s', path '%s')", c.value, c.path);
    ll_cookie_free(&c);

    parses("http://www.example.com/", "q=\"x y\"; DOMAIN=Example.COM; PATH=/z; SECURE; HTTPONLY", NOW, &c);
    tu_check(eq(c.value, "\"x y\"") && eq(c.domain, "example.com") && !c.host_only &&
                 eq(c.path, "/z") && c.secure && c.http_only,
             "quotes kept in the value, attribute names in any case (value %s, domain %s)", c.value, c.domain);
    ll_cookie_free(&c);

    parses("http://example.com/", "e=; Unknown=1; Comment=x; Version=1", NOW, &c);
    tu_check(eq(c.value, "") && c.expires == 0, "an empty value; unknown attributes ignored");
    ll_cookie_free(&c);

    parses("http://example.com/", "x=a=b,c; Path=/;", NOW, &c);
    tu_check(eq(c.value, "a=b,c"), "'=' and ',' inside a value (got '%s')", c.value);
    ll_cookie_free(&c);

    parses("http://example.com./a/b", "t=1", NOW, &c);
    tu_check(eq(c.domain, "example.com") && eq(c.path, "/a"),
             "a host's trailing dot is dropped (domain %s)", c.domain);
    ll_cookie_free(&c);

    parses("http://example.com/a/b", "p=1; Path=\"/x\"", NOW, &c);
    tu_check(eq(c.path, "/a"), "a quoted Path is ignored (Go: not a valid attribute value)");
    ll_cookie_free(&c);

    char sc[LL_COOKIE_MAX_ATTR + 32];
    snprintf(sc, sizeof(sc), "p=1; Path=/%0*d", LL_COOKIE_MAX_ATTR, 0);
    parses("http://example.com/a/b", sc, NOW, &c);
    tu_check(eq(c.path, "/a"), "a Path over LL_COOKIE_MAX_ATTR bytes is ignored");
    ll_cookie_free(&c);
    snprintf(sc, sizeof(sc), "p=1; Path=/%0*d", LL_COOKIE_MAX_ATTR - 1, 0);
    parses("http://example.com/a/b", sc, NOW, &c);
    tu_check(c.path && strlen(c.path) == LL_COOKIE_MAX_ATTR, "a Path of LL_COOKIE_MAX_ATTR bytes is kept");
    ll_cookie_free(&c);

    parses("http://example.com/", "s=1; SameSite=", NOW, &c);
    tu_check(c.same_site == NULL, "an empty SameSite is none");
    ll_cookie_free(&c);
}

static void test_rejected(void) {
    const char *u = "http://example.com/";
    rejects(u, "");
    rejects(u, ";");
    rejects(u, ";;;;");
    rejects(u, "=");
    rejects(u, "=1");
    rejects(u, "  =1");
    rejects(u, "novalue");
    rejects(u, "a;b=1");
    rejects(u, "a b=1");
    rejects(u, "a(b)=1");
    rejects(u, "a:b=1");
    rejects(u, "\"a\"=1");
    rejects(u, "a=x\"y");
    rejects(u, "a=\"xy");
    rejects(u, "a=x\\y");
    rejects(u, "a=\x80\x81");
    rejects(u, "a=1\r\nSet-Cookie: b=2");
    rejects(u, "a=1\n");
    rejects(u, "a=1; Path=/\x7f");
    rejects_len(u, "a=1\0b", 5, "a NUL byte");
    rejects_len(u, NULL, 0, "NULL");

    size_t n = LL_COOKIE_MAX_NAME_VALUE + 2; /* "k=" and 4096 bytes of value */
    char *big = malloc(n + 1);
    memset(big, 'v', n);
    memcpy(big, "k=", 2);
    big[n] = 0;
    rejects_len(u, big, n, "name + value over LL_COOKIE_MAX_NAME_VALUE");
    ll_cookie c;
    tu_check(ll_cookie_parse(&c, big, n - 1, U(u), NOW) == 0 && strlen(c.value) == n - 3,
             "name + value of exactly LL_COOKIE_MAX_NAME_VALUE bytes is kept");
    ll_cookie_free(&c);
    free(big);
}

static void test_domain(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const char *www = "http://www.example.com/";
    tu_check(store(&j, www, "host=1", NOW) == 1, "store a host-only cookie");
    tu_check(store(&j, www, "dom=1; Domain=example.com", NOW) == 1, "store a Domain cookie");
    tu_check(store(&j, www, "dot=1; Domain=.Example.COM", NOW) == 1, "store a Domain cookie with a leading dot");
    const ll_cookie *dom = find(&j, "dom"), *dot = find(&j, "dot"), *host = find(&j, "host");
    tu_check(dom && !dom->host_only && eq(dom->domain, "example.com") && dot && !dot->host_only &&
                 eq(dot->domain, "example.com") && host && host->host_only &&
                 eq(host->domain, "www.example.com"),
             "domains stored lower case without the dot; host_only set for the host-only one");
    header_is(&j, "http://www.example.com/", NOW, "host=1; dom=1; dot=1");
    header_is(&j, "http://WWW.example.com:8080/x", NOW, "host=1; dom=1; dot=1");
    header_is(&j, "http://example.com/", NOW, "dom=1; dot=1");
    header_is(&j, "http://a.b.example.com/", NOW, "dom=1; dot=1");
    header_is(&j, "http://sub.www.example.com/", NOW, "dom=1; dot=1");
    header_is(&j, "http://otherexample.com/", NOW, "");
    header_is(&j, "http://example.org/", NOW, "");
    header_is(&j, "http://com/", NOW, "");

    tu_check(store(&j, www, "same=1; Domain=www.example.com", NOW) == 1 && !find(&j, "same")->host_only,
             "Domain equal to the host is a domain cookie");
    header_is(&j, "http://x.www.example.com/", NOW, "dom=1; dot=1; same=1");
    tu_check(store(&j, www, "empty=1; Domain=", NOW) == 1 && find(&j, "empty")->host_only,
             "an empty Domain is ignored (host-only)");
    tu_check(store(&j, www, "empty2=1; Domain=example.com; Domain=", NOW) == 1 && !find(&j, "empty2")->host_only,
             "an empty Domain is ignored, not the one before it");
    header_is(&j, "http://api.example.com/", NOW, "dom=1; dot=1; empty2=1");
    ll_cookie_jar_reset(&j);

    const char *bad[] = {"Domain=other.com",       "Domain=ample.com",  "Domain=sub.www.example.com",
                         "Domain=com",             "Domain=.com",       "Domain=example.com.",
                         "Domain=..example.com",   "Domain=.",          "Domain=www.example.com.evil.org",
                         "Domain=xample.com"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char sc[128];
        snprintf(sc, sizeof(sc), "a=1; %s", bad[i]);
        rejects(www, sc);
        tu_check(store(&j, www, sc, NOW) == 0 && j.n == 0, "store ignores '%s'", sc);
    }

    /* an IP host: only its own address, as a host-only cookie */
    const char *ip = "http://127.0.0.1:8080/";
    tu_check(store(&j, ip, "ip=1; Domain=127.0.0.1", NOW) == 1 && find(&j, "ip")->host_only,
             "Domain equal to the IP host is host-only");
    rejects("http://x..example.com/", "a=1; Domain=..example.com");
    rejects("http://example.com../", "a=1; Domain=example.com.");
    rejects(ip, "a=1; Domain=0.0.1");
    rejects(ip, "a=1; Domain=.127.0.0.1");
    rejects(ip, "a=1; Domain=localhost");
    header_is(&j, "http://127.0.0.1/", NOW, "ip=1");
    header_is(&j, "http://1.127.0.0.1/", NOW, "");
    tu_check(store(&j, "http://[::1]:9/", "v6=1", NOW) == 1 && strcmp(find(&j, "v6")->domain, "::1") == 0,
             "an IPv6 host-only cookie (domain ::1)");
    tu_check(store(&j, "http://[::1]:9/", "v6d=1; Domain=::1", NOW) == 1, "Domain equal to the IPv6 host");
    header_is(&j, "http://[::1]/", NOW, "v6=1; v6d=1");
    header_is(&j, "http://127.0.0.1/", NOW, "ip=1");

    /* a one-label host: its Domain cookie stays under it (Go's jar key) */
    tu_check(store(&j, "http://localhost/", "lh=1; Domain=localhost", NOW) == 1 && !find(&j, "lh")->host_only,
             "Domain=localhost from localhost");
    header_is(&j, "http://localhost:3000/", NOW, "lh=1");
    header_is(&j, "http://a.localhost/", NOW, "");
    ll_cookie_jar_free(&j);
}

static void test_path(void) {
    const struct {
        const char *url, *path;
    } defaults[] = {{"http://h.test/a/b/c", "/a/b"}, {"http://h.test/a", "/"},  {"http://h.test/", "/"},
                    {"http://h.test", "/"},           {"http://h.test/a/", "/a"}, {"http://h.test/a/b?x=/y/z", "/a"}};
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        ll_cookie c;
        parses(defaults[i].url, "a=1", NOW, &c);
        tu_check(c.path && strcmp(c.path, defaults[i].path) == 0, "default path of %s is %s (got %s)",
                 defaults[i].url, defaults[i].path, c.path ? c.path : "NULL");
        ll_cookie_free(&c);
        parses(defaults[i].url, "a=1; Path=rel", NOW, &c);
        tu_check(c.path && strcmp(c.path, defaults[i].path) == 0, "Path=rel from %s is the default path",
                 defaults[i].url);
        ll_cookie_free(&c);
        parses(defaults[i].url, "a=1; Path=/x; Path=", NOW, &c);
        tu_check(c.path && strcmp(c.path, defaults[i].path) == 0, "a last empty Path from %s is the default path",
                 defaults[i].url);
        ll_cookie_free(&c);
    }

    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    store(&j, "http://h.test/", "ab=1; Path=/a/b", NOW);
    store(&j, "http://h.test/", "abs=1; Path=/a/b/", NOW);
    header_is(&j, "http://h.test/a/b", NOW, "ab=1");
    header_is(&j, "http://h.test/a/b/", NOW, "abs=1; ab=1");
    header_is(&j, "http://h.test/a/b/c?q", NOW, "abs=1; ab=1");
    header_is(&j, "http://h.test/a/bc", NOW, "");
    header_is(&j, "http://h.test/a", NOW, "");
    header_is(&j, "http://h.test/", NOW, "");
    header_is(&j, "http://h.test/A/B", NOW, "");
    ll_cookie_jar_free(&j);
}

static void test_secure(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    tu_check(store(&j, "http://example.com/", "s=1; Secure", NOW) == 1, "a Secure cookie from http is kept (as Go)");
    store(&j, "https://example.com/", "p=1", NOW);
    header_is(&j, "http://example.com/", NOW, "p=1");
    header_is(&j, "https://example.com/", NOW, "s=1; p=1");
    header_is(&j, "https://example.com:8443/", NOW, "s=1; p=1");
    ll_cookie_jar_free(&j);
}

static void expires_is(const char *sc, int64_t want) {
    ll_cookie c;
    int rc = ll_cookie_parse(&c, sc, strlen(sc), U("http://example.com/"), NOW);
    tu_check(rc == 0 && c.expires == want, "'%s': expires %lld (got %lld)", sc, (long long)want,
             (long long)c.expires);
    ll_cookie_free(&c);
}

static void test_expiry(void) {
    expires_is("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", OCT21);
    expires_is("a=1; expires=Wednesday, 21-Oct-15 07:28:00 GMT", OCT21);
    expires_is("a=1; Expires=Wed, 21 Oct 15 07:28:00 GMT", OCT21);
    expires_is("a=1; Expires=Wed, 21-Oct-2015 07:28:00 GMT", OCT21);
    expires_is("a=1; Expires=Wed Oct 21 07:28:00 2015", OCT21);
    expires_is("a=1; Expires=Wed Oct 21 07:28:00 2015 GMT", OCT21);
    expires_is("a=1; Expires=Tue, 01 Jan 2030 00:00:00 GMT", 1893456000);
    expires_is("a=1; Expires=Thu, 01-Jan-69 00:00:00 GMT", 3124224000ll);
    expires_is("a=1; Expires=Fri, 02-Jan-70 00:00:00 GMT", 86400);
    expires_is("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT", INT64_MIN);
    expires_is("a=1; Expires=yesterday", 0);
    expires_is("a=1; Expires=Wed, 21 Oct 2015 07:28:00 +0200", 0);
    expires_is("a=1; Expires=Wed, 32 Oct 2015 07:28:00 GMT", 0);
    expires_is("a=1; Expires=", 0);
    expires_is("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Expires=junk", OCT21);
    expires_is("a=1; Max-Age=60", NOW + 60);
    expires_is("a=1; Max-Age=60; Expires=Wed, 21 Oct 2015 07:28:00 GMT", NOW + 60);
    expires_is("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Max-Age=60", NOW + 60);
    expires_is("a=1; Expires=Tue, 01 Jan 2030 00:00:00 GMT; Max-Age=0", INT64_MIN);
    expires_is("a=1; Max-Age=-5", INT64_MIN);
    expires_is("a=1; Max-Age=abc", 0);
    expires_is("a=1; Max-Age=1.5", 0);
    expires_is("a=1; Max-Age=007", 0);
    expires_is("a=1; Max-Age=", 0);
    expires_is("a=1; Max-Age=99999999999999999999", 0);
    expires_is("a=1; Max-Age=9223372036854775807", INT64_MAX);

    ll_cookie c;
    parses("http://example.com/", "a=1; Max-Age=-5", NOW, &c);
    tu_check(c.max_age == -5, "max_age kept as given (%lld)", (long long)c.max_age);
    ll_cookie_free(&c);

    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const char *u = "http://example.com/";
    tu_check(store(&j, u, "m=1; Max-Age=60", NOW) == 1, "store Max-Age=60");
    header_is(&j, u, NOW + 59, "m=1");
    header_is(&j, u, NOW + 60, "");
    tu_check(store(&j, u, "old=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", NOW) == 0 && !find(&j, "old"),
             "an Expires in the past is not stored");
    tu_check(store(&j, u, "fut=1; Expires=Tue, 01 Jan 2030 00:00:00 GMT", NOW) == 1, "a future Expires is stored");
    header_is(&j, u, NOW, "m=1; fut=1");
    header_is(&j, u, 1893456000, "");

    /* deletion */
    tu_check(store(&j, u, "d=1", NOW) == 1 && store(&j, u, "d=1; Path=/other", NOW) == 1, "store d at / and /other");
    tu_check(store(&j, u, "d=; Max-Age=0", NOW) == 0 && find(&j, "d") && strcmp(find(&j, "d")->path, "/other") == 0,
             "Max-Age=0 deletes the cookie of the same name, domain and path only");
    tu_check(store(&j, u, "d=; Path=/other; Expires=Thu, 01 Jan 1970 00:00:00 GMT", NOW) == 0 && !find(&j, "d"),
             "the epoch as Expires deletes it");
    tu_check(store(&j, "http://www.example.com/", "fut=; Max-Age=0", NOW) == 0 && find(&j, "fut"),
             "a deletion from another host leaves the cookie");
    tu_check(store(&j, u, "nothing=; Max-Age=0", NOW) == 0, "deleting what is not there");
    ll_cookie_jar_free(&j);
}

static void test_replace_and_order(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const char *u = "http://example.com/a/b/c";
    store(&j, u, "root=1; Path=/", NOW);
    store(&j, u, "a=1; Path=/a", NOW);
    store(&j, u, "ab=1", NOW); /* default path /a/b */
    store(&j, u, "root2=1; Path=/", NOW);
    store(&j, u, "ab2=1; Path=/a/b", NOW);
    header_is(&j, "http://example.com/a/b/c", NOW, "ab=1; ab2=1; a=1; root=1; root2=1");
    header_is(&j, "http://example.com/a/x", NOW, "a=1; root=1; root2=1");

    tu_check(find(&j, "root")->created == 0 && find(&j, "a")->created == 1 && find(&j, "ab2")->created == 4,
             "created counts the jar's new cookies");
    tu_check(store(&j, u, "a=9; Path=/a", NOW) == 1 && find(&j, "a")->created == 1 && eq(find(&j, "a")->value, "9"),
             "a replacement keeps its creation number");
    store(&j, u, "a=1; Path=/a", NOW);
    uint64_t created = find(&j, "root")->created;
    tu_check(store(&j, u, "root=2; Path=/; HttpOnly", NOW) == 1 && j.n == 5, "same name, domain, path replaces");
    const ll_cookie *r = find(&j, "root");
    tu_check(eq(r->value, "2") && r->http_only && r->created == created,
             "the replacement has the new value and attributes and the old creation order");
    header_is(&j, "http://example.com/", NOW, "root=2; root2=1");
    tu_check(store(&j, u, "root=3; Path=/a", NOW) == 1 && j.n == 6, "same name, another path: a second cookie");
    header_is(&j, "http://example.com/a/", NOW, "a=1; root=3; root=2; root2=1");
    tu_check(store(&j, "http://www.example.com/", "root=4; Domain=example.com; Path=/", NOW) == 1 && j.n == 6 &&
                 !find(&j, "root")->host_only && find(&j, "root")->created == created,
             "a Domain cookie replaces the host-only one of the same domain, name and path (Go's id)");
    header_is(&j, "http://example.com/", NOW, "root=4; root2=1");
    header_is(&j, "http://www.example.com/", NOW, "root=4");
    tu_check(store(&j, "http://www.example.com/", "root=5; Path=/", NOW) == 1 && j.n == 7,
             "the same name and path on another domain: another cookie");
    header_is(&j, "http://www.example.com/", NOW, "root=4; root=5");

    int calls = ll_cookie_jar_match(&j, U("http://example.com/a/b/c"), NOW, NULL, NULL);
    tu_check(calls == 6, "match counts without a callback (%d)", calls);

    ll_cookie_jar_reset(&j);
    tu_check(j.n == 0, "reset empties the jar");
    header_is(&j, "http://example.com/a/b/c", NOW, "");
    tu_check(store(&j, u, "after=1", NOW) == 1 && j.n == 1, "a reset jar stores again");
    header_is(&j, "http://example.com/a/b/c", NOW, "after=1");
    ll_cookie_jar_free(&j);
}

static void test_header(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    char *out = (char *)1;
    int n = ll_cookie_jar_header(&j, U("http://example.com/"), NOW, NULL, &out);
    tu_check(n == 0 && out == NULL, "no cookies: count 0, NULL header");
    store(&j, "http://example.com/", "a=1", NOW);
    store(&j, "http://example.com/", "b=2", NOW);
    store(&j, "http://example.com/", "sp=x y", NOW);
    store(&j, "http://example.com/", "cm=x,y", NOW);
    store(&j, "http://example.com/", "q=\"x y\"", NOW);
    store(&j, "http://example.com/", "e=", NOW);
    n = ll_cookie_jar_header(&j, U("http://example.com/"), NOW, NULL, &out);
    tu_check(n == 6 && out && strcmp(out, "a=1; b=2; sp=\"x y\"; cm=\"x,y\"; q=\"x y\"; e=") == 0,
             "header '%s' (%d cookies)", out ? out : "NULL", n);
    free(out);
    static const char *const skip[] = {"b", "sp", NULL};
    n = ll_cookie_jar_header(&j, U("http://example.com/"), NOW, skip, &out);
    tu_check(n == 4 && out && strcmp(out, "a=1; cm=\"x,y\"; q=\"x y\"; e=") == 0,
             "skipped names are left out: '%s' (%d cookies)", out ? out : "NULL", n);
    free(out);
    ll_cookie_jar_free(&j);
}

static void test_set_delete_clear(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const ll_url *u = U("http://www.example.com/a/b");
    tu_check(ll_cookie_jar_set(&j, u, "s", "v", NULL, NULL, 0, 0, 0, 0, NOW) == 0, "set a host-only cookie");
    const ll_cookie *c = find(&j, "s");
    tu_check(c && c->host_only && eq(c->domain, "www.example.com") && eq(c->path, "/a") &&
                 c->expires == 0,
             "set: host-only, the default path /a, session");
    tu_check(ll_cookie_jar_set(&j, u, "d", "1", ".example.com", "/", 0, 60, 1, 1, NOW) == 0, "set a Domain cookie");
    c = find(&j, "d");
    tu_check(c && !c->host_only && eq(c->domain, "example.com") && eq(c->path, "/") &&
                 c->expires == NOW + 60 && c->max_age == 60 && c->secure && c->http_only,
             "set: domain, path, max_age, secure, http_only");
    tu_check(ll_cookie_jar_set(&j, u, "x", "1", "other.com", NULL, 0, 0, 0, 0, NOW) == 1, "set: a foreign domain is ignored, as Go's jar");
    tu_check(ll_cookie_jar_set(&j, u, "x", "1", "com", NULL, 0, 0, 0, 0, NOW) == 1, "set: a one-label domain is ignored");
    tu_check(ll_cookie_jar_set(&j, u, "", "1", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: an empty name");
    tu_check(ll_cookie_jar_set(&j, u, "a b", "1", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: a space in the name");
    tu_check(ll_cookie_jar_set(&j, u, "a;b", "1", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: ';' in the name");
    tu_check(ll_cookie_jar_set(&j, u, "x", "a b", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: a space in the value");
    tu_check(ll_cookie_jar_set(&j, u, "x", "a;b", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: ';' in the value");
    tu_check(ll_cookie_jar_set(&j, u, "x", "a,b", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: ',' in the value");
    tu_check(ll_cookie_jar_set(&j, u, "x", "a\r\n", NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: CR LF in the value");
    tu_check(ll_cookie_jar_set(&j, u, "x", NULL, NULL, NULL, 0, 0, 0, 0, NOW) == -1, "set: a NULL value");
    tu_check(j.n == 2, "nothing invalid was stored (%d cookies)", j.n);
    tu_check(ll_cookie_jar_set(&j, u, "q", "\"quoted\"", NULL, "/", 1893456000, 0, 0, 0, NOW) == 0 &&
                 find(&j, "q")->expires == 1893456000,
             "set: a quoted value and an expires");
    header_is(&j, "https://www.example.com/a/b", NOW, "s=v; d=1; q=\"quoted\"");
    header_is(&j, "http://www.example.com/a/b", NOW, "s=v; q=\"quoted\"");

    tu_check(ll_cookie_jar_set(&j, u, "q", "", NULL, "/", 0, -1, 0, 0, NOW) == 0 && !find(&j, "q"),
             "set with max_age < 0 deletes");
    tu_check(ll_cookie_jar_set(&j, u, "s", "", NULL, NULL, OCT21, 0, 0, 0, NOW) == 0 && !find(&j, "s"),
             "set with an expires in the past deletes");

    /* delete: the cookies called name a request to the URL carries */
    const ll_url *w = U("https://www.example.com/x/y");
    ll_cookie_jar_reset(&j);
    ll_cookie_jar_set(&j, w, "a", "1", NULL, "/", 0, 0, 0, 0, NOW);
    ll_cookie_jar_set(&j, w, "a", "2", NULL, "/x", 0, 0, 0, 0, NOW);
    ll_cookie_jar_set(&j, w, "a", "3", "example.com", "/", 0, 0, 0, 0, NOW);
    ll_cookie_jar_set(&j, w, "a", "4", NULL, "/z", 0, 0, 0, 0, NOW);
    ll_cookie_jar_set(&j, w, "b", "1", NULL, "/", 0, 0, 0, 0, NOW);
    ll_cookie_jar_set(&j, w, "sec", "1", NULL, "/", 0, 0, 1, 0, NOW);
    tu_check(j.n == 6, "six cookies set");
    tu_check(ll_cookie_jar_delete(&j, U("http://other.org/x"), "a") == 0 && j.n == 6, "delete on another host: none");
    tu_check(ll_cookie_jar_delete(&j, U("http://www.example.com/x/y"), "sec") == 0,
             "delete of a Secure cookie on http: none");
    int n = ll_cookie_jar_delete(&j, U("http://www.example.com/x/y"), "a");
    tu_check(n == 3 && j.n == 3, "delete removes the three 'a' sent to /x/y (%d, %d left)", n, j.n);
    header_is(&j, "https://www.example.com/z", NOW, "a=4; b=1; sec=1");

    /* clear: every cookie a request to the URL carries */
    ll_cookie_jar_set(&j, U("http://other.org/"), "o", "1", NULL, NULL, 0, 0, 0, 0, NOW);
    n = ll_cookie_jar_clear(&j, U("http://www.example.com/"));
    tu_check(n == 1 && j.n == 3, "clear on http takes b only (%d, %d left)", n, j.n);
    n = ll_cookie_jar_clear(&j, U("https://www.example.com/z/1"));
    tu_check(n == 2 && j.n == 1 && find(&j, "o"), "clear on https takes a and sec, not other.org's (%d)", n);
    ll_cookie_jar_free(&j);
}

static void test_bounds(void) {
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    char sc[64], url[64];
    for (int i = 0; i < 60; i++) {
        snprintf(sc, sizeof(sc), "c%d=%d", i, i);
        store(&j, i % 2 ? "http://a.example.com/" : "http://b.example.com/", sc, NOW);
    }
    tu_check(j.n == LL_COOKIE_JAR_MAX_PER_DOMAIN, "60 cookies under example.com keep %d (got %d)",
             LL_COOKIE_JAR_MAX_PER_DOMAIN, j.n);
    tu_check(!find(&j, "c0") && !find(&j, "c9") && find(&j, "c10") && find(&j, "c59"), "the oldest ten are gone");
    store(&j, "http://example.org/", "org=1", NOW);
    tu_check(j.n == LL_COOKIE_JAR_MAX_PER_DOMAIN + 1 && find(&j, "c10"), "another domain has its own count");

    /* expired cookies make room before live ones do */
    ll_cookie_jar_reset(&j);
    store(&j, "http://example.com/", "first=1", NOW);
    store(&j, "http://example.com/", "short=1; Max-Age=10", NOW);
    for (int i = 0; i < 48; i++) {
        snprintf(sc, sizeof(sc), "k%d=1", i);
        store(&j, "http://example.com/", sc, NOW);
    }
    tu_check(j.n == 50, "50 cookies");
    store(&j, "http://example.com/", "new=1", NOW + 20);
    tu_check(j.n == 50 && find(&j, "first") && !find(&j, "short") && find(&j, "new"),
             "the expired one made room, the oldest stayed");
    store(&j, "http://example.com/", "newer=1", NOW + 20);
    tu_check(j.n == 50 && !find(&j, "first") && find(&j, "newer"), "then the oldest goes");

    /* the whole jar */
    ll_cookie_jar_reset(&j);
    int total = LL_COOKIE_JAR_MAX + 50;
    for (int i = 0; i < total; i++) {
        snprintf(url, sizeof(url), "http://d%d.test/", i / 50);
        snprintf(sc, sizeof(sc), "n%d=1", i);
        if (store(&j, url, sc, NOW) != 1) tu_check(0, "store %s from %s", sc, url);
    }
    tu_check(j.n == LL_COOKIE_JAR_MAX, "%d cookies keep %d (got %d)", total, LL_COOKIE_JAR_MAX, j.n);
    tu_check(!find(&j, "n0") && !find(&j, "n49") && find(&j, "n50") && find(&j, "n3049"),
             "the oldest 50 of the jar are gone");
    header_is(&j, "http://d0.test/", NOW, "");
    const char *h = header(&j, "http://d60.test/", NOW);
    tu_check(strncmp(h, "n3000=1; n3001=1", 16) == 0, "the newest domain's cookies are sent");
    ll_cookie_jar_free(&j);
}

/* Random bytes from an alphabet heavy in separators: nothing crashes, and
 * whatever is accepted is well formed. */
static void test_garbage(void) {
    static const char alpha[] = "a=;; =\"\\,.-/ \tPathDomain=Max-Age=Expires=Secure0123456789\x01\x80\r\n";
    char s[300];
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const ll_url *u = U("http://www.example.com/p/q");
    int accepted = 0, bad = 0;
    for (int it = 0; it < 20000; it++) {
        size_t n = tu_rand() % sizeof(s);
        for (size_t i = 0; i < n; i++) s[i] = alpha[tu_rand() % (sizeof(alpha) - 1)];
        if (it % 4 == 0 && n > 2) memcpy(s, "k=", 2);
        ll_cookie c;
        if (ll_cookie_parse(&c, s, n, u, NOW) == 0) {
            accepted++;
            if (!*c.name || !c.value || !c.domain || c.path[0] != '/' || strchr(c.value, ';') ||
                strpbrk(c.name, "=; \t\r\n"))
                bad++;
            ll_cookie_free(&c);
        }
        if (ll_cookie_jar_store(&j, s, n, u, NOW) < 0) bad++;
    }
    tu_check(accepted > 100 && bad == 0, "20000 random Set-Cookie values: %d accepted, %d malformed", accepted, bad);
    tu_check(j.n <= LL_COOKIE_JAR_MAX_PER_DOMAIN, "the jar stayed bounded (%d)", j.n);
    char *out = NULL;
    int n = ll_cookie_jar_header(&j, U("https://www.example.com/p/q"), NOW, NULL, &out);
    tu_check(n >= 0 && (!out || !strpbrk(out, "\r\n")), "their header has no CR or LF");
    free(out);

    /* one very long header: a megabyte of attributes */
    size_t big = 1 << 20;
    char *p = malloc(big);
    memcpy(p, "long=1", 6);
    for (size_t i = 6; i < big; i++) p[i] = "; Path=/x"[i % 9];
    ll_cookie c;
    int rc = ll_cookie_parse(&c, p, big, u, NOW);
    tu_check(rc == 0 && eq(c.name, "long"), "a megabyte of attributes parses");
    ll_cookie_free(&c);
    memset(p, 'x', big);
    p[0] = 'k';
    p[1] = '=';
    tu_check(ll_cookie_jar_store(&j, p, big, u, NOW) == 0, "a megabyte value is ignored");
    memset(p, ';', big);
    tu_check(ll_cookie_jar_store(&j, p, big, u, NOW) == 0, "a megabyte of ';' is ignored");
    free(p);
    ll_cookie_jar_free(&j);
}

int main(void) {
    test_parse();
    test_rejected();
    test_domain();
    test_path();
    test_secure();
    test_expiry();
    test_replace_and_order();
    test_header();
    test_set_delete_clear();
    test_bounds();
    test_garbage();
    urls_free();
    return tu_summary();
}
