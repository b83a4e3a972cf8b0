/* http_req.c -- building, copying and freeing prepared requests (see
 * http_req.h). Everything a request holds is user-sized, so every setter
 * reports out of memory instead of aborting. */
#include "http_req.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "url.h"

int ll_http_token_ok(const char *s) {
    if (!*s) return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= 32 || c >= 127 || strchr("\"(),/:;<=>?@[\\]{}", c)) return 0;
    }
    return 1;
}

int ll_http_value_ok(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == 0) return 0;
    return 1;
}

int ll_http_url_ok(const char *s, size_t len) {
    size_t host = 0; /* where the host starts */
    if (len >= 7 && strncasecmp(s, "http://", 7) == 0) host = 7;
    else if (len >= 8 && strncasecmp(s, "https://", 8) == 0) host = 8;
    if (!host || host == len || strchr("/?#", s[host])) return 0; /* no host */
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= 32 || s[i] == 127) return 0;
    return 1;
}

const char *ll_http_printable(char *buf, size_t n, const char *s, size_t len) {
    size_t i = 0;
    for (; i < len && i + 4 < n; i++) buf[i] = (unsigned char)s[i] < 32 || s[i] == 127 ? '?' : s[i];
    snprintf(buf + i, n - i, "%s", i < len ? "..." : "");
    return buf;
}

uint64_t ll_http_req_next_id(void) {
    static _Atomic uint64_t next = 1;
    return atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

void ll_http_req_init(ll_http_req *req) {
    memset(req, 0, sizeof(*req));
    req->id = ll_http_req_next_id();
    req->max_redirects = -1;
    req->http_version = -1;
    req->body.fd = -1;
    req->dyn_header = -1;
}

void ll_http_req_clear(ll_http_req *req) {
    free(req->method);
    free(req->url);
    for (int i = 0; i < req->nheaders; i++) {
        free(req->headers[i].name);
        free(req->headers[i].value);
    }
    free(req->headers);
    ll_body_clear(&req->body);
    for (int i = 0; i < 2 * req->ntags; i++) free(req->tags[i]);
    free(req->tags);
    for (int i = 0; i < req->nreplace_cookies; i++) free(req->replace_cookies[i]);
    free(req->replace_cookies);
    free(req->user);
    free(req->password);
    memset(req, 0, sizeof(*req));
    req->body.fd = -1;
}

static int replace(char **dst, const char *s) {
    char *p = strdup(s);
    if (!p) return -1;
    free(*dst);
    *dst = p;
    return 0;
}

int ll_http_req_set_url(ll_http_req *req, const char *url) {
    char *rest = NULL, *user = NULL, *password = NULL;
    int has = ll_url_credentials(url, &rest, &user, &password);
    if (has <= 0) return has < 0 ? -1 : replace(&req->url, url);
    free(req->url);
    free(req->user);
    free(req->password);
    req->url = rest;
    req->user = user;
    req->password = password;
    return 0;
}

/* "Basic " and base64 of user:password, malloc'd, or NULL when out of memory */
static char *basic_value(const char *user, const char *password) {
    size_t u = strlen(user), p = strlen(password);
    char *plain = malloc(u + 1 + p + 1);
    if (!plain) return NULL;
    snprintf(plain, u + 1 + p + 1, "%s:%s", user, password);
    char *b64 = ll_base64_encode(plain, u + 1 + p, NULL);
    free(plain);
    if (!b64) return NULL;
    char *v = malloc(6 + strlen(b64) + 1);
    if (v) snprintf(v, 6 + strlen(b64) + 1, "Basic %s", b64);
    free(b64);
    return v;
}

int ll_http_req_apply_auth(ll_http_req *req) {
    if (!req->user) return 0;
    char *basic = basic_value(req->user, req->password ? req->password : "");
    if (!basic) return -1;
    int has = -1;
    for (int i = 0; i < req->nheaders; i++)
        if (strcasecmp(req->headers[i].name, "Authorization") == 0) has = i;
    int rc = 0;
    if (req->auth == LL_AUTH_NONE || req->auth == LL_AUTH_BASIC) {
        if (has < 0) rc = ll_http_req_add_header(req, "Authorization", basic);
    } else if (has >= 0 && strcmp(req->headers[has].value, basic) == 0) {
        ll_http_req_remove_header(req, "Authorization"); /* a prepared request's Basic */
    }
    free(basic);
    return rc;
}

void ll_http_req_remove_header(ll_http_req *req, const char *name) {
    int n = 0;
    for (int i = 0; i < req->nheaders; i++) {
        if (strcasecmp(req->headers[i].name, name) == 0) {
            free(req->headers[i].name);
            free(req->headers[i].value);
            continue;
        }
        req->headers[n++] = req->headers[i];
    }
    req->nheaders = n;
}

int ll_http_req_set_method(ll_http_req *req, const char *method) {
    if (replace(&req->method, method) < 0) return -1;
    for (char *s = req->method; *s; s++)
        if (*s >= 'a' && *s <= 'z') *s = (char)(*s - 32);
    return 0;
}

int ll_http_req_add_header(ll_http_req *req, const char *name, const char *value) {
    if (req->nheaders == req->cap_headers) {
        int n = req->cap_headers ? 2 * req->cap_headers : 8;
        ll_header *h = realloc(req->headers, (size_t)n * sizeof(*h));
        if (!h) return -1;
        req->headers = h;
        req->cap_headers = n;
    }
    char *k = strdup(name), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    req->headers[req->nheaders].name = k;
    req->headers[req->nheaders].value = v;
    req->nheaders++;
    return 0;
}

int ll_http_req_add_tag(ll_http_req *req, const char *key, const char *value) {
    char *k = strdup(key), *v = strdup(value);
    char **t = k && v ? realloc(req->tags, (size_t)(req->ntags + 1) * 2 * sizeof(char *)) : NULL;
    if (!t) {
        free(k);
        free(v);
        return -1;
    }
    req->tags = t;
    for (int i = 0; i < req->ntags; i++) {
        if (strcmp(t[2 * i], k) != 0) continue;
        free(t[2 * i]);
        free(t[2 * i + 1]);
        t[2 * i] = k;
        t[2 * i + 1] = v;
        return 0;
    }
    t[2 * req->ntags] = k;
    t[2 * req->ntags + 1] = v;
    req->ntags++;
    return 0;
}

int ll_http_req_replace_cookie(ll_http_req *req, const char *name) {
    char *s = strdup(name);
    char **l = s ? realloc(req->replace_cookies, (size_t)(req->nreplace_cookies + 2) * sizeof(char *)) : NULL;
    if (!l) {
        free(s);
        return -1;
    }
    l[req->nreplace_cookies++] = s;
    l[req->nreplace_cookies] = NULL;
    req->replace_cookies = l;
    return 0;
}

const char *ll_http_req_tag(const ll_http_req *req, const char *key) {
    for (int i = 0; i < req->ntags; i++)
        if (strcmp(req->tags[2 * i], key) == 0) return req->tags[2 * i + 1];
    return NULL;
}

int ll_http_req_copy(ll_http_req *dst, const ll_http_req *src) {
    if (ll_http_req_set_url(dst, src->url) < 0) return -1;
    if (src->method && replace(&dst->method, src->method) < 0) return -1;
    for (int i = 0; i < src->nheaders; i++)
        if (ll_http_req_add_header(dst, src->headers[i].name, src->headers[i].value) < 0) return -1;
    if (ll_body_copy(&dst->body, &src->body) < 0) return -1;
    dst->body_type = src->body_type;
    dst->compression = src->compression;
    for (int i = 0; i < src->nreplace_cookies; i++)
        if (ll_http_req_replace_cookie(dst, src->replace_cookies[i]) < 0) return -1;
    return ll_http_req_copy_options(dst, src);
}

int ll_http_req_copy_options(ll_http_req *dst, const ll_http_req *src) {
    for (int i = 0; i < src->ntags; i++)
        if (ll_http_req_add_tag(dst, src->tags[2 * i], src->tags[2 * i + 1]) < 0) return -1;
    dst->response_type = src->response_type;
    dst->timeout_ms = src->timeout_ms;
    dst->max_redirects = src->max_redirects;
    dst->http_version = src->http_version;
    dst->max_response_body = src->max_response_body;
    dst->disable_keep_alive = src->disable_keep_alive;
    dst->throw_errors = src->throw_errors;
    dst->expected = src->expected;
    dst->auth = src->auth;
    dst->on_chunk = src->on_chunk;
    dst->chunk_ud = src->chunk_ud;
    if (dst->user || !src->user) return 0; /* a URL's own credentials stay */
    if (replace(&dst->user, src->user) < 0) return -1;
    if (src->password && replace(&dst->password, src->password) < 0) return -1;
    return 0;
}

int ll_http_expected_has(const ll_http_expected *e, int status) {
    for (int i = 0; i < e->n; i++)
        if (status >= e->min[i] && status <= e->max[i]) return 1;
    return 0;
}
