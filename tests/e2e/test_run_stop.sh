#!/usr/bin/env bash
# What a run says when it stops with work in flight (issue 37): a Ctrl-C
# while requests wait cuts them within the signal's budget, says it was
# interrupted and what the cut iterations were doing; a TLS client against
# a plain-HTTP port fails each request at once with k6's 1300, and against
# a port that never answers says the requests hung in their handshake;
# requests that fail in setup() are told before the script's own error;
# the vus gauge of a constant-vus run is its count, not its wind-down.
source "$(dirname "$0")/lib.sh"
start_serve

# ---- Ctrl-C while every VU waits for a slow response (quick mode) ----
# (the requests start as the run does, the signal comes 1.5 s after the
# process, and they are cut 0.4 s after it: 1.x s, or 2.0 s on a busy machine)
sigint_after 1.5 run "$URL/delay/20000" -c 2 -d 30s --summary-export "$T/q.json"
expect_eq "SIGINT, requests in flight: exit 105" "$RC" 105
expect_cmp "SIGINT, requests in flight: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"
expect_eq "SIGINT, requests in flight: no worker given up on" "$(grep -c 'did not stop' "$ERR")" 0
expect_match "SIGINT, requests in flight: says it was interrupted, and what runs" "$ERR" \
  "^luaload: interrupted by SIGINT: stopping at [0-9.]+s; 2 running iterations get up to 0\.4s to finish"
expect_match "SIGINT, requests in flight: the cut iterations are counted" "$ERR" \
  "^luaload: 2 iterations still running at the end were interrupted \(not counted\), in these requests \(the oldest had been going for [12]\.[0-9]s\):"
expect_match "SIGINT, requests in flight: the requests they were in" "$ERR" \
  "^luaload:   2 × GET $URL/delay/20000, waiting for the response"
expect_eq "SIGINT, requests in flight: counted as cut off (1000)" \
  "$(jqv "$T/q.json" '.metrics.http_req_failed.passes')" 2

# the same in a script, with the default gracefulStop of 30 s
S=$(script slow.lua <<LUA
local http = require("luaload.http")
options = { vus = 2, duration = "30s" }
function default() http.get("$URL/delay/20000") end
LUA
)
sigint_after 1.5 run "$S"
expect_eq "SIGINT, script waiting: exit 105" "$RC" 105
expect_cmp "SIGINT, script waiting: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"
expect_eq "SIGINT, script waiting: no worker given up on" "$(grep -c 'did not stop' "$ERR")" 0
expect_match "SIGINT, script waiting: the summary" "$OUT" "http_reqs\.+: 2 "

# ---- https:// against a plain-HTTP port ----
# (the server answers the ClientHello with a 400 and closes, as nginx does)
run_ll run "https://127.0.0.1:$PORT/" -c 2 -i 200 -d 2s --summary-export "$T/tls.json"
expect_cmp "TLS to a plain port: ends on time" "x < 4" "$ELAPSED"
expect_eq "TLS to a plain port: every request counted as failed" \
  "$(jqv "$T/tls.json" '.metrics.http_req_failed.passes // 0')" 200
expect_match "TLS to a plain port: k6's words and code" "$ERR" \
  "× tls: first record does not look like a TLS handshake \(error_code 1300\)"

# a port that takes the connection and never answers: the requests are cut
# at the end in their handshake, and the end says so
SILENT=$(free_port)
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
time.sleep(30)' "$SILENT" &
EXTRA_PIDS+=($!)
for ((i = 0; i < 50; i++)); do
  (exec 3<>"/dev/tcp/127.0.0.1/$SILENT") 2>/dev/null && break
  sleep 0.1
done
S=$(script hang.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "1s", gracefulStop = "1s" } } }
function default() http.get("https://127.0.0.1:$SILENT/") end
LUA
)
run_ll run "$S"
expect_cmp "TLS to a silent port: ends at duration + gracefulStop" "x < 3.5" "$ELAPSED"
expect_match "TLS to a silent port: the requests hung in their handshake" "$ERR" \
  "^luaload:   2 × GET https://127\.0\.0\.1:$SILENT/, in the TLS handshake"

# ---- requests that fail in setup(): told before the script's error ----
DOWN=$(free_port)
S=$(script setup_down.lua <<LUA
local http = require("luaload.http")
function setup()
  for i = 1, 8 do http.get("http://127.0.0.1:$DOWN/") end
  return http.get("http://127.0.0.1:$DOWN/login"):json()
end
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "setup, target down: exit 107" "$RC" 107
expect_match "setup, target down: the refused connection is told" "$ERR" \
  "^luaload: WARN setup\(\): request failed: GET http://127\.0\.0\.1:$DOWN/: dial tcp 127\.0\.0\.1:$DOWN: connect: connection refused \(error_code 1212\)$"
expect_eq "setup, target down: the first 5 told, one by one" "$(grep -c 'WARN setup(): request failed' "$ERR")" 5
expect_match "setup, target down: then a count of the rest" "$ERR" "^luaload: WARN setup\(\): 4 more requests failed$"
expect_eq "setup, target down: the warnings before the script's error" \
  "$(grep -n 'WARN setup\|setup() failed' "$ERR" | tail -1 | grep -c 'setup() failed')" 1

S=$(script teardown_down.lua <<LUA
local http = require("luaload.http")
function default() end
function teardown() http.get("http://127.0.0.1:$DOWN/bye") end
LUA
)
run_ll run "$S" -i 1 -q
expect_match "teardown, target down: told too" "$ERR" \
  "^luaload: WARN teardown\(\): request failed: GET http://127\.0\.0\.1:$DOWN/bye: .*\(error_code 1212\)$"

# ---- the vus gauge of a constant-vus run: its count, not its wind-down ----
# (short iterations: a sample at the end of the duration found the VUs
# retiring, 0 to 9 of them; twice, as that sample's timing varies)
for i in 1 2; do
  run_ll run "$URL/delay/5" -c 10 -d 2s -w 2 -q --summary-export "$T/vus.json"
  expect_eq "constant VUs ($i): vus is the count" "$(jq -c '.metrics.vus' "$T/vus.json")" '{"value":10,"min":10,"max":10}'
done
finish
