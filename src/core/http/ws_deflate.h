/* ws_deflate.h -- permessage-deflate (RFC 7692) on zlib for ws_conn.c:
 * the offer, the server's answer read, messages compressed and inflated.
 *
 * The offer asks client_no_context_takeover, so each message luaload sends
 * is compressed on its own: one deflate stream per thread (a worker's)
 * serves all its connections, and a connection keeps no compressor (zlib's
 * is ~256 KiB). What the server sends is inflated with a per-connection
 * stream, kept from one message to the next unless the server said
 * server_no_context_takeover, and never past the connection's maximum
 * message size (a small compressed frame may inflate to gigabytes). */
#ifndef LL_WS_DEFLATE_H
#define LL_WS_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define LL_WS_DEFLATE_OFFER "permessage-deflate; client_no_context_takeover"

typedef struct ll_ws_deflate_inflater ll_ws_deflate_inflater;

/* Reads the server's Sec-WebSocket-Extensions value (v, n bytes) to our
 * offer. 1: permessage-deflate is on, *server_reset set when the server
 * starts each message afresh (server_no_context_takeover); 0: the value is
 * empty; -1 with the reason in err: an extension or a parameter not
 * offered, a bad window size. */
int ll_ws_deflate_accept(const char *v, size_t n, int *server_reset, char *err, size_t errlen);
/* The payload of a compressed message of n bytes at p, in out (emptied
 * first). 0, or -1 when out of memory. */
int ll_ws_deflate_compress(const void *p, size_t n, ll_buf *out);
/* NULL when out of memory */
ll_ws_deflate_inflater *ll_ws_deflate_inflater_new(int server_reset);
/* The message of the compressed payload p (n bytes) in out (emptied
 * first), at most max bytes. 0; -1 with *err when it does not inflate
 * (or out of memory); -2 when it would be over max. */
int ll_ws_deflate_inflate(ll_ws_deflate_inflater *z, const void *p, size_t n, uint64_t max, ll_buf *out,
                          const char **err);
void ll_ws_deflate_inflater_free(ll_ws_deflate_inflater *z);
/* 1 when s (n bytes) is well-formed UTF-8 (RFC 3629: no overlong forms,
 * no surrogates, nothing over U+10FFFF): a text message must be, and wslay
 * cannot check a compressed one. */
int ll_ws_deflate_utf8_ok(const char *s, size_t n);

#endif
