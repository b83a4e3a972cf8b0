/* convert_emit.c -- Lua literals and identifiers for the converters (see
 * convert_emit.h). */
#include "convert_emit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RESERVED[] = {"and",   "break", "do",  "else", "elseif", "end",    "false",
                                       "for",   "function", "goto", "if", "in",   "local",  "nil",
                                       "not",   "or",    "repeat", "return", "then", "true", "until", "while"};

static int is_reserved(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof(RESERVED) / sizeof(RESERVED[0]); i++)
        if (strlen(RESERVED[i]) == n && memcmp(RESERVED[i], s, n) == 0) return 1;
    return 0;
}

static int ident_start(unsigned char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int ident_char(unsigned char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (k == 0 || k > n) return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return k;
}

void ll_emit_str(ll_buf *b, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    ll_buf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        size_t k;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            ll_buf_append(b, e, 2);
        } else if (c == '\n') {
            ll_buf_puts(b, "\\n");
        } else if (c == '\r') {
            ll_buf_puts(b, "\\r");
        } else if (c == '\t') {
            ll_buf_puts(b, "\\t");
        } else if (c >= 0x20 && c < 0x7f) {
            ll_buf_append(b, &u[i], 1);
        } else if (c >= 0x80 && (k = utf8_len(&u[i], n - i)) > 0) {
            ll_buf_append(b, &u[i], k);
            i += k - 1;
        } else {
            /* three digits always, so a digit after it cannot join it */
            ll_buf_printf(b, "\\%03u", c);
        }
    }
    ll_buf_puts(b, "\"");
}

void ll_emit_cstr(ll_buf *b, const char *s) {
    if (!s) ll_buf_puts(b, "nil");
    else ll_emit_str(b, s, strlen(s));
}

int ll_emit_is_ident(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || !ident_start((unsigned char)s[0])) return 0;
    for (size_t i = 1; i < n; i++)
        if (!ident_char((unsigned char)s[i])) return 0;
    return !is_reserved(s, n);
}

char *ll_emit_ident(char *dst, size_t len, const char *s) {
    size_t o = 0;
    int gap = 0;
    if (!ident_start((unsigned char)s[0])) dst[o++] = '_';
    for (const char *p = s; *p && o + 2 < len; p++) {
        if (ident_char((unsigned char)*p)) {
            if (gap && o > 0 && dst[o - 1] != '_') dst[o++] = '_';
            if (o + 2 >= len) break;
            dst[o++] = *p;
            gap = 0;
        } else {
            gap = 1;
        }
    }
    if (gap && o > 1 && o + 2 < len && dst[o - 1] != '_') dst[o++] = '_';
    if (o == 0) dst[o++] = '_';
    dst[o] = 0;
    if (is_reserved(dst, o) && o + 2 < len) {
        dst[o++] = '_';
        dst[o] = 0;
    }
    return dst;
}

void ll_emit_indent(ll_buf *b, int n) {
    for (int i = 0; i < n; i++) ll_buf_puts(b, " ");
}

void ll_emit_comment(ll_buf *b, int indent, const char *text) {
    const char *p = text;
    for (;;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        ll_emit_indent(b, indent);
        ll_buf_puts(b, n ? "-- " : "--");
        ll_buf_append(b, p, n);
        ll_buf_puts(b, "\n");
        if (!nl) break;
        p = nl + 1;
    }
}

int ll_emit_has_null(const cJSON *v) {
    if (cJSON_IsNull(v)) return 1;
    for (const cJSON *c = (cJSON_IsArray(v) || cJSON_IsObject(v)) ? v->child : NULL; c; c = c->next)
        if (ll_emit_has_null(c)) return 1;
    return 0;
}

static void emit_number(ll_buf *b, double d) {
    if (isnan(d) || isinf(d)) ll_buf_puts(b, "0/0");
    else if (d == floor(d) && fabs(d) < 1e15) ll_buf_printf(b, "%.0f", d);
    else {
        /* the shortest of 15, 16, 17 digits that reads back as d */
        char num[32];
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(num, sizeof(num), "%.*g", prec, d);
            if (strtod(num, NULL) == d) break;
        }
        ll_buf_puts(b, num);
    }
}

/* Whether v is a scalar, or an array or object of at most 4 scalars: such
 * a value goes on one line. */
static int is_short(const cJSON *v) {
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v)) return 1;
    int n = 0;
    for (const cJSON *c = v->child; c; c = c->next)
        if (++n > 4 || cJSON_IsArray(c) || cJSON_IsObject(c) || (cJSON_IsString(c) && strlen(c->valuestring) > 24))
            return 0;
    return 1;
}

void ll_emit_key(ll_buf *b, const char *k) {
    if (ll_emit_is_ident(k)) {
        ll_buf_puts(b, k);
    } else {
        ll_buf_puts(b, "[");
        ll_emit_cstr(b, k);
        ll_buf_puts(b, "]");
    }
}

static void emit_key(ll_buf *b, const char *k) {
    ll_emit_key(b, k);
    ll_buf_puts(b, " = ");
}

void ll_emit_value(ll_buf *b, const cJSON *v, int indent) {
    if (cJSON_IsNull(v)) {
        ll_buf_puts(b, "json.null");
    } else if (cJSON_IsBool(v)) {
        ll_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNumber(v)) {
        emit_number(b, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        ll_emit_cstr(b, v->valuestring);
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int obj = cJSON_IsObject(v);
        if (!v->child) {
            ll_buf_puts(b, "{}");
            return;
        }
        int one_line = is_short(v);
        ll_buf_puts(b, one_line ? "{ " : "{\n");
        for (const cJSON *c = v->child; c; c = c->next) {
            if (!one_line) ll_emit_indent(b, indent + 2);
            if (obj) emit_key(b, c->string ? c->string : "");
            ll_emit_value(b, c, indent + 2);
            if (c->next) ll_buf_puts(b, one_line ? ", " : ",\n");
            else if (!one_line) ll_buf_puts(b, ",\n");
        }
        if (one_line) {
            ll_buf_puts(b, " }");
        } else {
            ll_emit_indent(b, indent);
            ll_buf_puts(b, "}");
        }
    } else {
        ll_buf_puts(b, "nil");
    }
}
