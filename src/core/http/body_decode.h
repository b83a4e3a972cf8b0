/* body_decode.h -- response body decoding for the native transports: a
 * body in its Content-Encoding (gzip, deflate, br or zstd) decoded as it
 * arrives, piece by piece, into a growable buffer with a size limit
 * (body_decode.c). */
#ifndef LL_BODY_DECODE_H
#define LL_BODY_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "http_req.h"

/* The encodings a response body may come in (Content-Encoding). */
typedef enum { LL_DECODE_IDENTITY, LL_DECODE_GZIP, LL_DECODE_DEFLATE, LL_DECODE_BR, LL_DECODE_ZSTD } ll_decode_kind;

/* The kind of a Content-Encoding header value (value: len bytes, not
 * NUL-terminated; case-insensitive, surrounding spaces/tabs ignored):
 * "gzip" and "x-gzip" -> GZIP, "deflate" -> DEFLATE, "br" -> BR, "zstd" ->
 * ZSTD, "identity" or empty -> IDENTITY; anything else (including a list
 * such as "gzip, br") -> -1, which the caller treats as "pass the body
 * through undecoded", as Go's net/http and k6 do. */
int ll_decode_kind_of(const char *value, size_t len);

typedef struct ll_body_decoder ll_body_decoder;

/* A decoder for kind (not IDENTITY); NULL when out of memory (or kind is
 * not one of GZIP, DEFLATE, BR, ZSTD). */
ll_body_decoder *ll_body_decoder_new(int kind);
/* Decodes n bytes of the encoded body at p, appending the output to out.
 * limit: the most bytes out may hold (out->len never exceeds it). Returns
 * 0; -2 when the output would go over limit (out keeps what fitted); -1
 * when the data is corrupt, or out of memory, with a static message in
 * *err (e.g. "the gzip-encoded response body is corrupt"). Data after the
 * end of the compressed stream is ignored (gzip members and zstd frames
 * that follow one another are all decoded). After -1 or -2 the decoder is
 * done: later calls return the same, and decode nothing more. */
int ll_body_decoder_feed(ll_body_decoder *d, const char *p, size_t n, ll_buf *out, int64_t limit, const char **err);
/* At the end of the body: 0 when the compressed stream ended properly (or
 * the body was empty: no bytes were fed at all), else -1 with *err ("the
 * gzip-encoded response body is truncated", or the message of an earlier
 * -1 or -2 from feed). */
int ll_body_decoder_finish(ll_body_decoder *d, const char **err);
void ll_body_decoder_free(ll_body_decoder *d);

/* What a streamed body (params.on_chunk) came to so far, in body, handed to
 * fn and dropped (a streamed body is never kept); nothing when fn is NULL.
 * Returns 0; 1 when fn asked to stop cleanly (LL_CHUNK_STOP); -1 with *err
 * when fn failed it. */
int ll_body_chunk_out(ll_body_chunk_fn *fn, void *ud, int status, ll_buf *body, const char **err);

#endif
