/* convert_har_corr.c -- correlation for the HAR converter: the values a
 * response offered (JSON fields, HTML input and meta values), indexed by
 * hash, and the ones a later request sends back, written as Lua
 * expressions that take them from the response at run time. */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "convert_emit.h"
#include "convert_expr.h"
#include "convert_har.h"
#include "xmalloc.h"

/* ---- correlation: what responses offered ---- */

static int id_like(const char *k) {
    size_t n = strlen(k);
    if (strcasecmp(k, "id") == 0 || ends_with(k, n, "_id") || ends_with(k, n, "-id")) return 1;
    if (n > 2 && k[n - 2] == 'I' && k[n - 1] == 'd' && islower((unsigned char)k[n - 3])) return 1;
    return strcasestr(k, "token") || strcasestr(k, "csrf") || strcasestr(k, "nonce") || strcasestr(k, "session") ||
           strcasestr(k, "uuid");
}

/* Whether a response's value may be one the server made for the session:
 * a token or an id has a digit (words, MIME types, names have none), or
 * under an id-like name is long and has no space. */
static int generated_like(const char *v, size_t n, const char *name) {
    if (strpbrk(v, "0123456789")) return 1;
    return id_like(name) && n >= 16 && !memchr(v, ' ', n);
}

static void add_cand(har *h, int step, const char *value, size_t n, const char *how, const char *where,
                     const char *name, int html, int number) {
    if (n == 0 || n > MAX_VALUE || h->step_count >= MAX_CANDS || !generated_like(value, n, name)) return;
    h->step_count++;
    ll_xgrow((void **)&h->cands, &h->ccap, h->ncands + 1, sizeof(har_cand));
    har_cand *c = &h->cands[h->ncands++];
    char ident[64];
    c->value = ll_xstrndup(value, n);
    c->how = ll_xstrdup(how);
    c->where = ll_xstrdup(where);
    c->name = ll_xstrdup(ll_emit_ident(ident, sizeof(ident), name));
    c->html = html;
    c->number = number;
    c->step = step;
    c->used = 0;
    c->len = n;
    c->next = -1;
    c->first_sent = INT_MAX;
}

static int gjson_key_ok(const char *k) { return *k && !strpbrk(k, ".*?#|@\\\"") && strlen(k) < 100; }

static void json_cands(har *h, int step, const cJSON *v, char *path, size_t plen, const char *key, int depth) {
    if (depth > 32) return;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++) {
            char sub[16];
            const char *k = cJSON_IsObject(v) ? c->string : (snprintf(sub, sizeof(sub), "%d", i), sub);
            if (!k || !gjson_key_ok(k)) continue;
            size_t at = strlen(path);
            if (at + strlen(k) + 2 >= plen) continue;
            snprintf(path + at, plen - at, "%s%s", at ? "." : "", k);
            json_cands(h, step, c, path, plen, cJSON_IsObject(v) ? k : key, depth + 1);
            path[at] = 0;
        }
        return;
    }
    if (!key) key = "value";
    char how[256], where[256];
    snprintf(how, sizeof(how), "res:json(\"%s\")", path);
    snprintf(where, sizeof(where), "the JSON field %s", path);
    if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring);
        if (n >= MIN_VALUE || id_like(key)) add_cand(h, step, v->valuestring, n, how, where, key, 0, 0);
    } else if (cJSON_IsNumber(v) && id_like(key) && v->valuedouble == (double)(long long)v->valuedouble) {
        char num[32];
        snprintf(num, sizeof(num), "%lld", (long long)v->valuedouble);
        add_cand(h, step, num, strlen(num), how, where, key, 0, 1);
    }
}

/* The value of attribute name in the tag at [p, end), entities decoded,
 * into dst; 0 when it has none. */
int har_tag_attr(const char *p, const char *end, const char *name, char *dst, size_t len) {
    size_t nl = strlen(name);
    for (const char *q = p; q + nl < end; q++) {
        if (strncasecmp(q, name, nl) != 0 || !isspace((unsigned char)q[-1])) continue;
        const char *v = q + nl;
        while (v < end && isspace((unsigned char)*v)) v++;
        if (v >= end || *v != '=') continue;
        for (v++; v < end && isspace((unsigned char)*v); v++) {}
        char quote = v < end && (*v == '"' || *v == '\'') ? *v++ : 0;
        const char *ve = v;
        while (ve < end && (quote ? *ve != quote : !isspace((unsigned char)*ve) && *ve != '>')) ve++;
        size_t o = 0;
        static const char *const ENT[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}};
        for (const char *c = v; c < ve && o + 1 < len;) {
            size_t k = 0;
            while (k < 5 && !(c + strlen(ENT[k][0]) <= ve && strncmp(c, ENT[k][0], strlen(ENT[k][0])) == 0)) k++;
            if (k < 5) {
                dst[o++] = ENT[k][1][0];
                c += strlen(ENT[k][0]);
            } else {
                dst[o++] = *c++;
            }
        }
        dst[o] = 0;
        return 1;
    }
    return 0;
}

static int selector_value_ok(const char *s) { return *s && !strpbrk(s, "\"\\\n]"); }

/* <input name value> and <meta name content> of an HTML page. */
static void html_cands(har *h, int step, const char *text) {
    for (const char *p = text; (p = strchr(p, '<')) != NULL; p++) {
        int input = strncasecmp(p + 1, "input", 5) == 0 && isspace((unsigned char)p[6]);
        int meta = strncasecmp(p + 1, "meta", 4) == 0 && isspace((unsigned char)p[5]);
        if (!input && !meta) continue;
        const char *end = strchr(p, '>');
        if (!end) return;
        char name[128], value[MAX_VALUE + 1], how[512], where[256];
        if (!har_tag_attr(p, end, "name", name, sizeof(name)) || !selector_value_ok(name) ||
            !har_tag_attr(p, end, input ? "value" : "content", value, sizeof(value)))
            continue;
        size_t n = strlen(value);
        if (n < MIN_VALUE && !id_like(name)) continue;
        snprintf(how, sizeof(how), "doc:find(\"%s[name=\\\"%s\\\"]\"):attr(\"%s\")", input ? "input" : "meta", name,
                 input ? "value" : "content");
        snprintf(where, sizeof(where), "the %s of <%s name=\"%s\"> in the page", input ? "value" : "content",
                 input ? "input" : "meta", name);
        add_cand(h, step, value, n, how, where, name, 1, 0);
    }
}

/* The response body of e as text (base64 decoded), or NULL; the caller
 * frees it. */
static char *response_text(const cJSON *e, const char **mime) {
    const cJSON *content = jobj(jobj(e, "response"), "content");
    const char *text = jstr(content, "text");
    *mime = jstr(content, "mimeType");
    if (!text) return NULL;
    const char *enc = jstr(content, "encoding");
    if (enc && strcmp(enc, "base64") == 0) {
        size_t n;
        char err[128];
        uint8_t *raw = ll_base64_decode(text, strlen(text), &n, err, sizeof(err));
        if (!raw) return NULL;
        char *s = ll_xstrndup((const char *)raw, n);
        free(raw);
        return s;
    }
    return ll_xstrdup(text);
}

void har_step_cands(har *h, int step) {
    const char *mime = NULL;
    h->step_count = 0;
    char *text = response_text(h->steps[step].last, &mime);
    if (!text) return;
    if (mime && strcasestr(mime, "html")) {
        html_cands(h, step, text);
    } else if (mime && strcasestr(mime, "json")) {
        cJSON *doc = cJSON_Parse(text);
        char path[512] = "";
        if (doc) json_cands(h, step, doc, path, sizeof(path), NULL, 0);
        cJSON_Delete(doc);
    }
    free(text);
}

/* ---- correlation: what requests send back ---- */

static int boundary(const char *s, size_t n, size_t at) { return at >= n || !isalnum((unsigned char)s[at]); }

/* The first occurrence in s[0..n) from `from` of a value the step sends
 * back (longest first at one position), as an index into subs; -1. */
int har_next_sub(const har *h, const char *s, size_t n, size_t from, size_t *at) {
    for (size_t i = from; i < n; i++) {
        int best = -1;
        size_t bestlen = 0;
        for (int k = 0; k < h->nsubs; k++) {
            const har_cand *c = &h->cands[h->subs[k]];
            size_t vl = strlen(c->value);
            if (vl > bestlen && i + vl <= n && memcmp(s + i, c->value, vl) == 0 && (i == 0 || boundary(s, n, i - 1)) &&
                boundary(s, n, i + vl)) {
                best = k;
                bestlen = vl;
            }
        }
        if (best >= 0) {
            *at = i;
            return best;
        }
    }
    return -1;
}

/* Text of s[0..n) as a Lua expression with the step's values replaced by
 * their variables and the `base` origin by base when it starts s. A
 * number variable becomes text with tostring when it is the whole. */
void har_expr(har *h, ll_buf *b, const char *s, size_t n, int allow_base) {
    ll_expr e;
    ll_expr_begin(&e, b);
    size_t i = 0, blen = strlen(h->base);
    if (allow_base && blen && n >= blen && memcmp(s, h->base, blen) == 0 && (n == blen || strchr("/?#", s[blen]))) {
        ll_expr_code(&e, "base");
        i = blen;
    }
    size_t at;
    int k;
    while (i < n && (k = har_next_sub(h, s, n, i, &at)) >= 0) {
        const har_cand *c = &h->cands[h->subs[k]];
        ll_expr_lit(&e, s + i, at - i);
        if (c->number && at == 0 && at + strlen(c->value) == n) {
            char code[96];
            snprintf(code, sizeof(code), "tostring(%s)", c->name);
            ll_expr_code(&e, code);
        } else {
            ll_expr_code(&e, c->name);
        }
        i = at + strlen(c->value);
    }
    ll_expr_lit(&e, s + i, n - i);
    ll_expr_end(&e);
}

char *har_expr_dup(har *h, const char *s, size_t n, int allow_base) {
    ll_buf b = {0};
    har_expr(h, &b, s, n, allow_base);
    char *r = ll_xstrdup(b.p ? b.p : "\"\"");
    ll_buf_free(&b);
    return r;
}

static uint64_t fnv_step(uint64_t hv, unsigned char c) { return (hv ^ c) * 0x100000001b3ull; }

/* The hash index of the candidates' values, for step_subs. */
void har_index_cands(har *h) {
    h->nbuckets = 64;
    while (h->nbuckets < 2 * (size_t)h->ncands) h->nbuckets *= 2;
    h->buckets = ll_xmalloc(h->nbuckets * sizeof(int));
    for (size_t i = 0; i < h->nbuckets; i++) h->buckets[i] = -1;
    h->has_len = ll_xcalloc(MAX_VALUE + 1, 1);
    for (int k = 0; k < h->ncands; k++) {
        har_cand *c = &h->cands[k];
        uint64_t hv = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < c->len; i++) hv = fnv_step(hv, (unsigned char)c->value[i]);
        size_t b = (size_t)hv & (h->nbuckets - 1);
        c->next = h->buckets[b];
        h->buckets[b] = k;
        h->has_len[c->len] = 1;
        if (c->len > h->max_len) h->max_len = c->len;
    }
}

/* Marks the values request j sends back (whole: no letter or digit
 * around them) and collects them in h->subs, each from the latest
 * response before j that had it, unless a request sent it first (then
 * the client knew it: typed, or its own). Every text position where a word starts
 * is hashed forward to each word end a candidate's length away. */
void har_step_subs(har *h, int j, const char **texts, const size_t *lens, int ntexts) {
    h->nsubs = 0;
    for (int t = 0; t < ntexts; t++) {
        const char *s = texts[t];
        size_t n = lens[t];
        for (size_t i = 0; s && i < n; i++) {
            if (i > 0 && !boundary(s, n, i - 1)) continue;
            uint64_t hv = 0xcbf29ce484222325ull;
            for (size_t e = i; e < n && e - i < h->max_len; e++) {
                hv = fnv_step(hv, (unsigned char)s[e]);
                size_t len = e - i + 1;
                if (!h->has_len[len] || !boundary(s, n, e + 1)) continue;
                int best = -1, sent = INT_MAX;
                int first = h->buckets[(size_t)hv & (h->nbuckets - 1)];
                for (int k = first; k >= 0; k = h->cands[k].next) {
                    har_cand *c = &h->cands[k];
                    if (c->len != len || memcmp(c->value, s + i, len) != 0) continue;
                    if (c->first_sent < sent) sent = c->first_sent;
                    if (c->first_sent > j) c->first_sent = j;
                    if (c->step < j && (best < 0 || c->step > h->cands[best].step)) best = k;
                }
                /* a long value the client sent before that response came from the
                 * client (a short id may be anywhere: "1" in a header) */
                if (best >= 0 && len >= MIN_VALUE && sent <= h->cands[best].step) best = -1;
                int had = best < 0;
                for (int q = 0; q < h->nsubs && !had; q++)
                    had = strcmp(h->cands[h->subs[q]].value, h->cands[best].value) == 0;
                if (had) continue;
                ll_xgrow((void **)&h->subs, &h->subcap, h->nsubs + 1, sizeof(int));
                h->subs[h->nsubs++] = best;
                h->cands[best].used = 1;
            }
        }
    }
}
