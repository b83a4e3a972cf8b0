#!/usr/bin/env python3
"""wire_server.py -- a tiny HTTP/1.1 server for test_wire.sh: prints its port,
appends each request's head (as received, bytes escaped) to LOG, reads and
drops Content-Length bodies, answers 200 "ok"; GET /chunked/N answers N
bytes in chunks with no Content-Length; GET /headers/N sends N bytes of
header lines; GET /trickle sends a response head one byte every 50 ms,
never ending; GET /nocontent answers 204 with a Content-Length of 5 and no
body (RFC 9110: a 204 has none) and keeps the connection. Runs until killed."""
import socket
import sys
import threading
import time

log = open(sys.argv[1], "a", buffering=1)


def handle(c):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            log.write(repr(head) + "\n")
            lines = head.split(b"\r\n")
            n = 0
            for l in lines[1:]:
                k, _, v = l.partition(b":")
                if k.strip().lower() == b"content-length":
                    n = int(v)
            while len(buf) < n:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            buf = buf[n:]
            target = lines[0].split(b" ")[1]
            if target.startswith(b"/chunked/"):
                left = int(target[9:])
                c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                piece = b"x" * 65536
                while left > 0:
                    k = min(left, len(piece))
                    c.sendall(b"%x\r\n" % k + piece[:k] + b"\r\n")
                    left -= k
                c.sendall(b"0\r\n\r\n")
            elif target.startswith(b"/headers/"):
                left = int(target[9:])
                c.sendall(b"HTTP/1.1 200 OK\r\n")
                line = b"X-Filler: " + b"f" * 1000 + b"\r\n"
                while left > 0:
                    c.sendall(line)
                    left -= len(line)
                c.sendall(b"Content-Length: 2\r\n\r\nok")
            elif target == b"/nocontent":
                c.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
            elif target == b"/trickle":
                for b in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"s" * 100000:
                    c.sendall(bytes([b]))
                    time.sleep(0.05)
            else:
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except OSError:
        pass
    finally:
        c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
while True:
    conn, _ = s.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
