#!/usr/bin/env bash
# params.on_chunk: a response body handed to Lua as it arrives, decoded,
# instead of kept (the Response's body is then empty), over HTTP/1.1 and
# HTTP/2 from nginx (a server we did not write), compressed bodies decoded
# chunk by chunk, a stream of server-sent events from luaload serve seen
# event by event as the server paces it; an error in on_chunk stops the
# body and the call raises it with its line; on_chunk cannot wait (a clear
# error); async requests stream too; on_chunk returning false stops the
# body cleanly (a complete response, res.stopped) on each transport. Both transports run it (ctest's
# e2e.curl.* runs set LUALOAD_TRANSPORT=curl).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_serve
make_certs && start_nginx || exit 1
H=http://127.0.0.1:$NGINX_HTTP_PORT
S=https://127.0.0.1:$NGINX_HTTPS_PORT
PLAIN=$(wc -c <"$NGINX_WWW/plain.txt")

S1=$(script stream.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local h2 = http.Client{ tls = { ca = "$CERTS/ca.pem" }, http_version = "2" }
local h1 = http.Client{}
local function stream(client, url)
  local n, bytes, parts = 0, 0, {}
  local r = client:get(url, { on_chunk = function(b) n = n + 1; bytes = bytes + #b; parts[#parts + 1] = b end })
  return r, n, bytes, table.concat(parts)
end
function default()
  local plain = http.get("$H/plain").body
  local r, n, bytes, all = stream(h1, "$H/big")
  ll.check(r, { ["h1: 1 MiB streamed, nothing kept"] = function(x) return x.status == 200 and #x.body == 0 and bytes == 1048576 and n > 1 end })
  r, n, bytes, all = stream(h2, "$S/big")
  ll.check(r, { ["h2: 1 MiB streamed"] = function(x) return x.status == 200 and x.proto == "HTTP/2.0" and bytes == 1048576 end })
  r, n, bytes, all = stream(h1, "$H/gzip")
  ll.check(r, { ["gzip: decoded as it came"] = function(x) return x.status == 200 and all == plain and #plain == $PLAIN end })
  r, n, bytes, all = stream(h2, "$S/br")
  ll.check(r, { ["br over h2: decoded"] = function(x) return x.status == 200 and all == plain end })
  local times = {}
  r = http.get("$URL/sse?n=4&interval=100", { on_chunk = function(b) times[#times + 1] = b end })
  ll.check(times, { ["sse: each event as the server sent it"] = function(t) return #t == 4 and t[1]:find("id: 1", 1, true) and t[4]:find("id: 4", 1, true) end })
  local p = http.async_request("GET", "$H/big", nil, { on_chunk = function(b) bytes = bytes + #b end })
  bytes = 0
  ll.check(p:await(), { ["async: streamed too"] = function(x) return x.status == 200 and bytes == 1048576 end })
end
LUA
)
run_ll run "$S1" -i 2 -q --summary-export "$T/a.json"
expect_eq "stream: exit 0" "$RC" 0
for c in "h1: 1 MiB streamed, nothing kept" "h2: 1 MiB streamed" "gzip: decoded as it came" "br over h2: decoded" \
  "sse: each event as the server sent it" "async: streamed too"; do
  expect_eq "stream: $c (2 of 2)" "$(jqv "$T/a.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "stream: no script error" "$(noprogress "$ERR" | grep -c 'error')" 0

# on_chunk returning false stops the body cleanly: the response is a
# complete one (its status, headers and timings, res.stopped) and no failed
# request; HTTP/1.1 closes that connection (the next request on the same
# Client gets a fresh one, not the rest of the stream), HTTP/2 resets that
# stream alone (the connection carries the next request).
S3=$(script stop.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local h2 = http.Client{ tls = { ca = "$CERTS/ca.pem" }, http_version = "2" }
local h1 = http.Client{}
function default()
  local n = 0
  local r = h1:get("$URL/sse?n=1000&interval=20", { on_chunk = function(b) n = n + 1; if n == 3 then return false end end })
  ll.check(r, { ["h1 stop: a complete response"] = function(x) return x.status == 200 and x.stopped == true and n == 3 and x.error == "" and x.error_code == 0 and x.headers["Content-Type"] == "text/event-stream" and x.timings.receiving > 0 and x.timings.duration < 5000 end })
  r = h1:get("$URL/bytes/10")
  ll.check(r, { ["h1 stop: the next request has a connection of its own"] = function(x) return x.status == 200 and x.stopped == false end })
  n = 0
  r = h1:get("$H/big", { on_chunk = function(b) n = n + 1; return false end })
  ll.check(r, { ["h1 stop: a sized body too"] = function(x) return x.status == 200 and x.stopped == true and n == 1 end })
  r = h1:get("$H/plain")
  ll.check(r, { ["h1 stop: then a whole body"] = function(x) return x.status == 200 and #x.body == $PLAIN end })
  n = 0
  r = h2:get("$S/big", { on_chunk = function(b) n = n + 1; return false end })
  ll.check(r, { ["h2 stop: a complete response"] = function(x) return x.status == 200 and x.proto == "HTTP/2.0" and x.stopped == true and n == 1 and x.error_code == 0 end })
  r = h2:get("$S/plain")
  ll.check(r, { ["h2 stop: the connection carries on"] = function(x) return x.status == 200 and x.stopped == false and #x.body == $PLAIN end })
  n = 0
  r = h1:get("$H/gzip", { on_chunk = function(b) n = n + 1; return nil end })
  ll.check(r, { ["nil goes on"] = function(x) return x.status == 200 and x.stopped == false end })
end
LUA
)
run_ll run "$S3" -i 2 -q --summary-export "$T/c.json"
expect_eq "stop: exit 0" "$RC" 0
for c in "h1 stop: a complete response" "h1 stop: the next request has a connection of its own" \
  "h1 stop: a sized body too" "h1 stop: then a whole body" \
  "h2 stop: a complete response" "h2 stop: the connection carries on" "nil goes on"; do
  expect_eq "stop: $c (2 of 2)" "$(jqv "$T/c.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "stop: no failed request" "$(jqv "$T/c.json" '.metrics.http_req_failed.passes')" 0
expect_eq "stop: 14 requests" "$(jqv "$T/c.json" '.metrics.http_reqs.count')" 14

S2=$(script bad.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local ok, err = pcall(http.get, "$H/big", { on_chunk = function(b) error("chunk refused") end })
  ll.check(err, { ["an error in on_chunk raises from the call"] = function(e) return not ok and tostring(e):find("bad.lua:4: chunk refused", 1, true) end })
  ok, err = pcall(http.get, "$H/plain", { on_chunk = function(b) ll.sleep(0.1) end })
  ll.check(err, { ["on_chunk cannot wait"] = function(e) return not ok and tostring(e):find("sleep() cannot wait inside on_chunk", 1, true) end })
  ok, err = pcall(http.Request, "$H/plain", { on_chunk = function() end })
  ll.check(err, { ["not in a Request"] = function(e) return not ok and tostring(e):find("on_chunk goes in a call's params", 1, true) end })
  ok, err = pcall(http.get, "$H/plain", { on_chunk = 42 })
  ll.check(err, { ["a function is needed"] = function(e) return not ok and tostring(e):find("on_chunk must be a function, got number", 1, true) end })
end
LUA
)
run_ll run "$S2" -i 1 -q --summary-export "$T/b.json"
expect_eq "bad: exit 0" "$RC" 0
for c in "an error in on_chunk raises from the call" "on_chunk cannot wait" "not in a Request" "a function is needed"; do
  expect_eq "bad: $c" "$(jqv "$T/b.json" ".root_group.checks[\"$c\"].passes")" 1
done
finish
