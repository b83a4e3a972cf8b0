#!/usr/bin/env bash
# Names and tags with an id in them (a tag set, check or group per request)
# stay bounded: past 1,000 check names a new one counts as its group's
# "(other)", past 1,000 groups "::(other)", past 10,000 distinct tag sets the
# outputs write url and name "(other)"; each warns once, naming the first
# folded, and the end counts what was folded; nothing is lost (the counts
# add up) and the summary stays short. (How fast: bench/outputs.sh.)
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8

# ---- 1,500 distinct check names, no output ----
S=$(script checks.lua <<'LUA'
local ll = require("luaload")
local exec = require("luaload.execution")
options = { vus = 1, iterations = 1500 }
function default()
  local i = exec.scenario.iterationInTest
  ll.check(i, { ["id " .. i .. " ok"] = function(v) return v % 3 ~= 0 end, ["always"] = function() return true end })
end
LUA
)
run_ll run "$S" --summary-export "$T/s.json" -o "json=$T/checks.json"
expect_eq "checks: exit 0" "$RC" 0
expect_eq "checks: one warning" "$(grep -c 'more than 1000 distinct checks: the results' "$ERR")" 1
expect_match "checks: it names the first folded check" "$ERR" 'the results of the check "id 999 ok" and of every later new one are counted as the check "\(other\)"'
expect_match "checks: the end counts them" "$ERR" '^luaload: warning: 501 check results were counted as "\(other\)" \(more than 1000 distinct checks\)'
expect_eq "checks: 1,001 checks in the export (1,000 and (other))" "$(jqv "$T/s.json" '.root_group.checks | length')" 1001
expect_eq "checks: (other) has the folded results (passes)" "$(jqv "$T/s.json" '.root_group.checks["(other)"].passes')" 334
expect_eq "checks: ... and fails" "$(jqv "$T/s.json" '.root_group.checks["(other)"].fails')" 167
expect_eq "checks: the checks rate counts them all" "$(jqv "$T/s.json" '.metrics.checks.passes + .metrics.checks.fails')" 3000
expect_eq "checks: the samples of folded checks carry check=(other)" \
  "$(grep -c '"metric":"checks".*"check":"(other)"' "$T/checks.json")" 501
expect_eq "checks: the summary lists 1,001 checks" "$(grep -c '^     [✓✗] ' "$OUT")" 1001

# ---- 1,500 distinct groups ----
S=$(script groups.lua <<'LUA'
local ll = require("luaload")
local exec = require("luaload.execution")
options = { vus = 1, iterations = 1500, summaryTrendStats = { "count" } }
function default()
  ll.group("order " .. exec.scenario.iterationInTest, function() end)
end
LUA
)
run_ll run "$S" --summary-export "$T/s.json"
expect_eq "groups: exit 0" "$RC" 0
expect_eq "groups: one warning" "$(grep -c 'more than 1000 distinct groups: the group' "$ERR")" 1
expect_match "groups: it names the first folded group" "$ERR" 'the group "::order 1000" and every later new one are counted as the group "::\(other\)"'
expect_match "groups: the end counts them" "$ERR" '^luaload: warning: 500 group runs were counted as "::\(other\)" \(more than 1000 distinct groups\)'
expect_eq "groups: 1,001 groups in the export" "$(jqv "$T/s.json" '.root_group.groups | length')" 1001
expect_eq "groups: group_duration counts every run" "$(jqv "$T/s.json" '.metrics.group_duration.count')" 1500

# ---- 10,500 distinct URLs with -o json and csv ----
start_serve
S=$(script urls.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
local client = http.Client{}
options = { vus = 1, iterations = 10500 }
function default() client:get("$URL/item/" .. exec.scenario.iterationInTest) end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json" -o "json=$T/urls.json" -o "csv=$T/urls.csv"
expect_eq "urls: exit 0" "$RC" 0
expect_eq "urls: no sample dropped" "$(grep -c 'could not keep up' "$ERR")" 0
expect_eq "urls: one warning" "$(grep -c 'the outputs have seen 10000 distinct tag sets' "$ERR")" 1
expect_match "urls: it names the first folded URL and says to set a name tag" "$ERR" \
  "\\(the first: name=$URL/item/[0-9]+\\)\\. .*give such requests a name tag"
FOLDED=$(sed -n 's/^luaload: warning: \([0-9]*\) samples went to the outputs with their url and name tags folded.*/\1/p' "$ERR")
expect_eq "urls: json: the end counts every folded sample" "$(grep -c '"url":"(other)"' "$T/urls.json")" "$FOLDED"
expect_eq "urls: csv: the same samples" "$(grep -c ',(other),' "$T/urls.csv")" "$FOLDED"
expect_eq "urls: every request written" "$(grep -c '^{"metric":"http_reqs"' "$T/urls.json")" 10500
expect_cmp "urls: ... up to 10,000 with their URL (a few tag sets are not requests)" "x >= 9900 && x <= 10000" \
  "$(grep '^{"metric":"http_reqs"' "$T/urls.json" | grep -c "\"url\":\"$URL/item/")"
expect_cmp "urls: ... the rest folded (at least the 500 past 10,000)" "x >= 500" \
  "$(grep '^{"metric":"http_reqs"' "$T/urls.json" | grep -c '"url":"(other)","name":"(other)"\|"name":"(other)".*"url":"(other)"')"
finish
