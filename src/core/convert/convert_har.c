/* convert_har.c -- a HAR 1.1/1.2 recording (what Chrome, Firefox and
 * Charles export) into a script (see convert.h): one ll.group per page,
 * the requests in order with the headers worth sending again, their
 * bodies (JSON as a table, forms as tables, multipart as http.Form,
 * binary ones from a file beside the script), the recorded pauses as
 * sleeps, a status check each, and the values a response gave that a
 * later request sent back (a token in JSON, a CSRF field in HTML) taken
 * from the response at run time.
 *
 * Owns: reading HAR entries, following recorded redirects, the static
 * and domain filters, correlation, and the HAR script's layout. */
#include "convert_har.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base64.h"
#include "convert_emit.h"
#include "convert_expr.h"
#include "convert_req.h"
#include "xmalloc.h"

static int fail(har *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(har *h, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(h->err, h->errlen, "%s: %s", h->o->input, what);
    return -1;
}

/* ISO 8601 as HAR writes it (2026-12-08T00:43:40.123Z, or +01:00) in
 * seconds, or 0. */
static double har_time(const char *s) {
    struct tm tm = {0};
    int n = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                     &tm.tm_sec, &n) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double t = (double)timegm(&tm);
    const char *p = s + n;
    if (*p == '.') {
        double scale = 0.1;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10) t += (*p - '0') * scale;
    }
    int oh, om;
    if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om) == 2)
        t -= (*p == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
    return t;
}

/* The origin of url (scheme://host[:port]) into dst, and its path (from
 * the first '/' after the host, or ""). */
static const char *url_split(const char *url, char *dst, size_t len) {
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "/?#");
    size_t o = (size_t)(p - url) + n;
    snprintf(dst, len, "%.*s", (int)o, url);
    return url + o;
}

/* url's host (no port, no credentials) into dst. */
static void url_host(const char *url, char *dst, size_t len) {
    char origin[512];
    url_split(url, origin, sizeof(origin));
    const char *p = strstr(origin, "://");
    p = p ? p + 3 : origin;
    const char *at = strrchr(p, '@');
    if (at) p = at + 1;
    size_t n = *p == '[' ? strcspn(p, "]") + 1 : strcspn(p, ":");
    snprintf(dst, len, "%.*s", (int)n, p);
}

static int is_static(const cJSON *e, const char *url) {
    static const char *const TYPES[] = {"image", "stylesheet", "script", "font", "media"};
    const char *rt = jstr(e, "_resourceType");
    for (size_t i = 0; rt && i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        if (strcmp(rt, TYPES[i]) == 0) return 1;
    const char *mime = jstr(jobj(jobj(e, "response"), "content"), "mimeType");
    if (mime && (strncasecmp(mime, "image/", 6) == 0 || strncasecmp(mime, "font/", 5) == 0 ||
                 strncasecmp(mime, "video/", 6) == 0 || strncasecmp(mime, "audio/", 6) == 0 ||
                 strncasecmp(mime, "text/css", 8) == 0 || strcasestr(mime, "javascript")))
        return 1;
    static const char *const EXTS[] = {".png", ".jpg", ".jpeg", ".gif", ".svg",  ".ico", ".webp", ".avif",
                                       ".css", ".js",  ".mjs",  ".map", ".woff", ".woff2", ".ttf", ".otf",
                                       ".eot", ".mp4", ".webm", ".mp3", ".wav"};
    char origin[512];
    const char *path = url_split(url, origin, sizeof(origin));
    size_t n = strcspn(path, "?#");
    for (size_t i = 0; i < sizeof(EXTS) / sizeof(EXTS[0]); i++)
        if (ends_with(path, n, EXTS[i])) return 1;
    return 0;
}

static int domain_kept(const har *h, const char *url) {
    if (!h->o->only_domains) return 1;
    char host[256], origin[512];
    url_host(url, host, sizeof(host));
    url_split(url, origin, sizeof(origin));
    const char *hostport = strstr(origin, "://") ? strstr(origin, "://") + 3 : origin;
    for (const char *p = h->o->only_domains; *p;) {
        size_t n = strcspn(p, ",");
        size_t hn = strlen(host);
        if (n && ((n == hn && strncasecmp(p, host, n) == 0) || (strlen(hostport) == n && strncasecmp(p, hostport, n) == 0) ||
                  (hn > n && host[hn - n - 1] == '.' && strncasecmp(host + hn - n, p, n) == 0)))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

static int status_of(const cJSON *e) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(jobj(e, "response"), "status");
    return cJSON_IsNumber(s) ? s->valueint : 0;
}

/* Where the redirect in e's response goes, resolved against its URL, into
 * dst; 0 when it is no redirect. */
static int redirect_target(const cJSON *e, char *dst, size_t len) {
    int st = status_of(e);
    if (st != 301 && st != 302 && st != 303 && st != 307 && st != 308) return 0;
    const cJSON *resp = jobj(e, "response");
    const char *loc = jstr(resp, "redirectURL");
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(resp, "headers");
    for (const cJSON *x = cJSON_IsArray(hs) ? hs->child : NULL; x && (!loc || !*loc); x = x->next)
        if (jstr(x, "name") && strcasecmp(jstr(x, "name"), "location") == 0) loc = jstr(x, "value");
    if (!loc || !*loc) return 0;
    const char *url = jstr(jobj(e, "request"), "url");
    char origin[512];
    const char *path = url_split(url, origin, sizeof(origin));
    if (strstr(loc, "://")) snprintf(dst, len, "%s", loc);
    else if (loc[0] == '/') snprintf(dst, len, "%s%s", origin, loc);
    else {
        size_t dir = strcspn(path, "?#");
        while (dir > 0 && path[dir - 1] != '/') dir--;
        snprintf(dst, len, "%s%.*s%s", origin, (int)dir, dir ? path : "/", loc);
    }
    return 1;
}

/* ---- reading the entries into steps ---- */

static int har_read(har *h, const cJSON *entries) {
    int n = cJSON_GetArraySize(entries), i = 0;
    const cJSON **kept = ll_xcalloc((size_t)n + 1, sizeof(*kept));
    int *idx = ll_xcalloc((size_t)n + 1, sizeof(int));
    int nkept = 0, rc = 0;
    for (const cJSON *e = entries->child; e && rc == 0; e = e->next, i++) {
        const cJSON *req = jobj(e, "request");
        if (!cJSON_IsObject(e)) rc = fail(h, "log.entries[%d]: not an object", i);
        else if (!req) rc = fail(h, "log.entries[%d]: no request", i);
        else if (!jstr(req, "url") || !*jstr(req, "url")) rc = fail(h, "log.entries[%d].request: no url", i);
        else if (!jstr(req, "method") || !*jstr(req, "method"))
            rc = fail(h, "log.entries[%d].request: no method", i);
        if (rc) break;
        const char *url = jstr(req, "url");
        if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) h->skipped_other++;
        else if (!domain_kept(h, url)) h->skipped_domain++;
        else if (h->o->skip_static && is_static(e, url)) h->skipped_static++;
        else {
            kept[nkept] = e;
            idx[nkept++] = i;
        }
    }
    for (int k = 0; k < nkept && rc == 0; k++) {
        ll_xgrow((void **)&h->steps, &h->scap, h->nsteps + 1, sizeof(har_step));
        har_step *s = &h->steps[h->nsteps++];
        s->entry = s->last = kept[k];
        s->index = idx[k];
        s->pageref = jstr(kept[k], "pageref");
        s->start = har_time(jstr(kept[k], "startedDateTime"));
        /* the redirects the browser followed: the script's request follows them */
        char target[4096];
        while (k + 1 < nkept && redirect_target(s->last, target, sizeof(target)) &&
               strcmp(target, jstr(jobj(kept[k + 1], "request"), "url")) == 0)
            s->last = kept[++k];
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(s->last, "time");
        double last_start = har_time(jstr(s->last, "startedDateTime"));
        s->end = last_start && s->start ? last_start + (cJSON_IsNumber(t) && t->valuedouble > 0 ? t->valuedouble / 1000 : 0)
                                        : 0;
    }
    free(kept);
    free(idx);
    return rc;
}

/* ---- writing ---- */

static int header_dropped(const char *name) {
    static const char *const DROP[] = {"host",    "cookie",          "content-length", "connection",       "keep-alive",
                                       "proxy-connection", "proxy-authorization", "te", "trailer", "transfer-encoding",
                                       "upgrade"};
    if (name[0] == ':') return 1; /* HTTP/2 and HTTP/3 pseudo-headers */
    /* the browser's own hints: they describe the browser, not the user */
    if (strncasecmp(name, "sec-ch-", 7) == 0 || strncasecmp(name, "sec-fetch-", 10) == 0) return 1;
    for (size_t i = 0; i < sizeof(DROP) / sizeof(DROP[0]); i++)
        if (strcasecmp(name, DROP[i]) == 0) return 1;
    return 0;
}

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decodes s[0..n) ('+' is a space) into a new string; NULL when
 * a % escape is broken. */
static char *form_decode(const char *s, size_t n) {
    char *d = ll_xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            d[o++] = ' ';
        } else if (s[i] == '%') {
            int a = i + 1 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int b2 = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (a < 0 || b2 < 0) {
                free(d);
                return NULL;
            }
            d[o++] = (char)(a * 16 + b2);
            i += 2;
        } else {
            d[o++] = s[i];
        }
    }
    d[o] = 0;
    return d;
}

static int valid_text(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return 0;
    }
    return 1;
}

/* A form-urlencoded body as a table; 0 when it does not decode. */
static int body_form(har *h, ll_buf *b, int indent, const char *text) {
    ll_req_pairs f = {0};
    int ok = 1;
    for (const char *p = text; *p && ok;) {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        char *name = form_decode(p, eq ? (size_t)(eq - p) : n);
        char *value = eq ? form_decode(eq + 1, n - (size_t)(eq + 1 - p)) : ll_xstrdup("");
        ok = name && value && *name;
        if (ok) {
            char *code = har_expr_dup(h, value, strlen(value), 1);
            ll_req_pairs_add(&f, name, code);
            free(code);
        }
        free(name);
        free(value);
        p += n + (p[n] == '&');
    }
    ok = ok && f.n;
    if (ok) ll_req_form(b, indent, &f);
    ll_req_pairs_free(&f);
    return ok;
}

/* Whether a JSON body goes through a Lua table and json.encode unchanged:
 * no empty list (it would come back as {}), no object with only numeric
 * keys (it would come back a list). */
static int json_tableable(const cJSON *v) {
    if (cJSON_IsArray(v) && !v->child) return 0;
    if (cJSON_IsObject(v) && v->child) {
        int numeric = 1;
        for (const cJSON *c = v->child; c; c = c->next) numeric &= c->string && c->string[0] && strspn(c->string, "0123456789") == strlen(c->string);
        if (numeric) return 0;
    }
    for (const cJSON *c = (cJSON_IsArray(v) || cJSON_IsObject(v)) ? v->child : NULL; c; c = c->next)
        if (!json_tableable(c)) return 0;
    return 1;
}

static int json_has_sub(har *h, const cJSON *v) {
    if (cJSON_IsString(v)) {
        size_t at;
        return har_next_sub(h, v->valuestring, strlen(v->valuestring), 0, &at) >= 0;
    }
    if (cJSON_IsNumber(v)) {
        char num[32];
        snprintf(num, sizeof(num), "%.17g", v->valuedouble);
        for (int k = 0; k < h->nsubs; k++)
            if (strcmp(h->cands[h->subs[k]].value, num) == 0) return 1;
    }
    for (const cJSON *c = (cJSON_IsArray(v) || cJSON_IsObject(v)) ? v->child : NULL; c; c = c->next)
        if (json_has_sub(h, c)) return 1;
    return 0;
}

/* A JSON value as a Lua table whose leaves may be the step's variables. */
static void json_lua(har *h, ll_buf *b, const cJSON *v, int indent) {
    if (!json_has_sub(h, v)) {
        ll_emit_value(b, v, indent);
        return;
    }
    if (cJSON_IsString(v)) {
        har_expr(h, b, v->valuestring, strlen(v->valuestring), 1);
        return;
    }
    if (cJSON_IsNumber(v)) {
        char num[32];
        snprintf(num, sizeof(num), "%.17g", v->valuedouble);
        for (int k = 0; k < h->nsubs; k++) {
            const har_cand *c = &h->cands[h->subs[k]];
            if (strcmp(c->value, num) == 0) ll_buf_printf(b, c->number ? "%s" : "tonumber(%s)", c->name);
        }
        return;
    }
    ll_buf_puts(b, "{\n");
    for (const cJSON *c = v->child; c; c = c->next) {
        ll_emit_indent(b, indent + 2);
        if (cJSON_IsObject(v)) {
            ll_emit_key(b, c->string);
            ll_buf_puts(b, " = ");
        }
        json_lua(h, b, c, indent + 2);
        ll_buf_puts(b, ",\n");
    }
    ll_emit_indent(b, indent);
    ll_buf_puts(b, "}");
}

/* A body from a file beside the script, read in init code; its variable. */
static void body_file(har *h, ll_buf *b, int step, const char *hint, const void *data, size_t n) {
    char name[64];
    snprintf(name, sizeof(name), "%s-%d.bin", hint, h->steps[step].index);
    const char *file = ll_convert_out_file(h->out, name, data, n);
    char var[64];
    ll_emit_ident(var, sizeof(var), file);
    size_t vl = strlen(var);
    if (vl > 4 && strcmp(var + vl - 4, "_bin") == 0) var[vl - 4] = 0;
    ll_buf_printf(&h->init, "local %s = ll.open(", var);
    ll_emit_cstr(&h->init, file);
    ll_buf_puts(&h->init, ", \"b\") -- recorded, ");
    ll_buf_printf(&h->init, "%zu bytes\n", n);
    ll_buf_puts(b, var);
}

/* A multipart body as http.Form; 0 when it does not parse. Drops the
 * recorded Content-Type (its boundary is the recording's). */
static int body_multipart(har *h, ll_buf *b, int step, int indent, const char *mime, const char *text, size_t len) {
    const char *bp = strcasestr(mime, "boundary=");
    if (!bp) return 0;
    char bnd[256];
    bp += 9;
    size_t bl = *bp == '"' ? strcspn(bp + 1, "\"") : strcspn(bp, "; ");
    snprintf(bnd, sizeof(bnd), "--%.*s", (int)bl, *bp == '"' ? bp + 1 : bp);
    bl = strlen(bnd);
    ll_req_pairs fields = {0}, files = {0};
    const char *p = memmem(text, len, bnd, bl);
    int ok = p != NULL;
    while (ok) {
        p += bl;
        if ((size_t)(p - text) + 2 <= len && memcmp(p, "--", 2) == 0) break;
        const char *hend = memmem(p, len - (size_t)(p - text), "\r\n\r\n", 4);
        const char *next = hend ? memmem(hend, len - (size_t)(hend - text), bnd, bl) : NULL;
        if (!hend || !next || next - hend < 6) {
            ok = 0;
            break;
        }
        char hdrs[1024], name[256] = "", filename[256] = "", ctype[256] = "";
        snprintf(hdrs, sizeof(hdrs), "%.*s", (int)(hend - p), p);
        const char *end = hdrs + strlen(hdrs);
        int has_file = har_tag_attr(hdrs, end, "filename", filename, sizeof(filename));
        char *disp = strcasestr(hdrs, "content-disposition:");
        if (disp) har_tag_attr(disp + 19, end, "name", name, sizeof(name));
        char *ct = strcasestr(hdrs, "content-type:");
        if (ct) snprintf(ctype, sizeof(ctype), "%.*s", (int)strcspn(ct + 13 + strspn(ct + 13, " "), "\r\n"), ct + 13 + strspn(ct + 13, " "));
        const char *data = hend + 4;
        size_t dn = (size_t)(next - data) - 2; /* the CRLF before the boundary */
        if (!*name || ll_req_pairs_find(&fields, name) || ll_req_pairs_find(&files, name)) {
            ok = 0;
            break;
        }
        ll_buf code = {0};
        if (has_file) {
            ll_buf_puts(&code, "http.file(");
            if (dn <= 256 && valid_text(data, dn)) ll_emit_str(&code, data, dn);
            else body_file(h, &code, step, "upload", data, dn);
            ll_buf_puts(&code, ", ");
            ll_emit_cstr(&code, filename);
            ll_buf_puts(&code, ", ");
            ll_emit_cstr(&code, *ctype ? ctype : "application/octet-stream");
            ll_buf_puts(&code, ")");
            ll_req_pairs_add(&files, name, code.p);
        } else {
            har_expr(h, &code, data, dn, 1);
            ll_req_pairs_add(&fields, name, code.p);
        }
        ll_buf_free(&code);
        p = next;
    }
    if (ok) {
        ll_buf_puts(b, "http.Form{\n");
        ll_emit_indent(b, indent + 2);
        ll_buf_puts(b, "fields = ");
        ll_req_form(b, indent + 2, &fields);
        ll_buf_puts(b, ",\n");
        ll_emit_indent(b, indent + 2);
        ll_buf_puts(b, "files = ");
        ll_req_form(b, indent + 2, &files);
        ll_buf_puts(b, ",\n");
        ll_emit_indent(b, indent);
        ll_buf_puts(b, "}");
    }
    ll_req_pairs_free(&fields);
    ll_req_pairs_free(&files);
    return ok;
}

/* The request body of step as Lua code into b (nothing when it has
 * none); *multipart when the recorded Content-Type must go. */
static void har_body(har *h, ll_buf *b, int step, int indent, int *multipart) {
    const cJSON *pd = jobj(jobj(h->steps[step].entry, "request"), "postData");
    const char *text = jstr(pd, "text");
    const char *mime = jstr(pd, "mimeType");
    if (!pd) return;
    if (!text) {
        /* Firefox and Charles give a form's params without its text */
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(pd, "params");
        if (!cJSON_IsArray(params) || !params->child) return;
        ll_req_pairs f = {0};
        for (const cJSON *x = params->child; x; x = x->next) {
            if (!jstr(x, "name")) continue;
            const char *v = jstr(x, "value") ? jstr(x, "value") : "";
            char *code = har_expr_dup(h, v, strlen(v), 1);
            ll_req_pairs_add(&f, jstr(x, "name"), code);
            free(code);
        }
        ll_req_form(b, indent, &f);
        ll_req_pairs_free(&f);
        return;
    }
    size_t len = strlen(text);
    uint8_t *raw = NULL;
    const char *enc = jstr(pd, "encoding");
    if (enc && strcmp(enc, "base64") == 0) {
        char err[128];
        raw = ll_base64_decode(text, len, &len, err, sizeof(err));
        if (raw) text = (const char *)raw;
        else len = strlen(text);
    }
    if (!mime) mime = "";
    if (len == 0) {
        ll_buf_puts(b, "\"\"");
    } else if (strcasestr(mime, "multipart/form-data") && body_multipart(h, b, step, indent, mime, text, len)) {
        *multipart = 1;
    } else if (strcasestr(mime, "application/x-www-form-urlencoded") && !raw && body_form(h, b, indent, text)) {
        /* written */
    } else {
        cJSON *doc = strcasestr(mime, "json") && !raw ? cJSON_Parse(text) : NULL;
        if (doc && (cJSON_IsObject(doc) || cJSON_IsArray(doc)) && json_tableable(doc)) {
            ll_buf_puts(b, "json.encode(");
            json_lua(h, b, doc, indent);
            ll_buf_puts(b, ")");
            h->need_json = 1;
        } else if (len <= INLINE_BODY && valid_text(text, len)) {
            har_expr(h, b, text, len, 1);
        } else {
            body_file(h, b, step, "body", text, len);
        }
        cJSON_Delete(doc);
    }
    free(raw);
}

/* "GET /path" (the origin too when it is not base's) into dst. */
static void step_label(const har *h, int j, char *dst, size_t len) {
    const cJSON *req = jobj(h->steps[j].entry, "request");
    const char *url = jstr(req, "url");
    char origin[512];
    const char *path = url_split(url, origin, sizeof(origin));
    int same = strcmp(origin, h->base) == 0;
    size_t pl = strcspn(path, "?#");
    char method[32];
    snprintf(method, sizeof(method), "%s", jstr(req, "method"));
    for (char *m = method; *m; m++) *m = (char)toupper((unsigned char)*m);
    snprintf(dst, len, "%s %s%.*s%s", method, same ? "" : origin, (int)(pl > 60 ? 60 : pl), pl ? path : "/",
             pl > 60 ? "..." : "");
}

static void har_step_emit(har *h, int j, int indent) {
    har_step *s = &h->steps[j];
    const cJSON *req = jobj(s->entry, "request");
    const char *url = jstr(req, "url");
    /* what the request sends: the values it sends back from earlier responses */
    const cJSON *pd = jobj(req, "postData");
    const char *texts[64];
    size_t lens[64];
    int nt = 0;
    texts[nt] = url;
    lens[nt++] = strlen(url);
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(req, "headers");
    for (const cJSON *x = cJSON_IsArray(hs) ? hs->child : NULL; x && nt < 62; x = x->next)
        if (jstr(x, "name") && jstr(x, "value") && !header_dropped(jstr(x, "name"))) {
            texts[nt] = jstr(x, "value");
            lens[nt] = strlen(texts[nt]);
            nt++;
        }
    char *decoded = jstr(pd, "text") ? form_decode(jstr(pd, "text"), strlen(jstr(pd, "text"))) : NULL;
    if (jstr(pd, "text")) {
        texts[nt] = jstr(pd, "text");
        lens[nt++] = strlen(jstr(pd, "text"));
    }
    if (decoded) {
        texts[nt] = decoded;
        lens[nt++] = strlen(decoded);
    }
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(pd, "params");
    for (const cJSON *x = cJSON_IsArray(params) ? params->child : NULL; x && nt < 64; x = x->next)
        if (jstr(x, "value")) {
            texts[nt] = jstr(x, "value");
            lens[nt] = strlen(texts[nt]);
            nt++;
        }
    har_step_subs(h, j, texts, lens, nt);
    free(decoded);

    /* comments for the values sent back */
    for (int k = 0; k < h->nsubs; k++) {
        const har_cand *c = &h->cands[h->subs[k]];
        char line[512], from[160];
        step_label(h, c->step, from, sizeof(from));
        snprintf(line, sizeof(line), "%s: from the response to %s above (recorded %.24s%s)", c->name, from, c->value,
                 strlen(c->value) > 24 ? "..." : "");
        ll_emit_comment(&h->code, indent, line);
    }
    ll_buf body = {0};
    int multipart = 0;
    har_body(h, &body, j, indent, &multipart);
    ll_req_pairs headers = {0};
    for (const cJSON *x = cJSON_IsArray(hs) ? hs->child : NULL; x; x = x->next) {
        const char *name = jstr(x, "name"), *value = jstr(x, "value");
        if (!name || !value || header_dropped(name) || (multipart && strcasecmp(name, "content-type") == 0)) continue;
        char *code = har_expr_dup(h, value, strlen(value), 1);
        ll_req_pair *had = ll_req_pairs_find(&headers, name);
        if (had) { /* a repeated header: one line, its values joined */
            size_t n = strlen(had->code) + strlen(code) + 16;
            char *joined = ll_xmalloc(n);
            snprintf(joined, n, "%s .. \", \" .. %s", had->code, code);
            free(had->code);
            had->code = joined;
        } else {
            ll_req_pairs_add(&headers, name, code);
        }
        free(code);
    }
    char *url_code = har_expr_dup(h, url, strlen(url), 1);
    char method[32];
    snprintf(method, sizeof(method), "%s", jstr(req, "method"));
    for (char *m = method; *m; m++) *m = (char)toupper((unsigned char)*m);
    ll_req_emit(&h->code, indent, method, url_code, body.len ? body.p : NULL, &headers);
    free(url_code);
    ll_buf_free(&body);
    ll_req_pairs_free(&headers);

    /* the check: the recorded status (of the last redirect followed) */
    int status = status_of(s->last);
    char label[160];
    step_label(h, j, label, sizeof(label));
    if (status > 0) {
        ll_emit_indent(&h->code, indent);
        ll_buf_puts(&h->code, "ll.check(res, { [");
        char name[256];
        snprintf(name, sizeof(name), "%s: status is %d", label, status);
        ll_emit_cstr(&h->code, name);
        ll_buf_printf(&h->code, "] = function(r) return r.status == %d end })\n", status);
    } else {
        ll_emit_comment(&h->code, indent, "no response was recorded for it (the browser cancelled it?): no check");
    }
    /* the values later requests send back, taken from this response */
    int html = 0;
    for (int k = 0; k < h->ncands; k++) {
        har_cand *c = &h->cands[k];
        if (c->step != j || !c->used) continue;
        if (c->html && !html++) {
            ll_emit_indent(&h->code, indent);
            ll_buf_puts(&h->code, "doc = res:html()\n");
        }
        char line[512];
        snprintf(line, sizeof(line), "%s: %s, sent back below", c->name, c->where);
        ll_emit_comment(&h->code, indent, line);
        ll_emit_indent(&h->code, indent);
        ll_buf_printf(&h->code, "%s = %s\n", c->name, c->how);
    }
}

/* Gives every used candidate a variable name of its own (one per value). */
static void name_vars(har *h) {
    static const char *const TAKEN[] = {"res",    "doc",      "base",     "http", "ll",    "json",  "options",
                                        "default", "tostring", "tonumber", "string", "math", "table", "os",
                                        "v",      "require",  "print",    "type",  "pairs", "ipairs"};
    for (int k = 0; k < h->ncands; k++) {
        har_cand *c = &h->cands[k];
        if (!c->used) continue;
        char name[80];
        snprintf(name, sizeof(name), "%s", c->name);
        for (int n = 2;; n++) {
            int clash = 0;
            for (size_t t = 0; t < sizeof(TAKEN) / sizeof(TAKEN[0]) && !clash; t++) clash = strcmp(name, TAKEN[t]) == 0;
            for (int q = 0; q < k && !clash; q++)
                clash = h->cands[q].used && strcmp(h->cands[q].name, name) == 0 && strcmp(h->cands[q].value, c->value) != 0;
            if (!clash) break;
            snprintf(name, sizeof(name), "%s_%d", c->name, n);
        }
        free(c->name);
        c->name = ll_xstrdup(name);
    }
    /* a closure (a group's function) holds at most 60 upvalues in LuaJIT:
     * many values go in one table instead */
    int distinct = 0;
    for (int k = 0; k < h->ncands; k++) {
        int dup = 0;
        for (int q = 0; q < k && !dup && h->cands[k].used; q++)
            dup = h->cands[q].used && strcmp(h->cands[q].name, h->cands[k].name) == 0;
        distinct += h->cands[k].used && !dup;
    }
    if (distinct <= MAX_LOCALS) return;
    h->vars_table = 1;
    for (int k = 0; k < h->ncands; k++) {
        if (!h->cands[k].used) continue;
        char name[96];
        snprintf(name, sizeof(name), "v.%s", h->cands[k].name);
        free(h->cands[k].name);
        h->cands[k].name = ll_xstrdup(name);
    }
}

/* A group's name: no "::", not empty. */
static void group_open(har *h, const cJSON *pages, const char *pageref) {
    const char *title = NULL;
    for (const cJSON *p = cJSON_IsArray(pages) ? pages->child : NULL; p && !title; p = p->next)
        if (jstr(p, "id") && strcmp(jstr(p, "id"), pageref) == 0) title = jstr(p, "title");
    if (!title || !*title) title = pageref;
    char name[256];
    size_t o = 0;
    for (const char *t = title; *t && o + 1 < sizeof(name); t++)
        if (!(t[0] == ':' && t[1] == ':')) name[o++] = *t;
    name[o] = 0;
    ll_buf_puts(&h->code, "  ll.group(");
    ll_emit_cstr(&h->code, *name ? name : "page");
    ll_buf_puts(&h->code, ", function()\n");
}

static void har_write(har *h, const cJSON *doc) {
    const cJSON *log = jobj(doc, "log");
    const cJSON *pages = cJSON_GetObjectItemCaseSensitive(log, "pages");
    /* the body of default() first: the header says what it holds */
    const char *page = NULL;
    double prev_end = 0;
    int sleeps = 0;
    for (int j = 0; j < h->nsteps; j++) {
        har_step *s = &h->steps[j];
        int in_group = page != NULL;
        double gap = prev_end && s->start ? s->start - prev_end : 0;
        int new_page = (s->pageref || page) && (!s->pageref || !page || strcmp(s->pageref, page) != 0);
        if (new_page && page) {
            ll_buf_puts(&h->code, "  end)\n");
            in_group = 0;
        }
        if (!h->o->no_think_time && gap >= MIN_SLEEP) {
            ll_emit_indent(&h->code, in_group ? 4 : 2);
            ll_buf_printf(&h->code, "ll.sleep(%.1f)\n", gap);
            sleeps++;
        }
        if (new_page && s->pageref) group_open(h, pages, s->pageref);
        page = s->pageref;
        har_step_emit(h, j, page ? 4 : 2);
        if (s->end) prev_end = s->end;
    }
    if (page) ll_buf_puts(&h->code, "  end)\n");

    ll_buf *b = &h->out->script;
    const char *slash = h->o->output ? strrchr(h->o->output, '/') : NULL;
    const char *creator = jstr(jobj(log, "creator"), "name"), *cver = jstr(jobj(log, "creator"), "version");
    const char *in = strrchr(h->o->input, '/') ? strrchr(h->o->input, '/') + 1 : h->o->input;
    ll_buf_printf(b, "-- %s -- written by `luaload convert` from %s (HAR %s", h->o->output ? (slash ? slash + 1 : h->o->output) : "script.lua", in,
                  jstr(log, "version") ? jstr(log, "version") : "1.2");
    ll_buf_printf(b, "):\n-- %d request%s", h->nsteps, h->nsteps == 1 ? "" : "s");
    if (creator) ll_buf_printf(b, " recorded with %s%s%s", creator, cver ? " " : "", cver ? cver : "");
    if (h->skipped_static) ll_buf_printf(b, "\n-- (%d static left out: --skip-static)", h->skipped_static);
    if (h->skipped_domain) ll_buf_printf(b, "\n-- (%d to other hosts left out: --only-domains)", h->skipped_domain);
    if (h->skipped_other) ll_buf_printf(b, "\n-- (%d not HTTP left out: WebSocket, data:)", h->skipped_other);
    int nvars = 0;
    for (int k = 0; k < h->ncands; k++) nvars += h->cands[k].used;
    ll_buf_puts(b, ".\n--\n-- Check before running it:\n");
    if (*h->base)
        ll_buf_printf(b, "--   - requests to %s use `base`: -e BASE_URL=http://host:port sends them elsewhere\n", h->base);
    if (nvars)
        ll_buf_printf(b, "--   - %d value%s a response gave and a later request sent back %s taken from the response\n"
                         "--     at run time (see the comments \"from the response\"); other recorded values (ids,\n"
                         "--     credentials, timestamps) are sent as recorded: make them data where they must vary\n",
                      nvars, nvars == 1 ? "" : "s", nvars == 1 ? "is" : "are");
    else
        ll_buf_puts(b, "--   - every value is sent as recorded (no response value was found in a later request):\n"
                       "--     tokens, ids and credentials may need to come from responses or data\n");
    ll_buf_puts(b, "--   - each request checks the recorded status; cookies are left to each VU's cookie jar\n");
    if (sleeps) ll_buf_puts(b, "--   - the sleeps are the recorded pauses (--no-think-time leaves them out)\n");
    ll_buf_puts(b, "--   - options: one VU, one iteration; set the load you want (docs/scenarios.md)\n");
    ll_buf_puts(b, "local http = require(\"luaload.http\")\nlocal ll = require(\"luaload\")\n");
    if (h->need_json) ll_buf_puts(b, "local json = require(\"luaload.json\")\n");
    ll_buf_puts(b, "\n");
    if (*h->base) {
        ll_buf_puts(b, "local base = ll.env.BASE_URL or ");
        ll_emit_cstr(b, h->base);
        ll_buf_puts(b, "\n\n");
    }
    ll_buf_puts(b, "options = {\n  vus = 1,\n  iterations = 1,\n  thresholds = { checks = { \"rate==1\" } },\n}\n\n");
    if (h->init.len) {
        ll_buf_puts(b, "-- recorded bodies, read beside the script\n");
        ll_buf_append(b, h->init.p, h->init.len);
        ll_buf_puts(b, "\n");
    }
    int html = 0;
    for (int k = 0; k < h->ncands && !html; k++) html = h->cands[k].used && h->cands[k].html;
    ll_buf_puts(b, html ? "function default()\n  local res, doc\n" : "function default()\n  local res\n");
    if (h->vars_table) ll_buf_puts(b, "  local v = {} -- values from responses\n");
    int declared = 0;
    for (int k = 0; k < h->ncands; k++) {
        har_cand *c = &h->cands[k];
        int dup = 0;
        for (int q = 0; q < k && !dup && c->used; q++) dup = h->cands[q].used && strcmp(h->cands[q].name, c->name) == 0;
        if (!c->used || dup || h->vars_table) continue;
        ll_buf_printf(b, declared++ ? ", %s" : "  local %s", c->name);
    }
    if (declared) ll_buf_puts(b, " -- values from responses\n");
    ll_buf_append(b, h->code.p ? h->code.p : "", h->code.len);
    ll_buf_puts(b, "end\n");
}

int ll_convert_har(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen) {
    har h = {.o = o, .out = out, .err = err, .errlen = errlen};
    const cJSON *log = jobj(doc, "log");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(log, "entries");
    const char *version = jstr(log, "version");
    int rc = 0;
    if (version && strcmp(version, "1.2") != 0 && strcmp(version, "1.1") != 0)
        rc = fail(&h, "log.version: HAR %s is not supported (1.1 and 1.2 are)", version);
    else if (!cJSON_IsArray(entries)) rc = fail(&h, "log.entries: not a list");
    if (rc == 0) rc = har_read(&h, entries);
    if (rc == 0 && h.nsteps == 0) rc = fail(&h, "log.entries: no HTTP request to convert (after the filters)");
    if (rc == 0) {
        url_split(jstr(jobj(h.steps[0].entry, "request"), "url"), h.base, sizeof(h.base));
        for (int j = 0; j < h.nsteps; j++) har_step_cands(&h, j);
        har_index_cands(&h);
        har_write(&h, doc);
        name_vars(&h);
        /* names are known only now: write again with them */
        ll_buf_free(&h.code);
        ll_buf_free(&h.init);
        ll_convert_out_free(out);
        h.need_json = 0;
        har_write(&h, doc);
    }
    for (int k = 0; k < h.ncands; k++) {
        free(h.cands[k].value);
        free(h.cands[k].how);
        free(h.cands[k].where);
        free(h.cands[k].name);
    }
    free(h.cands);
    free(h.steps);
    free(h.subs);
    free(h.buckets);
    free(h.has_len);
    ll_buf_free(&h.init);
    ll_buf_free(&h.code);
    return rc;
}
