/* form_wire.c -- the multipart/form-data encoding of a form (see
 * form_wire.h): the strings between the parts' data (a part's delimiter and
 * headers, the closing delimiter) are made once, in one allocation, and a
 * read finds its segment by a binary search over the segments' starts.
 *
 * Where the bytes differ from libcurl 8's mime: its boundary ends in 22
 * random letters and digits, this one in 16 hex digits (the length of
 * libcurl 7's); and a part with a filename but no type is sent as
 * application/octet-stream (RFC 7578 4.4), where libcurl guesses a type from
 * a few filename extensions (.txt is text/plain) and sends none for the
 * others. */
#include "form_wire.h"

#include <errno.h>
#include <limits.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "form.h"

#define CONTENT_TYPE_PREFIX "multipart/form-data; boundary="

/* Fills r with n random bytes: getrandom, else OpenSSL; if both fail (no
 * kernel support, no seed) the clock and the address of r (another stack
 * in another thread), still unlikely to be found in the data. */
static void random_bytes(unsigned char *r, size_t n) {
    if (getrandom(r, n, 0) == (ssize_t)n || RAND_bytes(r, (int)n) == 1) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)(uintptr_t)r << 24);
    for (size_t i = 0; i < n; i++, x >>= 8) r[i] = (unsigned char)x;
}

/* b becomes 24 dashes and 16 random hex digits, NUL-terminated (41 bytes). */
static void make_boundary(char *b) {
    static const char hex[] = "0123456789abcdef";
    unsigned char r[8];
    random_bytes(r, sizeof(r));
    memset(b, '-', 24);
    for (int i = 0; i < 8; i++) {
        b[24 + 2 * i] = hex[r[i] >> 4];
        b[25 + 2 * i] = hex[r[i] & 15];
    }
    b[40] = 0;
}

/* Puts n bytes of s at dst + at (dst NULL: only counts them); returns the
 * new length. The strings are measured with dst NULL, then written. */
static size_t put(char *dst, size_t at, const char *s, size_t n) {
    if (dst) memcpy(dst + at, s, n);
    return at + n;
}

static size_t put_str(char *dst, size_t at, const char *s) {
    return put(dst, at, s, strlen(s));
}

/* s with ", CR and LF as %22, %0D and %0A (HTML5's form encoding, libcurl's
 * default). */
static size_t put_escaped(char *dst, size_t at, const char *s) {
    for (; *s; s++) {
        if (*s == '"') at = put(dst, at, "%22", 3);
        else if (*s == '\r') at = put(dst, at, "%0D", 3);
        else if (*s == '\n') at = put(dst, at, "%0A", 3);
        else at = put(dst, at, s, 1);
    }
    return at;
}

/* The delimiter before a part, or the closing one: the CRLF ending the
 * previous part's data (none before the first), "--" and the boundary. */
static size_t put_delimiter(char *dst, size_t at, const char *boundary, int first) {
    if (!first) at = put(dst, at, "\r\n", 2);
    at = put(dst, at, "--", 2);
    return put_str(dst, at, boundary);
}

/* Part p's delimiter and headers, up to and with the blank line. */
static size_t put_head(char *dst, size_t at, const char *boundary, const ll_form_part *p, int first) {
    at = put_delimiter(dst, at, boundary, first);
    at = put_str(dst, at, "\r\nContent-Disposition: form-data");
    if (p->name) {
        at = put_str(dst, at, "; name=\"");
        at = put_escaped(dst, at, p->name);
        at = put(dst, at, "\"", 1);
    }
    if (p->filename) {
        at = put_str(dst, at, "; filename=\"");
        at = put_escaped(dst, at, p->filename);
        at = put(dst, at, "\"", 1);
    }
    at = put(dst, at, "\r\n", 2);
    const char *type = p->content_type ? p->content_type : p->filename ? "application/octet-stream" : NULL;
    if (type) {
        at = put_str(dst, at, "Content-Type: ");
        at = put_str(dst, at, type);
        at = put(dst, at, "\r\n", 2);
    }
    return put(dst, at, "\r\n", 2);
}

/* Lays the segments out (w->segs, w->len) and writes their strings at text
 * (NULL: only measures); returns the length of the strings. */
static size_t lay_out(ll_form_wire *w, char *text) {
    const ll_form *f = w->form;
    size_t at = 0;
    uint64_t pos = 0;
    for (int i = 0; i < w->nsegs; i++) {
        ll_form_wire_seg *s = &w->segs[i];
        s->start = pos;
        s->text_off = at;
        if (i < f->n) {
            at = put_head(text, at, w->boundary, &f->parts[i], i == 0);
            s->data_len = f->parts[i].data.len;
        } else {
            at = put_delimiter(text, at, w->boundary, i == 0);
            at = put_str(text, at, "--\r\n");
            s->data_len = 0;
        }
        s->text_len = at - s->text_off;
        pos += s->text_len + s->data_len;
    }
    w->len = pos;
    return at;
}

int ll_form_wire_init(ll_form_wire *w, const ll_form *f) {
    memset(w, 0, sizeof(*w));
    w->form = f;
    make_boundary(w->boundary);
    memcpy(w->content_type, CONTENT_TYPE_PREFIX, sizeof(CONTENT_TYPE_PREFIX) - 1);
    memcpy(w->content_type + sizeof(CONTENT_TYPE_PREFIX) - 1, w->boundary, sizeof(w->boundary));
    w->nsegs = f->n + 1;
    w->segs = malloc((size_t)w->nsegs * sizeof(*w->segs));
    if (w->segs) w->text = malloc(lay_out(w, NULL));
    if (!w->segs || !w->text) {
        ll_form_wire_free(w);
        return -1;
    }
    lay_out(w, w->text);
    return 0;
}

const char *ll_form_wire_content_type(const ll_form_wire *w) {
    return w->content_type;
}

void ll_form_wire_free(ll_form_wire *w) {
    free(w->text);
    free(w->segs);
    memset(w, 0, sizeof(*w));
}

/* The segment holding position pos: the last one starting at or before it
 * (every segment has a string, so the starts strictly increase). */
static int seg_at(const ll_form_wire *w, uint64_t pos) {
    int lo = 0, hi = w->nsegs - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (w->segs[mid].start <= pos) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Reads from one segment's string or data, at pos < w->len. A part's
 * source that gives nothing before its length is EIO (a generator that
 * ends early), not the end of the form. */
static ssize_t read_piece(const ll_form_wire *w, uint64_t pos, char *buf, size_t n) {
    int i = seg_at(w, pos);
    const ll_form_wire_seg *s = &w->segs[i];
    uint64_t off = pos - s->start;
    if (off < s->text_len) {
        size_t k = s->text_len - (size_t)off;
        if (k > n) k = n;
        memcpy(buf, w->text + s->text_off + off, k);
        return (ssize_t)k;
    }
    off -= s->text_len;
    if (n > s->data_len - off) n = (size_t)(s->data_len - off);
    ssize_t r = ll_body_read(&w->form->parts[i].data, off, buf, n);
    if (r == 0) errno = EIO;
    return r == 0 ? -1 : r;
}

/* Fills buf across segments; an error after some bytes is left for the
 * next read, which starts where it happened. */
ssize_t ll_form_wire_read(const ll_form_wire *w, uint64_t pos, char *buf, size_t n) {
    if (n > SSIZE_MAX) n = SSIZE_MAX;
    size_t got = 0;
    while (got < n && pos + got < w->len) {
        ssize_t r = read_piece(w, pos + got, buf + got, n - got);
        if (r < 0) return got ? (ssize_t)got : -1;
        got += (size_t)r;
    }
    return (ssize_t)got;
}
