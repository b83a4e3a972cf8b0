#!/usr/bin/env bash
# outputs.sh -- what the outputs cost a run: the same scripted test with no
# output, with -o json, with -o experimental-prometheus-rw (against Debian's
# Prometheus started here on loopback), --out hdrlog, --out html and
# -o web-dashboard (pushing every second, a curl reading its events), alternating
# REPS times. Target: luaload serve (1 thread) on SERVER_CPU; Prometheus on
# SERVER_CPU too; the client (-w 1) on CLIENT_CPU. For each: req/s, client
# CPU µs per request, peak RSS, and the samples the outputs dropped.
#
# Knobs: DUR(10) VUS(50) REPS(3) CLIENT_CPU(1) SERVER_CPU(0) PORT(18495)
#   LUALOAD(build/luaload) CASES("none json promrw hdrlog html dashboard")
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
DUR=${DUR:-10}
VUS=${VUS:-50}
REPS=${REPS:-3}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
PORT=${PORT:-18495}
CASES=${CASES:-none json promrw hdrlog html dashboard}
URL=http://127.0.0.1:$PORT/

die() { echo "outputs.sh: $*" >&2; exit 1; }
for t in taskset jq curl prometheus /usr/bin/time; do command -v "$t" >/dev/null || die "needs $t (scripts/setup.sh)"; done
[[ -x $LUALOAD ]] || die "no $LUALOAD: build first"
SCR=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$SCR"; }
trap cleanup EXIT

taskset -c "$SERVER_CPU" "$LUALOAD" serve --port "$PORT" --threads 1 2>"$SCR/serve.err" &
PIDS+=($!)
: >"$SCR/prometheus.yml"
taskset -c "$SERVER_CPU" prometheus --config.file="$SCR/prometheus.yml" --storage.tsdb.path="$SCR/tsdb" \
  --web.listen-address="127.0.0.1:$((PORT + 1))" --web.enable-remote-write-receiver >"$SCR/prom.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "$URL" && curl -s "http://127.0.0.1:$((PORT + 1))/-/ready" | grep -q Ready && break
  sleep 0.1
done
export K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:$((PORT + 1))/api/v1/write

cat >"$SCR/test.lua" <<LUA
local http = require("luaload.http")
local client = http.Client{}
local req = http.Request("$URL")
options = { vus = $VUS, duration = "${DUR}s" }
function default() local res = client:get(req); http.checkstatus(200, res) end
LUA

flags() {
  case $1 in
    none) ;;
    json) echo "-o json=$SCR/samples.json" ;;
    promrw) echo "-o experimental-prometheus-rw" ;;
    hdrlog) echo "--out hdrlog=$SCR/run.hlog" ;;
    html) echo "--out html=$SCR/report.html" ;;
    dashboard) echo "-o web-dashboard=port=$((PORT + 2))&period=1s" ;;
  esac
}

echo "# luaload serve (1 thread) and Prometheus on cpu $SERVER_CPU, the client on cpu $CLIENT_CPU, $VUS VUs, ${DUR}s, $REPS reps"
printf '%-8s %10s %12s %10s %s\n' case req/s cpu_us/req rss_MiB dropped
for ((r = 1; r <= REPS; r++)); do
  for c in $CASES; do
    if [[ $c == dashboard ]]; then # a browser's place: read the event stream while it runs
      (sleep 1; timeout $((DUR + 5)) curl -sN "http://127.0.0.1:$((PORT + 2))/events" >/dev/null 2>&1) &
    fi
    # shellcheck disable=SC2046
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %M" -o "$SCR/time" "$LUALOAD" run "$SCR/test.lua" -w 1 -q \
      --no-summary --summary-export "$SCR/sum.json" $(flags "$c") >"$SCR/out" 2>&1
    read -r u s m <"$SCR/time"
    reqs=$(jq .metrics.http_reqs.count "$SCR/sum.json")
    rate=$(jq .metrics.http_reqs.rate "$SCR/sum.json")
    dropped=$(sed -n 's/.*outputs could not keep up: \([0-9]*\).*/\1/p' "$SCR/out")
    printf '%-8s %10.0f %12.2f %10d %s\n' "$c" "$rate" "$(awk -v u="$u" -v s="$s" -v n="$reqs" 'BEGIN {print (u + s) * 1e6 / n}')" \
      "$((m / 1024))" "${dropped:-0}"
    rm -f "$SCR/samples.json" "$SCR"/run.hlog* "$SCR/report.html"
  done
done
