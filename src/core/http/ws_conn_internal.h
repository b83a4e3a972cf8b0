/* ws_conn_internal.h -- the insides of a WebSocket client connection,
 * shared by its two files (nothing else sees them):
 *
 *   ws_conn.c  the connection's life: the caller's calls, the loop's events,
 *              frames through wslay once open, the close and the end
 *   ws_open.c  the open: lookup, connect (the addresses in turn), TLS, the
 *              handshake written and its 101 read and checked
 *
 * Reentrancy: every entry from the loop holds the connection (depth); a
 * callback may call ll_ws_free, which then only marks it dead, and the
 * entry frees it on its way out. No callback runs once it is dead, and
 * none runs inside an ll_ws_* call: what those calls start goes on at the
 * loop's next turn (the soon timer). */
#ifndef LL_WS_CONN_INTERNAL_H
#define LL_WS_CONN_INTERNAL_H

#include <stdint.h>
#include <wslay/wslay.h>

#include "h1_parse.h"
#include "h1_request.h"
#include "net.h"
#include "url.h"
#include "ws_conn.h"
#include "ws_deflate.h"
#include "ws_handshake.h"

/* W_RESOLVING .. W_READING: opening; W_OPEN: frames (closing too); W_DONE:
 * over, its last callback given */
typedef enum { W_RESOLVING, W_CONNECTING, W_TLS, W_SENDING, W_READING, W_OPEN, W_DONE } ws_st;

/* What only the open needs, freed once it is over. */
typedef struct ws_opening {
    ll_resolve_wait wait;
    ll_addr *addrs;
    int naddrs, next_addr;
    ll_addr local;
    char *host;
    int port;
    char session_key[280];
    char *server_name;         /* SNI and the name checked; NULL: the host */
    char *tls_err;             /* why the own TLS context could not be made */
    ll_h1_head head;
    size_t head_off;
    ll_h1_parse parse;
    ll_buf hdrs, body;
    char key[LL_WS_KEY_LEN];
    char **protocols;          /* offered (copies), for the check */
    int nprotocols;
    char *protocol_header;     /* a Sec-WebSocket-Protocol header of the caller's */
    int deflate;               /* permessage-deflate offered */
    uint64_t deadline_ns, dial_deadline_ns;
    int fail_errno;
    char fail_msg[200];
} ws_opening;

struct ll_ws {
    ll_loop *loop;
    ll_ws_callbacks cb;
    void *ud;
    ws_st st;
    ll_net_conn net;
    int watching;
    int tls;                   /* wss */
    ll_tls_ctx *ctx;
    int own_ctx;
    ws_opening *o;
    char *http_url;            /* the URL as http(s), for k6's error texts */
    wslay_event_context_ptr wc;
    ll_ws_deflate_inflater *inflater; /* permessage-deflate is on */
    uint64_t rng[4];           /* frame masks */
    uint64_t max_message;
    long close_timeout_ms;
    ll_timer timer;            /* the open's deadline, then the close's */
    ll_timer soon;             /* a send or a failure, at the next turn */
    char *rest;                /* bytes read after the 101's head: frames already */
    size_t rest_len, rest_off;
    uint64_t t_start, t_dns, t_dial, t_connected, t_tls, t_sent, t_head;
    int64_t sent, received;
    uint8_t hold[16];          /* a frame's header wslay said more follows (WSLAY_MSG_MORE):
                                * written with its payload, one segment, not two */
    size_t hold_len;
    int depth, dead;
    int pending_code;          /* a failure to give at the next turn */
    int failing;               /* wslay refused a frame: an error, then the end */
    int fail_close;            /* or this file did, with this close code (its error in msg) */
    int net_code;              /* the socket failed under wslay (k6 code) */
    char net_msg[200];
    int eof;                   /* the server closed the connection */
    uint16_t recv_code;        /* of the close frame received, 0: none */
    char reason[124];
    size_t reason_len;
    char msg[320];
};

/* ws_conn.c */
void ws_conn_watch(ll_ws *ws, int events);
void ws_conn_close_fd(ll_ws *ws);
void ws_conn_hold(ll_ws *ws);
void ws_conn_release(ll_ws *ws);
/* The 101 checked: wslay's context, permessage-deflate when the server
 * took it (deflate; reset: server_no_context_takeover), the bytes read
 * after the 101's head. 0, or -1 when out of memory. */
int ws_conn_begin(ll_ws *ws, const char *rest, size_t rest_len, int deflate, int reset);
/* Open (the open callback given): the frames already read, or the wait. */
void ws_conn_go(ll_ws *ws);

/* ws_open.c */
/* Starts opening u for opts (ws->o made). 0, or -1 with err when the
 * caller's headers, cookie or subprotocols cannot go on the wire. */
int ws_open_start(ll_ws *ws, const ll_url *u, const ll_ws_opts *opts, char *err, size_t errlen);
/* The socket's events while opening; the open's deadline. */
void ws_open_event(ll_ws *ws);
void ws_open_timeout(ll_ws *ws);
/* The open failed: the open callback says why, and nothing follows. */
void ws_open_fail(ll_ws *ws, int code, const char *msg);
/* The same from the loop's next turn (inside an ll_ws_* call). */
void ws_open_later(ll_ws *ws, int code, const char *msg);
/* What only the open needed goes. */
void ws_open_free(ll_ws *ws);

#endif
