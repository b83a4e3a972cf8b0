#!/usr/bin/env bash
# ws.sh -- WebSocket: luaload.ws against k6/ws, measured in one run.
#
# Starts `luaload serve --threads 1` pinned to SERVER_CPU; every client is
# pinned to CLIENT_CPU (k6 with GOMAXPROCS=1), as in compare.sh.
#
#   echo   ping-pong on /ws/echo: VUS VUs, one socket each, one message of
#          MSG_SIZE bytes sent at the open and again on each echo received,
#          for DUR seconds (the socket's set_timeout closes it): luaload
#          (luaload.ws, one worker) and k6 (k6/ws), alternating REPS times.
#          For each: echoes received per second, client CPU seconds
#          (user + sys, GNU time), echoes per client CPU second, peak RSS,
#          how busy the server's core was; then luaload / k6 per client core
#          (target >= 10).
#   mem    memory per idle open WebSocket: MEM_VUS VUs (one worker) each open
#          a socket on /ws/echo and idle for HOLD seconds (set_timeout closes
#          it), against the same VUs doing ll.sleep(HOLD) and no socket; the
#          difference in peak RSS over MEM_VUS (target <= 16 KiB per socket).
#          The most client sockets established at once (ss, every 0.5 s) is
#          printed, so a run where they did not all overlap shows. k6 the
#          same at K6_MEM_VUS (its VUs cost far more, so fewer).
#
# Knobs: DUR(8) VUS(50) MSG_SIZE(32) REPS(2) MEM_VUS(10000) K6_MEM_VUS(2000)
#   HOLD(10) CLIENT_CPU(1) SERVER_CPU(0) LUALOAD(build/luaload) K6()
#   CASES="echo mem" (subset)
# Run it under the shared lock: flock /tmp/luaload-cpu.lock bench/ws.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
K6=${K6:-}
DUR=${DUR:-8}
VUS=${VUS:-50}
MSG_SIZE=${MSG_SIZE:-32}
REPS=${REPS:-2}
MEM_VUS=${MEM_VUS:-10000}
K6_MEM_VUS=${K6_MEM_VUS:-2000}
HOLD=${HOLD:-10}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
CASES=${CASES:-echo mem}

die() { echo "ws.sh: $*" >&2; exit 2; }
for t in taskset timeout jq ss /usr/bin/time; do command -v "$t" >/dev/null || die "$t not found"; done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
[[ -z $K6 || -x $K6 ]] || die "K6: no k6 binary at $K6"
((DUR >= 1 && DUR <= 30)) || die "DUR must be 1..30"
((HOLD >= 3 && HOLD <= 30)) || die "HOLD must be 3..30"
((MEM_VUS >= 100 && MEM_VUS <= 30000)) || die "MEM_VUS must be 100..30000"
# every socket is a descriptor on each side (the server runs under this limit
# too): 65536, or the hard limit when that is lower (a container without
# CAP_SYS_RESOURCE), as long as MEM_VUS sockets and some spare fit
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) >= MEM_VUS + 1024)) || die "ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)): too few for MEM_VUS=$MEM_VUS sockets"
want() { [[ " $CASES " == *" $1 "* ]]; }

SCR=$(mktemp -d -t luaload-ws.XXXXXX)
SERVER=
cleanup() {
  [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] && echo "scratch kept: $SCR" >&2 || rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$ROOT/scripts/serve-lib.sh"
ll_start_serve "$SCR/serve.out" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1 || exit 1
SERVER=$LL_SERVE_PID PORT=$LL_SERVE_PORT
URL=ws://127.0.0.1:$PORT/ws/echo

# ---- the scripts: the same thing in luaload.ws and k6/ws ----
cat >"$SCR/echo.lua" <<'LUA'
local ws = require("luaload.ws")
local hold = tonumber(__ENV.HOLD) * 1000
local msg = string.rep("x", tonumber(__ENV.SIZE))
options = { scenarios = { echo = { executor = "per-vu-iterations", vus = tonumber(__ENV.VUS), iterations = 1 } } }
function default()
  ws.connect(__ENV.URL, nil, function(socket)
    socket:on("open", function() socket:send(msg) end)
    socket:on("message", function(m) socket:send(m) end)
    socket:set_timeout(function() socket:close() end, hold)
  end)
end
LUA
cat >"$SCR/echo.js" <<'JS'
import ws from "k6/ws";
const hold = Number(__ENV.HOLD) * 1000;
const msg = "x".repeat(Number(__ENV.SIZE));
export const options = { scenarios: { echo: { executor: "per-vu-iterations", vus: Number(__ENV.VUS), iterations: 1 } } };
export default function () {
  ws.connect(__ENV.URL, null, function (socket) {
    socket.on("open", () => socket.send(msg));
    socket.on("message", (m) => socket.send(m));
    socket.setTimeout(() => socket.close(), hold);
  });
}
JS
# idle: a socket held open HOLD seconds, no message; base: the VU sleeps as long
cat >"$SCR/idle.lua" <<'LUA'
local ws = require("luaload.ws")
local ll = require("luaload")
local hold = tonumber(__ENV.HOLD)
options = { scenarios = { idle = { executor = "per-vu-iterations", vus = tonumber(__ENV.VUS), iterations = 1,
                                   maxDuration = "120s" } } }
function default()
  if __ENV.BASE == "1" then ll.sleep(hold) return end
  ws.connect(__ENV.URL, nil, function(socket)
    socket:set_timeout(function() socket:close() end, hold * 1000)
  end)
end
LUA
cat >"$SCR/idle.js" <<'JS'
import ws from "k6/ws";
import { sleep } from "k6";
const hold = Number(__ENV.HOLD);
export const options = { scenarios: { idle: { executor: "per-vu-iterations", vus: Number(__ENV.VUS), iterations: 1,
                                              maxDuration: "120s" } } };
export default function () {
  if (__ENV.BASE === "1") { sleep(hold); return; }
  ws.connect(__ENV.URL, null, function (socket) {
    socket.setTimeout(() => socket.close(), hold * 1000);
  });
}
JS

RESULTS=$SCR/results.tsv
: >"$RESULTS"
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
# the most client sockets to the server established at once, sampled every
# 0.5 s while process $1 lives
peak_sockets() {
  local max=0 n
  while kill -0 "$1" 2>/dev/null; do
    n=$(ss -Htn state established "( dport = :$PORT )" 2>/dev/null | wc -l)
    ((n > max)) && max=$n
    sleep 0.5
  done
  echo "$max"
}
# run NAME CMD...: the client pinned to CLIENT_CPU under GNU time; records
# "name received wall cpu_s rss_KB server_busy_% peak_sockets" and prints it
run() {
  local name=$1 base=$SCR/$1.$REP t0; shift
  t0=$(server_ticks)
  /usr/bin/time -f '%e %U %S %M' -o "$base.time" \
    timeout -k 2 120 taskset -c "$CLIENT_CPU" "$@" >"$base.out" 2>"$base.err" &
  local pid=$! socks
  socks=$(peak_sockets "$pid")
  wait "$pid"
  local wall usr sys rss recv srv
  read -r wall usr sys rss < <(tail -n 1 "$base.time")
  recv=$(jq -r '.metrics.ws_msgs_received.count // 0' "$base.json" 2>/dev/null || echo 0)
  srv=$(awk -v t="$(( $(server_ticks) - t0 ))" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? t / w : 0) }')
  local cpu
  cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
  printf '%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%.0f\n' "$name" "${recv:-0}" "$wall" "$cpu" "$rss" "$srv" "$socks" \
    "$(awk -v r="${recv:-0}" -v c="$cpu" 'BEGIN { print (c > 0 ? r / c : 0) }')" | tee -a "$RESULTS"
  sleep 1
}
c_luaload() {
  run luaload "$LUALOAD" run "$SCR/echo.lua" -e URL="$URL" -e VUS="$VUS" -e HOLD="$DUR" -e SIZE="$MSG_SIZE" -w 1 -q \
    --no-summary --summary-export "$SCR/luaload.$REP.json"
}
c_k6() {
  [[ -n $K6 ]] && GOMAXPROCS=1 run k6 "$K6" run -q -e URL="$URL" -e VUS="$VUS" -e HOLD="$DUR" -e SIZE="$MSG_SIZE" \
    --summary-export "$SCR/k6.$REP.json" "$SCR/echo.js"
}
med() {
  awk -F'\t' -v n="$1" -v c="$2" '$1 == n {print $c}' "$RESULTS" | sort -g |
    awk '{v[NR] = $1} END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
verdict() { awk -v x="$1" "BEGIN { if (x == \"-\") print \"n/a\"; else if (x $2) print \"ok\"; else print \"MISSED\" }"; }

echo "# luaload serve (1 thread) on cpu $SERVER_CPU, clients on cpu $CLIENT_CPU; $(nproc) cpus, $(uname -r)" >&2
printf 'case\treceived\twall_s\tcpu_s\tpeak_rss_KB\tserver_busy_%%\tpeak_sockets\treceived_per_cpu_s\n'

if want echo; then
  # a second of traffic first, not recorded
  REP=0
  "$LUALOAD" run "$SCR/echo.lua" -e URL="$URL" -e VUS="$VUS" -e HOLD=1 -e SIZE="$MSG_SIZE" -w 1 -q --no-summary \
    >/dev/null 2>&1
  for ((REP = 1; REP <= REPS; REP++)); do # alternate the order: drift hits both sides
    if ((REP % 2)); then c_luaload; c_k6; else c_k6; c_luaload; fi
  done
  echo
  echo "echo ping-pong, $VUS sockets, $MSG_SIZE-byte messages, ${DUR}s, medians over $REPS reps (per core: of each rep's):"
  for c in luaload k6; do
    recv=$(med "$c" 2) pc=$(med "$c" 8)
    [[ $recv == - ]] && continue
    awk -v c="$c" -v r="$recv" -v d="$DUR" -v cpu="$(med "$c" 4)" -v pc="$pc" -v rss="$(med "$c" 5)" -v srv="$(med "$c" 6)" 'BEGIN {
      printf "  %-8s %10.0f echoes/s  %6.2f CPU s  %10.0f echoes per client CPU s  %6.1f µs/echo  %7d KB  server %3d%% busy\n",
        c, r / d, cpu, pc, (pc > 0 ? 1e6 / pc : 0), rss, srv }'
  done
  if [[ -n $K6 ]]; then
    per=$(awk -v a="$(med luaload 8)" -v b="$(med k6 8)" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }')
    rate=$(awk -v a="$(med luaload 2)" -v b="$(med k6 2)" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    echo "  luaload / k6: echoes/s x$rate, per client core x$per (target >= 10: $(verdict "$per" '>= 10'))"
  fi
fi

# mem_case NAME VUS CMD...: the idle sockets, then the baseline (BASE=1)
mem_case() {
  local name=$1 vus=$2; shift 2
  REP=1
  run "$name-idle-$vus" "$@" -e BASE=0 --summary-export "$SCR/$name-idle-$vus.1.json"
  run "$name-base-$vus" "$@" -e BASE=1 --summary-export "$SCR/$name-base-$vus.1.json"
  local idle base socks
  idle=$(med "$name-idle-$vus" 5) base=$(med "$name-base-$vus" 5) socks=$(med "$name-idle-$vus" 7)
  awk -v n="$name" -v v="$vus" -v i="$idle" -v b="$base" -v s="$socks" 'BEGIN {
    printf "  %-8s %d VUs: peak RSS %d KB with a socket each, %d KB without: %.1f KiB per socket (%d established at once)\n",
      n, v, i, b, (i - b) / v, s }'
}
if want mem; then
  echo
  echo "idle WebSockets, held ${HOLD}s:"
  mem_case luaload "$MEM_VUS" "$LUALOAD" run "$SCR/idle.lua" -e URL="$URL" -e VUS="$MEM_VUS" -e HOLD="$HOLD" -w 1 -q \
    --no-summary
  [[ -n $K6 ]] && GOMAXPROCS=1 mem_case k6 "$K6_MEM_VUS" "$K6" run -q -e URL="$URL" -e VUS="$K6_MEM_VUS" \
    -e HOLD="$HOLD" "$SCR/idle.js"
  per=$(awk -v i="$(med "luaload-idle-$MEM_VUS" 5)" -v b="$(med "luaload-base-$MEM_VUS" 5)" -v v="$MEM_VUS" \
    'BEGIN { printf "%.1f", (i - b) / v }')
  echo "  luaload: $per KiB per idle socket (target <= 16: $(verdict "$per" '<= 16'))"
  echo "  server: $(awk '/^VmHWM/ {print $2}' "/proc/$SERVER/status") KB peak RSS (luaload serve, all runs)"
fi
