/* convert_openapi_op.h -- one OpenAPI operation as a Lua function of the
 * script (convert_openapi_op.c): its parameters as locals, its URL, its
 * body, its headers and the check of its documented status. */
#ifndef LL_CONVERT_OPENAPI_OP_H
#define LL_CONVERT_OPENAPI_OP_H

#include <cJSON.h>

#include "buf.h"
#include "convert_openapi.h"

typedef struct ll_oas_ops {
    ll_oas *a;
    ll_oas_auth *auth;
    ll_buf fns;   /* the functions, one after another */
    ll_buf calls; /* default()'s body */
    char **names; /* the function names given, to keep them unique */
    int count, cap;
    int placeholders; /* values the description gave no example for */
    int made_bodies;  /* bodies made from a schema, not from an example */
    int needs_json;   /* a JSON body (luaload.json) */
    int needs_query;  /* the query() helper */
    int auth_used;    /* an operation uses a security scheme */
} ll_oas_ops;

/* Writes the operation method (lowercase) on path, with the path item
 * item's parameters, into ops. 0, or -1 with ops->a->err. */
int ll_oas_op_emit(ll_oas_ops *ops, const char *path, const char *method, const cJSON *item, const cJSON *op);
void ll_oas_ops_free(ll_oas_ops *ops);

#endif
