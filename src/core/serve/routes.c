/* routes.c -- `luaload serve`'s routes and responses.
 *
 * Owns: matching a request target to a route (/status/N, /bytes/N,
 * /delay/MS, /echo, /close, /sha256, /multipart, /fault/NAME, /stats, the
 * demo application's /api/... ("api") and /login, /welcome ("login") as
 * app.c matches them, /ws/echo, /ws/send and /sse with their query
 * parameters, anything else the default route), the route names
 * the counters use, reason phrases, the status line and headers, the
 * default route's prebuilt keep-alive response, and queueing each route's
 * response (and the error responses) on the connection's output (conn.c).
 * What a fault does to a response is faults.c's; the upload routes'
 * answers are upload.c's, the demo application's app.c's, the WebSocket
 * sessions ws.c's, the event streams sse.c's. */
#include "xmalloc.h"
#include "serve_internal.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HELLO "hello world\n"
#define TEXT "text/plain"
#define STREAM_N_MAX 1000000            /* /ws/send's and /sse's n */
#define STREAM_INTERVAL_MAX 3600000     /* their interval, ms */
#define SSE_RETRY_MAX 86400000          /* /sse's retry, ms */
#define SSE_LINES_MAX 100               /* /sse's lines */

enum { CONN_HDR_NONE, CONN_HDR_CLOSE, CONN_HDR_KEEP };

/* ---- routes ---- */

static const char *const route_names[ROUTE_COUNT] = {
    "default", "status", "bytes", "delay", "echo", "close", "sha256", "multipart", "error", "fault", "stats",
    "api", "login", "ws_echo", "ws_send", "sse", "grpc", "malformed",
};

const char *ll_routes_name(int route) { return route_names[route]; }

static int has_prefix(const char *s, size_t n, const char *pre) {
    size_t k = strlen(pre);
    return n >= k && memcmp(s, pre, k) == 0;
}

static int is_exactly(const char *s, size_t n, const char *word) {
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* ---- query parameters (/ws/send, /sse) ---- */

static int name_is(const char *s, size_t n, const char *word) { return strlen(word) == n && memcmp(s, word, n) == 0; }

/* v (n bytes) as a decimal from 0 to max into *out. 0 or -1. */
static int param_u64(const char *v, size_t n, uint64_t max, uint64_t *out) {
    return ll_request_parse_u64n(v, n, out) == 0 && *out <= max ? 0 : -1;
}

/* 1 to SSE_EVENT_MAX of A-Z a-z 0-9 _ . - */
static int param_event(const char *v, size_t n, char *out) {
    if (n < 1 || n > SSE_EVENT_MAX) return -1;
    for (size_t i = 0; i < n; i++) {
        char ch = v[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == '-'))
            return -1;
    }
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

/* One name=value of the route's query into r->sp; NULL, or the reason
 * (one line, with its newline) it is refused. */
static const char *stream_param(request *r, const char *name, size_t nn, const char *v, size_t vn) {
    stream_params *sp = &r->sp;
    uint64_t x;
    int sse = r->route == ROUTE_SSE;
    if (name_is(name, nn, "n"))
        return param_u64(v, vn, STREAM_N_MAX, &sp->n) == 0 ? NULL : "bad n: expected an integer from 0 to 1000000\n";
    if (name_is(name, nn, "interval")) {
        if (param_u64(v, vn, STREAM_INTERVAL_MAX, &x) < 0)
            return "bad interval: expected milliseconds from 0 to 3600000\n";
        sp->interval_us = x * 1000;
        return NULL;
    }
    if (!sse && name_is(name, nn, "size"))
        return param_u64(v, vn, WS_MSG_MAX, &sp->size) == 0 ? NULL
                                                              : "bad size: expected bytes from 0 to 1048576\n";
    if (sse && name_is(name, nn, "event"))
        return param_event(v, vn, sp->event) == 0 ? NULL
                                                  : "bad event: expected 1 to 64 of A-Z a-z 0-9 _ . -\n";
    if (sse && name_is(name, nn, "retry")) {
        sp->has_retry = 1;
        return param_u64(v, vn, SSE_RETRY_MAX, &sp->retry_ms) == 0
                   ? NULL
                   : "bad retry: expected milliseconds from 0 to 86400000\n";
    }
    if (sse && name_is(name, nn, "lines")) {
        if (param_u64(v, vn, SSE_LINES_MAX, &x) < 0 || x < 1) return "bad lines: expected an integer from 1 to 100\n";
        sp->lines = (int)x;
        return NULL;
    }
    if (r->route == ROUTE_WS_ECHO) return "unknown parameter: /ws/echo takes none\n";
    return sse ? "unknown parameter: /sse takes n, interval, event, retry and lines\n"
               : "unknown parameter: /ws/send takes n, size and interval\n";
}

/* The defaults, then the query (q to end, after its '?'; a '#' ends it):
 * sets r->msg for a bad or unknown parameter. */
static void stream_params_parse(request *r, const char *q, const char *end) {
    r->sp.n = 10;
    r->sp.size = 32;
    r->sp.lines = 1;
    if (q >= end || *q != '?') return;
    const char *e = ++q;
    while (e < end && *e != '#') e++;
    end = e;
    while (q < end && !r->msg) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        if (!amp) amp = end;
        const char *eq = memchr(q, '=', (size_t)(amp - q));
        if (amp > q) {
            const char *ne = eq ? eq : amp, *v = eq ? eq + 1 : amp;
            r->msg = stream_param(r, q, (size_t)(ne - q), v, (size_t)(amp - v));
        }
        q = amp + 1;
    }
}

/* Fills in route, status, delay and fault (and msg, making it ROUTE_ERROR
 * with status 400 or 404, for a bad number or an unknown fault) from the
 * request target. */
void ll_routes_match(request *r, const serve_cfg *cfg, const char *t, size_t n) {
    const char *end = t + n, *path = t;
    uint64_t v;
    int app;
    if (has_prefix(t, n, "http://") || has_prefix(t, n, "https://")) {
        const char *host = (const char *)memchr(t, ':', n) + 3;
        path = memchr(host, '/', (size_t)(end - host));
        if (!path) path = end;
    }
    const char *q = path;
    while (q < end && *q != '?' && *q != '#') q++;
    size_t len = (size_t)(q - path);
    r->route = ROUTE_DEFAULT;
    r->status = cfg->status;
    r->delay_us = cfg->delay_us;
    r->msg = NULL;
    int bad_status = 400;
    if (has_prefix(path, len, "/status/")) {
        r->route = ROUTE_STATUS;
        r->delay_us = 0;
        if (ll_request_parse_u64n(path + 8, len - 8, &v) == 0 && v >= 100 && v <= 999) r->status = (int)v;
        else r->msg = "bad status: expected /status/100..999\n";
    } else if (has_prefix(path, len, "/bytes/")) {
        r->route = ROUTE_BYTES;
        r->delay_us = 0;
        if (ll_request_parse_u64n(path + 7, len - 7, &v) == 0) r->nbytes = v;
        else r->msg = "bad size: expected /bytes/N\n";
    } else if (has_prefix(path, len, "/delay/")) {
        r->route = ROUTE_DELAY;
        r->delay_us = 0;
        if (ll_request_parse_u64n(path + 7, len - 7, &v) == 0 && v <= 86400000) r->delay_us = v * 1000;
        else r->msg = "bad delay: expected /delay/MS (up to 86400000)\n";
    } else if (is_exactly(path, len, "/echo")) {
        r->route = ROUTE_ECHO;
        r->delay_us = 0;
    } else if (is_exactly(path, len, "/close")) {
        r->route = ROUTE_CLOSE;
        r->delay_us = 0;
    } else if (is_exactly(path, len, "/sha256")) {
        r->route = ROUTE_SHA256;
        r->delay_us = 0;
    } else if (is_exactly(path, len, "/multipart")) {
        r->route = ROUTE_MULTIPART;
        r->delay_us = 0;
    } else if (has_prefix(path, len, "/fault/")) {
        r->route = ROUTE_FAULT;
        r->delay_us = 0;
        r->fault = ll_faults_lookup(path + 7, len - 7);
        bad_status = 404;
        if (r->fault == FAULT_NONE)
            r->msg = "unknown fault: expected /fault/ followed by reset, close-headers, close-body, garbage,"
                     " slow-headers, slow-body, stall, huge-headers or early-hints\n";
    } else if (is_exactly(path, len, "/stats")) {
        r->route = ROUTE_STATS;
        r->delay_us = 0;
    } else if (is_exactly(path, len, "/ws/echo") || is_exactly(path, len, "/ws/send") ||
               is_exactly(path, len, "/sse")) {
        r->route = path[1] == 's' ? ROUTE_SSE : path[4] == 'e' ? ROUTE_WS_ECHO : ROUTE_WS_SEND;
        r->delay_us = 0;
        stream_params_parse(r, q, end);
    } else if (has_prefix(path, len, "/ws/")) {
        r->route = ROUTE_ERROR;
        r->delay_us = 0;
        bad_status = 404;
        r->msg = "unknown WebSocket route: expected /ws/echo or /ws/send\n";
    } else if ((app = ll_app_match(r, path, len)) >= 0) {
        r->route = app;
        r->delay_us = 0;
    }
    if (r->msg) {
        r->route = ROUTE_ERROR;
        r->status = bad_status;
    }
}

/* ---- response text ---- */

static const char *reason(int status) {
    switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 418: return "I'm a teapot";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* 1xx, 204 and 304 responses never carry a body. */
static int body_allowed(int status) { return status >= 200 && status != 204 && status != 304; }

static size_t append_str(char *buf, size_t cap, size_t n, const char *s) {
    size_t k = strlen(s);
    if (n + k >= cap) return n;
    memcpy(buf + n, s, k);
    return n + k;
}

/* Status line and headers, with extra (header lines, each ending in CRLF)
 * when not NULL. 1xx and 204 get no Content-Length (RFC 9110). */
static size_t format_head(char *buf, size_t cap, int status, const char *type, const char *extra, uint64_t len,
                          int conn_hdr) {
    char num[48];
    size_t n = 0;
    snprintf(num, sizeof(num), "HTTP/1.1 %d ", status);
    n = append_str(buf, cap, n, num);
    n = append_str(buf, cap, n, reason(status));
    n = append_str(buf, cap, n, "\r\nContent-Type: ");
    n = append_str(buf, cap, n, type);
    n = append_str(buf, cap, n, "\r\n");
    if (status >= 200 && status != 204) {
        snprintf(num, sizeof(num), "Content-Length: %" PRIu64 "\r\n", len);
        n = append_str(buf, cap, n, num);
    }
    if (conn_hdr == CONN_HDR_CLOSE) n = append_str(buf, cap, n, "Connection: close\r\n");
    if (conn_hdr == CONN_HDR_KEEP) n = append_str(buf, cap, n, "Connection: keep-alive\r\n");
    if (extra) n = append_str(buf, cap, n, extra);
    return append_str(buf, cap, n, "\r\n");
}

/* The default route's keep-alive HTTP/1.1 response, prebuilt once; the
 * demo application's key is drawn here too, at serve start. */
void ll_routes_build_fast(serve_cfg *cfg) {
    char head[256];
    int has_body = body_allowed(cfg->status);
    uint64_t len = has_body ? cfg->body_size : 0;
    size_t hn = format_head(head, sizeof(head), cfg->status, TEXT, NULL, len, CONN_HDR_NONE);
    size_t inline_len = len <= FILL_INLINE ? (size_t)len : 0;
    cfg->fast = ll_xmalloc(hn + inline_len + 1);
    memcpy(cfg->fast, head, hn);
    if (inline_len == 12) memcpy(cfg->fast + hn, HELLO, 12);
    else memset(cfg->fast + hn, 'x', inline_len);
    cfg->fast_len = hn + inline_len;
    cfg->fast_fill = len > FILL_INLINE;
}

/* ---- responses ---- */

/* Queues the head (with the extra header lines, and the huge-headers
 * fault's filler before its blank line) and the body; records the head's
 * length in r->head_len. */
static void respond_full(conn *c, int status, const char *type, const char *extra, const char *body, uint64_t len,
                         int fill) {
    request *r = &c->req;
    int conn_hdr = !r->keep_alive ? CONN_HDR_CLOSE : r->http10 ? CONN_HDR_KEEP : CONN_HDR_NONE;
    int has_body = body_allowed(status);
    char head[1024];
    size_t n = format_head(head, sizeof(head), status, type, extra, has_body ? len : 0, conn_hdr);
    r->head_len = n;
    if (r->fault == FAULT_HUGE_HEADERS) {
        uint64_t before = c->out_pending;
        ll_conn_out_bytes(c, head, n - 2);
        ll_faults_out_filler(c);
        ll_conn_out_bytes(c, "\r\n", 2);
        r->head_len = (size_t)(c->out_pending - before);
    } else {
        ll_conn_out_bytes(c, head, n);
    }
    if (!has_body || r->head) return;
    if (fill) ll_conn_out_fill(c, len);
    else ll_conn_out_bytes(c, body, (size_t)len);
}

static void respond_with(conn *c, int status, const char *body, uint64_t len, int fill) {
    respond_full(c, status, TEXT, NULL, body, len, fill);
}

static void respond_stats(conn *c) {
    ll_buf b = {0};
    ll_stats_json(&b, c->w->cfg->workers, c->w->cfg->threads);
    ll_buf_puts(&b, "\n");
    if (b.failed) c->failed = 1;
    else respond_full(c, 200, "application/json", NULL, b.p, b.len, 0);
    ll_buf_free(&b);
}

/* /sha256: the digest with X-Body-Size; /multipart: the parts' JSON. */
static void respond_upload(conn *c) {
    char extra[64];
    size_t len;
    const char *body = ll_upload_answer(c, &len);
    if (c->req.route == ROUTE_MULTIPART) {
        respond_full(c, 200, "application/json", NULL, body, len, 0);
        return;
    }
    snprintf(extra, sizeof(extra), "X-Body-Size: %" PRIu64 "\r\n", ll_upload_body_size(c));
    respond_full(c, 200, TEXT, extra, body, len, 0);
}

/* The demo application's pages: app.c's answer. */
static void respond_app(conn *c) {
    app_reply a;
    ll_app_respond(c, &a);
    if (a.body.failed) c->failed = 1;
    else respond_full(c, a.status, a.type, a.extra[0] ? a.extra : NULL, a.body.p ? a.body.p : "", a.body.len, 0);
    ll_buf_free(&a.body);
}

size_t ll_routes_respond_general(conn *c) {
    request *r = &c->req;
    const serve_cfg *cfg = c->w->cfg;
    char text[64];
    r->head_len = 0;
    switch (r->route) {
    case ROUTE_DEFAULT:
        if (cfg->body_size == 12) {
            respond_with(c, cfg->status, HELLO, 12, 0);
        } else {
            respond_with(c, cfg->status, NULL, cfg->body_size, 1);
        }
        break;
    case ROUTE_STATUS:
        snprintf(text, sizeof(text), "%d %s\n", r->status, reason(r->status));
        respond_with(c, r->status, text, strlen(text), 0);
        break;
    case ROUTE_BYTES:
        respond_with(c, 200, NULL, r->nbytes, 1);
        break;
    case ROUTE_ECHO:
        respond_with(c, 200, c->body, c->blen, 0);
        break;
    case ROUTE_SHA256:
    case ROUTE_MULTIPART:
        respond_upload(c);
        break;
    case ROUTE_ERROR:
        respond_full(c, r->status, TEXT, r->msg_extra, r->msg, strlen(r->msg), 0);
        break;
    case ROUTE_WS_ECHO:
    case ROUTE_WS_SEND:
        ll_ws_accept(c);
        break;
    case ROUTE_SSE:
        ll_sse_begin(c);
        break;
    case ROUTE_STATS:
        respond_stats(c);
        break;
    case ROUTE_API:
    case ROUTE_LOGIN:
        respond_app(c);
        break;
    default: /* ROUTE_DELAY, ROUTE_CLOSE, ROUTE_FAULT */
        respond_with(c, 200, HELLO, 12, 0);
        break;
    }
    return r->head_len;
}

void ll_routes_respond(conn *c) {
    request *r = &c->req;
    const serve_cfg *cfg = c->w->cfg;
    if (r->route == ROUTE_DEFAULT && r->keep_alive && !r->http10 && !r->head) {
        ll_conn_out_bytes(c, cfg->fast, cfg->fast_len);
        if (cfg->fast_fill) ll_conn_out_fill(c, cfg->body_size);
        return;
    }
    ll_routes_respond_general(c);
}

void ll_routes_respond_error(conn *c) {
    request *r = &c->req;
    int status = r->err_status ? r->err_status : 400;
    const char *msg = r->err_status && r->msg ? r->msg : "bad request\n";
    r->keep_alive = 0;
    r->http10 = 0;
    r->head = 0;
    r->fault = FAULT_NONE; /* a bad /fault/huge-headers request gets a plain 400 */
    /* the demo application's 413 for an /api/... body is JSON */
    respond_full(c, status, r->err_status && r->route == ROUTE_API ? "application/json" : TEXT, NULL, msg,
                 strlen(msg), 0);
    c->closing = 1;
}
