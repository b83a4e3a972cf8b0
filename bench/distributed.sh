#!/usr/bin/env bash
# distributed.sh -- a test split in N parts (--shard i/N, started --paused and
# released together) against the same test in one process, then the cost of
# luaload merge on logs of an hour.
#
# Target: luaload serve with one thread pinned to SERVER_CPU. Clients pinned
# to CLIENT_CPU: one process with VUS VUs (-w 1), then N parts of it at once
# (each -w 1). For each: total requests/s (merged for the parts), client CPU
# µs per request (user+sys of all the processes / requests) and the merged
# http_reqs against serve's count. Then the merge of N logs of an hour: a
# part's log of DUR seconds, its intervals repeated to 3600 s (and its
# sidecar's totals scaled to match), merged N at a time: wall time and peak
# RSS of luaload merge, and the log sizes.
#
# Knobs: DUR(10) VUS(50) PARTS("2 4") REPS(2) CLIENT_CPU(1) SERVER_CPU(0)
#   PORT(18490) LUALOAD(build/luaload) HOUR(3600)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
DUR=${DUR:-10}
VUS=${VUS:-50}
PARTS=${PARTS:-2 4}
REPS=${REPS:-2}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
PORT=${PORT:-18490}
HOUR=${HOUR:-3600}
URL=http://127.0.0.1:$PORT/

die() { echo "distributed.sh: $*" >&2; exit 1; }
for t in taskset jq curl python3 /usr/bin/time; do command -v "$t" >/dev/null || die "needs $t (scripts/setup.sh)"; done
[[ -x $LUALOAD ]] || die "no $LUALOAD: build first"
SCR=$(mktemp -d)
SERVE_PID=
cleanup() { [[ -n $SERVE_PID ]] && kill "$SERVE_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$SCR"; }
trap cleanup EXIT

taskset -c "$SERVER_CPU" "$LUALOAD" serve --port "$PORT" --threads 1 2>"$SCR/serve.err" &
SERVE_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
curl -s -o /dev/null "$URL" || die "serve did not start"
served() { curl -s "${URL}stats" | jq .requests; }

cat >"$SCR/test.lua" <<LUA
local http = require("luaload.http")
local client = http.Client{}
local req = http.Request("$URL")
options = { scenarios = { s = { executor = "constant-vus", vus = $VUS, duration = "${DUR}s" } } }
function default() local res = client:get(req); http.checkstatus(200, res) end
LUA

# cpu_us FILE...: user+sys µs of the /usr/bin/time -f "%U %S" files
cpu_us() { cat "$@" | awk '{t += $1 + $2} END {printf "%.0f", t * 1e6}'; }

# run_parts N: the test in N parts (N=1: one process), each -w 1 on CLIENT_CPU;
# prints "req/s cpu_us_per_req merged_reqs served_reqs"
run_parts() {
  local n=$1 before pids=() ports=() i
  rm -f "$SCR"/p*.hlog* "$SCR"/time*
  before=$(served)
  for ((i = 1; i <= n; i++)); do
    local flags=(--out "hdrlog=$SCR/p$i.hlog" -w 1 -q --no-summary)
    if ((n > 1)); then
      ports+=("$((PORT + 10 + i))")
      flags+=(--shard "$i/$n" --paused --address "127.0.0.1:${ports[i - 1]}")
    fi
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S" -o "$SCR/time$i" "$LUALOAD" run "$SCR/test.lua" "${flags[@]}" \
      >"$SCR/out$i" 2>&1 &
    pids+=($!)
  done
  if ((n > 1)); then
    for p in "${ports[@]}"; do
      for _ in $(seq 100); do curl -s --max-time 1 "http://127.0.0.1:$p/v1/status" | grep -q '"paused":true' && break; sleep 0.05; done
    done
    for p in "${ports[@]}"; do
      curl -s --max-time 2 -X PATCH -d '{"data":{"attributes":{"paused":false}}}' "http://127.0.0.1:$p/v1/status" >/dev/null
    done
  fi
  for p in "${pids[@]}"; do wait "$p"; done
  "$LUALOAD" merge "$SCR"/p*.hlog --no-summary --summary-export "$SCR/merged.json" >/dev/null 2>&1
  local reqs rate
  reqs=$(jq .metrics.http_reqs.count "$SCR/merged.json")
  rate=$(jq .metrics.http_reqs.rate "$SCR/merged.json")
  echo "$rate $(awk -v c="$(cpu_us "$SCR"/time*)" -v r="$reqs" 'BEGIN {printf "%.2f", c / r}') $reqs $(($(served) - before))"
}

echo "# luaload serve (1 thread) on cpu $SERVER_CPU, clients on cpu $CLIENT_CPU, $VUS VUs, ${DUR}s, $REPS reps"
printf '%-10s %12s %14s %12s %12s\n' case req/s cpu_us/req merged served
declare -A best
for ((r = 1; r <= REPS; r++)); do
  for n in 1 $PARTS; do
    read -r rate cpu merged served < <(run_parts "$n")
    name=$([[ $n == 1 ]] && echo one || echo "parts-$n")
    printf '%-10s %12.0f %14s %12s %12s\n' "$name" "$rate" "$cpu" "$merged" "$served"
    [[ $merged == "$served" ]] || echo "# $name: merged http_reqs ($merged) differ from serve's count ($served)"
    awk -v a="$rate" -v b="${best[$n]:-0}" 'BEGIN {exit !(a > b)}' && best[$n]=$rate
  done
done
for n in $PARTS; do
  awk -v a="${best[$n]}" -v b="${best[1]}" -v n="$n" 'BEGIN {printf "# %d parts / one process (best of reps): %.2fx req/s\n", n, a / b}'
done

# ---- merge of logs of an hour ----
run_parts 4 >/dev/null
python3 - "$SCR" "$HOUR" "$DUR" <<'PY'
import json, sys, re
scr, hour, dur = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for i in range(1, 5):
    log, side = f"{scr}/p{i}.hlog", f"{scr}/p{i}.hlog.json"
    head, lines = [], []
    for l in open(log):
        (head if l.startswith(("#", '"')) else lines).append(l)
    # whole seconds of intervals, repeated until the hour is full
    span = max(float(l.split(",")[1]) + float(l.split(",")[2]) for l in lines)
    reps = max(1, int(hour // max(span, 1)))
    with open(f"{scr}/h{i}.hlog", "w") as f:
        f.writelines(head)
        for k in range(reps):
            for l in lines:
                tag, start, length, rest = l.split(",", 3)
                f.write(f"{tag},{float(start) + k * span:.3f},{length},{rest}")
    s = json.load(open(side))
    for m in s["metrics"]:
        for key in ("sum", "samples", "passes", "total", "count"):
            if key in m: m[key] *= reps
    s["duration_s"] *= reps
    s["hdrlog"] = f"h{i}.hlog"
    json.dump(s, open(f"{scr}/h{i}.hlog.json", "w"))
    print(f"# part {i}: {len(lines) * reps} interval lines ({reps} x {span:.0f}s)", file=sys.stderr)
PY
size=$(du -ch "$SCR"/h*.hlog | tail -1 | cut -f1)
/usr/bin/time -f "%e %M" -o "$SCR/merge.time" "$LUALOAD" merge "$SCR"/h*.hlog --no-summary \
  --summary-export "$SCR/hour.json" >/dev/null 2>&1
read -r wall rss <"$SCR/merge.time"
echo "# merge of 4 logs of ${HOUR}s ($size in all): ${wall}s, peak RSS $((rss / 1024)) MiB," \
  "$(jq .metrics.http_reqs.count "$SCR/hour.json") requests"
