#!/usr/bin/env bash
# Status codes, http_req_failed, checks passed and failed, groups in the export.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script st.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local ok_req = http.Request("$URL/")
local nf_req = http.Request("$URL/status/404")
local client = http.Client{}
function default()
  local r1 = client:get(ok_req)
  local r2 = client:get(nf_req)
  http.checkstatus(200, r1)
  http.checkstatus(200, r2)          -- fails
  ll.group("api", function()
    ll.check(r2, { ["is 404"] = function(r) return r.status == 404 end,
                   ["error_code 1404"] = function(r) return r.error_code == 1404 end })
  end)
end
LUA
)
run_ll run "$S" -u 4 -i 40 -q --summary-export "$T/s.json"
expect_eq "exit 0" "$RC" 0
expect_eq "http_reqs = 80" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 80
expect_eq "http_req_failed passes (failed requests) = 40" "$(jqv "$T/s.json" .metrics.http_req_failed.passes)" 40
expect_eq "http_req_failed fails = 40" "$(jqv "$T/s.json" .metrics.http_req_failed.fails)" 40
expect_eq "http_req_failed value = 0.5" "$(jqv "$T/s.json" .metrics.http_req_failed.value)" 0.5
expect_eq "checks passes = 120" "$(jqv "$T/s.json" .metrics.checks.passes)" 120
expect_eq "checks fails = 40" "$(jqv "$T/s.json" .metrics.checks.fails)" 40
expect_eq "root check 'status is 200' passes" "$(jqv "$T/s.json" '.root_group.checks["status is 200"].passes')" 40
expect_eq "root check 'status is 200' fails" "$(jqv "$T/s.json" '.root_group.checks["status is 200"].fails')" 40
expect_eq "group check path" "$(jqv "$T/s.json" '.root_group.groups.api.checks["is 404"].path')" "::api::is 404"
expect_eq "group check passes" "$(jqv "$T/s.json" '.root_group.groups.api.checks["is 404"].passes')" 40
expect_eq "error_code for a 404" "$(jqv "$T/s.json" '.root_group.groups.api.checks["error_code 1404"].passes')" 40
expect_cmp "group_duration recorded" "x > 0" "$(jqv "$T/s.json" '.metrics.group_duration.max')"
run_ll run "$S" -u 1 -i 2
expect_match "failed check shown with counts" "$OUT" "✗ status is 200"

# checkstatus in a script that never requires "luaload"
S=$(script bare.lua <<LUA
local http = require("luaload.http")
function default() http.checkstatus(200, http.get("$URL/")) end
LUA
)
run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/s.json"
expect_eq "bare checkstatus: exit 0" "$RC" 0
expect_eq "bare checkstatus: 6 passes" "$(jqv "$T/s.json" .metrics.checks.passes)" 6

# the same checkstatus in and out of a group, and with two statuses in turn:
# each is its own check, counted where it ran (a VU keeps its last one)
S=$(script groups.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local r = http.get("$URL/")
  http.checkstatus(200, r)
  ll.group("g", function() http.checkstatus(200, r); http.checkstatus(200, r) end)
  http.checkstatus(201, r)           -- fails
  http.checkstatus(200, r)
end
LUA
)
run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/s.json"
expect_eq "groups: exit 0" "$RC" 0
expect_eq "groups: root 'status is 200' passes" "$(jqv "$T/s.json" '.root_group.checks["status is 200"].passes')" 12
expect_eq "groups: root 'status is 201' fails" "$(jqv "$T/s.json" '.root_group.checks["status is 201"].fails')" 6
expect_eq "groups: root 'status is 201' passes" "$(jqv "$T/s.json" '.root_group.checks["status is 201"].passes')" 0
expect_eq "groups: group 'status is 200' passes" "$(jqv "$T/s.json" '.root_group.groups.g.checks["status is 200"].passes')" 12
expect_eq "groups: group check path" "$(jqv "$T/s.json" '.root_group.groups.g.checks["status is 200"].path')" "::g::status is 200"
expect_eq "groups: checks total" "$(jqv "$T/s.json" '.metrics.checks.passes + .metrics.checks.fails')" 30
finish
