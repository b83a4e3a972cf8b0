#!/usr/bin/env bash
# Requests that do not wait (http.async_request, client:async_*): many in
# flight from one VU, each counted and timed as its own request; promises
# awaited (raising as the call would), their :next callbacks run as tasks;
# an iteration waits for a request nobody awaits; one cut at the end of
# the test is counted as cut off; luaload.await_all; over HTTP/2 to nginx,
# a multiplexing Client's async requests share one connection.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_serve
make_certs && start_nginx || exit 1

# (a) ten at once from one VU finish together
S=$(script ten.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local ps = {}
  for i = 1, 10 do ps[i] = http.async_request("GET", "$URL/delay/300", nil, { tags = { name = "slow" } }) end
  local rs = ll.await_all(ps)
  ll.check(rs, { ["ten 200s"] = function(t)
    for i = 1, 10 do if t[i].status ~= 200 then return false end end
    return #t == 10
  end })
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/a.json"
expect_eq "ten: exit 0" "$RC" 0
expect_eq "ten: 20 requests counted" "$(jqv "$T/a.json" .metrics.http_reqs.count)" 20
expect_eq "ten: all ten came back 200, in order (both iterations)" \
  "$(jqv "$T/a.json" '.root_group.checks["ten 200s"].passes')" 2
expect_cmp "ten: an iteration took about 300 ms, not 3 s (max < 1200 ms)" "x < 1200" \
  "$(jqv "$T/a.json" .metrics.iteration_duration.max)"
expect_cmp "ten: and at least the 300 ms" "x >= 295" "$(jqv "$T/a.json" .metrics.iteration_duration.min)"

# (b) a Client's async methods, :next and :await, throw
S=$(script client.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local dead = "http://127.0.0.1:$(free_port)/"
function default()
  local c = http.Client{}
  local got = {}
  local p = c:async_post("$URL/echo", "hello")
  p:next(function(r) got[#got + 1] = "next " .. r.status end)
  local r = p:await()
  ll.check(r, { ["await gives the Response"] = function(x) return x.status == 200 and x.body:find("hello", 1, true) end })
  local q = c:async_get(dead, { throw = true })
  q:next(nil, function(msg) got[#got + 1] = "rejected " .. tostring(msg:find("error_code", 1, true) ~= nil) end)
  local ok, err = pcall(q.await, q)
  ll.check(err, { ["await raises with throw"] = function(e) return not ok and tostring(e):find("error_code 1212", 1, true) end })
  local s = c:async_get(dead)
  local res = s:await()
  ll.check(res, { ["without throw: status 0 and an error"] = function(x) return x.status == 0 and x.error_code == 1212 end })
  local again = p:await()
  ll.check(again, { ["await again: the same"] = function(x) return x == r end })
  ll.sleep(0.05)
  ll.check(got, { ["next callbacks ran"] = function(g) return table.concat(g, ",") == "next 200,rejected true" end })
end
LUA
)
run_ll run "$S" -i 3 -q --summary-export "$T/b.json"
expect_eq "client: exit 0" "$RC" 0
for c in "await gives the Response" "await raises with throw" "without throw: status 0 and an error" \
  "await again: the same" "next callbacks ran"; do
  expect_eq "client: $c (3 of 3)" "$(jqv "$T/b.json" ".root_group.checks[\"$c\"].passes")" 3
done

# (c) nobody awaits: the iteration still waits for the request
S=$(script forget.lua <<LUA
local http = require("luaload.http")
function default()
  http.async_request("GET", "$URL/delay/300")
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/c.json"
expect_eq "forget: both requests counted" "$(jqv "$T/c.json" .metrics.http_reqs.count)" 2
expect_cmp "forget: the iteration lasted until its request came (min >= 295 ms)" "x >= 295" \
  "$(jqv "$T/c.json" .metrics.iteration_duration.min)"

# (d) in flight at the end of the test: cut, counted as cut off, on time
S=$(script cut.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "500ms", gracefulStop = "0s" } } }
function default()
  http.async_request("GET", "$URL/delay/5000")
end
LUA
)
run_ll run "$S" -q --summary-export "$T/d.json"
expect_eq "cut: exit 0" "$RC" 0
expect_cmp "cut: the run ends on time (< 3 s)" "x < 3" "$ELAPSED"
expect_eq "cut: the 2 requests count as failed" "$(jqv "$T/d.json" .metrics.http_req_failed.passes)" 2
expect_match "cut: told as cut off at the end" "$ERR" "cut off at the end of the test"

# (e) over HTTP/2 to a server we did not write (nginx): a multiplexing
# Client's async requests share one connection as streams; without
# multiplex each request in flight has a connection of its own (k6's model)
h2_case() { # NAME CLIENT_OPTS WANT_CONNECTIONS
  local f
  f=$(script "h2_$1.lua" <<EOF
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ tls = { ca = "$CERTS/ca.pem" }, $2 }
function default()
  local ps = {}
  for i = 1, 8 do ps[i] = c:async_get("https://127.0.0.1:$NGINX_HTTPS_PORT/") end
  for i, r in ipairs(ll.await_all(ps)) do
    if r.status ~= 200 or r.proto ~= "HTTP/2.0" then print("BAD", i, r.status, r.proto, r.error) end
  end
end
EOF
)
  run_ll run "$f" -u 1 -i 1 -w 1 -q --summary-export "$T/e.json" -o json="$T/e-o.json"
  expect_eq "$1: exit 0" "$RC" 0
  expect_eq "$1: 8 responses over HTTP/2, all 200" "$(grep -c '^BAD' "$OUT")/$(jqv "$T/e.json" .metrics.http_reqs.count)" "0/8"
  expect_eq "$1: $3 connection(s)" \
    "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_req_tls_handshaking" and .data.value > 0)] | length' "$T/e-o.json")" "$3"
}
h2_case "multiplexed" "multiplex = true, max_conns_per_host = 1" 1
h2_case "per request in flight" "" 8

# (f) a :next callback that fails ends the iteration: the ones after it
# never run, in this iteration or the next
S=$(script nextfail.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local metrics = require("luaload.metrics")
local second = metrics.Counter("second_ran")
function default()
  local p = http.async_request("GET", "$URL/")
  p:next(function() error("first fails") end)
  p:next(function() second:add(1) end)
  ll.sleep(0.3)
end
LUA
)
run_ll run "$S" -u 1 -i 3 -q --summary-export "$T/f.json"
expect_match "next fails: the error with its line" "$ERR" "nextfail.lua:7: first fails"
expect_eq "next fails: the callback after it never ran" "$(jqv "$T/f.json" '.metrics.second_ran.count // 0')" 0

# (g) mistakes
S=$(script init.lua <<LUA
local http = require("luaload.http")
http.async_request("GET", "$URL/")
function default() end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "init: exit 107" "$RC" 107
expect_match "init: a clear error" "$ERR" "not available in the init context"
S=$(script notp.lua <<'LUA'
local ll = require("luaload")
function default() ll.await_all({ 42 }) end
LUA
)
run_ll run "$S" -i 1 -q
expect_match "await_all: a non-promise named with its line" "$ERR" "notp.lua:2: await_all: entry 1 is not a promise \(number\)"
finish
