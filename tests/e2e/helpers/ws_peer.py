#!/usr/bin/python3
"""ws_peer.py [--tls CERT KEY [CLIENT_CA]] -- a WebSocket server on Debian's
python3-websockets (a peer nobody here wrote) for luaload's WebSocket
tests. Listens on 127.0.0.1, a free port, printed on stdout's first line.
With CLIENT_CA it asks for a client certificate signed by it (mTLS). It
stops when stdin closes (the test went away) or on SIGTERM.

Paths:
  /echo        every message back, text as text, binary as binary
  /headers     one text message: "cookie=<Cookie>;x-test=<X-Test>;proto=<subprotocol>"
  /fragments   "hello world" as 3 text frames, then 3 binary frames of 0..9
  /forbidden   the handshake answered 403 (X-Why: nope)
  /slow        the handshake answered after 5 s
  /big?n=N     one binary message of N bytes
  /malformed   a frame with a reserved opcode (0x3)
  /close       a close with 4001 "bye"
  /ping        a ping "srv", and after its pong a text "pong received"
  /drop        the TCP connection cut without a close frame
  /deaf        reads nothing more once open: a close is never answered
Every 101 carries Set-Cookie: sid=abc; Path=/.
"""
import asyncio
import http
import ssl
import sys
from urllib.parse import parse_qs, urlparse

import websockets


async def process_request(path, headers):
    if path.startswith("/forbidden"):
        return http.HTTPStatus.FORBIDDEN, [("X-Why", "nope"), ("Content-Type", "text/plain")], b"forbidden\n"
    if path.startswith("/slow"):
        await asyncio.sleep(5)
    return None


async def handler(ws, path=None):
    path = ws.path
    u = urlparse(path)
    try:
        if u.path == "/echo":
            async for m in ws:
                await ws.send(m)
        elif u.path == "/headers":
            h = ws.request_headers
            await ws.send("cookie=%s;x-test=%s;proto=%s" % (h.get("Cookie", ""), h.get("X-Test", ""), ws.subprotocol or ""))
            await ws.wait_closed()
        elif u.path == "/fragments":
            await ws.send(["hel", "lo ", "world"])
            await ws.send([bytes(range(0, 4)), bytes(range(4, 8)), bytes(range(8, 10))])
            await ws.wait_closed()
        elif u.path == "/big":
            n = int(parse_qs(u.query).get("n", ["1048576"])[0])
            await ws.send(b"x" * n)
            await ws.wait_closed()
        elif u.path == "/malformed":
            ws.transport.write(b"\x83\x02ab")
            await ws.wait_closed()
        elif u.path == "/close":
            await ws.close(4001, "bye")
        elif u.path == "/ping":
            waiter = await ws.ping(b"srv")
            await waiter
            await ws.send("pong received")
            await ws.wait_closed()
        elif u.path == "/drop":
            ws.transport.abort()
        elif u.path == "/deaf":
            ws.transport.pause_reading()
            await asyncio.sleep(10)
    except websockets.ConnectionClosed:
        pass


async def main():
    ctx = None
    if len(sys.argv) >= 4 and sys.argv[1] == "--tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        if len(sys.argv) == 5:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(sys.argv[4])
    server = await websockets.serve(handler, "127.0.0.1", 0, ssl=ctx, process_request=process_request,
                                    subprotocols=["chat", "superchat"], max_size=None,
                                    extra_headers=[("Set-Cookie", "sid=abc; Path=/")])
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: done.set() if not sys.stdin.buffer.read1(4096) else None)
    await done.wait()
    server.close()


asyncio.run(main())
