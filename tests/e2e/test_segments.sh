#!/usr/bin/env bash
# Execution segments (--shard, --execution-segment, --execution-segment-sequence,
# options.executionSegment): a test split over instances runs, in all, exactly
# what one instance runs; iteration_in_test and id_in_test are unique across
# the parts; a part with no share of a scenario says so; bad values exit 104.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script seg.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
local client = http.Client{}
local req = http.Request("$URL/")
options = { scenarios = {
  shared = { executor = "shared-iterations", vus = 7, iterations = 1001, exec = "work" },
  pervu = { executor = "per-vu-iterations", vus = 5, iterations = 4, exec = "work" },
  rate = { executor = "constant-arrival-rate", rate = 40, timeUnit = "1s", duration = "2s",
           preAllocatedVUs = 6, exec = "work" },
} }
function work()
  local res = client:get(req)
  http.checkstatus(200, res)
  console.log(exec.scenario.name .. " " .. exec.scenario.iteration_in_test .. " " .. exec.vu.id_in_test)
end
LUA
)
served() { curl -s "$URL/stats" | jq .requests; }
# msgs FILE: the messages of the console lines in FILE ("scenario iteration_in_test id_in_test")
msgs() { sed -n 's/.*msg="\([^"]*\)".*/\1/p' "$1"; }

# the whole test in one process
run_ll run "$S" -q --no-summary --summary-export "$T/whole.json" --console-output "$T/whole.log"
expect_eq "whole: exit 0" "$RC" 0
expect_eq "whole: 1001 + 20 + 80 iterations" "$(jqv "$T/whole.json" .metrics.iterations.count)" 1101
expect_eq "whole: iteration_in_test of each scenario is 0..N-1" \
  "$(msgs "$T/whole.log" | awk '{print $1, $2}' | sort -u | wc -l)" 1101

# four parts at once, each --shard i/4
before=$(served)
pids=()
for i in 1 2 3 4; do
  timeout -k 5 60 "$LUALOAD" run "$S" --shard "$i/4" --no-summary --summary-export "$T/part$i.json" \
    --console-output "$T/part$i.log" >"$T/part$i.out" 2>&1 &
  pids+=($!)
done
rcs=
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
expect_eq "4 parts: each exits 0" "$rcs" 0000
sum() { jq -s "map($1) | add" "$T"/part[1-4].json; }
expect_eq "4 parts: iterations add up to one process's" "$(sum .metrics.iterations.count)" 1101
expect_eq "4 parts: http_reqs add up to one process's" "$(sum .metrics.http_reqs.count)" 1101
expect_eq "4 parts: serve counted the same" "$(($(served) - before))" 1101
for i in 1 2 3 4; do msgs "$T/part$i.log" >"$T/part$i.msgs"; done
cat "$T"/part[1-4].msgs >"$T/parts.log"
msgs "$T/whole.log" >"$T/whole.msgs"
expect_eq "4 parts: iteration_in_test unique across the parts" "$(awk '{print $1, $2}' "$T/parts.log" | sort -u | wc -l)" 1101
# striped by the re-segmented tuple (k6's): shared-iterations and arrival rates
# give each global iteration to exactly one part; per-vu-iterations numbers
# each part's own iterations by the segment, unique but not 0..N-1
expect_eq "4 parts: shared and arrival-rate iteration_in_test are one process's" \
  "$(awk '$1 != "pervu" {print $1, $2}' "$T/parts.log" | sort | md5sum)" \
  "$(awk '$1 != "pervu" {print $1, $2}' "$T/whole.msgs" | sort | md5sum)"
expect_eq "4 parts: shared-iterations split by VUs (2+2+2+1 of 7)" \
  "$(for i in 1 2 3 4; do awk '$1 == "shared" {print $3}' "$T/part$i.msgs" | sort -u | wc -l; done | tr -d ' \n')" 2221
vus_local=$(for i in 1 2 3 4; do awk '{print $3}' "$T/part$i.msgs" | sort -u | wc -l; done | awk '{n += $1} END {print n}')
expect_eq "4 parts: id_in_test unique across the parts" "$(awk '{print $3}' "$T/parts.log" | sort -u | wc -l)" \
  "$vus_local"
expect_match "banner names the segment" "$T/part2.out" 'segment: 1/4:1/2 of 0,1/4,1/2,3/4,1'

# four parts started --paused, each with k6's REST status API, released together
before=$(served)
pids=() ports=()
for i in 1 2 3 4; do
  ports+=("$(free_port)")
  timeout -k 5 60 "$LUALOAD" run "$S" --shard "$i/4" --paused --address "127.0.0.1:${ports[i - 1]}" -q --no-summary \
    --summary-export "$T/paused$i.json" >"$T/paused$i.out" 2>&1 &
  pids+=($!)
done
status() { curl -s --max-time 2 "http://127.0.0.1:$1/v1/status"; }
for p in "${ports[@]}"; do
  for _ in $(seq 50); do status "$p" | grep -q '"paused":true' && break; sleep 0.1; done
done
ready=0
for p in "${ports[@]}"; do status "$p" | jq -e '.data.attributes | .status == 4 and .paused and (.running | not)' >/dev/null && ready=$((ready + 1)); done
expect_eq "paused: all 4 report k6's PausedBeforeRun (status 4, paused, not running)" "$ready" 4
sleep 0.5
expect_eq "paused: no request sent before the release" "$(($(served) - before))" 0
for p in "${ports[@]}"; do
  curl -s --max-time 2 -X PATCH -H 'Content-Type: application/json' \
    -d '{"data":{"type":"status","id":"default","attributes":{"paused":false}}}' "http://127.0.0.1:$p/v1/status" >"$T/patch.json"
done
expect_eq "PATCH answers with the status, paused false" "$(jq -r .data.attributes.paused "$T/patch.json")" false
rcs=
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
expect_eq "released: each part exits 0" "$rcs" 0000
expect_eq "released: iterations add up to one process's" \
  "$(jq -s 'map(.metrics.iterations.count) | add' "$T"/paused[1-4].json)" 1101
expect_eq "released: serve counted the same" "$(($(served) - before))" 1101
port=$(free_port)
timeout -k 5 60 "$LUALOAD" run "$S" --paused --address "127.0.0.1:$port" --shard 1/4 -q --no-summary >/dev/null 2>&1 &
api_pid=$!
for _ in $(seq 50); do status "$port" | grep -q paused && break; sleep 0.1; done
expect_eq "GET /v1/nope is 404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/nope")" 404
expect_eq "PATCH with a broken body is 400" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH -d '{' "http://127.0.0.1:$port/v1/status")" 400
curl -s -X PATCH -d '{"data":{"attributes":{"paused":false}}}' "http://127.0.0.1:$port/v1/status" >/dev/null
wait "$api_pid"
expect_eq "released by a PATCH: exit 0" "$?" 0
# the API on IPv6 loopback, where the machine has one
if port6=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0)); print(s.getsockname()[1])' 2>/dev/null); then
  timeout -k 5 60 "$LUALOAD" run "$S" --paused --address "[::1]:$port6" --shard 4/4 -q --no-summary >/dev/null 2>&1 &
  api_pid=$!
  for _ in $(seq 50); do curl -gs --max-time 2 "http://[::1]:$port6/v1/status" | grep -q paused && break; sleep 0.1; done
  expect_eq "--address [::1]:port: the status on IPv6" \
    "$(curl -gs --max-time 2 "http://[::1]:$port6/v1/status" | jq -r .data.attributes.status)" 4
  curl -gs -X PATCH -d '{"data":{"attributes":{"paused":false}}}' "http://[::1]:$port6/v1/status" >/dev/null
  wait "$api_pid"
  expect_eq "--address [::1]:port: released, exit 0" "$?" 0
fi
# --start-at: a Unix time to start at, a second from now
Q=$(script quick.lua <<LUA
options = { iterations = 1 }
function default() end
LUA
)
at=$(($(date +%s) + 2))
run_ll run "$Q" --start-at "$at" -q --no-summary
expect_eq "--start-at: exit 0" "$RC" 0
expect_cmp "--start-at: started no earlier than asked" "x >= 0" "$(($(date +%s) - at))"
bad_flag() { run_ll run "$S" "$@"; expect_eq "$* : exit 104" "$RC" 104; }
bad_flag --start-at soon
bad_flag --paused --address 127.0.0.1:99999

# the same part given as a segment and a sequence, in percentages
run_ll run "$S" --execution-segment 25%:50% --execution-segment-sequence 0,25%,50%,75%,100% -q --no-summary \
  --summary-export "$T/pct.json"
expect_eq "25%:50% of 0,25%,...: the part --shard 2/4 runs" "$(jqv "$T/pct.json" .metrics.iterations.count)" \
  "$(jqv "$T/part2.json" .metrics.iterations.count)"
# as script options; the command line wins over them
O=$(script opts.lua <<LUA
options = { executionSegment = "1/2:1", executionSegmentSequence = "0,1/2,1", vus = 3, iterations = 10 }
function default() end
LUA
)
run_ll run "$O" -q --no-summary --summary-export "$T/o.json"
expect_eq "options.executionSegment 1/2:1 of 10 iterations over 3 VUs: 3" "$(jqv "$T/o.json" .metrics.iterations.count)" 3
run_ll run "$O" --shard 1/2 -q --no-summary --summary-export "$T/o.json"
expect_eq "--shard 1/2 wins over the options: 7" "$(jqv "$T/o.json" .metrics.iterations.count)" 7

# a part with no share: 7 VUs over 8 parts leaves the 8th without shared-iterations
run_ll run "$S" --shard 8/8 --no-summary --summary-export "$T/p8.json" --console-output "$T/p8.log"
expect_eq "8/8: exit 0" "$RC" 0
expect_match "8/8: says it runs nothing of shared" "$OUT" 'shared: .*none of it in this segment'
expect_eq "8/8: no shared iterations" "$(msgs "$T/p8.log" | grep -c '^shared ')" 0
t=0
for i in 1 2 3 4 5 6 7 8; do
  run_ll run "$S" --shard "$i/8" -q --no-summary --summary-export "$T/p.json"
  t=$((t + $(jqv "$T/p.json" '.metrics.iterations.count // 0')))
done
expect_eq "8 parts, one of them empty for two scenarios: still 1101 in all" "$t" 1101

# setup() once, its result handed to every part, teardown() in one of them
D=$(script setup.lua <<LUA
options = { vus = 4, iterations = 40 }
function setup() console.log("setup ran"); return { token = "abc", n = 42 } end
function default(d) if d.token ~= "abc" or d.n ~= 42 then error("bad setup data") end end
function teardown(d) console.log("teardown ran with " .. d.token) end
LUA
)
run_ll run "$D" --setup-only --setup-data-out "$T/setup.json" -q --console-output "$T/setup.log"
expect_eq "--setup-only: exit 0" "$RC" 0
expect_eq "--setup-only: setup's result in the file" "$(jq -cS . "$T/setup.json")" '{"n":42,"token":"abc"}'
expect_eq "--setup-only: no iterations" "$(grep -c 'iterations' "$OUT")" 0
for i in 1 2; do
  flags=(--setup-data "$T/setup.json")
  ((i == 2)) && flags+=(--no-teardown)
  run_ll run "$D" --shard "$i/2" "${flags[@]}" -q --no-summary --summary-export "$T/sd$i.json" --console-output "$T/sd$i.log"
  expect_eq "--setup-data, part $i: exit 0 (no script error: the data arrived)" "$RC" 0
done
expect_eq "--setup-data: 40 iterations in all" \
  "$(($(jqv "$T/sd1.json" .metrics.iterations.count) + $(jqv "$T/sd2.json" .metrics.iterations.count)))" 40
expect_eq "setup() ran once in all" "$(cat "$T"/setup.log "$T"/sd[12].log | grep -c 'setup ran')" 1
expect_eq "teardown() ran once, with setup's data" "$(cat "$T"/sd[12].log | grep -c 'teardown ran with abc')" 1
echo '{bad' >"$T/bad.json"
run_ll run "$D" --setup-data "$T/bad.json"
expect_eq "--setup-data with a broken file: exit 104" "$RC" 104
expect_match "--setup-data with a broken file: says so" "$ERR" 'setup-data .*bad.json: not JSON'

# bad values: one line naming the flag, exit 104
bad() {
  local label=$1 want=$2; shift 2
  run_ll run "$S" "$@"
  expect_eq "$label: exit 104" "$RC" 104
  expect_match "$label: says why" "$ERR" "$want"
}
bad "--shard 0/4" '--shard "0/4": i \(0\) must be from 1 to N' --shard 0/4
bad "--shard 2" '--shard "2": expected i/N' --shard 2
bad "--execution-segment 1/2:1/4" 'the start \(1/2\) must be below the end' --execution-segment 1/2:1/4
bad "--execution-segment 1/3:1/2 of 0,1/4,1/2,1" 'not one of the segments' --execution-segment 1/3:1/2 \
  --execution-segment-sequence 0,1/4,1/2,1
bad "--execution-segment-sequence 0,1/2,1/3" 'points must increase' --execution-segment-sequence 0,1/2,1/3
bad "--shard with --execution-segment" 'not both' --execution-segment 0:1/2 --shard 1/2
LUALOAD_EXECUTION_SEGMENT=abc run_ll run "$S"
expect_eq "LUALOAD_EXECUTION_SEGMENT=abc: exit 104" "$RC" 104
expect_match "LUALOAD_EXECUTION_SEGMENT=abc: names the variable" "$ERR" 'LUALOAD_EXECUTION_SEGMENT "abc"'
finish
