#!/usr/bin/env bash
# What goes on the wire: no value smuggles bytes into a request (CR, LF,
# NUL, bad tokens are rejected naming the function and the script's line),
# empty header values are sent, no Expect: 100-continue, any-case schemes;
# and what comes back is bounded: max_response_body, buffers that shrink.
source "$(dirname "$0")/lib.sh"
start_serve
python3 "$(dirname "$0")/helpers/wire_server.py" "$T/wire.log" >"$T/wire.port" &
WIRE_PID=$!
trap 'kill $WIRE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 50); do [[ -s $T/wire.port ]] && break; sleep 0.1; done
WIRE=http://127.0.0.1:$(cat "$T/wire.port")

# every attempt to smuggle bytes fails with a clear error; none reaches the server
S=$(script smuggle.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
local function try(name, f)
  local ok, err = pcall(f)
  print(name .. " => " .. (ok and "SENT" or tostring(err)))
end
function default()
  try("method", function() local r = http.request("GET /x HTTP/1.1\r\nHost: a\r\n\r\nGET", "$URL/") return r end)
  try("params.method", function() local r = http.get("$URL/", { method = "GET\r\n" }) return r end)
  try("header value", function() local r = http.get("$URL/", { headers = { ["X-A"] = "a\r\nX-B: b" } }) return r end)
  try("header NUL", function() local r = http.get("$URL/", { headers = { ["X-A"] = "a\0b" } }) return r end)
  try("header name", function() local r = http.get("$URL/", { headers = { ["X A"] = "a" } }) return r end)
  try("host", function() local r = http.get("$URL/", { host = "a\nb" }) return r end)
  try("cookie", function() local r = http.get("$URL/", { cookies = { a = "b\r\nc" } }) return r end)
  try("url", function() local r = http.get("$URL/x\r\nY: z") return r end)
  try("user_agent", function() local c = http.Client({ user_agent = "a\r\nb" }) return c end)
  try("body type", function() local r = http.post("$URL/", true) return r end)
end
LUA
)
run_ll run "$S" -q
expect_eq "smuggling: exit 0" "$RC" 0
for what in method params.method "header value" "header NUL" "header name" host cookie url user_agent "body type"; do
  expect_match "smuggling: $what rejected" "$OUT" "^$what => .*smuggle.lua:[0-9]+: "
done
expect_match "the method must be a token" "$OUT" "http.request: method must be a token"
expect_match "CR/LF in a header value" "$OUT" "http.get: header 'X-A' must not contain CR, LF or NUL"
expect_match "a bad header name" "$OUT" "http.get: header name 'X A' is not a token"
expect_match "CR/LF in the URL" "$OUT" "http.get: invalid URL"
expect_match "user_agent" "$OUT" "http.Client: user_agent must not contain CR, LF or NUL"
expect_match "the body type names the function" "$OUT" "http.post: body must be a string, a table, an http.FileStream, an http.Form or an http.Blob, got boolean"
expect_eq "no smuggled request reached the server" "$(curl -s "$URL/stats" | jq .requests)" 0

# a bad Request in the init code: exit 107 naming the line
S=$(script init_bad.lua <<'LUA'
local http = require("luaload.http")
local req = http.Request("http://127.0.0.1/", { headers = { ["X"] = "a\nb" } })
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "bad Request in init: exit 107" "$RC" 107
expect_match "bad Request in init: file:line and function" "$ERR" "init_bad.lua:2: http.Request: header 'X' must not contain CR, LF or NUL"

# empty values are sent, no Expect: 100-continue (the body is over 1 MiB), HTTP:// works
S=$(script wire.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local r = http.post("$WIRE/big", string.rep("x", 2 * 1024 * 1024), { headers = { ["X-Empty"] = "" } })
  print("big", r.status, r.timings.sending + r.timings.waiting)
  r = http.get("HTTP://127.0.0.1:$(cat "$T/wire.port")/upper")
  print("upper", r.status)
  r = http.post("$WIRE/expect", string.rep("y", 2 * 1024 * 1024), { headers = { Expect = "100-continue" } })
  print("expect", r.status)
  http.post("$WIRE/plain", "a string body")
  http.post("$WIRE/typed", "{}", { headers = { ["Content-Type"] = "application/json" } })
  http.post("$WIRE/table", { a = "1" })
end
LUA
)
run_ll run "$S" -q
expect_match "2 MiB POST: 200" "$OUT" "^big	200"
expect_cmp "2 MiB POST: no 1 s wait for 100-continue" "x < 500" "$(awk '$1 == "big" { print $3 }' "$OUT")"
expect_match "an empty header value is sent" "$T/wire.log" "POST /big.*X-Empty:"
expect_eq "no Expect header unless the script sets one" "$(grep '/big' "$T/wire.log" | grep -c -i 'expect')" 0
expect_match "an Expect the script sets is sent" "$T/wire.log" "POST /expect.*Expect: 100-continue"
expect_match "HTTP:// (upper-case scheme) works" "$OUT" "^upper	200"
expect_eq "a string body sends no Content-Type (k6)" "$(grep '/plain' "$T/wire.log" | grep -c -i 'content-type')" 0
expect_match "a Content-Type the script sets is sent" "$T/wire.log" "POST /typed.*Content-Type: application/json"
expect_match "a table body is form-urlencoded" "$T/wire.log" "POST /table.*Content-Type: application/x-www-form-urlencoded"

# max_response_body: over it, the request fails with error_code 1000; the
# default is 512 MiB, so a 3 GiB body cannot crash LuaJIT
S=$(script limit.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local small = http.Client({ max_response_body = "1MiB" })
options = { iterations = 1 }
local function rss()
  for l in io.lines("/proc/self/status") do
    local kb = l:match("^VmRSS:%s+(%d+)")
    if kb then return tonumber(kb) end
  end
end
function default()
  local r = small:get("$URL/bytes/2000000")
  print("client", r.status, r.error_code, r.error, #(r.body or ""))
  r = http.get("$URL/bytes/2000000", { max_response_body = 1000 })
  print("param", r.status, r.error_code)
  r = small:get("$WIRE/chunked/3000000")
  print("chunked", r.status, r.error_code)
  r = small:get("$URL/bytes/1000")
  print("after", r.status, #r.body)
  r = http.get("$URL/bytes/3221225472")
  print("3GiB", r.status, r.error_code, r.error)
  local before = rss()
  r = http.get("$URL/bytes/67108864")
  print("64MiB", r.status, #r.body)
  r = nil
  collectgarbage()
  http.get("$URL/")
  collectgarbage()
  print("rss", before, rss())
end
LUA
)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1 run_ll run "$S" -q
expect_match "Client max_response_body: the request fails" "$OUT" "^client	0	1000	the response body is over max_response_body \(1048576 bytes\)	0$"
expect_match "params.max_response_body" "$OUT" "^param	0	1000$"
expect_match "a chunked body over the limit fails as it streams" "$OUT" "^chunked	0	1000$"
expect_match "the next request works" "$OUT" "^after	200	1000$"
expect_match "a 3 GiB body fails on the default limit, no crash" "$OUT" "^3GiB	0	1000	.*536870912 bytes"
expect_match "a 64 MiB body is read" "$OUT" "^64MiB	200	67108864$"
expect_cmp "the buffers shrink after a big response" "x < 32768" \
  "$(awk '$1 == "rss" { print $3 - $2 }' "$OUT")"
S=$(script badlimit.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client({ max_response_body = "3GiB" })
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "max_response_body over 2 GiB: exit 107" "$RC" 107
expect_match "max_response_body over 2 GiB: message" "$ERR" "http.Client: max_response_body must be a size from 1 byte to 2GiB-1"
# timeouts: mid-body the duration runs to the failure; before a connection
# it is a dial timeout (1211), once connected a request timeout (1050).
# A listener that never accepts, its backlog full, drops further SYNs.
python3 - "$T/full.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
fill = []
for _ in range(8):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(s.getsockname())
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.3)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(30)
PY
FULL_PID=$!
for _ in $(seq 50); do [[ -s $T/full.port ]] && break; sleep 0.1; done
S=$(script timeouts.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local r = http.get("$URL/fault/stall", { timeout = "300ms" })
  print("stall", r.status, r.error_code, r.timings.duration)
  r = http.get("$URL/fault/slow-body", { timeout = "500ms" })
  print("slowbody", r.status, r.error_code, r.timings.duration)
  local c = http.Client({ dial_timeout = "300ms" })
  r = c:get("http://127.0.0.1:$(cat "$T/full.port")/")
  print("dial", r.status, r.error_code)
end
LUA
)
run_ll run "$S" -q
kill $FULL_PID 2>/dev/null
expect_match "stall: a request timeout" "$OUT" "^stall	0	1050	"
expect_cmp "stall: the duration is the timeout" "x >= 290 && x < 600" "$(awk '$1 == "stall" { print $4 }' "$OUT")"
expect_match "timeout mid-body: 1050" "$OUT" "^slowbody	0	1050	"
expect_cmp "timeout mid-body: the duration runs to the failure, not the last byte" "x >= 490 && x < 900" \
  "$(awk '$1 == "slowbody" { print $4 }' "$OUT")"
expect_match "connect timeout: 1211" "$OUT" "^dial	0	1211$"
# what a misbehaving server sends ends as a counted error: headers over
# the limit (1 MiB native, 300 KiB libcurl), a head trickled byte by byte
# (slow loris) cut at the timeout
S=$(script hostile.lua <<LUA
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local r = http.get("$WIRE/headers/3000000")
  print("huge", r.status, r.error_code)
  r = http.get("$WIRE/headers/200000")
  print("big", r.status, r.error_code)
  r = http.get("$WIRE/trickle", { timeout = "600ms" })
  print("trickle", r.status, r.error_code, r.timings.duration)
  print("after", http.get("$WIRE/").status)
  r = http.get("$WIRE/nocontent", { timeout = "2s" })
  print("nocontent", r.status, r.error_code, r.timings.duration < 1000)
  print("after204", http.get("$WIRE/").status)
end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "hostile responses: exit 0" "$RC" 0
expect_match "3 MB of headers: a failed request, 1000" "$OUT" "^huge	0	1000$"
expect_match "200 kB of headers: read" "$OUT" "^big	200	0$"
expect_match "a trickled head: cut at the timeout, 1050" "$OUT" "^trickle	0	1050	"
expect_cmp "a trickled head: cut on time" "x >= 590 && x < 1500" "$(awk '$1 == "trickle" { print $4 }' "$OUT")"
expect_match "the next request works" "$OUT" "^after	200$"
expect_match "a 204 with a Content-Length: no body waited for" "$OUT" "^nocontent	204	0	true$"
expect_match "a 204 with a Content-Length: the connection goes on" "$OUT" "^after204	200$"
expect_eq "hostile responses: counted in http_req_failed" "$(passes http_req_failed)" 2
finish
