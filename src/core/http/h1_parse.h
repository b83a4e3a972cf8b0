/* h1_parse.h -- one HTTP/1.1 response read as its bytes arrive, on
 * http-parser (the parser wrk uses), or on h1_head.c's fast path when the
 * first read holds a whole, plain head: the status line and headers rebuilt
 * as a raw header block ("HTTP/1.1 200 OK\r\nName: value\r\n...\r\n"), the
 * body de-chunked and decoded (Content-Encoding) into a buffer up to a
 * limit, 1xx responses skipped, HEAD/204/304 without a body, and whether
 * the connection may be kept. Nothing here touches a socket: the native
 * transport feeds it what it read, and the fuzzer feeds it anything. */
#ifndef LL_H1_PARSE_H
#define LL_H1_PARSE_H

#include <http_parser.h>
#include <stddef.h>
#include <stdint.h>

#include "body_decode.h"
#include "buf.h"
#include "h1_head.h"

/* ll_h1_parse_feed's results */
#define LL_H1_MORE 0      /* the response is not complete yet */
#define LL_H1_DONE 1      /* complete: status, headers and body are final */
#define LL_H1_ERROR (-1)  /* malformed, over the limit, or out of memory: see err */

typedef struct ll_h1_parse {
    http_parser p;
    ll_buf *hdrs, *body;     /* not owned: where the header block and body go */
    int64_t limit;           /* body bytes kept; 0: counted, not kept */
    int head;                /* the request was HEAD: no body follows */
    int status;              /* of the final response, once its headers are in */
    int minor;               /* its HTTP/1.x minor version */
    int keep_alive;          /* once DONE: the connection may carry another request */
    int headers_done;        /* the final response's header block is complete */
    int done;
    int too_big;             /* the body went over limit */
    int in;                  /* where the header callbacks are: 0 status, 1 field, 2 value */
    size_t field_at, value_at; /* offsets in hdrs of the current header's name and value */
    int encoding;            /* LL_DECODE_* of Content-Encoding; -1: not decoded */
    ll_body_decoder *dec;    /* made for an encoded body, freed at the end */
    uint64_t fed;            /* bytes fed so far */
    uint64_t body_wire;      /* body bytes as they came (before decoding) */
    const char *err;         /* static message of an LL_H1_ERROR */
    int fast;                /* the head was read by h1_head.c: the body is counted here, not by http-parser */
    int set_cookie;          /* then (or on HTTP/2, native_h2.c) whether it had a Set-Cookie header */
    uint64_t left;           /* then the body bytes still to come */
    ll_body_chunk_fn *on_chunk; /* the body handed over as it comes (set after start) */
    void *chunk_ud;
    int stopped;             /* on_chunk ended the body (LL_CHUNK_STOP): DONE, not kept alive */
    int no_fast;             /* set by tests: read every response with http-parser */
    /* Kept from one response to the next (ll_h1_parse_start clears only
     * what is above): the last head the fast path read, byte for byte, and
     * what it read in it. A server sends the same head again and again
     * (nginx's changes with its Date, once a second), and the same bytes
     * scan the same way, so a head equal to it is not scanned again. */
    ll_h1_scanned memo;      /* memo.len 0: none */
    int memo_for_head;       /* it was the answer to a HEAD request */
    char memo_bytes[LL_H1_MEMO];
} ll_h1_parse;

/* Starts reading a new response into hdrs and body (both emptied). head:
 * the request was HEAD. limit: as ll_h1_parse.limit. h's memo is kept:
 * zero h before its first start. */
void ll_h1_parse_start(ll_h1_parse *h, ll_buf *hdrs, ll_buf *body, int64_t limit, int head);
/* Feeds n bytes (n == 0: the server closed the connection). Returns
 * LL_H1_MORE, LL_H1_DONE (*used: the bytes of p that belong to the
 * response; any after them are not part of it) or LL_H1_ERROR. An
 * on_chunk that stops the body makes it LL_H1_DONE with stopped set and
 * keep_alive 0 (the rest of the body is never read). */
int ll_h1_parse_feed(ll_h1_parse *h, const char *p, size_t n, size_t *used);
/* Frees the decoder of an unfinished response (a cancelled request). */
void ll_h1_parse_reset(ll_h1_parse *h);

#endif
