/* convert_openapi.c -- an OpenAPI 3.0/3.1 or Swagger 2.0 description
 * into a script: one function per operation (its URL with the path
 * parameters in it, its query, header and cookie parameters, an example
 * body, the credentials of its security schemes and a check of its
 * documented success status) and a default() that calls each once.
 *
 * Owns: the version check, the base URL, the --tags filter and the
 * script's layout; convert_openapi_op.c writes each operation. */
#include "convert.h"
#include "convert_openapi.h"
#include "convert_openapi_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_emit.h"
#include "xmalloc.h"

static const char *const METHODS[] = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};

static int is_method(const char *k) {
    for (size_t i = 0; i < sizeof(METHODS) / sizeof(METHODS[0]); i++)
        if (strcmp(k, METHODS[i]) == 0) return 1;
    return 0;
}

/* "3.0.3" -> 0 (and the version into ver), else -1 with err. */
static int check_version(ll_oas *a, char *ver, size_t len) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a->doc, a->swagger ? "swagger" : "openapi");
    const char *key = a->swagger ? "swagger" : "openapi";
    if (cJSON_IsNumber(v)) snprintf(ver, len, "%g", v->valuedouble); /* YAML's unquoted 3.0 */
    else snprintf(ver, len, "%s", cJSON_IsString(v) ? v->valuestring : "?");
    int ok = a->swagger ? strcmp(ver, "2") == 0 || strcmp(ver, "2.0") == 0
                        : (strncmp(ver, "3.0", 3) == 0 || strncmp(ver, "3.1", 3) == 0) && (ver[3] == 0 || ver[3] == '.');
    if (ok) return 0;
    snprintf(a->err, a->errlen, "%s: %s: version %s is not supported (OpenAPI 3.0 and 3.1, Swagger 2.0 are)", a->input, key,
             ver);
    return -1;
}

/* The base URL: --base-url, else the first server with its variables'
 * defaults (Swagger: schemes, host and basePath); *relative when the
 * description gives no host. No trailing '/'. */
static void base_url(ll_oas *a, const ll_convert_opts *o, ll_buf *b, int *relative) {
    *relative = 0;
    size_t start = b->len;
    if (o->base_url) {
        ll_buf_puts(b, o->base_url);
    } else if (a->swagger) {
        const cJSON *schemes = cJSON_GetObjectItemCaseSensitive(a->doc, "schemes");
        const char *scheme = cJSON_IsArray(schemes) && cJSON_IsString(schemes->child) ? schemes->child->valuestring : "http";
        const char *host = ll_oas_schema_str(a->doc, "host"), *bp = ll_oas_schema_str(a->doc, "basePath");
        *relative = host == NULL;
        ll_buf_printf(b, "%s://%s%s", scheme, host ? host : "localhost", bp ? bp : "");
    } else {
        const cJSON *servers = cJSON_GetObjectItemCaseSensitive(a->doc, "servers");
        const cJSON *s0 = cJSON_IsArray(servers) ? servers->child : NULL;
        const char *url = ll_oas_schema_str(s0, "url");
        const cJSON *vars = cJSON_GetObjectItemCaseSensitive(s0, "variables");
        if (!url || !strstr(url, "://")) {
            *relative = 1;
            ll_buf_puts(b, "http://localhost");
        }
        for (const char *p = url ? url : ""; *p; p++) {
            const char *close = *p == '{' ? strchr(p, '}') : NULL;
            if (!close) {
                ll_buf_append(b, p, 1);
                continue;
            }
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
            const cJSON *var = cJSON_GetObjectItemCaseSensitive(vars, name);
            const char *def = ll_oas_schema_str(var, "default");
            const cJSON *en = cJSON_GetObjectItemCaseSensitive(var, "enum");
            if (!def && cJSON_IsArray(en) && cJSON_IsString(en->child)) def = en->child->valuestring;
            if (def) ll_buf_puts(b, def);
            else ll_buf_append(b, p, (size_t)(close - p + 1));
            p = close;
        }
    }
    while (b->len > start + 1 && b->p[b->len - 1] == '/') b->p[--b->len] = 0;
}

/* Whether op has one of the tags in the comma-separated list. */
static int has_tag(const cJSON *op, const char *list) {
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(op, "tags");
    for (const cJSON *t = cJSON_IsArray(tags) ? tags->child : NULL; t; t = t->next) {
        if (!cJSON_IsString(t)) continue;
        size_t n = strlen(t->valuestring);
        for (const char *p = list; *p;) {
            const char *comma = strchr(p, ',');
            size_t m = comma ? (size_t)(comma - p) : strlen(p);
            while (m && *p == ' ') p++, m--;
            while (m && p[m - 1] == ' ') m--;
            if (m == n && memcmp(p, t->valuestring, n) == 0) return 1;
            p += comma ? (size_t)(comma - p) + 1 : strlen(p);
        }
    }
    return 0;
}

/* Calls fn for each operation in document order; stops at its first
 * nonzero return and returns it. */
typedef int (*op_fn)(void *ctx, const char *path, const char *method, const cJSON *item, const cJSON *op);

static int each_op(ll_oas *a, op_fn fn, void *ctx) {
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(a->doc, "paths");
    for (const cJSON *p = paths->child; p; p = p->next) {
        snprintf(a->where, sizeof(a->where), "paths.%s", p->string);
        const cJSON *item = ll_oas_schema_deref(a, p);
        if (!item) return -1;
        for (const cJSON *m = item->child; m; m = m->next) {
            if (!m->string || !is_method(m->string) || !cJSON_IsObject(m)) continue;
            int rc = fn(ctx, p->string, m->string, item, m);
            if (rc) return rc;
        }
    }
    a->where[0] = 0;
    return 0;
}

/* --tags: each tag given must be on an operation. */
typedef struct tag_check {
    const char *tag;
    ll_buf all; /* every tag seen, for the message */
    int found;
} tag_check;

static int check_tag_op(void *ctx, const char *path, const char *method, const cJSON *item, const cJSON *op) {
    (void)path, (void)method, (void)item;
    tag_check *t = ctx;
    t->found |= has_tag(op, t->tag);
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(op, "tags");
    for (const cJSON *c = cJSON_IsArray(tags) ? tags->child : NULL; c; c = c->next) {
        if (!cJSON_IsString(c)) continue;
        char quoted[300];
        snprintf(quoted, sizeof(quoted), "'%s'", c->valuestring);
        if (t->all.p && strstr(t->all.p, quoted)) continue;
        ll_buf_printf(&t->all, "%s%s", t->all.len ? ", " : "", quoted);
    }
    return 0;
}

static int check_tags(ll_oas *a, const char *list) {
    char *copy = ll_xstrdup(list);
    int rc = 0;
    for (char *save = NULL, *tag = strtok_r(copy, ",", &save); tag && rc == 0; tag = strtok_r(NULL, ",", &save)) {
        while (*tag == ' ') tag++;
        for (size_t n = strlen(tag); n && tag[n - 1] == ' ';) tag[--n] = 0;
        if (!*tag) continue;
        tag_check t = {.tag = tag};
        rc = each_op(a, check_tag_op, &t);
        if (rc == 0 && !t.found) {
            snprintf(a->err, a->errlen, "%s: --tags: no operation has the tag '%s' (%s%s)", a->input, tag,
                     t.all.len ? "the tags: " : "no operation has tags", t.all.len ? t.all.p : "");
            rc = -1;
        }
        ll_buf_free(&t.all);
    }
    free(copy);
    return rc;
}

typedef struct conv {
    ll_oas *a;
    const ll_convert_opts *o;
    ll_oas_ops ops;
} conv;

static int convert_op(void *ctx, const char *path, const char *method, const cJSON *item, const cJSON *op) {
    conv *c = ctx;
    if (c->o->tags && !has_tag(op, c->o->tags)) return 0;
    return ll_oas_op_emit(&c->ops, path, method, item, op);
}

/* s on one line (newlines as spaces), at most max bytes. */
static void oneline(ll_buf *b, const char *s, size_t max) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n && i < max; i++) ll_buf_append(b, s[i] == '\n' || s[i] == '\r' ? " " : &s[i], 1);
    if (n > max) ll_buf_puts(b, "...");
}

static void emit_script(conv *c, const char *ver, const char *base, int relative, ll_buf *b) {
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(c->a->doc, "info");
    const char *title = ll_oas_schema_str(info, "title"), *version = ll_oas_schema_str(info, "version");
    const char *slash = strrchr(c->o->input, '/');
    ll_buf_puts(b, "-- ");
    oneline(b, title ? title : "API", 120);
    if (version) {
        ll_buf_puts(b, " ");
        oneline(b, version, 40);
    }
    ll_buf_printf(b, ": a test written by `luaload convert` from %s (%s %s)", slash ? slash + 1 : c->o->input,
                  c->a->swagger ? "Swagger" : "OpenAPI", ver);
    if (c->o->tags) {
        ll_buf_puts(b, ",\n-- the operations tagged ");
        oneline(b, c->o->tags, 200);
    }
    ll_buf_puts(b, ".\n");
    ll_buf_puts(b, "-- Each operation is a function of `api`; default() calls each once, in the\n"
                   "-- description's order, and checks its documented success status.\n"
                   "--\n"
                   "-- Before running it, edit:\n");
    ll_buf_printf(b, "--   * the base URL: BASE_URL in the environment (luaload run -e BASE_URL=...), else\n"
                     "--     the one below%s\n",
                  relative ? " (the description names no host)" : "");
    if (c->ops.auth_used) {
        ll_buf_puts(b, "--   * the credentials, read from the environment:\n");
        ll_oas_auth_emit_env_note(c->ops.auth, b);
    }
    if (c->ops.placeholders)
        ll_buf_printf(b, "--   * the %d value%s marked \"placeholder\": the description gives no example\n", c->ops.placeholders,
                      c->ops.placeholders == 1 ? "" : "s");
    if (c->ops.made_bodies)
        ll_buf_puts(b, "--   * the request bodies marked \"made from the schema\": the values are made up\n");
    ll_buf_puts(b, "--   * options: one VU, one iteration (a smoke test); set the load you want\n"
                   "local http = require(\"luaload.http\")\n"
                   "local ll = require(\"luaload\")\n");
    if (c->ops.needs_json) ll_buf_puts(b, "local json = require(\"luaload.json\")\n");
    if (ll_oas_auth_needs_encoding(c->ops.auth)) ll_buf_puts(b, "local encoding = require(\"luaload.encoding\")\n");
    ll_buf_puts(b, "\nlocal base = __ENV.BASE_URL or ");
    ll_emit_cstr(b, base);
    ll_buf_puts(b, "\n\noptions = {\n  vus = 1,\n  iterations = 1,\n}\n\n");
    ll_oas_auth_emit_table(c->ops.auth, b);
    ll_buf_puts(b, "-- a path segment or a query value, percent-encoded\n"
                   "local function enc(v)\n"
                   "  return (tostring(v):gsub(\"[^%w%-%._~]\", function(ch) return string.format(\"%%%02X\", ch:byte()) end))\n"
                   "end\n\n");
    if (c->ops.needs_query)
        ll_buf_puts(b, "-- \"?a=1&b=2\" from { { name, value }, ... }: a list value repeats its name\n"
                       "local function query(pairs)\n"
                       "  local parts = {}\n"
                       "  for _, p in ipairs(pairs) do\n"
                       "    for _, v in ipairs(type(p[2]) == \"table\" and p[2] or { p[2] }) do\n"
                       "      parts[#parts + 1] = enc(p[1]) .. \"=\" .. enc(v)\n"
                       "    end\n"
                       "  end\n"
                       "  return #parts > 0 and \"?\" .. table.concat(parts, \"&\") or \"\"\n"
                       "end\n\n");
    ll_buf_puts(b, "local api = {}\n\n");
    ll_buf_append(b, c->ops.fns.p, c->ops.fns.len);
    ll_buf_puts(b, "function default()\n");
    ll_buf_append(b, c->ops.calls.p, c->ops.calls.len);
    ll_buf_puts(b, "end\n");
}

int ll_convert_openapi(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen) {
    ll_oas a = {.doc = doc, .input = o->input, .err = err, .errlen = errlen};
    a.swagger = cJSON_GetObjectItemCaseSensitive(doc, "openapi") == NULL;
    char ver[64];
    if (check_version(&a, ver, sizeof(ver)) < 0) return -1;
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(doc, "paths");
    if (!cJSON_IsObject(paths) || !paths->child) {
        snprintf(err, errlen, "%s: paths: %s (an API description with no operations)", o->input,
                 paths ? "empty" : "missing");
        return -1;
    }
    if (o->tags && check_tags(&a, o->tags) < 0) return -1;
    conv c = {.a = &a, .o = o};
    c.ops.a = &a;
    c.ops.auth = ll_oas_auth_new(&a);
    int rc = c.ops.auth ? each_op(&a, convert_op, &c) : -1;
    if (rc == 0 && c.ops.count == 0) {
        snprintf(err, errlen, "%s: paths: no operations (get, put, post, delete, options, head, patch, trace)", o->input);
        rc = -1;
    }
    if (rc == 0) {
        ll_buf base = {0};
        int relative;
        base_url(&a, o, &base, &relative);
        emit_script(&c, ver, base.p ? base.p : "", relative, &out->script);
        ll_buf_free(&base);
    }
    ll_oas_ops_free(&c.ops);
    return rc ? -1 : 0;
}
