/* lua_ws_session.h -- what luaload.ws (lua_ws.c, k6/ws) and luaload.websockets
 * (lua_websockets.c, k6/websockets) share about a WebSocket session on
 * http/ws_conn.h: the params of its open read into ll_ws_opts (headers,
 * subprotocols, compression, tags, cookies with the VU's jar, the Client
 * whose options it uses), the session's metrics with k6's names and tags,
 * and its handlers run as tasks of the VU (lua_ws_session.c).
 *
 * Metrics, tagged url, status, subproto, group, params.tags and the VU's
 * tags: ws_connecting and ws_sessions at the open (a failed one too),
 * ws_msgs_sent and ws_msgs_received as the caller counts them, ws_ping
 * from a ping to its pong, and at the session's end -- its close, or its
 * iteration cut at the end of the test -- ws_session_duration (from the
 * open) and its bytes on the wire in data_sent and data_received. */
#ifndef LL_LUA_WS_SESSION_H
#define LL_LUA_WS_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "script_host.h"
#include "ws_conn.h"

#define LL_LUA_WS_PARAMS_MAX_HEADERS 64
#define LL_LUA_WS_PARAMS_MAX_PROTOCOLS 16

/* The options of one open, read from the script's arguments. Its strings
 * point into values left on the Lua stack by ll_lua_ws_session_params_read: valid
 * until the caller returns. */
typedef struct ll_lua_ws_params {
    ll_ws_opts o;
    ll_header hs[LL_LUA_WS_PARAMS_MAX_HEADERS];
    const char *protos[LL_LUA_WS_PARAMS_MAX_PROTOCOLS];
    const char *http_url;      /* the URL of the jar's cookies: ws:// -> http://, wss:// -> https:// */
    char *cookie;              /* malloc'd (ll_lua_ws_session_params_free), NULL: none */
} ll_lua_ws_params;

/* Reads params (a table at stack index params, nil or absent: none) for
 * url: headers, tags (checked only), cookies, compression, client; the
 * subprotocols from the value at protocols (a string or a list of them;
 * nil: none) or, with protocols 0, from params.subprotocols. Raises on bad
 * input with what ("ws.connect()") first; the cookie, allocated last,
 * comes after anything that may raise. */
void ll_lua_ws_session_params_read(lua_State *L, ll_vu *vu, const char *what, const char *url, int params,
                                   int protocols, ll_lua_ws_params *p);
void ll_lua_ws_session_params_free(ll_lua_ws_params *p);

/* One session: its connection and what its samples are tagged with. */
typedef struct ll_lua_ws_session {
    ll_vu *vu;
    ll_ws *ws;                 /* NULL once over */
    char *url, *http_url, *subproto, *group;
    char status[16];
    ll_tag *tags;              /* params.tags */
    int ntags;
    uint64_t start_ns;         /* when it opened; 0: it did not (yet) */
    uint64_t ping_ns;          /* the ping waiting for its pong; 0: none */
    int *gone;                 /* set to 1 when the session is freed (ll_lua_ws_session_run watches it) */
} ll_lua_ws_session;

/* Fills s for url and p, with the tags of params.tags (the table at stack
 * index params, or 0). Raises nothing. */
void ll_lua_ws_session_init(ll_lua_ws_session *s, lua_State *L, ll_vu *vu, const char *url, const ll_lua_ws_params *p,
                        int params);
/* Starts the open on the VU's worker loop (ll_ws_open): 0, or -1 with the
 * reason in err (s->ws stays NULL). */
int ll_lua_ws_session_open(ll_lua_ws_session *s, const ll_lua_ws_params *p, const ll_ws_callbacks *cb, void *ud,
                           char *err, size_t errlen);
/* The open's result came (ws_conn.h's open callback): status and
 * subprotocol for the tags, the 101's Set-Cookie into the VU's jar,
 * ws_connecting and ws_sessions; a failed open ends the session here. */
void ll_lua_ws_session_opened(ll_lua_ws_session *s, const ll_ws_open_result *r);
/* A sample of metric with the session's tags. */
void ll_lua_ws_session_sample(ll_lua_ws_session *s, int metric, double value);
/* Queues a message (ws_conn.h's opcode) and counts it in ws_msgs_sent; 0,
 * or -1 when the socket is not open. */
int ll_lua_ws_session_send(ll_lua_ws_session *s, int opcode, const void *data, size_t len);
/* Queues a ping; 0 or -1 (not open). Its pong records ws_ping. */
int ll_lua_ws_session_ping(ll_lua_ws_session *s);
void ll_lua_ws_session_pong(ll_lua_ws_session *s);
/* The session is over (closed, or cut): ws_session_duration when it had
 * opened, its bytes, and its connection freed (no callback follows).
 * Nothing when it is over already. */
void ll_lua_ws_session_end(ll_lua_ws_session *s);
/* Ends s and frees what it holds (not s itself); sets *s->gone. */
void ll_lua_ws_session_free(ll_lua_ws_session *s);
/* Runs each function of the list (a table at stack index list, below the
 * arguments; its array part, other values skipped) as a task of the VU,
 * with the nargs values on top of L (popped; the list stays). Returns 1, or 0 when s is gone: a handler failed
 * the iteration, which cancelled the session (the VU may be in its next
 * iteration already, so ll_vu_in_iteration cannot tell). */
int ll_lua_ws_session_run(ll_lua_ws_session *s, lua_State *L, int list, int nargs);

#endif
