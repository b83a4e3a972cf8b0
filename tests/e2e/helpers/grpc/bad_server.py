#!/usr/bin/python3
"""A misbehaving gRPC server for test_grpc.sh, on Debian's python3-h2
(hyper-h2: HTTP/2 framing nobody here wrote), h2c with prior knowledge
on 127.0.0.1, port 0; prints its port on stdout's first line and runs
until stdin closes. Every path of bad.proto's service luaload.bad.Bad
answers wrongly in its own way:

  /luaload.bad.Bad/Cut       a message prefix of 100 bytes, 3 sent, then
                             grpc-status 0
  /luaload.bad.Bad/Reset     the response headers, then RST_STREAM
                             (INTERNAL_ERROR)
  /luaload.bad.Bad/NoStatus  a whole message, the stream ended with no
                             trailers
  /luaload.bad.Bad/Huge      a prefix claiming a 2 GiB message
  /luaload.bad.Bad/Garbage   a whole frame whose bytes are no bad.Msg
  /luaload.bad.Bad/Html      status 200, content-type text/html, no
                             grpc-status
  /luaload.bad.Bad/Stream    (server streaming) two good messages, then
                             a cut one and grpc-status 0
  /luaload.bad.Bad/GzipStream (not bad: server streaming, grpc-encoding
                             gzip) a gzip-compressed message, a plain one
                             (a message's flag says which), then one whose
                             flag says compressed but is no gzip
"""
import socket
import gzip
import struct
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.errors


def framed(payload):
    return b"\0" + struct.pack(">I", len(payload)) + payload


def msg(text):  # bad.Msg { string text = 1; }
    b = text.encode()
    return b"\x0a" + bytes([len(b)]) + b


def answer(conn, sid, path):
    grpc_headers = [(":status", "200"), ("content-type", "application/grpc")]
    name = path.rsplit("/", 1)[-1]
    if name == "Cut":
        conn.send_headers(sid, grpc_headers)
        conn.send_data(sid, b"\0" + struct.pack(">I", 100) + b"abc")
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)
    elif name == "Reset":
        conn.send_headers(sid, grpc_headers)
        conn.reset_stream(sid, h2.errors.ErrorCodes.INTERNAL_ERROR)
    elif name == "NoStatus":
        conn.send_headers(sid, grpc_headers)
        conn.send_data(sid, framed(msg("no status")), end_stream=True)
    elif name == "Huge":
        conn.send_headers(sid, grpc_headers)
        conn.send_data(sid, b"\0" + struct.pack(">I", 1 << 31) + b"x" * 16)
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)
    elif name == "Garbage":
        conn.send_headers(sid, grpc_headers)
        conn.send_data(sid, framed(b"\xff\xff\xff\xff\x0f"))
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)
    elif name == "Html":
        conn.send_headers(sid, [(":status", "200"), ("content-type", "text/html")])
        conn.send_data(sid, b"<html>not grpc</html>", end_stream=True)
    elif name == "Stream":
        conn.send_headers(sid, grpc_headers)
        conn.send_data(sid, framed(msg("one")) + framed(msg("two")) + b"\0" + struct.pack(">I", 50) + b"x")
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)
    elif name == "GzipStream":
        conn.send_headers(sid, grpc_headers + [("grpc-encoding", "gzip")])
        z = gzip.compress(msg("zipped " + "z" * 40))
        conn.send_data(sid, b"\1" + struct.pack(">I", len(z)) + z + framed(msg("plain")))
        conn.send_data(sid, b"\1" + struct.pack(">I", 4) + b"nope")
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)
    else:
        conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc"),
                                ("grpc-status", "12")], end_stream=True)


def serve(sock):
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    paths = {}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    paths[ev.stream_id] = dict(ev.headers).get(b":path", b"").decode()
                elif isinstance(ev, h2.events.DataReceived):
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    answer(conn, ev.stream_id, paths.pop(ev.stream_id, ""))
            sock.sendall(conn.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        return
    finally:
        sock.close()


def main():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    print(ls.getsockname()[1], flush=True)

    def accept():
        while True:
            try:
                s, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(s,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    ls.close()


if __name__ == "__main__":
    main()
