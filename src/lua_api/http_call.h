/* http_call.h -- what http.c shares with http_batch.c: preparing a
 * request from Lua arguments, starting one VU request (a call, followed
 * through its redirects) and cancelling it, and the completion of a call
 * that belongs to an http.batch. */
#ifndef LL_HTTP_CALL_H
#define LL_HTTP_CALL_H

#include "http_client.h"
#include "script_host.h"

/* The request for method and target (a URL or a Request at that stack
 * index) with an optional body and params (stack indexes, 0: none), built
 * in scratch unless a prepared Request serves as is; *m is the method to
 * send. Pushes one value the caller keeps as long as the request: the
 * table holding what a built body reads from, or nil. Raises on bad
 * arguments (W names the caller). */
const ll_http_req *ll_http_prepare(lua_State *L, ll_http_req *scratch, const char *W, const char *method, int target,
                                   int body, int params, const char **m);
/* The default Client of http.get & co (once luaload.http is loaded). */
ll_http_client *ll_http_default_client(lua_State *L);
/* Changes a request built for one call before it starts (lua_sse.c: its
 * chunk sink, a Last-Event-ID): 0, or -1 when out of memory. */
typedef int ll_http_adjust_fn(lua_State *L, ll_http_req *req, ll_http_call *call, void *ud);
/* Sends method to target (a URL or a Request) with an optional body and
 * params (stack indexes; body 0: the call takes none) on client c, then
 * yields the VU until the response is in, as the last statement of a C
 * function: the VU is resumed with the Response (or nil and an error).
 * method NULL: the Request's own method, or GET. adjust (may be NULL)
 * sees the request first: a URL target only (a prepared Request is
 * shared). */
int ll_http_request_wait(lua_State *L, ll_http_client *c, const char *W, const char *method, int target, int body,
                         int params, ll_http_adjust_fn *adjust, void *ud);
/* Starts req on the VU's transfer of client c on lane; its completion
 * records the metrics, follows redirects and then resumes the VU (alone)
 * or calls ll_http_batch_done (call->index > 0). Returns 0, or -1 with
 * *err. */
int ll_http_call_start(ll_vu *vu, ll_http_call *call, ll_http_client *c, int lane, const ll_http_req *req,
                       const char *m, const char **err);
/* Cancels call if in flight; sent requests count as failed (error_code 1000). */
void ll_http_call_cancel(ll_vu *vu, ll_http_call *call);
/* Pushes the error a request with throw = true raises: method, URL, the
 * transport's error (normalized, as the error report does) and its code. */
void ll_http_push_throw(lua_State *L, const char *method, const ll_http_req *req, const ll_http_res *r);
/* The body type the script gets for req on call (the client may discard). */
ll_response_type ll_http_call_body_type(const ll_http_call *call, const ll_http_req *req);
/* params.on_chunk's trampoline (ud: the call): the bytes to the function
 * in the call's anchor, synchronously; false back from it stops the body
 * cleanly (LL_CHUNK_STOP: res.stopped); an error it raises is kept in the
 * anchor (chunk_error) and fails the request. */
int ll_http_chunk_to_lua(void *ud, int status, const char *p, size_t n);
/* Pushes the error call's on_chunk raised and returns 1; 0 (nothing
 * pushed) when it raised none. */
int ll_http_push_chunk_error(lua_State *L, const ll_http_call *call);
/* Keeps what a request in flight reads its body from (ll_http_prepare's
 * anchor, at the top of L's stack) until ll_http_anchor_drop. */
void ll_http_anchor_keep(lua_State *L, ll_http_call *call);
void ll_http_anchor_drop(lua_State *L, ll_http_call *call);
/* An async call (call->index < 0) completed with r on x: its promise
 * settles (http_async.c). */
void ll_http_async_done(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_res *r);
/* Starts method to target (stack indexes as ll_http_prepare's) on client c
 * without waiting, and pushes its promise. */
int ll_http_async_start(lua_State *L, ll_http_client *c, const char *W, const char *method, int target, int body,
                        int params);
/* A promise of another binding's operation (on vu), pushed on L: it is
 * one of the VU's pending things until settled; a cut calls cancel(ud)
 * (the operation then never settles it). */
typedef struct ll_promise ll_promise;
ll_promise *ll_promise_push(lua_State *L, ll_vu *vu, ll_vu_cancel_fn *cancel, void *ud);
/* Settles p with the value on top of the worker's main state (popped):
 * fulfilled (ok) or rejected (a message; :await raises it). */
void ll_promise_settle(ll_promise *p, int ok);
/* The promise's metatable, once per state. */
void ll_http_async_register(lua_State *L);
/* A call of an http.batch completed with r on transfer x (http_batch.c). */
void ll_http_batch_done(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_res *r);
/* http.batch(requests) and client:batch(requests) */
int ll_http_batch(lua_State *L);
int ll_http_client_batch(lua_State *L);

#endif
