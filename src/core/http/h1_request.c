/* h1_request.c -- an HTTP/1.1 request head written once and patched (see
 * h1_request.h). Values were checked when the request was made
 * (ll_http_value_ok and friends), so nothing here can smuggle a line. */
#include "h1_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int add(ll_h1_head *hd, const char *s, size_t n) { return ll_buf_append(&hd->buf, s, n); }
static int adds(ll_h1_head *hd, const char *s) { return add(hd, s, strlen(s)); }

/* "Name: value\r\n" ("Name:" for an empty value), with value2 after "; " */
static int header(ll_h1_head *hd, const char *name, const char *value, const char *value2) {
    int rc = adds(hd, name) | add(hd, ":", 1);
    if (*value || value2) rc |= add(hd, " ", 1) | adds(hd, value);
    if (*value && value2) rc |= add(hd, "; ", 2);
    if (value2) rc |= adds(hd, value2);
    return rc | add(hd, "\r\n", 2);
}

/* "Host: host[:port]" (ll_url_authority) */
static int host_header(ll_h1_head *hd, const ll_url *u) {
    char small[320], *auth = small;
    size_t n = ll_url_authority(u, small, sizeof(small));
    if (n > sizeof(small) && (auth = malloc(n))) ll_url_authority(u, auth, n);
    int rc = auth ? adds(hd, "Host: ") | add(hd, auth, n) | add(hd, "\r\n", 2) : -1;
    if (auth != small) free(auth);
    return rc;
}

int ll_h1_head_build(ll_h1_head *hd, const ll_h1_head_in *in) {
    const ll_http_req *req = in->req;
    hd->buf.len = 0;
    hd->buf.failed = 0;
    hd->dyn_at = hd->dyn_len = 0;
    hd->chunked = hd->body_inline = 0;
    int has_host = 0, has_ua = 0, has_cookie = 0, has_length = 0, has_type = 0;
    for (int i = 0; i < req->nheaders; i++) {
        const char *n = req->headers[i].name;
        has_host |= strcasecmp(n, "Host") == 0;
        has_ua |= strcasecmp(n, "User-Agent") == 0;
        has_length |= strcasecmp(n, "Content-Length") == 0;
        has_type |= strcasecmp(n, "Content-Type") == 0;
        hd->chunked |= strcasecmp(n, "Transfer-Encoding") == 0 && strcasestr(req->headers[i].value, "chunked");
    }
    int rc = adds(hd, in->method) | add(hd, " ", 1) | adds(hd, in->url->path);
    if (in->url->query) rc |= add(hd, "?", 1) | adds(hd, in->url->query);
    rc |= adds(hd, " HTTP/1.1\r\n");
    if (!has_host) rc |= host_header(hd, in->url);
    for (int i = 0; i < req->nheaders; i++) {
        const ll_header *h = &req->headers[i];
        int is_cookie = strcasecmp(h->name, "Cookie") == 0;
        if (i == req->dyn_header) {
            rc |= adds(hd, h->name) | add(hd, ": ", 2);
            hd->dyn_at = hd->buf.len;
            hd->dyn_len = strlen(h->value);
            rc |= add(hd, h->value, hd->dyn_len) | add(hd, "\r\n", 2);
            continue;
        }
        rc |= header(hd, h->name, h->value, is_cookie && !has_cookie ? in->cookie : NULL);
        has_cookie |= is_cookie;
    }
    if (in->cookie && !has_cookie) rc |= header(hd, "Cookie", in->cookie, NULL);
    if (!has_ua) rc |= header(hd, "User-Agent", in->user_agent, NULL);
    if (in->content_type && !has_type) rc |= header(hd, "Content-Type", in->content_type, NULL);
    /* k6 (Go) sends a length for a body, and 0 for a POST, PUT or PATCH
     * without one */
    int needs_zero = !in->has_body && (strcmp(in->method, "POST") == 0 || strcmp(in->method, "PUT") == 0 ||
                                       strcmp(in->method, "PATCH") == 0);
    if (!hd->chunked && !has_length && (in->has_body || needs_zero)) {
        char len[48];
        rc |= add(hd, len, (size_t)snprintf(len, sizeof(len), "Content-Length: %llu\r\n",
                                            (unsigned long long)in->body_len));
    }
    rc |= add(hd, "\r\n", 2);
    if (req->body.kind == LL_BODY_MEMORY && !hd->chunked && req->body.len <= LL_H1_INLINE_BODY) {
        rc |= add(hd, req->body.mem, (size_t)req->body.len);
        hd->body_inline = 1;
    }
    return rc || hd->buf.failed ? -1 : 0;
}

int ll_h1_head_patch(ll_h1_head *hd, const ll_h1_head_in *in, const char *value, size_t len) {
    if (len != hd->dyn_len) return ll_h1_head_build(hd, in);
    memcpy(hd->buf.p + hd->dyn_at, value, len);
    return 0;
}

void ll_h1_head_free(ll_h1_head *hd) { ll_buf_free(&hd->buf); }
