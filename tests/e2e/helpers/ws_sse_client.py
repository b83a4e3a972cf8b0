"""ws_sse_client.py -- third-party peers for luaload serve's /ws/ and /sse
routes in test_serve_ws.sh: WebSocket through Debian's python3-websockets
(run it with /usr/bin/python3), raw WebSocket bytes through a plain socket,
and an SSE reader on the standard library's http.client that parses the
stream as the HTML spec says (fields, data lines joined with "\n", an
event dispatched at its blank line).

    ws_sse_client.py HOST:PORT CASE [ARGS...]

prints one JSON object with what it saw (see each case below)."""
import asyncio
import base64
import hashlib
import http.client
import json
import os
import socket
import sys
import threading
import time

import websockets

ADDR = sys.argv[1]
CASE = sys.argv[2]
ARGS = sys.argv[3:]
WS = "ws://" + ADDR


def out(**kw):
    print(json.dumps(kw))


async def closed_info(ws):
    """The close frame the server sent (code, reason) once it is closed."""
    await ws.wait_closed()
    return {"close_code": ws.close_code, "close_reason": ws.close_reason}


async def echo_cases():
    if CASE == "text":  # ARGS: the text
        async with websockets.connect(WS + "/ws/echo") as ws:
            await ws.send(ARGS[0])
            got = await ws.recv()
            out(type=type(got).__name__, value=got)
    elif CASE == "binary":  # 256 bytes 0..255
        data = bytes(range(256))
        async with websockets.connect(WS + "/ws/echo") as ws:
            await ws.send(data)
            got = await ws.recv()
            out(type=type(got).__name__, same=got == data, len=len(got))
    elif CASE == "fragmented":  # a text and a binary message, 3 frames each
        async with websockets.connect(WS + "/ws/echo") as ws:
            await ws.send(["frag1 ", "frag2 ", "frag3"])
            text = await ws.recv()
            await ws.send([b"\x00ab", b"cd", b"\xffef"])
            data = await ws.recv()
            out(text=text, binary=data.hex(), binary_type=type(data).__name__)
    elif CASE == "ping":  # ARGS: the payload
        async with websockets.connect(WS + "/ws/echo") as ws:
            waiter = await ws.ping(ARGS[0].encode())
            await asyncio.wait_for(waiter, 5)  # websockets checks the payload
            await ws.send("after ping")
            out(pong=True, then=await ws.recv())
    elif CASE == "close":  # ARGS: code reason
        async with websockets.connect(WS + "/ws/echo") as ws:
            await ws.close(int(ARGS[0]), ARGS[1])
            out(**await closed_info(ws))
    elif CASE == "burst":  # ARGS: n; n messages, then a close at once
        n = int(ARGS[0])
        ws = await websockets.connect(WS + "/ws/echo", max_queue=None)
        for i in range(n):
            await ws.send("m%d" % i)
        await ws.close(1000, "burst done")
        got = []
        try:
            while True:
                got.append(await ws.recv())
        except websockets.ConnectionClosed:
            pass
        out(count=len(got), in_order=got == ["m%d" % i for i in range(n)], close_code=ws.close_code)
    elif CASE == "subprotocol":  # ARGS: the protocols offered
        async with websockets.connect(WS + "/ws/echo", subprotocols=ARGS) as ws:
            out(subprotocol=ws.subprotocol)
    elif CASE == "size":  # ARGS: bytes of one text message
        n = int(ARGS[0])
        async with websockets.connect(WS + "/ws/echo", max_size=None) as ws:
            try:
                await ws.send("y" * n)
                got = await asyncio.wait_for(ws.recv(), 20)
                out(echoed=len(got))
            except websockets.ConnectionClosed as e:
                out(closed=e.rcvd.code if e.rcvd else None, reason=e.rcvd.reason if e.rcvd else None)
    elif CASE == "send":  # ARGS: the query of /ws/send
        start = time.monotonic()
        async with websockets.connect(WS + "/ws/send?" + ARGS[0], max_size=None, max_queue=None) as ws:
            msgs = [m async for m in ws]
            info = await closed_info(ws)
        out(count=len(msgs), sizes=sorted(set(len(m) for m in msgs)), types=sorted(set(type(m).__name__ for m in msgs)),
            first=msgs[0][:16] if msgs else None, last=msgs[-1][:16] if msgs else None,
            numbered=all(m == (("%d " % (i + 1)) + "x" * len(m))[: len(m)] for i, m in enumerate(msgs)),
            ms=round((time.monotonic() - start) * 1000), **info)
    elif CASE == "send_stop":  # ARGS: query k; k messages, then the client closes
        async with websockets.connect(WS + "/ws/send?" + ARGS[0]) as ws:
            got = [await ws.recv() for _ in range(int(ARGS[1]))]
            await ws.close(1000, "enough")
            out(count=len(got), **await closed_info(ws))
    elif CASE == "status":  # ARGS: path; the handshake must fail
        try:
            async with websockets.connect(WS + ARGS[0]):
                out(status=101)
        except websockets.InvalidStatusCode as e:
            out(status=e.status_code)


def raw_handshake(extra=b""):
    """A socket after a hand-made upgrade to /ws/echo (extra bytes follow
    the request in the same send); the accept header is checked here."""
    key = base64.b64encode(os.urandom(16))
    s = socket.create_connection(ADDR.rsplit(":", 1), timeout=10)
    s.sendall(b"GET /ws/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n" + extra)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    want = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    accept_ok = b"\r\nsec-websocket-accept: " + want.lower() in head.lower()
    return s, head.split(b"\r\n")[0].decode(), accept_ok, rest


def read_frame(s, buf):
    """One unfragmented server frame: (opcode, payload)."""
    while len(buf) < 2:
        buf += s.recv(4096)
    n = buf[1] & 0x7F
    while len(buf) < 2 + n:
        buf += s.recv(4096)
    return buf[0] & 0x0F, buf[2:2 + n]


def masked(opcode, payload):
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def raw_cases():
    if CASE == "raw_pipelined":  # a frame in the same packet as the upgrade
        s, status, accept_ok, rest = raw_handshake(masked(1, b"early bird"))
        op, payload = read_frame(s, rest)
        out(status=status, accept_ok=accept_ok, opcode=op, payload=payload.decode())
    elif CASE == "raw_flood":  # ARGS: seconds; echo frames sent without reading, then all read back
        s, status, accept_ok, rest = raw_handshake()
        frame = masked(2, os.urandom(120))  # 126 bytes on the wire, the echo 122
        s.setblocking(False)
        sent, end = 0, time.monotonic() + float(ARGS[0])
        pending = b""
        while time.monotonic() < end:
            if not pending:
                pending = frame * 512
            try:
                k = s.send(pending)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            pending = pending[k:]
            sent += k
        # finish the frame under way (the server reads it only as its
        # echoes are read: a thread reads them), then read every echo
        s.setblocking(True)
        s.settimeout(20)
        cut = sent % len(frame)
        want = ((sent + len(frame) - 1) // len(frame)) * 122
        got = [len(rest)]

        def reader():
            while got[0] < want:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                got[0] += len(chunk)
        t = threading.Thread(target=reader)
        t.start()
        if cut:
            s.sendall(frame[cut:])
        t.join(30)
        out(status=status, messages=want // 122, echoed_all=got[0] == want)
    elif CASE == "raw_unmasked":  # a client frame without a mask: 1002
        s, status, accept_ok, rest = raw_handshake()
        s.sendall(b"\x81\x02hi")
        op, payload = read_frame(s, rest)
        out(status=status, opcode=op, code=int.from_bytes(payload[:2], "big"))


def sse():
    """ARGS: path [method]. Reads the stream, then asks for /status/204 on
    the same connection when the server kept it open."""
    method = ARGS[1] if len(ARGS) > 1 else "GET"
    host, port = ADDR.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=20)
    start = time.monotonic()
    c.request(method, ARGS[0], body=b"prompt" if method == "POST" else None)
    r = c.getresponse()
    events, ev, data, retries = [], {}, [], []
    while True:
        line = r.readline()
        if not line:
            break
        line = line.decode().rstrip("\n").rstrip("\r")
        if line == "":
            if data:
                events.append({"id": ev.get("id"), "event": ev.get("event", "message"), "data": "\n".join(data),
                               "ms": round((time.monotonic() - start) * 1000)})
            ev, data = {"id": ev.get("id")}, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "retry":
            retries.append(int(value))
        else:
            ev[field] = value
    res = {"status": r.status, "type": r.getheader("Content-Type"), "te": r.getheader("Transfer-Encoding"),
           "connection": r.getheader("Connection"), "events": events, "retries": retries,
           "ms": round((time.monotonic() - start) * 1000)}
    if not r.will_close:
        try:
            c.request("GET", "/status/204")
            res["then"] = c.getresponse().status
        except (OSError, http.client.HTTPException) as e:
            res["then"] = type(e).__name__
    out(**res)


if CASE.startswith("raw_"):
    raw_cases()
elif CASE == "sse":
    sse()
else:
    asyncio.run(asyncio.wait_for(echo_cases(), 30))
