/* upload.c -- `luaload serve`'s upload routes: /sha256 and /multipart.
 *
 * Owns: a connection's upload state (made by its first upload request,
 * freed with it): the SHA-256 (OpenSSL EVP) of a /sha256 body updated as
 * its bytes arrive, with the byte count for X-Body-Size; the multipart
 * parser (multipart.c) of a /multipart body, with a SHA-256 and a size per
 * part; the answers (the hex digest, the parts' JSON with its string
 * escaping) and, for a body that is not valid multipart, the reason of the
 * 400, for which the request becomes ROUTE_ERROR. No body byte is kept:
 * request.c passes the decoded body on (ll_upload_data) as it parses it. */
#include "xmalloc.h"
#include "multipart.h"
#include "serve_internal.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_MAX (16 * 1024 * 1024)   /* the /multipart JSON, before it refuses */

struct upload {
    EVP_MD_CTX *md;       /* the body's (/sha256) or the current part's digest */
    int md_bad;           /* an EVP call failed during this request */
    uint64_t size;        /* bytes hashed: the body's or the current part's */
    uint64_t parts;       /* /multipart: parts begun */
    ll_multipart *mp;     /* /multipart: the body's parser, NULL once refused */
    const char *why;      /* /multipart: why the body is refused (before the parser's reason) */
    ll_buf out;           /* the answer, or the 400's reason */
};

/* ---- SHA-256 ---- */

static void digest_start(upload *up) {
    up->size = 0;
    if (!up->md || EVP_DigestInit_ex(up->md, EVP_sha256(), NULL) != 1) up->md_bad = 1;
}

static void digest_add(upload *up, const char *p, size_t n) {
    up->size += n;
    if (!up->md_bad && EVP_DigestUpdate(up->md, p, n) != 1) up->md_bad = 1;
}

/* Appends the lowercase hex digest (64 characters). */
static void digest_hex(upload *up, ll_buf *b) {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    if (up->md_bad || EVP_DigestFinal_ex(up->md, d, &n) != 1) {
        up->md_bad = 1;
        return;
    }
    for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    ll_buf_append(b, hex, 2 * (size_t)n);
}

/* ---- JSON ---- */

/* The length of the valid UTF-8 sequence at s (n > 0 bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    size_t len;
    uint32_t cp, min;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2, cp = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3, cp = s[0] & 0x0f, min = 0x800;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4, cp = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

/* A JSON string, or null for NULL: quotes, backslashes and control
 * characters escaped, bytes that are not UTF-8 as U+FFFD. */
static void json_str(ll_buf *b, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    if (!s) {
        ll_buf_puts(b, "null");
        return;
    }
    ll_buf_puts(b, "\"");
    for (size_t i = 0; i < n;) {
        char esc[8];
        size_t k = utf8_seq(u + i, n - i);
        if (k == 0) {
            ll_buf_puts(b, "\\ufffd");
            i++;
            continue;
        }
        if (u[i] >= 0x20 && u[i] != '"' && u[i] != '\\') {
            ll_buf_append(b, s + i, k);
            i += k;
            continue;
        }
        switch (u[i]) {
        case '"': ll_buf_puts(b, "\\\""); break;
        case '\\': ll_buf_puts(b, "\\\\"); break;
        case '\n': ll_buf_puts(b, "\\n"); break;
        case '\r': ll_buf_puts(b, "\\r"); break;
        case '\t': ll_buf_puts(b, "\\t"); break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", u[i]);
            ll_buf_puts(b, esc);
            break;
        }
        i++;
    }
    ll_buf_puts(b, "\"");
}

/* ---- the parser's callbacks: one JSON object per part ---- */

static int on_part_begin(void *ud, const ll_multipart_part *part) {
    upload *up = ud;
    if (up->out.len > ANSWER_MAX) {
        up->why = "too many parts: the answer would pass 16 MiB";
        return -1;
    }
    ll_buf_puts(&up->out, up->parts++ ? ",{\"name\":" : "{\"name\":");
    json_str(&up->out, part->name, part->name_len);
    ll_buf_puts(&up->out, ",\"filename\":");
    json_str(&up->out, part->filename, part->filename_len);
    ll_buf_puts(&up->out, ",\"content_type\":");
    json_str(&up->out, part->content_type, part->content_type_len);
    digest_start(up);
    return 0;
}

static int on_part_data(void *ud, const char *p, size_t n) {
    digest_add(ud, p, n);
    return 0;
}

static int on_part_end(void *ud) {
    upload *up = ud;
    char num[48];
    snprintf(num, sizeof(num), ",\"size\":%" PRIu64 ",\"sha256\":\"", up->size);
    ll_buf_puts(&up->out, num);
    digest_hex(up, &up->out);
    ll_buf_puts(&up->out, "\"}");
    return 0;
}

static const ll_multipart_cb part_cb = {on_part_begin, on_part_data, on_part_end};

/* ---- the request ---- */

/* /multipart: the parser for the request's Content-Type, or the reason
 * there is none. */
static void multipart_start(upload *up, const request *r) {
    char b[LL_MULTIPART_BOUNDARY_MAX + 1];
    const char *why = NULL;
    int n = -1;
    if (!r->ctype) why = "no Content-Type: expected multipart/form-data; boundary=...";
    else n = ll_multipart_boundary(r->ctype, r->ctype_len, b, &why);
    if (n < 0) {
        up->why = why;
        return;
    }
    up->mp = ll_multipart_new(b, (size_t)n, &part_cb, up);
    ll_buf_puts(&up->out, "{\"parts\":[");
}

void ll_upload_begin(conn *c) {
    upload *up = c->up;
    if (!up) {
        up = c->up = ll_xcalloc(1, sizeof(*up));
        up->md = EVP_MD_CTX_new();
    }
    ll_multipart_free(up->mp);
    up->mp = NULL;
    up->why = NULL;
    up->md_bad = 0;
    up->parts = 0;
    up->out.len = 0;
    up->out.failed = 0;
    if (c->req.route == ROUTE_SHA256) digest_start(up);
    else multipart_start(up, &c->req);
}

void ll_upload_data(conn *c, const char *p, size_t n) {
    upload *up = c->up;
    if (c->req.route == ROUTE_SHA256) digest_add(up, p, n);
    else if (up->mp) ll_multipart_feed(up->mp, p, n);
}

/* The request gets ROUTE_ERROR's response: status and a one-line reason. */
static void refuse(conn *c, int status, const char *why) {
    upload *up = c->up;
    request *r = &c->req;
    up->out.len = 0;
    up->out.failed = 0;
    ll_buf_puts(&up->out, why);
    ll_buf_puts(&up->out, "\n");
    r->route = ROUTE_ERROR;
    r->status = status;
    r->msg = up->out.failed ? "out of memory\n" : up->out.p;
}

void ll_upload_end(conn *c) {
    upload *up = c->up;
    if (c->req.route == ROUTE_SHA256) {
        digest_hex(up, &up->out);
        ll_buf_puts(&up->out, "\n");
    } else if (up->mp && ll_multipart_end(up->mp) == 0) {
        ll_buf_puts(&up->out, "]}\n");
    } else if (!up->why) {
        up->why = up->mp ? ll_multipart_error(up->mp) : "bad multipart body";
    }
    ll_multipart_free(up->mp);
    up->mp = NULL;
    if (up->why) refuse(c, 400, up->why);
    else if (up->md_bad) refuse(c, 500, "SHA-256 failed (OpenSSL)");
    else if (up->out.failed) refuse(c, 500, "out of memory for the answer");
}

const char *ll_upload_answer(const conn *c, size_t *len) {
    *len = c->up->out.len;
    return c->up->out.p;
}

uint64_t ll_upload_body_size(const conn *c) { return c->up->size; }

void ll_upload_trim(upload *up) {
    if (up->out.cap > BUF_KEEP) ll_buf_free(&up->out);
}

void ll_upload_free(upload *up) {
    if (!up) return;
    ll_multipart_free(up->mp);
    EVP_MD_CTX_free(up->md);
    ll_buf_free(&up->out);
    free(up);
}
