#!/usr/bin/env bash
# luaload.websockets (k6/websockets, the browser-like WebSocket that does
# not block) against luaload serve's /ws/echo and /ws/send and Debian's
# python3-websockets (helpers/ws_peer.py, a peer nobody here wrote):
# several sockets in one VU (text, binary, both servers), ready_state,
# binary_type, on-handlers and listeners (also k6's camelCase), headers,
# cookies, subprotocols and permessage-deflate, wss:// with the Client's
# TLS options; k6's metrics and tags in the
# summary and the JSON output; a threshold on ws_session_duration; a 404
# handshake giving an error event and a counted session, not a script
# error; a failing handler failing the iteration with its line; send on a
# closed socket raising; the iteration waiting for its open sockets; a run
# cut at the end with sockets open (their sessions counted, with their
# duration; ASan finds no leak).
source "$(dirname "$0")/lib.sh"
start_serve
WSURL=ws://127.0.0.1:$PORT

mkfifo "$T/peer.in"
/usr/bin/python3 "$(dirname "$0")/helpers/ws_peer.py" <"$T/peer.in" >"$T/peer.port" 2>"$T/peer.err" &
EXTRA_PIDS+=($!)
exec 9>"$T/peer.in"
for ((i = 0; i < 100; i++)); do [[ -s $T/peer.port ]] && break; sleep 0.05; done
PEER=ws://127.0.0.1:$(head -1 "$T/peer.port")
[[ -s $T/peer.port ]] || { not_ok "ws_peer.py started" "$(cat "$T/peer.err")"; finish; exit 1; }

# points METRIC [CONDITION]: the samples of METRIC in $T/points.json (a -o
# json output) that meet the jq CONDITION on the sample
points() {
  jq -s "[.[] | select(.type == \"Point\" and .metric == \"$1\") | select(${2:-true})] | length" "$T/points.json"
}

# (a) three sockets at once in one VU: serve's echo (text then binary),
# the peer's echo (camelCase names, two listeners) and serve's stream
S=$(script many.lua <<LUA
local websockets = require("luaload.websockets")
local ll = require("luaload")
function default()
  local log, alog, states, closed = {}, {}, {}, 0
  local function add(s) log[#log + 1] = s end
  local function check() -- after the third close
    closed = closed + 1
    if closed < 3 then return end
    local l, st, al = table.concat(log, ","), table.concat(states, ","), table.concat(alog, ",")
    ll.check(l, {
      ["returned before any event"] = function() return l:find("^returned,") ~= nil end,
      ["serve text and binary echo"] = function() return al == "a-text:one,a-bin4:255" end,
      ["peer echo to both listeners in order"] = function() return l:find("b1:hello peer,b2:hello peer", 1, true) ~= nil end,
      ["peer close code, CLOSED, binary type kept"] = function() return l:find("b-close4000:3:arraybuffer", 1, true) ~= nil end,
      ["stream of 3"] = function() return l:find("c-got3", 1, true) ~= nil end,
      ["ready states"] = function() return st == "a0,open1,close1000/3" end,
    })
  end

  local a = websockets.WebSocket("$WSURL/ws/echo", nil, { tags = { side = "serve" } })
  states[#states + 1] = "a" .. a.ready_state
  a.onopen = function(e)
    states[#states + 1] = e.type .. a.ready_state
    a:send("one")
    a:send_binary("\0\1\2\255")
  end
  a.onmessage = function(e)
    -- a's own log: b's and c's events may come between its two messages
    if e.binary then alog[#alog + 1] = "a-bin" .. #e.data .. ":" .. e.data:byte(4); a:close()
    else alog[#alog + 1] = "a-text:" .. e.data end
  end
  a.onclose = function(e) states[#states + 1] = "close" .. e.code .. "/" .. a.ready_state; check() end

  local b = websockets.WebSocket("$PEER/echo", nil, { tags = { side = "peer" } })
  b.binaryType = "arraybuffer"
  b:addEventListener("open", function() b:send("hello peer") end)
  b:addEventListener("message", function(e) add("b1:" .. e.data) end)
  b:addEventListener("message", function(e) add("b2:" .. e.data); b:close(4000, "done") end)
  b.onclose = function(e) add("b-close" .. e.code .. ":" .. b.readyState .. ":" .. b.binaryType); check() end

  local c = websockets.WebSocket("$WSURL/ws/send?n=3&size=5&interval=20")
  local n = 0
  c.onmessage = function() n = n + 1 end
  c.onclose = function() add("c-got" .. n); check() end
  -- default() returns now: the iteration goes on until all three closed
  add("returned")
  ll.check(a, { ["connecting at first"] = function(s) return s.readyState == websockets.CONNECTING end })
end
LUA
)
run_ll run "$S" -u 1 -i 3 -q --summary-export "$T/s.json" -o "json=$T/points.json"
expect_eq "many: exit 0" "$RC" 0
for c in "returned before any event" "serve text and binary echo" "peer echo to both listeners in order" \
  "peer close code, CLOSED, binary type kept" "stream of 3" "ready states" "connecting at first"; do
  expect_eq "many: $c (3 of 3)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 3
done
expect_eq "many: ws_sessions" "$(cnt ws_sessions)" 9
expect_eq "many: ws_msgs_sent (a: 2, b: 1)" "$(cnt ws_msgs_sent)" 9
expect_eq "many: ws_msgs_received (a: 2, b: 1, c: 3)" "$(cnt ws_msgs_received)" 18
expect_eq "many: ws_session_duration of every session" "$(points ws_session_duration)" 9
expect_eq "many: ws_connecting of every session" "$(points ws_connecting)" 9
expect_cmp "many: data_sent counts the frames" "x > 9 * 150" "$(cnt data_sent)"
expect_eq "many: ws_sessions tagged side=peer, status 101, url" \
  "$(points ws_sessions '.data.tags.side == "peer" and .data.tags.status == "101" and (.data.tags.url | endswith("/echo"))')" 3
expect_eq "many: ws_msgs_received tagged side=serve" "$(points ws_msgs_received '.data.tags.side == "serve"')" 6
expect_eq "many: data_received of the sessions tagged" "$(points data_received '.data.tags.side == "serve"')" 3
expect_eq "many: ws_session_duration tagged, with the scenario" \
  "$(points ws_session_duration '.data.tags.side == "peer" and .data.tags.scenario == "default"')" 3

# (b) headers, cookies, subprotocols, permessage-deflate against the peer; the
# 101's Set-Cookie goes in the VU's jar; a 404 handshake is an error event,
# a close event and a counted session, not a script error
S=$(script headers.lua <<LUA
local websockets = require("luaload.websockets")
local ll = require("luaload")
function default()
  local got = {}
  local h = websockets.WebSocket("$PEER/headers", { "chat", "other" },
    { headers = { ["X-Test"] = "yes" }, cookies = { a = "1" }, compression = "deflate" })
  h.onmessage = function(e)
    got.first = e.data
    got.proto, got.ext = h.protocol, h.extensions
    h:close()
    local h2 = websockets.WebSocket("$PEER/headers")
    h2.onmessage = function(e2) got.second = e2.data; h2:close() end
  end
  local bad = websockets.WebSocket("$WSURL/status/404")
  bad.onerror = function(e) got.error, got.error_code = e.error, e.code end
  bad.onclose = function(e) got.bad_close, got.bad_state = e.code, bad.ready_state end
  bad.onopen = function() error("opened") end
  local timers = require("luaload.timers")
  timers.set_timeout(function()
    ll.check(got, {
      ["sent headers, cookie, subprotocol"] = function(g) return g.first == "cookie=a=1;x-test=yes;proto=chat" end,
      ["protocol chosen"] = function(g) return g.proto == "chat" end,
      ["permessage-deflate taken"] = function(g) return (g.ext or ""):find("permessage%-deflate") ~= nil end,
      ["jar keeps the 101's cookie"] = function(g) return g.second == "cookie=sid=abc;x-test=;proto=" end,
      ["404: error event"] = function(g) return (g.error or "") ~= "" and (g.error_code or 0) ~= 0 end,
      ["404: close event 1006, CLOSED"] = function(g) return g.bad_close == 1006 and g.bad_state == 3 end,
    })
  end, 400)
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/s.json" -o "json=$T/points.json"
expect_eq "headers: exit 0" "$RC" 0
for c in "sent headers, cookie, subprotocol" "protocol chosen" "permessage-deflate taken" \
  "jar keeps the 101's cookie" "404: error event" "404: close event 1006, CLOSED"; do
  expect_eq "headers: $c (2 of 2)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "headers: the 404s are counted sessions" "$(points ws_sessions '.data.tags.status == "404"')" 2
expect_eq "headers: sessions with subproto=chat" "$(points ws_sessions '.data.tags.subproto == "chat"')" 2
expect_eq "headers: no script error" "$(noprogress "$ERR" | grep -c 'error')" 0

# (b2) wss:// against the peer over TLS: with a Client trusting the test CA
# it opens; without (the default verifies) it is an error event, counted
source "$(dirname "$0")/servers.sh"
CERTS=$T/certs
make_certs || exit 1
mkfifo "$T/tls.in"
/usr/bin/python3 "$(dirname "$0")/helpers/ws_peer.py" --tls "$CERTS/server.pem" "$CERTS/server.key" \
  <"$T/tls.in" >"$T/tls.port" 2>"$T/tls.err" &
EXTRA_PIDS+=($!)
exec 8>"$T/tls.in"
for ((i = 0; i < 100; i++)); do [[ -s $T/tls.port ]] && break; sleep 0.05; done
TLSPEER=wss://127.0.0.1:$(head -1 "$T/tls.port")
S=$(script tls.lua <<LUA
local websockets = require("luaload.websockets")
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{ tls = { ca = "$CERTS/ca.pem" } }
function default()
  local got = {}
  local s = websockets.WebSocket("$TLSPEER/echo", nil, { client = client })
  s.onopen = function() s:send("over tls") end
  s.onmessage = function(e) got.echo = e.data; s:close() end
  local bad = websockets.WebSocket("$TLSPEER/echo")
  bad.onerror = function(e) got.error = e.error end
  bad.onclose = function(e)
    got.code = e.code
    ll.check(got, { ["untrusted: error event, close 1006"] = function(g) return (g.error or "") ~= "" and g.code == 1006 end })
  end
  s.onclose = function()
    ll.check(got, { ["wss echo with the Client's CA"] = function(g) return g.echo == "over tls" end })
  end
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/s.json" -o "json=$T/points.json"
expect_eq "tls: exit 0" "$RC" 0
for c in "wss echo with the Client's CA" "untrusted: error event, close 1006"; do
  expect_eq "tls: $c (2 of 2)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "tls: the refused sessions counted, status 0" "$(points ws_sessions '.data.tags.status == "0"')" 2

# (c) thresholds on ws_session_duration and a sub-metric by status
S=$(script thresholds.lua <<LUA
local websockets = require("luaload.websockets")
local timers = require("luaload.timers")
options = { thresholds = {
  ws_session_duration = { "max < " .. __ENV.MAX },
  ["ws_sessions{status:101}"] = { "count == 2" },
} }
function default()
  local s = websockets.WebSocket("$WSURL/ws/echo")
  s.onopen = function() timers.set_timeout(function() s:close() end, 100) end
end
LUA
)
run_ll run "$S" -i 2 -q -e MAX=5000
expect_eq "thresholds: passed, exit 0" "$RC" 0
run_ll run "$S" -i 2 -q -e MAX=50
expect_eq "thresholds: ws_session_duration max < 50 crossed, exit 99" "$RC" 99
expect_match "thresholds: named in the summary" "$OUT" "ws_session_duration"

# (d) the iteration waits for its sockets: default() returns at once, the
# socket closes after its 3rd message 100 ms apart
S=$(script wait.lua <<LUA
local websockets = require("luaload.websockets")
function default()
  local s = websockets.WebSocket("$WSURL/ws/send?n=3&size=5&interval=100")
  local n = 0
  s:add_event_listener("message", function() n = n + 1; if n == 3 then s:close() end end)
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/s.json"
expect_eq "wait: exit 0" "$RC" 0
expect_cmp "wait: each iteration lasts until its socket closed (>= 190 ms)" "x >= 190" \
  "$(jqv "$T/s.json" .metrics.iteration_duration.min)"
expect_eq "wait: 6 messages" "$(cnt ws_msgs_received)" 6

# (e) a handler's error fails the iteration with its line; the other socket
# of the iteration is cancelled with it
S=$(script fail.lua <<LUA
local websockets = require("luaload.websockets")
function default()
  local other = websockets.WebSocket("$WSURL/ws/send?n=100000&size=5&interval=50")
  other.onopen = function()
    local s = websockets.WebSocket("$WSURL/ws/echo")
    s.onopen = function() s:send("x") end
    s.onmessage = function() error("boom in handler") end
  end
end
LUA
)
run_ll run "$S" -i 2 -q -o "json=$T/points.json"
expect_match "fail: the handler's error is reported with its line" "$ERR" "fail.lua:7: boom in handler"
expect_cmp "fail: and ends the iteration at once (< 2 s)" "x < 2" "$ELAPSED"
expect_eq "fail: both sessions of each iteration recorded their duration" \
  "$(points ws_session_duration)" 4
expect_eq "fail: exit 0 (script errors do not change it; no sanitizer report)" "$RC" 0

# (f) an error in the error handler of a failed open (the 404's): the
# iteration fails there, its close handler never runs, the next iteration
# starts clean; close() while connecting abandons the open (error, close)
S=$(script fail_open.lua <<LUA
local websockets = require("luaload.websockets")
local ll = require("luaload")
function default()
  local early = websockets.WebSocket("$WSURL/ws/echo")
  early.onclose = function(e) ll.check(e, { ["closed while connecting: 1006"] = function() return e.code == 1006 end }) end
  early:close()
  local bad = websockets.WebSocket("$WSURL/status/404")
  bad.onerror = function() error("error handler failed") end
  bad.onclose = function() print("NOT REACHED") end
end
LUA
)
run_ll run "$S" -i 3 -q --summary-export "$T/s.json"
expect_eq "fail open: exit 0" "$RC" 0
expect_match "fail open: the error handler's error with its line" "$ERR" "script error in 3 iterations: .*fail_open.lua:8: error handler failed"
expect_eq "fail open: its close handler never ran" "$(grep -c 'NOT REACHED' "$OUT")" 0
expect_eq "fail open: close() while connecting gives a close event (3 of 3)" \
  "$(jqv "$T/s.json" '.root_group.checks["closed while connecting: 1006"].passes')" 3

# (g) send on a socket that is not open raises; so do bad arguments
S=$(script raises.lua <<LUA
local websockets = require("luaload.websockets")
local ll = require("luaload")
function default()
  local function err(f) local ok, e = pcall(f); return ok and "no error" or tostring(e) end
  local s = websockets.WebSocket("$WSURL/ws/echo")
  local r = {}
  r.connecting = err(function() s:send("early") end)
  r.binary_type = err(function() s.binary_type = "text" end)
  r.read_only = err(function() s.ready_state = 1 end)
  r.handler = err(function() s.onopen = 42 end)
  r.event = err(function() s:add_event_listener("nope", function() end) end)
  r.url = err(function() websockets.WebSocket("http://127.0.0.1:1/") end)
  r.tags = err(function() websockets.WebSocket("$WSURL/ws/echo", nil, { tags = "x" }) end)
  s.onopen = function() s:close() end
  s.onclose = function()
    r.closed = err(function() s:send("late") end)
    r.closed_ping = err(function() s:ping() end)
    r.close_again = err(function() s:close() end)
    ll.check(r, {
      ["send while connecting raises"] = function() return r.connecting:find("WebSocket:send(): the socket is not open", 1, true) ~= nil end,
      ["send after close raises"] = function() return r.closed:find("WebSocket:send(): the socket is not open", 1, true) ~= nil end,
      ["ping after close raises"] = function() return r.closed_ping:find("not open", 1, true) ~= nil end,
      ["close again is nothing"] = function() return r.close_again == "no error" end,
      ["binary_type validated"] = function() return r.binary_type:find('expected "blob" or "arraybuffer"', 1, true) ~= nil end,
      ["ready_state read-only"] = function() return r.read_only:find("cannot be set", 1, true) ~= nil end,
      ["handler must be a function"] = function() return r.handler:find("expected a function", 1, true) ~= nil end,
      ["unknown event"] = function() return r.event:find('unknown event "nope"', 1, true) ~= nil end,
      ["http url raises"] = function() return r.url:find("websockets.WebSocket(): ", 1, true) ~= nil end,
      ["tags must be a table"] = function() return r.tags:find("params.tags must be a table", 1, true) ~= nil end,
    })
  end
end
LUA
)
run_ll run "$S" -i 1 -q --summary-export "$T/s.json"
expect_eq "raises: exit 0" "$RC" 0
for c in "send while connecting raises" "send after close raises" "ping after close raises" "close again is nothing" \
  "binary_type validated" "ready_state read-only" "handler must be a function" "unknown event" "http url raises" \
  "tags must be a table"; do
  expect_eq "raises: $c" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 1
done
S=$(script init.lua <<'LUA'
local websockets = require("luaload.websockets")
websockets.WebSocket("ws://127.0.0.1:1/")
function default() end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "init context: exit 107" "$RC" 107
expect_match "init context: a clear error" "$ERR" "websockets.WebSocket\(\) is not available in the init context"

# (h) sockets that never close are cut at the end of the test, on time,
# each session counted with its duration; ping and pong meanwhile
S=$(script cut.lua <<LUA
local websockets = require("luaload.websockets")
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "500ms", gracefulStop = "200ms" } } }
function default()
  for i = 1, 3 do
    local s = websockets.WebSocket("$WSURL/ws/send?n=100000&size=10&interval=20")
    s.onopen = function() s:ping() end
    s.onmessage = function() end
  end
end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json" -o "json=$T/points.json"
expect_eq "cut: exit 0" "$RC" 0
expect_cmp "cut: the run ends on time (< 3 s)" "x < 3" "$ELAPSED"
expect_match "cut: the iterations are cut at the end" "$ERR" "2 iterations still running at the end were interrupted"
expect_eq "cut: 6 sessions" "$(cnt ws_sessions)" 6
expect_eq "cut: each cut session recorded its duration" "$(points ws_session_duration)" 6
expect_cmp "cut: the cut sessions lasted the test (>= 500 ms)" "x >= 500" "$(jqv "$T/s.json" .metrics.ws_session_duration.min)"
expect_cmp "cut: messages came meanwhile" "x > 60" "$(cnt ws_msgs_received)"
expect_eq "cut: ws_ping timed ping to pong" "$(points ws_ping)" 6
finish
