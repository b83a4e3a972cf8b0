#!/usr/bin/env python3
"""auth_server.py LOG -- an HTTP/1.1 server (keep-alive) for test_k6_ported.sh's
authentication cases; prints its port, logs "METHOD PATH AUTHORIZATION" per
request to LOG, runs until killed. User "user", password "p@ss w:rd".

  /digest/ALG   Digest (RFC 7616) with qop=auth, ALG MD5 or SHA-256: without a
                valid Authorization, 401 with the challenge; with one, the
                response checked against the password: 200 "digest ok\\n", else 403
  /digest-noqop Digest as RFC 2069 (no qop), MD5
  /ntlm         the NTLM handshake on one connection: no Authorization, 401
                "WWW-Authenticate: NTLM"; a type 1 message, 401 with a type 2
                challenge; a type 3 message whose user name is "user", 200
                "ntlm ok\\n" (the response hashes are not checked: this is the
                message flow, not NTLM's cryptography)
  /form         200, the request body echoed
"""
import base64
import hashlib
import http.server
import os
import socketserver
import struct
import sys

USER, PASSWORD = "user", "p@ss w:rd"
REALM = "luaload@test"
log = open(sys.argv[1], "a", buffering=1)


def h(alg, s):
    f = hashlib.sha256 if alg == "SHA-256" else hashlib.md5
    return f(s.encode()).hexdigest()


def parse_params(v):
    out, i = {}, 0
    while i < len(v):
        while i < len(v) and v[i] in " ,":
            i += 1
        eq = v.find("=", i)
        if eq < 0:
            break
        k = v[i:eq].strip()
        i = eq + 1
        if i < len(v) and v[i] == '"':
            j = i + 1
            val = ""
            while j < len(v) and v[j] != '"':
                if v[j] == "\\":
                    j += 1
                val += v[j]
                j += 1
            out[k] = val
            i = j + 1
        else:
            j = v.find(",", i)
            j = len(v) if j < 0 else j
            out[k] = v[i:j].strip()
            i = j
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, headers=()):
        b = body.encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        auth = self.headers.get("Authorization") or "-"
        log.write("%s %s %s\n" % (self.command, self.path, auth))
        if self.path == "/form":
            return self.reply(200, body.decode("latin-1"))
        if self.path.startswith("/digest"):
            alg = "MD5" if self.path == "/digest-noqop" else self.path.split("/")[2]
            qop = self.path != "/digest-noqop"
            nonce = "n" + os.urandom(8).hex()
            chal = 'Digest realm="%s", nonce="%s", opaque="op4que"' % (REALM, nonce)
            if qop:
                chal += ', qop="auth", algorithm=%s' % alg
            if not auth.startswith("Digest "):
                return self.reply(401, "need digest\n", [("WWW-Authenticate", 'Basic realm="x"'),
                                                          ("WWW-Authenticate", chal)])
            p = parse_params(auth[7:])
            ha1 = h(alg, "%s:%s:%s" % (USER, REALM, PASSWORD))
            ha2 = h(alg, "%s:%s" % (self.command, p.get("uri", "")))
            if qop:
                want = h(alg, ":".join([ha1, p.get("nonce", ""), p.get("nc", ""), p.get("cnonce", ""), "auth", ha2]))
            else:
                want = h(alg, ":".join([ha1, p.get("nonce", ""), ha2]))
            ok = (p.get("username") == USER and p.get("uri") == self.path and p.get("response") == want
                  and p.get("opaque") == "op4que")
            return self.reply(200 if ok else 403, "digest ok\n" if ok else "digest bad\n")
        if self.path == "/ntlm":
            if not auth.startswith("NTLM "):
                return self.reply(401, "need ntlm\n", [("WWW-Authenticate", "NTLM")])
            msg = base64.b64decode(auth[5:])
            kind = struct.unpack("<I", msg[8:12])[0] if msg[:8] == b"NTLMSSP\0" else 0
            if kind == 1:
                flags = 0x00000001 | 0x00000200 | 0x00080000  # unicode, NTLM, NTLM2 key
                t2 = (b"NTLMSSP\0" + struct.pack("<I", 2) + struct.pack("<HHI", 0, 0, 48) +
                      struct.pack("<I", flags) + os.urandom(8) + b"\0" * 8 + struct.pack("<HHI", 0, 0, 48))
                return self.reply(401, "challenge\n", [("WWW-Authenticate", "NTLM " + base64.b64encode(t2).decode())])
            if kind == 3:
                ulen, _, uoff = struct.unpack("<HHI", msg[36:44])
                user = msg[uoff:uoff + ulen]
                name = user.decode("utf-16-le", "replace") if b"\0" in user else user.decode("latin-1")
                return self.reply(200 if name == USER else 403, "ntlm ok\n" if name == USER else "ntlm bad\n")
            return self.reply(400, "bad ntlm message\n")
        return self.reply(404, "no such path\n")

    do_GET = do_POST = do_PUT = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
