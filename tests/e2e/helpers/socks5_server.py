#!/usr/bin/env python3
"""socks5_server.py -- a minimal SOCKS5 proxy for luaload's tests (RFC 1928:
no authentication, CONNECT to an IPv4 address or a name, loopback only).

    socks5_server.py PORTFILE COUNTFILE

Listens on a free 127.0.0.1 port, writes it to PORTFILE, and rewrites
COUNTFILE with the number of CONNECTs served after each one. Every tunnel
is relayed by a thread until either side closes. Runs until killed."""
import os
import socket
import struct
import sys
import threading

lock = threading.Lock()
count = 0


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("short read")
        data += chunk
    return data


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, countfile):
    global count
    try:
        ver, nmethods = recv_exact(client, 2)
        recv_exact(client, nmethods)
        if ver != 5:
            return
        client.sendall(b"\x05\x00")  # no authentication
        ver, cmd, _, atyp = recv_exact(client, 4)
        if atyp == 1:
            host = socket.inet_ntoa(recv_exact(client, 4))
        elif atyp == 3:
            host = recv_exact(client, recv_exact(client, 1)[0]).decode()
        else:
            client.sendall(b"\x05\x08\x00\x01" + bytes(6))  # address type not supported
            return
        port = struct.unpack(">H", recv_exact(client, 2))[0]
        if cmd != 1 or host not in ("127.0.0.1", "localhost"):
            client.sendall(b"\x05\x02\x00\x01" + bytes(6))  # not allowed: loopback only
            return
        upstream = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack(">H", port))
        with lock:
            count += 1
            tmp = countfile + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % count)
            os.replace(tmp, countfile)
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
        pipe(client, upstream)
    except (OSError, ConnectionError, ValueError):
        pass
    finally:
        client.close()


def main():
    portfile, countfile = sys.argv[1], sys.argv[2]
    with open(countfile, "w") as f:
        f.write("0\n")
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.replace(tmp, portfile)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=serve, args=(client, countfile), daemon=True).start()


if __name__ == "__main__":
    main()
