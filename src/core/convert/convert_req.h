/* convert_req.h -- the request lines the HAR and Postman converters share:
 * an http.get/post/... call with its headers, a form table, a status
 * check. The converters render each value as Lua code first (a literal,
 * or pieces joined by convert_expr.h) and hand the code over. */
#ifndef LL_CONVERT_REQ_H
#define LL_CONVERT_REQ_H

#include <stddef.h>

#include "buf.h"

/* A name and the Lua code of its value (a header, a form field). */
typedef struct ll_req_pair {
    char *name;
    char *code;
} ll_req_pair;

typedef struct ll_req_pairs {
    ll_req_pair *v;
    int n, cap;
} ll_req_pairs;

void ll_req_pairs_add(ll_req_pairs *p, const char *name, const char *code);
/* The value of name (ASCII case ignored), or NULL. */
ll_req_pair *ll_req_pairs_find(ll_req_pairs *p, const char *name);
void ll_req_pairs_free(ll_req_pairs *p);

/* `res = http.get(url, { headers = { ... } })` and its kin at indent:
 * GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS by their functions,
 * other methods with http.request. body is Lua code or NULL (written as
 * it is: a multi-line body is indented for indent already). */
void ll_req_emit(ll_buf *b, int indent, const char *method, const char *url, const char *body,
                 const ll_req_pairs *headers);
/* A table of form fields, `{ a = "1", b = { "x", "y" } }` (a repeated
 * name becomes a list, in order of first appearance), its lines indented
 * for indent. */
void ll_req_form(ll_buf *b, int indent, const ll_req_pairs *fields);

#endif
