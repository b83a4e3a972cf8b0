#!/usr/bin/env bash
# -o outputs: k6's JSON lines (one Point per sample), CSV (plain and gzip),
# InfluxDB v1 line protocol against a real influxd started here on loopback.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script out.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local metrics = require("luaload.metrics")
local c = metrics.Counter("my_counter")
options = { tags = { team = "perf" }, thresholds = { http_req_failed = "rate<0.9" } }
function default()
  local res = http.get("$URL/", { tags = { name = "home" } })
  http.get("$URL/status/404")
  ll.check(res, { ["is 200"] = function(r) return r.status == 200 end })
  c:add(2, { kind = "x" })
end
LUA
)
run_ll run "$S" -u 3 -i 30 -q -o "json=$T/out.json" -o "csv=$T/out.csv" -o "csv=$T/out.csv.gz" --summary-export "$T/s.json"
expect_eq "exit 0" "$RC" 0
REQS=$(jqv "$T/s.json" .metrics.http_reqs.count)
expect_eq "60 requests" "$REQS" 60
expect_eq "json: every line parses" "$(jq -c . "$T/out.json" >/dev/null 2>&1 && echo yes)" yes
expect_eq "json: http_reqs points = http_reqs" "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_reqs")] | length' "$T/out.json")" "$REQS"
expect_eq "json: http_req_duration points" "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_req_duration")] | length' "$T/out.json")" "$REQS"
expect_eq "json: one Metric declaration each" "$(jq -s '[.[] | select(.type == "Metric" and .metric == "http_reqs")] | length' "$T/out.json")" 1
expect_eq "json: threshold in the declaration" "$(jq -s -r '.[] | select(.type == "Metric" and .metric == "http_req_failed") | .data.thresholds[0]' "$T/out.json")" "rate<0.9"
expect_eq "json: tags of a request" "$(jq -s -c '[.[] | select(.type == "Point" and .metric == "http_reqs" and .data.tags.name == "home")][0].data.tags | {method, status, name, team, scenario, expected_response, proto}' "$T/out.json")" \
  '{"method":"GET","status":"200","name":"home","team":"perf","scenario":"default","expected_response":"true","proto":"HTTP/1.1"}'
expect_eq "json: 404 tagged" "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_reqs" and .data.tags.status == "404" and .data.tags.error_code == "1404")] | length' "$T/out.json")" 30
expect_eq "json: check points" "$(jq -s '[.[] | select(.type == "Point" and .metric == "checks" and .data.tags.check == "is 200")] | length' "$T/out.json")" 30
expect_eq "json: custom metric value and tags" "$(jq -s -c '[.[] | select(.type == "Point" and .metric == "my_counter")][0].data | {value, kind: .tags.kind}' "$T/out.json")" '{"value":2,"kind":"x"}'
expect_match "json: RFC 3339 times" "$T/out.json" '"time":"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{9}Z"'
expect_eq "csv: header" "$(head -1 "$T/out.csv")" "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata"
expect_eq "csv: http_reqs rows" "$(grep -c '^http_reqs,' "$T/out.csv")" "$REQS"
expect_eq "csv.gz: same rows" "$(zcat "$T/out.csv.gz" | grep -c '^http_reqs,')" "$REQS"
expect_match "csv: extra tags" "$T/out.csv" "^my_counter,[0-9]+,2\.000000,.*kind=x"

run_ll run "$S" -i 1 -o "xml=$T/x"
expect_eq "unknown output: exit 104" "$RC" 104
expect_match "unknown output: message" "$ERR" "unknown output type 'xml'"
run_ll run "$S" -i 1 -o "json=/nonexistent-dir/x.json"
expect_eq "unwritable output: exit 104" "$RC" 104
expect_match "unwritable output: message" "$ERR" "^luaload: --out json: cannot write /nonexistent-dir/x.json"

# an output that cannot keep up drops and counts, and never slows the VUs:
# a "database" that takes 2 s to answer each write
ll_start_serve "$T/slow.out" "$LUALOAD" serve --threads 1 --delay 2s || exit 1
SLOW_PID=$LL_SERVE_PID SLOW=$LL_SERVE_PORT
S2=$(script fast.lua <<LUA
local http = require("luaload.http")
local client = http.Client{}
local req = http.Request("$URL/")
function default() client:get(req) end
LUA
)
run_ll run "$S2" -u 20 -d 4s -q -o "influxdb=http://127.0.0.1:$SLOW/k6" --summary-export "$T/slow.json"
kill $SLOW_PID 2>/dev/null; wait $SLOW_PID 2>/dev/null
expect_eq "slow output: exit 0" "$RC" 0
expect_match "slow output: drops counted and reported" "$ERR" "the outputs could not keep up: [0-9]+ samples dropped"
expect_cmp "slow output: VUs kept going (more requests than a full ring of ~6,000 would allow)" "x > 8000" "$(jqv "$T/slow.json" .metrics.http_reqs.count)"
# CREATE DATABASE (2 s), the run (4 s), then 5 s at most for the writes
# still to go, counted from the end of the run, the write under way cut
# at that deadline: 11 s. Waiting for every batch the rings held took 17.
expect_cmp "slow output: the end waits for the queued writes 5 s at most" "x < 14.5" "$ELAPSED"
expect_match "slow output: the writes given up are reported" "$ERR" \
  "output influxdb=.*write\\(s\\) failed, the last: [0-9]+ batch\\(es\\) not sent within 5 s of the end of the run"

# InfluxDB v1: a real influxd on free loopback ports
if ! command -v influxd >/dev/null; then not_ok "influxd installed (scripts/setup.sh installs influxdb)"; finish; exit 1; fi
HP=$(free_port) RP=$(free_port)
mkdir -p "$T/influx"
cat >"$T/influx/influxdb.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$RP"
[meta]
  dir = "$T/influx/meta"
[data]
  dir = "$T/influx/data"
  wal-dir = "$T/influx/wal"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:$HP"
  log-enabled = false
[monitor]
  store-enabled = false
CONF
influxd -config "$T/influx/influxdb.conf" >"$T/influx/log" 2>&1 &
INFLUX_PID=$!
trap 'kill $INFLUX_PID 2>/dev/null; wait $INFLUX_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$HP/ping" && break; sleep 0.1; done
run_ll run "$S" -u 3 -i 30 -q -o "influxdb=http://127.0.0.1:$HP/k6test" --summary-export "$T/s.json"
expect_eq "influxdb: exit 0" "$RC" 0
[[ -s $ERR ]] && cat "$ERR"
q() { curl -s -G "http://127.0.0.1:$HP/query" --data-urlencode "db=k6test" --data-urlencode "q=$1" | jq -r '.results[0].series[0].values[0][1]'; }
expect_eq "influxdb: http_reqs points" "$(q 'SELECT count(value) FROM http_reqs')" 60
expect_eq "influxdb: tagged 404s" "$(q "SELECT count(value) FROM http_reqs WHERE status = '404'")" 30
expect_eq "influxdb: url is a field" "$(q "SELECT count(url) FROM http_req_duration")" 60
expect_eq "influxdb: custom metric sum" "$(q 'SELECT sum(value) FROM my_counter')" 60
run_ll run "$S" -i 1 -o "influxdb=http://127.0.0.1:$(free_port)/k6"
expect_eq "influxdb down: exit 104" "$RC" 104
expect_match "influxdb down: message" "$ERR" "cannot create database k6"
finish
