/* http_debug.c -- --http-debug's dumps of requests and responses on stderr
 * (see http_debug.h). */
#include "http_debug.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "h1_request.h"
#include "url.h"

/* buf's text on stderr in one write */
static void emit(ll_buf *b) {
    if (!b->failed && b->len) {
        fwrite(b->p, 1, b->len, stderr);
        fflush(stderr);
    }
    ll_buf_free(b);
}

/* The part of an HTTP head up to its blank line, included. */
static size_t head_end(const char *p, size_t n) {
    for (size_t i = 0; i + 3 < n; i++)
        if (p[i] == '\r' && p[i + 1] == '\n' && p[i + 2] == '\r' && p[i + 3] == '\n') return i + 4;
    return n;
}

static void body(ll_buf *b, const ll_body *body) {
    char note[96];
    if (body->kind == LL_BODY_NONE) return;
    if (body->kind == LL_BODY_MEMORY) {
        ll_buf_append(b, body->mem, (size_t)body->len);
        return;
    }
    snprintf(note, sizeof(note), "[%s body: %llu bytes, not shown]",
             body->kind == LL_BODY_FILE ? "file" : body->kind == LL_BODY_FORM ? "multipart form" : "streamed",
             (unsigned long long)body->len);
    ll_buf_append(b, note, strlen(note));
}

void ll_http_debug_head(int level, const char *head, size_t head_len, const ll_http_req *req) {
    ll_buf b = {0};
    ll_buf_append(&b, "Request:\n", 9);
    ll_buf_append(&b, head, head_end(head, head_len));
    if (level >= LL_HTTP_DEBUG_FULL) body(&b, &req->body);
    ll_buf_append(&b, "\n", 1);
    emit(&b);
}

void ll_http_debug_request(int level, const ll_http_req *req, const char *method, const char *cookie,
                           const char *user_agent) {
    ll_url url;
    if (ll_url_parse(&url, req->url) < 0) return;
    ll_h1_head hd;
    memset(&hd, 0, sizeof(hd));
    ll_h1_head_in in;
    memset(&in, 0, sizeof(in));
    in.req = req;
    in.method = method;
    in.url = &url;
    in.cookie = cookie;
    in.user_agent = user_agent;
    in.has_body = req->body.kind != LL_BODY_NONE && strcmp(method, "HEAD") != 0;
    in.body_len = req->body.len;
    if (ll_h1_head_build(&hd, &in) == 0) ll_http_debug_head(level, hd.buf.p, hd.buf.len, req);
    ll_h1_head_free(&hd);
    ll_url_free(&url);
}

void ll_http_debug_response(int level, const ll_http_res *r) {
    if (!r->status || !r->headers_len) return;
    ll_buf b = {0};
    ll_buf_append(&b, "Response:\n", 10);
    ll_buf_append(&b, r->headers, head_end(r->headers, r->headers_len));
    if (level >= LL_HTTP_DEBUG_FULL && r->body_len) ll_buf_append(&b, r->body, r->body_len);
    ll_buf_append(&b, "\n", 1);
    emit(&b);
}
