/* html_css.c -- CSS selectors to XPath 1.0 for luaload.html: type and *,
 * #id, .class, [attr], [attr=v] and the ^= $= *= ~= |= forms (v an
 * identifier or a '...' or "..." string), compounds of those, the
 * descendant, child (>), adjacent (+) and sibling (~) combinators, and
 * groups (a, b). Matching goes right to left, as CSS does: the last
 * compound is the step along the caller's axis, the others predicates up
 * the tree ("form .row > input" is
 * descendant::input[parent::*[...row...][ancestor::form]]). Type and
 * attribute names are lowercased, as the HTML parser stores them. */
#include "html_css.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compounds in one complex selector: bounds the predicates' nesting. */
#define HTML_CSS_MAX_COMPOUNDS 32

typedef struct {
    const char *s;
    size_t len, pos;
    const char *axis;
    char *out; /* the XPath so far */
    size_t n, cap;
    char *name, *value; /* scratch: an identifier or a string, unescaped */
    int oom;
    char *err;
    size_t errlen;
    int failed;
} html_css_parser;

static void html_css_put(html_css_parser *p, const char *s, size_t n) {
    if (p->oom) return;
    if (p->n + n + 1 > p->cap) {
        size_t cap = (p->n + n + 1) * 2;
        char *out = realloc(p->out, cap);
        if (!out) {
            p->oom = 1;
            return;
        }
        p->out = out;
        p->cap = cap;
    }
    memcpy(p->out + p->n, s, n);
    p->n += n;
    p->out[p->n] = '\0';
}

static void html_css_puts(html_css_parser *p, const char *s) { html_css_put(p, s, strlen(s)); }

/* Records the first error, at byte pos (shown 1-based); returns -1. */
__attribute__((format(printf, 3, 4))) static int html_css_fail(html_css_parser *p, size_t pos, const char *fmt, ...) {
    if (p->failed) return -1;
    p->failed = 1;
    char msg[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s at %zu", msg, pos + 1);
    return -1;
}

static int html_css_peek(const html_css_parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static int html_css_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

static int html_css_identc(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c >= 0x80 || c == '\\';
}

static int html_css_hex(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static void html_css_skip_space(html_css_parser *p) {
    while (html_css_space(html_css_peek(p))) p->pos++;
}

/* An error naming the byte at pos: end, ':' (no pseudo-classes) or other. */
static int html_css_unexpected(html_css_parser *p) {
    int c = html_css_peek(p);
    if (c < 0) return html_css_fail(p, p->pos, "unexpected end");
    if (c == ':') return html_css_fail(p, p->pos, "unsupported pseudo-class");
    if (c > ' ' && c < 0x7f) return html_css_fail(p, p->pos, "unexpected '%c'", c);
    return html_css_fail(p, p->pos, "unexpected byte 0x%02x", (unsigned)c);
}

/* Reads the escape \c at pos into dst[*n]: the character itself (hex
 * escapes are not supported). */
static int html_css_escape(html_css_parser *p, char *dst, size_t *n) {
    p->pos++;
    int c = html_css_peek(p);
    if (c < 0) return html_css_fail(p, p->pos, "expected a character after '\\'");
    if (c < ' ' || html_css_hex(c)) return html_css_fail(p, p->pos - 1, "unsupported escape");
    dst[(*n)++] = (char)c;
    p->pos++;
    return 0;
}

/* Reads an identifier (maybe empty) into dst, *n bytes. */
static int html_css_ident(html_css_parser *p, char *dst, size_t *n) {
    *n = 0;
    while (html_css_identc(html_css_peek(p))) {
        if (p->s[p->pos] == '\\') {
            if (html_css_escape(p, dst, n) < 0) return -1;
            continue;
        }
        dst[(*n)++] = p->s[p->pos++];
    }
    return 0;
}

/* Reads the string '...' or "..." at pos into dst, *n bytes. */
static int html_css_string(html_css_parser *p, char *dst, size_t *n) {
    int q = p->s[p->pos++];
    *n = 0;
    for (;;) {
        int c = html_css_peek(p);
        if (c < 0) return html_css_fail(p, p->pos, q == '"' ? "expected '\"'" : "expected \"'\"");
        if (c == q) break;
        if (c < ' ' && c != '\t' && c != '\n' && c != '\r') return html_css_unexpected(p); /* not XML */
        if (c == '\\') {
            if (html_css_escape(p, dst, n) < 0) return -1;
            continue;
        }
        dst[(*n)++] = (char)c;
        p->pos++;
    }
    p->pos++;
    return 0;
}

/* Puts s as an XPath string literal: '...' or "...", or a concat() of both
 * kinds when s holds both quotes (XPath 1.0 has no escapes). */
static void html_css_literal(html_css_parser *p, const char *s, size_t n) {
    const char *q = !memchr(s, '\'', n) ? "'" : !memchr(s, '"', n) ? "\"" : NULL;
    if (q) {
        html_css_puts(p, q);
        html_css_put(p, s, n);
        html_css_puts(p, q);
        return;
    }
    html_css_puts(p, "concat(''");
    for (size_t i = 0; i < n;) {
        const char *quote = memchr(s + i, '\'', n - i);
        size_t run = s[i] == '\'' ? 1 : quote ? (size_t)(quote - (s + i)) : n - i;
        html_css_puts(p, s[i] == '\'' ? ", \"" : ", '");
        html_css_put(p, s + i, run);
        html_css_puts(p, s[i] == '\'' ? "\"" : "'");
        i += run;
    }
    html_css_puts(p, ")");
}

/* Puts the node test for name, lowercased in place after prefix ("" for
 * elements, "@" for attributes): the name itself when it is a plain XPath
 * name, else *[name()='...']. */
static void html_css_name_test(html_css_parser *p, const char *prefix, char *name, size_t n) {
    int plain = n > 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int letter = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
        if (c >= 'A' && c <= 'Z') name[i] = (char)(c + 32);
        plain = plain && (letter || (i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '_')));
    }
    html_css_puts(p, prefix);
    if (plain) {
        html_css_put(p, name, n);
        return;
    }
    html_css_puts(p, "*[name()=");
    html_css_literal(p, name, n);
    html_css_puts(p, "]");
}

/* Puts the predicate of the attribute selector at pos ('['). */
static int html_css_attrib(html_css_parser *p) {
    size_t n, vn = 0;
    p->pos++;
    html_css_skip_space(p);
    if (html_css_peek(p) < 0) return html_css_fail(p, p->pos, "expected ']'");
    if (html_css_ident(p, p->name, &n) < 0) return -1;
    if (n == 0) return html_css_fail(p, p->pos, "expected an attribute name");
    html_css_skip_space(p);
    int op = html_css_peek(p);
    if (op == '=') {
        p->pos++;
    } else if (op > 0 && strchr("^$*~|", op) && p->pos + 1 < p->len && p->s[p->pos + 1] == '=') {
        p->pos += 2;
    } else {
        op = 0;
    }
    char *v = p->value + 1; /* room for the spaces of ~= and the '-' of |= */
    if (op) {
        html_css_skip_space(p);
        int c = html_css_peek(p);
        int quoted = c == '"' || c == '\'';
        if ((quoted ? html_css_string(p, v, &vn) : html_css_ident(p, v, &vn)) < 0) return -1;
        if (!quoted && vn == 0) return html_css_fail(p, p->pos, "expected a value");
        html_css_skip_space(p);
    }
    if (html_css_peek(p) != ']') return html_css_fail(p, p->pos, "expected ']'");
    p->pos++;

    int spaced = 0;
    for (size_t i = 0; i < vn; i++) spaced = spaced || html_css_space((unsigned char)v[i]);
    int none = op && op != '=' && (vn == 0 || (op == '~' && spaced));
    if (none) { /* CSS: an empty value (or a ~= value with spaces) matches nothing */
        html_css_puts(p, "[false()]");
        return 0;
    }
    html_css_puts(p, "[");
    switch (op) {
    case 0: html_css_name_test(p, "@", p->name, n); break;
    case '=':
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, "=");
        html_css_literal(p, v, vn);
        break;
    case '^':
    case '*':
        html_css_puts(p, op == '^' ? "starts-with(" : "contains(");
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, ", ");
        html_css_literal(p, v, vn);
        html_css_puts(p, ")");
        break;
    case '$':
        html_css_puts(p, "substring(");
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, ", string-length(");
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, ") - string-length(");
        html_css_literal(p, v, vn);
        html_css_puts(p, ") + 1)=");
        html_css_literal(p, v, vn);
        break;
    case '~':
        html_css_puts(p, "contains(concat(' ', normalize-space(");
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, "), ' '), ");
        v[-1] = v[vn] = ' ';
        html_css_literal(p, v - 1, vn + 2);
        html_css_puts(p, ")");
        break;
    default: /* '|': v, or v followed by '-' */
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, "=");
        html_css_literal(p, v, vn);
        html_css_puts(p, " or starts-with(");
        html_css_name_test(p, "@", p->name, n);
        html_css_puts(p, ", ");
        v[vn] = '-';
        html_css_literal(p, v, vn + 1);
        html_css_puts(p, ")");
    }
    html_css_puts(p, "]");
    return 0;
}

/* Puts the step of the compound selector at pos: axis::test, or, for the
 * adjacent combinator, preceding-sibling::*[1][self::test]; then one
 * predicate per #id, .class and [attr]. */
static int html_css_compound(html_css_parser *p, const char *axis, int adjacent) {
    size_t start = p->pos, n;
    int c = html_css_peek(p);
    html_css_puts(p, axis);
    html_css_puts(p, adjacent ? "::*[1]" : "::");
    if (c == '*') {
        p->pos++;
        if (!adjacent) html_css_puts(p, "*");
    } else if (c >= 0 && html_css_identc(c)) {
        if (html_css_ident(p, p->name, &n) < 0) return -1;
        if (adjacent) html_css_puts(p, "[self::");
        html_css_name_test(p, "", p->name, n);
        if (adjacent) html_css_puts(p, "]");
    } else if (!adjacent) {
        html_css_puts(p, "*");
    }
    for (c = html_css_peek(p); c == '#' || c == '.' || c == '['; c = html_css_peek(p)) {
        if (c == '[') {
            if (html_css_attrib(p) < 0) return -1;
            continue;
        }
        p->pos++;
        if (html_css_ident(p, p->value + 1, &n) < 0) return -1;
        if (n == 0) return html_css_fail(p, p->pos, c == '#' ? "expected an id" : "expected a class name");
        if (c == '#') {
            html_css_puts(p, "[@id=");
            html_css_literal(p, p->value + 1, n);
        } else {
            html_css_puts(p, "[contains(concat(' ', normalize-space(@class), ' '), ");
            p->value[0] = p->value[n + 1] = ' ';
            html_css_literal(p, p->value, n + 2);
            html_css_puts(p, ")");
        }
        html_css_puts(p, "]");
    }
    if (p->pos > start) return 0;
    if (c < 0 || c == ',' || c == '>' || c == '+' || c == '~' || html_css_space(c))
        return html_css_fail(p, p->pos, "expected a selector");
    return html_css_unexpected(p);
}

/* Puts one complex selector (compounds joined by combinators), read twice:
 * once to check it and find its compounds, then from the last compound to
 * the first, each in a predicate of the one after it. */
static int html_css_complex(html_css_parser *p) {
    size_t start[HTML_CSS_MAX_COMPOUNDS], mark = p->n;
    char comb[HTML_CSS_MAX_COMPOUNDS];
    int k = 0;
    for (;;) {
        if (k == HTML_CSS_MAX_COMPOUNDS)
            return html_css_fail(p, p->pos, "more than %d compound selectors", HTML_CSS_MAX_COMPOUNDS);
        start[k] = p->pos;
        if (html_css_compound(p, "self", 0) < 0) return -1;
        size_t end = p->pos;
        html_css_skip_space(p);
        int c = html_css_peek(p);
        if (c < 0 || c == ',') break;
        if (c == '>' || c == '+' || c == '~') {
            comb[k++] = (char)c;
            p->pos++;
            html_css_skip_space(p);
        } else if (p->pos > end) {
            comb[k++] = ' ';
        } else {
            return html_css_unexpected(p);
        }
    }
    size_t end = p->pos;
    p->n = mark;
    for (int i = k; i >= 0; i--) {
        p->pos = start[i];
        if (i == k) html_css_compound(p, p->axis, 0);
        else if (comb[i] == ' ') html_css_compound(p, "ancestor", 0);
        else if (comb[i] == '>') html_css_compound(p, "parent", 0);
        else html_css_compound(p, "preceding-sibling", comb[i] == '+');
        if (i > 0) html_css_puts(p, "[");
    }
    for (int i = 0; i < k; i++) html_css_puts(p, "]");
    p->pos = end;
    return 0;
}

char *ll_html_css_xpath(const char *css, size_t len, const char *axis, char *err, size_t errlen) {
    html_css_parser p = {.s = css, .len = len, .axis = axis, .err = err, .errlen = errlen};
    p.name = malloc(2 * len + 6);
    p.value = p.name ? p.name + len + 1 : NULL;
    p.oom = !p.name;
    while (!p.oom) {
        html_css_skip_space(&p);
        if (html_css_complex(&p) < 0 || html_css_peek(&p) < 0) break;
        p.pos++; /* ',' */
        html_css_puts(&p, " | ");
    }
    free(p.name);
    if (p.oom && !p.failed) snprintf(err, errlen, "out of memory");
    if (p.oom || p.failed) {
        free(p.out);
        return NULL;
    }
    return p.out;
}
