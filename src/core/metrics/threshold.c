/* threshold.c -- owns the k6 threshold expression parser ("p(95)<200",
 * "rate < 0.01"), its evaluation, and the parser of metric keys with a
 * sub-metric selector ("http_req_duration{status:200, method:POST}").
 *
 * Both parsers are small hand-written scanners over a NUL-terminated string:
 * no regex, no allocation, never read past the terminator. Every malformed
 * input gets a one-line reason naming what was expected and quoting the
 * offending text (control bytes escaped, long text cut with "..."). */
#include "threshold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

#define AGG_EXPECTED "(expected count, rate, value, avg, min, max, med or p(N))"
#define OP_EXPECTED "(expected <, <=, >, >=, ==, === or !=)"
#define NAME_MAX_LEN 128 /* k6: [a-zA-Z_][a-zA-Z0-9_]{0,127} */
#define QUOTE_MAX 40     /* bytes of input quoted in a message */
#define QUOTE_BUF (QUOTE_MAX * 4 + 4)

/* ---- helpers ------------------------------------------------------------ */

/* Copies s[0..n) into out (QUOTE_BUF bytes) for quoting in a message:
 * control bytes become \xNN so the message stays on one line, and text
 * longer than QUOTE_MAX is cut (not inside a UTF-8 sequence) with "...". */
static const char *quote(char *out, const char *s, size_t n) {
    size_t take = n, o = 0;
    int cut = 0;
    if (take > QUOTE_MAX) {
        take = QUOTE_MAX;
        while (take > 0 && ((unsigned char)s[take] & 0xC0) == 0x80) take--;
        cut = 1;
    }
    for (size_t i = 0; i < take; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_alpha_(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static const char *skip_ws(const char *p) {
    while (is_space(*p)) p++;
    return p;
}

/* Length of s without trailing whitespace. */
static size_t trimmed_len(const char *s) {
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1])) n--;
    return n;
}

/* Scans [+-]digits[.digits][(e|E)[+-]digits] (".5" and "5." allowed) at p.
 * Returns the end, or p when there is no number there. */
static const char *scan_number(const char *p) {
    const char *s = p;
    if (*s == '-' || *s == '+') s++;
    const char *m = s;
    while (is_digit(*s)) s++;
    int digits = s != m;
    if (*s == '.') {
        const char *f = s + 1;
        while (is_digit(*f)) f++;
        if (f != s + 1) digits = 1;
        if (digits) s = f;
    }
    if (!digits) return p;
    if (*s == 'e' || *s == 'E') {
        const char *e = s + 1;
        if (*e == '+' || *e == '-') e++;
        if (is_digit(*e)) {
            while (is_digit(*e)) e++;
            s = e;
        }
    }
    return s;
}

/* Converts the number scanned at [p, end). Returns 0, -1 when strtod does
 * not agree on the extent (e.g. "0x10"), -2 when it is not finite. */
static int to_double(const char *p, const char *end, double *v) {
    char *e;
    double d = strtod(p, &e);
    if (e != end) return -1;
    if (!isfinite(d)) return -2;
    *v = d;
    return 0;
}

/* ---- thresholds --------------------------------------------------------- */

static const struct {
    const char *name;
    ll_agg agg;
} aggs[] = {
    {"count", LL_AGG_COUNT}, {"rate", LL_AGG_RATE}, {"value", LL_AGG_VALUE},
    {"avg", LL_AGG_AVG},     {"min", LL_AGG_MIN},   {"max", LL_AGG_MAX},
    {"med", LL_AGG_MED},
};

static const struct {
    const char *text;
    ll_op op;
} ops[] = {
    {"<", LL_OP_LT},  {"<=", LL_OP_LE},  {">", LL_OP_GT},  {">=", LL_OP_GE},
    {"==", LL_OP_EQ}, {"===", LL_OP_EQ}, {"!=", LL_OP_NE},
};

static int is_op_char(char c) { return c == '<' || c == '>' || c == '=' || c == '!'; }

/* Parses "p(N)" at a (a[0] == 'p', a[1] == '('); sets *pct and *endp. */
static int parse_percentile(const char *a, double *pct, const char **endp, char *err,
                            size_t errlen) {
    char q1[QUOTE_BUF], q2[QUOTE_BUF];
    const char *q = skip_ws(a + 2);
    const char *ne = scan_number(q);
    double v = 0;
    int rc = ne == q ? -1 : to_double(q, ne, &v);
    if (rc == -1) {
        if (*q == ')' || *q == '\0') {
            ll_errmsg(err, errlen, "missing number in '%s' (expected p(N) with N from 0 to 100)",
                    quote(q1, a, (size_t)(q - a) + (*q == ')')));
            return -1;
        }
        const char *c = q;
        while (*c && *c != ')') c++;
        ll_errmsg(err, errlen, "expected a number in p(...), got '%s'", quote(q1, q, (size_t)(c - q)));
        return -1;
    }
    if (rc == -2 || v < 0 || v > 100) {
        ll_errmsg(err, errlen, "percentile %s out of range (expected 0 to 100)",
                quote(q1, q, (size_t)(ne - q)));
        return -1;
    }
    const char *r = skip_ws(ne);
    if (*r != ')') {
        if (*r == '\0')
            ll_errmsg(err, errlen, "missing ')' after '%s'", quote(q1, a, (size_t)(r - a)));
        else
            ll_errmsg(err, errlen, "expected ')' after '%s', got '%s'", quote(q1, a, (size_t)(ne - a)),
                    quote(q2, r, trimmed_len(r)));
        return -1;
    }
    *pct = v;
    *endp = r + 1;
    return 0;
}

int ll_threshold_parse(const char *src, ll_threshold_expr *out, char *err, size_t errlen) {
    char q1[QUOTE_BUF], q2[QUOTE_BUF];
    ll_threshold_expr e = {LL_AGG_COUNT, 0, LL_OP_LT, 0};
    const char *p = skip_ws(src ? src : "");
    if (*p == '\0') {
        ll_errmsg(err, errlen, "empty threshold");
        return -1;
    }

    /* aggregation */
    const char *a = p;
    if (a[0] == 'p' && a[1] == '(') {
        if (parse_percentile(a, &e.percentile, &p, err, errlen) != 0) return -1;
        e.agg = LL_AGG_PERCENTILE;
    } else {
        const char *t = a;
        while (*t && !is_space(*t) && !is_op_char(*t)) t++;
        size_t alen = (size_t)(t - a);
        if (alen == 0) {
            ll_errmsg(err, errlen, "missing aggregation before '%s' " AGG_EXPECTED,
                    quote(q1, a, trimmed_len(a)));
            return -1;
        }
        size_t i, n = sizeof(aggs) / sizeof(aggs[0]);
        for (i = 0; i < n; i++)
            if (strlen(aggs[i].name) == alen && memcmp(aggs[i].name, a, alen) == 0) break;
        if (i == n) {
            ll_errmsg(err, errlen, "unknown aggregation '%s' " AGG_EXPECTED, quote(q1, a, alen));
            return -1;
        }
        e.agg = aggs[i].agg;
        p = t;
    }
    size_t agg_len = (size_t)(p - a);

    /* operator */
    p = skip_ws(p);
    const char *o = p;
    while (is_op_char(*p)) p++;
    size_t olen = (size_t)(p - o);
    if (olen == 0) {
        if (*o == '\0')
            ll_errmsg(err, errlen, "missing operator after '%s' " OP_EXPECTED, quote(q1, a, agg_len));
        else
            ll_errmsg(err, errlen, "missing operator after '%s' " OP_EXPECTED ", got '%s'",
                    quote(q1, a, agg_len), quote(q2, o, trimmed_len(o)));
        return -1;
    }
    size_t i, n = sizeof(ops) / sizeof(ops[0]);
    for (i = 0; i < n; i++)
        if (strlen(ops[i].text) == olen && memcmp(ops[i].text, o, olen) == 0) break;
    if (i == n) {
        ll_errmsg(err, errlen, "unknown operator '%s' after '%s' " OP_EXPECTED, quote(q1, o, olen),
                quote(q2, a, agg_len));
        return -1;
    }
    e.op = ops[i].op;

    /* number */
    p = skip_ws(p);
    if (*p == '\0') {
        ll_errmsg(err, errlen, "missing number after '%s'", quote(q1, o, olen));
        return -1;
    }
    const char *ne = scan_number(p);
    int rc = ne == p ? -1 : to_double(p, ne, &e.target);
    if (rc == -1) {
        ll_errmsg(err, errlen, "expected a number after '%s', got '%s'", quote(q1, o, olen),
                quote(q2, p, trimmed_len(p)));
        return -1;
    }
    if (rc == -2) {
        ll_errmsg(err, errlen, "number '%s' out of range", quote(q1, p, (size_t)(ne - p)));
        return -1;
    }
    p = skip_ws(ne);
    if (*p != '\0') {
        ll_errmsg(err, errlen, "unexpected '%s' after the number", quote(q1, p, trimmed_len(p)));
        return -1;
    }
    if (out) *out = e;
    return 0;
}

int ll_threshold_holds(const ll_threshold_expr *e, double value) {
    switch (e->op) {
    case LL_OP_LT: return value < e->target;
    case LL_OP_LE: return value <= e->target;
    case LL_OP_GT: return value > e->target;
    case LL_OP_GE: return value >= e->target;
    case LL_OP_EQ: return value == e->target;
    case LL_OP_NE: return value != e->target;
    }
    return 0;
}

const char *ll_threshold_agg_name(const ll_threshold_expr *e, char *buf, size_t len) {
    switch (e->agg) {
    case LL_AGG_COUNT: return "count";
    case LL_AGG_RATE: return "rate";
    case LL_AGG_VALUE: return "value";
    case LL_AGG_AVG: return "avg";
    case LL_AGG_MIN: return "min";
    case LL_AGG_MAX: return "max";
    case LL_AGG_MED: return "med";
    case LL_AGG_PERCENTILE:
        if (!buf || len == 0) return "p(N)";
        snprintf(buf, len, "p(%g)", e->percentile);
        return buf;
    }
    return "?";
}

/* ---- metric keys -------------------------------------------------------- */

/* Output area: pieces are appended NUL-terminated while it fits; need keeps
 * counting past the end so the error can say how much was needed. */
typedef struct {
    char *buf;
    size_t cap, need;
} outbuf;

static const char *ob_put(outbuf *ob, const char *s, size_t n) {
    size_t at = ob->need;
    ob->need += n + 1;
    if (!ob->buf || ob->need > ob->cap) return NULL;
    memcpy(ob->buf + at, s, n);
    ob->buf[at + n] = '\0';
    return ob->buf + at;
}

/* Reads a tag key or value at *pp: a quoted string ('..' or "..", quotes
 * stripped, anything inside kept) or the raw text up to a byte of stop,
 * trimmed. Leaves *pp after it (after the whitespace following a quoted
 * one). Returns 0, or -1 with *pp at the opening quote when it is not
 * closed. */
static int read_tok(const char **pp, const char *stop, const char **s, size_t *n, int *quoted) {
    const char *p = skip_ws(*pp);
    if (*p == '\'' || *p == '"') {
        const char *e = strchr(p + 1, *p);
        if (!e) {
            *pp = p;
            return -1;
        }
        *s = p + 1;
        *n = (size_t)(e - p - 1);
        *quoted = 1;
        *pp = skip_ws(e + 1);
        return 0;
    }
    const char *b = p;
    while (*p && !strchr(stop, *p)) p++;
    const char *e = p;
    while (e > b && is_space(e[-1])) e--;
    *s = b;
    *n = (size_t)(e - b);
    *quoted = 0;
    *pp = p;
    return 0;
}

int ll_threshold_metric_key_parse(const char *key, char *buf, size_t buflen, const char **name,
                        const char **keys, const char **values, int max_tags, char *err,
                        size_t errlen) {
    char q1[QUOTE_BUF], q2[QUOTE_BUF], q3[QUOTE_BUF];
    outbuf ob = {buf, buf ? buflen : 0, 0};
    const char *k = key ? key : "";
    size_t klen_all = trimmed_len(k);
    const char *p = skip_ws(k);

    /* metric name */
    const char *nb = p;
    while (*p && !is_space(*p) && *p != '{') p++;
    size_t nlen = (size_t)(p - nb);
    if (nlen == 0) {
        if (*p == '\0')
            ll_errmsg(err, errlen, "empty metric name");
        else
            ll_errmsg(err, errlen, "empty metric name in '%s'", quote(q1, k, klen_all));
        return -1;
    }
    for (size_t i = 0; i < nlen; i++) {
        char c = nb[i];
        if (!(is_alpha_(c) || (i > 0 && is_digit(c)))) {
            if ((unsigned char)c >= 0x80) /* one byte of a UTF-8 sequence */
                snprintf(q1, sizeof(q1), "\\x%02x", (unsigned char)c);
            else
                quote(q1, nb + i, 1);
            ll_errmsg(err, errlen,
                    "invalid character '%s' in metric name '%s' (expected letters, digits and '_', "
                    "not starting with a digit)",
                    q1, quote(q2, nb, nlen));
            return -1;
        }
    }
    if (nlen > NAME_MAX_LEN) {
        ll_errmsg(err, errlen, "metric name '%s' too long (%zu characters, at most %d)",
                quote(q1, nb, nlen), nlen, NAME_MAX_LEN);
        return -1;
    }
    const char *nm = ob_put(&ob, nb, nlen);
    int count = 0;

    p = skip_ws(p);
    if (*p != '\0') {
        if (*p != '{') {
            ll_errmsg(err, errlen, "unexpected '%s' after metric name '%s' (expected '{' or the end)",
                    quote(q1, p, trimmed_len(p)), quote(q2, nb, nlen));
            return -1;
        }
        const char *sel = p++;
        if (*skip_ws(p) == '}') {
            ll_errmsg(err, errlen, "empty selector '{}' in '%s' (expected {key:value, ...})",
                    quote(q1, k, klen_all));
            return -1;
        }
        for (;;) {
            const char *ks, *vs;
            size_t kn, vn;
            int kq, vq;
            const char *pair = skip_ws(p);
            if (*pair == '\0') goto missing_brace;
            if (*pair == ',' || *pair == '}') {
                ll_errmsg(err, errlen, "empty key:value pair in selector '%s'",
                        quote(q1, sel, trimmed_len(sel)));
                return -1;
            }
            p = pair;
            if (read_tok(&p, ":,}", &ks, &kn, &kq) != 0) goto unterminated;
            if (*p != ':') {
                if (*p == '\0') goto missing_brace;
                if (kq && *p != ',' && *p != '}') {
                    ll_errmsg(err, errlen, "unexpected '%s' after quoted tag key '%s' (expected ':')",
                            quote(q1, p, trimmed_len(p)), quote(q2, ks, kn));
                    return -1;
                }
                ll_errmsg(err, errlen, "tag '%s' has no ':' (expected key:value)",
                        quote(q1, pair, (size_t)(p - pair)));
                return -1;
            }
            if (kn == 0) {
                const char *c = p;
                while (*c && *c != ',' && *c != '}') c++;
                ll_errmsg(err, errlen, "empty tag key in '%s'", quote(q1, pair, (size_t)(c - pair)));
                return -1;
            }
            p++; /* ':' */
            if (read_tok(&p, ",}", &vs, &vn, &vq) != 0) goto unterminated;
            if (vq && *p && *p != ',' && *p != '}') {
                ll_errmsg(err, errlen,
                        "unexpected '%s' after quoted value '%s' of tag '%s' (expected ',' or '}')",
                        quote(q1, p, trimmed_len(p)), quote(q2, vs, vn), quote(q3, ks, kn));
                return -1;
            }
            if (*p == '\0') goto missing_brace;
            if (vn == 0 && !vq) {
                ll_errmsg(err, errlen, "empty value for tag '%s' (write '' to match an empty value)",
                        quote(q1, ks, kn));
                return -1;
            }
            if (count >= max_tags) {
                ll_errmsg(err, errlen, "more than %d tag%s in selector '%s'", max_tags < 0 ? 0 : max_tags,
                        max_tags == 1 ? "" : "s", quote(q1, sel, trimmed_len(sel)));
                return -1;
            }
            const char *kk = ob_put(&ob, ks, kn);
            const char *vv = ob_put(&ob, vs, vn);
            if (kk && vv) {
                if (keys) keys[count] = kk;
                if (values) values[count] = vv;
            }
            count++;
            if (*p++ == '}') break;
        }
        p = skip_ws(p);
        if (*p != '\0') {
            ll_errmsg(err, errlen, "unexpected '%s' after '}'", quote(q1, p, trimmed_len(p)));
            return -1;
        }
    }

    if (ob.need > ob.cap) {
        ll_errmsg(err, errlen, "buffer too small for metric key '%s' (need %zu bytes, have %zu)",
                quote(q1, k, klen_all), ob.need, ob.cap);
        return -1;
    }
    if (name) *name = nm;
    return count;

missing_brace:
    ll_errmsg(err, errlen, "missing '}' at the end of '%s'", quote(q1, k, klen_all));
    return -1;
unterminated:
    ll_errmsg(err, errlen, "unterminated quote %s in '%s'", *p == '"' ? "(\")" : "(')",
            quote(q1, k, klen_all));
    return -1;
}
