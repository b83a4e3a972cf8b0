/* test_ws_conn.c -- ws_conn.c and ws_handshake.c on a real loop against a
 * third-party WebSocket server: Debian's python3-websockets
 * (tests/e2e/helpers/ws_peer.py, started here on 127.0.0.1 and a free
 * port, plain and with a self-signed certificate openssl makes here).
 * Echo, headers and cookies, subprotocols, fragments, ping and pong, a 403,
 * a message over the size limit, a malformed frame, closes both ways, a
 * dropped connection, timeouts, refused connects, wss with and without the
 * CA, and cancels from inside callbacks. Every wait is bounded. */
/* links: ll_http */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loop.h"
#include "resolve.h"
#include "test_util.h"
#include "ws_conn.h"
#include "ws_deflate.h"
#include "ws_handshake.h"

#define PEER LUALOAD_SOURCE_LUA_DIR "/../../tests/e2e/helpers/ws_peer.py"

typedef struct peer {
    pid_t pid;
    int to_peer; /* its stdin: closing it stops it */
    int port;
} peer;

static int peer_start(peer *p, const char *cert, const char *key, const char *client_ca) {
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0) return -1;
    p->pid = fork();
    if (p->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        if (client_ca) execl("/usr/bin/python3", "python3", PEER, "--tls", cert, key, client_ca, (char *)NULL);
        if (cert) execl("/usr/bin/python3", "python3", PEER, "--tls", cert, key, (char *)NULL);
        else execl("/usr/bin/python3", "python3", PEER, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->to_peer = in[1];
    char line[32] = "";
    FILE *f = fdopen(out[0], "r");
    if (!f || !fgets(line, sizeof(line), f)) {
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    p->port = atoi(line);
    return p->port > 0 ? 0 : -1;
}

static void peer_stop(peer *p) {
    if (p->pid <= 0) return;
    close(p->to_peer);
    for (int i = 0; i < 50; i++) {
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid) return;
        usleep(100000);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
}

/* what the callbacks saw */
typedef struct seen {
    int opens, messages, pings, pongs, errors, closes;
    int status, open_code, err_code, close_code, last_opcode;
    char open_err[320], headers[2048], protocol[64], tls_version[32], extensions[128];
    int all_a; /* the big message was all 'a' */
    char err[320], reason[128], ping_data[32], pong_data[32];
    char msg[4][64];
    size_t msg_len[4];
    size_t big_len;
    ll_ws_timings t;
    int after_end; /* callbacks after the close or a failed open */
    int free_on_message; /* ll_ws_free from the first message callback */
    int send_on_open;
    ll_ws *ws;
} seen;

static void on_open(ll_ws *ws, const ll_ws_open_result *r, void *ud) {
    seen *s = ud;
    if (s->closes || s->open_code) s->after_end++;
    s->opens++;
    s->status = r->status;
    s->open_code = r->error_code;
    snprintf(s->open_err, sizeof(s->open_err), "%s", r->error);
    snprintf(s->headers, sizeof(s->headers), "%.*s", (int)r->headers_len, r->headers);
    snprintf(s->protocol, sizeof(s->protocol), "%s", r->protocol);
    snprintf(s->tls_version, sizeof(s->tls_version), "%s", r->tls_version);
    snprintf(s->extensions, sizeof(s->extensions), "%s", r->extensions);
    s->t = r->t;
    if (!r->error_code && s->send_on_open) ll_ws_send(ws, LL_WS_TEXT, "first", 5);
}

static void on_message(ll_ws *ws, int opcode, const char *data, size_t len, void *ud) {
    seen *s = ud;
    if (s->closes || s->open_code) s->after_end++;
    if (s->messages < 4) {
        size_t n = len < sizeof(s->msg[0]) - 1 ? len : sizeof(s->msg[0]) - 1;
        memcpy(s->msg[s->messages], data, n);
        s->msg[s->messages][n] = 0;
        s->msg_len[s->messages] = len;
    }
    s->big_len = len;
    s->all_a = len > 0;
    for (size_t i = 0; i < len && s->all_a; i++) s->all_a = data[i] == 'a';
    s->messages++;
    s->last_opcode = opcode;
    if (s->free_on_message) {
        ll_ws_free(ws);
        s->ws = NULL;
    }
}

static void on_ping(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    seen *s = ud;
    s->pings++;
    snprintf(s->ping_data, sizeof(s->ping_data), "%.*s", (int)len, data);
}

static void on_pong(ll_ws *ws, const char *data, size_t len, void *ud) {
    (void)ws;
    seen *s = ud;
    s->pongs++;
    snprintf(s->pong_data, sizeof(s->pong_data), "%.*s", (int)len, data);
}

static void on_error(ll_ws *ws, int code, const char *msg, void *ud) {
    (void)ws;
    seen *s = ud;
    if (s->closes) s->after_end++;
    s->errors++;
    s->err_code = code;
    snprintf(s->err, sizeof(s->err), "%s", msg);
}

static void on_close(ll_ws *ws, int code, const char *reason, size_t len, void *ud) {
    (void)ws;
    seen *s = ud;
    if (s->closes) s->after_end++;
    s->closes++;
    s->close_code = code;
    snprintf(s->reason, sizeof(s->reason), "%.*s", (int)len, reason);
}

static const ll_ws_callbacks cbs = {on_open, on_message, on_ping, on_pong, on_error, on_close};

static ll_loop *loop;
static ll_resolver *dns;

/* Turns the loop until cond holds or ms passed; 1 when it held. */
#define RUN_UNTIL(cond, ms)                                                                                            \
    ({                                                                                                                 \
        uint64_t end_ = ll_loop_now_ns() + (uint64_t)(ms) * 1000000ull;                                               \
        while (!(cond) && ll_loop_now_ns() < end_) ll_loop_turn(loop, 20);                                             \
        (cond) ? 1 : 0;                                                                                                \
    })

static ll_ws *open_ws(const char *url, const ll_ws_opts *extra, seen *s) {
    ll_ws_opts o = extra ? *extra : (ll_ws_opts){0};
    o.dns = dns;
    char err[256] = "";
    ll_ws *ws = ll_ws_open(loop, url, &o, &cbs, s, err, sizeof(err));
    if (!ws) printf("# open %s: %s\n", url, err);
    s->ws = ws;
    return ws;
}

static void test_accept(void) {
    char out[32];
    tu_check(ll_ws_handshake_accept("dGhlIHNhbXBsZSBub25jZQ==", out) == 0 &&
                 strcmp(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == 0,
             "Sec-WebSocket-Accept of RFC 6455's example key (%s)", out);
    char k1[LL_WS_KEY_LEN], k2[LL_WS_KEY_LEN];
    tu_check(ll_ws_handshake_key(k1) == 0 && ll_ws_handshake_key(k2) == 0 && strlen(k1) == 24 && strcmp(k1, k2) != 0,
             "keys are 24 characters of base64 and differ (%s %s)", k1, k2);
}

static void test_bad_args(int port) {
    char url[128], err[256] = "";
    ll_ws_opts o = {.dns = dns};
    seen s = {0};
    tu_check(!ll_ws_open(loop, "http://127.0.0.1/", &o, &cbs, &s, err, sizeof(err)) && strstr(err, "ws://"),
             "an http:// URL is refused: %s", err);
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/echo", port);
    ll_header bad = {"Upgrade", "h2c"};
    o.headers = &bad;
    o.nheaders = 1;
    tu_check(!ll_ws_open(loop, url, &o, &cbs, &s, err, sizeof(err)) && strstr(err, "Upgrade"),
             "the handshake's own header is refused: %s", err);
    ll_header crlf = {"X-A", "a\r\nX-B: b"};
    o.headers = &crlf;
    tu_check(!ll_ws_open(loop, url, &o, &cbs, &s, err, sizeof(err)), "a value with CR LF is refused: %s", err);
    o.headers = NULL;
    o.nheaders = 0;
    const char *protos[] = {"a b"};
    o.protocols = protos;
    o.nprotocols = 1;
    tu_check(!ll_ws_open(loop, url, &o, &cbs, &s, err, sizeof(err)) && strstr(err, "subprotocol"),
             "a subprotocol that is no token is refused: %s", err);
    tu_check(s.opens + s.closes == 0, "no callback for a refused open");
}

static void test_echo(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/echo", port);
    seen s = {0};
    ll_header h = {"X-Test", "1"};
    const char *protos[] = {"nope", "chat"};
    ll_ws_opts o = {.headers = &h, .nheaders = 1, .cookie = "a=b", .protocols = protos, .nprotocols = 2};
    ll_ws *ws = open_ws(url, &o, &s);
    tu_check(ws && ll_ws_ready_state(ws) == LL_WS_CONNECTING && s.opens == 0, "echo: connecting, no callback yet");
    tu_check(ll_ws_send(ws, LL_WS_TEXT, "x", 1) < 0, "echo: send while connecting is refused");
    RUN_UNTIL(s.opens, 5000);
    tu_check(s.opens == 1 && s.status == 101 && s.open_code == 0, "echo: opened, 101 (%d %s)", s.status, s.open_err);
    tu_check(strcmp(s.protocol, "chat") == 0, "echo: the subprotocol the server took of those offered (%s)",
             s.protocol);
    tu_check(strstr(s.headers, "Set-Cookie: sid=abc; Path=/") != NULL, "echo: Set-Cookie handed back");
    tu_check(s.t.duration > 0 && s.t.duration >= s.t.connecting + s.t.waiting && s.t.tls_handshaking == 0,
             "echo: timings (connecting %lld waiting %lld duration %lld us)", (long long)s.t.connecting,
             (long long)s.t.waiting, (long long)s.t.duration);
    tu_check(ll_ws_ready_state(ws) == LL_WS_OPEN, "echo: OPEN");
    static const char bin[] = {0, 1, 2, (char)255};
    int queued = ll_ws_send(ws, LL_WS_TEXT, "hello", 5) == 0 && ll_ws_send(ws, LL_WS_BINARY, bin, 4) == 0;
    size_t buffered = ll_ws_buffered(ws);
    tu_check(queued && buffered == 9, "echo: two messages queued, 9 bytes buffered (%zu)", buffered);
    tu_check(ll_ws_ping(ws, "p1", 2) == 0, "echo: ping queued");
    RUN_UNTIL(s.messages == 2 && s.pongs == 1, 5000);
    tu_check(s.messages == 2 && strcmp(s.msg[0], "hello") == 0 && s.msg_len[1] == 4 && memcmp(s.msg[1], bin, 4) == 0 &&
                 s.last_opcode == LL_WS_BINARY,
             "echo: text and binary back, in order");
    tu_check(s.pongs == 1 && strcmp(s.pong_data, "p1") == 0, "echo: the pong carries the ping's data");
    tu_check(ll_ws_buffered(ws) == 0, "echo: nothing buffered once sent");
    tu_check(ll_ws_close(ws, 1005, NULL, 0) < 0 && ll_ws_close(ws, 1000, "x", 200) < 0,
             "echo: a reserved close code or a long reason is refused");
    tu_check(ll_ws_close(ws, 1000, "done", 4) == 0 && ll_ws_ready_state(ws) == LL_WS_CLOSING, "echo: closing");
    tu_check(ll_ws_send(ws, LL_WS_TEXT, "late", 4) < 0, "echo: send while closing is refused");
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.closes == 1 && s.close_code == 1000 && strcmp(s.reason, "done") == 0 && s.errors == 0,
             "echo: the close handshake, the server echoes 1000 \"done\" (%d \"%s\")", s.close_code, s.reason);
    int64_t sent = 0, recv = 0;
    ll_ws_bytes(ws, &sent, &recv);
    tu_check(sent > 200 && recv > 150, "echo: bytes on the wire counted (%lld sent, %lld received)", (long long)sent,
             (long long)recv);
    tu_check(ll_ws_ready_state(ws) == LL_WS_CLOSED, "echo: CLOSED");
    ll_ws_free(ws);
}

static void test_headers(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/headers", port);
    seen s = {0};
    ll_header h = {"X-Test", "42"};
    const char *protos[] = {"chat"};
    ll_ws_opts o = {.headers = &h, .nheaders = 1, .cookie = "a=b; c=d", .protocols = protos, .nprotocols = 1};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.messages, 5000);
    tu_check(strcmp(s.msg[0], "cookie=a=b; c=d;x-test=42;proto=chat") == 0, "headers: the server saw %s", s.msg[0]);
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.close_code == 1000, "headers: closed 1000");
    ll_ws_free(ws);
}

static void test_fragments(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/fragments", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.messages == 2, 5000);
    static const char ten[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    tu_check(s.messages == 2 && strcmp(s.msg[0], "hello world") == 0 && s.msg_len[1] == 10 &&
                 memcmp(s.msg[1], ten, 10) == 0,
             "fragments: reassembled (\"%s\", %zu bytes)", s.msg[0], s.msg_len[1]);
    ll_ws_free(ws); /* a cancel while open: nothing follows */
    RUN_UNTIL(0, 100);
    tu_check(s.closes == 0 && s.errors == 0, "fragments: no callback after ll_ws_free");
}

static void test_forbidden(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/forbidden", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.opens, 5000);
    tu_check(s.opens == 1 && s.status == 403 && s.open_code == 1000 && strstr(s.open_err, "403"),
             "403: a failed open with the status (%d, %d %s)", s.status, s.open_code, s.open_err);
    tu_check(strstr(s.headers, "X-Why: nope") != NULL, "403: its headers handed back");
    RUN_UNTIL(0, 100);
    tu_check(s.closes == 0 && s.after_end == 0 && ll_ws_ready_state(ws) == LL_WS_CLOSED, "403: nothing follows");
    ll_ws_free(ws);
}

static void test_big(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/big?n=%d", port, 2 << 20);
    seen s = {0};
    ll_ws_opts o = {.max_message = 1 << 20};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.messages == 0 && s.errors == 1 && s.err_code == 1000 && strstr(s.err, "maximum size of 1048576"),
             "big: an error over max_message: %s", s.err);
    tu_check(s.closes == 1 && s.close_code == 1009, "big: closed 1009 (%d)", s.close_code);
    ll_ws_free(ws);
    /* under the limit it comes whole */
    seen s2 = {0};
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/big?n=%d", port, 3 << 20);
    ws = open_ws(url, NULL, &s2);
    RUN_UNTIL(s2.messages, 5000);
    tu_check(s2.messages == 1 && s2.big_len == (size_t)3 << 20, "big: 3 MiB under the default limit (%zu)", s2.big_len);
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(s2.closes, 5000);
    ll_ws_free(ws);
}

static void test_big_send(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/echo", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.opens, 5000);
    enum { N = 4 << 20 }; /* more than the socket takes at once: the writes wait for room */
    char *big = malloc(N);
    memset(big, 'a', N);
    int ok = ll_ws_send(ws, LL_WS_BINARY, big, N) == 0;
    free(big); /* queued as a copy */
    size_t queued = ll_ws_buffered(ws);
    RUN_UNTIL(s.messages, 10000);
    tu_check(ok && queued == N && s.messages == 1 && s.big_len == N && s.all_a && ll_ws_buffered(ws) == 0,
             "big send: 4 MiB queued (%zu), sent as the socket takes it, echoed whole (%zu)", queued, s.big_len);
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(s.closes, 5000);
    ll_ws_free(ws);
}

static void test_malformed(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/malformed", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.errors == 1 && s.err_code == 1000 && strstr(s.err, "malformed frame"), "malformed: an error: %s", s.err);
    tu_check(s.closes == 1 && s.close_code == 1002 && s.after_end == 0, "malformed: closed 1002 (%d)", s.close_code);
    ll_ws_free(ws);
}

static void test_server_close(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/close", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.closes == 1 && s.close_code == 4001 && strcmp(s.reason, "bye") == 0 && s.errors == 0,
             "server close: 4001 \"bye\" (%d \"%s\")", s.close_code, s.reason);
    ll_ws_free(ws);
}

static void test_ping(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/ping", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.messages, 5000);
    tu_check(s.pings == 1 && strcmp(s.ping_data, "srv") == 0, "ping: the server's ping seen (%s)", s.ping_data);
    tu_check(s.messages == 1 && strcmp(s.msg[0], "pong received") == 0, "ping: answered with a pong by itself");
    ll_ws_close(ws, 3001, "bye", 3);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.close_code == 3001 && strcmp(s.reason, "bye") == 0, "ping: closed 3001 (%d)", s.close_code);
    ll_ws_free(ws);
}

static void test_drop(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/drop", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.errors == 1 && strstr(s.err, "unexpected EOF") && s.closes == 1 && s.close_code == 1006,
             "drop: an error and close 1006 (%s; %d)", s.err, s.close_code);
    ll_ws_free(ws);
}

static void test_close_timeout(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/deaf", port);
    seen s = {0};
    ll_ws_opts o = {.close_timeout_ms = 300};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.opens, 5000);
    uint64_t t0 = ll_loop_now_ns();
    ll_ws_close(ws, 4000, "x", 1);
    RUN_UNTIL(s.closes, 3000);
    uint64_t ms = (ll_loop_now_ns() - t0) / 1000000;
    tu_check(s.closes == 1 && s.close_code == 4000 && ms >= 250 && ms < 2000 && s.errors == 0,
             "close timeout: an unanswered close ends after close_timeout_ms (%d, %llu ms)", s.close_code,
             (unsigned long long)ms);
    ll_ws_free(ws);
}

/* the 101's checks, on header blocks made here */
static void test_check(void) {
    const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
    const char *protos[] = {"chat"};
    ll_ws_handshake_in in = {.protocols = protos, .nprotocols = 1};
    const char *p, *e;
    size_t pl, el;
    char err[300];
    static const char good[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: upgrade\r\n"
                               "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                               "Sec-WebSocket-Protocol: chat\r\n\r\n";
    tu_check(ll_ws_handshake_check(good, sizeof(good) - 1, key, &in, &p, &pl, &e, &el, err, sizeof(err)) == 0 &&
                 pl == 4 && memcmp(p, "chat", 4) == 0 && el == 0,
             "check: a good 101 (any case) passes");
    static const char accept[] = "HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n";
    tu_check(ll_ws_handshake_check(accept, sizeof(accept) - 1, key, &in, &p, &pl, &e, &el, err, sizeof(err)) < 0 &&
                 strstr(err, "Accept"),
             "check: a wrong Sec-WebSocket-Accept fails: %s", err);
    static const char noup[] = "HTTP/1.1 101 x\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
    tu_check(ll_ws_handshake_check(noup, sizeof(noup) - 1, key, &in, &p, &pl, &e, &el, err, sizeof(err)) < 0 &&
                 strstr(err, "Upgrade"),
             "check: no Upgrade fails: %s", err);
    static const char proto[] = "HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                                "Sec-WebSocket-Protocol: mqtt\r\n\r\n";
    tu_check(ll_ws_handshake_check(proto, sizeof(proto) - 1, key, &in, &p, &pl, &e, &el, err, sizeof(err)) < 0 &&
                 strstr(err, "mqtt"),
             "check: a subprotocol not offered fails: %s", err);
    static const char ext[] = "HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                              "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n";
    tu_check(ll_ws_handshake_check(ext, sizeof(ext) - 1, key, &in, &p, &pl, &e, &el, err, sizeof(err)) < 0 &&
                 strstr(err, "extensions"),
             "check: an extension not asked for fails: %s", err);
    /* k6/ws offers subprotocols as a header of the script's */
    ll_header own = {"Sec-WebSocket-Protocol", "mqtt, chat"};
    ll_ws_handshake_in hin = {.headers = &own, .nheaders = 1};
    tu_check(ll_ws_handshake_check(proto, sizeof(proto) - 1, key, &hin, &p, &pl, &e, &el, err, sizeof(err)) == 0,
             "check: a subprotocol offered in the script's own header passes");
}

static void test_timeouts_and_refused(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/slow", port);
    seen s = {0};
    ll_client_opts c = {.timeout_ms = 300};
    ll_ws_opts o = {.client = &c};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.opens, 3000);
    tu_check(s.opens == 1 && s.open_code == 1050 && s.t.duration >= 250000, "slow: the open times out (%d %s, %lld us)",
             s.open_code, s.open_err, (long long)s.t.duration);
    ll_ws_free(ws);
    /* a port nobody listens on: the peer's own port after it stopped is not
     * safe; use port 1 of 127.0.0.1 (nothing listens there, root or not) */
    seen r = {0};
    ws = open_ws("ws://127.0.0.1:1/", NULL, &r);
    RUN_UNTIL(r.opens, 3000);
    tu_check(r.opens == 1 && r.open_code == 1212 && strstr(r.open_err, "dial tcp 127.0.0.1:1"),
             "refused: 1212 (%s)", r.open_err);
    ll_ws_free(ws);
    /* a name through options.hosts (connect_to): resolve.c's path, no DNS traffic */
    char map[128];
    snprintf(map, sizeof(map), "ws.example.test:80:127.0.0.1:%d", port);
    char *hosts[] = {map, NULL};
    ll_client_opts hc = {.connect_to = hosts};
    ll_ws_opts ho = {.client = &hc};
    seen d = {0};
    ws = open_ws("ws://ws.example.test/echo", &ho, &d);
    RUN_UNTIL(d.opens, 5000);
    tu_check(d.opens == 1 && d.status == 101, "hosts: a name mapped by options.hosts opens (%d %s)", d.status,
             d.open_err);
    ll_ws_free(ws);
}

static void test_cancel(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/echo", port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    ll_ws_free(ws); /* at once, while connecting */
    RUN_UNTIL(0, 100);
    tu_check(s.opens == 0, "cancel while connecting: no callback");
    seen m = {.send_on_open = 1, .free_on_message = 1};
    ws = open_ws(url, NULL, &m);
    RUN_UNTIL(m.messages, 5000);
    tu_check(m.messages == 1 && strcmp(m.msg[0], "first") == 0 && m.ws == NULL, "cancel: freed inside message");
    RUN_UNTIL(0, 150);
    tu_check(m.messages == 1 && m.closes == 0 && m.errors == 0, "cancel: nothing after the free");
    /* close while connecting: the open says so */
    seen c = {0};
    ws = open_ws(url, NULL, &c);
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(c.opens, 2000);
    tu_check(c.opens == 1 && c.open_code == 1000 && strstr(c.open_err, "before"), "close while connecting: %s",
             c.open_err);
    ll_ws_free(ws);
}

static void test_deflate(int port) {
    char url[128];
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/echo", port);
    seen s = {0};
    ll_ws_opts o = {.deflate = 1};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.opens, 5000);
    tu_check(s.status == 101 && strncmp(s.extensions, "permessage-deflate", 18) == 0,
             "deflate: negotiated (%s; %s)", s.extensions, s.open_err);
    enum { BIG = 200000 };
    char *big = malloc(BIG);
    memset(big, 'a', BIG);
    int64_t sent0 = 0, recv0 = 0, sent1 = 0, recv1 = 0;
    ll_ws_bytes(ws, &sent0, &recv0);
    int ok = ll_ws_send(ws, LL_WS_TEXT, big, BIG) == 0;
    size_t buffered = ll_ws_buffered(ws);
    tu_check(ok && buffered > 0 && buffered < 2000, "deflate: 200000 bytes queued as %zu compressed", buffered);
    RUN_UNTIL(s.messages == 1, 5000);
    tu_check(s.messages == 1 && s.big_len == BIG && s.all_a && s.last_opcode == LL_WS_TEXT,
             "deflate: the text comes back whole (%zu bytes)", s.big_len);
    static const char bin[] = {1, 2, 3, 0, (char)200};
    ok = ll_ws_send(ws, LL_WS_BINARY, bin, 5) == 0 && ll_ws_send(ws, LL_WS_TEXT, "", 0) == 0 &&
         ll_ws_send(ws, LL_WS_TEXT, "h\xc3\xa9", 3) == 0;
    RUN_UNTIL(s.messages == 4, 5000);
    tu_check(ok && s.messages == 4 && s.msg_len[1] == 5 && memcmp(s.msg[1], bin, 5) == 0 && s.msg_len[2] == 0 &&
                 strcmp(s.msg[3], "h\xc3\xa9") == 0,
             "deflate: binary, empty and UTF-8 text back (%zu %zu %s)", s.msg_len[1], s.msg_len[2], s.msg[3]);
    ll_ws_bytes(ws, &sent1, &recv1);
    tu_check(sent1 - sent0 < 3000 && recv1 - recv0 < 3000,
             "deflate: compressed on the wire both ways (%lld, %lld bytes)",
             (long long)(sent1 - sent0), (long long)(recv1 - recv0));
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(s.closes, 5000);
    tu_check(s.closes == 1 && s.close_code == 1000 && s.errors == 0, "deflate: closed 1000 (%d %s)", s.close_code,
             s.err);
    ll_ws_free(ws);
    free(big);
    /* 2 MiB of one byte inflate from a few KiB: the limit holds on what they inflate to */
    seen b = {0};
    snprintf(url, sizeof(url), "ws://127.0.0.1:%d/big?n=%d", port, 2 << 20);
    ll_ws_opts bo = {.deflate = 1, .max_message = 1 << 20};
    ws = open_ws(url, &bo, &b);
    RUN_UNTIL(b.closes, 5000);
    tu_check(b.messages == 0 && b.errors == 1 && strstr(b.err, "once inflated") && b.close_code == 1009,
             "deflate: over max_message once inflated: an error and close 1009 (%s; %d)", b.err, b.close_code);
    ll_ws_free(ws);
}

static void test_utf8(void) {
    tu_check(ll_ws_deflate_utf8_ok("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12), "utf8: valid text passes");
    tu_check(!ll_ws_deflate_utf8_ok("\xc0\xaf", 2) && !ll_ws_deflate_utf8_ok("\xed\xa0\x80", 3) &&
                 !ll_ws_deflate_utf8_ok("\xf4\x90\x80\x80", 4) && !ll_ws_deflate_utf8_ok("\xe2\x82", 2) &&
                 !ll_ws_deflate_utf8_ok("\xff", 1),
             "utf8: overlong, surrogate, over U+10FFFF, cut short and 0xff refused");
    int reset = 0;
    char err[200];
    const char *a = "permessage-deflate; server_no_context_takeover; server_max_window_bits=10";
    const char *b = "permessage-deflate; client_max_window_bits=10", *c = "x-webkit-deflate-frame";
    tu_check(ll_ws_deflate_accept(a, strlen(a), &reset, err, sizeof(err)) == 1 && reset == 1,
             "deflate: an answer with server_no_context_takeover is taken");
    tu_check(ll_ws_deflate_accept(b, strlen(b), &reset, err, sizeof(err)) < 0,
             "deflate: client_max_window_bits (not offered) is refused: %s", err);
    tu_check(ll_ws_deflate_accept(c, strlen(c), &reset, err, sizeof(err)) < 0,
             "deflate: another extension is refused: %s", err);
}

/* a server that wants a client certificate: the Client's certificate and key (mTLS) */
static void test_mtls(const char *dir, const char *cert, const char *key) {
    char ccert[512], ckey[512], cmd[2048];
    snprintf(ccert, sizeof(ccert), "%s/client.pem", dir);
    snprintf(ckey, sizeof(ckey), "%s/client-key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout %s -out %s -days 2 "
             "-subj /CN=luaload-client 2>/dev/null",
             ckey, ccert);
    if (!tu_check(system(cmd) == 0, "mtls: openssl made a client certificate")) return;
    peer p = {0};
    int up = peer_start(&p, cert, key, ccert) == 0;
    if (!tu_check(up, "mtls: the python peer asks for a client certificate (port %d)", p.port)) {
        peer_stop(&p);
        return;
    }
    char url[128];
    snprintf(url, sizeof(url), "wss://127.0.0.1:%d/echo", p.port);
    ll_client_opts none = {.ca = (char *)cert};
    ll_ws_opts o = {.client = &none};
    seen s = {0};
    ll_ws *ws = open_ws(url, &o, &s);
    RUN_UNTIL(s.opens, 5000);
    tu_check(s.opens == 1 && s.open_code != 0 && s.status == 0,
             "mtls: without a client certificate the open fails (%d %s)", s.open_code, s.open_err);
    ll_ws_free(ws);
    ll_client_opts c = {.ca = (char *)cert, .certificate = ccert, .private_key = ckey};
    o.client = &c;
    seen t = {0};
    ws = open_ws(url, &o, &t);
    RUN_UNTIL(t.opens, 5000);
    tu_check(t.opens == 1 && t.status == 101, "mtls: with the Client's certificate and key it opens (%d %s)", t.status,
             t.open_err);
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(t.closes, 5000);
    ll_ws_free(ws);
    peer_stop(&p);
}

static void test_tls(const char *dir) {
    char cert[512], key[512], cmd[2048];
    snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
    snprintf(key, sizeof(key), "%s/key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout %s -out %s -days 2 "
             "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>/dev/null",
             key, cert);
    if (!tu_check(system(cmd) == 0, "tls: openssl made a self-signed certificate")) return;
    peer p = {0};
    int up = peer_start(&p, cert, key, NULL) == 0;
    if (!tu_check(up, "tls: the python peer listens (port %d)", p.port)) {
        peer_stop(&p);
        return;
    }
    char url[128];
    snprintf(url, sizeof(url), "wss://127.0.0.1:%d/echo", p.port);
    seen s = {0};
    ll_ws *ws = open_ws(url, NULL, &s);
    RUN_UNTIL(s.opens, 5000);
    tu_check(s.opens == 1 && s.open_code == 1310 && s.status == 0, "wss without the CA: verification fails (%d %s)",
             s.open_code, s.open_err);
    ll_ws_free(ws);
    ll_client_opts c = {.ca = cert};
    ll_ws_opts o = {.client = &c};
    seen t = {0};
    ws = open_ws(url, &o, &t);
    RUN_UNTIL(t.opens, 5000);
    tu_check(t.opens == 1 && t.status == 101 && t.tls_version[0] && t.t.tls_handshaking > 0,
             "wss with the CA: opened (%s, tls %lld us; %s)", t.tls_version, (long long)t.t.tls_handshaking,
             t.open_err);
    ll_ws_send(ws, LL_WS_TEXT, "over tls", 8);
    RUN_UNTIL(t.messages, 5000);
    tu_check(t.messages == 1 && strcmp(t.msg[0], "over tls") == 0, "wss: echo");
    ll_ws_close(ws, 1000, NULL, 0);
    RUN_UNTIL(t.closes, 5000);
    tu_check(t.closes == 1 && t.close_code == 1000, "wss: closed 1000 (%d)", t.close_code);
    ll_ws_free(ws);
    /* the Client's server_name: SNI and the name the certificate must carry */
    ll_client_opts good = {.ca = cert, .server_name = "localhost"}, bad = {.ca = cert, .server_name = "wrong.example"};
    seen g = {0}, b = {0};
    o.client = &good;
    ll_ws *wg = open_ws(url, &o, &g);
    o.client = &bad;
    ll_ws *wb = open_ws(url, &o, &b);
    RUN_UNTIL(g.opens && b.opens, 5000);
    tu_check(g.status == 101 && b.open_code == 1310, "wss: server_name localhost verifies (%d), wrong.example not (%d)",
             g.status, b.open_code);
    ll_ws_free(wg);
    ll_ws_free(wb);
    peer_stop(&p);
    test_mtls(dir, cert, key);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    test_accept();
    test_utf8();
    test_check();
    if (access("/usr/bin/python3", X_OK) != 0 || system("/usr/bin/python3 -c 'import websockets' 2>/dev/null") != 0) {
        tu_check(0, "Debian's python3-websockets for /usr/bin/python3 (scripts/setup.sh installs it)");
        return tu_summary();
    }
    loop = ll_loop_new();
    dns = ll_resolver_new(loop, NULL);
    peer p = {0};
    int up = peer_start(&p, NULL, NULL, NULL) == 0;
    if (tu_check(up, "the python peer listens (port %d)", p.port)) {
        test_bad_args(p.port);
        test_echo(p.port);
        test_headers(p.port);
        test_fragments(p.port);
        test_forbidden(p.port);
        test_big(p.port);
        test_big_send(p.port);
        test_malformed(p.port);
        test_server_close(p.port);
        test_ping(p.port);
        test_drop(p.port);
        test_close_timeout(p.port);
        test_timeouts_and_refused(p.port);
        test_cancel(p.port);
        test_deflate(p.port);
    }
    peer_stop(&p);
    char dir[] = "/tmp/luaload-ws-XXXXXX";
    if (mkdtemp(dir)) {
        test_tls(dir);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0) printf("# could not remove %s\n", dir);
    }
    ll_resolver_free(dns);
    ll_loop_free(loop);
    return tu_summary();
}
