#!/usr/bin/env python3
"""openapi_server.py -- the other side of test_convert_openapi.sh, written
from the description alone (not from luaload's converter).

  openapi_server.py serve SPEC PREFIX LOG
      An HTTP/1.1 server on a free loopback port (printed first): a request
      under PREFIX whose method and path match an operation of SPEC (JSON or
      YAML, OpenAPI 3.x or Swagger 2.0) gets the operation's lowest
      documented 2xx status (else 200); anything else 404. Each request is
      logged to LOG as one JSON line: method, path, query, headers, body,
      the operation it matched ("GET /pet/{petId}") or null.

  openapi_server.py check SPEC LOG TIMES [TAGS]
      Checks LOG: every operation of SPEC (with one of the comma-separated
      TAGS, when given) was called TIMES times and nothing else was called;
      no path kept a "{template}"; each required query parameter and
      header parameter was sent; a JSON body parsed as JSON; a form body
      had the form's content type. Prints one line per problem; exit 1 on
      any.
"""
import http.server
import json
import re
import socket
import socketserver
import sys
import urllib.parse

import yaml

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def deref(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        cur = doc
        for part in node["$ref"][2:].split("/"):
            cur = cur[urllib.parse.unquote(part).replace("~1", "/").replace("~0", "~")]
        node = cur
    return node


def operations(doc):
    """[(label, method, template regex, status, op, params)] in document order."""
    out = []
    for path, item in doc["paths"].items():
        item = deref(doc, item)
        for method, op in item.items():
            if method not in METHODS:
                continue
            params = {}
            for p in item.get("parameters", []) + op.get("parameters", []):
                p = deref(doc, p)
                params[(p["name"], p["in"])] = p
            codes = sorted(int(k) for k in op.get("responses", {}) if re.fullmatch(r"2\d\d", str(k)))
            status = codes[0] if codes else 200
            rx = "^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(path)) + "$"
            out.append((method.upper() + " " + path, method.upper(), re.compile(rx), status, op, params, path))
    return out


def match(ops, method, path):
    """The operation with the most literal characters that matches."""
    best = None
    for o in ops:
        if o[1] == method and o[2].match(path):
            lit = len(re.sub(r"\{[^}]*\}", "", o[6]))
            if best is None or lit > best[0]:
                best = (lit, o)
    return best[1] if best else None


def serve(spec, prefix, logpath):
    doc = yaml.safe_load(open(spec))
    ops = operations(doc)
    log = open(logpath, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args):
            pass

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            u = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(u.path)
            o = match(ops, self.command, path[len(prefix):]) if path.startswith(prefix) else None
            log.write(json.dumps({
                "method": self.command, "path": path, "query": urllib.parse.parse_qs(u.query, keep_blank_values=True),
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"), "op": o[0] if o else None}) + "\n")
            status = o[3] if o else 404
            out = b"" if self.command == "HEAD" or status in (204, 304) else b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def __getattr__(self, name):
            if name.startswith("do_"):
                return self.handle_any
            raise AttributeError(name)

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


def check(spec, logpath, times, tags):
    doc = yaml.safe_load(open(spec))
    swagger = "swagger" in doc
    ops = operations(doc)
    want = set(t for t in tags.split(",") if t) if tags else None
    reqs = [json.loads(line) for line in open(logpath)]
    problems = []
    for label, method, rx, status, op, params, path in ops:
        if want is not None and not want & set(op.get("tags", [])):
            if any(r["op"] == label for r in reqs):
                problems.append(f"{label}: called, but it has none of the tags {tags}")
            continue
        got = [r for r in reqs if r["op"] == label]
        if len(got) != times:
            problems.append(f"{label}: called {len(got)} times, want {times}")
            continue
        for r in got:
            if "{" in r["path"]:
                problems.append(f"{label}: a path parameter left in the path: {r['path']}")
            for (name, where), p in params.items():
                if not p.get("required"):
                    continue
                if where == "query" and name not in r["query"]:
                    problems.append(f"{label}: no query parameter {name}: {r['query']}")
                if where == "header" and name.lower() not in r["headers"]:
                    problems.append(f"{label}: no header {name}")
            ctype = r["headers"].get("content-type", "")
            if swagger:
                body = any(p["in"] == "body" for p in params.values())
                form = any(p["in"] == "formData" for p in params.values())
            else:
                content = deref(doc, op.get("requestBody", {})).get("content", {})
                body = any("json" in k for k in content)
                form = not body and any(k in ("multipart/form-data", "application/x-www-form-urlencoded") for k in content)
            if body:
                try:
                    json.loads(r["body"])
                except ValueError:
                    problems.append(f"{label}: the body is not JSON: {r['body'][:80]!r}")
                if "json" not in ctype:
                    problems.append(f"{label}: Content-Type {ctype!r} for a JSON body")
            elif form and not (ctype.startswith("multipart/form-data") or ctype.startswith("application/x-www-form-urlencoded")):
                problems.append(f"{label}: Content-Type {ctype!r} for a form")
    for r in reqs:
        if r["op"] is None:
            problems.append(f"a request no operation describes: {r['method']} {r['path']}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else ""))
