/* convert_req.c -- request calls, form tables and header tables for the
 * converters (see convert_req.h). */
#include "convert_req.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert_emit.h"
#include "xmalloc.h"

void ll_req_pairs_add(ll_req_pairs *p, const char *name, const char *code) {
    ll_xgrow((void **)&p->v, &p->cap, p->n + 1, sizeof(ll_req_pair));
    p->v[p->n].name = ll_xstrdup(name);
    p->v[p->n].code = ll_xstrdup(code);
    p->n++;
}

ll_req_pair *ll_req_pairs_find(ll_req_pairs *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (strcasecmp(p->v[i].name, name) == 0) return &p->v[i];
    return NULL;
}

void ll_req_pairs_free(ll_req_pairs *p) {
    for (int i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].code);
    }
    free(p->v);
    memset(p, 0, sizeof(*p));
}

void ll_req_form(ll_buf *b, int indent, const ll_req_pairs *f) {
    if (f->n == 0) {
        ll_buf_puts(b, "{}");
        return;
    }
    ll_buf_puts(b, "{\n");
    for (int i = 0; i < f->n; i++) {
        int seen = 0, count = 0;
        for (int k = 0; k < f->n; k++) {
            if (strcmp(f->v[k].name, f->v[i].name) != 0) continue;
            seen |= k < i;
            count++;
        }
        if (seen) continue;
        ll_emit_indent(b, indent + 2);
        ll_emit_key(b, f->v[i].name);
        ll_buf_puts(b, count > 1 ? " = { " : " = ");
        for (int k = i, first = 1; k < f->n; k++) {
            if (strcmp(f->v[k].name, f->v[i].name) != 0) continue;
            if (!first) ll_buf_puts(b, ", ");
            ll_buf_puts(b, f->v[k].code);
            first = 0;
        }
        ll_buf_puts(b, count > 1 ? " },\n" : ",\n");
    }
    ll_emit_indent(b, indent);
    ll_buf_puts(b, "}");
}

void ll_req_emit(ll_buf *b, int indent, const char *method, const char *url, const char *body,
                 const ll_req_pairs *headers) {
    static const char *const NAMED[][2] = {{"GET", "get"},       {"HEAD", "head"}, {"POST", "post"},
                                           {"PUT", "put"},       {"PATCH", "patch"}, {"DELETE", "del"},
                                           {"OPTIONS", "options"}};
    const char *fn = NULL;
    for (size_t i = 0; i < sizeof(NAMED) / sizeof(NAMED[0]) && !fn; i++)
        if (strcmp(method, NAMED[i][0]) == 0) fn = NAMED[i][1];
    int bodyless = fn && (strcmp(fn, "get") == 0 || strcmp(fn, "head") == 0);
    ll_emit_indent(b, indent);
    if (fn) {
        ll_buf_printf(b, "res = http.%s(%s", fn, url);
    } else {
        ll_buf_puts(b, "res = http.request(");
        ll_emit_cstr(b, method);
        ll_buf_printf(b, ", %s", url);
    }
    if (!bodyless && (body || headers->n)) ll_buf_printf(b, ", %s", body ? body : "nil");
    if (headers->n) {
        ll_buf_puts(b, ", {\n");
        ll_emit_indent(b, indent + 2);
        ll_buf_puts(b, "headers = {\n");
        for (int i = 0; i < headers->n; i++) {
            ll_emit_indent(b, indent + 4);
            ll_emit_key(b, headers->v[i].name);
            ll_buf_printf(b, " = %s,\n", headers->v[i].code);
        }
        ll_emit_indent(b, indent + 2);
        ll_buf_puts(b, "},\n");
        ll_emit_indent(b, indent);
        ll_buf_puts(b, "}");
    }
    ll_buf_puts(b, ")\n");
}
