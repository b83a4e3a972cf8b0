#!/usr/bin/env bash
# Alt-Svc discovery (a Client's alt_svc option) on the native transport:
# against Caddy, whose HTTPS responses over TCP advertise its HTTP/3
# (`Alt-Svc: h3=":PORT"`), a Client with alt_svc = true sends the first
# request over HTTP/2 and the next ones over HTTP/3, each counted by proto;
# a Client without it stays on HTTP/2. Against a python3 HTTPS origin whose
# responses advertise an alternative where nothing listens, the request that
# tries it fails as a counted 1212 (nothing is retried) and the origin's
# next request goes back over TCP; an origin that advertises another
# server's port (Caddy's) sends its next request there over HTTP/3.
# alt_svc with transport = "curl" fails when the Client is made.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
start_serve
UPSTREAM_PORT=$PORT start_caddy || exit 1
H3=https://127.0.0.1:$CADDY_PORT
read -r PY_PORT DEAD_PORT < <(_srv_ports 2)

# the origin: HTTP/1.1 over TLS; / advertises the dead port, /to-caddy
# Caddy's HTTP/3, /clear says "clear"
cat >"$T/origin.py" <<'PY'
import http.server, ssl, sys
port, dead, caddy, certs = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        alt = {"/to-caddy": 'h3=":%s"; ma=60' % caddy, "/clear": "clear"}.get(self.path, 'h3=":%s"; ma=60' % dead)
        body = b"origin\n"
        self.send_response(200)
        self.send_header("Alt-Svc", alt)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(certs + "/server.pem", certs + "/server.key")
s = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.serve_forever()
PY
/usr/bin/python3 "$T/origin.py" "$PY_PORT" "$DEAD_PORT" "$CADDY_PORT" "$CERTS" 2>"$T/origin.log" &
ORIGIN_PID=$!
EXTRA_PIDS+=("$ORIGIN_PID")
_srv_wait origin "$ORIGIN_PID" "$T/origin.log" "$PY_PORT" || exit 1
PY=https://127.0.0.1:$PY_PORT

S=$(script altsvc.lua <<LUA
local http = require("luaload.http")
local tls = { ca = "$CERTS/ca.pem" }
local alt = http.Client{ alt_svc = true, tls = tls }
local plain = http.Client{ tls = tls }
local other = http.Client{ alt_svc = true, tls = tls }
local mover = http.Client{ alt_svc = true, tls = tls }
options = { thresholds = { ["http_reqs{proto:HTTP/3.0}"] = { "count>=0" }, ["http_reqs{error_code:1212}"] = { "count>=0" } } }
function default()
  for i = 1, 3 do local r = alt:get("$H3/"); print("caddy", i, r.status, r.proto) end
  for i = 1, 2 do local r = plain:get("$H3/"); print("plain", i, r.status, r.proto) end
  for i = 1, 3 do local r = other:get("$PY/"); print("dead", i, r.status, r.proto, r.error_code) end
  local r = mover:get("$PY/to-caddy"); print("move", 1, r.status, r.proto)
  r = mover:get("$PY/to-caddy"); print("move", 2, r.status, r.proto)
end
LUA
)
run_ll run "$S" -q -u 1 -i 1 --summary-export "$T/s.json"
expect_eq "alt-svc: exit 0" "$RC" 0
expect_eq "caddy: the first request over HTTP/2" "$(grep -cP '^caddy\t1\t200\tHTTP/2.0$' "$OUT")" 1
expect_eq "caddy: then over HTTP/3 (its Alt-Svc)" "$(grep -cP '^caddy\t[23]\t200\tHTTP/3.0$' "$OUT")" 2
expect_eq "without alt_svc: HTTP/2 throughout" "$(grep -cP '^plain\t[12]\t200\tHTTP/2.0$' "$OUT")" 2
expect_eq "dead alternative: the first request over HTTP/1.1" "$(grep -cP '^dead\t1\t200\tHTTP/1.1\t0$' "$OUT")" 1
expect_eq "dead alternative: the second tries HTTP/3 and fails as 1212" \
  "$(grep -cP '^dead\t2\t0\t\t1212$' "$OUT")" 1
expect_eq "dead alternative: forgotten, the third over HTTP/1.1 again" "$(grep -cP '^dead\t3\t200\tHTTP/1.1\t0$' "$OUT")" 1
expect_eq "another server's port: advertised over HTTP/1.1" "$(grep -cP '^move\t1\t200\tHTTP/1.1$' "$OUT")" 1
expect_eq "another server's port: the next request reaches it over HTTP/3" "$(grep -cP '^move\t2\t[0-9]+\tHTTP/3.0$' "$OUT")" 1
expect_eq "http_reqs{error_code:1212} counts the failed try" "$(cnt 'http_reqs{error_code:1212}')" 1
expect_eq "http_reqs{proto:HTTP/3.0} = 3" "$(cnt 'http_reqs{proto:HTTP/3.0}')" 3
expect_eq "http_reqs = 10" "$(cnt http_reqs)" 10

S=$(script curl.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client{ alt_svc = true, transport = "curl" }
function default() end
LUA
)
run_ll run "$S" -q -i 1
expect_eq "alt_svc with transport curl: exit 107" "$RC" 107
expect_match "alt_svc with transport curl: says why" "$ERR" 'alt_svc needs the native transport'
finish
