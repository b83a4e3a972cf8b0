#!/usr/bin/env bash
# luaload serve --echo-header: per-name requests, distinct values and
# missing in /stats and the exit line; --echo-header-limit's estimate; the
# methods, connections and reused counts; bad names.
source "$(dirname "$0")/lib.sh"

# stats FILTER: a jq filter on GET /stats
stats() { curl -s "$URL/stats" -H 'X-Token: from-stats' | jq -c -r "$1"; }

# restart [serve flags...]: stops the running server and starts another
restart() {
  stop_pid "$SERVE_PID"
  SERVE_PID=
  start_serve "$@"
}

# ---- curl: distinct, repeated and missing values ----
start_serve --echo-header X-Token --echo-header authorization
expect_eq "no requests yet: headers listed" "$(stats '.headers | keys_unsorted | join(",")')" "x-token,authorization"
expect_eq "no requests yet: zeros" "$(stats '.headers["x-token"] | "\(.requests) \(.distinct) \(.missing) \(.distinct_exact)"')" \
  "0 0 0 true"
for i in $(seq 10); do curl -s -o /dev/null -H "X-Token: t$i" "$URL/"; done
for i in 1 2 3; do curl -s -o /dev/null -H "x-TOKEN: t1" "$URL/status/204"; done  # repeats, any case
curl -s -o /dev/null -H "X-Token: t2" -H "X-Token: t99" "$URL/"                  # the first line counts
for i in 1 2 3 4; do curl -s -o /dev/null "$URL/bytes/3"; done                    # missing
expect_eq "x-token requests" "$(stats '.headers["x-token"].requests')" 14
expect_eq "x-token distinct (repeats and a second line not new)" "$(stats '.headers["x-token"].distinct')" 10
expect_eq "x-token missing" "$(stats '.headers["x-token"].missing')" 4
expect_eq "x-token exact" "$(stats '.headers["x-token"].distinct_exact')" true
expect_eq "authorization: all missing" "$(stats '.headers.authorization | "\(.requests) \(.distinct) \(.missing)"')" "0 0 18"
expect_eq "requests + missing = counted requests" "$(stats '(.headers["x-token"] | .requests + .missing) == .requests')" true
expect_eq "/stats itself not counted" "$(stats '.headers["x-token"].requests')" 14
curl -s -o /dev/null -H "X-Token;" "$URL/"                                       # curl's empty value
expect_eq "an empty value is a value" "$(stats '.headers["x-token"] | "\(.requests) \(.distinct)"')" "15 11"

# ---- methods, connections, reused ----
restart
curl -s -o /dev/null -o /dev/null -o /dev/null "$URL/" "$URL/" "$URL/"  # one connection, 3 requests
curl -s -o /dev/null -d x "$URL/echo"
curl -s -o /dev/null -X PUT -d x "$URL/echo"
curl -s -o /dev/null -X DELETE "$URL/"
curl -s -o /dev/null -I "$URL/"
curl -s -o /dev/null -X PATCH "$URL/"
curl -s -o /dev/null -X FROB "$URL/"
expect_eq "methods" "$(stats .methods)" '{"GET":3,"HEAD":1,"POST":1,"PUT":1,"DELETE":1,"PATCH":1,"other":1}'
expect_eq "reused: requests after a connection's first" "$(stats .reused)" 2
expect_eq "connections: accepted, /stats' included" "$(stats .connections)" 10
expect_eq "headers: {} without --echo-header" "$(stats .headers)" '{}'
expect_eq "the old fields stay" "$(stats '[.requests, .routes.default, .routes.echo, (.faults | length)] | join(" ")')" "9 7 2 0"
curl -s -o /dev/null -o /dev/null -H 'Connection: close' "$URL/" "$URL/"
expect_eq "Connection: close: no reuse" "$(stats '"\(.reused) \(.connections)"')" "2 15"

# ---- luaload run: a unique token per iteration, two server threads ----
restart --threads 2 --echo-header Authorization
S=$(script uniq.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
function default()
  http.get("$URL/", { headers = { Authorization = "Bearer tok-" .. exec.scenario.iteration_in_test } })
end
LUA
)
run_ll run "$S" -u 8 -i 3000 -q
expect_eq "run: exit 0" "$RC" 0
expect_eq "run: requests = iterations" "$(stats '.headers.authorization.requests')" 3000
expect_eq "run: distinct = iterations" "$(stats '.headers.authorization.distinct')" 3000
expect_eq "run: none missing, exact" "$(stats '.headers.authorization | "\(.missing) \(.distinct_exact)"')" "0 true"
expect_eq "run: keep-alive reuse" "$(stats '.reused >= 2990')" true
S=$(script same.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/", { headers = { Authorization = "Bearer same" } }) end
LUA
)
run_ll run "$S" -u 4 -i 500 -q
expect_eq "run: one value more" "$(stats '.headers.authorization | "\(.requests) \(.distinct)"')" "3500 3001"
kill -INT "$SERVE_PID"
wait "$SERVE_PID"
expect_eq "SIGINT: exit 0" "$?" 0
SERVE_PID=
expect_match "exit line: headers" "$T/serve.out" \
  '^luaload serve: stats \{.*"methods":\{"GET":3500\},"connections":[0-9]+,"reused":[0-9]+,"websocket":\{"sessions":0,"messages_received":0,"messages_sent":0\},"sse":\{"streams":0,"events":0\},"http2":\{"connections":0,"streams":0\},"grpc":\{"messages_received":0,"messages_sent":0\},"headers":\{"authorization":\{"requests":3500,"distinct":3001,"missing":0,"distinct_exact":true\}\}\}$'

# ---- past --echo-header-limit: an estimate ----
start_serve --echo-header x-token --echo-header-limit 100
# many.lua: 4000 requests, 2000 values, each twice
many() {
  script many.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
function default() http.get("$URL/", { headers = { ["X-Token"] = "v" .. exec.scenario.iteration_in_test % 2000 } }) end
LUA
}
S=$(many)
run_ll run "$S" -u 4 -i 4000 -q
expect_eq "limit: requests exact" "$(stats '.headers["x-token"].requests')" 4000
expect_eq "limit: distinct_exact false" "$(stats '.headers["x-token"].distinct_exact')" false
expect_cmp "limit: distinct about 2000" "x >= 1960 && x <= 2040" "$(stats '.headers["x-token"].distinct')"
restart --echo-header x-token --echo-header-limit 2000
S=$(many)
run_ll run "$S" -u 4 -i 4000 -q
expect_eq "limit reached, not passed: exact" "$(stats '.headers["x-token"] | "\(.distinct) \(.distinct_exact)"')" "2000 true"

# ---- bad flags: one line, exit 104 ----
bad() {
  "$LUALOAD" serve --port 0 "$@" >"$T/o" 2>"$T/e"
  local rc=$?
  expect_eq "$* : exit 104" "$rc" 104
  expect_eq "$* : one line" "$(wc -l <"$T/e")" 1
  expect_match "$* : names the flag" "$T/e" "^luaload serve: --echo-header"
}
bad --echo-header ''
bad --echo-header=
bad --echo-header 'X Token'
bad --echo-header 'x-token:'
bad --echo-header 'caf€'
bad --echo-header "$(printf 'a%.0s' $(seq 200))"
bad --echo-header a --echo-header A
bad $(for i in 1 2 3 4 5 6 7 8 9; do echo --echo-header h$i; done)
bad --echo-header
bad --echo-header-limit -1
bad --echo-header-limit 1000000001
finish
