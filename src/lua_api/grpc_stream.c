/* grpc_stream.c -- grpc.Stream(client, "pkg.Service/Method", params), k6's
 * gRPC streams (client, server and bidirectional) on the VU's event loop:
 * s:on("data" | "error" | "status" | "end", fn), s:write(message),
 * s:end_stream() (k6's end(), a Lua keyword: s["end"](s) works too).
 *
 * A stream is one HTTP/2 request on the VU's connection, started at once:
 * its body is a generator (body.h) that hands over the framed messages
 * written so far and answers LL_BODY_LATER until there are more (the
 * transport's resume op reads it again) or end_stream() ends it; the
 * response is streamed (params.on_chunk's path) through grpc_wire's
 * reader, each message decoded to JSON there and queued. The handlers run
 * from a timer of the loop, never inside the transport, each as a task of
 * the VU (they may make requests and sleep): "data" with the message and
 * { ts }, then at the end "error" ({ code, message }) when the status is
 * not OK, "status" ({ code, message }) and "end".
 *
 * The stream is one of the VU's pending things until its "end" ran: the
 * iteration goes on while it is open, and a cut (the end of the test, or
 * a handler that failed) cancels the request and drops what is queued;
 * no handler runs after. Metrics: grpc_streams (a stream opened),
 * grpc_streams_msgs_sent, grpc_streams_msgs_received, and at its end
 * grpc_req_duration, data_sent and data_received, with the tags of a call
 * (rpc_type: client_streaming, server_streaming or bidi_streaming). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "grpc_wire.h"
#include "handlers.h"
#include "json.h"
#include "lua_grpc.h"
#include "modules.h"
#include "xmalloc.h"

#define STREAM_MT "luaload.grpc.Stream"

static const char *const EVENTS[] = {"data", "error", "status", "end", NULL};

typedef struct queued {         /* a message received, not yet handed to "data" */
    struct queued *next;
    size_t len;
    char json[];
} queued;

typedef struct gstream {
    ll_vu *vu;
    lua_State *L;               /* the worker's state */
    int self_ref;               /* held while open */
    int handlers_ref;           /* { event = { fn... } } */
    int open;                   /* until its end ran, or it was cut */
    ll_vu_pending pending;
    ll_timer dispatch;          /* runs the handlers of what came */
    ll_transfer *x;             /* its request, while in flight */
    int lane;
    ll_http_req req;
    ll_buf out;                 /* framed messages written, not yet read by the transport */
    uint64_t out_base;          /* the body's position of out's first byte */
    int writing_done;           /* end_stream() */
    uint64_t max_send;
    ll_grpc_reader rd;
    const ll_proto_type *in, *out_type;
    queued *head, *tail;
    int ended;                  /* the request is over: status below */
    int status;
    char *why;
    int bad_status;             /* a message the reader or decoder refused: that status, and why */
    char bad[256];
    ll_grpc_tags t;
    int *gone;                  /* set to 1 when it is closed (dispatch watches it) */
} gstream;

static gstream *check_stream(lua_State *L) { return luaL_checkudata(L, 1, STREAM_MT); }

/* ---- its life ---- */

static void queue_free(gstream *s) {
    while (s->head) {
        queued *q = s->head;
        s->head = q->next;
        free(q);
    }
    s->tail = NULL;
}

/* What s owns goes (its __gc, too). */
static void stream_clear(gstream *s) {
    ll_http_req_clear(&s->req);
    ll_grpc_tags_clear(&s->t);
    ll_buf_free(&s->out);
    ll_grpc_reader_free(&s->rd);
    queue_free(s);
    free(s->why);
    s->why = NULL;
}

static int stream_gc(lua_State *L) {
    stream_clear(lua_touserdata(L, 1));
    return 0;
}

/* s is over: no handler runs any more; the userdata stays the script's. */
static void stream_close(gstream *s) {
    if (!s->open) return;
    s->open = 0;
    if (s->gone) *s->gone = 1;
    ll_loop_timer_stop(ll_worker_loop(ll_vu_worker(s->vu)), &s->dispatch);
    if (s->x) {
        int64_t sent = 0;
        s->x->tp->ops->cancel(s->x, &sent);
        s->x = NULL;
        if (sent > 0) ll_grpc_sample(&s->t, LL_M_DATA_SENT, (double)sent);
        ll_http_vu_lane_give(ll_vu_http(s->vu), s->lane);
    }
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->handlers_ref);
    s->handlers_ref = LUA_NOREF;
    stream_clear(s);
    int ref = s->self_ref;
    s->self_ref = LUA_NOREF;
    luaL_unref(s->L, LUA_REGISTRYINDEX, ref); /* s may be collected from here on */
}

/* The iteration was cut with the stream open. */
static void stream_cancel(void *ud) { stream_close(ud); }

static void schedule(gstream *s) {
    if (!ll_loop_timer_armed(&s->dispatch)) ll_loop_timer_start(ll_worker_loop(ll_vu_worker(s->vu)), &s->dispatch, 0);
}

/* ---- the wire ---- */

/* The body: what was written and not read yet; LL_BODY_LATER until
 * end_stream(). */
static ssize_t body_gen(void *ud, uint64_t pos, char *buf, size_t n) {
    gstream *s = ud;
    if (pos < s->out_base) return -1; /* read again from the start: a stream is sent once */
    size_t off = (size_t)(pos - s->out_base);
    if (off >= s->out.len) return s->writing_done ? 0 : LL_BODY_LATER;
    size_t r = s->out.len - off < n ? s->out.len - off : n;
    memcpy(buf, s->out.p + off, r);
    if (off + r == s->out.len) { /* all of it read: the buffer starts again */
        s->out_base += s->out.len;
        s->out.len = 0;
    }
    return (ssize_t)r;
}

static int on_message(const char *msg, size_t len, void *ud) {
    gstream *s = ud;
    ll_buf json = {0};
    if (ll_proto_decode(s->out_type, msg, len, &json, s->bad, sizeof(s->bad)) < 0) {
        ll_buf_free(&json);
        s->bad_status = LL_GRPC_INTERNAL;
        return 1;
    }
    queued *q = ll_xmalloc(sizeof(*q) + json.len + 1);
    q->next = NULL;
    q->len = json.len;
    memcpy(q->json, json.p ? json.p : "", json.len);
    q->json[json.len] = 0;
    ll_buf_free(&json);
    if (s->tail) s->tail->next = q;
    else s->head = q;
    s->tail = q;
    ll_grpc_sample(&s->t, LL_M_GRPC_STREAMS_MSGS_RECEIVED, 1);
    return 0;
}

/* The response body as it arrives (from inside the transport: queue
 * only). A body that is not 200's is not gRPC's: its status says. */
static int on_chunk(void *ud, int status, const char *p, size_t n) {
    gstream *s = ud;
    if (status != 200) return LL_CHUNK_GO;
    int st = 0;
    int rc = ll_grpc_reader_feed(&s->rd, p, n, on_message, s, &st, s->bad, sizeof(s->bad));
    if (rc < 0) s->bad_status = st;
    if (s->head) schedule(s);
    return rc ? LL_CHUNK_STOP : LL_CHUNK_GO; /* a bad message ends the stream (its status is bad_status) */
}

static void on_done(ll_transfer *x, const ll_http_res *r, void *ud) {
    gstream *s = ud;
    s->x = NULL;
    lua_State *L = s->L;
    ll_buf why = {0};
    s->status = ll_grpc_status(L, r, &why);
    lua_pop(L, 2); /* headers and trailers */
    if (s->bad_status) {
        s->status = s->bad_status;
        free(why.p);
        why.p = ll_xstrdup(s->bad);
    } else if (s->status == LL_GRPC_OK && ll_grpc_reader_end(&s->rd, s->bad, sizeof(s->bad)) < 0) {
        s->status = LL_GRPC_INTERNAL;
        free(why.p);
        why.p = ll_xstrdup(s->bad);
    }
    s->why = why.p ? why.p : ll_xstrdup("");
    s->ended = 1;
    snprintf(s->t.status, sizeof(s->t.status), "%d", s->status);
    ll_grpc_sample(&s->t, LL_M_GRPC_REQ_DURATION, (double)r->t.duration / 1000.0);
    ll_grpc_sample(&s->t, LL_M_DATA_SENT, (double)r->bytes_sent);
    ll_grpc_sample(&s->t, LL_M_DATA_RECEIVED, (double)r->bytes_received);
    x->tp->ops->release(x);
    ll_http_vu_lane_give(ll_vu_http(s->vu), s->lane);
    schedule(s);
}

/* ---- the handlers ---- */

/* Runs each handler of event with the nargs values on top of s->L
 * (popped), each as a task of the VU. 0 when a handler failed the
 * iteration: its cut closed s (s is pending until its last handler ran). */
static int emit(gstream *s, const char *event, int nargs) {
    lua_State *L = s->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->handlers_ref);
    lua_getfield(L, -1, event);
    lua_replace(L, -2);
    lua_insert(L, -nargs - 1); /* the list below the arguments */
    int ok = ll_handlers_run(s->vu, L, -nargs - 1, nargs, &s->gone);
    lua_pop(L, 1);
    return ok;
}

static void push_meta(lua_State *L) {
    lua_createtable(L, 0, 1);
    lua_pushnumber(L, (lua_Number)time(NULL));
    lua_setfield(L, -2, "ts");
}

static void push_error(lua_State *L, int code, const char *why) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, code);
    lua_setfield(L, -2, "code");
    lua_pushstring(L, why);
    lua_setfield(L, -2, "message");
}

static void dispatch(ll_loop *loop, void *ud) {
    (void)loop;
    gstream *s = ud;
    lua_State *L = s->L;
    while (s->head) {
        queued *q = s->head;
        s->head = q->next;
        if (!s->head) s->tail = NULL;
        char err[256];
        int ok = ll_json_push(L, q->json, q->len, err, sizeof(err)) == 0;
        free(q);
        if (!ok) continue; /* libprotobuf's JSON: always valid */
        push_meta(L);
        if (!emit(s, "data", 2)) return;
    }
    if (!s->ended) return;
    /* still pending while its last handlers run: the iteration cannot end
     * between them (only a handler that fails it can, cancelling s) */
    if (s->status != LL_GRPC_OK) {
        push_error(L, s->status, s->why);
        push_meta(L);
        if (!emit(s, "error", 2)) return;
    }
    push_error(L, s->status, s->why);
    if (!emit(s, "status", 1)) return;
    if (!emit(s, "end", 0)) return;
    ll_vu_pending_del(s->vu, &s->pending);
    stream_close(s);
}

/* ---- the script's side ---- */

int ll_grpc_stream_new(lua_State *L) {
    const char *W = "grpc.Stream";
    ll_grpc_client *c = ll_grpc_client_check(L, 1);
    ll_vu *vu = ll_luaload_vu(L, "grpc.Stream()");
    const char *name = luaL_checkstring(L, 2);
    int params = lua_istable(L, 3) ? 3 : 0;
    if (!params && !lua_isnoneornil(L, 3)) return luaL_error(L, "%s: params: expected a table", W);
    const ll_grpc_conn *g = ll_grpc_conn_of(L, c, vu, W);
    ll_proto_method m;
    char err[512];
    if (ll_proto_find_method(c->proto, name, &m, err, sizeof(err)) < 0) return luaL_error(L, "%s: %s", W, err);
    if (!m.client_streaming && !m.server_streaming)
        return luaL_error(L, "%s: %s is a unary method: use client:invoke", W, m.path + 1);
    lua_settop(L, 3);
    gstream *s = lua_newuserdata(L, sizeof(*s)); /* collected with what it owns if a param raises */
    memset(s, 0, sizeof(*s));
    ll_http_req_init(&s->req);
    /* gzip: a message flagged compressed is inflated as gzip, the one
     * encoding luaload takes (the streamed body comes before its headers
     * reach here; another encoding fails to inflate: a counted INTERNAL) */
    ll_grpc_reader_init(&s->rd, g->max_recv, 1);
    s->self_ref = s->handlers_ref = LUA_NOREF;
    luaL_getmetatable(L, STREAM_MT);
    lua_setmetatable(L, -2);
    int sidx = lua_gettop(L);
    s->vu = vu;
    s->L = ll_worker_lua(ll_vu_worker(vu));
    s->in = m.in;
    s->max_send = g->max_send;
    s->out_type = m.out;
    const char *kind = m.client_streaming && m.server_streaming ? "bidi_streaming"
                       : m.client_streaming                    ? "client_streaming"
                                                               : "server_streaming";
    ll_grpc_tags_init(&s->t, vu, g->addr, m.path, kind);
    uint64_t timeout = g->timeout_us;
    if (params) {
        lua_getfield(L, params, "timeout");
        if (!lua_isnil(L, -1)) timeout = ll_grpc_duration(L, lua_gettop(L), W, "timeout");
        lua_settop(L, sidx);
    }
    ll_grpc_request(L, &s->req, &s->t, g, m.path, timeout, params, W);
    ll_body_set_generator(&s->req.body, body_gen, s, LL_BODY_LEN_UNKNOWN);
    s->req.on_chunk = on_chunk;
    s->req.chunk_ud = s;
    s->req.max_response_body = (int64_t)(g->max_recv + LL_GRPC_PREFIX);
    lua_newtable(L);
    s->handlers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ll_loop_timer_init(&s->dispatch, dispatch, s);
    const char *xerr = NULL;
    s->lane = ll_http_vu_lane_take(ll_vu_http(vu));
    s->x = ll_grpc_start(L, c, vu, s->lane, &s->req, 1, on_done, s, &xerr);
    if (!s->x) {
        ll_http_vu_lane_give(ll_vu_http(vu), s->lane);
        return luaL_error(L, "%s: %s", W, xerr);
    }
    lua_pushvalue(L, sidx);
    s->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->open = 1;
    ll_vu_pending_add(vu, &s->pending, stream_cancel, s);
    ll_grpc_sample(&s->t, LL_M_GRPC_STREAMS, 1);
    lua_settop(L, sidx);
    return 1;
}

static int l_on(lua_State *L) {
    gstream *s = check_stream(L);
    const char *ev = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    int i = 0;
    while (EVENTS[i] && strcmp(EVENTS[i], ev)) i++;
    if (!EVENTS[i])
        return luaL_error(L, "stream:on(): unknown event \"%s\" (expected data, error, status or end)", ev);
    if (s->open) ll_handlers_add(L, s->handlers_ref, ev, 3); /* else over: nothing will come */
    lua_settop(L, 1);
    return 1;
}

static int l_write(lua_State *L) {
    gstream *s = check_stream(L);
    const char *W = "stream:write()";
    if (!lua_istable(L, 2)) return luaL_error(L, "%s: expected a table (the message)", W);
    if (!s->open || s->writing_done || s->ended) return luaL_error(L, "%s: the stream is closed for writing", W);
    ll_grpc_encode(L, 2, s->in, s->max_send, &s->out, W);
    ll_grpc_sample(&s->t, LL_M_GRPC_STREAMS_MSGS_SENT, 1);
    if (s->x) s->x->tp->ops->resume(s->x);
    return 0;
}

static int l_end(lua_State *L) {
    gstream *s = check_stream(L);
    if (!s->open || s->writing_done) return 0;
    s->writing_done = 1;
    if (s->x) s->x->tp->ops->resume(s->x);
    return 0;
}

void ll_grpc_stream_register(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"on", l_on},
        {"write", l_write},
        {"end_stream", l_end}, {"endStream", l_end}, {"end", l_end},
        {NULL, NULL},
    };
    ll_lua_class(L, STREAM_MT, methods, stream_gc, 0);
}
