#!/usr/bin/env bash
# test_serve_grpc.sh -- `luaload serve`'s gRPC echo over h2c (HTTP/2 with
# prior knowledge, src/core/serve/h2.c and grpc_echo.c): luaload.grpc's
# unary calls and its three kinds of stream against it, x-echo-status,
# concurrent streams of several VUs, bad messages (a compressed flag, a bad
# prefix, a request ending inside a message) as grpc-status 13; a client
# we did not write, Debian's python3-grpcio (helpers/grpc/serve_client.py),
# for unary, bidi and gzip; curl for a non-gRPC h2c request (404) and
# HTTP/1.1 on the same port; a client gone mid-stream; the counts.
source "$(dirname "$0")/lib.sh"
H=$(cd "$(dirname "$0")/helpers/grpc" && pwd)
EX=$(cd "$(dirname "$0")/../../scripts/examples/data" && pwd)
start_serve
ADDR=127.0.0.1:$PORT
stats() { curl -s "$URL/stats" | jq -r "$1"; }

cat >"$T/kinds.proto" <<'PROTO'
syntax = "proto3";
package luaload.servetest;
enum Color { RED = 0; GREEN = 1; BLUE = 2; }
message Inner { string note = 1; }
message Msg {
  string text = 1;
  int64 n = 2;
  repeated int32 nums = 3;
  Color color = 4;
  Inner inner = 5;
  bytes blob = 6;
  map<string, string> labels = 7;
}
service Echo {
  rpc Say(Msg) returns (Msg);
  rpc Chat(stream Msg) returns (stream Msg);
  rpc Upload(stream Msg) returns (Msg);
  rpc Watch(Msg) returns (stream Msg);
}
PROTO

# (a) unary: every field back; x-echo-status as a response
S=$(script unary.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$T" }, "kinds.proto")
function default()
  client:connect("$ADDR", { plaintext = true })
  local r = client:invoke("luaload.servetest.Echo/Say", {
    text = "héllo", n = "9007199254740993", nums = { 1, 2, 3 }, color = "BLUE", inner = { note = "deep" },
    blob = "AAH/", labels = { k = "v" } })
  local m = r.message
  print("say", r.status, m.text, m.n, table.concat(m.nums, ","), m.color, m.inner.note, m.blob, m.labels.k,
    r.headers["content-type"][1], r.trailers["grpc-status"][1])
  local e = client:invoke("luaload.servetest.Echo/Say", { text = "x" }, { metadata = { ["x-echo-status"] = "7" } })
  print("status", e.status, e.error.code, e.error.message, tostring(e.message))
  local b = client:invoke("luaload.servetest.Echo/Say", { text = "x" }, { metadata = { ["x-echo-status"] = "99" } })
  print("bad status", b.status, b.error.message)
  local z = client:invoke("luaload.servetest.Echo/Say", {})
  print("empty", z.status, z.message.text == "")
end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "unary: exit 0" "$RC" 0
expect_match "unary: every field back, 200 application/grpc, grpc-status 0" "$OUT" \
  $'^say\t0\théllo\t9007199254740993\t1,2,3\tBLUE\tdeep\tAAH/\tv\tapplication/grpc\t0$'
expect_match "unary: x-echo-status 7 is a response with status 7" "$OUT" $'^status\t7\t7\techo status 7\tnil$'
expect_match "unary: an x-echo-status out of 0..16 is INVALID_ARGUMENT" "$OUT" \
  $'^bad status\t3\tx-echo-status: expected a status code 0..16$'
expect_match "unary: an empty message echoes" "$OUT" $'^empty\t0\ttrue$'

# (b) streams: bidirectional interleaved, client and server streaming
S=$(script streams.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$T" }, "kinds.proto")
function default()
  client:connect("$ADDR", { plaintext = true })
  local log = {}
  local chat = grpc.Stream(client, "luaload.servetest.Echo/Chat")
  chat:on("data", function(m)
    log[#log + 1] = "e" .. m.n
    if m.n ~= "3" then
      log[#log + 1] = "w" .. (m.n + 1)
      chat:write({ n = m.n + 1 })
    else
      chat:end_stream()
    end
  end)
  chat:on("status", function(st) log[#log + 1] = "status " .. st.code end)
  chat:on("end", function() print("bidi", table.concat(log, ",")) end)
  log[#log + 1] = "w1"
  chat:write({ n = 1 })
  local up, got = grpc.Stream(client, "luaload.servetest.Echo/Upload"), {}
  up:on("data", function(m) got[#got + 1] = m.text end)
  up:on("end", function() print("client streaming", table.concat(got, ",")) end)
  up:write({ text = "only" })
  up:end_stream()
  local w, seen = grpc.Stream(client, "luaload.servetest.Echo/Watch"), {}
  w:on("data", function(m) seen[#seen + 1] = m.text end)
  w:on("status", function(st) seen[#seen + 1] = "status " .. st.code end)
  w:on("end", function() print("server streaming", table.concat(seen, ",")) end)
  w:write({ text = "watch" })
  w:end_stream()
  local f, ferr = grpc.Stream(client, "luaload.servetest.Echo/Chat", { metadata = { ["x-echo-status"] = "9" } }), {}
  f:on("data", function(m) ferr[#ferr + 1] = "data" end)
  f:on("error", function(e) ferr[#ferr + 1] = e.code .. " " .. e.message end)
  f:on("end", function() print("stream status", table.concat(ferr, ",")) end)
  f:write({ text = "a" })
  f:end_stream()
end
LUA
)
run_ll run "$S" -i 1 -q --summary-export "$T/s.json"
expect_eq "streams: exit 0" "$RC" 0
expect_match "bidi: each echo before the next write (written from the data handler)" "$OUT" \
  $'^bidi\tw1,e1,w2,e2,w3,e3,status 0$'
expect_match "client streaming: its message back" "$OUT" $'^client streaming\tonly$'
expect_match "server streaming: its message back, then status 0" "$OUT" $'^server streaming\twatch,status 0$'
expect_match "stream: x-echo-status 9, nothing echoed" "$OUT" $'^stream status\t9 echo status 9$'
expect_eq "streams: grpc_streams_msgs_received" "$(cnt grpc_streams_msgs_received)" 5

# (c) several VUs, each with concurrent streams on its connection
before=$(stats '.http2.connections')
S=$(script many.lua <<LUA
local grpc = require("luaload.grpc")
local ll = require("luaload")
local client = grpc.Client()
client:load({ "$T" }, "kinds.proto")
options = { vus = 4, iterations = 8, thresholds = { checks = { "rate==1" } } }
function default()
  if __ITER == 0 then client:connect("$ADDR", { plaintext = true }) end
  for k = 1, 5 do
    local s, got = grpc.Stream(client, "luaload.servetest.Echo/Chat"), 0
    s:on("data", function(m)
      got = got + 1
      ll.check(m, { ["own echo"] = function(x) return x.text == "s" .. k and x.n == tostring(got) end })
      if got < 20 then s:write({ text = "s" .. k, n = got + 1 }) else s:end_stream() end
    end)
    s:on("end", function() ll.check(got, { ["20 echoes"] = function(n) return n == 20 end }) end)
    s:write({ text = "s" .. k, n = 1 })
  end
end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "concurrent streams: exit 0 (checks all passed)" "$RC" 0
expect_eq "concurrent streams: 8 iterations x 5 streams" "$(cnt grpc_streams)" 40
expect_eq "concurrent streams: 800 echoes" "$(cnt grpc_streams_msgs_received)" 800
expect_eq "concurrent streams: one connection per VU" "$(($(stats '.http2.connections') - before))" 4

# (d) a client we did not write: python3-grpcio
protoc --descriptor_set_out="$T/echo.pb" --include_imports -I"$EX" "$EX/echo.proto" || not_ok "protoc"
timeout 30 /usr/bin/python3 "$H/serve_client.py" "$T/echo.pb" "$ADDR" >"$T/py.out" 2>"$T/py.err"
expect_eq "python3-grpcio: exit 0" "$?" 0
expect_match "python3-grpcio: unary, every field back" "$T/py.out" '^unary OK$'
expect_match "python3-grpcio: x-echo-status 7" "$T/py.out" '^status 7 echo status 7$'
expect_match "python3-grpcio: bidi interleaves" "$T/py.out" '^bidi w1,e1,w2,e2,w3,e3$'
expect_match "python3-grpcio: a gzip-compressed message is INTERNAL" "$T/py.out" \
  '^gzip 13 a compressed message \(flag 1\): the echo takes uncompressed messages only$'

# (e) raw bodies by curl: bad messages, a bad path, what is no gRPC call
grpc_curl() { # BODY_PRINTF PATH: the response's headers and trailers in $T/h
  printf "$1" >"$T/body"
  curl -s --http2-prior-knowledge -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @"$T/body" \
    -D "$T/h" -o "$T/b" "$URL$2"
}
grpc_curl '\001\000\000\000\002hi' /a.B/C
expect_match "curl: a compressed flag is grpc-status 13" "$T/h" '^grpc-status: 13'
grpc_curl '\002\000\000\000\000' /a.B/C
expect_match "curl: flag 2 is grpc-status 13, saying why" "$T/h" '^grpc-message: malformed message prefix: flag 0x02'
grpc_curl '\000\000\000\000\002h' /a.B/C
expect_match "curl: a request ending inside a message is 13" "$T/h" '^grpc-message: the request ended inside a message'
grpc_curl '\000\177\000\000\000' /a.B/C
expect_match "curl: a message over 4 MiB is RESOURCE_EXHAUSTED" "$T/h" '^grpc-status: 8'
grpc_curl '\000\000\000\000\002hi\000\000\000\000\001!' /a.B/C
expect_eq "curl: two messages in one body, both back" "$(od -An -c "$T/b" | tr -s ' ')" ' \0 \0 \0 \0 002 h i \0 \0 \0 \0 001 !'
grpc_curl '' /nopath
expect_match "curl: a path that is no /Service/Method is UNIMPLEMENTED" "$T/h" '^grpc-status: 12'
code=$(curl -s --http2-prior-knowledge -o "$T/b" -w '%{http_version} %{http_code}' "$URL/hello")
expect_eq "curl: a GET over h2c is 404" "$code" "2 404"
expect_match "curl: its body says HTTP/2 answers gRPC only" "$T/b" 'HTTP/2 answers gRPC only'
code=$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_code}' -H 'content-type: text/plain' -d x "$URL/a.B/C")
expect_eq "curl: a POST that is not application/grpc is 404" "$code" 404
code=$(curl -s -o "$T/b" -w '%{http_version} %{http_code}' "$URL/")
expect_eq "HTTP/1.1 on the same port still" "$code $(cat "$T/b")" "1.1 200 hello world"

# (g) the counts: every call a request (route grpc, POST), the 404s errors
expect_eq "stats: every call counted (4 + 4 + 40 + 4 by python3-grpcio + 6 by curl)" "$(stats '.routes.grpc')" 58
expect_eq "stats: the two 404s counted as errors" "$(stats '.routes.error')" 2
expect_eq "stats: methods: the calls and one POST, GETs over h2c and HTTP/1.1" "$(stats '.methods | "\(.POST) \(.GET)"')" "59 2"
expect_eq "stats: requests add up" "$(stats '.requests == ([.routes[]] | add)')" true
expect_eq "stats: every message echoed (2 + 5 + 800 + 4 + 2)" "$(stats '"\(.grpc.messages_received) \(.grpc.messages_sent)"')" "813 813"

# (f) clients gone mid-stream: a run cut with streams open, a body cut inside a message
S=$(script cut.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$T" }, "kinds.proto")
options = { scenarios = { cut = { executor = "constant-vus", vus = 3, duration = "400ms", gracefulStop = "0s" } } }
function default()
  client:connect("$ADDR", { plaintext = true })
  local s = grpc.Stream(client, "luaload.servetest.Echo/Chat")
  s:on("data", function(m) s:write({ text = string.rep("y", 3000) }) end)
  s:write({ text = "go" })
end
LUA
)
run_ll run "$S" -q
expect_eq "cut: exit 0" "$RC" 0
(printf '\000\000\001\000\000abc'; sleep 3) | timeout 0.5 curl -s --http2-prior-knowledge -H 'content-type: application/grpc' \
  -X POST -T - "$URL/a.B/C" >/dev/null 2>&1
grpc_curl '\000\000\000\000\002ok' /a.B/C
expect_match "after clients left mid-stream, the echo still answers" "$T/h" '^grpc-status: 0'

expect_eq "stats: no 404 for the cut ones" "$(stats '.routes.error')" 2
stop_pid "$SERVE_PID"
SERVE_PID=
expect_match "exit line: http2 and grpc" "$T/serve.out" '"http2":\{"connections":[0-9]+,"streams":[0-9]+\},"grpc":\{'
expect_eq "serve: no sanitizer report" "$(grep -c 'Sanitizer\|runtime error' "$T/serve.out")" 0
finish
