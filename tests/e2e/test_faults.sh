#!/usr/bin/env bash
# The fault suite (ctest label "faults"): luaload against `luaload serve`
# injecting one fault at a time, then a seeded mix. In each case the run
# ends on time without a crash, http_reqs equals what the server received,
# every faulty request is failed with its error_code, the other requests
# are counted and succeed, and no fds leak.
source "$(dirname "$0")/lib.sh"

# fds of PID
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# run_faulty SCRIPT: runs it in the background, counts its fds at 0.8 s and
# 1.9 s; sets RC, ELAPSED, FD1, FD2 (summary in $T/f.json)
run_faulty() {
  local start p
  start=$(date +%s.%N)
  timeout -k 5 60 "$LUALOAD" run "$1" -q --summary-export "$T/f.json" >"$T/out.txt" 2>"$T/err.txt" &
  p=$!
  sleep 0.8
  FD1=$(fds "$(pgrep -P $p luaload || echo $p)")
  sleep 1.1
  FD2=$(fds "$(pgrep -P $p luaload || echo $p)")
  wait $p
  RC=$?
  ELAPSED=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
}

# count NAME: a counter of the summary; rate_passes NAME: a rate's passes
count() { jqv "$T/f.json" ".metrics[\"$1\"].count // 0"; }
passes() { jqv "$T/f.json" ".metrics[\"$1\"].passes // 0"; }

fault_script() { # FAULT ERROR_CODE
  script "f_$1.lua" <<LUA
local http = require("luaload.http")
local client = http.Client({ timeout = "1500ms" })
options = {
  -- gracefulStop over the 1.5 s timeout: a stall ends in its timeout, not cut
  scenarios = { f = { executor = "constant-vus", vus = 3, duration = "2s", gracefulStop = "2s" } },
  thresholds = {
    ["http_reqs{kind:fault}"] = { "count>=0" }, ["http_reqs{kind:normal}"] = { "count>=0" },
    ["http_req_failed{kind:fault}"] = { "rate>=0" }, ["http_req_failed{kind:normal}"] = { "rate>=0" },
    ["http_reqs{error_code:$2}"] = { "count>=0" }, ["http_reqs{error_code:1220}"] = { "count>=0" },
    ["http_reqs{error_code:1000}"] = { "count>=0" }, ["http_reqs{error_code:1050}"] = { "count>=0" },
  },
}
local normal, fault = { tags = { kind = "normal" } }, { tags = { kind = "fault" } }
function default()
  for _ = 1, 4 do client:get("$URL/", normal) end
  client:get("$URL/fault/$1", fault)
end
LUA
}

check_case() { # FAULT ERROR_CODE (0: the fault ends in a success)
  local f=$1 code=$2
  start_serve
  local s
  s=$(fault_script "$f" "$code")
  run_faulty "$s"
  curl -s "$URL/stats" >"$T/stats.json"
  kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=
  expect_eq "$f: exit 0" "$RC" 0
  expect_cmp "$f: ends on time" "x < 4.5" "$ELAPSED"
  expect_eq "$f: no crash, no error" "$(grep -c -i 'panic\|sanitizer\|segmentation' "$T/err.txt")" 0
  expect_eq "$f: http_reqs = requests the server received" "$(count http_reqs)" "$(jqv "$T/stats.json" .requests)"
  expect_eq "$f: faulty requests counted" "$(count 'http_reqs{kind:fault}')" "$(jqv "$T/stats.json" ".faults[\"$f\"] // 0")"
  expect_cmp "$f: some faults happened" "x >= 3" "$(count 'http_reqs{kind:fault}')"
  if [[ $code != 0 ]]; then
    expect_eq "$f: every faulty request failed" "$(passes 'http_req_failed{kind:fault}')" "$(count 'http_reqs{kind:fault}')"
    expect_eq "$f: error_code $code on each" "$(count "http_reqs{error_code:$code}")" "$(count 'http_reqs{kind:fault}')" || echo "       codes: 1000=$(count "http_reqs{error_code:1000}") 1220=$(count "http_reqs{error_code:1220}") 1050=$(count "http_reqs{error_code:1050}")"
  else
    expect_eq "$f: the faulty requests succeed" "$(passes 'http_req_failed{kind:fault}')" 0
  fi
  expect_eq "$f: the other requests succeed" "$(passes 'http_req_failed{kind:normal}')" 0
  expect_eq "$f: the other requests are counted" "$(count 'http_reqs{kind:normal}')" "$(jqv "$T/stats.json" '.routes.default // 0')"
  expect_cmp "$f: no fd leak ($FD1 then $FD2)" "x <= $FD1 + 3" "$FD2"
}

check_case reset 1220
check_case close-headers 1000
check_case close-body 1000
expect_match "close-body: the same message on both transports" "$T/err.txt" \
  "× the server closed the connection in the middle of the response body \(error_code 1000\)"
check_case garbage 1000
check_case stall 1050
check_case slow-headers 0
check_case slow-body 0
check_case huge-headers 0
check_case early-hints 0

# a seeded mix on every route: the counts still add up
start_serve --faults "reset=2%,close-headers=2%,close-body=2%,garbage=1%,slow-body=0.5%,stall=0.5%,huge-headers=1%,early-hints=2%" --seed 7
S=$(script mix.lua <<LUA
local http = require("luaload.http")
local client = http.Client({ timeout = "1500ms" })
options = { scenarios = { m = { executor = "constant-vus", vus = 4, duration = "2s", gracefulStop = "1s" } } }
function default() client:get("$URL/") end
LUA
)
run_faulty "$S"
curl -s "$URL/stats" >"$T/stats.json"
expect_eq "mix: exit 0" "$RC" 0
expect_cmp "mix: ends on time" "x < 4.5" "$ELAPSED"
expect_eq "mix: http_reqs = requests the server received" "$(count http_reqs)" "$(jqv "$T/stats.json" .requests)"
expect_eq "mix: failed = the failing faults injected" "$(passes http_req_failed)" \
  "$(jqv "$T/stats.json" '[.faults.reset, .faults["close-headers"], .faults["close-body"], .faults.garbage, .faults.stall] | map(. // 0) | add')"
expect_cmp "mix: no fd leak ($FD1 then $FD2)" "x <= $FD1 + 4" "$FD2"
finish
