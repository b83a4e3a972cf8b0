/* convert_openapi_schema.c -- $ref resolution within an OpenAPI or
 * Swagger document and the example values the converter writes for
 * parameters and request bodies (see convert_openapi.h).
 *
 * Owns: JSON pointers, the cycle guard and schema-to-example rules. */
#include "convert_openapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 24 /* schemas nested deeper are cut short */

const char *ll_oas_schema_str(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void fail_ref(ll_oas *a, const char *ref, const char *why) {
    if (a->failed) return;
    a->failed = 1;
    snprintf(a->err, a->errlen, "%s: %s%s$ref '%s' %s", a->input, a->where, a->where[0] ? ": " : "", ref, why);
}

/* The node at the JSON pointer p (after "#") in doc, or NULL. */
static const cJSON *pointer(const cJSON *doc, const char *p) {
    const cJSON *n = doc;
    while (*p == '/' && n) {
        char tok[256];
        size_t o = 0;
        for (p++; *p && *p != '/' && o + 1 < sizeof(tok); p++) {
            char c = *p;
            if (c == '~' && (p[1] == '0' || p[1] == '1')) {
                c = p[1] == '0' ? '~' : '/';
                p++;
            } else if (c == '%' && p[1] && p[2]) {
                char hex[3] = {p[1], p[2], 0};
                char *end;
                long v = strtol(hex, &end, 16);
                if (*end == 0) {
                    c = (char)v;
                    p += 2;
                }
            }
            tok[o++] = c;
        }
        tok[o] = 0;
        if (cJSON_IsArray(n)) {
            char *end;
            long i = strtol(tok, &end, 10);
            n = *end || end == tok ? NULL : cJSON_GetArrayItem(n, (int)i);
        } else {
            n = cJSON_IsObject(n) ? cJSON_GetObjectItemCaseSensitive(n, tok) : NULL;
        }
    }
    return *p ? NULL : n;
}

const cJSON *ll_oas_schema_deref(ll_oas *a, const cJSON *node) {
    for (int hops = 0; node; hops++) {
        const char *ref = ll_oas_schema_str(node, "$ref");
        if (!ref) return node;
        if (ref[0] != '#') {
            fail_ref(a, ref, "is in another file (only references within the document are followed)");
            return NULL;
        }
        if (hops == 32) {
            fail_ref(a, ref, "is a loop of references");
            return NULL;
        }
        const cJSON *to = pointer(a->doc, ref + 1);
        if (!to) {
            fail_ref(a, ref, "points nowhere");
            return NULL;
        }
        node = to;
    }
    return NULL;
}

const char *ll_oas_schema_type(const cJSON *schema) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
    if (cJSON_IsString(t)) return t->valuestring;
    for (const cJSON *c = cJSON_IsArray(t) ? t->child : NULL; c; c = c->next)
        if (cJSON_IsString(c) && strcmp(c->valuestring, "null") != 0) return c->valuestring;
    if (cJSON_GetObjectItemCaseSensitive(schema, "properties")) return "object";
    if (cJSON_GetObjectItemCaseSensitive(schema, "items")) return "array";
    if (cJSON_GetObjectItemCaseSensitive(schema, "format")) return "string";
    return NULL;
}

cJSON *ll_oas_schema_own_example(ll_oas *a, const cJSON *holder) {
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(holder, "example");
    if (ex) return cJSON_Duplicate(ex, 1);
    const cJSON *exs = cJSON_GetObjectItemCaseSensitive(holder, "examples");
    if (cJSON_IsArray(exs) && exs->child) return cJSON_Duplicate(exs->child, 1); /* a 3.1 schema's list */
    if (!cJSON_IsObject(exs)) return NULL;
    for (const cJSON *c = exs->child; c; c = c->next) {
        const cJSON *e = ll_oas_schema_deref(a, c);
        if (!e) return NULL;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
        if (v) return cJSON_Duplicate(v, 1);
        if (!cJSON_GetObjectItemCaseSensitive(e, "externalValue")) return cJSON_Duplicate(e, 1); /* Swagger: by media type */
    }
    return NULL;
}

/* A made-up string for a format (or the property's name when none fits). */
static cJSON *string_for(const char *format) {
    static const char *const BY_FORMAT[][2] = {
        {"date-time", "2024-01-01T00:00:00Z"},
        {"date", "2024-01-01"},
        {"time", "12:00:00"},
        {"duration", "P1D"},
        {"email", "user@example.com"},
        {"idn-email", "user@example.com"},
        {"uuid", "3fa85f64-5717-4562-b3fc-2c963f66afa6"},
        {"uri", "https://example.com/"},
        {"url", "https://example.com/"},
        {"iri", "https://example.com/"},
        {"uri-reference", "/example"},
        {"hostname", "example.com"},
        {"idn-hostname", "example.com"},
        {"ipv4", "192.0.2.1"},
        {"ipv6", "2001:db8::1"},
        {"byte", "ZXhhbXBsZQ=="},
        {"binary", "example"},
        {"password", "secret"},
        {"regex", ".*"},
    };
    for (size_t i = 0; format && i < sizeof(BY_FORMAT) / sizeof(BY_FORMAT[0]); i++)
        if (strcmp(format, BY_FORMAT[i][0]) == 0) return cJSON_CreateString(BY_FORMAT[i][1]);
    return cJSON_CreateString("string");
}

static cJSON *number_for(const cJSON *s, int integer) {
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(s, "minimum");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(s, "maximum");
    double v = 1;
    if (cJSON_IsNumber(min)) v = min->valuedouble + (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum")) ? 1 : 0);
    else if (cJSON_IsNumber(max) && max->valuedouble < 1) v = max->valuedouble;
    return cJSON_CreateNumber(integer ? (double)(long long)v : v);
}

typedef struct guard {
    const cJSON *seen[MAX_DEPTH];
    int n;
} guard;

static cJSON *example(ll_oas *a, const cJSON *schema, guard *g);

/* Merges the properties of src (an object) into dst (an object). */
static void merge_into(cJSON *dst, cJSON *src) {
    while (src->child) {
        cJSON *c = cJSON_DetachItemViaPointer(src, src->child);
        cJSON *old = cJSON_GetObjectItemCaseSensitive(dst, c->string);
        if (old) cJSON_ReplaceItemViaPointer(dst, old, c); /* c keeps its name */
        else cJSON_AddItemToObject(dst, c->string, c);
    }
}

static cJSON *all_of(ll_oas *a, const cJSON *s, const cJSON *list, guard *g) {
    cJSON *obj = cJSON_CreateObject(), *other = NULL;
    for (const cJSON *c = list->child; c && !a->failed; c = c->next) {
        cJSON *v = example(a, c, g);
        if (cJSON_IsObject(v)) {
            merge_into(obj, v);
            cJSON_Delete(v);
        } else if (v) {
            cJSON_Delete(other);
            other = v;
        }
    }
    /* the schema's own properties beside its allOf */
    if (!a->failed && cJSON_GetObjectItemCaseSensitive(s, "properties")) {
        cJSON *copy = cJSON_Duplicate(s, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "allOf");
        cJSON *v = example(a, copy, g);
        cJSON_Delete(copy);
        if (cJSON_IsObject(v)) merge_into(obj, v);
        cJSON_Delete(v);
    }
    if (a->failed) {
        cJSON_Delete(obj);
        cJSON_Delete(other);
        return NULL;
    }
    if (other && !obj->child) {
        cJSON_Delete(obj);
        return other;
    }
    cJSON_Delete(other);
    return obj;
}

static cJSON *object_of(ll_oas *a, const cJSON *s, guard *g) {
    cJSON *obj = cJSON_CreateObject();
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    for (const cJSON *p = cJSON_IsObject(props) ? props->child : NULL; p && !a->failed; p = p->next) {
        const cJSON *ps = ll_oas_schema_deref(a, p);
        if (!ps || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ps, "readOnly"))) continue;
        cJSON *v = example(a, p, g);
        if (v) cJSON_AddItemToObject(obj, p->string, v);
    }
    if (a->failed) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

static cJSON *example(ll_oas *a, const cJSON *schema, guard *g) {
    const cJSON *s = ll_oas_schema_deref(a, schema);
    if (!s) return NULL;
    if (!cJSON_IsObject(s)) return cJSON_IsTrue(s) ? cJSON_CreateString("string") : NULL;
    for (int i = 0; i < g->n; i++)
        if (g->seen[i] == s) return NULL; /* a cycle: cut here */
    if (g->n == MAX_DEPTH) return NULL;
    cJSON *own = ll_oas_schema_own_example(a, s);
    if (own || a->failed) return own;
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "default")) || (v = cJSON_GetObjectItemCaseSensitive(s, "const")))
        return cJSON_Duplicate(v, 1);
    v = cJSON_GetObjectItemCaseSensitive(s, "enum");
    if (cJSON_IsArray(v) && v->child) return cJSON_Duplicate(v->child, 1);

    g->seen[g->n++] = s;
    cJSON *out = NULL;
    const char *type = ll_oas_schema_type(s);
    if ((v = cJSON_GetObjectItemCaseSensitive(s, "allOf")) && cJSON_IsArray(v)) {
        out = all_of(a, s, v, g);
    } else if (((v = cJSON_GetObjectItemCaseSensitive(s, "oneOf")) || (v = cJSON_GetObjectItemCaseSensitive(s, "anyOf"))) &&
               cJSON_IsArray(v) && v->child) {
        out = example(a, v->child, g);
    } else if (!type || strcmp(type, "object") == 0) {
        out = object_of(a, s, g);
    } else if (strcmp(type, "array") == 0) {
        out = cJSON_CreateArray();
        cJSON *item = example(a, cJSON_GetObjectItemCaseSensitive(s, "items"), g);
        if (item) cJSON_AddItemToArray(out, item);
    } else if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0) {
        out = number_for(s, type[0] == 'i');
    } else if (strcmp(type, "boolean") == 0) {
        out = cJSON_CreateTrue();
    } else if (strcmp(type, "null") == 0) {
        out = cJSON_CreateNull();
    } else if (strcmp(type, "file") == 0) {
        out = cJSON_CreateString("example");
    } else {
        out = string_for(ll_oas_schema_str(s, "format"));
    }
    g->n--;
    if (a->failed) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

cJSON *ll_oas_schema_example(ll_oas *a, const cJSON *schema) {
    guard g = {.n = 0};
    return example(a, schema, &g);
}
