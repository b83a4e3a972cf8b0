/* h1_head.h -- the fast path of the HTTP/1.1 response reader: a whole,
 * plain response head (status line and headers, in one read) scanned in
 * one pass with memchr, without http-parser's byte-by-byte state machine
 * and its callbacks, which were two thirds of quick mode's instructions
 * per request (callgrind). Anything less plain -- a head split across
 * reads, chunked or EOF-delimited bodies, 1xx, Upgrade, folded or odd
 * header lines, repeated Content-Length, an HTTP version other than 1.0 or
 * 1.1 -- is declined, and h1_parse.c reads it with http-parser as before.
 * What the fast path accepts, it must read exactly as http-parser does:
 * fuzz_h1 parses every input both ways and compares. */
#ifndef LL_H1_HEAD_H
#define LL_H1_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* the largest response head taken, on both paths (libcurl's is 300 KiB) */
#define LL_H1_MAX_HEAD (1u << 20)
/* the longest head h1_parse.c remembers, to skip scanning it again */
#define LL_H1_MEMO 320

typedef struct ll_h1_scanned {
    size_t len;             /* bytes of the head, its blank line included */
    int status;             /* 200..999 except 1xx */
    int minor;              /* HTTP/1.minor: 0 or 1 */
    int keep_alive;         /* the connection may carry another request */
    int encoding;           /* LL_DECODE_* of Content-Encoding; -1: none or not decoded */
    int64_t content_length; /* -1: no body follows (1xx-less 204 and 304, or a HEAD request) */
    int canonical;          /* every line is already "Name: value": the head is its own header block */
    int set_cookie;         /* a Set-Cookie header is among them */
} ll_h1_scanned;

/* Scans the head at the start of p[0..n). head: the request was HEAD.
 * Returns 1 and fills *out when it is whole and plain, else 0 (read it
 * with http-parser). */
int ll_h1_head_scan(const char *p, size_t n, int head, ll_h1_scanned *out);
/* Writes the scanned head to hdrs as h1_parse.h's header block (status
 * line, "Name: value" lines, a blank line). 0, or -1 out of memory. */
int ll_h1_head_copy(const char *p, const ll_h1_scanned *h, ll_buf *hdrs);

#endif
