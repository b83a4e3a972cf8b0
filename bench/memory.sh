#!/usr/bin/env bash
# memory.sh -- does luaload's memory stay flat over a long run at full speed?
#
# Runs luaload (VUS VUs, one worker, every built-in metric, a threshold and
# a sub-metric, so snapshots are published every second) against
# `luaload serve` for DUR seconds (default 600), client on CPU 1 and server
# on CPU 0, samples the client's RSS every 10 s and prints it, then the
# RSS after the first minute against the RSS at the end. Target: within 10%.
#
# Knobs: DUR(600) VUS(50) LUALOAD(build/luaload) CLIENT_CPU(1) SERVER_CPU(0)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
DUR=${DUR:-600}
VUS=${VUS:-50}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
[[ -x $LUALOAD ]] || { echo "memory.sh: build luaload first" >&2; exit 2; }
((DUR >= 70 && DUR <= 3600)) || { echo "memory.sh: DUR must be 70..3600" >&2; exit 2; }
SCR=$(mktemp -d -t luaload-mem.XXXXXX)
SERVER= CLIENT=
cleanup() {
  [[ -n $CLIENT ]] && kill "$CLIENT" 2>/dev/null
  [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$ROOT/scripts/serve-lib.sh"
ll_start_serve "$SCR/serve.out" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1
started=$?
SERVER=$LL_SERVE_PID PORT=$LL_SERVE_PORT
((started == 0)) || exit 1
cat >"$SCR/load.lua" <<'LUA'
local http = require("luaload.http")
options = { thresholds = { http_req_duration = { "p(99)<10000" }, ["http_req_duration{status:200}"] = { "max<60000" } } }
local client = http.Client{}
local req = http.Request(__ENV.URL)
function default()
  http.checkstatus(200, client:get(req))
end
LUA
taskset -c "$CLIENT_CPU" timeout -k 5 $((DUR + 60)) "$LUALOAD" run "$SCR/load.lua" -e URL="http://127.0.0.1:$PORT/" \
  -u "$VUS" -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/s.json" &
CLIENT=$!
sleep 1
LPID=$(pgrep -P "$CLIENT" | head -1) # timeout's child: luaload itself
[[ -n $LPID ]] || { echo "memory.sh: luaload did not start" >&2; exit 1; }
printf 'elapsed_s\trss_KB\n'
first= last= t=0
while kill -0 "$LPID" 2>/dev/null; do
  sleep 10
  t=$((t + 10))
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$LPID/status" 2>/dev/null) || break
  [[ -z $rss ]] && break
  printf '%s\t%s\n' "$t" "$rss"
  [[ $t -eq 60 ]] && first=$rss
  last=$rss
done
wait "$CLIENT"
CLIENT=
reqs=$(jq -r .metrics.http_reqs.count "$SCR/s.json" 2>/dev/null)
echo "requests: $reqs in ${DUR}s"
awk -v a="$first" -v b="$last" 'BEGIN {
  if (a == "" || b == "") { print "not enough samples"; exit 1 }
  d = (b - a) / a * 100
  printf "RSS after 1 min: %d KB, at the end: %d KB, change %+.1f%% (target within 10%%: %s)\n", a, b, d, (d <= 10 && d >= -10) ? "ok" : "MISSED"
}'
