#!/usr/bin/env bash
# --out html=FILE: one file that needs no network (uPlot and the data are in
# it), opened by Debian's headless Chromium from the disk: the page renders,
# draws its charts, shows the thresholds with their results and the same
# p(95) as the summary export; a screenshot of it is left in the build tree
# (tests/report.png) for the docs. A day-long run keeps a bounded number of
# points (timeline.c merges neighbours).
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || { echo "FAIL - chromium missing (scripts/setup.sh installs it)"; exit 1; }
start_serve
S=$(script report.lua <<LUA
local http = require("luaload.http")
local luaload = require("luaload")
options = { vus = 4, duration = "3s",
  thresholds = { http_req_duration = { "p(95)<1000" }, http_reqs = { "count<10" } } }
function default()
  local res = http.get("$URL/")
  luaload.group("home", function()
    luaload.check(res, { ["status is 200"] = function(r) return r.status == 200 end })
  end)
end
LUA
)
run_ll run "$S" -q --out "html=$T/report.html" --summary-export "$T/sum.json"
expect_eq "run: exit 99 (count<10 fails)" "$RC" 99
expect_cmp "report: one file under 2 MB" "x > 10000 && x < 2000000" "$(stat -c %s "$T/report.html")"
expect_eq "report: loads nothing from the network" \
  "$(grep -Eoc '(src|href)=["'\'']?(https?:)?//' "$T/report.html")" 0
expect_match "report: uPlot is inlined" "$T/report.html" 'uPlot'
# Chromium's own profile and cache in the scratch dir; no network needed
chrome() { timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$T/chrome" --virtual-time-budget=10000 "$@" "file://$T/report.html" 2>"$T/chrome.err"; }
chrome --dump-dom >"$T/dom.html"
expect_match "chromium: the page rendered" "$T/dom.html" 'data-rendered="1"'
expect_cmp "chromium: six charts drawn (canvas)" "x >= 6" "$(grep -o '<canvas' "$T/dom.html" | wc -l)"
expect_match "the thresholds table: p(95)<1000 passes" "$T/dom.html" 'p\(95\)&lt;1000</td><td><span class="ok">✓ pass'
expect_match "the thresholds table: count<10 fails" "$T/dom.html" 'count&lt;10</td><td><span class="fail">✗ fail'
p95=$(jq '.metrics.http_req_duration["p(95)"]' "$T/sum.json")
want=$(awk -v v="$p95" 'BEGIN { if (v >= 1000) printf "%.2fs", v / 1000; else if (v >= 1) printf "%.2fms", v; else printf "%.2fµs", v * 1000 }')
expect_match "the page's p(95) is the summary export's ($want)" "$T/dom.html" "id=\"duration-p95\"[^>]*>$want<"
expect_match "checks by group" "$T/dom.html" 'home</td><td>status is 200</td>'
expect_match "the run's header names the script" "$T/dom.html" "report.lua"
shot=$(dirname "$LUALOAD")/tests/report.png
mkdir -p "$(dirname "$shot")"
chrome --window-size=1280,2400 --screenshot="$shot" >/dev/null
expect_cmp "a screenshot in the build tree ($shot)" "x > 20000" "$(stat -c %s "$shot" 2>/dev/null || echo 0)"
# the scenarios' table: per scenario, from sub-metrics the summary does not show
S2=$(script two.lua <<LUA
local http = require("luaload.http")
options = { scenarios = {
  a = { executor = "shared-iterations", vus = 2, iterations = 300, exec = "fa" },
  b = { executor = "shared-iterations", vus = 1, iterations = 120, exec = "fb" } } }
function fa() http.get("$URL/", { tags = { name = "home" } }) end
function fb() http.get("$URL/status/404") end
LUA
)
run_ll run "$S2" --no-color --seed 7608793384989349 --out "html=$T/two.html" --summary-export "$T/two.json"
expect_eq "two scenarios: exit 0" "$RC" 0
expect_eq "the summary shows no per-scenario sub-metric" "$(grep -c 'scenario:' "$OUT")" 0
expect_eq "nor does the export" "$(jq '[.metrics | keys[] | select(test("scenario"))] | length' "$T/two.json")" 0
cp "$T/two.html" "$T/report.html"
chrome --dump-dom >"$T/two.dom"
expect_match "the scenarios' table: a, 300 requests" "$T/two.dom" '<tr><td>a</td><td>300</td>'
expect_match "the scenarios' table: b, 120 requests and iterations" "$T/two.dom" '<tr><td>b</td><td>120</td>.*<td>120</td></tr>'
expect_match "the scenarios' table: b's requests all failed (404)" "$T/two.dom" '<tr><td>b</td><td>120</td><td>[^<]*</td><td>100.00%</td>'
data=$(sed -n 's/.*id="data" type="application\/octet-stream">\([^<]*\)<.*/\1/p' "$T/two.html" | base64 -d | gzip -dc)
expect_eq "the run's seed, all 64 bits of it (a string: a JSON number would round it)" "$(jq -c .run.seed <<<"$data")" '"7608793384989349"'
expect_eq "responses by status per second: 300 of 200" \
  "$(jq '[.series.t as $t | .series.status["200"] | to_entries[] | .value * ($t[.key] - (if .key == 0 then 0 else $t[.key - 1] end))] | add | round' <<<"$data")" 300
expect_eq "responses by status per second: 120 of 404" \
  "$(jq '[.series.t as $t | .series.status["404"] | to_entries[] | .value * ($t[.key] - (if .key == 0 then 0 else $t[.key - 1] end))] | add | round' <<<"$data")" 120
expect_cmp "a status and an error-code chart drawn" "x >= 8" "$(grep -o '<canvas' "$T/two.dom" | wc -l)"
expect_eq "requests by error_code per second: 120 of 1404 (k6's code for a 404)" \
  "$(jq '[.series.t as $t | .series.errors["1404"] | to_entries[] | .value * ($t[.key] - (if .key == 0 then 0 else $t[.key - 1] end))] | add | round' <<<"$data")" 120
expect_eq "no other error code" "$(jq '.series.errors | keys | join(",")' <<<"$data")" '"1404"'
expect_match "the names' table: home (the name tag), 300 requests, none failed" "$T/two.dom" \
  '<table id="names-table">.*<tr><td>home</td><td>300</td><td>[^<]*</td><td>0.00%</td>'
expect_match "the names' table: an untagged request is named by its URL, all failed" "$T/two.dom" \
  "<tr><td>$URL/status/404</td><td>120</td><td>[^<]*</td><td>100.00%</td>"
expect_eq "the names' table has the two names, busiest first" "$(jq -c '[.names[] | [.name, .reqs]]' <<<"$data")" \
  "[[\"home\",300],[\"$URL/status/404\",120]]"
# past LL_TALLY_NAMES (40) names, the rest share one row
S3=$(script names.lua <<LUA
local http = require("luaload.http")
options = { vus = 1, iterations = 60 }
function default() http.get("$URL/?n=" .. require("luaload.execution").scenario.iterationInTest) end
LUA
)
run_ll run "$S3" -q --no-summary --out "html=$T/names.html"
data=$(sed -n 's/.*id="data" type="application\/octet-stream">\([^<]*\)<.*/\1/p' "$T/names.html" | base64 -d | gzip -dc)
expect_eq "60 names: 40 rows and other" "$(jq '.names | length' <<<"$data")" 41
expect_eq "60 names: other holds 20" "$(jq '.names[-1] | [.name, .reqs] | join(" ")' <<<"$data")" '"other 20"'

# from luaload merge: the parts' histograms make the series and the spectrum
for i in 1 2; do
  run_ll run "$S" --shard "$i/2" -q --no-summary --out "hdrlog=$T/part$i.hlog"
done
run_ll merge "$T/part1.hlog" "$T/part2.hlog" --no-summary --summary-export "$T/msum.json" --out "html=$T/report.html"
expect_eq "merge --out html: exit 99 as the whole test" "$RC" 99
chrome --dump-dom >"$T/mdom.html"
expect_match "merge's report rendered" "$T/mdom.html" 'data-rendered="1"'
p95=$(jq '.metrics.http_req_duration["p(95)"]' "$T/msum.json")
want=$(awk -v v="$p95" 'BEGIN { if (v >= 1000) printf "%.2fs", v / 1000; else if (v >= 1) printf "%.2fms", v; else printf "%.2fµs", v * 1000 }')
expect_match "merge's report: the merged p(95) ($want)" "$T/mdom.html" "id=\"duration-p95\"[^>]*>$want<"
expect_match "merge's report: the parts, in its header" "$T/mdom.html" '2 parts merged'
# merge's report has what one process's has: scenarios, names, codes, VUs, bytes
for i in 1 2; do
  run_ll run "$S2" --shard "$i/2" -q --no-summary --out "hdrlog=$T/two$i.hlog"
done
run_ll merge "$T/two1.hlog" "$T/two2.hlog" --no-summary --out "html=$T/report.html"
expect_eq "merge of two scenarios: exit 0" "$RC" 0
data=$(sed -n 's/.*id="data" type="application\/octet-stream">\([^<]*\)<.*/\1/p' "$T/report.html" | base64 -d | gzip -dc)
expect_eq "merged scenarios: a 300, b 120 requests and iterations" \
  "$(jq -c '[.scenarios[] | [.name, .reqs, .iterations]]' <<<"$data")" '[["a",300,300],["b",120,120]]'
expect_eq "merged names: home 300, the 404 URL 120 (all failed)" \
  "$(jq -c '[.names[] | [.reqs, .failed]]' <<<"$data")" '[[300,0],[120,1]]'
sum_series() { jq "[.series.t as \$t | $1 | to_entries[] | .value * (\$t[.key] - (if .key == 0 then 0 else \$t[.key - 1] end))] | add | round" <<<"$data"; }
expect_eq "merged responses by status: 300 of 200" "$(sum_series '.series.status["200"]')" 300
expect_eq "merged responses by status: 120 of 404" "$(sum_series '.series.status["404"]')" 120
expect_eq "merged requests by error_code: 120 of 1404" "$(sum_series '.series.errors["1404"]')" 120
expect_eq "merged requests per second add up to 420" "$(sum_series '.series.reqs')" 420
expect_cmp "merged VUs known (up to 3)" "x >= 1 && x <= 3" "$(jq '[.series.vus[] | select(. != null)] | max' <<<"$data")"
expect_cmp "merged bytes received known" "x > 0" "$(sum_series '.series.recv')"
chrome --dump-dom >"$T/m2.dom"
expect_match "merged report: the scenarios' table" "$T/m2.dom" '<tr><td>a</td><td>300</td>'
expect_match "merged report: the names' table" "$T/m2.dom" '<tr><td>home</td><td>300</td>'
run_ll run "$S" -q --out "html=$T/no/such/dir/r.html"
expect_eq "an unwritable report: exit 104 before the run, as every output" "$RC" 104
expect_match "an unwritable report: says so, naming the output" "$ERR" '^luaload: --out html=.*/no/such/dir/r.html: cannot write .*: No such file or directory'
finish
