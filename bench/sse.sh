#!/usr/bin/env bash
# sse.sh -- server-sent events read with params.on_chunk, and what on_chunk
# costs per MB.
#
# Starts `luaload serve --threads 1` pinned to SERVER_CPU; every client is
# pinned to CLIENT_CPU (k6 with GOMAXPROCS=1), as in compare.sh.
#
#   events  VUS VUs for DUR seconds, each iteration one GET of
#           /sse?n=EVENTS&interval=0 read with on_chunk, which counts the
#           events in the pieces as they come (a blank line ends one, also
#           across two pieces); a check that each stream had EVENTS events
#           and a Counter of them. Events/s, client CPU seconds (user + sys,
#           GNU time), events per client CPU second, µs per event. With K6=,
#           k6 beside it: k6 has no streaming, so its script takes the
#           (finite) stream whole with http.get and splits the body.
#   chunk   one VU fetching /bytes/SIZE ITERS times in three ways: the body
#           discarded (response_type = "none"), kept (res.body), and handed
#           to on_chunk (which adds up #piece); alternating REPS times. The
#           client CPU of each, and on_chunk's cost per MB: (on_chunk - none)
#           CPU over the MB read, in ms (and kept - none beside it).
#
# Knobs: DUR(8) VUS(10) EVENTS(10000) SIZE(67108864) ITERS(16) REPS(3)
#   CLIENT_CPU(1) SERVER_CPU(0) LUALOAD(build/luaload) K6() CASES="events chunk"
# Run it under the shared lock: flock /tmp/luaload-cpu.lock bench/sse.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
K6=${K6:-}
DUR=${DUR:-8}
VUS=${VUS:-10}
EVENTS=${EVENTS:-10000}
SIZE=${SIZE:-67108864}
ITERS=${ITERS:-16}
REPS=${REPS:-3}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
CASES=${CASES:-events chunk}

die() { echo "sse.sh: $*" >&2; exit 2; }
for t in taskset timeout jq /usr/bin/time; do command -v "$t" >/dev/null || die "$t not found"; done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
[[ -z $K6 || -x $K6 ]] || die "K6: no k6 binary at $K6"
((DUR >= 1 && DUR <= 30)) || die "DUR must be 1..30"
((EVENTS >= 1 && EVENTS <= 1000000)) || die "EVENTS must be 1..1000000 (serve's limit)"
((SIZE >= 1048576 && SIZE <= 1073741824)) || die "SIZE must be 1 MiB..1 GiB"
((ITERS >= 1 && ITERS <= 1000)) || die "ITERS must be 1..1000"
want() { [[ " $CASES " == *" $1 "* ]]; }

SCR=$(mktemp -d -t luaload-sse.XXXXXX)
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
BASE=http://127.0.0.1:$PORT

cat >"$SCR/events.lua" <<'LUA'
local http = require("luaload.http")
local ll = require("luaload")
local metrics = require("luaload.metrics")
local events = metrics.Counter("sse_events")
local want = tonumber(__ENV.EVENTS)
local client = http.Client{}
local req = http.Request(__ENV.URL)
function default()
  local n, nl = 0, false -- events so far; the last piece ended with "\n"
  local res = client:get(req, { on_chunk = function(s)
    local i = 1
    if nl and s:byte(1) == 10 then n, i = n + 1, 2 end
    while true do
      local j = s:find("\n\n", i, true)
      if not j then break end
      n, i = n + 1, j + 2
    end
    nl = s:byte(#s) == 10 and i <= #s
  end })
  events:add(n)
  ll.check(res, { ["every event"] = function(r) return r.status == 200 and n == want end })
end
LUA
cat >"$SCR/events.js" <<'JS'
import http from "k6/http";
import { check } from "k6";
import { Counter } from "k6/metrics";
const events = new Counter("sse_events");
const want = Number(__ENV.EVENTS);
export default function () {
  const res = http.get(__ENV.URL);
  const n = res.body.split("\n\n").length - 1;
  events.add(n);
  check(res, { "every event": (r) => r.status === 200 && n === want });
}
JS
cat >"$SCR/chunk.lua" <<'LUA'
local http = require("luaload.http")
local ll = require("luaload")
local mode = __ENV.MODE
local client = http.Client{ max_response_body = "1GiB" }
local opts = mode == "none" and { response_type = "none" } or {}
local want = tonumber(__ENV.SIZE)
function default()
  local got = 0
  if mode == "chunk" then opts = { on_chunk = function(s) got = got + #s end } end
  local res = client:get(__ENV.URL, opts)
  if mode == "kept" then got = #res.body elseif mode == "none" then got = want end
  ll.check(res, { ["whole body"] = function(r) return r.status == 200 and got == want end })
end
LUA

RESULTS=$SCR/results.tsv
: >"$RESULTS"
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
# run NAME CMD...: the client pinned to CLIENT_CPU under GNU time; records
# "name count wall cpu_s rss_KB server_busy_% checks_failed", count being
# sse_events (or 0)
run() {
  local name=$1 base=$SCR/$1.$REP t0; shift
  t0=$(server_ticks)
  /usr/bin/time -f '%e %U %S %M' -o "$base.time" \
    timeout -k 2 120 taskset -c "$CLIENT_CPU" "$@" >"$base.out" 2>"$base.err"
  local wall usr sys rss n srv fails
  read -r wall usr sys rss < <(tail -n 1 "$base.time")
  n=$(jq -r '.metrics.sse_events.count // 0' "$base.json" 2>/dev/null || echo 0)
  fails=$(jq -r '.metrics.checks.fails // "-"' "$base.json" 2>/dev/null || echo -)
  srv=$(awk -v t="$(( $(server_ticks) - t0 ))" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? t / w : 0) }')
  printf '%s\t%s\t%s\t%.2f\t%s\t%s\t%s\n' "$name" "${n:-0}" "$wall" "$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')" \
    "$rss" "$srv" "$fails" | tee -a "$RESULTS"
  sleep 1
}
med() {
  awk -F'\t' -v n="$1" -v c="$2" '$1 == n {print $c}' "$RESULTS" | sort -g |
    awk '{v[NR] = $1} END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

echo "# luaload serve (1 thread) on cpu $SERVER_CPU, clients on cpu $CLIENT_CPU; $(nproc) cpus, $(uname -r)" >&2
printf 'case\tevents\twall_s\tcpu_s\tpeak_rss_KB\tserver_busy_%%\tchecks_failed\n'

if want events; then
  URL="$BASE/sse?n=$EVENTS&interval=0"
  REP=1
  run luaload "$LUALOAD" run "$SCR/events.lua" -e URL="$URL" -e EVENTS="$EVENTS" -u "$VUS" -d "${DUR}s" -w 1 -q \
    --no-summary --summary-export "$SCR/luaload.1.json"
  [[ -n $K6 ]] && GOMAXPROCS=1 run k6 "$K6" run -q -e URL="$URL" -e EVENTS="$EVENTS" --vus "$VUS" \
    --duration "${DUR}s" --summary-export "$SCR/k6.1.json" "$SCR/events.js"
  echo
  echo "SSE, $VUS streams of $EVENTS events back to back, ${DUR}s:"
  for c in luaload k6; do
    n=$(med "$c" 2) cpu=$(med "$c" 4)
    [[ $n == - ]] && continue
    awk -v c="$c" -v n="$n" -v w="$(med "$c" 3)" -v cpu="$cpu" -v srv="$(med "$c" 6)" -v f="$(med "$c" 7)" 'BEGIN {
      printf "  %-8s %10.0f events/s  %6.2f CPU s  %10.0f events per client CPU s  %5.2f µs/event  server %3d%% busy  failed checks %s\n",
        c, n / w, cpu, (cpu > 0 ? n / cpu : 0), (n > 0 ? cpu * 1e6 / n : 0), srv, f }'
  done
  [[ -n $K6 ]] && awk -v a="$(med luaload 2)" -v ca="$(med luaload 4)" -v b="$(med k6 2)" -v cb="$(med k6 4)" 'BEGIN {
    if (ca > 0 && cb > 0 && b > 0) printf "  luaload (on_chunk) / k6 (whole body): per client core x%.1f\n", (a / ca) / (b / cb) }'
fi

if want chunk; then
  URL="$BASE/bytes/$SIZE"
  c_chunk() {
    run "$1" "$LUALOAD" run "$SCR/chunk.lua" -e URL="$URL" -e SIZE="$SIZE" -e MODE="$1" -u 1 -i "$ITERS" -w 1 -q \
      --no-summary --summary-export "$SCR/$1.$REP.json"
  }
  for ((REP = 1; REP <= REPS; REP++)); do # rotate the order: drift hits each mode alike
    case $((REP % 3)) in
      1) c_chunk none; c_chunk kept; c_chunk chunk ;;
      2) c_chunk chunk; c_chunk none; c_chunk kept ;;
      0) c_chunk kept; c_chunk chunk; c_chunk none ;;
    esac
  done
  echo
  echo "$ITERS bodies of $((SIZE / 1048576)) MiB ($((SIZE * ITERS / 1048576)) MiB), medians over $REPS reps:"
  mb=$(awk -v s="$SIZE" -v i="$ITERS" 'BEGIN { print s * i / 1048576 }')
  for m in none kept chunk; do
    awk -v m="$m" -v cpu="$(med "$m" 4)" -v w="$(med "$m" 3)" -v mb="$mb" -v rss="$(med "$m" 5)" -v f="$(med "$m" 7)" 'BEGIN {
      printf "  %-6s %6.2f CPU s  %7.1f ms CPU/MB  %7.0f MB/s  %8d KB peak RSS  failed checks %s\n",
        m, cpu, cpu * 1000 / mb, mb / w, rss, f }'
  done
  awk -v n="$(med none 4)" -v k="$(med kept 4)" -v c="$(med chunk 4)" -v mb="$mb" 'BEGIN {
    printf "  on_chunk costs %+.2f ms CPU per MB over discarding the body (keeping it: %+.2f ms per MB)\n",
      (c - n) * 1000 / mb, (k - n) * 1000 / mb }'
fi
