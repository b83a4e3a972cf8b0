#!/usr/bin/env bash
# arrival.sh -- how precise is the open model? A constant-arrival-rate
# scenario at RATE iterations/s for DUR seconds against `luaload serve`
# (client on CPU 1, server on CPU 0, one worker), then: the achieved rate
# against the target, dropped iterations, and the start lag (how late each
# iteration began against its schedule). Targets: rate within 1%, p(99)
# start lag under 2 ms.
#
# Knobs: RATE(10000) DUR(10) LUALOAD(build/luaload) CLIENT_CPU(1) SERVER_CPU(0)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
RATE=${RATE:-10000}
DUR=${DUR:-10}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
[[ -x $LUALOAD ]] || { echo "arrival.sh: build luaload first" >&2; exit 2; }
((DUR >= 1 && DUR <= 60)) || { echo "arrival.sh: DUR must be 1..60" >&2; exit 2; }
SCR=$(mktemp -d -t luaload-arrival.XXXXXX)
SERVER=
cleanup() {
  [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$ROOT/scripts/serve-lib.sh"
ll_start_serve "$SCR/serve.out" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1
started=$?
SERVER=$LL_SERVE_PID PORT=$LL_SERVE_PORT
((started == 0)) || exit 1
cat >"$SCR/rate.lua" <<LUA
local http = require("luaload.http")
options = {
  scenarios = { open = { executor = "constant-arrival-rate", rate = $RATE, timeUnit = "1s",
                         duration = "${DUR}s", preAllocatedVUs = 200, maxVUs = 2000 } },
  summaryTrendStats = { "avg", "med", "p(90)", "p(99)", "p(99.9)", "max" },
}
local client = http.Client{}
local req = http.Request("http://127.0.0.1:$PORT/")
function default() client:get(req) end
LUA
taskset -c "$CLIENT_CPU" timeout -k 5 $((DUR + 60)) "$LUALOAD" run "$SCR/rate.lua" -w 1 -q --no-summary \
  --summary-export "$SCR/s.json" || { echo "arrival.sh: luaload failed" >&2; exit 1; }
jq -r --argjson rate "$RATE" --argjson dur "$DUR" '
  .metrics as $m
  | ($m.iterations.count // 0) as $it
  | ($m.dropped_iterations.count // 0) as $dr
  | ($it / $dur) as $achieved
  | "target \($rate)/s for \($dur)s: \($it) iterations started (\($achieved)/s, \((($achieved / $rate - 1) * 100 * 100 | round) / 100)%), \($dr) dropped",
    "start lag ms: avg \($m.iteration_start_lag.avg) med \($m.iteration_start_lag.med) p(90) \($m.iteration_start_lag["p(90)"]) p(99) \($m.iteration_start_lag["p(99)"]) p(99.9) \($m.iteration_start_lag["p(99.9)"]) max \($m.iteration_start_lag.max)",
    "iteration_duration p(99) \($m.iteration_duration["p(99)"]) ms, corrected p(99) \($m.iteration_duration_corrected["p(99)"]) ms",
    "rate within 1%: \(if (($achieved / $rate - 1) | fabs) <= 0.01 then "ok" else "MISSED" end); p(99) start lag < 2 ms: \(if $m.iteration_start_lag["p(99)"] < 2 then "ok" else "MISSED" end)"
' "$SCR/s.json"
