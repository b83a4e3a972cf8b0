/* h1_head.c -- a whole, plain HTTP/1.1 response head scanned in one pass
 * (see h1_head.h). Each line is found with memchr and checked against one
 * table of the bytes a header may hold; only the headers that change how
 * the response is read (Content-Length, Connection, Content-Encoding, and
 * the ones that send it back to http-parser) are looked at by name. */
#include "h1_head.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "body_decode.h"

enum { BAD = 0, TCHAR = 1, VCHAR = 2 }; /* TCHAR bytes are VCHAR bytes too */

/* What each byte may be: a token character (a header name), a value
 * character (visible ASCII, space, tab and obs-text, as http-parser
 * allows), or neither. */
static unsigned char byte_class[256];

static void classes_init(void) {
    static const char tchar[] = "!#$%&'*+-.^_`|~";
    for (int c = 0; c < 256; c++) {
        int v = c == '\t' || (c >= ' ' && c != 127);
        int t = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c && strchr(tchar, c));
        byte_class[c] = (unsigned char)(t ? TCHAR | VCHAR : v ? VCHAR : BAD);
    }
}

static int all_of(const char *p, const char *end, int cls) {
    for (; p < end; p++)
        if (!(byte_class[(unsigned char)*p] & cls)) return 0;
    return 1;
}

/* Whether every byte of p..end is a value character, eight at a time: a
 * word with no byte under 0x20 and none equal to 0x7f is all value bytes
 * (bytes from 0x80 count as obs-text); a word with one (a tab, say) is
 * looked at byte by byte from there. */
static int value_bytes(const char *p, const char *end) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (end - p >= 8) {
        uint64_t x, del;
        memcpy(&x, p, 8);
        del = x ^ (0x7f * ones);
        if (((x - 0x20 * ones) & ~x & highs) | ((del - ones) & ~del & highs)) break;
        p += 8;
    }
    return all_of(p, end, VCHAR);
}

/* The end of the header name at p: the first byte that is not a token
 * character. */
static const char *name_end(const char *p, const char *end) {
    while (p < end && (byte_class[(unsigned char)*p] & TCHAR)) p++;
    return p;
}

static int named(const char *name, size_t n, const char *want, size_t wn) {
    return n == wn && strncasecmp(name, want, wn) == 0;
}

/* Content-Length: 1 to 18 digits, nothing else. -1 when it is not that. */
static int64_t digits(const char *v, size_t n) {
    if (n == 0 || n > 18) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

/* The status line "HTTP/1.x DDD[ reason]" ending at le (its CR). */
static int status_line(const char *p, const char *le, ll_h1_scanned *out) {
    if (le - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ') return 0;
    const char *d = p + 9;
    if (d[0] < '2' || d[0] > '9' || d[1] < '0' || d[1] > '9' || d[2] < '0' || d[2] > '9') return 0;
    if (le > d + 3 && (d[3] != ' ' || !value_bytes(d + 4, le))) return 0;
    out->minor = p[7] - '0';
    out->status = (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
    out->canonical = le > d + 3;
    return 1;
}

/* One "Name: value" line, p to le (its CR). Returns 0 to decline. */
static int header_line(const char *p, const char *le, ll_h1_scanned *out, int *conn) {
    const char *colon = name_end(p, le);
    if (colon == p || colon == le || *colon != ':') return 0;
    const char *v = colon + 1;
    while (v < le && (*v == ' ' || *v == '\t')) v++;
    if (v == le || le[-1] == ' ' || le[-1] == '\t' || !value_bytes(v, le)) return 0;
    if (v != colon + 2 || colon[1] != ' ') out->canonical = 0;
    size_t nn = (size_t)(colon - p), vn = (size_t)(le - v);
    switch (nn) {
    case 7:
        return !named(p, nn, "upgrade", 7);
    case 10:
        if (named(p, nn, "set-cookie", 10)) out->set_cookie = 1;
        if (!named(p, nn, "connection", 10)) return 1;
        if (*conn) return 0;
        *conn = named(v, vn, "close", 5) ? 1 : named(v, vn, "keep-alive", 10) ? 2 : 0;
        return *conn != 0;
    case 14:
        if (!named(p, nn, "content-length", 14)) return 1;
        if (out->content_length >= 0) return 0; /* repeated: http-parser refuses it */
        out->content_length = digits(v, vn);
        return out->content_length >= 0;
    case 16:
        if (named(p, nn, "content-encoding", 16)) out->encoding = ll_decode_kind_of(v, vn);
        return !named(p, nn, "proxy-connection", 16);
    case 17:
        return !named(p, nn, "transfer-encoding", 17);
    default:
        /* http-parser counts any name that starts with Transfer-Encoding
         * as one (it then refuses a Content-Length beside it): leave
         * such names to it */
        return nn < 17 || strncasecmp(p, "transfer-encoding", 17) != 0;
    }
}

int ll_h1_head_scan(const char *p, size_t n, int head, ll_h1_scanned *out) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, classes_init);
    const char *end = p + (n < LL_H1_MAX_HEAD ? n : LL_H1_MAX_HEAD), *at = p;
    int conn = 0; /* Connection: 1 close, 2 keep-alive */
    memset(out, 0, sizeof(*out));
    out->encoding = -1;
    out->content_length = -1;
    for (int line = 0;; line++) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        if (!nl || nl == at || nl[-1] != '\r') return 0;
        const char *le = nl - 1;
        if (line == 0) {
            if (!status_line(at, le, out)) return 0;
        } else if (le == at) { /* the blank line */
            out->len = (size_t)(nl + 1 - p);
            break;
        } else if (!header_line(at, le, out, &conn)) {
            return 0;
        }
        at = nl + 1;
    }
    if (head || out->status == 204 || out->status == 304) out->content_length = -1; /* never a body */
    else if (out->content_length < 0) return 0; /* ends at close: http-parser reads it */
    out->keep_alive = out->minor == 1 ? conn != 1 : conn == 2;
    return 1;
}

/* Appends a line of the header block: name, ": ", value. */
static int put_header(ll_buf *hdrs, const char *p, const char *le) {
    const char *colon = memchr(p, ':', (size_t)(le - p)), *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    if (ll_buf_append(hdrs, p, (size_t)(colon - p)) < 0 || ll_buf_append(hdrs, ": ", 2) < 0) return -1;
    return ll_buf_append(hdrs, v, (size_t)(le + 2 - v));
}

int ll_h1_head_copy(const char *p, const ll_h1_scanned *h, ll_buf *hdrs) {
    hdrs->len = 0;
    if (h->canonical) return ll_buf_append(hdrs, p, h->len);
    const char *end = p + h->len, *nl = memchr(p, '\n', h->len);
    /* "HTTP/1.x DDD ", then the reason phrase if there is one */
    if (ll_buf_append(hdrs, p, 12) < 0 || ll_buf_append(hdrs, " ", 1) < 0) return -1;
    if (nl - 1 > p + 12 && ll_buf_append(hdrs, p + 13, (size_t)(nl - 1 - (p + 13))) < 0) return -1;
    if (ll_buf_append(hdrs, "\r\n", 2) < 0) return -1;
    for (const char *at = nl + 1; at < end - 2; at = nl + 1) {
        nl = memchr(at, '\n', (size_t)(end - at));
        if (put_header(hdrs, at, nl - 1) < 0) return -1;
    }
    return ll_buf_append(hdrs, "\r\n", 2);
}
