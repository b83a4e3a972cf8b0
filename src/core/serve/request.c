/* request.c -- `luaload serve`'s HTTP/1.1 request parser.
 *
 * Owns: parsing a connection's rbuf into its request, incrementally: the
 * request line (the target goes to routes.c's ll_routes_match), the headers
 * that matter (Content-Length, Transfer-Encoding, Connection, Expect,
 * Content-Type; Authorization and Cookie for the demo application), the
 * method, the body by Content-Length or chunked with trailers (kept for
 * /echo and, after its kept header lines, for the demo application, passed
 * on to upload.c as it arrives for /sha256 and /multipart, dropped as it
 * arrives otherwise: a body of any size costs no memory), the limits on
 * them, the decimal parser serve.c, routes.c and app.c share, the method
 * names /stats uses, and handing each header line to headers.c when
 * --echo-header names some, and a /ws/ route's other header lines to ws.c
 * (which checks the upgrade once the head is parsed). */
#include "list_token.h"
#include "serve_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEAD_MAX (64 * 1024)            /* request line + headers */
#define CHUNK_LINE_MAX 4096             /* chunk-size line incl. extensions */
#define ECHO_MAX (64ull * 1024 * 1024)  /* largest body /echo will hold */
#define APP_MAX (64 * 1024)             /* largest body the demo application takes */

int ll_request_parse_u64n(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* ---- head ---- */

int ll_request_is_tchar(unsigned char ch) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) return 1;
    switch (ch) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
        return 1;
    default:
        return 0;
    }
}

static const char *const method_names[METHOD_COUNT] = {
    "other", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
};

const char *ll_request_method_name(int method) { return method_names[method]; }

/* Methods are case-sensitive: "get" is METHOD_OTHER. */
int ll_request_method(const char *p, size_t n) {
    for (int m = METHOD_OTHER + 1; m < METHOD_COUNT; m++)
        if (strlen(method_names[m]) == n && memcmp(p, method_names[m], n) == 0) return m;
    return METHOD_OTHER;
}

/* "METHOD SP target SP HTTP/1.x", eol excluded. */
static int parse_request_line(request *r, const serve_cfg *cfg, const char *p, const char *eol) {
    const char *sp = memchr(p, ' ', (size_t)(eol - p));
    if (!sp || sp == p) return -1;
    for (const char *q = p; q < sp; q++)
        if (!ll_request_is_tchar((unsigned char)*q)) return -1;
    r->method = ll_request_method(p, (size_t)(sp - p));
    r->head = r->method == METHOD_HEAD;
    const char *t = sp + 1;
    const char *sp2 = memchr(t, ' ', (size_t)(eol - t));
    if (!sp2 || sp2 == t) return -1;
    for (const char *q = t; q < sp2; q++)
        if ((unsigned char)*q <= 0x20 || *q == 0x7f) return -1;
    const char *v = sp2 + 1;
    if (eol - v != 8 || memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1')) return -1;
    r->http10 = v[7] == '0';
    ll_routes_match(r, cfg, t, (size_t)(sp2 - t));
    return 0;
}

static void parse_connection(request *r, const char *v, size_t n) {
    if (ll_list_token_has(v, n, "close", 5)) r->conn_close = 1;
    if (ll_list_token_has(v, n, "keep-alive", 10)) r->conn_ka = 1;
    if (ll_list_token_has(v, n, "upgrade", 7)) r->conn_upgrade = 1;
}

static int header_is(const char *name, size_t n, const char *want) {
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

static int is_upload(const request *r) { return r->route == ROUTE_SHA256 || r->route == ROUTE_MULTIPART; }
static int is_app(const request *r) { return r->route == ROUTE_API || r->route == ROUTE_LOGIN; }
static int is_ws(const request *r) { return r->route == ROUTE_WS_ECHO || r->route == ROUTE_WS_SEND; }

/* Appends n bytes to c->body, which holds at most max. 0, or -1 past max
 * or out of memory. */
static int keep(conn *c, const char *p, size_t n, uint64_t max) {
    if (c->blen + n > max) return -1;
    if (c->bcap - c->blen < n) {
        size_t cap = c->bcap ? c->bcap : BUF_INIT;
        while (cap - c->blen < n) cap *= 2;
        char *b = realloc(c->body, cap);
        if (!b) return -1;
        c->body = b;
        c->bcap = cap;
    }
    memcpy(c->body + c->blen, p, n);
    c->blen += n;
    return 0;
}

/* The demo application's header lines, "authorization: v\r\n" and
 * "cookie: v\r\n" (name lowercase), kept at the start of c->body. */
static int keep_app_header(conn *c, const char *name, const char *v, size_t vlen) {
    uint64_t max = HEAD_MAX + APP_MAX;
    if (keep(c, name, strlen(name), max) < 0 || keep(c, ": ", 2, max) < 0 || keep(c, v, vlen, max) < 0) return -1;
    return keep(c, "\r\n", 2, max);
}

/* One "Name: value" line, eol excluded. */
static int parse_header(conn *c, const char *p, const char *eol) {
    request *r = &c->req;
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (!colon || colon == p) return -1;
    for (const char *q = p; q < colon; q++)
        if (!ll_request_is_tchar((unsigned char)*q)) return -1;
    size_t nlen = (size_t)(colon - p);
    const char *v = colon + 1, *ve = eol;
    while (v < ve && (*v == ' ' || *v == '\t')) v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
    size_t vlen = (size_t)(ve - v);
    uint64_t cl;
    if (c->w->cfg->nhdr) ll_headers_seen(c, p, nlen, v, vlen);
    if (header_is(p, nlen, "content-length")) {
        if (ll_request_parse_u64n(v, vlen, &cl) < 0 || cl > (1ull << 62)) return -1;
        if (r->has_cl && cl != r->content_length) return -1;
        r->has_cl = 1;
        r->content_length = cl;
    } else if (header_is(p, nlen, "transfer-encoding")) {
        if (r->te_seen || vlen != 7 || strncasecmp(v, "chunked", 7) != 0) return -1;
        r->te_seen = 1;
        r->chunked = 1;
    } else if (header_is(p, nlen, "connection")) {
        parse_connection(r, v, vlen);
    } else if (header_is(p, nlen, "expect")) {
        r->expect_continue = vlen == 12 && strncasecmp(v, "100-continue", 12) == 0;
    } else if (header_is(p, nlen, "content-type")) {
        r->ctype = v; /* in rbuf, read by ll_upload_begin before parse_head returns */
        r->ctype_len = vlen;
    } else if (is_app(r) && header_is(p, nlen, "authorization")) {
        return keep_app_header(c, "authorization", v, vlen);
    } else if (is_app(r) && header_is(p, nlen, "cookie")) {
        return keep_app_header(c, "cookie", v, vlen);
    } else if (is_ws(r)) {
        ll_ws_header(r, p, nlen, v, vlen);
    }
    return 0;
}

/* A 413 for a demo application body above APP_MAX. */
static int app_too_large(request *r) {
    r->err_status = 413;
    r->msg = r->route == ROUTE_API ? "{\"error\":\"request body too large (64 KiB at most)\"}"
                                   : "request body too large (64 KiB at most)\n";
    return -1;
}

/* Request line and headers; on success rpos moves past the blank line. */
static int parse_head(conn *c) {
    request *r = &c->req;
    while (c->rlen - c->rpos >= 2 && c->rbuf[c->rpos] == '\r' && c->rbuf[c->rpos + 1] == '\n') {
        c->rpos += 2; /* empty lines before a request line are allowed */
        c->scan = 0;
    }
    char *start = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    char *end = avail >= 4 ? memmem(start + c->scan, avail - c->scan, "\r\n\r\n", 4) : NULL;
    if (!end) {
        c->scan = avail > 3 ? avail - 3 : 0;
        /* a method byte that is no token's (a TLS ClientHello starts with
         * 0x16) is refused at once, as nginx does: the client is told now,
         * not when its timeout runs out */
        for (size_t i = 0; i < avail && start[i] != ' '; i++)
            if (!ll_request_is_tchar((unsigned char)start[i]) && start[i] != '\r' && start[i] != '\n') return P_BAD;
        return avail > HEAD_MAX ? P_BAD : P_MORE;
    }
    size_t head_len = (size_t)(end - start) + 4;
    c->scan = 0;
    if (head_len > HEAD_MAX) return P_BAD;
    char *stop = end + 2; /* the blank line */
    char *eol = memchr(start, '\n', (size_t)(stop - start));
    char *line_end = eol > start && eol[-1] == '\r' ? eol - 1 : eol;
    if (parse_request_line(r, c->w->cfg, start, line_end) < 0) return P_BAD;
    for (char *line = eol + 1; line < stop; line = eol + 1) {
        eol = memchr(line, '\n', (size_t)(stop - line));
        line_end = eol > line && eol[-1] == '\r' ? eol - 1 : eol;
        if (parse_header(c, line, line_end) < 0) return P_BAD;
    }
    c->rpos += head_len;
    if (r->chunked && r->has_cl) return P_BAD;
    r->keep_alive = r->http10 ? r->conn_ka && !r->conn_close : !r->conn_close;
    if (r->route == ROUTE_CLOSE) r->keep_alive = 0;
    if (is_ws(r)) ll_ws_check(r);
    if (r->route == ROUTE_ECHO && r->content_length > ECHO_MAX) {
        r->err_status = 413;
        r->msg = "request body too large for /echo\n";
        return P_BAD;
    }
    r->app_hdr_len = c->blen;
    if (is_app(r) && r->content_length > APP_MAX) {
        app_too_large(r);
        return P_BAD;
    }
    r->state = r->chunked ? RS_CHUNK_SIZE : r->content_length > 0 ? RS_BODY : RS_READY;
    r->left = r->content_length;
    if (is_upload(r)) ll_upload_begin(c);
    if (r->expect_continue && !r->http10 && r->state != RS_READY)
        ll_conn_out_bytes(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    return P_OK;
}

/* ---- body ---- */

static int body_append(conn *c, const char *p, size_t n) {
    request *r = &c->req;
    if (n == 0) return 0;
    if (is_upload(r)) {
        ll_upload_data(c, p, n); /* hashed, not kept */
        return 0;
    }
    if (is_app(r)) return keep(c, p, n, r->app_hdr_len + APP_MAX) < 0 ? app_too_large(r) : 0;
    if (r->route != ROUTE_ECHO) return 0; /* other routes drop the body */
    if (keep(c, p, n, ECHO_MAX) == 0) return 0;
    r->err_status = 413;
    r->msg = c->blen + n > ECHO_MAX ? "request body too large for /echo\n" : "out of memory for the /echo body\n";
    return -1;
}

static int parse_body_data(conn *c) {
    request *r = &c->req;
    size_t avail = c->rlen - c->rpos;
    size_t take = r->left < avail ? (size_t)r->left : avail;
    if (body_append(c, c->rbuf + c->rpos, take) < 0) return P_BAD;
    c->rpos += take;
    r->left -= take;
    if (r->left > 0) return P_MORE;
    r->state = r->state == RS_BODY ? RS_READY : RS_CHUNK_END;
    return P_OK;
}

static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* "1a;ext=1\r\n" */
static int parse_chunk_size(conn *c) {
    request *r = &c->req;
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    const char *nl = memchr(p, '\n', avail);
    if (!nl) return avail > CHUNK_LINE_MAX ? P_BAD : P_MORE;
    uint64_t size = 0;
    const char *q = p;
    for (; q < nl && hex_value(*q) >= 0; q++) {
        if (size >> 58) return P_BAD;
        size = size * 16 + (uint64_t)hex_value(*q);
    }
    if (q == p || (*q != ';' && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\n')) return P_BAD;
    c->rpos += (size_t)(nl - p) + 1;
    r->left = size;
    r->state = size ? RS_CHUNK_DATA : RS_TRAILER;
    return P_OK;
}

/* The CRLF after a chunk's data. */
static int parse_chunk_end(conn *c) {
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    size_t n = avail >= 1 && p[0] == '\n' ? 1 : 2;
    if (avail < n) return P_MORE;
    if (n == 2 && (p[0] != '\r' || p[1] != '\n')) return P_BAD;
    c->rpos += n;
    c->req.state = RS_CHUNK_SIZE;
    return P_OK;
}

/* Trailer fields (ignored) up to the blank line that ends the body. */
static int parse_trailer(conn *c) {
    const char *p = c->rbuf + c->rpos;
    size_t avail = c->rlen - c->rpos;
    const char *nl = memchr(p, '\n', avail);
    if (!nl) return avail > HEAD_MAX ? P_BAD : P_MORE;
    size_t len = (size_t)(nl - p);
    c->rpos += len + 1;
    if (len == 0 || (len == 1 && p[0] == '\r')) c->req.state = RS_READY;
    return P_OK;
}

static int parse_body(conn *c) {
    for (;;) {
        int rc;
        switch (c->req.state) {
        case RS_READY: return P_OK;
        case RS_BODY:
        case RS_CHUNK_DATA: rc = parse_body_data(c); break;
        case RS_CHUNK_SIZE: rc = parse_chunk_size(c); break;
        case RS_CHUNK_END: rc = parse_chunk_end(c); break;
        case RS_TRAILER: rc = parse_trailer(c); break;
        default: return P_BAD;
        }
        if (rc != P_OK) return rc;
    }
}

int ll_request_parse(conn *c) {
    int was_ready = c->req.state == RS_READY; /* a delayed request, parsed again */
    int rc = c->req.state == RS_HEAD ? parse_head(c) : P_OK;
    if (rc == P_OK) rc = parse_body(c);
    if (rc == P_OK && !was_ready && is_upload(&c->req)) ll_upload_end(c);
    return rc;
}

void ll_request_reset(conn *c) {
    memset(&c->req, 0, sizeof(c->req));
    c->blen = 0;
    if (c->up) ll_upload_trim(c->up);
    if (c->bcap > BUF_KEEP) {
        free(c->body);
        c->body = NULL;
        c->bcap = 0;
    }
}
