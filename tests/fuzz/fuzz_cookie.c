/* fuzz_cookie.c -- libFuzzer target for src/core/http/cookie_jar.c, what a
 * misbehaving server controls: each input line is a Set-Cookie value stored
 * in one jar from one of three URLs; then the jar's Cookie headers, and
 * delete and clear. Checks that every stored cookie has a name, a domain
 * and a path starting with '/', that no header carries CR, LF or NUL, and
 * that the jar stays within its bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cookie_jar.h"
#include "fuzz_check.h"

static const char *const URLS[] = {"http://www.example.com/a/b", "https://example.com/", "http://127.0.0.1:8080/x"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ll_url urls[3];
    static int parsed;
    if (!parsed) {
        for (int i = 0; i < 3; i++) CHECK(ll_url_parse(&urls[i], URLS[i]) == 0);
        parsed = 1;
    }
    ll_cookie_jar j;
    ll_cookie_jar_init(&j);
    const int64_t now = 1764633600; /* 2025-12-02 */
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n') continue;
        CHECK(ll_cookie_jar_store(&j, (const char *)data + start, i - start, &urls[k++ % 3], now) >= 0);
        start = i + 1;
    }
    CHECK(j.n <= LL_COOKIE_JAR_MAX);
    for (int i = 0; i < j.n; i++) {
        const ll_cookie *c = &j.c[i];
        CHECK(c->name && *c->name && c->value && c->domain && *c->domain && c->path && c->path[0] == '/');
    }
    for (int u = 0; u < 3; u++) {
        char *h = NULL;
        int n = ll_cookie_jar_header(&j, &urls[u], now, NULL, &h);
        CHECK(n >= 0 && (n == 0) == (h == NULL));
        CHECK(!h || !strpbrk(h, "\r\n"));
        free(h);
    }
    ll_cookie_jar_delete(&j, &urls[0], "a");
    ll_cookie_jar_clear(&j, &urls[1]);
    ll_cookie_jar_free(&j);
    return 0;
}
