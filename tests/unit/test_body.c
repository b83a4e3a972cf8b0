/* test_body.c -- body sources (memory, file region read with pread,
 * generator) and the prepared-request helpers of http_req.c. */
/* links: ll_http */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "body.h"
#include "http_req.h"
#include "test_util.h"

/* Reads all of b in reads of step bytes into out (at most cap). */
static size_t read_all(const ll_body *b, size_t step, char *out, size_t cap) {
    size_t got = 0;
    for (;;) {
        size_t want = step < cap - got ? step : cap - got;
        ssize_t n = ll_body_read(b, got, out + got, want);
        if (n <= 0) break;
        got += (size_t)n;
    }
    return got;
}

static ssize_t gen(void *ud, uint64_t pos, char *buf, size_t n) {
    (void)ud;
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (pos + i) % 26);
    return (ssize_t)n;
}

static void test_sources(void) {
    char out[256];
    ll_body b;
    memset(&b, 0, sizeof(b));
    ll_body_clear(&b);
    tu_check(b.kind == LL_BODY_NONE && ll_body_read(&b, 0, out, 10) == 0, "an empty body reads nothing");

    tu_check(ll_body_set_memory(&b, "hello, world", 12) == 0 && b.len == 12, "memory body");
    size_t n = read_all(&b, 5, out, sizeof(out));
    tu_check(n == 12 && memcmp(out, "hello, world", 12) == 0, "read in 5-byte steps");
    tu_check(ll_body_read(&b, 7, out, 100) == 5 && memcmp(out, "world", 5) == 0, "read from an offset");
    tu_check(ll_body_read(&b, 12, out, 10) == 0, "nothing past the end");

    char path[] = "/tmp/luaload-test-body-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "0123456789abcdefghij";
    tu_check(fd >= 0 && write(fd, text, 20) == 20, "a file to read");
    ll_body_set_file(&b, fd, 5, 10);
    n = read_all(&b, 3, out, sizeof(out));
    tu_check(n == 10 && memcmp(out, "56789abcde", 10) == 0, "a file region, read with pread in 3-byte steps");
    ll_body c;
    memset(&c, 0, sizeof(c));
    ll_body_clear(&c);
    ll_body_copy(&c, &b);
    tu_check(ll_body_read(&c, 0, out, 4) == 4 && memcmp(out, "5678", 4) == 0 &&
                 ll_body_read(&b, 8, out, 4) == 2 && memcmp(out, "de", 2) == 0,
             "two readers of one file each at their own offset");
    ll_body_set_file(&b, fd, 15, 10); /* runs 5 bytes past the end of the file */
    n = read_all(&b, 100, out, sizeof(out));
    errno = 0;
    ssize_t r = ll_body_read(&b, n, out, 10);
    tu_check(n == 5 && r == -1 && errno == EIO, "a file shorter than its region is an error, not a short body");
    close(fd);
    unlink(path);

    ll_body_set_generator(&b, gen, NULL, 30);
    n = read_all(&b, 7, out, sizeof(out));
    tu_check(n == 30 && memcmp(out, "abcdefghijklmnopqrstuvwxyzabcd", 30) == 0, "a generator body of 30 bytes");
    ll_body_clear(&b);
    ll_body_clear(&c);
}

static void test_requests(void) {
    ll_http_req a, b;
    ll_http_req_init(&a);
    ll_http_req_init(&b);
    tu_check(a.id != b.id && a.max_redirects == -1 && a.body.kind == LL_BODY_NONE, "fresh requests");
    ll_http_req_set_url(&a, "http://127.0.0.1/x");
    ll_http_req_set_method(&a, "patch");
    ll_http_req_add_header(&a, "X-A", "1");
    ll_http_req_add_header(&a, "X-A", "2");
    ll_http_req_add_tag(&a, "name", "one");
    ll_http_req_add_tag(&a, "name", "two");
    ll_body_set_memory(&a.body, "body", 4);
    tu_check(strcmp(a.method, "PATCH") == 0, "method upper-cased");
    tu_check(a.nheaders == 2 && strcmp(a.headers[1].value, "2") == 0, "headers keep repeats, in order");
    tu_check(a.ntags == 1 && strcmp(ll_http_req_tag(&a, "name"), "two") == 0 && !ll_http_req_tag(&a, "x"),
             "a tag replaces the one of the same key");
    tu_check(ll_http_req_copy(&b, &a) == 0 && strcmp(b.url, a.url) == 0 && b.nheaders == 2 && b.body.len == 4 &&
                 b.body.mem != a.body.mem && strcmp(b.method, "PATCH") == 0,
             "a copy owns its own body and headers");
    ll_http_req_clear(&a);
    tu_check(a.url == NULL && a.nheaders == 0 && a.body.kind == LL_BODY_NONE, "clear");
    tu_check(memcmp(b.body.mem, "body", 4) == 0, "the copy outlives the original");
    ll_http_req_clear(&b);
}

int main(void) {
    test_sources();
    test_requests();
    return tu_summary();
}
