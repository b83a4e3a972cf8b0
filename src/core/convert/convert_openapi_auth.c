/* convert_openapi_auth.c -- an OpenAPI description's security schemes as
 * credentials the script reads from __ENV: bearer tokens (HTTP bearer,
 * OAuth 2, OpenID Connect), HTTP basic and API keys in a header, the
 * query or a cookie (see convert_openapi.h).
 *
 * Owns: the schemes, their environment variables and the "auth" table. */
#include "convert_openapi.h"

#include <ctype.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_emit.h"
#include "xmalloc.h"

typedef enum kind { BEARER, BASIC, APIKEY, RAW } kind;

typedef struct scheme {
    const char *name;  /* its name in the document */
    char ident[128];   /* auth.<ident> in the script */
    char env[160];     /* the variable (basic: its _USER and _PASSWORD) */
    kind kind;
    const char *in;    /* APIKEY: header, query or cookie */
    const char *key;   /* APIKEY: the header, parameter or cookie name */
    char what[160];    /* for the comment: "OAuth 2 (a bearer token)" */
    int used;
} scheme;

struct ll_oas_auth {
    ll_oas *a;
    scheme *s;
    int n, cap;
};

static void env_name(char *dst, size_t len, const char *ident, const char *suffix) {
    size_t o = 0;
    for (const char *p = ident; *p && o + 1 < len; p++) dst[o++] = (char)toupper((unsigned char)*p);
    dst[o] = 0;
    while (o > 1 && dst[o - 1] == '_') dst[--o] = 0; /* "_" from a reserved word */
    snprintf(dst + o, len - o, "%s", suffix);
}

static void add_scheme(ll_oas_auth *au, const char *name, const cJSON *def) {
    const char *type = ll_oas_schema_str(def, "type"), *sch = ll_oas_schema_str(def, "scheme");
    if (!type) return;
    ll_xgrow((void **)&au->s, &au->cap, au->n + 1, sizeof(scheme));
    scheme *s = &au->s[au->n++];
    memset(s, 0, sizeof(*s));
    s->name = name;
    ll_emit_ident(s->ident, sizeof(s->ident), name);
    if (strcmp(type, "apiKey") == 0) {
        s->kind = APIKEY;
        s->in = ll_oas_schema_str(def, "in") ? ll_oas_schema_str(def, "in") : "header";
        s->key = ll_oas_schema_str(def, "name") ? ll_oas_schema_str(def, "name") : name;
        snprintf(s->what, sizeof(s->what), "an API key, the %s '%.100s'", strcmp(s->in, "query") == 0 ? "query parameter" : s->in,
                 s->key);
        env_name(s->env, sizeof(s->env), s->ident, "");
    } else if (strcmp(type, "basic") == 0 || (strcmp(type, "http") == 0 && sch && strcasecmp(sch, "basic") == 0)) {
        s->kind = BASIC;
        snprintf(s->what, sizeof(s->what), "HTTP basic authentication");
        env_name(s->env, sizeof(s->env), s->ident, "");
    } else if (strcmp(type, "http") == 0 && sch && strcasecmp(sch, "bearer") != 0) {
        s->kind = RAW;
        snprintf(s->what, sizeof(s->what), "HTTP %s authentication (the whole Authorization header)", sch);
        env_name(s->env, sizeof(s->env), s->ident, "_AUTHORIZATION");
    } else {
        s->kind = BEARER;
        snprintf(s->what, sizeof(s->what), "%s (a bearer token)",
                 strcmp(type, "oauth2") == 0 ? "OAuth 2" : strcmp(type, "openIdConnect") == 0 ? "OpenID Connect" : "HTTP bearer");
        env_name(s->env, sizeof(s->env), s->ident, "_TOKEN");
    }
}

ll_oas_auth *ll_oas_auth_new(ll_oas *a) {
    ll_oas_auth *au = ll_xcalloc(1, sizeof(*au));
    au->a = a;
    const cJSON *defs = a->swagger ? cJSON_GetObjectItemCaseSensitive(a->doc, "securityDefinitions")
                                   : cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a->doc, "components"),
                                                                      "securitySchemes");
    for (const cJSON *c = cJSON_IsObject(defs) ? defs->child : NULL; c; c = c->next) {
        const cJSON *def = ll_oas_schema_deref(a, c);
        if (!def) {
            ll_oas_auth_free(au);
            return NULL;
        }
        add_scheme(au, c->string, def);
    }
    return au;
}

void ll_oas_auth_free(ll_oas_auth *au) {
    if (!au) return;
    free(au->s);
    free(au);
}

int ll_oas_auth_needs_encoding(const ll_oas_auth *au) {
    for (int i = 0; i < au->n; i++)
        if (au->s[i].used && au->s[i].kind == BASIC) return 1;
    return 0;
}

void ll_oas_auth_emit_env_note(const ll_oas_auth *au, ll_buf *b) {
    for (int i = 0; i < au->n; i++) {
        const scheme *s = &au->s[i];
        if (!s->used) continue;
        if (s->kind == BASIC) ll_buf_printf(b, "--       %s_USER and %s_PASSWORD: %s\n", s->env, s->env, s->name);
        else ll_buf_printf(b, "--       %s: %s\n", s->env, s->name);
    }
}

void ll_oas_auth_emit_table(const ll_oas_auth *au, ll_buf *b) {
    int any = 0;
    for (int i = 0; i < au->n; i++) any |= au->s[i].used;
    if (!any) return;
    ll_buf_puts(b, "-- the credentials of the security schemes, from the environment (luaload run -e NAME=VALUE)\n"
                   "local auth = {\n");
    for (int i = 0; i < au->n; i++) {
        const scheme *s = &au->s[i];
        if (!s->used) continue;
        ll_buf_printf(b, "  -- %s: %s\n", s->name, s->what);
        if (s->kind == BASIC)
            ll_buf_printf(b, "  %s = (__ENV.%s_USER or \"user\") .. \":\" .. (__ENV.%s_PASSWORD or \"password\"),\n", s->ident,
                          s->env, s->env);
        else ll_buf_printf(b, "  %s = __ENV.%s or \"\",\n", s->ident, s->env);
    }
    ll_buf_puts(b, "}\n\n");
}

static scheme *find(const ll_oas_auth *au, const char *name) {
    for (int i = 0; i < au->n; i++)
        if (strcmp(au->s[i].name, name) == 0) return &au->s[i];
    return NULL;
}


void ll_oas_auth_apply(const ll_oas_auth *au, const cJSON *op, ll_buf *hdr, ll_buf *query, ll_buf *cookie, int indent) {
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(op, "security");
    if (!sec) sec = cJSON_GetObjectItemCaseSensitive(au->a->doc, "security");
    const cJSON *req = cJSON_IsArray(sec) ? sec->child : NULL; /* the first of the alternatives */
    for (const cJSON *c = cJSON_IsObject(req) ? req->child : NULL; c; c = c->next) {
        scheme *s = find(au, c->string);
        if (!s) continue;
        s->used = 1;
        if (s->kind == APIKEY && strcmp(s->in, "query") == 0) {
            ll_buf_puts(query, "{ ");
            ll_emit_cstr(query, s->key);
            ll_buf_printf(query, ", auth.%s }, ", s->ident);
        } else if (s->kind == APIKEY && strcmp(s->in, "cookie") == 0) {
            ll_emit_cstr(cookie, s->key);
            ll_buf_printf(cookie, " .. \"=\" .. enc(auth.%s), ", s->ident);
        } else {
            ll_emit_indent(hdr, indent);
            ll_emit_key(hdr, s->kind == APIKEY ? s->key : "Authorization");
            if (s->kind == BEARER) ll_buf_printf(hdr, " = \"Bearer \" .. auth.%s,\n", s->ident);
            else if (s->kind == BASIC) ll_buf_printf(hdr, " = \"Basic \" .. encoding.b64encode(auth.%s),\n", s->ident);
            else ll_buf_printf(hdr, " = auth.%s,\n", s->ident);
        }
    }
}
