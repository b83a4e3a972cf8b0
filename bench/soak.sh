#!/usr/bin/env bash
# soak.sh -- luaload at full speed for a long time against a target that
# injects a 1% fault mix: does memory, the fd count or throughput drift?
#
# Starts `luaload serve --faults ... --seed` pinned to SERVER_CPU, runs
# luaload (VUS constant VUs, one worker, pinned to CLIENT_CPU) for MINUTES,
# and samples every second: the server's /stats request count (throughput
# as the server saw it), luaload's VmRSS and its open fds. Prints:
#   - RSS at minute 1 and at the end (target: within 10%), and its max;
#   - fds: min and max after minute 1 (target: flat);
#   - requests per second per minute, first vs last minute, and the
#     coefficient of variation of the per-minute means (drift beyond noise);
#   - http_reqs (luaload) vs requests (server): they must be equal;
#   - the fault counts and luaload's failed requests.
#
# Knobs: MINUTES(30) VUS(50) CLIENT_CPU(1) SERVER_CPU(0) SEED(1)
#   LUALOAD(build/luaload) FAULTS(the mix below)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
MINUTES=${MINUTES:-30}
VUS=${VUS:-50}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
SEED=${SEED:-1}
# 1% in all; stalls and slow bodies are rare: each holds a VU for a second
FAULTS=${FAULTS:-reset=0.3%,close-headers=0.2%,close-body=0.2%,garbage=0.14%,huge-headers=0.05%,early-hints=0.1%,slow-body=0.005%,stall=0.005%}

die() { echo "soak.sh: $*" >&2; exit 2; }
for t in taskset jq curl awk; do command -v "$t" >/dev/null || die "$t not found"; done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
((MINUTES >= 2 && MINUTES <= 120)) || die "MINUTES must be 2..120"

SCR=$(mktemp -d -t luaload-soak.XXXXXX)
SERVE_PID= LL_PID=
cleanup() {
  [[ -n $LL_PID ]] && kill "$LL_PID" 2>/dev/null
  [[ -n $SERVE_PID ]] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] && echo "scratch kept: $SCR" >&2 || rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$ROOT/scripts/serve-lib.sh"
ulimit -n "$(ulimit -Hn)"
ll_start_serve "$SCR/serve.log" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1 --faults "$FAULTS" --seed "$SEED" \
  || die "serve did not start"
SERVE_PID=$LL_SERVE_PID
URL=http://127.0.0.1:$LL_SERVE_PORT

cat >"$SCR/soak.lua" <<'LUA'
local http = require("luaload.http")
local client = http.Client({ timeout = "1s" })
local req = http.Request(__ENV.URL .. "/")
function default()
  local res = client:get(req)
  http.checkstatus(200, res)
end
LUA

echo "# soak: $VUS VUs for ${MINUTES}m, faults $FAULTS (seed $SEED); serve on cpu $SERVER_CPU, luaload on cpu $CLIENT_CPU" >&2
taskset -c "$CLIENT_CPU" "$LUALOAD" run "$SCR/soak.lua" -e URL="$URL" -u "$VUS" -d "${MINUTES}m" -w 1 -q \
  --summary-export "$SCR/summary.json" >"$SCR/luaload.out" 2>"$SCR/luaload.err" &
LL_PID=$!

# about one line a second: t (seconds since the start) requests rss_kb fds
: >"$SCR/samples.tsv"
T0=$(date +%s.%N)
while kill -0 "$LL_PID" 2>/dev/null; do
  sleep 1
  t=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  reqs=$(curl -s -m 1 "$URL/stats" | jq -r .requests 2>/dev/null)
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$LL_PID/status" 2>/dev/null)
  fds=$(ls "/proc/$LL_PID/fd" 2>/dev/null | wc -l)
  [[ -n $rss ]] && printf '%s\t%s\t%s\t%s\n' "$t" "${reqs:-}" "$rss" "$fds" >>"$SCR/samples.tsv"
done
wait "$LL_PID"
LL_RC=$?
LL_PID=
STATS=$(curl -s "$URL/stats")

awk -F'\t' -v minutes="$MINUTES" '
  { t[NR] = $1; r[NR] = $2; rss[NR] = $3; fd[NR] = $4; n = NR }
  END {
    # requests and seconds between samples, by the minute the sample falls in
    for (i = 2; i <= n; i++) if (r[i] != "" && r[i-1] != "") { m = int(t[i] / 60); sum[m] += r[i] - r[i-1]; secs[m] += t[i] - t[i-1] }
    printf "minute\treq/s\n"
    for (m = 0; m < minutes; m++) if (secs[m] > 0) { mean[m] = sum[m] / secs[m]; printf "%d\t%.0f\n", m + 1, mean[m] }
    # the first and the last full minutes (the run ends a little after its last)
    first = 1; last = minutes - 1
    k = 0; s = 0; ss = 0
    for (m = first; m <= last; m++) if (secs[m] > 0) { k++; s += mean[m]; ss += mean[m] * mean[m] }
    mu = k ? s / k : 0; sd = k > 1 ? sqrt((ss - k * mu * mu) / (k - 1)) : 0
    for (i = 1; i <= n; i++) if (t[i] >= 60) { r1 = rss[i]; break }
    r_end = rss[n]; rmax = 0; fmin = 1e9; fmax = 0
    for (i = 1; i <= n; i++) { if (rss[i] > rmax) rmax = rss[i]; if (t[i] >= 60) { if (fd[i] < fmin) fmin = fd[i]; if (fd[i] > fmax) fmax = fd[i] } }
    printf "rss_kb\tminute 1: %d\tend: %d (%+.1f%%)\tmax: %d\n", r1, r_end, r1 ? (r_end - r1) * 100 / r1 : 0, rmax
    printf "fds\tafter minute 1: min %d max %d\n", fmin, fmax
    printf "req/s\tminute 2: %.0f\tminute %d: %.0f\tmean of minutes 2..%d: %.0f, cv %.1f%%\n", mean[first], last + 1, mean[last], last + 1, mu, mu ? sd * 100 / mu : 0
  }' "$SCR/samples.tsv"
echo "luaload exit $LL_RC; http_reqs $(jq -r .metrics.http_reqs.count "$SCR/summary.json"), failed $(jq -r .metrics.http_req_failed.passes "$SCR/summary.json"); server requests $(jq -r .requests <<<"$STATS") (the soak's /stats samples are not counted)"
echo "faults injected: $(jq -c .faults <<<"$STATS")"
tail -n 8 "$SCR/luaload.err" >&2
