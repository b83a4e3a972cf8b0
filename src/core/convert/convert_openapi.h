/* convert_openapi.h -- what the OpenAPI converter's files share: the
 * document being converted, $ref resolution within it, and example
 * values made from schemas and parameters (convert_openapi_schema.c).
 * convert_openapi.c writes the script; convert_openapi_auth.c the
 * credentials of the security schemes. */
#ifndef LL_CONVERT_OPENAPI_H
#define LL_CONVERT_OPENAPI_H

#include <cJSON.h>
#include <stddef.h>

#include "buf.h"

typedef struct ll_oas {
    const cJSON *doc;
    const char *input; /* the file, for messages */
    int swagger;       /* Swagger 2.0 (definitions, in: body/formData) */
    char where[512];   /* the operation being converted ("GET /pet/{petId} (getPetById)"), or "" */
    char *err;
    size_t errlen;
    int failed; /* err holds a message */
} ll_oas;

/* node, or what its "$ref" (a chain of them) points at in the document;
 * NULL with the message "FILE: WHERE: $ref '#/...' points nowhere" in
 * a->err when one dangles, is external or loops. node may be NULL. */
const cJSON *ll_oas_schema_deref(ll_oas *a, const cJSON *node);

/* An example of schema as a new cJSON tree: its example, default, const
 * or first enum value, else one built from its type and properties
 * ($refs followed, allOf merged, the first of oneOf/anyOf, arrays of one
 * item, strings from their format, readOnly properties left out, a cycle
 * cut short). NULL when a->failed (a $ref dangles). */
cJSON *ll_oas_schema_example(ll_oas *a, const cJSON *schema);

/* A parameter's (or a media type's) own example: "example", else the
 * first of "examples" (its "value" in OpenAPI 3), else NULL. A new tree;
 * NULL also when a->failed. */
cJSON *ll_oas_schema_own_example(ll_oas *a, const cJSON *holder);

/* The type a schema names ("string", "integer", ...; OpenAPI 3.1's list
 * of types gives its first one that is not "null"), else guessed from
 * its keys ("object" with properties, "array" with items), else NULL. */
const char *ll_oas_schema_type(const cJSON *schema);

/* A string member of obj, or NULL. */
const char *ll_oas_schema_str(const cJSON *obj, const char *key);

/* The security schemes' credentials (convert_openapi_auth.c). */
typedef struct ll_oas_auth ll_oas_auth;

/* The schemes of the document (components.securitySchemes, Swagger's
 * securityDefinitions) that are used, each read from __ENV. NULL with
 * a->failed on a dangling $ref. */
ll_oas_auth *ll_oas_auth_new(ll_oas *a);
void ll_oas_auth_free(ll_oas_auth *au);
/* The "local auth = {...}" block and the header comment's lines (what to
 * set in the environment); nothing when no scheme is used. */
void ll_oas_auth_emit_table(const ll_oas_auth *au, ll_buf *b);
void ll_oas_auth_emit_env_note(const ll_oas_auth *au, ll_buf *b);
/* Whether a scheme in use needs luaload.encoding (HTTP basic). */
int ll_oas_auth_needs_encoding(const ll_oas_auth *au);
/* For an operation: its security (op.security, else the document's), the
 * first requirement's schemes as header entries ("    Authorization =
 * ...,\n" at indent) into hdr, query pairs into query, cookie parts into
 * cookie ("name=" .. value, joined by the caller). */
void ll_oas_auth_apply(const ll_oas_auth *au, const cJSON *op, ll_buf *hdr, ll_buf *query, ll_buf *cookie, int indent);

#endif
