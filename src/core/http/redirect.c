/* redirect.c -- following a redirect one hop at a time, as k6 does (Go's
 * net/http client): which responses are followed, the URL of the next hop,
 * its method and body, and the headers that go along. The http module
 * sends each hop itself, so each is its own sample and the VU's cookie
 * jar sees every Set-Cookie on the way. */
#include "redirect.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

const char *ll_http_header_next(const char *block, size_t len, const char *name, size_t *pos, size_t *vlen) {
    size_t nl = strlen(name), i = *pos;
    while (i < len) {
        const char *line = block + i;
        const char *end = memchr(line, '\n', len - i);
        size_t ll = end ? (size_t)(end - line) : len - i;
        i += ll + (end ? 1 : 0);
        if (ll <= nl || line[nl] != ':' || (line[0] | 0x20) != (name[0] | 0x20)) continue; /* cheap first */
        if (strncasecmp(line, name, nl) != 0) continue;
        const char *v = line + nl + 1, *e = line + ll;
        while (v < e && (*v == ' ' || *v == '\t')) v++;
        while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
        *pos = i;
        *vlen = (size_t)(e - v);
        return v;
    }
    *pos = len;
    return NULL;
}

int ll_redirect_status(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* Headers that do not follow a redirect to another host (Go's
 * shouldCopyHeaderOnRedirect), and Host, which names the old one. */
static int drop_header(const char *name, int cross_host, int body_dropped) {
    if (strcasecmp(name, "Host") == 0) return 1;
    if (body_dropped && (strcasecmp(name, "Content-Type") == 0 || strcasecmp(name, "Content-Length") == 0)) return 1;
    if (!cross_host) return 0;
    return strcasecmp(name, "Authorization") == 0 || strcasecmp(name, "WWW-Authenticate") == 0 ||
           strcasecmp(name, "Cookie") == 0 || strcasecmp(name, "Cookie2") == 0;
}

/* 1 when a and b are URLs of different hosts (or either does not parse) */
static int cross_host(const char *a, const char *b) {
    ll_url ua, ub;
    int pa = ll_url_parse(&ua, a), pb = ll_url_parse(&ub, b);
    int cross = pa < 0 || pb < 0 || !ll_url_same_origin_host(&ua, &ub);
    if (pa == 0) ll_url_free(&ua);
    if (pb == 0) ll_url_free(&ub);
    return cross;
}

int ll_redirect_next(const ll_http_req *req, const char *method, const ll_http_res *res, ll_http_req *next,
                     const char **next_method) {
    size_t pos = 0, vlen = 0;
    const char *loc = ll_http_header_next(res->headers, res->headers_len, "Location", &pos, &vlen);
    if (!loc || vlen == 0) return 0;
    char *ref = strndup(loc, vlen);
    if (!ref) return -1;
    char *url = ll_url_resolve(req->url, ref);
    free(ref);
    if (!url) return 0; /* a Location that is no URL: the 3xx is the answer */
    /* 301, 302 and 303 turn into a GET without a body (HEAD stays HEAD);
     * 307 and 308 keep the method and the body */
    int keep = res->status == 307 || res->status == 308;
    const char *m = keep || strcmp(method, "HEAD") == 0 ? method : "GET";
    int body_dropped = !keep && req->body.kind != LL_BODY_NONE;
    int cross = cross_host(req->url, url);
    int rc = ll_http_req_set_url(next, url);
    free(url);
    if (rc < 0) return -1;
    int own_credentials = next->user != NULL; /* the Location carried its own */
    if (m == method) { /* the next request owns its copy */
        if (ll_http_req_set_method(next, method) < 0) return -1;
        m = next->method;
    }
    for (int i = 0; i < req->nheaders; i++) {
        const ll_header *h = &req->headers[i];
        if (drop_header(h->name, cross, body_dropped)) continue;
        if (ll_http_req_add_header(next, h->name, h->value) < 0) return -1;
    }
    if (!body_dropped && ll_body_copy(&next->body, &req->body) < 0) return -1;
    for (int i = 0; !cross && i < req->nreplace_cookies; i++) /* its Cookie header went too */
        if (ll_http_req_replace_cookie(next, req->replace_cookies[i]) < 0) return -1;
    if (ll_http_req_copy_options(next, req) < 0) return -1;
    if (cross && !own_credentials) { /* as Authorization: not to another host */
        free(next->user);
        free(next->password);
        next->user = next->password = NULL;
    }
    *next_method = m; /* "GET" is a literal, so it outlives the transfer too */
    return 1;
}
