/* test_form_wire.c -- the multipart/form-data encoding of a form
 * (form_wire.c), compared with bytes built here part by part: a field, a
 * memory file part with a type, a file region without one, a generator, and
 * names that need escaping; read whole in steps, from any position, for an
 * empty form and one of many parts; and the errors of a part's source. */
/* links: ll_http */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "form.h"
#include "form_wire.h"
#include "test_util.h"

/* The expected encoding, appended to. */
typedef struct expect {
    char *p;
    size_t len, cap;
} expect;

static void ex_addn(expect *e, const char *s, size_t n) {
    if (e->len + n > e->cap) {
        e->cap = 2 * (e->len + n);
        e->p = realloc(e->p, e->cap);
        if (!e->p) abort();
    }
    memcpy(e->p + e->len, s, n);
    e->len += n;
}

static void ex_add(expect *e, const char *s) {
    ex_addn(e, s, strlen(s));
}

/* "--BOUNDARY\r\n" and the headers given, each ending in CRLF, then CRLF. */
static void ex_head(expect *e, const char *boundary, const char *disposition, const char *type) {
    ex_add(e, "--");
    ex_add(e, boundary);
    ex_add(e, "\r\nContent-Disposition: form-data");
    ex_add(e, disposition);
    ex_add(e, "\r\n");
    if (type) {
        ex_add(e, "Content-Type: ");
        ex_add(e, type);
        ex_add(e, "\r\n");
    }
    ex_add(e, "\r\n");
}

/* Reads the encoding from pos up to its end (or cap bytes) in reads of step
 * bytes into out; returns the bytes read, *err the last read's -1. */
static size_t read_from(const ll_form_wire *w, uint64_t pos, size_t step, char *out, size_t cap, int *err) {
    size_t got = 0;
    *err = 0;
    while (got < cap) {
        size_t want = step < cap - got ? step : cap - got;
        ssize_t n = ll_form_wire_read(w, pos + got, out + got, want);
        if (n < 0) *err = 1;
        if (n <= 0) break;
        if ((size_t)n > want) { /* would have overrun out */
            *err = 1;
            break;
        }
        got += (size_t)n;
    }
    return got;
}

static ssize_t gen(void *ud, uint64_t pos, char *buf, size_t n) {
    (void)ud;
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (pos + i) % 26);
    return (ssize_t)n;
}

/* A generator that gives *(uint64_t *)ud bytes and then nothing. */
static ssize_t gen_short(void *ud, uint64_t pos, char *buf, size_t n) {
    uint64_t have = *(uint64_t *)ud;
    if (pos >= have) return 0;
    if (n > have - pos) n = (size_t)(have - pos);
    memset(buf, 'g', n);
    return (ssize_t)n;
}

static ssize_t gen_fail(void *ud, uint64_t pos, char *buf, size_t n) {
    (void)ud, (void)pos, (void)buf, (void)n;
    errno = ENOSPC;
    return -1;
}

static void body_init(ll_body *b) {
    memset(b, 0, sizeof(*b));
    ll_body_clear(b);
}

static int boundary_ok(const char *b) {
    if (strlen(b) != 40 || strspn(b, "-") != 24) return 0;
    return strspn(b + 24, "0123456789abcdef") == 16;
}

/* Every position: one read there gives the slice of the expected bytes
 * (at least one byte before the end, nothing at it); then reads of random
 * lengths from random positions, looped to the length asked. */
static void check_positions(const ll_form_wire *w, const expect *e, const char *what) {
    char buf[600];
    int bad = 0;
    for (uint64_t pos = 0; pos <= w->len && !bad; pos++) {
        size_t want = 1 + (size_t)(pos % 37);
        ssize_t n = ll_form_wire_read(w, pos, buf, want);
        if (pos == w->len) bad = n != 0;
        else bad = n <= 0 || (size_t)n > want || memcmp(buf, e->p + pos, (size_t)n) != 0;
        if (bad) printf("     at %llu: read %zd\n", (unsigned long long)pos, n);
    }
    tu_check(!bad, "%s: a read at every position is the slice there", what);
    bad = 0;
    for (int i = 0; i < 3000 && !bad; i++) {
        uint64_t pos = tu_rand() % (w->len + 1);
        size_t want = (size_t)(tu_rand() % sizeof(buf));
        size_t left = (size_t)(w->len - pos), expect_n = want < left ? want : left;
        int err;
        size_t got = read_from(w, pos, want ? want : 1, buf, want, &err);
        bad = err || got != expect_n || memcmp(buf, e->p + pos, got) != 0;
        if (bad) printf("     %zu bytes at %llu: got %zu\n", want, (unsigned long long)pos, got);
    }
    tu_check(!bad, "%s: random ranges from random positions equal their slices", what);
}

static void check_whole(const ll_form_wire *w, const expect *e, const char *what) {
    size_t cap = e->len + 100;
    char *out = malloc(cap);
    if (!out) abort();
    static const size_t steps[] = {1, 7, 4096};
    for (int i = 0; i < 3; i++) {
        int err;
        memset(out, 0, cap);
        size_t got = read_from(w, 0, steps[i], out, cap, &err);
        tu_check(!err && got == e->len && got == w->len && memcmp(out, e->p, got) == 0,
                 "%s: read whole in %zu-byte steps (%zu bytes, len %llu, %zu expected)", what, steps[i], got,
                 (unsigned long long)w->len, e->len);
    }
    free(out);
}

static void test_parts(void) {
    char path[] = "/tmp/luaload-test-form-wire-XXXXXX";
    int fd = mkstemp(path);
    char *file = malloc(12000);
    if (!file) abort();
    for (int i = 0; i < 12000; i++) file[i] = (char)(i * 7 + i / 256);
    tu_check(fd >= 0 && write(fd, file, 12000) == 12000, "a file to send a region of");

    ll_form f;
    memset(&f, 0, sizeof(f));
    ll_body b;
    body_init(&b);
    ll_body_set_memory(&b, "hello world", 11);
    int ok = ll_form_add(&f, "title", NULL, NULL, &b) == 0;
    ll_body_set_memory(&b, "{\"k\":1}", 7);
    ok = ok && ll_form_add(&f, "doc", "a.json", "application/json", &b) == 0;
    ll_body_set_file(&b, fd, 100, 10000);
    ok = ok && ll_form_add(&f, "upload", "data.bin", NULL, &b) == 0;
    ll_body_set_generator(&b, gen, NULL, 5000);
    ok = ok && ll_form_add(&f, "gen", NULL, "text/plain", &b) == 0;
    ll_body_set_memory(&b, "x", 1);
    ok = ok && ll_form_add(&f, "we\"ird\r\nname", "q\"\n.txt", NULL, &b) == 0;
    ll_body_set_memory(&b, "", 0);
    ok = ok && ll_form_add(&f, "empty", NULL, NULL, &b) == 0;
    ll_body_clear(&b);
    tu_check(ok && f.n == 6, "a form of six parts");

    ll_form_wire w, w2;
    tu_check(ll_form_wire_init(&w, &f) == 0 && ll_form_wire_init(&w2, &f) == 0, "two encodings prepared");
    tu_check(boundary_ok(w.boundary), "the boundary is 24 dashes and 16 hex digits: %s", w.boundary);
    tu_check(strcmp(w.boundary, w2.boundary) != 0, "each encoding has its own boundary");
    char ct[128];
    snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%s", w.boundary);
    tu_check(strcmp(ll_form_wire_content_type(&w), ct) == 0, "content type: %s", ll_form_wire_content_type(&w));
    ll_form_wire_free(&w2);

    expect e = {0};
    ex_head(&e, w.boundary, "; name=\"title\"", NULL);
    ex_add(&e, "hello world\r\n");
    ex_head(&e, w.boundary, "; name=\"doc\"; filename=\"a.json\"", "application/json");
    ex_add(&e, "{\"k\":1}\r\n");
    ex_head(&e, w.boundary, "; name=\"upload\"; filename=\"data.bin\"", "application/octet-stream");
    ex_addn(&e, file + 100, 10000);
    ex_add(&e, "\r\n");
    ex_head(&e, w.boundary, "; name=\"gen\"", "text/plain");
    for (int i = 0; i < 5000; i++) ex_addn(&e, &"abcdefghijklmnopqrstuvwxyz"[i % 26], 1);
    ex_add(&e, "\r\n");
    ex_head(&e, w.boundary, "; name=\"we%22ird%0D%0Aname\"; filename=\"q%22%0A.txt\"", "application/octet-stream");
    ex_add(&e, "x\r\n");
    ex_head(&e, w.boundary, "; name=\"empty\"", NULL);
    ex_add(&e, "\r\n");
    ex_add(&e, "--");
    ex_add(&e, w.boundary);
    ex_add(&e, "--\r\n");

    check_whole(&w, &e, "six parts");
    tu_check(w.len == e.len, "len is the length of the encoding (%llu)", (unsigned long long)w.len);

    /* the escaped header as it is sent, and nothing raw left of the name */
    char *all = malloc(w.len);
    int err;
    size_t got = all ? read_from(&w, 0, 4096, all, (size_t)w.len, &err) : 0;
    const char *esc = "Content-Disposition: form-data; name=\"we%22ird%0D%0Aname\"; filename=\"q%22%0A.txt\"\r\n";
    tu_check(all && memmem(all, got, esc, strlen(esc)) && !memmem(all, got, "we\"ird", 6) &&
                 !memmem(all, got, "q\"\n", 3),
             "\", CR and LF in names and filenames are %%22, %%0D, %%0A");
    free(all);

    check_positions(&w, &e, "six parts");
    char c;
    tu_check(ll_form_wire_read(&w, w.len, &c, 1) == 0, "nothing at the end");
    ll_form_wire_free(&w);
    tu_check(w.len == 0 && w.text == NULL && w.segs == NULL, "free empties the wire");
    ll_form_wire_free(&w);

    free(e.p);
    ll_form_free(&f);
    close(fd);
    unlink(path);
    free(file);
}

static void test_empty_form(void) {
    ll_form f;
    memset(&f, 0, sizeof(f));
    ll_form_wire w;
    tu_check(ll_form_wire_init(&w, &f) == 0, "an empty form prepared");
    expect e = {0};
    ex_add(&e, "--");
    ex_add(&e, w.boundary);
    ex_add(&e, "--\r\n");
    check_whole(&w, &e, "empty form");
    tu_check(w.len == 46, "an empty form is only the closing delimiter (%llu bytes)", (unsigned long long)w.len);
    check_positions(&w, &e, "empty form");
    ll_form_wire_free(&w);
    free(e.p);
}

/* Many parts, to read through the binary search over their starts. */
static void test_many_parts(void) {
    ll_form f;
    memset(&f, 0, sizeof(f));
    ll_body b;
    body_init(&b);
    char name[32], value[32];
    int ok = 1;
    for (int i = 0; i < 3000 && ok; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        int n = snprintf(value, sizeof(value), "%.*s", i % 20, "v0123456789abcdefghij");
        ok = ll_body_set_memory(&b, value, (size_t)n) == 0 &&
             ll_form_add(&f, name, i % 3 ? NULL : "n.txt", i % 5 ? NULL : "text/x", &b) == 0;
    }
    ll_body_clear(&b);
    ll_form_wire w;
    tu_check(ok && ll_form_wire_init(&w, &f) == 0, "a form of 3000 parts prepared");
    expect e = {0};
    for (int i = 0; i < 3000; i++) {
        char disp[64];
        snprintf(disp, sizeof(disp), i % 3 ? "; name=\"f%d\"" : "; name=\"f%d\"; filename=\"n.txt\"", i);
        ex_head(&e, w.boundary, disp, i % 5 ? (i % 3 ? NULL : "application/octet-stream") : "text/x");
        ex_addn(&e, "v0123456789abcdefghij", (size_t)(i % 20));
        ex_add(&e, "\r\n");
    }
    ex_add(&e, "--");
    ex_add(&e, w.boundary);
    ex_add(&e, "--\r\n");
    check_whole(&w, &e, "3000 parts");
    check_positions(&w, &e, "3000 parts");
    ll_form_wire_free(&w);
    ll_form_free(&f);
    free(e.p);
}

/* A part's source failing: a file cut shorter after the form was prepared,
 * a generator ending early, one returning -1. */
static void test_errors(void) {
    char path[] = "/tmp/luaload-test-form-wire-XXXXXX";
    int fd = mkstemp(path);
    char data[100];
    memset(data, 'd', sizeof(data));
    tu_check(fd >= 0 && write(fd, data, 100) == 100, "a file of 100 bytes");
    ll_form f;
    memset(&f, 0, sizeof(f));
    ll_body b;
    body_init(&b);
    ll_body_set_file(&b, fd, 0, 100);
    ll_form_add(&f, "file", "f.bin", NULL, &b);
    ll_form_wire w;
    ll_form_wire_init(&w, &f);
    uint64_t data_at = w.len - 100 - 2 - 46; /* the part's data, then CRLF and the closing delimiter */
    tu_check(ftruncate(fd, 50) == 0, "the file cut to 50 bytes");
    char out[1024];
    int err;
    errno = 0;
    size_t got = read_from(&w, 0, 4096, out, sizeof(out), &err);
    tu_check(err && errno == EIO && got == data_at + 50,
             "a file that got shorter is -1 (EIO) where it ends, after the %zu bytes before", got);
    errno = 0;
    tu_check(ll_form_wire_read(&w, data_at + 50, out, 10) == -1 && errno == EIO, "and again when read there");
    tu_check(ll_form_wire_read(&w, data_at + 10, out, 10) == 10, "the part's bytes still there read");
    ll_form_wire_free(&w);
    ll_form_free(&f);
    close(fd);
    unlink(path);

    uint64_t have = 10;
    memset(&f, 0, sizeof(f));
    ll_body_set_generator(&b, gen_short, &have, 20);
    ll_form_add(&f, "g", NULL, NULL, &b);
    ll_form_wire_init(&w, &f);
    errno = 0;
    got = read_from(&w, 0, 4096, out, sizeof(out), &err);
    tu_check(err && errno == EIO && got == w.len - 10 - 2 - 46,
             "a generator that ends before its length is -1 (EIO), not the end of the form");
    ll_form_wire_free(&w);
    ll_form_free(&f);

    memset(&f, 0, sizeof(f));
    ll_body_set_generator(&b, gen_fail, NULL, 20);
    ll_form_add(&f, "g", NULL, NULL, &b);
    ll_form_wire_init(&w, &f);
    errno = 0;
    got = read_from(&w, 0, 4096, out, sizeof(out), &err);
    tu_check(err && errno == ENOSPC && got == w.len - 20 - 2 - 46, "a generator's error and errno come through");
    ll_form_wire_free(&w);
    ll_form_free(&f);
    ll_body_clear(&b);
}

int main(void) {
    test_parts();
    test_empty_form();
    test_many_parts();
    test_errors();
    return tu_summary();
}
