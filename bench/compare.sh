#!/usr/bin/env bash
# compare.sh -- luaload against wrk and the libcurl floor, measured in one run.
#
# Starts nginx pinned to SERVER_CPU (config written here, loopback only),
# builds the libcurl floor client from ../shared/bench/curlfloor.c into a
# scratch dir (it is never copied into the project), then runs, pinned to
# CLIENT_CPU and alternating REPS times (the cases of one comparison back to
# back, in reverse order on even reps: see group() below):
#   wrk            -t1 -c CONNS
#   floor          curlfloor -c CONNS (socket_action + epoll)
#   floor-lua      curlfloor -l -L -c CONNS (lazy epoll + a LuaJIT coroutine per handle)
#   epoll          the syscall floor: bench/uring_vs_epoll.c -m epoll -c CONNS, a
#                  minimal keep-alive GET client (one read and one send per
#                  request, no metrics; about 1.8k instructions per request,
#                  most of them finding the head's end and Content-Length):
#                  close to what an epoll client pays the kernel, so quick
#                  mode's distance to it is about what luaload adds
#   luaload        bench/get.lua, -u CONNS -w 1: client:get(req) + http.checkstatus
#                  per iteration, all metrics on
#   luaload-2000   the same with 2000 VUs (and floor-2000: -c 2000 -P 20)
#   quick          quick mode: luaload run URL -c CONNS -w 1, all metrics on
#   quick-jwt      the same with -f: a different token in Authorization on
#                  every request, streamed from a file of TOKENS tokens
#   before         with LUALOAD_BEFORE=path/to/another/luaload: the luaload,
#                  quick, h2, scale and mem cases again with that binary,
#                  alternating with this one (a change's before/after in one run)
#   k6             with K6=path/to/k6: k6 run with the same script in JavaScript
#                  (http.get + check per iteration), -u CONNS, pinned like
#                  the others (GOMAXPROCS=1)
# and a memory case: luaload with MEM_VUS VUs doing GET + sleep(1), each VU
# holding a keep-alive connection; peak RSS per VU. Protocol cases (issue 9),
# each luaload run beside the floor in the same protocol and connection model:
#   https  HTTP/1.1 over TLS, CONNS connections: wrk, floor, luaload
#   h2     HTTP/2 over TLS multiplexed, 10 connections x 10 streams:
#          h2load -c 10 -m 10, floor -2 -c 100 -C 10 -S 10, luaload -u 100 with
#          Client{ multiplex = true, max_conns_per_host = 10, max_streams = 10 }
#   h3     HTTP/3 against Caddy (pinned to SERVER_CPU), CONNS connections of one
#          stream each: the floor built with CURL_HTTP_VERSION_3ONLY for its -2
#          (sed on the scratch copy; the shared source is untouched), luaload
#          with http_version = "3" on its native transport (luaload-h3) and on
#          libcurl (luaload-h3-curl: transport = "curl"), and luaload over
#          native HTTP/2 to the same Caddy in the same model (luaload-h2-caddy:
#          the CPU per request HTTP/3 is measured against); and the same
#          three (-ngtcp2) against a second server, Debian's ngtcp2-server
#          (gtlsserver, ngtcp2's own example server in C++, single-threaded,
#          serving a file), which answers several times Caddy's rate on a core;
#          multiplexed (-mux): 10 connections x 10 streams to ngtcp2-server, the
#          floor (-c 100 -C 10 -S 10) and luaload native and on libcurl; and the
#          memory of MEM_VUS VUs doing GET + sleep(1) over multiplexed HTTP/3
#          (100 streams per connection) to ngtcp2-server, beside 100 VUs
# For each: requests/s, client CPU µs per request (user+sys / requests) and
# peak RSS; then luaload's ratios and the targets of issues 2 and 14 (the
# native transports: scripted >= 1.0x wrk on HTTP/1.1 plain and TLS, >= 1.0x
# h2load on HTTP/2, quick mode >= 1.2x wrk, >= 8x k6, <= 16 KiB per busy VU
# at 10,000 VUs).
#
# Knobs: DUR(10) CONNS(50) REPS(2) SCALE_VUS(2000) MEM_VUS(10000) CLIENT_CPU(1)
#   SERVER_CPU(0) PORT(18480) LUALOAD(build/luaload) LUALOAD_BEFORE() SHARED(../shared/bench) K6()
#   CASES="wrk floor floor-lua epoll luaload quick quick-jwt scale mem https h2 h3" (subset)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared/bench}
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
DUR=${DUR:-10}
CONNS=${CONNS:-50}
REPS=${REPS:-2}
SCALE_VUS=${SCALE_VUS:-2000}
MEM_VUS=${MEM_VUS:-10000}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
PORT=${PORT:-18480}
CASES=${CASES:-wrk floor floor-lua epoll luaload quick quick-jwt scale mem https h2 h3}
TOKENS=${TOKENS:-3000000}
URL=http://127.0.0.1:$PORT/
TLS_URL=https://127.0.0.1:$((PORT + 1))/
H3_URL=https://127.0.0.1:$((PORT + 2))/
NG_URL=https://127.0.0.1:$((PORT + 3))/index.html

die() { echo "compare.sh: $*" >&2; exit 2; }
for t in nginx wrk taskset timeout jq /usr/bin/time cc pkg-config; do
  command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs it)"
done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
LUALOAD_BEFORE=${LUALOAD_BEFORE:-}
[[ -z $LUALOAD_BEFORE || -x $LUALOAD_BEFORE ]] || die "LUALOAD_BEFORE: no binary at $LUALOAD_BEFORE"
K6=${K6:-}
[[ -z $K6 || -x $K6 ]] || die "K6: no k6 binary at $K6"
[[ -f $SHARED/curlfloor.c ]] || die "no $SHARED/curlfloor.c"
((DUR >= 1 && DUR <= 30)) || die "DUR must be 1..30"

SCR=$(mktemp -d -t luaload-bench.XXXXXX)
NGINX_PID=
CADDY_PID=
NG_PID=
cleanup() {
  [[ -n $NGINX_PID ]] && kill -QUIT "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  [[ -n $CADDY_PID ]] && kill "$CADDY_PID" 2>/dev/null && wait "$CADDY_PID" 2>/dev/null
  [[ -n $NG_PID ]] && kill "$NG_PID" 2>/dev/null && wait "$NG_PID" 2>/dev/null
  [[ ${KEEP:-0} == 1 ]] && echo "scratch kept: $SCR" >&2 || rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
want() { [[ " $CASES " == *" $1 "* ]]; }

# ---- the floor client, built at bench time from shared/ ----
cc -O2 -o "$SCR/curlfloor" "$SHARED/curlfloor.c" $(pkg-config --cflags --libs libcurl luajit) \
  || die "cannot build curlfloor"
if want h3; then # the same client, its -2 asking for HTTP/3 only
  sed 's/CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1/CURL_HTTP_VERSION_3ONLY : CURL_HTTP_VERSION_1_1/' \
    "$SHARED/curlfloor.c" >"$SCR/curlfloor-h3.c"
  grep -q CURL_HTTP_VERSION_3ONLY "$SCR/curlfloor-h3.c" || die "cannot make the HTTP/3 floor"
  cc -O2 -o "$SCR/curlfloor-h3" "$SCR/curlfloor-h3.c" $(pkg-config --cflags --libs libcurl luajit) \
    || die "cannot build curlfloor-h3"
fi
# a self-signed certificate for the TLS cases (clients skip verification)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$SCR/key.pem" -out "$SCR/cert.pem" 2>/dev/null \
  || die "cannot make a certificate (openssl)"

if want epoll; then
  cc -std=c11 -O2 -o "$SCR/epollfloor" "$HERE/uring_vs_epoll.c" -luring || die "cannot build the epoll floor (liburing-dev)"
fi

# ---- target: nginx on one core ----
mkdir -p "$SCR/nginx/temp"
cat >"$SCR/nginx/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
daemon off;
pid $SCR/nginx/nginx.pid;
error_log $SCR/nginx/error.log warn;
events { worker_connections 32768; }
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  default_type text/plain;
  client_body_temp_path $SCR/nginx/temp; proxy_temp_path $SCR/nginx/temp;
  fastcgi_temp_path $SCR/nginx/temp; uwsgi_temp_path $SCR/nginx/temp; scgi_temp_path $SCR/nginx/temp;
  server { listen 127.0.0.1:$PORT; location / { return 200 "hello world\n"; } }
  server {
    listen 127.0.0.1:$((PORT + 1)) ssl http2;
    ssl_certificate $SCR/cert.pem; ssl_certificate_key $SCR/key.pem;
    http2_max_requests 10000000;
    location / { return 200 "hello world\n"; }
  }
}
CONF
ulimit -n "$(ulimit -Hn)"
taskset -c "$SERVER_CPU" nginx -p "$SCR/nginx/" -e "$SCR/nginx/error.log" -c "$SCR/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
curl -s -o /dev/null "$URL" || die "nginx did not start ($(cat "$SCR/nginx/error.log"))"
if want h3; then
  command -v caddy >/dev/null || die "caddy not found (scripts/setup.sh installs it)"
  mkdir -p "$SCR/caddy"
  cat >"$SCR/caddy/Caddyfile" <<CADDY
{
	admin off
	auto_https disable_redirects
	skip_install_trust
	storage file_system $SCR/caddy/data
	servers {
		protocols h1 h2 h3
	}
}
https://:$((PORT + 2)) {
	bind 127.0.0.1
	tls $SCR/cert.pem $SCR/key.pem
	respond "hello world
"
}
CADDY
  HOME=$SCR/caddy XDG_DATA_HOME=$SCR/caddy XDG_CONFIG_HOME=$SCR/caddy taskset -c "$SERVER_CPU" \
    caddy run --config "$SCR/caddy/Caddyfile" --adapter caddyfile >"$SCR/caddy/log" 2>&1 &
  CADDY_PID=$!
  for _ in $(seq 50); do curl -sk -o /dev/null "$H3_URL" && break; sleep 0.1; done
  curl -sk -o /dev/null "$H3_URL" || die "caddy did not start ($(tail -5 "$SCR/caddy/log"))"
  command -v gtlsserver >/dev/null || die "gtlsserver not found (scripts/setup.sh installs ngtcp2-server)"
  mkdir -p "$SCR/htdocs"
  echo "hello world" >"$SCR/htdocs/index.html"
  taskset -c "$SERVER_CPU" gtlsserver -q -d "$SCR/htdocs" 127.0.0.1 $((PORT + 3)) "$SCR/key.pem" "$SCR/cert.pem" \
    >"$SCR/gtlsserver.log" 2>&1 &
  NG_PID=$!
  for _ in $(seq 50); do [[ -n $(ss -Hulpn "( sport = :$((PORT + 3)) )") ]] && break; sleep 0.1; done
  [[ -n $(ss -Hulpn "( sport = :$((PORT + 3)) )") ]] || die "gtlsserver did not start ($(tail -5 "$SCR/gtlsserver.log"))"
fi

cat >"$SCR/get.lua" <<'LUA'
local http = require("luaload.http")
local client = http.Client{}
local req = http.Request(__ENV.URL)
function default()
  local res = client:get(req)
  http.checkstatus(200, res)
end
LUA
cat >"$SCR/get.js" <<'JS'
import http from "k6/http";
import { check } from "k6";
export default function () {
  const res = http.get(__ENV.URL);
  check(res, { "status is 200": (r) => r.status === 200 });
}
JS
cat >"$SCR/mem.lua" <<'LUA'
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{}
local req = http.Request(__ENV.URL, { response_type = "none" })
function default()
  client:get(req)
  ll.sleep(1)
end
LUA

cat >"$SCR/mem-h3.lua" <<'LUA'
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{ http_version = "3", multiplex = true, max_streams = 100,
  tls = { insecure_skip_verify = true } }
local req = http.Request(__ENV.URL, { response_type = "none" })
function default()
  client:get(req)
  ll.sleep(1)
end
LUA

cat >"$SCR/proto.lua" <<'LUA'
-- the protocol cases: __ENV.VERSION ("1.1", "2", "3"), __ENV.MUX (connections)
-- and __ENV.STREAMS make the Client
local http = require("luaload.http")
local opts = { tls = { insecure_skip_verify = true } }
if __ENV.VERSION then opts.http_version = __ENV.VERSION end
if __ENV.TRANSPORT then opts.transport = __ENV.TRANSPORT end
if __ENV.MUX then
  opts.multiplex = true
  opts.max_conns_per_host = tonumber(__ENV.MUX)
  opts.max_streams = tonumber(__ENV.STREAMS)
end
local client = http.Client(opts)
local req = http.Request(__ENV.URL)
function default()
  local res = client:get(req)
  http.checkstatus(200, res)
end
LUA

RESULTS=$SCR/results.tsv
: >"$RESULTS"
# server_ticks: CPU ticks (1/100 s) the servers' processes have used so far
server_ticks() {
  local t=0 p
  for p in $(pgrep -f "nginx: worker process" ; pgrep -x caddy; pgrep -x gtlsserver); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
# run NAME PARSER CMD...: prints and records "name rps reqs cpu_us_per_req
# rss_kb server_cpu_%" (the last: how busy the server's core was, so a run
# the server capped shows as one)
run() {
  local name=$1 parser=$2; shift 2
  local base=$SCR/$name.$REP t0
  t0=$(server_ticks)
  /usr/bin/time -f '%e %U %S %M' -o "$base.time" \
    timeout -k 2 $((DUR + 40)) taskset -c "$CLIENT_CPU" "$@" >"$base.out" 2>"$base.err"
  local wall usr sys rss reqs rps srv
  srv=$(( $(server_ticks) - t0 ))
  read -r wall usr sys rss < <(tail -n 1 "$base.time")
  read -r reqs rps < <($parser "$base")
  local us
  us=$(awk -v u="$usr" -v s="$sys" -v r="${reqs:-0}" 'BEGIN { if (r > 0) printf "%.1f", (u + s) * 1e6 / r; else print "-" }')
  rps=$(awk -v r="${rps:--}" 'BEGIN { if (r == "-") print "-"; else printf "%.0f", r }')
  srv=$(awk -v t="$srv" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", t / w; else print "-" }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rps" "${reqs:--}" "$us" "$rss" "$srv" | tee -a "$RESULTS"
  sleep 1
}
p_wrk() { awk '/ requests in / {r=$1} /^Requests\/sec/ {s=$2} END {print r, s}' "$1.out"; }
p_floor() { sed -n 's/.*requests=\([0-9]*\) errors=\([0-9]*\).* rps=\([0-9.]*\).*/\1 \3/p' "$1.out" | tail -1; }
p_epoll() { sed -n 's/.* requests=\([0-9]*\) rps=\([0-9.]*\).*/\1 \2/p' "$1.out" | tail -1; }
p_luaload() { jq -r '"\(.metrics.http_reqs.count) \(.metrics.http_reqs.rate)"' "$1.json" 2>/dev/null; }
p_h2load() { awk '/^finished in/ {gsub(",", ""); s=$4} /^requests:/ {r=$8} END {print r, s}' "$1.out"; }
# luaload_proto NAME URL VUS ENV...: the protocol script with -e ENV
luaload_proto() {
  local name=$1 url=$2 vus=$3 e=() bin=${PROTO_BIN:-$LUALOAD}; shift 3
  for kv in "$@"; do e+=(-e "$kv"); done
  run "$name" p_luaload "$bin" run "$SCR/proto.lua" -e URL="$url" "${e[@]}" -u "$vus" -d "${DUR}s" -w 1 -q \
    --no-summary --summary-export "$SCR/$name.$REP.json"
}

echo "# nginx on cpu $SERVER_CPU, clients on cpu $CLIENT_CPU, $CONNS connections, ${DUR}s per run, $REPS reps" >&2
printf 'case\treq/s\trequests\tcpu_us/req\tpeak_rss_KB\tserver_cpu_%%\n'
# One function per case; each checks that it is wanted.
c_wrk() { want wrk && run wrk p_wrk wrk -t1 -c"$CONNS" -d"${DUR}s" "$URL"; }
c_floor() { want floor && run floor p_floor "$SCR/curlfloor" -u "$URL" -c "$CONNS" -d "$DUR"; }
c_epoll() {
  want epoll && run epoll p_epoll "$SCR/epollfloor" -m epoll -c "$CONNS" -d "$DUR" -u "127.0.0.1:$PORT"
}
c_floor_lua() { want floor-lua && run floor-lua p_floor "$SCR/curlfloor" -l -L -u "$URL" -c "$CONNS" -d "$DUR"; }
c_luaload() {
  want luaload && run luaload p_luaload "$LUALOAD" run "$SCR/get.lua" -e URL="$URL" -u "$CONNS" \
    -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/luaload.$REP.json"
}
c_before() {
  [[ -n $LUALOAD_BEFORE ]] && want luaload && run before p_luaload "$LUALOAD_BEFORE" run "$SCR/get.lua" \
    -e URL="$URL" -u "$CONNS" -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/before.$REP.json"
}
c_quick() {
  want quick && run quick p_luaload "$LUALOAD" run "$URL" -c "$CONNS" -d "${DUR}s" -w 1 -q --no-summary \
    --summary-export "$SCR/quick.$REP.json"
}
c_before_quick() {
  want quick && [[ -n $LUALOAD_BEFORE ]] && run before-quick p_luaload "$LUALOAD_BEFORE" run "$URL" -c "$CONNS" \
    -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/before-quick.$REP.json"
}
c_quick_jwt() {
  want quick-jwt || return 0
  [[ -s $SCR/tokens.txt ]] || awk -v n="$TOKENS" 'BEGIN { srand(1); for (i = 0; i < n; i++)
    printf "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.%08d%0120d.sig%064d\n", i, i, int(rand() * 1e9) }' >"$SCR/tokens.txt"
  run quick-jwt p_luaload "$LUALOAD" run "$URL" -c "$CONNS" -d "${DUR}s" -w 1 -q --no-summary \
    -f "$SCR/tokens.txt" --summary-export "$SCR/quick-jwt.$REP.json"
}
c_k6() {
  [[ -n $K6 ]] && GOMAXPROCS=1 run k6 p_luaload "$K6" run -q -e URL="$URL" --vus "$CONNS" \
    --duration "${DUR}s" --summary-export "$SCR/k6.$REP.json" "$SCR/get.js"
}
c_wrk_tls() { want https && run wrk-tls p_wrk wrk -t1 -c"$CONNS" -d"${DUR}s" "$TLS_URL"; }
c_floor_tls() { want https && run floor-tls p_floor "$SCR/curlfloor" -u "$TLS_URL" -c "$CONNS" -d "$DUR"; }
c_luaload_tls() { want https && luaload_proto luaload-tls "$TLS_URL" "$CONNS" VERSION=1.1; }
c_h2load() { want h2 && run h2load-h2 p_h2load h2load -t1 -c10 -m10 -D "$DUR" "$TLS_URL"; }
c_floor_h2() { want h2 && run floor-h2 p_floor "$SCR/curlfloor" -2 -u "$TLS_URL" -c 100 -C 10 -S 10 -d "$DUR"; }
c_luaload_h2() { want h2 && luaload_proto luaload-h2 "$TLS_URL" 100 MUX=10 STREAMS=10; }
c_before_h2() { want h2 && [[ -n $LUALOAD_BEFORE ]] && PROTO_BIN=$LUALOAD_BEFORE luaload_proto before-h2 "$TLS_URL" 100 MUX=10 STREAMS=10; }
c_floor_h3() { want h3 && run floor-h3 p_floor "$SCR/curlfloor-h3" -2 -u "$H3_URL" -c "$CONNS" -C "$CONNS" -S 1 -d "$DUR"; }
c_luaload_h3() { want h3 && luaload_proto luaload-h3 "$H3_URL" "$CONNS" VERSION=3; }
c_luaload_h3_curl() { want h3 && luaload_proto luaload-h3-curl "$H3_URL" "$CONNS" VERSION=3 TRANSPORT=curl; }
c_luaload_h2_caddy() { want h3 && luaload_proto luaload-h2-caddy "$H3_URL" "$CONNS" VERSION=2; }
c_floor_h3_ng() { want h3 && run floor-h3-ngtcp2 p_floor "$SCR/curlfloor-h3" -2 -u "$NG_URL" -c "$CONNS" -C "$CONNS" -S 1 -d "$DUR"; }
c_luaload_h3_ng() { want h3 && luaload_proto luaload-h3-ngtcp2 "$NG_URL" "$CONNS" VERSION=3; }
c_floor_h3_mux() { want h3 && run floor-h3-mux p_floor "$SCR/curlfloor-h3" -2 -u "$NG_URL" -c 100 -C 10 -S 10 -d "$DUR"; }
c_luaload_h3_mux() { want h3 && luaload_proto luaload-h3-mux "$NG_URL" 100 VERSION=3 MUX=10 STREAMS=10; }
c_luaload_h3_curl_mux() { want h3 && luaload_proto luaload-h3-curl-mux "$NG_URL" 100 VERSION=3 MUX=10 STREAMS=10 TRANSPORT=curl; }
c_luaload_h3_curl_ng() { want h3 && luaload_proto luaload-h3-curl-ngtcp2 "$NG_URL" "$CONNS" VERSION=3 TRANSPORT=curl; }
c_floor_scale() {
  want scale && run floor-$SCALE_VUS p_floor "$SCR/curlfloor" -u "$URL" -c "$SCALE_VUS" -P $(((SCALE_VUS + 99) / 100)) -d "$DUR"
}
c_luaload_scale() {
  want scale && run luaload-$SCALE_VUS p_luaload "$LUALOAD" run "$SCR/get.lua" -e URL="$URL" -u "$SCALE_VUS" \
    -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/luaload-$SCALE_VUS.$REP.json"
}
c_before_scale() {
  want scale && [[ -n $LUALOAD_BEFORE ]] && run before-$SCALE_VUS p_luaload "$LUALOAD_BEFORE" run "$SCR/get.lua" \
    -e URL="$URL" -u "$SCALE_VUS" -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/before-$SCALE_VUS.$REP.json"
}

# Runs the cases of a comparison back to back, in this order on odd reps
# and in the reverse order on even ones: this machine's speed drifts over
# tens of seconds, so the runs whose ratio is a target sit next to each
# other, and a drift favours each side of a pair equally often.
group() {
  local c
  if ((REP % 2)); then for c in "$@"; do "$c"; done
  else for ((c = $#; c >= 1; c--)); do "${!c}"; done; fi
}

# a second of each kind of traffic first, not recorded: the first run after
# nginx started was the slowest of the series
taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "$URL" >/dev/null 2>&1
want https && taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "$TLS_URL" >/dev/null 2>&1
want h2 && taskset -c "$CLIENT_CPU" h2load -t1 -c10 -m10 -D 1 "$TLS_URL" >/dev/null 2>&1

for ((REP = 1; REP <= REPS; REP++)); do
  group c_before c_luaload c_wrk c_quick c_before_quick c_epoll c_quick_jwt
  group c_floor c_floor_lua c_k6
  group c_wrk_tls c_luaload_tls c_floor_tls
  group c_h2load c_luaload_h2 c_before_h2 c_floor_h2
  group c_floor_h3 c_luaload_h3 c_luaload_h3_curl c_luaload_h2_caddy
  group c_floor_h3_ng c_luaload_h3_ng c_luaload_h3_curl_ng
  group c_floor_h3_mux c_luaload_h3_mux c_luaload_h3_curl_mux
  group c_floor_scale c_luaload_scale c_before_scale
done
if want mem; then
  REP=1
  run luaload-mem-100 p_luaload "$LUALOAD" run "$SCR/mem.lua" -e URL="$URL" -u 100 -d "${DUR}s" -w 1 \
    -q --no-summary --summary-export "$SCR/luaload-mem-100.1.json"
  run luaload-mem-$MEM_VUS p_luaload "$LUALOAD" run "$SCR/mem.lua" -e URL="$URL" -u "$MEM_VUS" -d "${DUR}s" -w 1 \
    -q --no-summary --summary-export "$SCR/luaload-mem-$MEM_VUS.1.json"
  [[ -n $LUALOAD_BEFORE ]] && run before-mem-$MEM_VUS p_luaload "$LUALOAD_BEFORE" run "$SCR/mem.lua" -e URL="$URL" \
    -u "$MEM_VUS" -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/before-mem-$MEM_VUS.1.json"
fi
if want h3 && [[ ${H3_MEM:-1} == 1 ]]; then
  REP=1
  for n in 100 "$MEM_VUS"; do
    run luaload-h3-mem-$n p_luaload "$LUALOAD" run "$SCR/mem-h3.lua" -e URL="$NG_URL" -u "$n" -d "${DUR}s" -w 1 \
      -q --no-summary --summary-export "$SCR/luaload-h3-mem-$n.1.json"
  done
fi

# ---- medians and ratios ----
med() {
  awk -F'\t' -v n="$1" -v c="$2" '$1 == n && $c != "-" {print $c}' "$RESULTS" | sort -g |
    awk '{v[NR] = $1} END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-" }'; }
verdict() { awk -v x="$1" "BEGIN { if (x == \"-\") print \"n/a\"; else if (x $2) print \"ok\"; else print \"MISSED\" }"; }

echo
echo "medians over $REPS reps:"
for c in wrk k6 floor floor-lua epoll luaload quick quick-jwt before before-quick floor-$SCALE_VUS luaload-$SCALE_VUS \
  before-$SCALE_VUS wrk-tls floor-tls luaload-tls h2load-h2 floor-h2 luaload-h2 before-h2 floor-h3 luaload-h3 \
  luaload-h3-curl luaload-h2-caddy floor-h3-ngtcp2 luaload-h3-ngtcp2 luaload-h3-curl-ngtcp2 \
  floor-h3-mux luaload-h3-mux luaload-h3-curl-mux luaload-h3-mem-100 luaload-h3-mem-$MEM_VUS \
  luaload-mem-$MEM_VUS before-mem-$MEM_VUS; do
  printf '  %-16s %10s req/s  %8s µs/req  %8s KB  server %4s%% busy\n' "$c" "$(med "$c" 2)" "$(med "$c" 4)" \
    "$(med "$c" 5)" "$(med "$c" 6)"
done
L_RPS=$(med luaload 2) L_US=$(med luaload 4)
for floor in floor floor-lua; do
  r1=$(ratio "$L_RPS" "$(med $floor 2)") r2=$(ratio "$L_US" "$(med $floor 4)")
  echo "luaload / $floor: req/s x$r1 (target >= 0.9: $(verdict "$r1" '>= 0.9')), CPU/req x$r2 (target <= 1.15: $(verdict "$r2" '<= 1.15'))"
done
echo "luaload / wrk: req/s x$(ratio "$L_RPS" "$(med wrk 2)"), CPU/req x$(ratio "$L_US" "$(med wrk 4)")"
if want quick; then
  r=$(ratio "$(med quick 2)" "$L_RPS")
  echo "quick / luaload (a script): req/s x$r (target >= 1: $(verdict "$r" '>= 0.98')), quick / wrk: x$(ratio "$(med quick 2)" "$(med wrk 2)")"
fi
if want quick-jwt; then
  r=$(ratio "$(med quick-jwt 2)" "$(med quick 2)")
  echo "quick-jwt / quick: req/s x$r (target >= 0.9: $(verdict "$r" '>= 0.9'))"
fi
r=$(ratio "$(med luaload-$SCALE_VUS 4)" "$L_US")
echo "luaload CPU/req at $SCALE_VUS VUs / at $CONNS VUs: x$r (target <= 1.5: $(verdict "$r" '<= 1.5'))"
if [[ -n $LUALOAD_BEFORE ]]; then
  echo "luaload / before: req/s x$(ratio "$L_RPS" "$(med before 2)"), CPU/req x$(ratio "$L_US" "$(med before 4)");" \
    "at $SCALE_VUS VUs: req/s x$(ratio "$(med luaload-$SCALE_VUS 2)" "$(med before-$SCALE_VUS 2)")," \
    "CPU/req x$(ratio "$(med luaload-$SCALE_VUS 4)" "$(med before-$SCALE_VUS 4)")"
  echo "quick / before: req/s x$(ratio "$(med quick 2)" "$(med before-quick 2)"), CPU/req x$(ratio "$(med quick 4)" "$(med before-quick 4)");" \
    "h2: req/s x$(ratio "$(med luaload-h2 2)" "$(med before-h2 2)"), CPU/req x$(ratio "$(med luaload-h2 4)" "$(med before-h2 4)");" \
    "RSS at $MEM_VUS VUs: x$(ratio "$(med luaload-mem-$MEM_VUS 5)" "$(med before-mem-$MEM_VUS 5)")"
fi
# the protocol cases: luaload against the floor in the same protocol and model
for p in tls:https h2:h2 h3:h3; do
  k=${p%%:*}
  want "${p#*:}" || continue
  r1=$(ratio "$(med luaload-$k 2)" "$(med floor-$k 2)") r2=$(ratio "$(med luaload-$k 4)" "$(med floor-$k 4)")
  echo "luaload-$k / floor-$k: req/s x$r1 (target >= 0.9: $(verdict "$r1" '>= 0.9')), CPU/req x$r2"
done
want https && echo "luaload-tls / wrk-tls: req/s x$(ratio "$(med luaload-tls 2)" "$(med wrk-tls 2)"), CPU/req x$(ratio "$(med luaload-tls 4)" "$(med wrk-tls 4)")"
if want h3; then
  r1=$(ratio "$(med luaload-h3 2)" "$(med luaload-h3-curl 2)") r2=$(ratio "$(med luaload-h3-curl 4)" "$(med luaload-h3 4)")
  echo "luaload-h3 native / on libcurl: req/s x$r1, per client core x$r2 (target >= 3: $(verdict "$r2" '>= 3'))"
  r1=$(ratio "$(med luaload-h3-ngtcp2 2)" "$(med luaload-h3-curl-ngtcp2 2)")
  r2=$(ratio "$(med luaload-h3-curl-ngtcp2 4)" "$(med luaload-h3-ngtcp2 4)")
  echo "luaload-h3 native / on libcurl, against ngtcp2-server: req/s x$r1, per client core x$r2 (target >= 3: $(verdict "$r2" '>= 3'))"
  r1=$(ratio "$(med luaload-h3-mux 2)" "$(med luaload-h3-curl-mux 2)")
  r2=$(ratio "$(med luaload-h3-curl-mux 4)" "$(med luaload-h3-mux 4)")
  echo "luaload-h3-mux native / on libcurl (10 x 10 streams, ngtcp2-server): req/s x$r1, per client core x$r2 (target >= 3: $(verdict "$r2" '>= 3'))"
  big=$(med luaload-h3-mem-$MEM_VUS 5) small=$(med luaload-h3-mem-100 5)
  echo "luaload RSS at $MEM_VUS VUs over multiplexed HTTP/3: $big KB = $(ratio "$big" "$MEM_VUS") KB/VU," \
    "$(awk -v b="$big" -v s="$small" -v n="$MEM_VUS" 'BEGIN { if (b != "-" && s != "-") printf "%.1f", (b - s) / (n - 100); else print "-" }') KB/VU marginal" \
    "(requests: $(med luaload-h3-mem-$MEM_VUS 3))"
  r=$(ratio "$(med luaload-h3 4)" "$(med luaload-h2-caddy 4)")
  echo "luaload-h3 / luaload-h2-caddy (the same Caddy): CPU/req x$r (goal <= 2: $(verdict "$r" '<= 2'))"
fi
want h2 && echo "luaload-h2 / h2load: req/s x$(ratio "$(med luaload-h2 2)" "$(med h2load-h2 2)"), CPU/req x$(ratio "$(med luaload-h2 4)" "$(med h2load-h2 4)")"
if want mem; then
  big=$(med luaload-mem-$MEM_VUS 5) small=$(med luaload-mem-100 5)
  per=$(awk -v b="$big" -v n="$MEM_VUS" 'BEGIN { if (b != "-") printf "%.1f", b / n; else print "-" }')
  marg=$(awk -v b="$big" -v s="$small" -v n="$MEM_VUS" 'BEGIN { if (b != "-" && s != "-") printf "%.1f", (b - s) / (n - 100); else print "-" }')
  echo "luaload RSS at $MEM_VUS VUs: $big KB = $per KB/VU total, $marg KB/VU marginal (target <= 16: $(verdict "$per" '<= 16'))"
  echo "  (requests in the memory run: $(med luaload-mem-$MEM_VUS 3); each VU holds one keep-alive connection)"
fi

# ---- issue 14: the native transports against the fastest peers ----
# pair A B: the median over the reps of A's req/s over B's in the same rep
# (run back to back, so a slow stretch of a shared machine hits both)
pair() {
  awk -F'\t' -v a="$1" -v b="$2" -v c="${3:-2}" '$1 == a && $c != "-" {x[++na] = $c} $1 == b && $c != "-" {y[++nb] = $c}
    END { n = na < nb ? na : nb; for (i = 1; i <= n; i++) r[i] = x[i] / y[i]
          if (!n) { print "-"; exit }
          for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
          printf "%.2f", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }' "$RESULTS"
}
echo "issue 14 targets (medians of the per-rep ratios; req/s, then per client core: the inverse ratio of CPU per"
echo "request, which is what a run measures when the server's core is the one that is full):"
target() { # target LABEL A B MIN
  local r c
  r=$(pair "$2" "$3") c=$(pair "$3" "$2" 4)
  printf '  %-32s req/s x%s (target >= %s: %s), per core x%s (%s)\n' "$1" "$r" "$4" "$(verdict "$r" ">= $4")" \
    "$c" "$(verdict "$c" ">= $4")"
}
target "scripted / wrk (HTTP/1.1):" luaload wrk 1.0
target "scripted / wrk (HTTP/1.1, TLS):" luaload-tls wrk-tls 1.0
target "scripted / h2load (HTTP/2, TLS):" luaload-h2 h2load-h2 1.0
target "quick / wrk:" quick wrk 1.2
target "scripted / k6:" luaload k6 8
if want epoll; then # how far the kernel alone lets a client get ahead of wrk, and how close quick mode is
  printf '  %-32s per core x%s (a minimal epoll client, no metrics)\n' "syscall floor / wrk:" "$(pair wrk epoll 4)"
  printf '  %-32s per core x%s (1.0: luaload costs what the minimal client does)\n' "quick / syscall floor:" \
    "$(pair epoll quick 4)"
fi
