#!/usr/bin/env bash
# --out hdrlog and luaload merge: one part merged gives that part's own
# summary; four --shard parts, released together, merge to exactly one
# process's counts (serve agrees); merged percentiles are those of all the
# parts' histograms added by HdrHistogram's own Java tools; a threshold
# only the whole test fails makes merge exit 99 while every part exits 0;
# parts that do not belong together are refused (104); --out json and
# handle_summary work on merged data.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script merge.lua <<LUA
local http = require("luaload.http")
local luaload = require("luaload")
local client = http.Client{}
local req = http.Request("$URL/")
options = {
  scenarios = {
    shared = { executor = "shared-iterations", vus = 6, iterations = 1201, exec = "work" },
    rate = { executor = "constant-arrival-rate", rate = 100, timeUnit = "1s", duration = "2s",
             preAllocatedVUs = 20, exec = "work" },
  },
  thresholds = { http_reqs = { "count<1000" }, ["http_req_duration{scenario:rate}"] = { "p(99)<5000" } },
  summaryTrendStats = { "avg", "min", "med", "max", "p(75)", "p(90)", "p(95)", "p(97.5)", "count" },
}
function work()
  local res = client:get(req)
  luaload.check(res, { ["status 200"] = function(r) return r.status == 200 end })
end
LUA
)
served() { curl -s "$URL/stats" | jq .requests; }

# the whole test in one process: it fails the count threshold (1401 requests)
run_ll run "$S" -q --summary-export "$T/whole.json" --out "hdrlog=$T/whole.hlog"
expect_eq "whole: exit 99 (count<1000 fails)" "$RC" 99
expect_eq "whole: 1201 + 200 iterations" "$(jqv "$T/whole.json" .metrics.iterations.count)" 1401
expect_match "whole: the log's header" "$T/whole.hlog" '^#\[Histogram log format version 1.2\]'
expect_match "whole: a tagged V2 compressed interval" "$T/whole.hlog" '^Tag=http_req_duration,[0-9.]+,[0-9.]+,[0-9.]+,HISTFAAA'
expect_match "whole: a sub-metric has its own tag" "$T/whole.hlog" '^Tag=http_req_duration\{scenario:rate\},'
expect_eq "whole: the sidecar names its format" "$(jq -r .format "$T/whole.hlog.json")" luaload-hdrlog/1

# merging one part gives that part's own figures, text and export alike
run_ll merge "$T/whole.hlog" --summary-export "$T/m1.json"
expect_eq "merge of one part: exit 99 like the part" "$RC" 99
expect_eq "merge of one part: every metric as the part had it" \
  "$(jq -S .metrics "$T/m1.json" | md5sum)" "$(jq -S .metrics "$T/whole.json" | md5sum)"
expect_eq "merge of one part: the checks too" \
  "$(jq -S .root_group "$T/m1.json" | md5sum)" "$(jq -S .root_group "$T/whole.json" | md5sum)"
run_ll run "$S" --no-color --out "hdrlog=$T/again.hlog"
grep -F '....' "$OUT" >"$T/run.txt" # the metric lines, not the banner
run_ll merge "$T/again.hlog" --no-color
grep -F '....' "$OUT" >"$T/merge.txt"
expect_cmp "merge of one part: 15 metric lines or more" "x >= 15" "$(wc -l <"$T/run.txt")"
expect_eq "merge of one part: the same metric lines" "$(md5sum <"$T/merge.txt")" "$(md5sum <"$T/run.txt")"

# four parts, started paused, released together by k6's PATCH /v1/status
before=$(served)
pids=() ports=()
for i in 1 2 3 4; do
  ports+=("$(free_port)")
  timeout -k 5 60 "$LUALOAD" run "$S" --shard "$i/4" --paused --address "127.0.0.1:${ports[i - 1]}" -q \
    --no-summary --summary-export "$T/part$i.json" --out "hdrlog=$T/part$i.hlog" >"$T/part$i.out" 2>&1 &
  pids+=($!)
done
for p in "${ports[@]}"; do
  for _ in $(seq 50); do curl -s --max-time 2 "http://127.0.0.1:$p/v1/status" | grep -q '"paused":true' && break; sleep 0.1; done
done
for p in "${ports[@]}"; do
  curl -s --max-time 2 -X PATCH -d '{"data":{"type":"status","id":"default","attributes":{"paused":false}}}' \
    "http://127.0.0.1:$p/v1/status" >/dev/null
done
rcs=
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
expect_eq "4 parts: each exits 0 (each sent fewer than 1000 requests)" "$rcs" 0000
run_ll merge "$T"/part[1-4].hlog --summary-export "$T/m4.json" --out "json=$T/m4.jsonl"
expect_eq "merge of 4 parts: exit 99 (the whole test sent 1401 requests)" "$RC" 99
expect_match "merge of 4 parts: names the failed threshold" "$ERR" "threshold failed: http_reqs 'count<1000' \\(count=1401\\)"
expect_eq "merged http_reqs: one process's" "$(jqv "$T/m4.json" .metrics.http_reqs.count)" 1401
expect_eq "merged iterations: one process's" "$(jqv "$T/m4.json" .metrics.iterations.count)" 1401
expect_eq "merged http_reqs: what serve counted" "$(($(served) - before))" 1401
expect_eq "merged http_reqs: the sum of the parts'" "$(jq -s 'map(.metrics.http_reqs.count) | add' "$T"/part[1-4].json)" 1401
expect_eq "merged checks: every pass of every part" \
  "$(jq '.root_group.checks["status 200"].passes' "$T/m4.json")" 1401
expect_eq "merged http_req_duration count: the sum of the parts'" \
  "$(jqv "$T/m4.json" '.metrics.http_req_duration.count')" 1401
expect_eq "merged min: the least of the parts' mins" "$(jqv "$T/m4.json" .metrics.http_req_duration.min)" \
  "$(jq -s 'map(.metrics.http_req_duration.min) | min' "$T"/part[1-4].json)"
expect_eq "merged max: the greatest of the parts' maxes" "$(jqv "$T/m4.json" .metrics.http_req_duration.max)" \
  "$(jq -s 'map(.metrics.http_req_duration.max) | max' "$T"/part[1-4].json)"
expect_eq "vus_max: the parts' shares add up (6 + 20)" "$(jqv "$T/m4.json" .metrics.vus_max.value)" 26

# the merged percentiles are those of all the parts' intervals added up by
# HdrHistogram's HistogramLogProcessor (Debian's libhdrhistogram-java)
JAR=/usr/share/java/hdrhistogram.jar
if command -v java >/dev/null && [[ -r $JAR ]]; then
  grep -h '^Tag=http_req_duration,' "$T"/part[1-4].hlog | sed '1i #[Histogram log format version 1.2]' >"$T/all.hlog"
  java -cp "$JAR" org.HdrHistogram.HistogramLogProcessor -i "$T/all.hlog" -tag http_req_duration \
    -outputValueUnitRatio 1 >"$T/java.txt" 2>&1
  jval() { awk -v p="$1" '$2 + 0 == p {print $1 + 0; exit}' "$T/java.txt"; }
  expect_eq "java: total count of the parts' logs" "$(sed -n 's/.*Total count *= *\([0-9]*\).*/\1/p' "$T/java.txt")" 1401
  for p in 0.5:med 0.75:p\(75\) 0.9:p\(90\) 0.95:p\(95\) 0.975:p\(97.5\); do
    want=$(jval "${p%%:*}")
    got=$(jq -r ".metrics.http_req_duration[\"${p#*:}\"] * 1000 | round" "$T/m4.json")
    expect_eq "merged ${p#*:} equals HistogramLogProcessor's (µs)" "$got" "$want"
  done
  java -cp "$JAR" org.HdrHistogram.HistogramLogProcessor -i "$T/part1.hlog" -tag 'http_req_duration{scenario:rate}' \
    -outputValueUnitRatio 1 >"$T/java1.txt" 2>&1
  expect_eq "java reads a sub-metric's tag of one part's log" \
    "$(sed -n 's/.*Total count *= *\([0-9]*\).*/\1/p' "$T/java1.txt")" \
    "$(jq '.metrics[] | select(.name == "http_req_duration{scenario:rate}") | .count' "$T/part1.hlog.json")"
else
  echo "SKIP: java or $JAR missing (scripts/setup.sh installs them)"
  FAILS=$((FAILS + 1))
fi

# --out json of merged data: k6's JSON lines, one Point per sample
expect_eq "--out json: a Point per http_req_duration sample" \
  "$(jq -c 'select(.type == "Point" and .metric == "http_req_duration")' "$T/m4.jsonl" | wc -l)" 1401
expect_eq "--out json: the counter's points add up" \
  "$(jq -s 'map(select(.type == "Point" and .metric == "http_reqs") | .data.value) | add' "$T/m4.jsonl")" 1401
expect_eq "--out json: check points carry the check's tag" \
  "$(jq -c 'select(.metric == "checks" and .data.tags.check == "status 200")' "$T/m4.jsonl" | wc -l)" 1401

# handle_summary of the script, on the merged data
H=$(script hs.lua <<LUA
$(cat "$S")
function handle_summary(data)
  return { stdout = "merged requests: " .. data.metrics.http_reqs.values.count .. "\n" }
end
LUA
)
run_ll run "$H" --shard 1/2 -q --out "hdrlog=$T/h1.hlog"
run_ll run "$H" --shard 2/2 -q --out "hdrlog=$T/h2.hlog"
run_ll merge "$H" "$T/h1.hlog" "$T/h2.hlog"
expect_match "handle_summary sees the merged data" "$OUT" '^merged requests: 1401$'
expect_eq "handle_summary: exit 99, the threshold still judged" "$RC" 99

# parts that do not belong together
refuse() {
  local label=$1 want=$2; shift 2
  run_ll merge "$@"
  expect_eq "$label: exit 104" "$RC" 104
  expect_match "$label: says why" "$ERR" "$want"
}
refuse "a missing part" 'no part covers the segment 1/2:3/4' "$T/part1.hlog" "$T/part2.hlog" "$T/part4.hlog"
refuse "a part twice" 'segments overlap: 1/4:1/2' "$T"/part[1-4].hlog "$T/part2.hlog"
refuse "a part of another split" 'not a part of the same test' "$T"/part[1-4].hlog "$T/h1.hlog"
refuse "the whole and a part of a split" 'ran another --execution-segment-sequence' "$T/whole.hlog" "$T/part1.hlog"
refuse "another script given" 'is not the script the parts ran' "$H" "$T"/part[1-4].hlog
refuse "no sidecar" 'nope.hlog.json: No such file' "$T/nope.hlog"
head -c 300 "$T/part3.hlog" >"$T/cut.hlog"
cp "$T/part3.hlog.json" "$T/cut.hlog.json"
refuse "a truncated log" 'a truncated log' "$T/part1.hlog" "$T/part2.hlog" "$T/cut.hlog" "$T/part4.hlog"
sed 's/HISTFAAA/HISTFAAB/' "$T/part3.hlog" >"$T/bad.hlog"
cp "$T/part3.hlog.json" "$T/bad.hlog.json"
refuse "a damaged interval" 'bad.hlog:[0-9]+:' "$T/part1.hlog" "$T/part2.hlog" "$T/bad.hlog" "$T/part4.hlog"
echo '{}' >"$T/x.hlog.json"
refuse "not a sidecar" 'not a sidecar of luaload' "$T/x.hlog"
# a part that did not run all of its share is refused: interrupted, aborted
F=$(script failing.lua <<LUA
options = { iterations = 2 }
function setup() if __ENV.FAIL then error("setup fails") end end
function default() end
LUA
)
Z=$(script sleepy.lua <<LUA
local luaload = require("luaload")
options = { vus = 2, duration = "3s" }
function default() luaload.sleep(0.05) end
LUA
)
timeout -s INT 1.5 "$LUALOAD" run "$Z" --shard 1/2 -q --out "hdrlog=$T/int.hlog" >/dev/null 2>&1
expect_eq "an interrupted part still writes its sidecar" "$(jq -r .run.outcome.interrupted "$T/int.hlog.json")" true
run_ll run "$Z" --shard 2/2 -q --out "hdrlog=$T/int2.hlog"
refuse "an interrupted part" 'int.hlog: the part was interrupted by a signal' "$T/int.hlog" "$T/int2.hlog"
A=$(script abort.lua <<LUA
local luaload = require("luaload")
options = { iterations = 3 }
function default() luaload.abort("enough") end
LUA
)
run_ll run "$A" -q --out "hdrlog=$T/abort.hlog"
refuse "an aborted part" 'was aborted' "$T/abort.hlog"
# a run that fails before its end leaves nothing behind for merge
run_ll run "$F" -q --out "hdrlog=$T/stale.hlog"
expect_eq "a good run: its sidecar" "$(jq -r .format "$T/stale.hlog.json")" luaload-hdrlog/1
run_ll run "$F" -q -e FAIL=1 --out "hdrlog=$T/stale.hlog"
expect_eq "the same run failing in setup(): exit 107" "$RC" 107
refuse "the old sidecar is gone with it" 'stale.hlog.json: No such file' "$T/stale.hlog"
# the script is known by its text, not by how its path was written
LL_ABS=$(readlink -f "$LUALOAD")
(cd "$(dirname "$S")" && "$LL_ABS" run "./$(basename "$S")" --shard 1/2 -q --no-summary --out "hdrlog=$T/rel.hlog" >/dev/null 2>&1)
run_ll run "$S" --shard 2/2 -q --no-summary --out "hdrlog=$T/abs.hlog"
run_ll merge "$T/rel.hlog" "$T/abs.hlog" --no-summary
expect_eq "./script and /path/script are the same script" "$RC" 99
# numbers a sidecar cannot hold
jq '(.metrics[] | select(.name == "checks")) |= (.passes = 5 | .total = 2)' "$T/part1.hlog.json" >"$T/n1.hlog.json"
cp "$T/part1.hlog" "$T/n1.hlog"
refuse "passes above the total" 'checks has counts that are not whole numbers' "$T/n1.hlog" "$T"/part[2-4].hlog
jq '(.metrics[] | select(.name == "http_reqs")) |= (.samples = -3)' "$T/part1.hlog.json" >"$T/n2.hlog.json"
cp "$T/part1.hlog" "$T/n2.hlog"
refuse "a negative count" 'http_reqs has counts' "$T/n2.hlog" "$T"/part[2-4].hlog
run_ll merge "$T"/part[1-4].hlog --out influxdb=http://127.0.0.1:1/x --summary-export "$T/never.json"
expect_eq "merge --out of another type: exit 104" "$RC" 104
expect_eq "merge --out of another type: refused before anything is written" "$(test -e "$T/never.json" && echo yes || echo no)" no
run_ll merge
expect_eq "merge without parts: exit 104" "$RC" 104
run_ll merge "$T/whole.hlog" --vus 3
expect_eq "merge with a run flag: exit 104" "$RC" 104
expect_match "merge with a run flag: names it" "$ERR" 'merge: unknown flag --vus'
run_ll run "$S" --out hdrlog= -q
expect_eq "--out hdrlog= without a file: exit 104" "$RC" 104
run_ll run "$F" --out "hdrlog=$T/no/such/dir.hlog" -q
expect_eq "--out hdrlog to an unwritable path: exit 104" "$RC" 104
expect_match "--out hdrlog to an unwritable path: says so" "$ERR" 'cannot write .*no/such/dir.hlog'
finish
