/* convert_expr.h -- a Lua string expression made of pieces: literal text
 * and code ("vars.base_url", "token"), joined with `..`, so a converter
 * can put a variable inside a recorded URL, header or body without
 * quoting by hand. */
#ifndef LL_CONVERT_EXPR_H
#define LL_CONVERT_EXPR_H

#include <stddef.h>

#include "buf.h"

typedef struct ll_expr {
    ll_buf *b;  /* where the expression is written */
    int nparts; /* pieces written so far */
} ll_expr;

/* Starts an expression written to b. */
void ll_expr_begin(ll_expr *e, ll_buf *b);
/* Literal bytes s[0..n) (nothing when n is 0). */
void ll_expr_lit(ll_expr *e, const char *s, size_t n);
/* A piece of Lua code, an operand of `..` (a name, a call, a field). */
void ll_expr_code(ll_expr *e, const char *code);
/* Ends it: an expression with no pieces is "". */
void ll_expr_end(ll_expr *e);

#endif
