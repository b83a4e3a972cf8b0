/* convert_openapi_op.c -- one OpenAPI or Swagger operation as a function
 * of the script (see convert_openapi_op.h): the path item's and the
 * operation's parameters merged (the operation's win) as locals with
 * their example values, the URL with the path parameters in it and the
 * query ones after it, the headers (parameters, cookies, credentials),
 * the body (JSON, a form-urlencoded table or an http.Form), the request
 * and a check of the lowest documented 2xx status.
 *
 * Owns: parameter values and their serialization, body kinds, the
 * function's text. */
#include "convert_openapi_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_emit.h"
#include "xmalloc.h"

#define MAX_PARAMS 128

typedef struct param {
    const cJSON *p; /* the parameter, $ref followed */
    const char *name, *in;
    char var[128]; /* its local */
} param;

typedef struct op_ctx {
    ll_oas_ops *ops;
    param ps[MAX_PARAMS];
    int np;
    ll_buf locals, hdr, query, cookie, body;
    const char *body_expr; /* what the request sends: "json.encode(body)", "body" or NULL */
    char fname[128];
} op_ctx;

/* Names the script itself uses: a parameter's local gets "_param" after. */
static const char *const TAKEN[] = {"http", "ll", "json", "encoding", "base", "auth", "enc", "query",
                                    "api", "res", "body", "options", "default", "tostring", "string", "table"};

static void local_name(op_ctx *c, char *dst, size_t len, const char *name) {
    char id[100];
    ll_emit_ident(id, sizeof(id), name);
    snprintf(dst, len, "%s", id);
    for (size_t i = 0; i < sizeof(TAKEN) / sizeof(TAKEN[0]); i++)
        if (strcmp(id, TAKEN[i]) == 0) snprintf(dst, len, "%s_param", id);
    for (int k = 2;; k++) {
        int clash = 0;
        for (int i = 0; i < c->np && !clash; i++) clash = strcmp(c->ps[i].var, dst) == 0;
        if (!clash) return;
        snprintf(dst, len, "%s_%d", id, k);
    }
}

/* The operation's parameters after the path item's, one per name and
 * place (the operation's replaces the path item's). */
static int collect_params(op_ctx *c, const cJSON *list) {
    ll_oas *a = c->ops->a;
    for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next) {
        const cJSON *p = ll_oas_schema_deref(a, x);
        if (!p) return -1;
        const char *name = ll_oas_schema_str(p, "name"), *in = ll_oas_schema_str(p, "in");
        if (!name || !in) continue;
        int i = 0;
        while (i < c->np && !(strcmp(c->ps[i].name, name) == 0 && strcmp(c->ps[i].in, in) == 0)) i++;
        if (i == MAX_PARAMS) continue;
        if (i == c->np) {
            local_name(c, c->ps[i].var, sizeof(c->ps[i].var), name);
            c->np++;
        }
        c->ps[i].p = p;
        c->ps[i].name = name;
        c->ps[i].in = in;
    }
    return 0;
}

/* Whether schema (or its items, a few levels down: they may be itself)
 * carries a value of the description's own. */
static int given_at(ll_oas *a, const cJSON *schema, int depth) {
    const cJSON *s = ll_oas_schema_deref(a, schema);
    if (!cJSON_IsObject(s)) return 0;
    static const char *const KEYS[] = {"example", "examples", "default", "enum", "const"};
    for (size_t i = 0; i < sizeof(KEYS) / sizeof(KEYS[0]); i++)
        if (cJSON_GetObjectItemCaseSensitive(s, KEYS[i])) return 1;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    return items && depth < 4 && given_at(a, items, depth + 1);
}

static int given(ll_oas *a, const cJSON *schema) { return given_at(a, schema, 0); }

/* A parameter's schema: OpenAPI 3's schema (or its content's), Swagger's
 * parameter itself. */
static const cJSON *param_schema(ll_oas *a, const cJSON *p) {
    if (a->swagger) return p;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(p, "schema");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(p, "content");
    if (!s && cJSON_IsObject(content) && content->child) s = cJSON_GetObjectItemCaseSensitive(content->child, "schema");
    return s;
}

/* The items of an array joined with sep into a new string. */
static cJSON *join(const cJSON *arr, const char *sep) {
    ll_buf b = {0};
    for (const cJSON *c = arr->child; c; c = c->next) {
        if (c != arr->child) ll_buf_puts(&b, sep);
        if (cJSON_IsString(c)) {
            ll_buf_puts(&b, c->valuestring);
        } else {
            char *t = cJSON_PrintUnformatted(c);
            ll_buf_puts(&b, t ? t : "");
            free(t);
        }
    }
    cJSON *s = cJSON_CreateString(b.p ? b.p : "");
    ll_buf_free(&b);
    return s;
}

/* How an array parameter goes on the wire: NULL for a list the query
 * repeats (form, explode; Swagger's multi), else the separator. */
static const char *array_sep(ll_oas *a, const param *p) {
    if (a->swagger) {
        const char *f = ll_oas_schema_str(p->p, "collectionFormat");
        if (f && strcmp(f, "multi") == 0 && strcmp(p->in, "query") == 0) return NULL;
        return !f || strcmp(f, "csv") == 0 ? "," : strcmp(f, "ssv") == 0 ? " " : strcmp(f, "tsv") == 0 ? "\t" : "|";
    }
    const char *style = ll_oas_schema_str(p->p, "style");
    const cJSON *explode = cJSON_GetObjectItemCaseSensitive(p->p, "explode");
    if (strcmp(p->in, "query") == 0 && (!style || strcmp(style, "form") == 0) && !cJSON_IsFalse(explode)) return NULL;
    if (style && strcmp(style, "spaceDelimited") == 0) return " ";
    if (style && strcmp(style, "pipeDelimited") == 0) return "|";
    return ",";
}

/* A scalar or a list of scalars as it goes in a URL, header or form:
 * objects (and lists of them) as JSON text, null as "". Takes v. */
static cJSON *flat(cJSON *v, const char *sep) {
    if (cJSON_IsNull(v)) {
        cJSON_Delete(v);
        return cJSON_CreateString("");
    }
    int nested = cJSON_IsObject(v);
    for (const cJSON *c = cJSON_IsArray(v) ? v->child : NULL; c; c = c->next)
        nested |= cJSON_IsObject(c) || cJSON_IsArray(c) || cJSON_IsNull(c);
    cJSON *out = NULL;
    if (nested) {
        char *t = cJSON_PrintUnformatted(v);
        out = cJSON_CreateString(t ? t : "");
        free(t);
    } else if (cJSON_IsArray(v) && sep) {
        out = join(v, sep);
    }
    if (!out) return v;
    cJSON_Delete(v);
    return out;
}

/* "integer (int64)" */
static void type_note(ll_oas *a, ll_buf *b, const cJSON *s, int depth) {
    const char *t = ll_oas_schema_type(s), *f = ll_oas_schema_str(s, "format");
    ll_buf_puts(b, t ? t : "a value of any type");
    if (f) ll_buf_printf(b, " (%s)", f);
    const cJSON *items = t && strcmp(t, "array") == 0 ? ll_oas_schema_deref(a, cJSON_GetObjectItemCaseSensitive(s, "items")) : NULL;
    if (items && depth < 4) {
        ll_buf_puts(b, " of ");
        type_note(a, b, items, depth + 1);
    }
}

/* "  local petId = 1 -- path; placeholder: integer (int64)\n" */
static int emit_param_local(op_ctx *c, const param *p) {
    ll_oas *a = c->ops->a;
    const cJSON *schema = param_schema(a, p->p);
    cJSON *v = ll_oas_schema_own_example(a, p->p);
    int placeholder = 0;
    if (!v && !a->failed) {
        placeholder = !given(a, schema);
        v = schema ? ll_oas_schema_example(a, schema) : cJSON_CreateString("string");
        if (!v && !a->failed) v = cJSON_CreateString("string");
    }
    if (a->failed) return -1;
    v = flat(v, array_sep(a, p));
    ll_buf_printf(&c->locals, "  local %s = ", p->var);
    ll_emit_value(&c->locals, v, 2);
    ll_buf_printf(&c->locals, " -- %s", p->in);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p->p, "required"))) ll_buf_puts(&c->locals, ", required");
    if (placeholder) {
        ll_buf_puts(&c->locals, "; placeholder: ");
        type_note(a, &c->locals, ll_oas_schema_deref(a, schema), 0);
        c->ops->placeholders++;
    }
    ll_buf_puts(&c->locals, "\n");
    cJSON_Delete(v);
    return a->failed ? -1 : 0;
}


/* The URL expression: base, the path's literal parts and enc(local) for
 * each {parameter}, then query(...) for the query parameters. */
static int emit_url(op_ctx *c, ll_buf *u, const char *path) {
    ll_buf_puts(u, "base");
    const char *p = path;
    while (*p) {
        const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
        size_t lit = close ? (size_t)(open - p) : strlen(p);
        if (lit) {
            ll_buf_puts(u, " .. ");
            ll_emit_str(u, p, lit);
        }
        if (!close) break;
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)(close - open - 1), open + 1);
        int i = 0;
        while (i < c->np && !(strcmp(c->ps[i].in, "path") == 0 && strcmp(c->ps[i].name, name) == 0)) i++;
        if (i == c->np) {
            /* a template name no parameter describes */
            char var[128];
            local_name(c, var, sizeof(var), name);
            ll_buf_printf(&c->locals, "  local %s = \"string\" -- path; placeholder: the description does not describe it\n", var);
            c->ops->placeholders++;
            ll_buf_printf(u, " .. enc(%s)", var);
        } else {
            ll_buf_printf(u, " .. enc(%s)", c->ps[i].var);
        }
        p = close + 1;
    }
    for (int i = 0; i < c->np; i++) {
        if (strcmp(c->ps[i].in, "query") != 0) continue;
        ll_buf_puts(&c->query, "{ ");
        ll_emit_cstr(&c->query, c->ps[i].name);
        ll_buf_printf(&c->query, ", %s }, ", c->ps[i].var);
    }
    return 0;
}

/* The media type a body goes as: JSON first, then the forms, else the
 * first listed. */
static const cJSON *pick_media(const cJSON *content) {
    const cJSON *pick = NULL;
    int rank = 9;
    for (const cJSON *m = cJSON_IsObject(content) ? content->child : NULL; m; m = m->next) {
        const char *t = m->string;
        int r = strstr(t, "json") ? 0 : strcmp(t, "application/x-www-form-urlencoded") == 0 ? 1
                                   : strcmp(t, "multipart/form-data") == 0                 ? 2
                                                                                           : 3;
        if (r < rank) rank = r, pick = m;
    }
    return pick;
}

/* Whether a form property (or a Swagger formData parameter) is a file
 * (or a list of them, a few levels down). */
static int is_file_at(ll_oas *a, const cJSON *s, int depth) {
    s = ll_oas_schema_deref(a, s);
    const char *t = ll_oas_schema_type(s), *f = ll_oas_schema_str(s, "format");
    if (t && strcmp(t, "array") == 0)
        return depth < 4 && is_file_at(a, cJSON_GetObjectItemCaseSensitive(s, "items"), depth + 1);
    return (t && strcmp(t, "file") == 0) || (f && (strcmp(f, "binary") == 0 || strcmp(f, "base64") == 0)) ||
           cJSON_GetObjectItemCaseSensitive(s, "contentMediaType") != NULL;
}

static int is_file(ll_oas *a, const cJSON *s) { return is_file_at(a, s, 0); }

/* local body = http.Form{ fields = ..., files = ... } from an object
 * value; files names the file parts (a property schema each, or NULL). */
static void emit_form(op_ctx *c, cJSON *v, int multipart, const cJSON *props) {
    ll_oas *a = c->ops->a;
    ll_buf *b = &c->body;
    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        v = cJSON_CreateObject();
    }
    cJSON *fields = cJSON_CreateObject(), *files = cJSON_CreateObject();
    while (v->child) {
        cJSON *f = cJSON_DetachItemViaPointer(v, v->child);
        int file = multipart && props && is_file(a, cJSON_GetObjectItemCaseSensitive(props, f->string));
        char *name = ll_xstrdup(f->string); /* flat may free f */
        cJSON_AddItemToObject(file ? files : fields, name, flat(f, multipart ? "," : NULL));
        free(name);
    }
    cJSON_Delete(v);
    if (!multipart) {
        ll_buf_puts(b, "  local body = ");
        ll_emit_value(b, fields, 2);
        ll_buf_puts(b, "\n");
    } else {
        ll_buf_puts(b, "  local body = http.Form{\n    fields = ");
        ll_emit_value(b, fields, 4);
        ll_buf_puts(b, ",\n");
        if (files->child) {
            ll_buf_puts(b, "    files = {\n");
            for (const cJSON *f = files->child; f; f = f->next) {
                ll_buf_puts(b, "      ");
                ll_emit_key(b, f->string);
                ll_buf_puts(b, " = http.file(");
                ll_emit_cstr(b, cJSON_IsString(f) ? f->valuestring : "example");
                ll_buf_puts(b, ", ");
                char fname[160];
                snprintf(fname, sizeof(fname), "%s.bin", f->string);
                ll_emit_cstr(b, fname);
                ll_buf_puts(b, ", \"application/octet-stream\"), -- placeholder: the file's contents\n");
                c->ops->placeholders++;
            }
            ll_buf_puts(b, "    },\n");
        }
        ll_buf_puts(b, "  }\n");
    }
    c->body_expr = "body";
    cJSON_Delete(fields);
    cJSON_Delete(files);
}

/* The body of type media with value v (taken), made from the schema or not. */
static void emit_body(op_ctx *c, const char *media, cJSON *v, int made, const cJSON *schema) {
    ll_oas *a = c->ops->a;
    ll_buf *b = &c->body;
    if (made) {
        ll_buf_puts(b, "  -- made from the schema: edit the values\n");
        c->ops->made_bodies++;
    }
    if (strcmp(media, "application/x-www-form-urlencoded") == 0 || strcmp(media, "multipart/form-data") == 0) {
        const cJSON *s = ll_oas_schema_deref(a, schema);
        emit_form(c, v, media[0] == 'm', cJSON_GetObjectItemCaseSensitive(s, "properties"));
        return;
    }
    ll_emit_indent(&c->hdr, 6);
    ll_buf_puts(&c->hdr, "[\"Content-Type\"] = ");
    ll_emit_cstr(&c->hdr, media);
    ll_buf_puts(&c->hdr, ",\n");
    ll_buf_puts(b, "  local body = ");
    if (strstr(media, "json")) {
        if (!v) v = cJSON_CreateObject();
        ll_emit_value(b, v, 2);
        c->body_expr = "json.encode(body)";
        c->ops->needs_json = 1;
    } else if (cJSON_IsString(v)) {
        ll_emit_cstr(b, v->valuestring);
        if (made) {
            ll_buf_printf(b, " -- placeholder: a %s body", media);
            c->ops->placeholders++;
        }
        c->body_expr = "body";
    } else {
        char *t = v ? cJSON_PrintUnformatted(v) : NULL;
        ll_emit_cstr(b, t ? t : "");
        free(t);
        ll_buf_printf(b, " -- placeholder: a %s body", media);
        c->ops->placeholders++;
        c->body_expr = "body";
    }
    ll_buf_puts(b, "\n");
    cJSON_Delete(v);
}

static int body_openapi3(op_ctx *c, const cJSON *op) {
    ll_oas *a = c->ops->a;
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(op, "requestBody");
    if (!rb) return 0;
    if (!(rb = ll_oas_schema_deref(a, rb))) return -1;
    const cJSON *m = pick_media(cJSON_GetObjectItemCaseSensitive(rb, "content"));
    if (!m) return 0;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(m, "schema");
    cJSON *v = ll_oas_schema_own_example(a, m);
    int made = !v && !given(a, schema);
    if (!v && schema && !a->failed) v = ll_oas_schema_example(a, schema);
    if (a->failed) {
        cJSON_Delete(v);
        return -1;
    }
    emit_body(c, m->string, v, made, schema);
    return 0;
}

/* Swagger 2.0: an in: body parameter (JSON), or the formData ones. */
static int body_swagger(op_ctx *c, const cJSON *op) {
    ll_oas *a = c->ops->a;
    const cJSON *consumes = cJSON_GetObjectItemCaseSensitive(op, "consumes");
    if (!consumes) consumes = cJSON_GetObjectItemCaseSensitive(a->doc, "consumes");
    const char *media = "application/json";
    int multipart = 0;
    for (const cJSON *m = cJSON_IsArray(consumes) ? consumes->child : NULL; m; m = m->next) {
        if (!cJSON_IsString(m)) continue;
        if (strstr(m->valuestring, "json") && strcmp(media, "application/json") == 0) media = m->valuestring;
        multipart |= strcmp(m->valuestring, "multipart/form-data") == 0;
    }
    cJSON *form = NULL, *props = NULL;
    for (int i = 0; i < c->np; i++) {
        const param *p = &c->ps[i];
        if (strcmp(p->in, "body") == 0) {
            const cJSON *schema = cJSON_GetObjectItemCaseSensitive(p->p, "schema");
            int made = !given(a, schema);
            cJSON *v = ll_oas_schema_example(a, schema);
            if (a->failed) return -1;
            cJSON_Delete(form);
            cJSON_Delete(props);
            emit_body(c, media, v, made, NULL);
            return 0;
        }
        if (strcmp(p->in, "formData") != 0) continue;
        if (!form) form = cJSON_CreateObject(), props = cJSON_CreateObject();
        cJSON *v = ll_oas_schema_example(a, p->p);
        if (a->failed) break;
        cJSON_AddItemToObject(form, p->name, v ? v : cJSON_CreateString("string"));
        cJSON_AddItemToObject(props, p->name, cJSON_Duplicate(p->p, 1));
        multipart |= is_file(a, p->p);
    }
    if (a->failed || !form) {
        cJSON_Delete(form);
        cJSON_Delete(props);
        return a->failed ? -1 : 0;
    }
    cJSON *schema = cJSON_CreateObject();
    cJSON_AddItemToObject(schema, "properties", props);
    emit_body(c, multipart ? "multipart/form-data" : "application/x-www-form-urlencoded", form, 1, schema);
    cJSON_Delete(schema);
    return 0;
}

/* The check: the lowest documented 2xx status, else any 2xx. */
static void emit_check(op_ctx *c, ll_buf *b, const cJSON *op) {
    const cJSON *responses = cJSON_GetObjectItemCaseSensitive(op, "responses");
    int best = 0;
    for (const cJSON *r = cJSON_IsObject(responses) ? responses->child : NULL; r; r = r->next) {
        const char *k = r->string;
        if (strlen(k) == 3 && k[0] == '2' && k[1] >= '0' && k[1] <= '9' && k[2] >= '0' && k[2] <= '9') {
            int s = atoi(k);
            if (!best || s < best) best = s;
        }
    }
    if (best)
        ll_buf_printf(b, "  ll.check(res, { { \"%s: status %d\", function(r) return r.status == %d end } })\n", c->fname, best,
                      best);
    else
        ll_buf_printf(b, "  ll.check(res, { { \"%s: status 2xx\", function(r) return r.status >= 200 and r.status < 300 end } })\n",
                      c->fname);
}

static void unique_fname(ll_oas_ops *ops, char *dst, size_t len, const char *method, const char *path, const cJSON *op) {
    const char *id = ll_oas_schema_str(op, "operationId");
    char raw[600];
    if (id && *id) {
        snprintf(raw, sizeof(raw), "%s", id);
    } else {
        size_t o = (size_t)snprintf(raw, sizeof(raw), "%s_", method);
        for (const char *p = path; *p && o + 1 < sizeof(raw); p++)
            if (*p != '{' && *p != '}') raw[o++] = *p;
        raw[o] = 0;
    }
    char base[100];
    ll_emit_ident(base, sizeof(base), raw);
    for (size_t n = strlen(base); n > 1 && base[n - 1] == '_' && !(id && *id);) base[--n] = 0;
    snprintf(dst, len, "%s", base);
    for (int k = 2;; k++) {
        int clash = 0;
        for (int i = 0; i < ops->count && !clash; i++) clash = strcmp(ops->names[i], dst) == 0;
        if (!clash) break;
        snprintf(dst, len, "%s_%d", base, k);
    }
    ll_xgrow((void **)&ops->names, &ops->cap, ops->count + 1, sizeof(char *));
    ops->names[ops->count++] = ll_xstrdup(dst);
}

/* "  local res = http.post(URL, body, {...})\n" */
static void emit_request(op_ctx *c, ll_buf *b, const char *method, const char *url, const char *label) {
    const char *m = strcmp(method, "delete") == 0 ? "del" : method;
    int simple = strcmp(method, "get") == 0 || strcmp(method, "head") == 0;
    if (simple && c->body_expr) {
        ll_buf_printf(b, "  local res = http.request(\"%s\", %s, %s, ", strcmp(method, "get") == 0 ? "GET" : "HEAD", url, c->body_expr);
    } else if (simple) {
        ll_buf_printf(b, "  local res = http.%s(%s, ", m, url);
    } else if (strcmp(method, "trace") == 0) {
        ll_buf_printf(b, "  local res = http.request(\"TRACE\", %s, %s, ", url, c->body_expr ? c->body_expr : "nil");
    } else {
        ll_buf_printf(b, "  local res = http.%s(%s, %s, ", m, url, c->body_expr ? c->body_expr : "nil");
    }
    if (c->cookie.len) {
        c->cookie.len -= 2; /* the last ", " */
        ll_buf_printf(&c->hdr, "      Cookie = table.concat({ %.*s }, \"; \"),\n", (int)c->cookie.len, c->cookie.p);
    }
    ll_buf_puts(b, "{\n");
    if (c->hdr.len) {
        ll_buf_puts(b, "    headers = {\n");
        ll_buf_append(b, c->hdr.p, c->hdr.len);
        ll_buf_puts(b, "    },\n");
    }
    ll_buf_puts(b, "    tags = { name = ");
    ll_emit_cstr(b, label);
    ll_buf_puts(b, " },\n  })\n");
}

static void ctx_free(op_ctx *c) {
    ll_buf_free(&c->locals);
    ll_buf_free(&c->hdr);
    ll_buf_free(&c->query);
    ll_buf_free(&c->cookie);
    ll_buf_free(&c->body);
}

int ll_oas_op_emit(ll_oas_ops *ops, const char *path, const char *method, const cJSON *item, const cJSON *op) {
    ll_oas *a = ops->a;
    op_ctx *c = ll_xcalloc(1, sizeof(*c));
    c->ops = ops;
    char label[600], upper[16];
    size_t i;
    for (i = 0; method[i] && i + 1 < sizeof(upper); i++) upper[i] = (char)(method[i] - 'a' + 'A');
    upper[i] = 0;
    snprintf(label, sizeof(label), "%s %s", upper, path);
    unique_fname(ops, c->fname, sizeof(c->fname), method, path, op);
    snprintf(a->where, sizeof(a->where), "%.380s (%s)", label, c->fname);

    int rc = collect_params(c, cJSON_GetObjectItemCaseSensitive(item, "parameters"));
    if (rc == 0) rc = collect_params(c, cJSON_GetObjectItemCaseSensitive(op, "parameters"));
    for (int k = 0; rc == 0 && k < c->np; k++) {
        const char *in = c->ps[k].in;
        if (strcmp(in, "body") == 0 || strcmp(in, "formData") == 0) continue;
        rc = emit_param_local(c, &c->ps[k]);
        if (rc == 0 && strcmp(in, "header") == 0) {
            ll_emit_indent(&c->hdr, 6);
            ll_emit_key(&c->hdr, c->ps[k].name);
            ll_buf_printf(&c->hdr, " = tostring(%s),\n", c->ps[k].var);
        } else if (rc == 0 && strcmp(in, "cookie") == 0) {
            ll_emit_cstr(&c->cookie, c->ps[k].name);
            ll_buf_printf(&c->cookie, " .. \"=\" .. enc(%s), ", c->ps[k].var);
        }
    }
    ll_buf url = {0};
    if (rc == 0) rc = emit_url(c, &url, path);
    if (rc == 0) rc = a->swagger ? body_swagger(c, op) : body_openapi3(c, op);
    if (rc == 0) {
        size_t before = c->hdr.len + c->query.len + c->cookie.len;
        ll_oas_auth_apply(ops->auth, op, &c->hdr, &c->query, &c->cookie, 6);
        ops->auth_used |= c->hdr.len + c->query.len + c->cookie.len != before;
        if (c->query.len) {
            c->query.len -= 2; /* the last ", " */
            ll_buf_printf(&url, " .. query({ %.*s })", (int)c->query.len, c->query.p);
            ops->needs_query = 1;
        }
        ll_buf *b = &ops->fns;
        const char *summary = ll_oas_schema_str(op, "summary");
        if (!summary || !*summary) summary = ll_oas_schema_str(op, "description");
        ll_buf_printf(b, "-- %s", label);
        if (summary && *summary) {
            ll_buf_puts(b, ": ");
            size_t n = strcspn(summary, "\r\n");
            ll_buf_append(b, summary, n > 100 ? 100 : n);
            if (n > 100) ll_buf_puts(b, "...");
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(op, "deprecated"))) ll_buf_puts(b, " (deprecated)");
        ll_buf_printf(b, "\nfunction api.%s()\n", c->fname);
        if (c->locals.len) ll_buf_append(b, c->locals.p, c->locals.len);
        if (c->body.len) ll_buf_append(b, c->body.p, c->body.len);
        emit_request(c, b, method, url.p, label);
        emit_check(c, b, op);
        ll_buf_puts(b, "  return res\nend\n\n");
        ll_buf_printf(&ops->calls, "  api.%s()\n", c->fname);
    }
    ll_buf_free(&url);
    ctx_free(c);
    free(c);
    return rc;
}

void ll_oas_ops_free(ll_oas_ops *ops) {
    for (int i = 0; i < ops->count; i++) free(ops->names[i]);
    free(ops->names);
    ll_buf_free(&ops->fns);
    ll_buf_free(&ops->calls);
    ll_oas_auth_free(ops->auth);
}
