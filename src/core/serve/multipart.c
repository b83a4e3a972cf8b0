/* multipart.c -- `luaload serve`'s streaming multipart/form-data parser
 * (see multipart.h for the API and the syntax it takes).
 *
 * Owns: the boundary parameter of a Content-Type value, and the parser: a
 * state machine fed bytes in pieces of any size. Data is searched for the
 * delimiter CRLF "--" boundary with memchr for its CR (a boundary holds no
 * CR, so a failed partial match can only restart at the byte that broke
 * it); a partial match at the end of a feed is withheld and, if the next
 * feed shows it was data after all, passed on then. The first delimiter
 * may start the body: the parser starts as if a CRLF had just been seen.
 * A part's header lines are gathered one at a time into a line buffer;
 * their decoded values (name, filename, Content-Type) go to a string
 * buffer the part's callbacks can read. In a quoted value a backslash
 * escapes only '"' and '\\' (as Go's mime package does): browsers and curl
 * send other backslashes as they are (C:\dir\f.txt) and percent-encode
 * quotes. */
#include "multipart.h"
#include "xmalloc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    MS_PREAMBLE,  /* before the first delimiter: ignored */
    MS_DATA,      /* a part's data */
    MS_DELIM,     /* a delimiter just matched: "--", padding or CRLF next */
    MS_DASH,      /* "-" seen after it: one more for the closing delimiter */
    MS_PAD,       /* transport padding (spaces, tabs) after it */
    MS_CR,        /* its CR: LF next */
    MS_HEAD,      /* a part's header lines */
    MS_EPILOGUE,  /* after the closing delimiter: ignored */
    MS_ERROR
};

#define DELIM_MAX (4 + LL_MULTIPART_BOUNDARY_MAX)

struct ll_multipart {
    ll_multipart_cb cb;
    void *ud;
    int state;            /* MS_* */
    int in_part;          /* a part began and has not ended */
    size_t parts;
    const char *why;
    char delim[DELIM_MAX]; /* CRLF "--" boundary */
    size_t dlen;
    size_t k;             /* bytes of delim matched at the end of the last feed */
    size_t head_len;      /* header bytes of the current part so far */
    size_t line_len, strs_len;
    long name, filename, ctype; /* offsets into strs, -1 when absent */
    size_t name_len, filename_len, ctype_len;
    char line[LL_MULTIPART_HEAD_MAX + 1]; /* the header line being gathered */
    char strs[LL_MULTIPART_HEAD_MAX + 1]; /* decoded values, NUL-terminated */
};

static int fail(ll_multipart *m, const char *why) {
    m->state = MS_ERROR;
    m->why = why;
    return -1;
}

/* ---- header values: tokens, parameters, quoted strings ---- */

static int is_tchar(unsigned char ch) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) return 1;
    return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static int is_ows(char ch) { return ch == ' ' || ch == '\t'; }

static size_t skip_ows(const char *v, size_t n, size_t i) {
    while (i < n && is_ows(v[i])) i++;
    return i;
}

static int span_is(const char *s, size_t n, const char *want) {
    return strlen(want) == n && strncasecmp(s, want, n) == 0;
}

/* The first word of a header value ("form-data", "multipart/form-data"):
 * its length, *i moved past it. */
static size_t first_word(const char *v, size_t n, size_t *i) {
    size_t s = skip_ows(v, n, 0), e = s;
    while (e < n && v[e] != ';' && !is_ows(v[e])) e++;
    *i = e;
    return e - s;
}

/* The next '; name=value' parameter from *i. The name's span goes to *pn,
 * *pnl; the value, unquoted, to dst (up to cap
 * bytes, NUL-terminated when it fits) and its full length to *dl. 1 for a
 * parameter, 0 at the end of the value, -1 when malformed. */
static int next_param(const char *v, size_t n, size_t *i, const char **pn, size_t *pnl, char *dst, size_t cap,
                      size_t *dl) {
    size_t j = skip_ows(v, n, *i), len = 0;
    if (j == n) return 0;
    if (v[j] != ';') return -1;
    j = skip_ows(v, n, j + 1);
    if (j == n) return 0; /* a trailing ';' */
    size_t s = j;
    while (j < n && is_tchar((unsigned char)v[j])) j++;
    if (j == s) return -1;
    *pn = v + s;
    *pnl = j - s;
    j = skip_ows(v, n, j);
    if (j == n || v[j] != '=') return -1;
    j = skip_ows(v, n, j + 1);
    int quoted = j < n && v[j] == '"';
    if (quoted) j++;
    for (; j < n; j++) {
        char ch = v[j];
        if (quoted && ch == '"') break;
        if (!quoted && (ch == ';' || is_ows(ch))) break;
        if (quoted && ch == '\\' && j + 1 < n && (v[j + 1] == '"' || v[j + 1] == '\\')) ch = v[++j];
        if (len < cap) dst[len] = ch;
        len++;
    }
    if (quoted && j == n) return -1; /* no closing quote */
    if (quoted) j++;
    if (len < cap) dst[len] = '\0';
    *dl = len;
    *i = j;
    return 1;
}

/* RFC 2046's bchars: the characters a boundary may hold (a space but not
 * at the end). */
static int boundary_ok(const char *b, size_t n) {
    if (n == 0 || n > LL_MULTIPART_BOUNDARY_MAX || b[n - 1] == ' ') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (!alnum && (ch == 0 || !strchr("'()+_,-./:=? ", ch))) return 0;
    }
    return 1;
}

int ll_multipart_boundary(const char *ctype, size_t n, char out[LL_MULTIPART_BOUNDARY_MAX + 1],
                          const char **why) {
    size_t i, wl = first_word(ctype, n, &i), pnl, dl, len = 0;
    const char *pn;
    char val[LL_MULTIPART_BOUNDARY_MAX + 1];
    int found = 0, rc;
    if (!span_is(ctype + skip_ows(ctype, n, 0), wl, "multipart/form-data")) {
        *why = "the Content-Type is not multipart/form-data";
        return -1;
    }
    while ((rc = next_param(ctype, n, &i, &pn, &pnl, val, sizeof(val), &dl)) == 1) {
        if (found || !span_is(pn, pnl, "boundary")) continue; /* the first one counts */
        found = 1;
        len = dl;
        if (len < sizeof(val)) memcpy(out, val, len + 1);
    }
    if (rc < 0) {
        *why = "malformed Content-Type parameters";
        return -1;
    }
    if (!found) {
        *why = "no boundary parameter in the Content-Type";
        return -1;
    }
    if (len >= sizeof(val) || !boundary_ok(out, len)) {
        *why = "bad boundary parameter: expected 1 to 70 of the characters RFC 2046 allows";
        return -1;
    }
    return (int)len;
}

/* ---- part headers ---- */

/* Content-Disposition: form-data; name="a"; filename="x". The last one of
 * a part wins. */
static int parse_disposition(ll_multipart *m, const char *v, size_t n) {
    size_t i, wl = first_word(v, n, &i), pnl, dl;
    const char *pn;
    int rc;
    if (!span_is(v + skip_ows(v, n, 0), wl, "form-data"))
        return fail(m, "a part's Content-Disposition is not form-data");
    m->name = m->filename = -1;
    for (;;) {
        size_t at = m->strs_len, cap = sizeof(m->strs) - at;
        rc = next_param(v, n, &i, &pn, &pnl, m->strs + at, cap, &dl);
        if (rc <= 0) break;
        if (dl >= cap) return fail(m, "part headers too long");
        if (span_is(pn, pnl, "name")) {
            m->name = (long)at;
            m->name_len = dl;
        } else if (span_is(pn, pnl, "filename")) {
            m->filename = (long)at;
            m->filename_len = dl;
        } else {
            continue; /* others (filename*) are not kept */
        }
        m->strs_len += dl + 1;
    }
    return rc < 0 ? fail(m, "malformed Content-Disposition in a part") : 0;
}

/* One "Name: value" line (no CRLF). */
static int head_line(ll_multipart *m, const char *p, size_t n) {
    size_t c = 0;
    while (c < n && is_tchar((unsigned char)p[c])) c++;
    if (c == 0 || c == n || p[c] != ':') return fail(m, "malformed header line in a part");
    size_t vs = skip_ows(p, n, c + 1), ve = n;
    while (ve > vs && is_ows(p[ve - 1])) ve--;
    if (span_is(p, c, "content-disposition")) return parse_disposition(m, p + vs, ve - vs);
    if (!span_is(p, c, "content-type")) return 0;
    if (m->strs_len + (ve - vs) + 1 > sizeof(m->strs)) return fail(m, "part headers too long");
    memcpy(m->strs + m->strs_len, p + vs, ve - vs);
    m->ctype = (long)m->strs_len;
    m->ctype_len = ve - vs;
    m->strs_len += ve - vs;
    m->strs[m->strs_len++] = '\0';
    return 0;
}

static void head_start(ll_multipart *m) {
    m->state = MS_HEAD;
    m->head_len = m->line_len = m->strs_len = 0;
    m->name = m->filename = m->ctype = -1;
}

/* The empty line after a part's headers: the part begins. */
static int head_done(ll_multipart *m) {
    ll_multipart_part part;
    if (m->name < 0) return fail(m, "a part has no Content-Disposition name");
    part.name = m->strs + m->name;
    part.name_len = m->name_len;
    part.filename = m->filename < 0 ? NULL : m->strs + m->filename;
    part.filename_len = m->filename < 0 ? 0 : m->filename_len;
    part.content_type = m->ctype < 0 ? NULL : m->strs + m->ctype;
    part.content_type_len = m->ctype < 0 ? 0 : m->ctype_len;
    m->parts++;
    m->in_part = 1;
    m->state = MS_DATA;
    m->k = 0;
    if (m->cb.part_begin && m->cb.part_begin(m->ud, &part) != 0) return fail(m, "stopped by the caller");
    return 0;
}

/* Gathers header bytes up to the next LF; returns the bytes used. */
static size_t scan_head(ll_multipart *m, const char *p, size_t n) {
    const char *nl = memchr(p, '\n', n);
    size_t take = nl ? (size_t)(nl - p) + 1 : n;
    if (m->head_len + take > LL_MULTIPART_HEAD_MAX) {
        fail(m, "part headers longer than 16384 bytes");
        return n;
    }
    m->head_len += take;
    memcpy(m->line + m->line_len, p, nl ? take - 1 : take);
    m->line_len += nl ? take - 1 : take;
    if (!nl) return n;
    size_t len = m->line_len;
    if (len > 0 && m->line[len - 1] == '\r') len--;
    m->line_len = 0;
    if (len == 0) head_done(m);
    else head_line(m, m->line, len);
    return take;
}

/* ---- data and delimiters ---- */

static int emit(ll_multipart *m, const char *p, size_t n) {
    if (m->state != MS_DATA || n == 0 || !m->cb.part_data) return 0;
    if (m->cb.part_data(m->ud, p, n) != 0) return fail(m, "stopped by the caller");
    return 0;
}

static void end_part(ll_multipart *m) {
    if (!m->in_part) return;
    m->in_part = 0;
    if (m->cb.part_end && m->cb.part_end(m->ud) != 0) fail(m, "stopped by the caller");
}

/* Data (or preamble) up to a delimiter; returns the bytes used. */
static size_t scan_data(ll_multipart *m, const char *p, size_t n) {
    size_t i = 0;
    if (m->k > 0) { /* a delimiter began at the end of the last feed */
        while (i < n && m->k < m->dlen && p[i] == m->delim[m->k]) {
            i++;
            m->k++;
        }
        if (m->k == m->dlen) {
            m->k = 0;
            m->state = MS_DELIM;
            return i;
        }
        if (i == n) return n;
        size_t k = m->k; /* it was data: pass it on, then look again from p[i] */
        m->k = 0;
        emit(m, m->delim, k);
        return i;
    }
    for (;;) {
        const char *cr = memchr(p + i, '\r', n - i);
        if (!cr) {
            emit(m, p, n);
            return n;
        }
        size_t j = (size_t)(cr - p), avail = n - j;
        size_t cmp = avail < m->dlen ? avail : m->dlen;
        if (memcmp(cr, m->delim, cmp) != 0) {
            i = j + 1;
            continue;
        }
        if (emit(m, p, j) < 0) return n;
        if (cmp < m->dlen) { /* maybe a delimiter: hold it back */
            m->k = cmp;
            return n;
        }
        m->state = MS_DELIM;
        return j + m->dlen;
    }
}

/* The rest of a delimiter line, a byte at a time. */
static void delim_tail(ll_multipart *m, char ch) {
    const char *bad = "malformed delimiter line: expected CRLF or \"--\" after the boundary";
    switch (m->state) {
    case MS_DELIM:
        if (ch == '-') m->state = MS_DASH;
        else if (is_ows(ch)) m->state = MS_PAD;
        else if (ch == '\r') m->state = MS_CR;
        else fail(m, bad);
        break;
    case MS_DASH:
        if (ch != '-') {
            fail(m, bad);
            break;
        }
        m->state = MS_EPILOGUE;
        end_part(m);
        break;
    case MS_PAD:
        if (ch == '\r') m->state = MS_CR;
        else if (!is_ows(ch)) fail(m, bad);
        break;
    default: /* MS_CR */
        if (ch != '\n') {
            fail(m, bad);
            break;
        }
        end_part(m);
        if (m->state != MS_ERROR) head_start(m);
        break;
    }
}

int ll_multipart_feed(ll_multipart *m, const char *p, size_t n) {
    size_t i = 0;
    while (i < n && m->state != MS_ERROR && m->state != MS_EPILOGUE) {
        switch (m->state) {
        case MS_PREAMBLE:
        case MS_DATA: i += scan_data(m, p + i, n - i); break;
        case MS_HEAD: i += scan_head(m, p + i, n - i); break;
        default: delim_tail(m, p[i++]); break;
        }
    }
    return m->state == MS_ERROR ? -1 : 0;
}

int ll_multipart_end(ll_multipart *m) {
    if (m->state == MS_EPILOGUE) return 0;
    if (m->state == MS_ERROR) return -1;
    if (m->state == MS_PREAMBLE) return fail(m, "no delimiter line (--boundary) in the body");
    return fail(m, "missing closing delimiter (--boundary--)");
}

/* ---- life ---- */

ll_multipart *ll_multipart_new(const char *boundary, size_t n, const ll_multipart_cb *cb, void *ud) {
    if (n == 0 || n > LL_MULTIPART_BOUNDARY_MAX || memchr(boundary, '\r', n) || memchr(boundary, '\n', n))
        return NULL;
    ll_multipart *m = ll_xmalloc(sizeof(*m));
    memset(m, 0, offsetof(ll_multipart, line)); /* all but the buffers */
    if (cb) m->cb = *cb;
    m->ud = ud;
    m->state = MS_PREAMBLE;
    memcpy(m->delim, "\r\n--", 4);
    memcpy(m->delim + 4, boundary, n);
    m->dlen = n + 4;
    m->k = 2; /* the body may start with "--boundary": as if after a CRLF */
    return m;
}

const char *ll_multipart_error(const ll_multipart *m) { return m->state == MS_ERROR ? m->why : NULL; }

size_t ll_multipart_parts(const ll_multipart *m) { return m->parts; }

void ll_multipart_free(ll_multipart *m) { free(m); }
