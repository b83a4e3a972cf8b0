/* test_auth_digest.c -- Digest authentication's answers against the worked
 * examples of RFC 2617 (MD5, qop=auth) and RFC 7616 (SHA-256 and MD5), the
 * challenge picked among several WWW-Authenticate headers, what is refused;
 * and the credentials taken out of a URL (url.c) and sent as Basic
 * (http_req.c). */
/* links: ll_http */
#include <stdlib.h>
#include <string.h>

#include "auth_digest.h"
#include "http_req.h"
#include "test_util.h"
#include "url.h"

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static void test_rfc2617(void) {
    const char *ch = "Digest realm=\"testrealm@host.com\", qop=\"auth,auth-int\", "
                     "nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", opaque=\"5ccc069c403ebaf9f0171e9517f40e41\"";
    char *v = ll_auth_digest_answer(ch, strlen(ch), "GET", "/dir/index.html", "Mufasa", "Circle Of Life", "0a4f113b", 1);
    tu_check(has(v, "response=\"6629fae49393a05397450978507c4ef1\""), "RFC 2617's MD5 example: %s", v ? v : "NULL");
    tu_check(has(v, "qop=auth, nc=00000001, cnonce=\"0a4f113b\"") && has(v, "opaque=\"5ccc069c403ebaf9f0171e9517f40e41\""),
             "qop, nc, cnonce and opaque are echoed");
    tu_check(has(v, "username=\"Mufasa\", realm=\"testrealm@host.com\"") && has(v, "uri=\"/dir/index.html\""),
             "username, realm and uri");
    free(v);
}

static void test_rfc7616(void) {
    const char *fmt = "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=%s, "
                      "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", "
                      "opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\"";
    char ch[400];
    const char *cn = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ";
    snprintf(ch, sizeof(ch), fmt, "SHA-256");
    char *v = ll_auth_digest_answer(ch, strlen(ch), "GET", "/dir/index.html", "Mufasa", "Circle of Life", cn, 1);
    tu_check(has(v, "response=\"753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1\"") &&
                 has(v, "algorithm=SHA-256"),
             "RFC 7616's SHA-256 example");
    free(v);
    snprintf(ch, sizeof(ch), fmt, "MD5");
    v = ll_auth_digest_answer(ch, strlen(ch), "GET", "/dir/index.html", "Mufasa", "Circle of Life", cn, 1);
    tu_check(has(v, "response=\"8ca523f5e9506fed4657c9700eebdbec\""), "RFC 7616's MD5 example");
    free(v);
}

static void test_refused(void) {
    const char *no_nonce = "Digest realm=\"r\"";
    const char *other = "Digest realm=\"r\", nonce=\"n\", algorithm=SHA-512-256";
    const char *int_only = "Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\"";
    const char *open = "Digest realm=\"r, nonce=\"n";
    tu_check(!ll_auth_digest_answer(no_nonce, strlen(no_nonce), "GET", "/", "u", "p", "c", 1), "no nonce: refused");
    tu_check(!ll_auth_digest_answer(other, strlen(other), "GET", "/", "u", "p", "c", 1), "an unknown algorithm: refused");
    tu_check(!ll_auth_digest_answer(int_only, strlen(int_only), "GET", "/", "u", "p", "c", 1), "auth-int only: refused");
    tu_check(!ll_auth_digest_answer(open, strlen(open), "GET", "/", "u", "p", "c", 1), "an unterminated quote: refused");
    const char *q = "Digest realm=\"a\\\"b\", nonce=\"n\"";
    char *v = ll_auth_digest_answer(q, strlen(q), "GET", "/", "we\"ird", "p", "c", 1);
    tu_check(has(v, "username=\"we\\\"ird\", realm=\"a\\\"b\"") && !has(v, "qop="),
             "quotes escaped both ways; no qop without one offered");
    free(v);
}

static void test_challenge(void) {
    const char *h = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n"
                    "www-authenticate: Digest realm=\"y\", nonce=\"z\"\r\nContent-Length: 0\r\n\r\n";
    size_t len = 0;
    const char *c = ll_auth_digest_challenge(h, strlen(h), &len);
    tu_check(c && len == strlen("Digest realm=\"y\", nonce=\"z\"") && strncmp(c, "Digest realm", 12) == 0,
             "the Digest challenge among several WWW-Authenticate headers");
    const char *b = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\r\n";
    tu_check(!ll_auth_digest_challenge(b, strlen(b), &len), "none when only Basic is offered");
}

static void test_credentials(void) {
    ll_http_req r;
    ll_http_req_init(&r);
    tu_check(ll_http_req_set_url(&r, "http://us%40er:p%3Ass@127.0.0.1:81/a?b=1") == 0 && r.user && r.password &&
                 strcmp(r.user, "us@er") == 0 && strcmp(r.password, "p:ss") == 0,
             "the URL's credentials, percent-decoded");
    tu_check(strcmp(r.url, "http://127.0.0.1:81/a?b=1") == 0, "the URL without them: %s", r.url);
    tu_check(ll_http_req_apply_auth(&r) == 0 && r.nheaders == 1 && strcmp(r.headers[0].name, "Authorization") == 0 &&
                 strcmp(r.headers[0].value, "Basic dXNAZXI6cDpzcw==") == 0,
             "sent as Basic");
    r.auth = LL_AUTH_DIGEST;
    tu_check(ll_http_req_apply_auth(&r) == 0 && r.nheaders == 0, "digest: the Basic header a copy carried goes");
    ll_http_req_clear(&r);
    ll_http_req_init(&r);
    tu_check(ll_http_req_set_url(&r, "http://127.0.0.1/x@y") == 0 && !r.user && strcmp(r.url, "http://127.0.0.1/x@y") == 0,
             "an '@' in the path is no credential");
    tu_check(ll_http_req_set_url(&r, "http://u@127.0.0.1/") == 0 && r.user && strcmp(r.user, "u") == 0 &&
                 strcmp(r.password, "") == 0,
             "a user without a password");
    ll_http_req_clear(&r);
}

int main(void) {
    test_rfc2617();
    test_rfc7616();
    test_refused();
    test_challenge();
    test_credentials();
    return tu_summary();
}
