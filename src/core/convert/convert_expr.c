/* convert_expr.c -- Lua string expressions joined with `..` (see
 * convert_expr.h). Adjacent literal pieces are not merged: a converter
 * hands each run of text once. */
#include "convert_expr.h"

#include "convert_emit.h"

void ll_expr_begin(ll_expr *e, ll_buf *b) {
    e->b = b;
    e->nparts = 0;
}

static void ll_expr_join(ll_expr *e) {
    if (e->nparts++) ll_buf_puts(e->b, " .. ");
}

void ll_expr_lit(ll_expr *e, const char *s, size_t n) {
    if (n == 0) return;
    ll_expr_join(e);
    ll_emit_str(e->b, s, n);
}

void ll_expr_code(ll_expr *e, const char *code) {
    ll_expr_join(e);
    ll_buf_puts(e->b, code);
}

void ll_expr_end(ll_expr *e) {
    if (e->nparts == 0) ll_buf_puts(e->b, "\"\"");
}
