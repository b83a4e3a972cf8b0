#!/usr/bin/env bash
# The two transports: the native one serves HTTP/1.1 and HTTP/2 unless told
# otherwise, libcurl HTTP/3 and proxies; --transport, LUALOAD_TRANSPORT and
# a Client's transport option force one, and the banner says which. What a
# script sees is the same on both (status, headers, body, cookies,
# redirects, errors and their codes), and the native one sends nothing
# again: a request that went out on a connection the server had closed is
# one failed request, seen once by the server.
source "$(dirname "$0")/lib.sh"
start_serve
trap cleanup EXIT
DEAD=$(free_port)

# ---- the same answers on both ----
S=$(script same.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
local function show(name, r)
  print(name, r.status, r.proto, #(r.body or ""), r.error_code, r.error,
        r.headers["Content-Type"] or "-", r.headers["Content-Length"] or "-", r.url)
end
function default()
  show("get", http.get("$URL/"))
  show("404", http.get("$URL/status/404"))
  show("bytes", http.get("$URL/bytes/70000"))
  local e = http.post("$URL/echo", "ping")
  show("echo", e)
  print("echo body", e.body)
  show("head", http.head("$URL/"))
  show("close", http.get("$URL/close"))
  show("after close", http.get("$URL/"))
  show("refused", http.get("http://127.0.0.1:$DEAD/"))
  show("timeout", http.get("$URL/delay/2000", { timeout = "200ms" }))
  local page = http.get("$URL/login")
  local token = page.body:match('name="csrf_token" value="(%x+)"')
  local w = http.post("$URL/login", { username = "ann", password = "secret", csrf_token = token })
  show("login", w)
  print("welcome", w.body:match("<h1[^>]*>([^<]*)</h1>"))
  print("jar", http.cookieJar():cookiesForURL("$URL/welcome").session ~= nil)
end
LUA
)
for t in native curl; do
  run_ll run "$S" -q --no-summary --transport "$t"
  expect_eq "same answers: exit 0 on $t" "$RC" 0
  cp "$OUT" "$T/$t.txt"
done
expect_eq "the same status, headers, body, cookies, redirects and errors on both" "$(diff "$T/native.txt" "$T/curl.txt")" ""
expect_match "a refused connection: k6's text and code" "$T/native.txt" $'^refused\t0\t\t0\t1212\tdial tcp 127.0.0.1:'"$DEAD"$': connect: connection refused'
expect_match "a timeout: 1050" "$T/native.txt" $'^timeout\t0\t\t0\t1050\trequest timeout'
expect_match "the login redirect is followed with its cookie" "$T/native.txt" $'^welcome\tWelcome, ann$'
expect_match "HTTP/1.1 on the native transport" "$T/native.txt" $'^get\t200\tHTTP/1.1\t12\t0\t'

# ---- which transport: the banner, the flags, the Client option ----
S=$(script one.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
function default() http.get("$URL/") end
LUA
)
run_ll run "$S"
expect_match "the banner names the transports" "$OUT" "^  transport: native for HTTP/1.1, HTTP/2 and HTTP/3, curl for proxies and NTLM$"
LUALOAD_TRANSPORT=curl run_ll run "$S"
expect_match "LUALOAD_TRANSPORT forces one" "$OUT" "^  transport: curl for every request"
run_ll run "$S" --transport bogus
expect_eq "--transport bogus: exit 104" "$RC" 104
expect_match "--transport bogus: says what it takes" "$ERR" "invalid value for --transport: 'bogus' \(expected native or curl\)"
S=$(script opt.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client({ transport = "native", proxy = "http://127.0.0.1:1" })
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "a native Client with a proxy: exit 107" "$RC" 107
expect_match "a native Client with a proxy: why" "$ERR" 'opt.lua:2: http.Client: the native transport does not do a proxy \(transport = "curl" does\)'

# ---- no hidden retries: the server closes a kept-alive connection on the
# second request without answering; the request fails, once ----
python3 - "$T/close2.port" "$T/close2.count" <<'PY' &
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
count = [0]; lock = threading.Lock()
def handle(c):
    n = 0; buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            d = c.recv(65536)
            if not d: c.close(); return
            buf += d
        buf = buf.split(b"\r\n\r\n", 1)[1]
        with lock:
            count[0] += 1
            open(sys.argv[2], "w").write(str(count[0]))
        n += 1
        if n == 2: c.close(); return   # read, then close without an answer
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
while True:
    c, _ = s.accept(); threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
EXTRA_PIDS+=($!)
for _ in $(seq 50); do [[ -s $T/close2.port ]] && break; sleep 0.1; done
S=$(script dead.lua <<LUA
local http = require("luaload.http")
options = { iterations = 6 }
function default()
  local r = http.get("http://127.0.0.1:$(cat "$T/close2.port")/")
  print("r", r.status, r.error_code)
end
LUA
)
run_ll run "$S" -q --transport native --summary-export "$T/s.json"
expect_eq "dead connection: exit 0" "$RC" 0
expect_eq "dead connection: every other request fails (3 of 6)" "$(grep -c $'^r\t0\t1000$' "$OUT")" 3
expect_eq "dead connection: http_reqs = requests the server read" "$(cnt http_reqs)" "$(cat "$T/close2.count")"
expect_eq "dead connection: the server read each request once" "$(cat "$T/close2.count")" 6
finish
