#!/usr/bin/env bash
# luaload.ws (k6/ws) against two servers: Debian's python3-websockets
# (helpers/ws_peer.py, a peer nobody here wrote) and luaload serve's
# /ws/echo and /ws/send. Text and binary echo with the counts of
# ws_msgs_sent, ws_msgs_received and ws_sessions; a handler that makes an
# HTTP request; socket:set_timeout closing the socket; close codes both
# ways; headers, cookies (params and the VU's jar) and a subprotocol; a 403
# handshake counted as a failed session with its status, not a script
# error; send on a closed socket raising; thresholds on ws_session_duration;
# a run cut mid-session ending on time.
source "$(dirname "$0")/lib.sh"
start_serve
WSURL=ws://127.0.0.1:$PORT

# the third-party peer: its port on stdout's first line; it stops when its
# stdin (a fifo held open by this shell) closes, or on SIGTERM
mkfifo "$T/peer.in"
/usr/bin/python3 "$(dirname "$0")/helpers/ws_peer.py" <"$T/peer.in" >"$T/peer.port" 2>"$T/peer.err" &
EXTRA_PIDS+=($!)
exec 9>"$T/peer.in"
for ((i = 0; i < 100; i++)); do [[ -s $T/peer.port ]] && break; sleep 0.05; done
PEER=ws://127.0.0.1:$(head -1 "$T/peer.port")
[[ -s $T/peer.port ]] || { not_ok "ws_peer.py started" "$(cat "$T/peer.err")"; finish; exit 1; }

# (a) echo, text and binary, on both servers; a handler's HTTP request
for target in "peer $PEER/echo" "serve $WSURL/ws/echo"; do
  name=${target%% *} url=${target#* }
  S=$(script "echo_$name.lua" <<LUA
local ws = require("luaload.ws")
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local got, status, code = {}, nil, nil
  local res = ws.connect("$url", { tags = { side = "$name" } }, function(socket)
    socket:on("open", function()
      socket:send("one")
      socket:send("two")
      socket:sendBinary("\0\1\2\255")
    end)
    socket:on("message", function(m)
      got[#got + 1] = m
      if m == "two" then status = http.get("$URL/delay/20").status end
    end)
    socket:on("binary_message", function(b)
      got[#got + 1] = "bin" .. #b .. ":" .. b:byte(4)
      socket:setTimeout(function() socket:close() end, 60)
    end)
    socket:on("close", function(c) code = c end)
  end)
  ll.check(res, {
    ["status 101"] = function(r) return r.status == 101 end,
    ["echoed"] = function() return table.concat(got, ",") == "one,two,bin4:255" end,
    ["handler request"] = function() return status == 200 end,
    ["close code"] = function() return code == 1000 end,
  })
end
LUA
)
  run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/s.json"
  expect_eq "echo $name: exit 0" "$RC" 0
  for c in "status 101" "echoed" "handler request" "close code"; do
    expect_eq "echo $name: $c (6 of 6)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 6
  done
  expect_eq "echo $name: ws_sessions" "$(cnt ws_sessions)" 6
  expect_eq "echo $name: ws_msgs_sent" "$(cnt ws_msgs_sent)" 18
  expect_eq "echo $name: ws_msgs_received" "$(cnt ws_msgs_received)" 18
  expect_eq "echo $name: the handlers' requests" "$(cnt http_reqs)" 6
  expect_cmp "echo $name: data_sent counts the frames" "x > 6 * 150" "$(cnt data_sent)"
  expect_cmp "echo $name: ws_session_duration lasts to the close (>= 60 ms)" "x >= 60" \
    "$(jqv "$T/s.json" .metrics.ws_session_duration.min)"
done

# (b) the set_timeout closes a stream that would run 100 s; close code
# sent and received; ping and pong; send on the closed socket raises
S=$(script close.lua <<LUA
local ws = require("luaload.ws")
local ll = require("luaload")
function default()
  local n, code, reason, pongs, sock = 0, nil, nil, 0, nil
  local r = ws.connect("$WSURL/ws/send?n=1000&size=10&interval=100", nil, function(socket)
    sock = socket
    socket:on("open", function() socket:ping() end)
    socket:on("pong", function() pongs = pongs + 1 end)
    socket:on("message", function() n = n + 1 end)
    socket:set_timeout(function() socket:close(4000) end, 250)
  end)
  local ok, err = pcall(function() sock:send("late") end)
  local peer = ws.connect("$PEER/close", function(socket)
    socket:on("close", function(c, why) code, reason = c, why end)
  end)
  ll.check(r, {
    ["closed by the timeout"] = function() return n >= 1 and n <= 4 end,
    ["pong"] = function() return pongs == 1 end,
    ["send on closed raises"] = function() return not ok and tostring(err):find("not open", 1, true) ~= nil end,
    ["server close code and reason"] = function() return code == 4001 and reason == "bye" end,
  })
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/s.json"
expect_eq "close: exit 0" "$RC" 0
for c in "closed by the timeout" "pong" "send on closed raises" "server close code and reason"; do
  expect_eq "close: $c (2 of 2)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_cmp "close: the session lasted the timeout (~250 ms)" "x >= 240 && x < 1000" \
  "$(jqv "$T/s.json" .metrics.ws_session_duration.max)"
expect_eq "close: ws_ping sampled" "$(jqv "$T/s.json" '.metrics.ws_ping.max > 0')" true

# (c) headers, cookies, subprotocol; the 101's Set-Cookie goes in the jar;
# a 403 is a counted session with its status, not a script error
S=$(script headers.lua <<LUA
local ws = require("luaload.ws")
local ll = require("luaload")
function default()
  local function ask(params)
    local got
    local r = ws.connect("$PEER/headers", params, function(socket)
      socket:on("message", function(m) got = m; socket:close() end)
    end)
    return r, got
  end
  local r1, first = ask({ headers = { ["X-Test"] = "yes", ["Sec-WebSocket-Protocol"] = "chat" },
                          cookies = { a = "1" } })
  local _, second = ask({})
  local bad = ws.connect("$PEER/forbidden", {}, function(socket) socket:on("open", function() error("opened") end) end)
  ll.check(first, {
    ["sent headers, cookie, subprotocol"] = function(x) return x == "cookie=a=1;x-test=yes;proto=chat" end,
    ["jar keeps the 101's cookie"] = function() return second == "cookie=sid=abc;x-test=;proto=" end,
    ["101 headers"] = function() return r1.headers["Set-Cookie"] == "sid=abc; Path=/" end,
    ["403 status"] = function() return bad.status == 403 and bad.headers["X-Why"] == "nope" end,
    ["403 error"] = function() return bad.error ~= "" and bad.error_code ~= 0 end,
  })
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/s.json"
expect_eq "headers: exit 0" "$RC" 0
for c in "sent headers, cookie, subprotocol" "jar keeps the 101's cookie" "101 headers" "403 status" "403 error"; do
  expect_eq "headers: $c (2 of 2)" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "headers: the 403s are counted sessions" "$(cnt ws_sessions)" 6
expect_eq "headers: no script error" "$(noprogress "$ERR" | grep -c 'error')" 0

# (d) thresholds on ws_session_duration (and a sub-metric by status)
S=$(script thresholds.lua <<LUA
local ws = require("luaload.ws")
options = { thresholds = {
  ws_session_duration = { "max < " .. __ENV.MAX },
  ["ws_sessions{status:101}"] = { "count == 2" },
} }
function default()
  ws.connect("$WSURL/ws/echo", function(socket)
    socket:on("open", function() socket:set_timeout(function() socket:close() end, 100) end)
  end)
end
LUA
)
run_ll run "$S" -i 2 -q -e MAX=5000
expect_eq "thresholds: passed, exit 0" "$RC" 0
run_ll run "$S" -i 2 -q -e MAX=50
expect_eq "thresholds: ws_session_duration max < 50 crossed, exit 99" "$RC" 99
expect_match "thresholds: named in the summary" "$OUT" "ws_session_duration"

# (e) sessions that never end are cut at the end of the test, on time,
# their duration recorded
S=$(script cut.lua <<LUA
local ws = require("luaload.ws")
options = { scenarios = { s = { executor = "constant-vus", vus = 3, duration = "500ms", gracefulStop = "200ms" } } }
function default()
  ws.connect("$WSURL/ws/send?n=100000&size=10&interval=20", function(socket)
    socket:on("message", function() end)
    socket:set_interval(function() socket:ping() end, 50)
  end)
  print("NOT REACHED")
end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json" -o "json=$T/points.json"
expect_eq "cut: exit 0" "$RC" 0
expect_cmp "cut: the run ends on time (< 3 s)" "x < 3" "$ELAPSED"
expect_match "cut: the iterations are cut at the end" "$ERR" "3 iterations still running at the end were interrupted"
expect_eq "cut: connect never returned" "$(grep -c 'NOT REACHED' "$OUT" "$ERR" | awk -F: '{ s += $2 } END { print s }')" 0
expect_cmp "cut: messages came meanwhile" "x > 30" "$(cnt ws_msgs_received)"
# a session cut at the end still records its duration (and its bytes)
expect_eq "cut: each cut session recorded ws_session_duration" \
  "$(jq -s '[.[] | select(.type == "Point" and .metric == "ws_session_duration" and .data.value >= 500)] | length' "$T/points.json")" 3
expect_eq "cut: and its data_received" \
  "$(jq -s '[.[] | select(.type == "Point" and .metric == "data_received" and (.data.tags.url | endswith("interval=20")))] | length' "$T/points.json")" 3

# (f) a handler's error fails the iteration with its line
S=$(script fail.lua <<LUA
local ws = require("luaload.ws")
function default()
  ws.connect("$WSURL/ws/echo", function(socket)
    socket:on("open", function() socket:send("x") end)
    socket:on("message", function() error("boom in handler") end)
  end)
end
LUA
)
run_ll run "$S" -i 2 -q
expect_match "fail: the handler's error is reported with its line" "$ERR" "fail.lua:5: boom in handler"
expect_cmp "fail: and ends the session at once (< 2 s)" "x < 2" "$ELAPSED"

# (g) an error in the close handler, the session's last event: the next
# iteration starts at once on the same VU, and nothing of the failed
# session is touched after (ASan)
S=$(script close_fail.lua <<LUA
local ws = require("luaload.ws")
function default()
  ws.connect("$WSURL/ws/echo", function(socket)
    socket:on("open", function() socket:set_timeout(function() socket:close() end, 20) end)
    socket:on("close", function() error("close handler failed") end)
  end)
  print("NOT REACHED")
end
LUA
)
run_ll run "$S" -i 3 -q
expect_eq "close fail: exit 0" "$RC" 0
expect_match "close fail: the close handler's error with its line" "$ERR" "script error in 3 iterations: .*close_fail.lua:5: close handler failed"
expect_eq "close fail: connect did not return" "$(grep -c 'NOT REACHED' "$OUT" "$ERR" | awk -F: '{ s += $2 } END { print s }')" 0
# (h) bad input raises a clear error naming the call and what was expected
S=$(script bad.lua <<LUA
local ws = require("luaload.ws")
local ll = require("luaload")
function default()
  local function err(f) local ok, e = pcall(f); return ok and "no error" or tostring(e) end
  local e1 = err(function() ws.connect("$WSURL/ws/echo", { tags = "x" }, function() end) end)
  local e2 = err(function() ws.connect("$WSURL/ws/echo", function(s) s:on("nope", function() end) end) end)
  local e3 = err(function() ws.connect("http://127.0.0.1:1/", function() end) end)
  ll.check(e1, { ["tags"] = function(e) return e:find("params.tags must be a table", 1, true) ~= nil end })
  ll.check(e2, { ["event"] = function(e) return e:find('unknown event "nope"', 1, true) ~= nil end })
  ll.check(e3, { ["url"] = function(e) return e:find("ws.connect(): ", 1, true) ~= nil and e:find("ws://", 1, true) ~= nil end })
  -- raised in a handler: fails the iteration
  ws.connect("$WSURL/ws/echo", function(s) s:set_timeout(function() s:close(999) end, 10) end)
end
LUA
)
run_ll run "$S" -i 1 -q --summary-export "$T/s.json"
for c in tags event url; do
  expect_eq "bad: $c raises a clear error" "$(jqv "$T/s.json" ".root_group.checks[\"$c\"].passes")" 1
done
expect_match "bad: close code 999 raises in the timer's handler" "$ERR" "close code 999 is not allowed"
finish
