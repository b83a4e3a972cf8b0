#!/usr/bin/env bash
# -i N: exactly N iterations and requests, shared by the VUs over the workers.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script it.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{}
local req = http.Request("$URL/")
function default()
  local res = client:get(req)
  http.checkstatus(200, res)
  ll.check(res, { ["body is hello"] = function(r) return r.body == "hello world\n" end })
end
LUA
)
for w in 1 2 3; do
  run_ll run "$S" -u 10 -i 1000 -w $w -q --summary-export "$T/s.json"
  expect_eq "exit 0 (workers=$w)" "$RC" 0
  expect_eq "http_reqs = 1000 (workers=$w)" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 1000
  expect_eq "iterations = 1000 (workers=$w)" "$(jqv "$T/s.json" .metrics.iterations.count)" 1000
  expect_eq "checks passed = 2000 (workers=$w)" "$(jqv "$T/s.json" .metrics.checks.passes)" 2000
  expect_eq "checks failed = 0 (workers=$w)" "$(jqv "$T/s.json" .metrics.checks.fails)" 0
done
# odd split: 7 iterations over 3 VUs on 2 workers
run_ll run "$S" -u 3 -i 7 -w 2 -q --summary-export "$T/s.json"
expect_eq "7 iterations over 3 VUs" "$(jqv "$T/s.json" .metrics.iterations.count)" 7
expect_eq "vus gauge" "$(jqv "$T/s.json" .metrics.vus.value)" 3
# many VUs: more sockets than the first socket table holds, several multi handles
run_ll run "$S" -u 700 -i 2100 -q --summary-export "$T/s.json"
expect_eq "700 VUs: exit 0" "$RC" 0
expect_eq "700 VUs: 2100 requests" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 2100
expect_eq "700 VUs: none failed" "$(jqv "$T/s.json" .metrics.http_req_failed.passes)" 0
# the summary is printed with k6's layout
run_ll run "$S" -u 2 -i 10
expect_match "summary shows checks" "$OUT" "✓ status is 200"
expect_match "summary shows http_reqs" "$OUT" "http_reqs\.+: 10 "
expect_match "summary shows trend stats" "$OUT" "http_req_duration\.+: avg=.*p\(95\)="
expect_eq "export trend has p(95)" "$(jqv "$T/s.json" '.metrics.http_req_duration | has("p(95)")')" true
finish
