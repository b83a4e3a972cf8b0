#!/usr/bin/env bash
# luaload.grpc (k6/net/grpc) against a server nobody here wrote: Debian's
# python3-grpcio (helpers/grpc/grpc_server.py, a generic handler on the
# messages of a descriptor set Debian's protoc makes from echo.proto).
# Unary calls: every kind of field through proto3's JSON mapping, metadata
# (a -bin key as bytes), headers and trailers, a non-OK status as a
# response, a deadline, a call with no connect, a refused connection,
# TLS and mTLS, grpc_req_duration with k6's tags and a threshold on it,
# bad input raising clear errors, and a run cut mid-call.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
H=$(cd "$(dirname "$0")/helpers/grpc" && pwd)
protoc --descriptor_set_out="$T/echo.pb" --include_imports -I"$H" "$H/echo.proto" "$H/reflection.proto" "$H/health.proto" ||
  { not_ok "protoc"; finish; exit 1; }

# start_server NAME ARGS...: its port in NAME_PORT; it stops when its stdin closes
start_server() {
  local name=$1
  shift
  mkfifo "$T/$name.in"
  /usr/bin/python3 "$H/grpc_server.py" "$T/echo.pb" "$@" <"$T/$name.in" >"$T/$name.port" 2>"$T/$name.err" &
  EXTRA_PIDS+=($!)
  eval "exec {fd}>\"$T/$name.in\""
  for ((i = 0; i < 200; i++)); do [[ -s $T/$name.port ]] && break; sleep 0.05; done
  [[ -s $T/$name.port ]] || { not_ok "grpc_server.py $name started" "$(cat "$T/$name.err")"; finish; exit 1; }
  printf -v "${name}_PORT" '%s' "$(head -1 "$T/$name.port")"
}
start_server plain --reflection v1 --health
start_server alpha --reflection v1alpha --gzip
start_server tls --tls "$CERTS/server.pem" "$CERTS/server.key"
start_server mtls --tls "$CERTS/server.pem" "$CERTS/server.key" --client-ca "$CERTS/ca.pem"

# (a) unary calls over h2c
S=$(script unary.lua <<LUA
local grpc = require("luaload.grpc")
local json = require("luaload.json")
local ll = require("luaload")
local client = grpc.Client()
client:load({ "$H" }, "echo.proto")
options = { thresholds = { grpc_req_duration = { "p(95)<5000" }, ["grpc_req_duration{status:5}"] = { "max<5000" } } }
function default()
  if __ITER == 0 then client:connect("127.0.0.1:$plain_PORT", { plaintext = true }) end
  local r = client:invoke("luaload.test.Echo/Say", {
    text = "héllo", big = "9007199254740993", nums = { 1, 2, 3 }, labels = { k = "v" }, blob = "AAH/",
    color = "GREEN", a = "pick a", at = "2024-01-02T03:04:05Z", inner = { note = "n" },
  }, { metadata = { ["x-token"] = "abc", ["x-data-bin"] = "\1\2\255" }, tags = { mine = "yes" } })
  ll.check(r, { ["status OK"] = function(x) return x.status == grpc.StatusOK end })
  if __ITER == 0 then
    local m = r.message
    print("msg", m.text, m.big, table.concat(m.nums, ","), m.labels.k, m.blob, m.color, m.a, m.at, m.inner.note)
    print("md", m.metadata)
    print("hdr", r.headers["content-type"][1], r.headers["x-initial"][1], r.trailers["x-trailer"][1],
      r.trailers["grpc-status"][1], tostring(r.error))
    -- lowerCamel names in, the .proto's out
    local c = client:invoke("/luaload.test.Echo/Say", { text = "camel", delayMs = 0 })
    print("camel", c.status, c.message.text)
    -- a status other than OK is a response
    local f = client:invoke("luaload.test.Echo/Say", { fail_with = 5 })
    print("fail", f.status, f.error.code, f.error.message, tostring(f.message))
    local f2 = client:invoke("luaload.test.Echo/Say", { failWith = 5 }, { tags = { second = "1" } })
    -- a deadline
    local d = client:invoke("luaload.test.Echo/Say", { delay_ms = 1500 }, { timeout = "200ms" })
    print("deadline", d.status, d.status == grpc.StatusDeadlineExceeded)
    -- async_invoke: three at once, on one connection, each a promise
    local ps = {}
    for i = 1, 3 do ps[i] = client:async_invoke("luaload.test.Echo/Say", { text = "a" .. i, delay_ms = 300 }) end
    local all = ll.await_all(ps)
    print("async", all[1].message.text, all[2].message.text, all[3].message.text, ps[1]:state())
    local bad = client:asyncInvoke("luaload.test.Echo/Say", { fail_with = 7 }):await()
    print("async status", bad.status, bad.error.message)
    -- the response message discarded
    local q = client:invoke("luaload.test.Echo/Say", { text = "x" }, { discard_response_message = true })
    print("discard", q.status, tostring(q.message))
    -- bad input raises, naming the problem
    print("nomethod", pcall(client.invoke, client, "luaload.test.Echo/Nope", {}))
    print("stream", pcall(client.invoke, client, "luaload.test.Echo/Count", {}))
    print("badfield", pcall(client.invoke, client, "luaload.test.Echo/Say", { nosuch = 1 }))
    print("badmd", pcall(client.invoke, client, "luaload.test.Echo/Say", {}, { metadata = { ["x-a"] = "a\\r\\nb" } }))
  end
end
LUA
)
run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/s.json" -o json="$T/u.json"
expect_eq "unary: exit 0" "$RC" 0
expect_match "unary: every kind of field back through proto3's JSON mapping" "$OUT" \
  $'^msg\théllo\t9007199254740993\t1,2,3\tv\tAAH/\tGREEN\tpick a\t2024-01-02T03:04:05Z\tn$'
expect_match "unary: metadata, a -bin value as bytes" "$OUT" $'^md\tx-data-bin=0102ff;x-token=abc$'
expect_match "unary: headers and trailers, no error" "$OUT" $'^hdr\tapplication/grpc\thi\tyes\t0\tnil$'
expect_match "unary: lowerCamel field names and a leading /" "$OUT" $'^camel\t0\tcamel$'
expect_match "unary: a non-OK status is a response with its error" "$OUT" $'^fail\t5\t5\ttold to fail: 5 ü\tnil$'
expect_match "unary: a deadline gives DEADLINE_EXCEEDED" "$OUT" $'^deadline\t4\ttrue$'
expect_match "unary: discard_response_message" "$OUT" $'^discard\t0\tnil$'
expect_match "async_invoke: three at once, each its response" "$OUT" $'^async\ta1\ta2\ta3\tfulfilled$'
expect_match "async_invoke: a status other than OK fulfils the promise" "$OUT" $'^async status\t7\ttold to fail: 7 ü$'
expect_match "unary: an unknown method raises" "$OUT" $'^nomethod\tfalse\t.*grpc.Client:invoke: .*Nope.*not found'
expect_match "unary: a streaming method raises" "$OUT" $'^stream\tfalse\t.*luaload.test.Echo/Count is a streaming method'
expect_match "unary: an unknown field raises" "$OUT" $'^badfield\tfalse\t.*grpc.Client:invoke: the message: .*nosuch'
expect_match "unary: a metadata value with CR LF raises" "$OUT" $'^badmd\tfalse\t.*params.metadata: the value of x-a holds CR, LF or NUL'
expect_eq "unary: checks all passed" "$(passes checks)" 6
points() { jq -s "[.[] | select(.type == \"Point\" and .metric == \"grpc_req_duration\" and ($1))] | length" "$T/u.json"; }
expect_eq "unary: grpc_req_duration: a sample for every call (6, and 9 more in each VU's first)" "$(points true)" 24
expect_eq "unary: grpc_req_duration: status 5 on two in each VU's first" "$(points '.data.tags.status == "5"')" 4
expect_eq "unary: a threshold on a status sub-metric" "$(jqv "$T/s.json" '.metrics["grpc_req_duration{status:5}"].thresholds["max<5000"]')" false
if [[ $(jqv "$T/s.json" '.metrics.data_sent.count') -gt 500 ]]; then ok "unary: data_sent"; else not_ok "unary: data_sent" "$(jqv "$T/s.json" '.metrics.data_sent')"; fi

# (b) k6's tags on the samples, in the JSON output
S=$(script tags.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$H" }, "echo.proto")
function default()
  client:connect("127.0.0.1:$plain_PORT", { plaintext = true })
  client:invoke("luaload.test.Echo/Say", { text = "t" }, { tags = { mine = "yes" } })
  client:close()
  print("closed", pcall(client.invoke, client, "luaload.test.Echo/Say", {}))
end
LUA
)
run_ll run "$S" -i 1 -q -o json="$T/o.json"
expect_eq "tags: exit 0" "$RC" 0
expect_eq "tags: url, service, method, name, rpc_type, status and the call's own" \
  "$(jq -r 'select(.metric == "grpc_req_duration" and .type == "Point") | .data.tags | [.url, .service, .method, .name, .rpc_type, .status, .mine] | join(" ")' "$T/o.json")" \
  "127.0.0.1:$plain_PORT/luaload.test.Echo/Say luaload.test.Echo Say /luaload.test.Echo/Say unary 0 yes"
expect_match "close: a call after it raises" "$OUT" $'^closed\tfalse\t.*no gRPC connection, call connect first'

# (c) TLS, mTLS, a refused connection, no connect
CA_PEM=$(cat "$CERTS/ca.pem")
S=$(script tls.lua <<LUA
local grpc = require("luaload.grpc")
local tls_client, mtls_client, other = grpc.Client(), grpc.Client(), grpc.Client()
for _, c in ipairs({ tls_client, mtls_client, other }) do c:load({ "$H" }, "echo.proto") end
local function pem(path) local f = assert(io.open(path)); local s = f:read("*a"); f:close(); return s end
local ca, cert, key = pem("$CERTS/ca.pem"), pem("$CERTS/client.pem"), pem("$CERTS/client.key")
function default()
  tls_client:connect("127.0.0.1:$tls_PORT", { tls = { cacerts = { ca } } })
  local r = tls_client:invoke("luaload.test.Echo/Say", { text = "over tls" })
  print("tls", r.status, r.message and r.message.text)
  mtls_client:connect("127.0.0.1:$mtls_PORT", { tls = { cacerts = { ca }, cert = cert, key = key } })
  local m = mtls_client:invoke("luaload.test.Echo/Say", { text = "over mtls" })
  print("mtls", m.status, m.message and m.message.text)
  print("other tls", pcall(mtls_client.connect, mtls_client, "127.0.0.1:$mtls_PORT", { tls = { cacerts = { ca } } }))
  other:connect("127.0.0.1:$mtls_PORT", { tls = { cacerts = { ca } } }) -- no client certificate
  local n = other:invoke("luaload.test.Echo/Say", { text = "x" })
  print("no cert", n.status, n.error ~= nil)
  print("noconnect", pcall(grpc.Client().invoke, grpc.Client(), "a.B/C", {}))
  other:connect("127.0.0.1:1", { plaintext = true })
  local u = other:invoke("luaload.test.Echo/Say", { text = "x" })
  print("refused", u.status, u.error and u.error.code, u.message)
  print("badaddr", pcall(other.connect, other, "no-port", { plaintext = true }))
end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "tls: exit 0" "$RC" 0
expect_match "tls: a call over TLS with the given CA" "$OUT" $'^tls\t0\tover tls$'
expect_match "mtls: a call with a client certificate" "$OUT" $'^mtls\t0\tover mtls$'
expect_match "mtls: other TLS options on the same Client raise" "$OUT" $'^other tls\tfalse\t.*params.tls differ'
expect_match "mtls: no client certificate is UNAVAILABLE, a response" "$OUT" $'^no cert\t14\ttrue$'
expect_match "no connect: raises" "$OUT" $'^noconnect\tfalse\t.*no gRPC connection, call connect first'
expect_match "refused: UNAVAILABLE, a response" "$OUT" $'^refused\t14\t14\tnil$'
expect_match "bad address: raises" "$OUT" $'^badaddr\tfalse\t.*grpc.Client:connect: address no-port: expected host:port'

# (d) bad .proto files are init errors naming the file and line
printf 'syntax = "proto3";\nmessage A { strin x = 1; }\n' >"$T/bad.proto"
S=$(script badproto.lua <<LUA
local grpc = require("luaload.grpc")
local c = grpc.Client()
c:load({ "$T" }, "bad.proto")
function default() end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "bad proto: exit 107" "$RC" 107
expect_match "bad proto: the file and line" "$ERR" 'grpc.Client:load: bad.proto:2:'
S=$(script inloop.lua <<LUA
local grpc = require("luaload.grpc")
local c = grpc.Client()
function default() c:load({}, "echo.proto") end
LUA
)
run_ll run "$S" -i 1 -q
expect_match "load in a VU: raises" "$ERR" 'grpc.Client:load: only in init code'

# (e) a run cut mid-call: ends on time, the call cut
S=$(script cut.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$H" }, "echo.proto")
options = { scenarios = { cut = { executor = "constant-vus", vus = 2, duration = "500ms", gracefulStop = "0s" } } }
function default()
  client:connect("127.0.0.1:$plain_PORT", { plaintext = true })
  client:invoke("luaload.test.Echo/Say", { delay_ms = 5000 })
end
LUA
)
start=$(date +%s%N)
run_ll run "$S" -q
ms=$((($(date +%s%N) - start) / 1000000))
expect_eq "cut: exit 0" "$RC" 0
expect_cmp "cut: gracefulStop 0s cuts the calls, the run ends on time (${ms} ms)" "x < 3000" "$ms"
# (f) streams: server, client and bidirectional, on the VU's event loop
S=$(script streams.lua <<LUA
local grpc = require("luaload.grpc")
local ll = require("luaload")
local client = grpc.Client()
client:load({ "$H" }, "echo.proto")
options = { thresholds = { grpc_streams = { "count==10" } } }
function default()
  client:connect("127.0.0.1:$plain_PORT", { plaintext = true })
  local got = {}
  local s = grpc.Stream(client, "luaload.test.Echo/Count", { tags = { kind = "server" } })
  s:on("data", function(m, meta) got[#got + 1] = m.text .. "/" .. m.b .. (meta.ts > 0 and "" or "no ts") end)
  s:on("error", function(e) print("unexpected error", e.code, e.message) end)
  s:on("status", function(st) got[#got + 1] = "status " .. st.code end)
  s:on("end", function() print("server", __VU, table.concat(got, ",")) end)
  s:write({ text = "n", b = 3, delay_ms = 20 })
  s:end_stream()
  -- two bidirectional streams at once, a reply answered from its handler
  local peers = {}
  for k = 1, 2 do
    local c = grpc.Stream(client, "luaload.test.Echo/Chat")
    local said = {}
    c:on("data", function(m)
      said[#said + 1] = m.text
      peers[k] = m.metadata
      if m.b < 3 then c:write({ text = "again", b = m.b + 1 }) else c["end"](c) end
    end)
    c:on("end", function() print("chat", __VU, k, table.concat(said, ",")) end)
    c:write({ text = "first", b = 1 })
  end
  local u = grpc.Stream(client, "luaload.test.Echo/Sum")
  u:on("data", function(m) print("sum", __VU, m.text, m.b) end)
  for i = 1, 3 do u:write({ text = "t" .. i }) end
  u:endStream()
  print("write after end", pcall(u.write, u, { text = "x" }))
  local f = grpc.Stream(client, "luaload.test.Echo/Count")
  local ferr
  f:on("data", function(m) ferr = "data " .. m.text end)
  f:on("error", function(e) ferr = ferr .. "; error " .. e.code .. " " .. e.message end)
  f:on("end", function() print("failing", __VU, ferr) end)
  f:write({ text = "f", b = 1, fail_with = 9 })
  f:end_stream()
  timers = require("luaload.timers")
  timers.set_timeout(function() print("same connection", __VU, peers[1] ~= nil and peers[1] == peers[2]) end, 300)
  print("unary as a stream", pcall(grpc.Stream, client, "luaload.test.Echo/Say"))
  print("bad event", pcall(s.on, s, "nope", function() end))
end
LUA
)
run_ll run "$S" -u 2 -i 2 -q --summary-export "$T/s.json" -o json="$T/st.json"
expect_eq "streams: exit 0" "$RC" 0
expect_eq "streams: server streaming, its messages in order, then its status" "$(grep -c $'^server\t[12]\tn 0/0,n 1/1,n 2/2,status 0$' "$OUT")" 2
expect_eq "streams: bidirectional, answered from the data handler" "$(grep -c $'^chat\t[12]\t[12]\techo first,echo again,echo again$' "$OUT")" 4
expect_eq "streams: two at once share the VU's connection" "$(grep -c $'^same connection\t[12]\ttrue$' "$OUT")" 2
expect_eq "streams: client streaming" "$(grep -c $'^sum\t[12]\tt1+t2+t3\t3$' "$OUT")" 2
expect_match "streams: write after end_stream raises" "$OUT" $'^write after end\tfalse\t.*stream:write\\(\\): the stream is closed for writing'
expect_eq "streams: a status other than OK: the data, then error" "$(grep -c $'^failing\t[12]\tdata f 0; error 9 stream told to fail$' "$OUT")" 2
expect_match "streams: a unary method raises" "$OUT" $'^unary as a stream\tfalse\t.*luaload.test.Echo/Say is a unary method: use client:invoke'
expect_match "streams: an unknown event raises" "$OUT" $'^bad event\tfalse\t.*unknown event "nope"'
expect_eq "streams: grpc_streams" "$(cnt grpc_streams)" 10
expect_eq "streams: grpc_streams_msgs_sent" "$(cnt grpc_streams_msgs_sent)" 22
expect_eq "streams: grpc_streams_msgs_received" "$(cnt grpc_streams_msgs_received)" 22
expect_eq "streams: rpc_type tags" \
  "$(jq -r 'select(.metric == "grpc_req_duration" and .type == "Point") | .data.tags.rpc_type' "$T/st.json" | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd' ')" \
  "bidi_streaming=4 client_streaming=2 server_streaming=4"

# (g) a handler that raises fails the iteration with its line; a stream
# open at the end of the test is cut (nothing after, nothing leaked)
S=$(script stream_err.lua <<LUA
local grpc = require("luaload.grpc")
local client = grpc.Client()
client:load({ "$H" }, "echo.proto")
options = { scenarios = { cut = { executor = "per-vu-iterations", vus = 1, iterations = 2, maxDuration = "1s", gracefulStop = "0s" } } }
function default()
  client:connect("127.0.0.1:$plain_PORT", { plaintext = true })
  if __ITER == 0 then
    local s = grpc.Stream(client, "luaload.test.Echo/Count")
    s:on("data", function(m) error("bad message " .. m.text) end)
    s:write({ text = "e", b = 2 })
    s:end_stream()
  else
    local c = grpc.Stream(client, "luaload.test.Echo/Chat")
    c:on("data", function(m) print("open chat got", m.text) end)
    c:on("end", function() print("never: the end of a cut stream") end)
    c:write({ text = "stay", b = 1 })
  end
end
LUA
)
run_ll run "$S" -q
expect_eq "stream handler error: exit 0 (an iteration error)" "$RC" 0
expect_match "stream handler error: the script's line" "$ERR" 'stream_err.lua:9: bad message e 0'
expect_match "open stream: its message came" "$OUT" $'^open chat got\techo stay$'
if grep -q "never:" "$OUT"; then not_ok "open stream: cut at the end, no end handler"; else ok "open stream: cut at the end, no end handler"; fi
# (h) server reflection: no .proto loaded
S=$(script reflect.lua <<LUA
local grpc = require("luaload.grpc")
local v1, alpha, none = grpc.Client(), grpc.Client(), grpc.Client()
local CA = io.open("$CERTS/ca.pem"):read("*a")
function default()
  print("connect", v1:connect("127.0.0.1:$plain_PORT", { plaintext = true, reflect = true }))
  local r = v1:invoke("luaload.test.Echo/Say", { text = "reflected", at = "2024-01-02T03:04:05Z", color = "BLUE" })
  print("v1", r.status, r.message.text, r.message.at, r.message.color)
  alpha:connect("127.0.0.1:$alpha_PORT", { plaintext = true, reflect = true })
  local ar = alpha:invoke("luaload.test.Echo/Say", { text = "alpha", pad = 3000 })
  print("v1alpha", ar.message.text, ar.headers["grpc-encoding"][1], #ar.message.padding)
  print("none", pcall(none.connect, none, "127.0.0.1:$tls_PORT", { reflect = true, tls = { cacerts = { CA } } }))
  print("refused", pcall(none.connect, none, "127.0.0.1:1", { plaintext = true, reflect = true }))
  local m = grpc.Client()
  print("token", m:connect("127.0.0.1:$plain_PORT", { plaintext = true, reflect = true,
    reflect_metadata = { ["X-Reflect-Token"] = "ok" } }))
  print("camel", pcall(m.connect, m, "127.0.0.1:$plain_PORT", { plaintext = true, reflect = true,
    reflectMetadata = { ["x-reflect-token"] = "nope" } }))
  print("badmeta", pcall(m.connect, m, "127.0.0.1:$plain_PORT", { plaintext = true, reflect = true,
    reflect_metadata = { ["x-a"] = "line\nbreak" } }))
end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "reflection: exit 0" "$RC" 0
expect_match "reflection: connect returns true" "$OUT" $'^connect\ttrue$'
expect_match "reflection v1: a call with no .proto (imports and enums too)" "$OUT" $'^v1\t0\treflected\t2024-01-02T03:04:05Z\tBLUE$'
expect_match "reflection v1alpha: a server without v1 (gzip'd answers, a gzip'd call)" "$OUT" $'^v1alpha\talpha\tgzip\t4000$'
expect_match "reflection: a server without it raises, saying so" "$OUT" $'^none\tfalse\t.*grpc.Client:connect: server reflection: status 12 \\(Unimplemented\\)'
expect_match "reflection: no connection raises" "$OUT" $'^refused\tfalse\t.*server reflection: status 14 \\(Unavailable\\): .*connection refused'
expect_match "reflection: reflect_metadata sent (the server wants its token)" "$OUT" $'^token\ttrue$'
expect_match "reflection: reflectMetadata (camelCase) sent: a wrong token refused" "$OUT" $'^camel\tfalse\t.*server reflection: status 7 \\(PermissionDenied\\): bad token nope'
expect_match "reflection: bad reflect_metadata raises, naming the param" "$OUT" $'^badmeta\tfalse\t.*params.reflect_metadata: the value of x-a holds CR'
# (i) health_check (grpc.health.v1), k6's { status }
S=$(script health.lua <<LUA
local grpc = require("luaload.grpc")
local c = grpc.Client()
function default()
  c:connect("127.0.0.1:$plain_PORT", { plaintext = true })
  print("health", c:health_check().status, c:healthCheck("luaload.test.Echo").status == grpc.HealthCheckServing,
    c:health_check("down").status == grpc.HealthCheckNotServing)
  print("unknown", pcall(c.health_check, c, "nope"))
  c:connect("127.0.0.1:$alpha_PORT", { plaintext = true })
  print("no health", pcall(c.health_check, c))
end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "health_check: exit 0" "$RC" 0
expect_match "health_check: SERVING, NOT_SERVING as k6's constants" "$OUT" $'^health\t1\ttrue\ttrue$'
expect_match "health_check: an unknown service raises its status" "$OUT" $'^unknown\tfalse\t.*grpc.Client:health_check: status 5: unknown service nope'
expect_match "health_check: a server without it raises" "$OUT" $'^no health\tfalse\t.*grpc.Client:health_check: status 12'
# (j) a server that answers wrongly: each a response with a status, never a crash
mkfifo "$T/bad.in"
/usr/bin/python3 "$H/bad_server.py" <"$T/bad.in" >"$T/bad.port" 2>"$T/bad.err" &
EXTRA_PIDS+=($!)
exec {badfd}>"$T/bad.in"
for ((i = 0; i < 200; i++)); do [[ -s $T/bad.port ]] && break; sleep 0.05; done
BAD=127.0.0.1:$(head -1 "$T/bad.port")
S=$(script bad.lua <<LUA
local grpc = require("luaload.grpc")
local c = grpc.Client()
c:load({ "$H" }, "bad.proto")
function default()
  c:connect("$BAD", { plaintext = true })
  for _, m in ipairs({ "Cut", "Reset", "NoStatus", "Huge", "Garbage", "Html" }) do
    local r = c:invoke("luaload.bad.Bad/" .. m, { text = "x" })
    print(m, r.status, r.error and r.error.message, tostring(r.message))
  end
  local got = {}
  local s = grpc.Stream(c, "luaload.bad.Bad/Stream")
  s:on("data", function(m) got[#got + 1] = m.text end)
  s:on("error", function(e) got[#got + 1] = "error " .. e.code end)
  s:on("end", function() print("stream", table.concat(got, ",")) end)
  s:write({ text = "go" })
  s:end_stream()
  local gz = {}
  local z = grpc.Stream(c, "luaload.bad.Bad/GzipStream")
  z:on("data", function(m) gz[#gz + 1] = m.text end)
  z:on("error", function(e) gz[#gz + 1] = "error " .. e.code .. ": " .. e.message end)
  z:on("end", function() print("gzip", table.concat(gz, ",")) end)
  z:write({ text = "go" })
  z:end_stream()
end
LUA
)
run_ll run "$S" -i 1 -q -o json="$T/bad.json"
expect_eq "bad server: exit 0" "$RC" 0
expect_match "bad server: a message cut short is INTERNAL" "$OUT" $'^Cut\t13\tthe response ended inside a message.*\tnil$'
expect_match "bad server: a reset stream is UNAVAILABLE with the reset" "$OUT" $'^Reset\t14\t.*INTERNAL_ERROR.*\tnil$'
expect_match "bad server: no grpc-status is INTERNAL" "$OUT" $'^NoStatus\t13\tthe server sent no grpc-status\tnil$'
expect_match "bad server: a message over max_receive_size is RESOURCE_EXHAUSTED" "$OUT" $'^Huge\t8\t.*over max_receive_size.*\tnil$'
expect_match "bad server: bytes that are no message are INTERNAL" "$OUT" $'^Garbage\t13\t.*not a luaload.bad.Msg.*\tnil$'
expect_match "bad server: an HTML answer is INTERNAL" "$OUT" $'^Html\t13\t'
expect_match "bad server: a stream's good messages, then its error, then end" "$OUT" $'^stream\tone,two,error 13$'
expect_match "bad server: a gzip stream's messages inflated (each by its flag), no gzip INTERNAL" "$OUT" \
  $'^gzip\tzipped z{40},plain,error 13: a gzip-compressed message does not inflate'
expect_eq "bad server: every call counted, with its status" \
  "$(jq -r 'select(.metric == "grpc_req_duration" and .type == "Point") | .data.tags.status' "$T/bad.json" | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd' ')" \
  "13=6 14=1 8=1"
finish
