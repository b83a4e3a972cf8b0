#!/usr/bin/env python3
"""sse_server.py LOG -- a text/event-stream server (http.server, HTTP/1.1,
one thread per connection) for test_sse.sh; binds 127.0.0.1 on a free port,
prints it, logs "METHOD PATH Last-Event-ID" per request to LOG, runs until
killed. Each stream is written without Content-Length and ends with the
connection's close.

  /rich         comments, multi-line data, named events, ids, a retry: 100,
                CRLF line ends, a BOM first; 4 events
  /post         (POST, as LLM APIs take) the request body's words, one event
                each (id 1..n, data {"token":"WORD"}), then data [DONE]
  /bad          an unknown field and a retry that is not a number around a
                good event: 2 malformed lines, 1 event
  /drop         2 events ("id: 1", "id: 2", retry: 50) then a close: a stream
                a client may reconnect to (Last-Event-ID is logged); after 2
                requests it answers 204 (the spec's "do not reconnect")
  /endless      an event every 50 ms until the client goes
  /status/NNN   that status, a short text body
"""
import http.server
import socketserver
import sys
import time

log = open(sys.argv[1], "a", buffering=1)
drops = {"n": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def start(self, status=200, ctype="text/event-stream"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def out(self, s):
        self.wfile.write(s.encode() if isinstance(s, str) else s)
        self.wfile.flush()

    def note(self):
        log.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Last-Event-ID", "-")))

    def do_GET(self):
        self.note()
        p = self.path
        try:
            if p == "/rich":
                self.start()
                self.out(b"\xef\xbb\xbf: a comment first\r\n")
                self.out("retry: 100\r\nid: a1\r\nevent: greeting\r\ndata: hello\r\ndata: world\r\n\r\n")
                time.sleep(0.05)
                self.out(": keep-alive\n\ndata: plain\n\n")
                self.out("id: a3\rdata: cr only\r\r")
                self.out("event: last\ndata:  two spaces\ndata\n\n")
            elif p == "/bad":
                self.start()
                self.out("foo: bar\nretry: soon\ndata: fine\n\n")
            elif p == "/drop":
                drops["n"] += 1
                if drops["n"] > 2:
                    self.start(204)
                    return
                base = (drops["n"] - 1) * 2
                self.start()
                self.out("retry: 50\nid: %d\ndata: d%d\n\nid: %d\ndata: d%d\n\n" % (base + 1, base + 1, base + 2, base + 2))
            elif p == "/endless":
                self.start()
                for i in range(1, 2000):
                    self.out("id: %d\ndata: tick %d\n\n" % (i, i))
                    time.sleep(0.05)
            elif p.startswith("/status/"):
                code = int(p[8:])
                body = b"not a stream\n"
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.out(body)
            else:
                self.send_error(404)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        self.note()
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        if self.path != "/post":
            self.send_error(404)
            return
        try:
            self.start()
            for i, w in enumerate(body.split(), 1):
                self.out('id: %d\ndata: {"token":"%s"}\n\n' % (i, w))
                time.sleep(0.01)
            self.out("data: [DONE]\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
