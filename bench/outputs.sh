#!/usr/bin/env bash
# outputs.sh -- what the outputs cost a run: the same scripted test with no
# output, with -o json, -o csv, -o experimental-prometheus-rw (against
# Debian's Prometheus started here on loopback), -o influxdb (Debian's
# influxd, likewise), --out hdrlog, --out html and -o web-dashboard (pushing
# every second, a curl reading its events), alternating REPS times. Target:
# luaload serve (1 thread) on SERVER_CPU; Prometheus and InfluxDB on
# SERVER_CPU too; the client (-w 1) on CLIENT_CPU. For each: req/s and its
# ratio to the no-output run of the same URLs, client CPU µs per request,
# peak RSS, RSS at RSS_AT seconds and 1 s before the end (flat when the
# outputs keep what they hold bounded), the samples the outputs dropped and
# those whose tags they folded.
#
# URLS: "same" requests one URL; "unique" puts an id in every URL and no
# name tag (the most common mistake: a tag set per request; the outputs
# fold past 10,000 sets and Prometheus remote write past 2,000 series);
# "names" requests one URL inside a group and a check both named after the
# iteration (the same mistake without outputs: 1,000 checks and groups are
# kept, the rest counted as "(other)").
#
# Knobs: DUR(10) VUS(50) REPS(3) CLIENT_CPU(1) SERVER_CPU(0) PORT(18495)
#   URLS("same unique") RSS_AT(10, when DUR > RSS_AT + 1)
#   LUALOAD(build/luaload) CASES("none json csv promrw influxdb hdrlog html dashboard")
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
CASES=${CASES:-none json csv promrw influxdb hdrlog html dashboard}
URLS=${URLS:-same unique}
RSS_AT=${RSS_AT:-10}
URL=http://127.0.0.1:$PORT/

die() { echo "outputs.sh: $*" >&2; exit 1; }
for t in taskset jq curl prometheus influxd pgrep /usr/bin/time; do command -v "$t" >/dev/null || die "needs $t (scripts/setup.sh)"; done
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
mkdir -p "$SCR/influx"
cat >"$SCR/influx/influxdb.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$((PORT + 4))"
[meta]
  dir = "$SCR/influx/meta"
[data]
  dir = "$SCR/influx/data"
  wal-dir = "$SCR/influx/wal"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:$((PORT + 3))"
  log-enabled = false
[monitor]
  store-enabled = false
CONF
taskset -c "$SERVER_CPU" influxd -config "$SCR/influx/influxdb.conf" >"$SCR/influx/log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "$URL" && curl -s "http://127.0.0.1:$((PORT + 1))/-/ready" | grep -q Ready &&
    curl -s -o /dev/null "http://127.0.0.1:$((PORT + 3))/ping" && break
  sleep 0.1
done
export K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:$((PORT + 1))/api/v1/write

cat >"$SCR/same.lua" <<LUA
local http = require("luaload.http")
local client = http.Client{}
local req = http.Request("$URL")
options = { vus = $VUS, duration = "${DUR}s" }
function default() local res = client:get(req); http.checkstatus(200, res) end
LUA
cat >"$SCR/unique.lua" <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
local client = http.Client{}
options = { vus = $VUS, duration = "${DUR}s" }
function default()
  local res = client:get("${URL}item/" .. exec.vu.idInTest .. "-" .. exec.vu.iterationInInstance)
  http.checkstatus(200, res)
end
LUA
cat >"$SCR/names.lua" <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local exec = require("luaload.execution")
local client = http.Client{}
local req = http.Request("$URL")
options = { vus = $VUS, duration = "${DUR}s" }
function default()
  local id = exec.vu.idInTest .. "-" .. exec.vu.iterationInInstance
  ll.group("order " .. id, function()
    local res = client:get(req)
    ll.check(res, { ["order " .. id .. " is 200"] = function(r) return r.status == 200 end })
  end)
end
LUA

# rss PID: its resident set in MiB now
rss() { awk '/^VmRSS:/ { printf "%d", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo -; }

flags() {
  case $1 in
    none) ;;
    json) echo "-o json=$SCR/samples.json" ;;
    csv) echo "-o csv=$SCR/samples.csv" ;;
    influxdb) echo "-o influxdb=http://127.0.0.1:$((PORT + 3))/k6" ;;
    promrw) echo "-o experimental-prometheus-rw" ;;
    hdrlog) echo "--out hdrlog=$SCR/run.hlog" ;;
    html) echo "--out html=$SCR/report.html" ;;
    dashboard) echo "-o web-dashboard=port=$((PORT + 2))&period=1s" ;;
  esac
}

echo "# luaload serve (1 thread), Prometheus and InfluxDB on cpu $SERVER_CPU, the client on cpu $CLIENT_CPU, $VUS VUs, ${DUR}s, $REPS reps"
printf '%-7s %-9s %10s %8s %12s %8s %8s %8s %9s %s\n' urls case req/s vs_none cpu_us/req rss_MiB "rss@${RSS_AT}s" rss@end dropped folded
declare -A NONE
for ((r = 1; r <= REPS; r++)); do
  for u in $URLS; do
    for c in $CASES; do
      if [[ $c == dashboard ]]; then # a browser's place: read the event stream while it runs
        (sleep 1; timeout $((DUR + 5)) curl -sN "http://127.0.0.1:$((PORT + 2))/events" >/dev/null 2>&1) &
      fi
      # shellcheck disable=SC2046
      taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %M" -o "$SCR/time" "$LUALOAD" run "$SCR/$u.lua" -w 1 -q \
        --no-summary --summary-export "$SCR/sum.json" $(flags "$c") >"$SCR/out" 2>&1 &
      tpid=$!
      sleep 0.5
      lpid=$(pgrep -P "$tpid" | head -1)
      early=- late=-
      if ((DUR > RSS_AT + 1)); then
        sleep $((RSS_AT - 1)).5
        early=$(rss "$lpid")
        sleep $((DUR - RSS_AT - 1))
        late=$(rss "$lpid")
      fi
      wait "$tpid"
      read -r us s m <"$SCR/time"
      reqs=$(jq .metrics.http_reqs.count "$SCR/sum.json")
      rate=$(jq .metrics.http_reqs.rate "$SCR/sum.json")
      [[ $c == none ]] && NONE[$u]=$rate
      dropped=$(sed -n 's/.*outputs could not keep up: \([0-9]*\).*/\1/p' "$SCR/out")
      folded=$(sed -n 's/.*warning: \([0-9]*\) samples went to the .*/\1/p' "$SCR/out" | awk '{ n += $1 } END { print n + 0 }')
      printf '%-7s %-9s %10.0f %8s %12.2f %8d %8s %8s %9s %s\n' "$u" "$c" "$rate" \
        "$(awk -v a="$rate" -v b="${NONE[$u]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
        "$(awk -v u="$us" -v s="$s" -v n="$reqs" 'BEGIN {print (u + s) * 1e6 / n}')" \
        "$((m / 1024))" "$early" "$late" "${dropped:-0}" "${folded:-0}"
      rm -f "$SCR/samples.json" "$SCR/samples.csv" "$SCR"/run.hlog* "$SCR/report.html"
    done
  done
done
