#!/usr/bin/env python3
"""addr_server.py -- an HTTP/1.1 server for test_dns.sh that tells which of
its addresses a request came to and from where. Usage:
addr_server.py PORT LOG ADDR... -- listens on each ADDR (IPv4 or IPv6) at
PORT, answers every request 200 with the body "LOCAL PEER" (keep-alive),
appends the same line to LOG, and prints "ready" once it listens. Runs
until killed."""
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, logpath, addrs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
log = open(logpath, "a", buffering=1)
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        line = "%s %s" % (self.connection.getsockname()[0], self.client_address[0])
        with lock:
            log.write(line + "\n")
        body = line.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server4(ThreadingHTTPServer):
    daemon_threads = True


class Server6(Server4):
    address_family = socket.AF_INET6


servers = [(Server6 if ":" in a else Server4)((a, port), Handler) for a in addrs]
for srv in servers:
    threading.Thread(target=srv.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
