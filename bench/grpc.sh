#!/usr/bin/env bash
# grpc.sh -- gRPC unary calls: luaload.grpc against k6/net/grpc and h2load,
# measured in one run, against one third-party server.
#
# The server is Debian's nginx (one worker, pinned to SERVER_CPU) on h2c
# (HTTP/2 with prior knowledge), answering POST /bench.Echo/Say with a fixed
# gRPC response: a framed bench.Msg (made by protoc --encode) and the
# trailer grpc-status: 0 (add_trailer). It parses no request message, so
# the figures are the clients'. Every client is pinned to CLIENT_CPU (k6
# with GOMAXPROCS=1).
#
#   unary  VUS VUs (h2load: as many connections, one stream each) calling
#          bench.Echo/Say for DUR seconds, one connection per VU: luaload
#          (client:invoke, one worker), k6 (client.invoke) and h2load (the
#          same framed request body, content-type application/grpc: the
#          HTTP/2 floor), alternating REPS times. For each: calls/s, client
#          CPU seconds, calls per client CPU second, peak RSS; then luaload
#          per core against k6 (target >= 8) and against h2load (>= 0.7).
#   serve  the same unary calls against `luaload serve`'s gRPC echo (h2c,
#          one thread pinned to SERVER_CPU; it parses each request message
#          and sends it back, so the reply is the request): luaload, k6 (with
#          K6=) and h2load, alternating REPS times, the same figures: a server
#          that keeps up with every client on one core, so the ratios are the
#          clients' own. Not in the default CASES.
#   mem    MEM_VUS VUs each connect, make one call and idle HOLD seconds,
#          against the same VUs idling without a connection: the peak RSS
#          difference over MEM_VUS (memory per VU with an open gRPC
#          connection); k6 the same at K6_MEM_VUS.
#
# Knobs: DUR(8) VUS(50) REPS(2) MEM_VUS(1000) K6_MEM_VUS(500) HOLD(5)
#   CLIENT_CPU(1) SERVER_CPU(0) LUALOAD(build/luaload) K6() CASES="unary mem" (or serve)
# Run it under the shared lock: flock /tmp/luaload-cpu.lock bench/grpc.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
K6=${K6:-}
DUR=${DUR:-8} VUS=${VUS:-50} REPS=${REPS:-2} HOLD=${HOLD:-5}
MEM_VUS=${MEM_VUS:-1000} K6_MEM_VUS=${K6_MEM_VUS:-500}
CLIENT_CPU=${CLIENT_CPU:-1} SERVER_CPU=${SERVER_CPU:-0}
CASES=${CASES:-unary mem}

die() { echo "grpc.sh: $*" >&2; exit 2; }
for t in taskset timeout jq nginx protoc h2load python3 /usr/bin/time; do
  command -v "$t" >/dev/null || die "$t not found"
done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
[[ -z $K6 || -x $K6 ]] || die "K6: no k6 binary at $K6"
((DUR >= 1 && DUR <= 30)) || die "DUR must be 1..30"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
want() { [[ " $CASES " == *" $1 "* ]]; }

SCR=$(mktemp -d -t luaload-grpc.XXXXXX)
chmod 755 "$SCR" # nginx's worker (www-data) reads the response from it
SERVER=
SERVE=
cleanup() {
  [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  [[ -n $SERVE ]] && kill "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] && echo "scratch kept: $SCR" >&2 || rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the service, its messages, the server ----
cat >"$SCR/bench.proto" <<'PROTO'
syntax = "proto3";
package bench;
message Msg { string text = 1; int64 n = 2; }
service Echo { rpc Say(Msg) returns (Msg); }
PROTO
frame() { # a protobuf text message -> the framed wire message
  local wire
  wire=$(printf '%s' "$1" | protoc --encode=bench.Msg -I"$SCR" "$SCR/bench.proto" | base64 -w0)
  python3 -c 'import base64, struct, sys; b = base64.b64decode(sys.argv[1]); sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(b)) + b)' "$wire"
}
mkdir -p "$SCR/www/bench.Echo"
frame 'text: "hello from nginx" n: 42' >"$SCR/www/bench.Echo/Say"
frame 'text: "hello" n: 7' >"$SCR/request.bin"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$SCR/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $SCR/nginx.pid;
error_log $SCR/error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  keepalive_requests 1000000;
  http2_max_requests 1000000;
  http2_max_concurrent_streams 128;
  client_body_buffer_size 16k;
  server {
    listen 127.0.0.1:$PORT http2;
    root $SCR/www;
    location = /bench.Echo/Say {
      default_type application/grpc;
      add_trailer grpc-status 0 always;
      # a POST to a static file is a 405: served as the file (error_page's
      # redirect is a GET)
      error_page 405 =200 \$uri;
    }
  }
}
NGINX
taskset -c "$SERVER_CPU" nginx -c "$SCR/nginx.conf" -p "$SCR" >"$SCR/nginx.out" 2>&1 &
SERVER=$!
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null && break
  sleep 0.05
done
ADDR=127.0.0.1:$PORT

# ---- the scripts: the same thing in luaload.grpc and k6/net/grpc ----
cat >"$SCR/unary.lua" <<'LUA'
local grpc = require("luaload.grpc")
local ll = require("luaload")
local client = grpc.Client()
client:load({ __ENV.DIR }, "bench.proto")
options = { scenarios = { unary = { executor = "constant-vus", vus = tonumber(__ENV.VUS), duration = __ENV.DUR,
                                    gracefulStop = "1s" } } }
function default()
  if __ITER == 0 then client:connect(__ENV.ADDR, { plaintext = true }) end
  local r = client:invoke("bench.Echo/Say", { text = "hello", n = 7 })
  ll.check(r, { ok = function(x) return x.status == grpc.StatusOK and x.message.n == (__ENV.WANT or "42") end })
end
LUA
cat >"$SCR/unary.js" <<'JS'
import grpc from "k6/net/grpc";
import { check } from "k6";
const client = new grpc.Client();
client.load([__ENV.DIR], "bench.proto");
export const options = { scenarios: { unary: { executor: "constant-vus", vus: Number(__ENV.VUS), duration: __ENV.DUR,
                                               gracefulStop: "1s" } } };
export default function () {
  if (__ITER === 0) client.connect(__ENV.ADDR, { plaintext: true });
  const r = client.invoke("bench.Echo/Say", { text: "hello", n: 7 });
  check(r, { ok: (x) => x.status === grpc.StatusOK && x.message.n === (__ENV.WANT || "42") });
}
JS
cat >"$SCR/idle.lua" <<'LUA'
local grpc = require("luaload.grpc")
local ll = require("luaload")
local client = grpc.Client()
client:load({ __ENV.DIR }, "bench.proto")
options = { scenarios = { idle = { executor = "per-vu-iterations", vus = tonumber(__ENV.VUS), iterations = 1,
                                   maxDuration = "120s" } } }
function default()
  if __ENV.BASE ~= "1" then
    client:connect(__ENV.ADDR, { plaintext = true })
    client:invoke("bench.Echo/Say", { text = "hello", n = 7 })
  end
  ll.sleep(tonumber(__ENV.HOLD))
end
LUA
cat >"$SCR/idle.js" <<'JS'
import grpc from "k6/net/grpc";
import { sleep } from "k6";
const client = new grpc.Client();
client.load([__ENV.DIR], "bench.proto");
export const options = { scenarios: { idle: { executor: "per-vu-iterations", vus: Number(__ENV.VUS), iterations: 1,
                                              maxDuration: "120s" } } };
export default function () {
  if (__ENV.BASE !== "1") {
    client.connect(__ENV.ADDR, { plaintext: true });
    client.invoke("bench.Echo/Say", { text: "hello", n: 7 });
  }
  sleep(Number(__ENV.HOLD));
}
JS

RESULTS=$SCR/results.tsv
: >"$RESULTS"
# run NAME COUNT_CMD CMD...: the client pinned to CLIENT_CPU under GNU time;
# COUNT_CMD prints how many calls succeeded from the run's files; records
# "name calls wall cpu_s rss_KB calls_per_cpu_s" and prints it
run() {
  local name=$1 count=$2 base=$SCR/$1.$REP; shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$base.time" \
    timeout -k 2 150 taskset -c "$CLIENT_CPU" "$@" >"$base.out" 2>"$base.err"
  local wall usr sys rss calls cpu
  read -r wall usr sys rss < <(tail -n 1 "$base.time")
  calls=$($count "$base" 2>/dev/null || echo 0)
  cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
  printf '%s\t%s\t%s\t%.2f\t%s\t%.0f\n' "$name" "${calls:-0}" "$wall" "$cpu" "$rss" \
    "$(awk -v r="${calls:-0}" -v c="$cpu" 'BEGIN { print (c > 0 ? r / c : 0) }')" | tee -a "$RESULTS"
  sleep 1
}
# the calls answered OK with the server's message (the check's passes)
iterations() { jq -r '.metrics.checks.passes // 0' "$1.json"; }
h2load_done() { sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$1.out"; }
c_luaload() {
  run luaload iterations "$LUALOAD" run "$SCR/unary.lua" -e DIR="$SCR" -e ADDR="$ADDR" -e VUS="$VUS" -e DUR="${DUR}s" \
    -w 1 -q --no-summary --summary-export "$SCR/luaload.$REP.json"
}
c_k6() {
  [[ -n $K6 ]] && GOMAXPROCS=1 run k6 iterations "$K6" run -q -e DIR="$SCR" -e ADDR="$ADDR" -e VUS="$VUS" \
    -e DUR="${DUR}s" --summary-export "$SCR/k6.$REP.json" "$SCR/unary.js"
}
c_h2load() {
  run h2load h2load_done h2load -D "$DUR" -c "$VUS" -m 1 -t 1 -d "$SCR/request.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' "http://$ADDR/bench.Echo/Say"
}
med() {
  awk -F'\t' -v n="$1" -v c="$2" '$1 == n {print $c}' "$RESULTS" | sort -g |
    awk '{v[NR] = $1} END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
verdict() { awk -v x="$1" "BEGIN { if (x == \"-\") print \"n/a\"; else if (x $2) print \"ok\"; else print \"MISSED\" }"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-" }'; }

# report LUALOAD K6 H2LOAD: the medians of the three cases, then luaload's
# ratios per client core against the issue's targets
report() {
  local c calls k h
  for c in "$@"; do
    calls=$(med "$c" 2)
    [[ $calls == - ]] && continue
    awk -v c="$c" -v r="$calls" -v d="$DUR" -v cpu="$(med "$c" 4)" -v pc="$(med "$c" 6)" -v rss="$(med "$c" 5)" 'BEGIN {
      printf "  %-13s %9.0f calls/s  %6.2f CPU s  %9.0f calls per client CPU s  %6.1f µs/call  %7d KB\n",
        c, r / d, cpu, pc, (pc > 0 ? 1e6 / pc : 0), rss }'
  done
  k=$(ratio "$(med "$1" 6)" "$(med "$2" 6)") h=$(ratio "$(med "$1" 6)" "$(med "$3" 6)")
  [[ -n $K6 ]] && echo "  luaload / k6 per client core: x$k (target >= 8: $(verdict "$k" '>= 8'))"
  echo "  luaload / h2load per client core: x$h (target >= 0.7: $(verdict "$h" '>= 0.7'))"
}

echo "# nginx $(nginx -v 2>&1 | sed 's/.*\///') (1 worker, h2c) on cpu $SERVER_CPU, clients on cpu $CLIENT_CPU; $(nproc) cpus, $(uname -r)" >&2
printf 'case\tcalls\twall_s\tcpu_s\tpeak_rss_KB\tcalls_per_cpu_s\n'

if want unary; then
  REP=0 # a second of traffic first, not recorded
  "$LUALOAD" run "$SCR/unary.lua" -e DIR="$SCR" -e ADDR="$ADDR" -e VUS="$VUS" -e DUR=1s -w 1 -q --no-summary \
    >/dev/null 2>&1
  for ((REP = 1; REP <= REPS; REP++)); do # alternate the order: drift hits every side
    if ((REP % 2)); then c_luaload; c_k6; c_h2load; else c_h2load; c_k6; c_luaload; fi
  done
  echo
  echo "unary calls, $VUS VUs (h2load: connections), ${DUR}s, medians over $REPS reps:"
  report luaload k6 h2load
fi

if want serve; then
  source "$ROOT/scripts/serve-lib.sh"
  ll_start_serve "$SCR/serve.log" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1 || die "luaload serve did not start"
  SERVE=$LL_SERVE_PID
  SADDR=127.0.0.1:$LL_SERVE_PORT
  c_luaload_serve() {
    run luaload-serve iterations "$LUALOAD" run "$SCR/unary.lua" -e DIR="$SCR" -e ADDR="$SADDR" -e VUS="$VUS" \
      -e DUR="${DUR}s" -e WANT=7 -w 1 -q --no-summary --summary-export "$SCR/luaload-serve.$REP.json"
  }
  c_k6_serve() {
    [[ -n $K6 ]] && GOMAXPROCS=1 run k6-serve iterations "$K6" run -q -e DIR="$SCR" -e ADDR="$SADDR" -e VUS="$VUS" \
      -e DUR="${DUR}s" -e WANT=7 --summary-export "$SCR/k6-serve.$REP.json" "$SCR/unary.js"
  }
  c_h2load_serve() {
    run h2load-serve h2load_done h2load -D "$DUR" -c "$VUS" -m 1 -t 1 -d "$SCR/request.bin" \
      -H 'content-type: application/grpc' -H 'te: trailers' "http://$SADDR/bench.Echo/Say"
  }
  for ((REP = 1; REP <= REPS; REP++)); do
    if ((REP % 2)); then c_luaload_serve; c_k6_serve; c_h2load_serve; else c_h2load_serve; c_k6_serve; c_luaload_serve; fi
  done
  echo
  echo "unary calls against luaload serve's echo (1 thread), $VUS VUs (h2load: connections), ${DUR}s, medians over $REPS reps:"
  report luaload-serve k6-serve h2load-serve
fi

# mem_case NAME VUS CMD...: each VU with a connection, then without (BASE=1)
mem_case() {
  local name=$1 vus=$2; shift 2
  REP=1
  run "$name-conn-$vus" true "$@" -e BASE=0
  run "$name-base-$vus" true "$@" -e BASE=1
  awk -v n="$name" -v v="$vus" -v i="$(med "$name-conn-$vus" 5)" -v b="$(med "$name-base-$vus" 5)" 'BEGIN {
    printf "  %-8s %d VUs: peak RSS %d KB with a gRPC connection each, %d KB without: %.1f KiB per VU\n",
      n, v, i, b, (i - b) / v }'
}
if want mem; then
  echo
  echo "VUs holding an open gRPC connection, ${HOLD}s:"
  mem_case luaload "$MEM_VUS" "$LUALOAD" run "$SCR/idle.lua" -e DIR="$SCR" -e ADDR="$ADDR" -e VUS="$MEM_VUS" \
    -e HOLD="$HOLD" -w 1 -q --no-summary
  [[ -n $K6 ]] && GOMAXPROCS=1 mem_case k6 "$K6_MEM_VUS" "$K6" run -q -e DIR="$SCR" -e ADDR="$ADDR" \
    -e VUS="$K6_MEM_VUS" -e HOLD="$HOLD" "$SCR/idle.js"
fi
