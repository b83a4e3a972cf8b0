/* h1_request.h -- the bytes of an HTTP/1.1 request head, written once per
 * prepared request and reused while the VU sends it again: the request
 * line, Host, the request's headers in order (the jar's cookies after its
 * own Cookie), User-Agent, the body's framing, the blank line. A request
 * whose dyn_header changes (quick mode's token) gets that one value
 * rewritten in place. A small body in memory goes in the same buffer, so
 * that the whole request is one write. */
#ifndef LL_H1_REQUEST_H
#define LL_H1_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "http_req.h"
#include "url.h"

/* Bodies in memory up to this size are copied after the head. */
#define LL_H1_INLINE_BODY 8192

typedef struct ll_h1_head {
    ll_buf buf;             /* request line ... blank line [inline body] */
    size_t dyn_at, dyn_len; /* the dyn_header's value in buf (dyn_len 0: none) */
    int chunked;            /* the body goes chunked: the script set Transfer-Encoding: chunked */
    int body_inline;        /* buf ends with the whole memory body */
} ll_h1_head;

/* What the head says besides the request itself. */
typedef struct ll_h1_head_in {
    const ll_http_req *req;
    const char *method;
    const ll_url *url;       /* req->url taken apart */
    const char *cookie;      /* the jar's cookies, or NULL */
    const char *user_agent;  /* sent unless the request has its own */
    const char *content_type; /* a form's multipart type with its boundary, or NULL */
    uint64_t body_len;       /* bytes of body (a form's whole encoding) */
    int has_body;
} ll_h1_head_in;

/* Writes the head of in into hd (emptied first). Returns 0, or -1 when out
 * of memory. */
int ll_h1_head_build(ll_h1_head *hd, const ll_h1_head_in *in);
/* Writes the dyn_header's new value (len bytes) in place, or builds the head
 * again through in when its length changed. Returns 0, or -1 when out of
 * memory. */
int ll_h1_head_patch(ll_h1_head *hd, const ll_h1_head_in *in, const char *value, size_t len);
void ll_h1_head_free(ll_h1_head *hd);

#endif
