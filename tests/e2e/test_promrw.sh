#!/usr/bin/env bash
# -o experimental-prometheus-rw against Debian's Prometheus, started here on
# loopback with its remote-write receiver: the series k6's Grafana dashboards
# query (k6_http_reqs_total, k6_http_req_duration_p99, k6_checks_rate, ...)
# arrive with the sample's tags as labels and hold what the summary export
# reports; bad K6_PROMETHEUS_RW_* settings exit 104; stale markers end the
# series.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || { echo "FAIL - prometheus missing (scripts/setup.sh installs it)"; exit 1; }
start_serve
PPORT=$(free_port)
: >"$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PPORT" \
  --web.enable-remote-write-receiver >"$T/prometheus.log" 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do curl -s "http://127.0.0.1:$PPORT/-/ready" | grep -q Ready && break; sleep 0.1; done
expect_match "prometheus is ready" <(curl -s "http://127.0.0.1:$PPORT/-/ready") Ready
export K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:$PPORT/api/v1/write
export K6_PROMETHEUS_RW_PUSH_INTERVAL=500ms
export K6_PROMETHEUS_RW_TREND_STATS='p(99),p(99.9),avg,max,count'
# q QUERY: the value of the one series QUERY selects (empty when none)
q() { curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }
S=$(script prw.lua <<LUA
local http = require("luaload.http")
local luaload = require("luaload")
options = { vus = 3, iterations = 1500, tags = { testid = "prw-1" },
  summaryTrendStats = { "avg", "max", "p(99)", "p(99.9)", "count" } }
function default()
  local res = http.get("$URL/")
  luaload.check(res, { ["status is 200"] = function(r) return r.status == 200 end })
end
LUA
)
run_ll run "$S" -q --no-summary --summary-export "$T/sum.json" -o experimental-prometheus-rw
expect_eq "run: exit 0" "$RC" 0
jv() { jq -r "$1" "$T/sum.json"; }
sel='{testid="prw-1",status="200",method="GET"}'
expect_eq "k6_http_reqs_total: the export's count, with the sample's tags as labels" \
  "$(q "k6_http_reqs_total$sel")" "$(jv .metrics.http_reqs.count)"
expect_eq "k6_iterations_total" "$(q 'k6_iterations_total{testid="prw-1"}')" 1500
expect_eq "k6_checks_rate{check=...}" "$(q 'k6_checks_rate{check="status is 200"}')" 1
expect_eq "k6_http_req_failed_rate" "$(q "k6_http_req_failed_rate$sel")" 0
expect_eq "k6_data_sent_total: bytes, as the export" "$(q 'sum(k6_data_sent_total{testid="prw-1"})')" \
  "$(jv .metrics.data_sent.count)"
expect_eq "k6_vus_max: a gauge" "$(q 'k6_vus_max{testid="prw-1"}')" 3
# trend stats in seconds, from 2-digit histograms: within 1 % of the summary's
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.011 * b) }'; }
for st in p99:'p(99)' p999:'p(99.9)' avg:avg max:max; do
  got=$(q "k6_http_req_duration_${st%%:*}$sel")
  want=$(jv ".metrics.http_req_duration[\"${st#*:}\"] / 1000")
  if close "$got" "$want"; then ok "k6_http_req_duration_${st%%:*} = the export's ${st#*:} in seconds ($got ~ $want)"
  else not_ok "k6_http_req_duration_${st%%:*}" "got $got, want about $want"; fi
done
expect_eq "k6_http_req_duration_count: k6's count/1000 for a time trend" \
  "$(q "k6_http_req_duration_count$sel")" "$(jv '.metrics.http_req_duration.count / 1000')"
expect_eq "no sub-metric series of their own" "$(curl -s "http://127.0.0.1:$PPORT/api/v1/label/__name__/values" | jq -r '.data[]' | grep -c '{')" 0

# stale markers end every series at the end of the run
S2=$(script prw2.lua <<LUA
local http = require("luaload.http")
options = { vus = 1, iterations = 20, tags = { testid = "prw-2" } }
function default() http.get("$URL/") end
LUA
)
K6_PROMETHEUS_RW_STALE_MARKERS=true run_ll run "$S2" -q --no-summary -o experimental-prometheus-rw
expect_eq "stale markers: exit 0" "$RC" 0
expect_eq "stale markers: the series is gone from an instant query" "$(q 'k6_iterations_total{testid="prw-2"}')" ""
expect_eq "stale markers: it was there before its end" \
  "$(curl -s "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=max_over_time(k6_iterations_total{testid="prw-2"}[5m])' | jq -r '.data.result[0].value[1]')" 20

# an id in the URL and no name tag: a series per request and metric. Past
# 2,000 series the rest go to one overflow series per metric (name and url
# "(other)"), with a warning once and the count at the end; no request is lost
S3=$(script prw3.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
options = { vus = 1, iterations = 600, tags = { testid = "prw-3" } }
function default() http.get("$URL/item/" .. exec.scenario.iterationInTest) end
LUA
)
run_ll run "$S3" -q --no-summary -o experimental-prometheus-rw
expect_eq "many series: exit 0" "$RC" 0
expect_eq "many series: one warning, naming the bound" "$(grep -c 'more than 2000 series; the samples of a new one go to' "$ERR")" 1
expect_match "many series: the warning names the first URL folded" "$ERR" "name=$URL/item/[0-9]+\\)"
expect_match "many series: the end counts the samples folded" "$ERR" \
  'experimental-prometheus-rw: [0-9]+ samples went to the series labelled name and url "\(other\)" \(more than 2000 series\)'
expect_eq "many series: every request counted, its own series or (other)" "$(q 'sum(k6_http_reqs_total{testid="prw-3"})')" 600
expect_cmp "many series: the overflow series holds the rest" "x > 300" "$(q 'k6_http_reqs_total{testid="prw-3",name="(other)",url="(other)"}')"
expect_cmp "many series: fewer than 250 series of their own (2,000 / 9 metrics a request)" "x < 250" \
  "$(q 'count(k6_http_reqs_total{testid="prw-3"})')"
expect_match "many series: the overflow trend has its p99" <(q 'k6_http_req_duration_p99{testid="prw-3",name="(other)"}') '^[0-9.e-]+$'

# a server that does not answer: the run goes on, the error is reported
K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:$(free_port)/api/v1/write run_ll run "$S2" -q --no-summary \
  -o experimental-prometheus-rw
expect_eq "no server: the run still exits 0" "$RC" 0
expect_match "no server: says the pushes failed" "$ERR" 'experimental-prometheus-rw: remote write to .* failed'

# bad settings: one line, exit 104
bad() {
  local label=$1 want=$2; shift 2
  env "$@" "$LUALOAD" run "$S2" -q --no-summary -o experimental-prometheus-rw >"$T/bad.out" 2>"$T/bad.err"
  expect_eq "$label: exit 104" "$?" 104
  expect_match "$label: says why" "$T/bad.err" "$want"
}
bad "trend stats with a space" "TREND_STATS: ' p\\(99\\)'" K6_PROMETHEUS_RW_TREND_STATS='p(95), p(99)'
bad "a push interval that is no duration" 'PUSH_INTERVAL' K6_PROMETHEUS_RW_PUSH_INTERVAL=soon
bad "a boolean that is none" 'STALE_MARKERS' K6_PROMETHEUS_RW_STALE_MARKERS=maybe
bad "native histograms" 'not supported yet' K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true
bad "a URL that is not http" 'SERVER_URL' K6_PROMETHEUS_RW_SERVER_URL=ftp://x
finish
