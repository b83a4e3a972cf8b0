#!/usr/bin/env bash
# Thresholds: pass/fail exit codes, sub-metrics, abortOnFail, malformed ones,
# --no-thresholds; custom metrics; summary options; handle_summary.
source "$(dirname "$0")/lib.sh"
start_serve
mk() { # mk NAME THRESHOLDS-LUA-TABLE
  script "$1" <<LUA
local http = require("luaload.http")
options = { thresholds = $2 }
function default()
  http.get("$URL/")
  http.get("$URL/status/404", { tags = { name = "missing" } })
end
LUA
}
S=$(mk pass.lua '{ http_req_duration = { "p(95)<5000", "avg<5000" }, http_req_failed = "rate<0.6",
  ["http_req_duration{status:404}"] = { "max<5000" }, http_reqs = "count==40" }')
run_ll run "$S" -u 2 -i 20 --summary-export "$T/s.json"
expect_eq "passing thresholds: exit 0" "$RC" 0
expect_match "summary lists thresholds" "$OUT" "✓ 'rate<0.6' rate=50.00%"
expect_eq "export: threshold not failed" "$(jqv "$T/s.json" '.metrics.http_req_failed.thresholds["rate<0.6"]')" false
expect_eq "sub-metric by status counted" "$(jqv "$T/s.json" '.metrics["http_req_duration{status:404}"].max > 0')" true
expect_eq "expected_response sub-metric" "$(jqv "$T/s.json" '.metrics["http_req_duration{expected_response:true}"] | has("avg")')" true

S=$(mk fail.lua '{ http_req_failed = { "rate<0.01" }, ["http_reqs{name:missing}"] = "count==20" }')
run_ll run "$S" -u 2 -i 20 --summary-export "$T/s.json"
expect_eq "failing threshold: exit 99" "$RC" 99
expect_match "failed threshold marked" "$OUT" "✗ 'rate<0.01' rate=50.00%"
expect_match "failed threshold on stderr" "$ERR" "threshold failed: http_req_failed 'rate<0.01'"
expect_eq "export: threshold failed" "$(jqv "$T/s.json" '.metrics.http_req_failed.thresholds["rate<0.01"]')" true
expect_eq "user tag sub-metric: count 20 holds" "$(jqv "$T/s.json" '.metrics["http_reqs{name:missing}"].thresholds["count==20"]')" false
run_ll run "$S" -u 2 -i 20 --no-thresholds -q
expect_eq "--no-thresholds: exit 0" "$RC" 0

for bad in '{ http_req_duration = "p95<200" }' '{ http_req_duration = "avg<" }' '{ nope_metric = "count>1" }' \
           '{ http_reqs = "avg<3" }' '{ http_req_duration = { { abortOnFail = true } } }' \
           '{ ["http_req_duration{status"] = "avg<1" }' '{ http_reqs = { { threshold = "count>0", colour = 1 } } }'; do
  S=$(mk bad.lua "$bad")
  run_ll run "$S" -i 1
  expect_eq "malformed $bad: exit 104" "$RC" 104
  expect_eq "malformed $bad: one line" "$(wc -l <"$ERR")" 1
done
S=$(mk bad.lua '{ http_req_duration = "p95<200" }'); run_ll run "$S" -i 1
expect_match "message quotes the threshold" "$ERR" "invalid threshold 'p95<200' on http_req_duration"
S=$(mk bad.lua '{ http_reqs = "avg<3" }'); run_ll run "$S" -i 1
expect_match "message names the right aggregations" "$ERR" "http_reqs is a counter, so expected count or rate"

# abortOnFail: stops a 30 s test within a few seconds, exit 99
S=$(script abort.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { thresholds = { http_req_failed = { { threshold = "rate<0.1", abortOnFail = true, delayAbortEval = "1s" } } } }
function default() http.get("$URL/status/500") ll.sleep(0.05) end
LUA
)
run_ll run "$S" -u 2 -d 30s -q --summary-export "$T/s.json"
expect_eq "abortOnFail: exit 99" "$RC" 99
expect_cmp "abortOnFail: stopped after the delay, well before 30 s" "x >= 1 && x < 6" "$ELAPSED"
expect_match "abortOnFail: said so" "$ERR" "abortOnFail failed"

# custom metrics, trend stats, time unit, handle_summary
S=$(script custom.lua <<LUA
local http = require("luaload.http")
local metrics = require("luaload.metrics")
local json = require("luaload.json")
local summary = require("luaload.summary")
local hits = metrics.Counter("hits")
local size = metrics.Trend("body_size")
local wait = metrics.Trend("my_wait", true)
local good = metrics.Rate("good")
local last = metrics.Gauge("last_iter")
options = {
  summaryTrendStats = { "avg", "p(99)", "p(99.99)", "count" },
  summaryTimeUnit = "ms",
  thresholds = { hits = "count==30", ["hits{kind:a}"] = "count==15", body_size = "avg==12", good = "rate==1",
                 last_iter = "value>=0", my_wait = "p(99.9)<5000" },
}
function default()
  local ll = require("luaload")
  local res = http.get("$URL/")
  hits:add(1, { kind = ll.vu.id == 1 and "a" or "b" })
  size:add(#res.body)
  wait:add(res.timings.waiting)
  good:add(res.status == 200)
  last:add(ll.vu.iteration)
  if ll.vu.iteration == 0 and ll.vu.id == 1 then
    print("metric fields", hits.name, wait.name, good.type, tostring(size:add(12)))
  end
end
function handle_summary(data)
  return {
    stdout = summary.text(data),
    ["$T/custom-summary.json"] = json.encode(data),
  }
end
LUA
)
run_ll run "$S" -u 2 -i 30
expect_eq "custom metrics: thresholds pass" "$RC" 0
expect_match "metric.name and .type are fields, add() returns true (k6)" "$OUT" $'^metric fields\thits\tmy_wait\trate\ttrue$'
expect_eq "handle_summary wrote its file" "$(jq -r '.metrics.hits.values.count' "$T/custom-summary.json")" 30
expect_eq "handle_summary data: thresholds ok" "$(jq -r '.metrics["hits{kind:a}"].thresholds["count==15"].ok' "$T/custom-summary.json")" true
expect_eq "handle_summary data: trend stats" "$(jq -r '.metrics.http_req_duration.values | keys | sort | join(",")' "$T/custom-summary.json")" "avg,count,p(99),p(99.99)"
expect_eq "handle_summary data: count" "$(jq -r '.metrics.http_req_duration.values.count' "$T/custom-summary.json")" 30
expect_eq "non-time trend in its unit" "$(jq -r '.metrics.body_size.values.avg' "$T/custom-summary.json")" 12
expect_match "stdout from handle_summary, in ms" "$OUT" "http_req_duration\.+: avg=[0-9.]+ms +p\(99\)=[0-9.]+ms"
expect_eq "data options" "$(jq -r '.options.summaryTimeUnit' "$T/custom-summary.json")" ms
run_ll run "$S" -u 2 -i 30 --summary-trend-stats "med,p(90)" -q --summary-export "$T/s.json"
expect_eq "--summary-trend-stats wins" "$(jqv "$T/s.json" '.metrics.http_req_duration | keys | sort | join(",")')" "med,p(90)"
run_ll run "$S" -i 1 --summary-trend-stats "avg,p95"
expect_eq "bad --summary-trend-stats: exit 104" "$RC" 104
S2=$(script late.lua <<'LUA'
local metrics = require("luaload.metrics")
function default() metrics.Counter("late") end
LUA
)
run_ll run "$S2" -i 1
expect_match "metrics outside init are refused" "$ERR" "metrics must be created in init code"
S2=$(script failing_hs.lua <<'LUA'
function default() end
function handle_summary() error("broken") end
LUA
)
run_ll run "$S2" -i 1
expect_match "failing handle_summary: reported" "$ERR" "handle_summary\(\) failed.*broken"
expect_match "failing handle_summary: default summary" "$OUT" "iterations\.+: 1 "
finish
