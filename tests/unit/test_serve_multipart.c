/* test_serve_multipart.c -- the streaming multipart/form-data parser
 * (src/core/serve/multipart.c): the same bodies fed whole, in 1-byte and
 * 7-byte pieces and split at every offset (so delimiters and header lines
 * span feeds) give the same parts; the boundary parameter; bad bodies. */
/* links: ll_serve */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multipart.h"
#include "test_util.h"

#define LOG_MAX 8192

/* What the callbacks saw, as text: "<name|filename|type>data." per part,
 * with "-" for an absent filename or type. */
typedef struct rec {
    char log[LOG_MAX];
    size_t len;
    int stop_at_data; /* part_data returns nonzero from this call on (0: never) */
    int data_calls;
} rec;

static void put(rec *r, const char *p, size_t n) {
    if (r->len + n >= LOG_MAX) n = LOG_MAX - 1 - r->len;
    memcpy(r->log + r->len, p, n);
    r->len += n;
    r->log[r->len] = '\0';
}

static int on_begin(void *ud, const ll_multipart_part *p) {
    rec *r = ud;
    put(r, "<", 1);
    put(r, p->name, p->name_len);
    put(r, "|", 1);
    if (p->filename) put(r, p->filename, p->filename_len);
    else put(r, "-", 1);
    put(r, "|", 1);
    if (p->content_type) put(r, p->content_type, p->content_type_len);
    else put(r, "-", 1);
    put(r, ">", 1);
    if (strlen(p->name) != p->name_len) put(r, "!NUL", 4);
    return 0;
}

static int on_data(void *ud, const char *p, size_t n) {
    rec *r = ud;
    r->data_calls++;
    if (r->stop_at_data && r->data_calls >= r->stop_at_data) return -1;
    if (n == 0) put(r, "!EMPTY", 6);
    put(r, p, n);
    return 0;
}

static int on_end(void *ud) {
    put(ud, ".", 1);
    return 0;
}

static const ll_multipart_cb cb = {on_begin, on_data, on_end};

/* The log with CR, LF and NUL made visible (for failure messages). */
static const char *shown(const rec *r) {
    static char out[4 * LOG_MAX];
    size_t o = 0;
    for (size_t i = 0; i < r->len; i++) {
        const char *e = r->log[i] == '\r' ? "\\r" : r->log[i] == '\n' ? "\\n" : r->log[i] == '\0' ? "\\0" : NULL;
        if (e) {
            memcpy(out + o, e, 2);
            o += 2;
        } else {
            out[o++] = r->log[i];
        }
    }
    out[o] = '\0';
    return out;
}

/* Feeds body in pieces of `step` bytes (0: whole), or split once at `split`
 * when step is -1. Returns the end result; r gets the log, *why the error. */
static int run(const char *boundary, const char *body, size_t n, int step, size_t split, rec *r, const char **why) {
    memset(r, 0, sizeof(*r));
    ll_multipart *m = ll_multipart_new(boundary, strlen(boundary), &cb, r);
    if (!m) return -2;
    if (step == 0) {
        ll_multipart_feed(m, body, n);
    } else if (step < 0) {
        ll_multipart_feed(m, body, split);
        ll_multipart_feed(m, body + split, n - split);
    } else {
        for (size_t i = 0; i < n; i += (size_t)step) {
            size_t k = n - i < (size_t)step ? n - i : (size_t)step;
            ll_multipart_feed(m, body + i, k);
        }
    }
    int rc = ll_multipart_end(m);
    *why = ll_multipart_error(m);
    ll_multipart_free(m);
    return rc;
}

/* The body parses to want (want_n bytes) in every way of feeding it. */
static void good_n(const char *what, const char *boundary, const char *body, size_t n, const char *want,
                   size_t want_n) {
    rec r;
    const char *why;
    int steps[] = {0, 1, 7};
    const char *how[] = {"whole", "in 1-byte pieces", "in 7-byte pieces"};
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        int rc = run(boundary, body, n, steps[s], 0, &r, &why);
        int ok = rc == 0 && r.len == want_n && memcmp(r.log, want, want_n) == 0;
        tu_check(ok, "%s, %s%s%s %s", what, how[s], ok ? "" : ": got ",
                 ok ? "" : shown(&r), why ? why : "");
    }
    int all = 1;
    for (size_t split = 0; split <= n; split++) {
        int rc = run(boundary, body, n, -1, split, &r, &why);
        if (rc == 0 && r.len == want_n && memcmp(r.log, want, want_n) == 0) continue;
        all = 0;
        tu_check(0, "%s, split at %zu: rc %d, got %s %s", what, split, rc, shown(&r), why ? why : "");
        break;
    }
    if (all) tu_check(1, "%s, split at each of %zu offsets", what, n + 1);
}

static void good(const char *what, const char *boundary, const char *body, const char *want) {
    good_n(what, boundary, body, strlen(body), want, strlen(want));
}

/* The body is refused with a reason containing want_why, however fed. */
static void bad(const char *what, const char *boundary, const char *body, const char *want_why) {
    rec r;
    const char *why;
    int steps[] = {0, 1, 7};
    const char *how[] = {"whole", "in 1-byte pieces", "in 7-byte pieces"};
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        int rc = run(boundary, body, strlen(body), steps[s], 0, &r, &why);
        tu_check(rc == -1 && why && strstr(why, want_why), "%s, %s: refused (%s)", what, how[s],
                 why ? why : "accepted");
    }
}

static void boundary_good(const char *ctype, const char *want) {
    char b[LL_MULTIPART_BOUNDARY_MAX + 1];
    const char *why = NULL;
    int n = ll_multipart_boundary(ctype, strlen(ctype), b, &why);
    int ok = n == (int)strlen(want) && strcmp(b, want) == 0;
    tu_check(ok, "boundary of '%s' is '%s'%s%s", ctype, want, ok ? "" : ": got ", ok ? "" : n >= 0 ? b : why);
}

static void boundary_bad(const char *ctype, const char *want_why) {
    char b[LL_MULTIPART_BOUNDARY_MAX + 1];
    const char *why = NULL;
    int n = ll_multipart_boundary(ctype, strlen(ctype), b, &why);
    tu_check(n == -1 && why && strstr(why, want_why), "boundary of '%s' refused: %s", ctype, why ? why : "accepted");
}

static void bodies(void) {
    const char *curl = "--------------------------XyZ\r\n"
                       "Content-Disposition: form-data; name=\"a\"\r\n"
                       "\r\n"
                       "1\r\n"
                       "--------------------------XyZ\r\n"
                       "Content-Disposition: form-data; name=\"file\"; filename=\"x.bin\"\r\n"
                       "Content-Type: application/octet-stream\r\n"
                       "\r\n"
                       "hello\r\n"
                       "--------------------------XyZ\r\n"
                       "Content-Disposition: form-data; name=\"empty\"; filename=\"null\"\r\n"
                       "Content-Type: application/octet-stream\r\n"
                       "\r\n"
                       "\r\n"
                       "--------------------------XyZ--\r\n";
    good("curl -F body", "------------------------XyZ", curl,
         "<a|-|->1.<file|x.bin|application/octet-stream>hello.<empty|null|application/octet-stream>.");

    /* data full of near-delimiters, a preamble and an epilogue, padding */
    const char *tricky = "preamble\r\n--bo\r\n--boun\r\n"
                         "--bound  \t\r\n"
                         "content-disposition:FORM-DATA ;NAME=x; filename=\"a\\\"b\\\\c.txt\";x=1\r\n"
                         "X-Other: ignored\r\n"
                         "\r\n"
                         "\r\r\n\r\n-\r\n--\r\n--boun\r\n-boundX--bound\r"
                         "\r\n--bound\r\n"
                         "Content-Disposition: form-data; name=t\r\n"
                         "Content-Type:  text/plain; charset=utf-8 \r\n"
                         "\r\n"
                         "\r\n"
                         "\r\n--bound--epilogue\r\n--bound\r\nnot parsed";
    good("near-delimiters in data, preamble, padding, epilogue", "bound", tricky,
         "<x|a\"b\\c.txt|->\r\r\n\r\n-\r\n--\r\n--boun\r\n-boundX--bound\r.<t|-|text/plain; charset=utf-8>\r\n.");

    /* binary data with NULs; the body may start right at the delimiter */
    char bin[256];
    size_t n = 0;
    const char *h = "--b\r\nContent-Disposition: form-data; name=\"z\"\r\n\r\n";
    memcpy(bin, h, strlen(h));
    n = strlen(h);
    memcpy(bin + n, "a\0b\0\r\n\0", 7);
    n += 7;
    memcpy(bin + n, "\r\n--b--", 7);
    n += 7;
    good_n("NUL bytes in data", "b", bin, n, "<z|-|->a\0b\0\r\n\0.", 15);

    const char *path = "--b\r\nContent-Disposition: form-data; name=\"p\"; filename=\"C:\\dir\\f.txt\"\r\n\r\n"
                       "x\r\n--b--";
    good("other backslashes are kept", "b", path, "<p|C:\\dir\\f.txt|->x.");

    const char *none = "--b--\r\n";
    good("no parts", "b", none, "");
}

/* Random data made of the delimiter's bytes (but never the delimiter),
 * two parts, fed in random pieces. */
static void random_data(void) {
    static const char alphabet[] = "\r\n-bnd";
    char data[2][3000], body[8000], want[7000];
    rec r;
    const char *why;
    int ok = 1;
    for (int round = 0; round < 200 && ok; round++) {
        size_t dn[2];
        for (int p = 0; p < 2; p++) {
            dn[p] = (size_t)(tu_rand() % sizeof(data[p]));
            for (size_t i = 0; i < dn[p]; i++) data[p][i] = alphabet[tu_rand() % (sizeof(alphabet) - 1)];
            for (size_t i = 0; i + 7 <= dn[p]; i++)
                if (memcmp(data[p] + i, "\r\n--bnd", 7) == 0) data[p][i + 6] = '-';
            if (dn[p] >= 6 && memcmp(data[p] + dn[p] - 6, "\r\n--bn", 6) == 0) data[p][dn[p] - 1] = '-';
        }
        size_t n = 0, wn = 0;
        for (int p = 0; p < 2; p++) {
            n += (size_t)sprintf(body + n, "--bnd\r\nContent-Disposition: form-data; name=p%d\r\n\r\n", p);
            memcpy(body + n, data[p], dn[p]);
            n += dn[p];
            memcpy(body + n, "\r\n", 2);
            n += 2;
            wn += (size_t)sprintf(want + wn, "<p%d|-|->", p);
            memcpy(want + wn, data[p], dn[p]);
            wn += dn[p];
            want[wn++] = '.';
        }
        n += (size_t)sprintf(body + n, "--bnd--\r\n");
        memset(&r, 0, sizeof(r));
        ll_multipart *m = ll_multipart_new("bnd", 3, &cb, &r);
        for (size_t i = 0; i < n;) {
            size_t k = 1 + (size_t)(tu_rand() % 20);
            if (k > n - i) k = n - i;
            ll_multipart_feed(m, body + i, k);
            i += k;
        }
        ok = ll_multipart_end(m) == 0 && r.len == wn && memcmp(r.log, want, wn) == 0;
        why = ll_multipart_error(m);
        ll_multipart_free(m);
        if (!ok) tu_check(0, "random data, round %d: %s %s", round, shown(&r), why ? why : "");
    }
    if (ok) tu_check(1, "random data of CR, LF, '-' and the boundary's letters, random pieces: 200 bodies");
}

static void refusals(void) {
#define PART_A "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n"
    bad("no closing delimiter", "b", PART_A, "missing closing");
    bad("closing delimiter without its dashes", "b", PART_A "--b\r\n", "missing closing");
    bad("no delimiter at all", "b", "just some text\r\n", "no delimiter");
    bad("empty body", "b", "", "no delimiter");
    bad("part without Content-Disposition", "b", "--b\r\nContent-Type: text/plain\r\n\r\n1\r\n--b--",
        "no Content-Disposition name");
    bad("part without name", "b", "--b\r\nContent-Disposition: form-data; filename=\"f\"\r\n\r\n1\r\n--b--",
        "no Content-Disposition name");
    bad("not form-data", "b", "--b\r\nContent-Disposition: attachment; name=a\r\n\r\n1\r\n--b--", "not form-data");
    bad("unterminated quote", "b", "--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n--b--",
        "malformed Content-Disposition");
    bad("header line without colon", "b", "--b\r\nContent-Disposition form-data\r\n\r\n1\r\n--b--",
        "malformed header line");
    bad("garbage after the boundary", "b", PART_A "--bx\r\n", "malformed delimiter");
    bad("a single dash after the boundary", "b", PART_A "--b-x", "malformed delimiter");

    char *big = malloc(LL_MULTIPART_HEAD_MAX + 200);
    strcpy(big, "--b\r\nContent-Disposition: form-data; name=a\r\nX-Long: ");
    size_t n = strlen(big);
    memset(big + n, 'l', LL_MULTIPART_HEAD_MAX);
    strcpy(big + n + LL_MULTIPART_HEAD_MAX, "\r\n\r\n1\r\n--b--");
    bad("part headers too long", "b", big, "longer than 16384");
    free(big);

    /* a callback stops the parser */
    rec r;
    const char *why;
    const char *body = "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--b--";
    memset(&r, 0, sizeof(r));
    ll_multipart *m = ll_multipart_new("b", 1, &cb, &r);
    r.stop_at_data = 1;
    int rc = ll_multipart_feed(m, body, strlen(body));
    why = ll_multipart_error(m);
    tu_check(rc == -1 && why && strstr(why, "stopped"), "a callback's nonzero return stops the parser (%s)",
             why ? why : "");
    tu_check(ll_multipart_feed(m, "more", 4) == -1 && ll_multipart_end(m) == -1, "the error sticks");
    ll_multipart_free(m);

    tu_check(ll_multipart_new("", 0, &cb, NULL) == NULL, "empty boundary refused");
    tu_check(ll_multipart_new("a\rb", 3, &cb, NULL) == NULL, "boundary with CR refused");
}

static void boundaries(void) {
    boundary_good("multipart/form-data; boundary=------------------------XyZ", "------------------------XyZ");
    boundary_good("Multipart/Form-Data;boundary=\"a b:c\"", "a b:c");
    boundary_good("multipart/form-data; charset=utf-8; BOUNDARY=x; boundary=y", "x");
    boundary_good("  multipart/form-data ; boundary = q ", "q");
#define B70 "1234567890123456789012345678901234567890123456789012345678901234567890"
    boundary_good("multipart/form-data; boundary=" B70, B70);
    boundary_bad("multipart/form-data", "no boundary");
    boundary_bad("multipart/form-data; charset=utf-8", "no boundary");
    boundary_bad("application/x-www-form-urlencoded; boundary=x", "not multipart/form-data");
    boundary_bad("multipart/mixed; boundary=x", "not multipart/form-data");
    boundary_bad("multipart/form-data; boundary=", "bad boundary");
    boundary_bad("multipart/form-data; boundary=\"ends in space \"", "bad boundary");
    boundary_bad("multipart/form-data; boundary=a{b}", "bad boundary");
    boundary_bad("multipart/form-data; boundary=" B70 "1", "bad boundary");
    boundary_bad("multipart/form-data; boundary=\"open", "malformed");
}

int main(void) {
    bodies();
    random_data();
    refusals();
    boundaries();
    return tu_summary();
}
