/* convert_postman.c -- a Postman collection (v2.1, v2.0) into a script (see
 * convert.h): the collection's variables as a `vars` table that reads the
 * environment first, folders as nested ll.group calls, each request with
 * its method, URL, headers, body (raw, urlencoded, formdata, GraphQL) and
 * auth (bearer, basic, API key) with {{var}} references made Lua, a
 * status check each, and what cannot run here (pre-request and test
 * scripts, file references) left as comments.
 *
 * Owns: reading Postman items, {{var}} substitution and the Postman
 * script's layout. */
#include "convert.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "convert_emit.h"
#include "convert_expr.h"
#include "convert_req.h"
#include "xmalloc.h"

#define MAX_DEPTH 64 /* folders inside folders */

typedef struct pm {
    const ll_convert_opts *o;
    ll_buf code;         /* default()'s body */
    ll_req_pairs vars;   /* name, its Lua default value */
    char **unknown;      /* {{names}} used but not defined by the collection */
    int nunknown, ucap;
    int v20;             /* v2.0's auth layout */
    int nreq, need_utils, need_encoding;
    int sets; /* test-script .set() calls made Lua */
    char *err;
    size_t errlen;
} pm;

static const char *jstr(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int fail(pm *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pm *p, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s: %s", p->o->input, what);
    return -1;
}

/* A JSON scalar as text (numbers and booleans as Postman shows them). */
static void scalar_text(const cJSON *v, char *dst, size_t len) {
    if (cJSON_IsString(v)) snprintf(dst, len, "%s", v->valuestring);
    else if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
        snprintf(dst, len, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsNumber(v)) snprintf(dst, len, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(dst, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else dst[0] = 0;
}

/* The code of variable name: vars.name or vars["name"]; dynamic
 * variables ({{$guid}}...) as Lua calls. */
static void var_code(pm *p, const char *name, size_t n, char *dst, size_t len) {
    char v[256];
    snprintf(v, sizeof(v), "%.*s", (int)n, name);
    if (v[0] == '$') {
        if (strcmp(v, "$guid") == 0 || strcmp(v, "$randomUUID") == 0) {
            p->need_utils = 1;
            snprintf(dst, len, "utils.uuidv4()");
        } else if (strcmp(v, "$timestamp") == 0) {
            snprintf(dst, len, "tostring(os.time())");
        } else if (strcmp(v, "$isoTimestamp") == 0) {
            snprintf(dst, len, "os.date(\"!%%Y-%%m-%%dT%%H:%%M:%%SZ\")");
        } else if (strcmp(v, "$randomInt") == 0) {
            snprintf(dst, len, "tostring(math.random(0, 1000))");
        } else {
            snprintf(dst, len, "\"{{%s}}\" --[[ Postman's %s: not converted ]]", v, v);
        }
        return;
    }
    int known = ll_req_pairs_find(&p->vars, v) != NULL;
    for (int i = 0; i < p->nunknown && !known; i++) known = strcmp(p->unknown[i], v) == 0;
    if (!known) {
        ll_xgrow((void **)&p->unknown, &p->ucap, p->nunknown + 1, sizeof(char *));
        p->unknown[p->nunknown++] = ll_xstrdup(v);
    }
    if (ll_emit_is_ident(v)) {
        snprintf(dst, len, "vars.%s", v);
    } else {
        ll_buf b = {0};
        ll_buf_puts(&b, "vars[");
        ll_emit_cstr(&b, v);
        ll_buf_puts(&b, "]");
        snprintf(dst, len, "%s", b.p);
        ll_buf_free(&b);
    }
}

/* s with its {{var}} references as Lua code into b. */
static void pm_expr(pm *p, ll_buf *b, const char *s) {
    ll_expr e;
    ll_expr_begin(&e, b);
    const char *at = s;
    for (const char *o; (o = strstr(at, "{{")) != NULL;) {
        const char *c = strstr(o + 2, "}}");
        if (!c || c - o - 2 > 200 || memchr(o + 2, '{', (size_t)(c - o - 2))) break;
        ll_expr_lit(&e, at, (size_t)(o - at));
        char code[512];
        var_code(p, o + 2, (size_t)(c - o - 2), code, sizeof(code));
        ll_expr_code(&e, code);
        at = c + 2;
    }
    ll_expr_lit(&e, at, strlen(at));
    ll_expr_end(&e);
}

static char *pm_expr_dup(pm *p, const char *s) {
    ll_buf b = {0};
    pm_expr(p, &b, s);
    char *r = ll_xstrdup(b.p);
    ll_buf_free(&b);
    return r;
}

static int disabled(const cJSON *x) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "disabled")); }

/* The URL of a request as text: url.raw, or built from its parts when it
 * has none or some of its query is disabled. NULL when there is none. */
static char *pm_url(const cJSON *url) {
    if (cJSON_IsString(url)) return *url->valuestring ? ll_xstrdup(url->valuestring) : NULL;
    if (!cJSON_IsObject(url)) return NULL;
    const cJSON *query = cJSON_GetObjectItemCaseSensitive(url, "query");
    int off = 0;
    for (const cJSON *q = cJSON_IsArray(query) ? query->child : NULL; q; q = q->next) off |= disabled(q);
    const char *raw = jstr(url, "raw");
    if (raw && *raw && !off) return ll_xstrdup(raw);
    ll_buf b = {0};
    const char *proto = jstr(url, "protocol");
    if (proto) ll_buf_printf(&b, "%s://", proto);
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(url, "host");
    if (cJSON_IsString(host)) ll_buf_puts(&b, host->valuestring);
    for (const cJSON *x = cJSON_IsArray(host) ? host->child : NULL; x; x = x->next)
        ll_buf_printf(&b, "%s%s", x == host->child ? "" : ".", cJSON_IsString(x) ? x->valuestring : "");
    if (jstr(url, "port")) ll_buf_printf(&b, ":%s", jstr(url, "port"));
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(url, "path");
    if (cJSON_IsString(path)) ll_buf_printf(&b, "%s%s", path->valuestring[0] == '/' ? "" : "/", path->valuestring);
    for (const cJSON *x = cJSON_IsArray(path) ? path->child : NULL; x; x = x->next)
        ll_buf_printf(&b, "/%s", cJSON_IsString(x) ? x->valuestring : jstr(x, "value") ? jstr(x, "value") : "");
    int first = 1;
    for (const cJSON *q = cJSON_IsArray(query) ? query->child : NULL; q; q = q->next) {
        if (disabled(q) || !jstr(q, "key")) continue;
        ll_buf_printf(&b, "%s%s=%s", first ? "?" : "&", jstr(q, "key"), jstr(q, "value") ? jstr(q, "value") : "");
        first = 0;
    }
    if (b.len == 0) {
        ll_buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* The value of key in a v2.1 auth list ([{key, value}]) or a v2.0 object. */
static const char *auth_param(const cJSON *params, const char *key, char *dst, size_t len) {
    dst[0] = 0;
    if (cJSON_IsObject(params)) scalar_text(cJSON_GetObjectItemCaseSensitive(params, key), dst, len);
    for (const cJSON *x = cJSON_IsArray(params) ? params->child : NULL; x; x = x->next)
        if (jstr(x, "key") && strcmp(jstr(x, "key"), key) == 0) scalar_text(cJSON_GetObjectItemCaseSensitive(x, "value"), dst, len);
    return dst;
}

/* The auth as a header (or a comment) for a request. */
static void pm_auth(pm *p, const cJSON *auth, ll_req_pairs *headers, int indent, char **query_add) {
    const char *type = jstr(auth, "type");
    if (!type || strcmp(type, "noauth") == 0) return;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(auth, type);
    char a[1024], b2[1024];
    if (strcmp(type, "bearer") == 0) {
        auth_param(params, "token", a, sizeof(a));
        char *tok = pm_expr_dup(p, a);
        size_t n = strlen(tok) + 32;
        char *code = ll_xmalloc(n);
        snprintf(code, n, "\"Bearer \" .. %s", tok);
        ll_req_pairs_add(headers, "Authorization", code);
        free(code);
        free(tok);
    } else if (strcmp(type, "basic") == 0) {
        auth_param(params, "username", a, sizeof(a));
        auth_param(params, "password", b2, sizeof(b2));
        char both[2100];
        snprintf(both, sizeof(both), "%s:%s", a, b2);
        ll_buf code = {0};
        if (strstr(both, "{{")) {
            p->need_encoding = 1;
            ll_buf_puts(&code, "\"Basic \" .. encoding.b64encode(");
            pm_expr(p, &code, both);
            ll_buf_puts(&code, ")");
        } else {
            char *enc = ll_base64_encode(both, strlen(both), NULL);
            ll_buf_puts(&code, "\"Basic ");
            ll_buf_puts(&code, enc);
            ll_buf_puts(&code, "\"");
            free(enc);
        }
        ll_req_pairs_add(headers, "Authorization", code.p);
        ll_buf_free(&code);
    } else if (strcmp(type, "apikey") == 0) {
        auth_param(params, "key", a, sizeof(a));
        auth_param(params, "value", b2, sizeof(b2));
        char in[32];
        auth_param(params, "in", in, sizeof(in));
        if (strcmp(in, "query") == 0) {
            size_t n = strlen(a) + strlen(b2) + 2;
            *query_add = ll_xmalloc(n);
            snprintf(*query_add, n, "%s=%s", a, b2);
        } else {
            char *code = pm_expr_dup(p, b2);
            ll_req_pairs_add(headers, *a ? a : "X-API-Key", code);
            free(code);
        }
    } else {
        char line[256];
        snprintf(line, sizeof(line), "Postman auth '%s' is not converted: add its header here", type);
        ll_emit_comment(&p->code, indent, line);
    }
}

static void script_comments(pm *p, const cJSON *events, int indent, const char *whose) {
    for (const cJSON *ev = cJSON_IsArray(events) ? events->child : NULL; ev; ev = ev->next) {
        const char *listen = jstr(ev, "listen");
        const cJSON *script = cJSON_GetObjectItemCaseSensitive(ev, "script");
        const cJSON *exec = cJSON_GetObjectItemCaseSensitive(script, "exec");
        if (!listen || (!cJSON_IsArray(exec) && !cJSON_IsString(exec))) continue;
        int lines = cJSON_IsString(exec) ? (*exec->valuestring != 0) : 0;
        for (const cJSON *l = cJSON_IsArray(exec) ? exec->child : NULL; l; l = l->next) lines += cJSON_IsString(l) && *l->valuestring;
        if (!lines) continue;
        char head[256];
        snprintf(head, sizeof(head), "%s%s script (Postman's JavaScript, not run; redo it in Lua if it matters):",
                 whose, strcmp(listen, "prerequest") == 0 ? "pre-request" : "test");
        ll_emit_comment(&p->code, indent, head);
        if (cJSON_IsString(exec)) ll_emit_comment(&p->code, indent + 2, exec->valuestring);
        for (const cJSON *l = cJSON_IsArray(exec) ? exec->child : NULL; l; l = l->next)
            if (cJSON_IsString(l)) ll_emit_comment(&p->code, indent + 2, l->valuestring);
    }
}

/* The status a test script expects (pm.response.to.have.status(201)), or 0. */
static int tested_status(const cJSON *events) {
    for (const cJSON *ev = cJSON_IsArray(events) ? events->child : NULL; ev; ev = ev->next) {
        const cJSON *exec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "script"), "exec");
        for (const cJSON *l = cJSON_IsArray(exec) ? exec->child : NULL; l; l = l->next) {
            const char *s = cJSON_IsString(l) ? strstr(l->valuestring, "to.have.status(") : NULL;
            if (s && isdigit((unsigned char)s[15])) return atoi(s + 15);
        }
    }
    return 0;
}

/* The gjson path of a JavaScript property path (".a.b[0].c", "['a']")
 * into dst; 0 when it is not one. */
static int js_path(const char *s, char *dst, size_t len) {
    size_t o = 0;
    dst[0] = 0;
    while (*s == '.' || *s == '[') {
        size_t n;
        const char *from;
        if (*s == '.') {
            from = ++s;
            n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");
            s += n;
        } else if (s[1] == '"' || s[1] == '\'') {
            char q = s[1];
            from = s + 2;
            n = strcspn(from, q == '"' ? "\"" : "'");
            if (from[n] != q || from[n + 1] != ']') return 0;
            s = from + n + 2;
        } else {
            from = s + 1;
            n = strspn(from, "0123456789");
            if (from[n] != ']') return 0;
            s = from + n + 1;
        }
        if (n == 0 || memchr(from, '.', n) || o + n + 2 >= len) return 0;
        o += (size_t)snprintf(dst + o, len - o, "%s%.*s", o ? "." : "", (int)n, from);
    }
    return o > 0;
}

/* A test script's `pm.environment.set("token", pm.response.json().token)`
 * (or collectionVariables, globals, variables; or through a variable that
 * holds pm.response.json()) as `vars.token = res:json("token")`. */
static void script_sets(pm *p, const cJSON *events, int indent) {
    for (const cJSON *ev = cJSON_IsArray(events) ? events->child : NULL; ev; ev = ev->next) {
        if (!jstr(ev, "listen") || strcmp(jstr(ev, "listen"), "test") != 0) continue;
        const cJSON *exec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "script"), "exec");
        char holder[64] = ""; /* the name of `var x = pm.response.json()` */
        for (const cJSON *l = cJSON_IsArray(exec) ? exec->child : NULL; l; l = l->next) {
            const char *line = cJSON_IsString(l) ? l->valuestring : "";
            const char *js = strstr(line, "= pm.response.json()");
            if (js) {
                const char *e = js;
                while (e > line && e[-1] == ' ') e--;
                const char *b = e;
                while (b > line && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '$')) b--;
                snprintf(holder, sizeof(holder), "%.*s", (int)(e - b), b);
            }
            const char *set = strstr(line, ".set(");
            if (!set || !(strstr(line, "pm.environment") || strstr(line, "pm.collectionVariables") ||
                          strstr(line, "pm.globals") || strstr(line, "pm.variables")))
                continue;
            const char *q = set + 5;
            char quote = *q;
            if (quote != '"' && quote != '\'') continue;
            const char *ne = strchr(q + 1, quote);
            if (!ne || ne[1] != ',') continue;
            char name[128], path[256];
            snprintf(name, sizeof(name), "%.*s", (int)(ne - q - 1), q + 1);
            const char *v = ne + 2;
            while (*v == ' ') v++;
            if (strncmp(v, "pm.response.json()", 18) == 0) v += 18;
            else if (*holder && strncmp(v, holder, strlen(holder)) == 0) v += strlen(holder);
            else continue;
            if (!js_path(v, path, sizeof(path))) continue;
            char code[512];
            var_code(p, name, strlen(name), code, sizeof(code));
            p->sets++;
            ll_emit_indent(&p->code, indent);
            ll_buf_printf(&p->code, "%s = res:json(", code);
            ll_emit_cstr(&p->code, path);
            const char *t = line + strspn(line, " \t");
            ll_buf_printf(&p->code, ") -- the test script's %.*s\n", (int)strcspn(t, "\r\n"), t);
        }
    }
}

/* The body as Lua code into b, or nothing. */
static void pm_body(pm *p, const cJSON *body, ll_buf *b, int indent, ll_req_pairs *headers) {
    const char *mode = jstr(body, "mode");
    if (!mode || disabled(body)) return;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(body, mode);
    if (strcmp(mode, "raw") == 0) {
        const char *raw = jstr(body, "raw");
        if (!raw) return;
        const cJSON *opts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "options"), "raw");
        const char *lang = jstr(opts, "language");
        if (lang && strcmp(lang, "json") == 0 && !ll_req_pairs_find(headers, "Content-Type"))
            ll_req_pairs_add(headers, "Content-Type", "\"application/json\"");
        pm_expr(p, b, raw);
    } else if (strcmp(mode, "urlencoded") == 0 || strcmp(mode, "formdata") == 0) {
        ll_req_pairs fields = {0};
        int form = strcmp(mode, "formdata") == 0;
        for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next) {
            if (disabled(x) || !jstr(x, "key")) continue;
            const char *type = jstr(x, "type");
            if (form && type && strcmp(type, "file") == 0) {
                char line[512];
                const cJSON *src = cJSON_GetObjectItemCaseSensitive(x, "src");
                snprintf(line, sizeof(line),
                         "file field %s: %s in Postman; add it to files = { %s = http.file(ll.open(PATH, \"b\"), NAME) }",
                         jstr(x, "key"), cJSON_IsString(src) ? src->valuestring : "a file", jstr(x, "key"));
                ll_emit_comment(&p->code, indent, line);
                continue;
            }
            char v[4096];
            scalar_text(cJSON_GetObjectItemCaseSensitive(x, "value"), v, sizeof(v));
            char *code = pm_expr_dup(p, v);
            ll_req_pairs_add(&fields, jstr(x, "key"), code);
            free(code);
        }
        if (form) {
            /* multipart: libcurl writes the boundary, so no Content-Type of the collection's */
            for (int i = 0; i < headers->n; i++)
                if (strcasecmp(headers->v[i].name, "content-type") == 0) headers->v[i].name[0] = 0;
            ll_buf_puts(b, "http.Form{\n");
            ll_emit_indent(b, indent + 2);
            ll_buf_puts(b, "fields = ");
            ll_req_form(b, indent + 2, &fields);
            ll_buf_puts(b, ",\n");
            ll_emit_indent(b, indent);
            ll_buf_puts(b, "}");
        } else {
            ll_req_form(b, indent, &fields);
        }
        ll_req_pairs_free(&fields);
    } else if (strcmp(mode, "graphql") == 0) {
        const cJSON *gq = cJSON_GetObjectItemCaseSensitive(body, "graphql");
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "query", jstr(gq, "query") ? jstr(gq, "query") : "");
        const char *vs = jstr(gq, "variables");
        cJSON *vj = vs && *vs ? cJSON_Parse(vs) : NULL;
        if (vj) cJSON_AddItemToObject(doc, "variables", vj);
        char *text = cJSON_PrintUnformatted(doc);
        pm_expr(p, b, text);
        free(text);
        cJSON_Delete(doc);
        if (!ll_req_pairs_find(headers, "Content-Type")) ll_req_pairs_add(headers, "Content-Type", "\"application/json\"");
    } else if (strcmp(mode, "file") == 0) {
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(body, "file");
        char line[512];
        snprintf(line, sizeof(line), "the body is the file %s in Postman: give it as ll.open(PATH, \"b\") in init code",
                 jstr(file, "src") ? jstr(file, "src") : "(none chosen)");
        ll_emit_comment(&p->code, indent, line);
    }
}

static int pm_request(pm *p, const cJSON *item, const char *path, const cJSON *auth, int indent) {
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(item, "request");
    const cJSON *url = cJSON_IsString(req) ? req : cJSON_GetObjectItemCaseSensitive(req, "url");
    char *text = pm_url(url);
    if (!text) return fail(p, "%s.request: no url", path);
    const char *name = jstr(item, "name");
    char method[32];
    snprintf(method, sizeof(method), "%s", jstr(req, "method") ? jstr(req, "method") : "GET");
    for (char *m = method; *m; m++) *m = (char)toupper((unsigned char)*m);
    if (name && *name) ll_emit_comment(&p->code, indent, name);
    const char *desc = jstr(req, "description");
    if (desc && *desc) ll_emit_comment(&p->code, indent, desc);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(item, "event");
    script_comments(p, events, indent, "");
    ll_req_pairs headers = {0};
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(req, "header");
    for (const cJSON *x = cJSON_IsArray(hs) ? hs->child : NULL; x; x = x->next) {
        if (disabled(x) || !jstr(x, "key") || !*jstr(x, "key")) continue;
        char v[4096];
        scalar_text(cJSON_GetObjectItemCaseSensitive(x, "value"), v, sizeof(v));
        char *code = pm_expr_dup(p, v);
        ll_req_pairs_add(&headers, jstr(x, "key"), code);
        free(code);
    }
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(req, "auth");
    char *query_add = NULL;
    if (!ll_req_pairs_find(&headers, "Authorization")) pm_auth(p, cJSON_IsObject(own) ? own : auth, &headers, indent, &query_add);
    if (query_add) {
        size_t n = strlen(text) + strlen(query_add) + 2;
        char *joined = ll_xmalloc(n);
        snprintf(joined, n, "%s%c%s", text, strchr(text, '?') ? '&' : '?', query_add);
        free(text);
        free(query_add);
        text = joined;
    }
    /* Postman sends a URL without a scheme over http:// */
    if (!strstr(text, "://") && strncmp(text, "{{", 2) != 0) {
        size_t n = strlen(text) + 8;
        char *with = ll_xmalloc(n);
        snprintf(with, n, "http://%s", text);
        free(text);
        text = with;
    }
    ll_buf body = {0};
    pm_body(p, cJSON_GetObjectItemCaseSensitive(req, "body"), &body, indent, &headers);
    ll_req_pairs kept = {0}; /* without the headers the body dropped */
    for (int i = 0; i < headers.n; i++)
        if (headers.v[i].name[0]) ll_req_pairs_add(&kept, headers.v[i].name, headers.v[i].code);
    char *url_code = pm_expr_dup(p, text);
    ll_req_emit(&p->code, indent, method, url_code, body.len ? body.p : NULL, &kept);
    int status = tested_status(events);
    char label[300];
    snprintf(label, sizeof(label), "%s: status is %s", name && *name ? name : method, status ? "" : "2xx or 3xx");
    if (status) snprintf(label + strlen(label), sizeof(label) - strlen(label), "%d", status);
    ll_emit_indent(&p->code, indent);
    ll_buf_puts(&p->code, "ll.check(res, { [");
    ll_emit_cstr(&p->code, label);
    if (status) ll_buf_printf(&p->code, "] = function(r) return r.status == %d end })\n", status);
    else ll_buf_puts(&p->code, "] = function(r) return r.status >= 200 and r.status < 400 end })\n");
    script_sets(p, events, indent);
    p->nreq++;
    free(url_code);
    free(text);
    ll_buf_free(&body);
    ll_req_pairs_free(&headers);
    ll_req_pairs_free(&kept);
    return 0;
}

/* The items of a folder (or the collection) at indent; auth is the one
 * they inherit. */
static int pm_items(pm *p, const cJSON *items, const char *path, const cJSON *auth, int indent, int depth) {
    if (depth > MAX_DEPTH) return fail(p, "%s: folders nested deeper than %d levels", path, MAX_DEPTH);
    if (!cJSON_IsArray(items)) return fail(p, "%s: not a list", path);
    int i = 0, first = 1;
    for (const cJSON *it = items->child; it; it = it->next, i++) {
        char sub[1024];
        snprintf(sub, sizeof(sub), "%s[%d]", path, i);
        if (!cJSON_IsObject(it)) return fail(p, "%s: not an object", sub);
        const cJSON *own = cJSON_GetObjectItemCaseSensitive(it, "auth");
        const cJSON *inherited = cJSON_IsObject(own) ? own : auth;
        if (!first) ll_buf_puts(&p->code, "\n");
        first = 0;
        const cJSON *children = cJSON_GetObjectItemCaseSensitive(it, "item");
        if (children) {
            const char *name = jstr(it, "name");
            char group[256];
            size_t o = 0;
            for (const char *t = name ? name : ""; *t && o + 1 < sizeof(group); t++)
                if (!(t[0] == ':' && t[1] == ':')) group[o++] = *t;
            group[o] = 0;
            char items_path[1100];
            snprintf(items_path, sizeof(items_path), "%s.item", sub);
            ll_emit_indent(&p->code, indent);
            ll_buf_puts(&p->code, "ll.group(");
            ll_emit_cstr(&p->code, *group ? group : "folder");
            ll_buf_puts(&p->code, ", function()\n");
            script_comments(p, cJSON_GetObjectItemCaseSensitive(it, "event"), indent + 2, "the folder's ");
            if (pm_items(p, children, items_path, inherited, indent + 2, depth + 1) < 0) return -1;
            ll_emit_indent(&p->code, indent);
            ll_buf_puts(&p->code, "end)\n");
        } else if (cJSON_GetObjectItemCaseSensitive(it, "request")) {
            if (pm_request(p, it, sub, auth, indent) < 0) return -1;
        } else {
            return fail(p, "%s: neither a request nor a folder (no request, no item)", sub);
        }
    }
    return 0;
}

/* "  name = __ENV.name" of a vars entry. */
static void env_read(ll_buf *b, const char *name) {
    ll_buf_puts(b, "  ");
    ll_emit_key(b, name);
    if (ll_emit_is_ident(name)) {
        ll_buf_printf(b, " = __ENV.%s", name);
    } else {
        ll_buf_puts(b, " = __ENV[");
        ll_emit_cstr(b, name);
        ll_buf_puts(b, "]");
    }
}

/* The collection's version from info.schema: 21, 20, 1 (refused) or 0. */
static int pm_version(const cJSON *doc) {
    const char *schema = jstr(cJSON_GetObjectItemCaseSensitive(doc, "info"), "schema");
    if (!schema) return cJSON_GetObjectItemCaseSensitive(doc, "requests") ? 1 : 0;
    if (strstr(schema, "/v2.1.")) return 21;
    if (strstr(schema, "/v2.0.")) return 20;
    if (strstr(schema, "/v1.")) return 1;
    return 0;
}

int ll_convert_postman(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen) {
    pm p = {.o = o, .err = err, .errlen = errlen};
    int version = pm_version(doc), rc = 0;
    if (version == 1)
        return fail(&p, "Postman collection v1 is not supported (v2.1 and v2.0 are: export it again from Postman as v2.1)");
    if (version == 0) {
        const char *schema = jstr(cJSON_GetObjectItemCaseSensitive(doc, "info"), "schema");
        return fail(&p, "info.schema: not a Postman collection schema I know ('%s'; v2.1 and v2.0 are supported)",
                    schema ? schema : "");
    }
    p.v20 = version == 20;
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(doc, "variable");
    for (const cJSON *v = cJSON_IsArray(vs) ? vs->child : NULL; v; v = v->next) {
        const char *key = jstr(v, "key") ? jstr(v, "key") : jstr(v, "id");
        if (!key || !*key || disabled(v) || ll_req_pairs_find(&p.vars, key)) continue;
        char text[4096];
        scalar_text(cJSON_GetObjectItemCaseSensitive(v, "value"), text, sizeof(text));
        ll_buf code = {0};
        ll_emit_cstr(&code, text);
        ll_req_pairs_add(&p.vars, key, code.p);
        ll_buf_free(&code);
    }
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(doc, "auth");
    script_comments(&p, cJSON_GetObjectItemCaseSensitive(doc, "event"), 2, "the collection's ");
    rc = pm_items(&p, cJSON_GetObjectItemCaseSensitive(doc, "item"), "item", cJSON_IsObject(auth) ? auth : NULL, 2, 0);
    if (rc == 0 && p.nreq == 0) rc = fail(&p, "item: no request to convert");
    if (rc == 0) {
        ll_buf *b = &out->script;
        const cJSON *info = cJSON_GetObjectItemCaseSensitive(doc, "info");
        const char *slash = o->output ? strrchr(o->output, '/') : NULL;
        const char *in = strrchr(o->input, '/') ? strrchr(o->input, '/') + 1 : o->input;
        ll_buf_printf(b, "-- %s -- written by `luaload convert` from %s (Postman collection v%s",
                      o->output ? (slash ? slash + 1 : o->output) : "script.lua", in, p.v20 ? "2.0" : "2.1");
        if (jstr(info, "name"))
            ll_buf_printf(b, " \"%.*s\"", (int)strcspn(jstr(info, "name"), "\r\n"), jstr(info, "name"));
        ll_buf_printf(b, "): %d request%s.\n", p.nreq, p.nreq == 1 ? "" : "s");
        if (jstr(info, "description")) ll_emit_comment(b, 0, jstr(info, "description"));
        ll_buf_puts(b, "--\n-- Check before running it:\n"
                       "--   - vars: each variable is read from the environment first (-e name=value), else\n"
                       "--     the collection's value; Postman environments and globals are not read\n"
                       "--   - pre-request and test scripts are comments: what they did (setting variables,\n"
                       "--     checking bodies) must be redone in Lua\n"
                       "--   - each request checks the status a test expects, else any 2xx or 3xx\n"
                       "--   - options: one VU, one iteration; set the load you want (docs/scenarios.md)\n");
        ll_buf_puts(b, "local http = require(\"luaload.http\")\nlocal ll = require(\"luaload\")\n");
        if (p.need_utils) ll_buf_puts(b, "local utils = require(\"luaload.utils\")\n");
        if (p.need_encoding) ll_buf_puts(b, "local encoding = require(\"luaload.encoding\")\n");
        ll_buf_puts(b, "\nlocal vars = {\n");
        for (int i = 0; i < p.vars.n; i++) {
            env_read(b, p.vars.v[i].name);
            ll_buf_printf(b, " or %s,\n", p.vars.v[i].code);
        }
        for (int i = 0; i < p.nunknown; i++) {
            env_read(b, p.unknown[i]);
            ll_buf_puts(b, " or \"\", -- not in the collection (a Postman environment's?): set it with -e\n");
        }
        ll_buf_puts(b, "}\n\noptions = {\n  vus = 1,\n  iterations = 1,\n  thresholds = { checks = { \"rate==1\" } },\n}\n\n");
        ll_buf_puts(b, "function default()\n  local res\n");
        if (p.sets)
            ll_buf_puts(b, "  -- this iteration's variables: what the tests set stays here, not seen by other VUs\n"
                           "  local vars = setmetatable({}, { __index = vars })\n");
        ll_buf_append(b, p.code.p, p.code.len);
        ll_buf_puts(b, "end\n");
    }
    ll_buf_free(&p.code);
    ll_req_pairs_free(&p.vars);
    for (int i = 0; i < p.nunknown; i++) free(p.unknown[i]);
    free(p.unknown);
    return rc;
}
