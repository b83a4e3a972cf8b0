/* ws_conn.h -- one WebSocket client connection on a worker's ll_loop, the
 * layer luaload.ws and luaload.websockets sit on. It owns everything of
 * the connection: the lookup (resolve.c), the TCP connect (net.h, the
 * addresses in turn), the TLS handshake with the Client's options
 * (tls_ctx.h: verify, CA, mTLS, SNI), the opening handshake
 * (ws_handshake.c on luaload's HTTP/1.1 writer and parser), then frames
 * through wslay's event API, I/O-free, over net.h's read and write: text
 * and binary messages (queued), ping, pong, fragmented messages
 * reassembled, the close handshake with code and reason, a maximum message
 * size, permessage-deflate when asked (ws_deflate.c), and a malformed frame
 * from the server turned into an error and a close.
 *
 * Everything reaches the caller through its callbacks, always from the
 * loop, never from inside an ll_ws_* call. The course of a connection:
 * open(result) once (a failed open -- no connection, TLS refused, a
 * status other than 101, a bad 101 -- ends it there: nothing else follows);
 * then message, ping, pong as they come; error(code, message) at most
 * once, before the end; close(code, reason) once, the last callback.
 * ll_ws_free cancels at any time, callbacks included (from inside one
 * too): no callback follows it. The VU event loop registers it as its
 * wait's cancel. */
#ifndef LL_WS_CONN_H
#define LL_WS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "http_req.h"
#include "loop.h"
#include "resolve.h"
#include "tls_ctx.h"
#include "transport.h"

/* the largest message taken by default (a bigger one is refused with
 * close 1009 and an error): what is received is held whole until its last
 * frame, so this bounds a connection's memory. gorilla/websocket (k6) has
 * no limit; 64 MiB covers any sane message. */
#define LL_WS_MAX_MESSAGE_DEFAULT (64ull << 20)
/* how long a close waits for the server's close frame by default */
#define LL_WS_CLOSE_TIMEOUT_MS_DEFAULT 3000
/* the open's timeout when the Client has none (k6's default timeout) */
#define LL_WS_OPEN_TIMEOUT_MS_DEFAULT 60000

/* opcodes of ll_ws_callbacks.message */
#define LL_WS_TEXT 1
#define LL_WS_BINARY 2

/* close codes this file uses itself (RFC 6455 7.4.1) */
#define LL_WS_CLOSE_NORMAL 1000
#define LL_WS_CLOSE_ABNORMAL 1006 /* no close frame: the connection dropped */

/* k6's readyState */
typedef enum { LL_WS_CONNECTING, LL_WS_OPEN, LL_WS_CLOSING, LL_WS_CLOSED } ll_ws_state;

typedef struct ll_ws ll_ws;

/* The open's phases in microseconds: k6's ws_connecting is duration. */
typedef struct ll_ws_timings {
    int64_t blocked;          /* the lookup */
    int64_t connecting;       /* TCP connect */
    int64_t tls_handshaking;
    int64_t sending;          /* the handshake request */
    int64_t waiting;          /* from the request sent to the whole response head */
    int64_t duration;         /* the whole open */
} ll_ws_timings;

typedef struct ll_ws_open_result {
    int status;               /* 101 opened; the server's status; 0: no response */
    const char *headers;      /* the response's header block (h1_parse.h's form), Set-Cookie
                               * included, for the caller's jar; "" without a response */
    size_t headers_len;
    const char *protocol;     /* the subprotocol the server chose, "" none */
    const char *extensions;   /* its Sec-WebSocket-Extensions, "" none */
    int error_code;           /* k6's code, 0 when opened */
    const char *error;        /* "" when opened */
    const char *tls_version, *tls_cipher; /* "" without TLS */
    ll_ws_timings t;
} ll_ws_open_result;

typedef struct ll_ws_callbacks {
    /* Once. All the pointers of r are valid during the call only. */
    void (*open)(ll_ws *ws, const ll_ws_open_result *r, void *ud);
    /* A whole message (fragments reassembled); opcode LL_WS_TEXT (valid
     * UTF-8, checked) or LL_WS_BINARY. */
    void (*message)(ll_ws *ws, int opcode, const char *data, size_t len, void *ud);
    void (*ping)(ll_ws *ws, const char *data, size_t len, void *ud); /* answered already */
    void (*pong)(ll_ws *ws, const char *data, size_t len, void *ud);
    /* k6's error code (1000: the WebSocket protocol, 1050 a timeout, 1220 a
     * reset ...) and a one-line message. A close follows. */
    void (*error)(ll_ws *ws, int code, const char *msg, void *ud);
    /* The last callback: the code of the close frame received (1005: it
     * had none), else the one sent, else 1006 (the connection dropped);
     * the reason the server gave. */
    void (*close)(ll_ws *ws, int code, const char *reason, size_t len, void *ud);
} ll_ws_callbacks;

typedef struct ll_ws_opts {
    const ll_client_opts *client; /* TLS (verify, ca, certificate and key, server_name,
                                   * versions, ciphers), dial_timeout_ms, timeout_ms (the
                                   * open's), user_agent, connect_to, local_addr; NULL: defaults */
    ll_tls_ctx *tls;          /* a context of the client's to share; NULL: one of its own, for wss */
    ll_resolver *dns;         /* the worker's (required) */
    const ll_header *headers; /* sent with the handshake, in order */
    int nheaders;
    const char *cookie;       /* the jar's Cookie value for the URL, or NULL */
    const char *const *protocols; /* subprotocols offered */
    int nprotocols;
    uint64_t max_message;     /* bytes; 0: LL_WS_MAX_MESSAGE_DEFAULT */
    long close_timeout_ms;    /* 0: LL_WS_CLOSE_TIMEOUT_MS_DEFAULT */
    int deflate;              /* offer permessage-deflate (ws_deflate.h); on when the server
                               * takes it: messages both ways compressed */
} ll_ws_opts;

/* Starts opening url (ws:// or wss://, any case) on loop. The caller's
 * data (opts, its strings and arrays) is copied or used before this
 * returns, except opts->tls and opts->dns, which must outlive ws. Returns
 * the connection (its open callback comes later, from the loop), or NULL
 * with a one-line reason in err for what the caller got wrong: a URL that
 * is not ws(s), a header that cannot go on the wire, a subprotocol that is
 * not a token. */
ll_ws *ll_ws_open(ll_loop *loop, const char *url, const ll_ws_opts *opts, const ll_ws_callbacks *cb, void *ud,
                  char *err, size_t errlen);
/* Queues a message (opcode LL_WS_TEXT or LL_WS_BINARY; len bytes copied)
 * for the wire, sent from the loop. 0, or -1 when the connection is not
 * open (connecting, closing, closed) or out of memory. */
int ll_ws_send(ll_ws *ws, int opcode, const void *data, size_t len);
/* Queues a ping (at most 125 bytes of data). 0, or -1 as ll_ws_send. */
int ll_ws_ping(ll_ws *ws, const void *data, size_t len);
/* Starts the close handshake with code (1000, 3000-4999; 0: a close frame
 * without code) and reason (at most 123 bytes); the close callback comes
 * when the server answered, or after the close timeout. While connecting,
 * the open is abandoned: its callback says so. 0, or -1 when the code or
 * reason is not allowed; nothing when already closing. */
int ll_ws_close(ll_ws *ws, int code, const char *reason, size_t len);
/* Bytes of messages queued and not yet on the wire (bufferedAmount;
 * compressed, with permessage-deflate). */
size_t ll_ws_buffered(const ll_ws *ws);
ll_ws_state ll_ws_ready_state(const ll_ws *ws);
/* Bytes on the wire so far, both ways, the handshake's included
 * (data_sent, data_received; after TLS, the bytes inside it). */
void ll_ws_bytes(const ll_ws *ws, int64_t *sent, int64_t *received);
/* Cancels whatever ws is doing and frees it: no callback follows. NULL:
 * nothing. */
void ll_ws_free(ll_ws *ws);

#endif
