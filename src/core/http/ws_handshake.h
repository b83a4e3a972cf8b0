/* ws_handshake.h -- the opening handshake of a WebSocket client (RFC 6455
 * section 4), free of sockets: the GET request written by luaload's
 * HTTP/1.1 code (h1_request.c) with Upgrade, Connection,
 * Sec-WebSocket-Key, -Version and -Protocol, and the server's 101 checked
 * (Upgrade, Connection, Sec-WebSocket-Accept = base64(SHA-1(key + GUID)),
 * the subprotocol one of those offered, no extension that was not asked
 * for). ws_conn.c sends the one and reads the other. */
#ifndef LL_WS_HANDSHAKE_H
#define LL_WS_HANDSHAKE_H

#include <stddef.h>

#include "h1_request.h"
#include "http_req.h"
#include "url.h"

/* a Sec-WebSocket-Key: 16 random bytes in base64, and its NUL */
#define LL_WS_KEY_LEN 25

/* What the request carries besides the URL. */
typedef struct ll_ws_handshake_in {
    const ll_url *url;           /* http(s) form of the ws(s) URL */
    const ll_header *headers;    /* the caller's own, in order (they win over the defaults) */
    int nheaders;
    const char *cookie;          /* the jar's Cookie value, or NULL */
    const char *const *protocols; /* subprotocols offered, in order */
    int nprotocols;
    const char *user_agent;      /* sent unless headers have one */
    const char *extensions;      /* Sec-WebSocket-Extensions offered, or NULL */
} ll_ws_handshake_in;

/* A fresh random key (getrandom) in key. 0, or -1 when the system has no
 * entropy to give. */
int ll_ws_handshake_key(char key[LL_WS_KEY_LEN]);
/* The Sec-WebSocket-Accept a server must answer key with, in out. 0, or -1
 * when out of memory. */
int ll_ws_handshake_accept(const char *key, char out[32]);
/* Writes the request head for in and key into hd (emptied first). 0, or -1
 * with a one-line reason in err (a header name or value that cannot go on
 * the wire, out of memory). */
int ll_ws_handshake_build(ll_h1_head *hd, const ll_ws_handshake_in *in, const char *key, char *err, size_t errlen);
/* Checks the 101's header block (h1_parse.h's form) against key and the
 * offer. 0 with the chosen subprotocol (its length in *plen, 0: none) at
 * *proto and the extensions' value at *ext (*elen, 0: none), both inside
 * headers; -1 with the reason in err. */
int ll_ws_handshake_check(const char *headers, size_t len, const char *key, const ll_ws_handshake_in *in,
                          const char **proto, size_t *plen, const char **ext, size_t *elen, char *err,
                          size_t errlen);

#endif
