#!/usr/bin/env bash
# -o web-dashboard (k6's K6_WEB_DASHBOARD_* settings): the report's page
# served live on 127.0.0.1 while the test runs, its data as server-sent
# events on /events every period, a "stop" event with the final figures at
# the end (the summary export's), and the report written to the export
# file, which Chromium renders. Bad settings exit 104.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script dash.lua <<LUA
local http = require("luaload.http")
options = { vus = 2, duration = "4s", thresholds = { http_req_duration = { "p(95)<1000" } } }
function default() http.get("$URL/") end
LUA
)
DPORT=$(free_port)
K6_WEB_DASHBOARD_PORT=$DPORT K6_WEB_DASHBOARD_PERIOD=1s K6_WEB_DASHBOARD_EXPORT=$T/export.html \
  timeout -k 5 60 "$LUALOAD" run "$S" -q --no-summary --summary-export "$T/sum.json" -o web-dashboard \
  >"$T/run.out" 2>"$T/run.err" &
pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$DPORT/" && break; sleep 0.1; done
# idle connections (a browser's preconnects) do not hold the server up
python3 -c 'import socket, sys, time
s = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(4)]
time.sleep(3)' "$DPORT" &
idle=$!
sleep 0.3
t=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$DPORT/")
expect_cmp "GET / with 4 idle connections open: answered within 0.5s ($t s)" "x < 0.5" "$t"
kill "$idle" 2>/dev/null; wait "$idle" 2>/dev/null
code=$(curl -s -o "$T/page.html" -w '%{http_code}' "http://127.0.0.1:$DPORT/")
expect_eq "GET /: the page, while the test runs" "$code" 200
expect_match "GET /: it is the report's page, with its data built in" "$T/page.html" 'id="data" type="application/octet-stream">H4sI'
expect_eq "GET /nope: 404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$DPORT/nope")" 404
timeout 10 curl -sN "http://127.0.0.1:$DPORT/events" >"$T/events.txt"
wait "$pid"
expect_eq "run: exit 0" "$?" 0
expect_match "says where the dashboard is" "$T/run.err" "web dashboard on http://127.0.0.1:$DPORT/"
expect_cmp "/events: a snapshot every period (1s of a 4s test)" "x >= 3" "$(grep -c '^event: snapshot' "$T/events.txt")"
expect_match "/events: a stop event at the end" "$T/events.txt" '^event: stop'
last=$(grep '^data: {"run"' "$T/events.txt" | tail -1 | sed 's/^data: //')
expect_eq "the last snapshot: the summary export's http_reqs" "$(jq '.summary.metrics.http_reqs.values.count' <<<"$last")" \
  "$(jq .metrics.http_reqs.count "$T/sum.json")"
expect_eq "the last snapshot: marked live, with its period" "$(jq '.live.period' <<<"$last")" 1
expect_cmp "the last snapshot: per-second points" "x >= 3" "$(jq '.series.t | length' <<<"$last")"
expect_cmp "K6_WEB_DASHBOARD_EXPORT: the report written at the end" "x > 10000" "$(stat -c %s "$T/export.html" 2>/dev/null || echo 0)"
CHROMIUM=$(command -v chromium || true)
if [[ -n $CHROMIUM ]]; then
  timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome" \
    --virtual-time-budget=10000 --dump-dom "file://$T/export.html" >"$T/dom.html" 2>/dev/null
  expect_match "the export renders in Chromium" "$T/dom.html" 'data-rendered="1"'
fi
# the output's parameters win over the environment; port -1: no server, the export only
K6_WEB_DASHBOARD_PORT=1 run_ll run "$S" -q --no-summary -d 1s -o "web-dashboard=port=-1&export=$T/only.html"
expect_eq "port=-1: exit 0" "$RC" 0
expect_cmp "port=-1: the export is written" "x > 10000" "$(stat -c %s "$T/only.html" 2>/dev/null || echo 0)"
run_ll run "$S" -q --no-summary -d 1s -o "web-dashboard=port=0"
expect_eq "port=0: exit 0" "$RC" 0
expect_match "port=0: says the port it got" "$ERR" 'web dashboard on http://127.0.0.1:[1-9][0-9]*/'
K6_WEB_DASHBOARD_PERIOD=soon run_ll run "$S" -q --no-summary -d 1s -o web-dashboard
expect_eq "a bad period: exit 104" "$RC" 104
expect_match "a bad period: names K6_WEB_DASHBOARD_PERIOD" "$ERR" "K6_WEB_DASHBOARD_PERIOD: 'soon'"
run_ll run "$S" -q --no-summary -d 1s -o "web-dashboard=port=99999"
expect_eq "a bad port: exit 104" "$RC" 104
expect_match "a bad port: names the output's parameter" "$ERR" "web-dashboard=port: '99999'"
K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=http run_ll run "$S" -q --no-summary -d 1s
expect_eq "a bad K6_WEB_DASHBOARD_PORT: exit 104" "$RC" 104
expect_match "a bad K6_WEB_DASHBOARD_PORT: names it" "$ERR" "K6_WEB_DASHBOARD_PORT: 'http' is not a port number"
K6_WEB_DASHBOARD=yes run_ll run "$S" -q --no-summary -d 1s
expect_eq "K6_WEB_DASHBOARD=yes (not a boolean to k6 either): exit 104" "$RC" 104
expect_match "K6_WEB_DASHBOARD=yes: says so" "$ERR" "K6_WEB_DASHBOARD: 'yes' is not a boolean"
K6_WEB_DASHBOARD=False run_ll run "$S" -q --no-summary -i 1 -u 1
expect_eq "K6_WEB_DASHBOARD=False: no dashboard, exit 0" "$RC $(grep -c 'web dashboard on' "$ERR")" "0 0"
finish
