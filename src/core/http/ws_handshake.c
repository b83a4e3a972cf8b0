/* ws_handshake.c -- a WebSocket client's opening handshake (see
 * ws_handshake.h). The request is an ll_http_req written by
 * ll_h1_head_build, so Host, the jar's Cookie and User-Agent come out as
 * they do for any HTTP/1.1 request; the answer is read from the header
 * block h1_parse.c rebuilt. */
#include "ws_handshake.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "base64.h"
#include "list_token.h"
#include "redirect.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* headers the handshake writes itself: the caller may not give them */
static const char *const ws_own[] = {"Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
                                     "Sec-WebSocket-Extensions"};

int ll_ws_handshake_key(char key[LL_WS_KEY_LEN]) {
    unsigned char raw[16];
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t r = getrandom(raw + got, sizeof(raw) - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    char *b = ll_base64_encode(raw, sizeof(raw), NULL);
    if (!b) return -1;
    memcpy(key, b, LL_WS_KEY_LEN); /* 24 characters and the NUL */
    free(b);
    return 0;
}

int ll_ws_handshake_accept(const char *key, char out[32]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    char in[LL_WS_KEY_LEN + sizeof(ws_guid)];
    size_t kn = strnlen(key, LL_WS_KEY_LEN - 1);
    memcpy(in, key, kn);
    memcpy(in + kn, ws_guid, sizeof(ws_guid) - 1);
    unsigned mdlen = 0;
    if (!EVP_Digest(in, kn + sizeof(ws_guid) - 1, md, &mdlen, EVP_sha1(), NULL)) return -1;
    size_t n = 0;
    char *b = ll_base64_encode(md, mdlen, &n);
    if (!b || n >= 32) {
        free(b);
        return -1;
    }
    memcpy(out, b, n + 1);
    free(b);
    return 0;
}

/* The caller's header called name, or NULL */
static const char *ws_given(const ll_ws_handshake_in *in, const char *name) {
    for (int i = 0; i < in->nheaders; i++)
        if (strcasecmp(in->headers[i].name, name) == 0) return in->headers[i].value;
    return NULL;
}

/* The headers of the request: the caller's, checked, then the handshake's. */
static int ws_fill(ll_http_req *req, const ll_ws_handshake_in *in, const char *key, char *err, size_t errlen) {
    int rc = 0;
    for (int i = 0; i < in->nheaders; i++) {
        const ll_header *h = &in->headers[i];
        for (size_t k = 0; k < sizeof(ws_own) / sizeof(ws_own[0]); k++)
            if (strcasecmp(h->name, ws_own[k]) == 0) {
                snprintf(err, errlen, "websocket: the %s header is the handshake's own and cannot be given", h->name);
                return -1;
            }
        if (!ll_http_token_ok(h->name) || !ll_http_value_ok(h->value, strlen(h->value))) {
            snprintf(err, errlen, "websocket: the header %.60s cannot go on the wire (a name must be a token, a "
                     "value must hold no CR, LF or NUL)", h->name);
            return -1;
        }
        rc |= ll_http_req_add_header(req, h->name, h->value);
    }
    rc |= ll_http_req_add_header(req, "Upgrade", "websocket") | ll_http_req_add_header(req, "Connection", "Upgrade") |
          ll_http_req_add_header(req, "Sec-WebSocket-Key", key) |
          ll_http_req_add_header(req, "Sec-WebSocket-Version", "13");
    if (in->nprotocols > 0) {
        ll_buf list = {0};
        for (int i = 0; i < in->nprotocols; i++) {
            if (!ll_http_token_ok(in->protocols[i])) {
                snprintf(err, errlen, "websocket: the subprotocol \"%.60s\" is not a token (RFC 6455 4.1)",
                         in->protocols[i]);
                ll_buf_free(&list);
                return -1;
            }
            rc |= (i ? ll_buf_puts(&list, ", ") : 0) | ll_buf_puts(&list, in->protocols[i]);
        }
        rc |= list.p ? ll_http_req_add_header(req, "Sec-WebSocket-Protocol", list.p) : -1;
        ll_buf_free(&list);
    }
    if (in->extensions) rc |= ll_http_req_add_header(req, "Sec-WebSocket-Extensions", in->extensions);
    if (rc) snprintf(err, errlen, "websocket: out of memory writing the handshake");
    return rc ? -1 : 0;
}

int ll_ws_handshake_build(ll_h1_head *hd, const ll_ws_handshake_in *in, const char *key, char *err, size_t errlen) {
    ll_http_req req;
    ll_http_req_init(&req);
    int rc = ws_fill(&req, in, key, err, errlen);
    if (rc == 0 && in->cookie && !ll_http_value_ok(in->cookie, strlen(in->cookie))) {
        snprintf(err, errlen, "websocket: the Cookie value holds a CR, LF or NUL");
        rc = -1;
    }
    ll_h1_head_in hin = {.req = &req, .method = "GET", .url = in->url, .cookie = in->cookie,
                         .user_agent = in->user_agent ? in->user_agent : "luaload"};
    if (rc == 0 && ll_h1_head_build(hd, &hin) < 0) {
        snprintf(err, errlen, "websocket: out of memory writing the handshake");
        rc = -1;
    }
    ll_http_req_clear(&req);
    return rc;
}

/* 1 when the subprotocol p (n bytes) is one the request offered */
static int ws_offered(const ll_ws_handshake_in *in, const char *p, size_t n) {
    for (int i = 0; i < in->nprotocols; i++)
        if (strlen(in->protocols[i]) == n && memcmp(in->protocols[i], p, n) == 0) return 1;
    const char *own = ws_given(in, "Sec-WebSocket-Protocol"); /* k6/ws offers them as a header */
    return own && ll_list_token_has(own, strlen(own), p, n);
}

int ll_ws_handshake_check(const char *headers, size_t len, const char *key, const ll_ws_handshake_in *in,
                          const char **proto, size_t *plen, const char **ext, size_t *elen, char *err,
                          size_t errlen) {
    size_t pos = 0, n = 0;
    *proto = *ext = NULL;
    *plen = *elen = 0;
    const char *v = ll_http_header_next(headers, len, "Upgrade", &pos, &n);
    if (!v || !ll_list_token_has(v, n, "websocket", 9)) {
        snprintf(err, errlen, "websocket: bad handshake: the 101 has no \"Upgrade: websocket\"");
        return -1;
    }
    pos = 0;
    v = ll_http_header_next(headers, len, "Connection", &pos, &n);
    if (!v || !ll_list_token_has(v, n, "upgrade", 7)) {
        snprintf(err, errlen, "websocket: bad handshake: the 101 has no \"Connection: Upgrade\"");
        return -1;
    }
    char want[32];
    if (ll_ws_handshake_accept(key, want) < 0) {
        snprintf(err, errlen, "websocket: out of memory checking the handshake");
        return -1;
    }
    pos = 0;
    v = ll_http_header_next(headers, len, "Sec-WebSocket-Accept", &pos, &n);
    if (!v || n != strlen(want) || memcmp(v, want, n) != 0) {
        snprintf(err, errlen, "websocket: bad handshake: Sec-WebSocket-Accept %s the key's",
                 v ? "is not" : "is missing, it must be");
        return -1;
    }
    pos = 0;
    v = ll_http_header_next(headers, len, "Sec-WebSocket-Protocol", &pos, &n);
    if (v && n && !ws_offered(in, v, n)) {
        snprintf(err, errlen, "websocket: bad handshake: the server chose the subprotocol \"%.*s\", not one offered",
                 (int)(n > 60 ? 60 : n), v);
        return -1;
    }
    *proto = v;
    *plen = v ? n : 0;
    pos = 0;
    v = ll_http_header_next(headers, len, "Sec-WebSocket-Extensions", &pos, &n);
    if (v && n && !in->extensions) {
        snprintf(err, errlen, "websocket: bad handshake: the server answered with extensions (%.*s) none asked for",
                 (int)(n > 60 ? 60 : n), v);
        return -1;
    }
    *ext = v;
    *elen = v ? n : 0;
    return 0;
}
