#!/usr/bin/env bash
# uring.sh -- io_uring (one submit per loop turn for all connections) against
# luaload's transport model (level-triggered epoll, one read() and one send()
# per request), measured with the standalone client bench/uring_vs_epoll.c.
# No luaload code is involved; this answers "would io_uring pay here?".
#
# Builds the client into a scratch dir, starts nginx pinned to SERVER_CPU
# (config written here, loopback only: worker_processes 1, access_log off,
# keepalive_requests 10000000, return 200 "hello world\n"), then runs the
# client pinned to CLIENT_CPU, alternating modes, REPS times, for each of
# CONNS_LIST, each run under /usr/bin/time: requests/s and client CPU µs per
# request (user+sys / requests), and the nginx worker's CPU share and CPU µs
# per request (on loopback the receiver's wake-up work is charged to the
# sender, so the client's model shows up in nginx's cost too); medians over
# the reps and the uring/epoll ratios. Then, if strace is there, one short
# run per mode and connection count under `strace -f -c` for syscalls per
# request (strace slows the client, so batching per turn differs from the
# full-speed runs; the client's own count of its loop's syscalls at full
# speed, which matches strace's count call for call, is printed beside it).
#
# Modes (MODES): epoll, uring (SINGLE_ISSUER|DEFER_TASKRUN), uring-plain (no
# setup flags), uring-sqpoll (SQPOLL; its kernel thread inherits CLIENT_CPU,
# so on a 2-core box it shares the client's core: reported separately).
# A mode may end in /wN (e.g. uring/w8): the client's -w N, each turn waiting
# for N completions (at most CONNS) instead of 1 -- fewer wake-ups, but every
# response is handled late, so an experiment, not a transport for a load
# tester that timestamps responses.
#
# Knobs: DUR(5) REPS(3) CONNS_LIST("50 1000") MODES("epoll uring uring-plain
#   uring-sqpoll") STRACE_DUR(2) CLIENT_CPU(1) SERVER_CPU(0) PORT(18680) KEEP(0)
# Run it alone (the machine's rule): flock /tmp/build.lock bash bench/uring.sh
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DUR=${DUR:-5}
REPS=${REPS:-3}
CONNS_LIST=${CONNS_LIST:-50 1000}
MODES=${MODES:-epoll uring uring-plain uring-sqpoll}
STRACE_DUR=${STRACE_DUR:-2}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
PORT=${PORT:-18680}
URL=http://127.0.0.1:$PORT/

die() { echo "uring.sh: $*" >&2; exit 2; }
for t in nginx taskset curl cc /usr/bin/time; do
  command -v "$t" >/dev/null || die "$t not found"
done
[[ -f /usr/include/liburing.h ]] || die "liburing not installed (apt-get install -y liburing-dev)"

SCR=$(mktemp -d -t luaload-uring.XXXXXX)
NGINX_PID=
cleanup() {
  [[ -n $NGINX_PID ]] && kill -QUIT "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  if [[ ${KEEP:-0} == 1 ]]; then echo "scratch kept: $SCR" >&2; else rm -rf "$SCR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the client ----
BIN=$SCR/uring_vs_epoll
cc -std=c11 -O2 -Wall -Wextra -Werror -o "$BIN" "$HERE/uring_vs_epoll.c" -luring \
  || die "cannot build uring_vs_epoll"

# ---- target: nginx on one core ----
mkdir -p "$SCR/nginx/temp"
cat >"$SCR/nginx/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile $(ulimit -Hn);
daemon off;
pid $SCR/nginx/nginx.pid;
error_log $SCR/nginx/error.log warn;
events { worker_connections 32768; }
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  default_type text/plain;
  client_body_temp_path $SCR/nginx/temp; proxy_temp_path $SCR/nginx/temp;
  fastcgi_temp_path $SCR/nginx/temp; uwsgi_temp_path $SCR/nginx/temp; scgi_temp_path $SCR/nginx/temp;
  server { listen 127.0.0.1:$PORT backlog=4096; location / { return 200 "hello world\n"; } }
}
CONF
ulimit -n "$(ulimit -Hn)"
taskset -c "$SERVER_CPU" nginx -p "$SCR/nginx/" -e "$SCR/nginx/error.log" -c "$SCR/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
curl -s -o /dev/null "$URL" || die "nginx did not start ($(cat "$SCR/nginx/error.log"))"
WORKER=$(pgrep -P "$NGINX_PID" | head -1)
[[ -n $WORKER ]] || die "no nginx worker"
TICKS=$(getconf CLK_TCK)
server_ticks() { awk '{ print $14 + $15 }' "/proc/$WORKER/stat"; } # nginx worker utime+stime

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; } # field NAME FILE (client output)
median() { sort -g | awk '{v[NR] = $1} END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# the client's arguments for MODE (maybe MODE/wN) at CONNS, into CARGS
client_args() {
  local base=${1%/w*} wait=1
  [[ $1 == */w* ]] && wait=${1##*/w}
  ((wait > $2)) && wait=$2
  CARGS=(-m "$base" -w "$wait" -c "$2")
}

# one timed run: run MODE CONNS TAG -> $SCR/TAG.out, $SCR/TAG.time; one result line
run() {
  local mode=$1 conns=$2 tag=$3 t0 t1
  client_args "$mode" "$conns"
  t0=$(server_ticks)
  /usr/bin/time -f "%U %S %M" -o "$SCR/$tag.time" \
    taskset -c "$CLIENT_CPU" "$BIN" "${CARGS[@]}" -d "$DUR" -u "127.0.0.1:$PORT" \
    >"$SCR/$tag.out" 2>"$SCR/$tag.err" || die "$tag failed: $(cat "$SCR/$tag.err")"
  t1=$(server_ticks)
  local req rps sys cpu srv srvreq
  req=$(field requests "$SCR/$tag.out")
  rps=$(field rps "$SCR/$tag.out")
  sys=$(field syscalls_per_req "$SCR/$tag.out")
  cpu=$(awk -v r="$req" '{ printf "%.3f", ($1 + $2) * 1e6 / r }' "$SCR/$tag.time")
  srv=$(awk -v a="$t0" -v b="$t1" -v t="$TICKS" -v d="$DUR" 'BEGIN { printf "%.0f", (b - a) * 100 / t / d }')
  srvreq=$(awk -v a="$t0" -v b="$t1" -v t="$TICKS" -v r="$req" 'BEGIN { printf "%.3f", (b - a) * 1e6 / t / r }')
  echo "$mode $conns $rps $cpu $sys $srv $srvreq" >>"$SCR/results"
  printf '  %-13s conns=%-5s req/s=%-8s CPU µs/req=%-7s loop syscalls/req=%-6s nginx CPU %s%% %s µs/req  (client user+sys %s s, RSS %s KB)\n' \
    "$mode" "$conns" "$rps" "$cpu" "$sys" "$srv" "$srvreq" "$(awk '{ print $1 + $2 }' "$SCR/$tag.time")" \
    "$(awk '{ print $3 }' "$SCR/$tag.time")"
}

echo "uring.sh: kernel $(uname -r), $(nproc) cores, liburing $(dpkg-query -W -f='${Version}' liburing-dev 2>/dev/null)," \
  "nginx on CPU $SERVER_CPU, client on CPU $CLIENT_CPU, DUR=$DUR s, REPS=$REPS"
: >"$SCR/results"
for rep in $(seq "$REPS"); do
  echo "rep $rep"
  for conns in $CONNS_LIST; do
    for mode in $MODES; do run "$mode" "$conns" "${mode//\//-}-$conns-$rep"; done
  done
done

# ---- syscalls per request under strace ----
declare -A STRACE_PER_REQ=()
if command -v strace >/dev/null; then
  echo "strace -f -c, $STRACE_DUR s per case (client and strace both on CPU $CLIENT_CPU)"
  for conns in $CONNS_LIST; do
    for mode in $MODES; do
      tag=strace-${mode//\//-}-$conns
      client_args "$mode" "$conns"
      taskset -c "$CLIENT_CPU" strace -f -c -o "$SCR/$tag.strace" \
        "$BIN" "${CARGS[@]}" -d "$STRACE_DUR" -u "127.0.0.1:$PORT" \
        >"$SCR/$tag.out" 2>"$SCR/$tag.err" || die "$tag failed: $(cat "$SCR/$tag.err")"
      req=$(field requests "$SCR/$tag.out")
      # the loop's syscalls by name, and all of them (setup included)
      read -r loop total names < <(awk -v r="$req" '
        $NF == "total" { total = $4; next }
        $NF ~ /^(epoll_wait|epoll_pwait|read|sendto|io_uring_enter)$/ { loop += $4; names = names $NF ":" $4 "," }
        END { printf "%d %d %s\n", loop, total, names }' "$SCR/$tag.strace")
      STRACE_PER_REQ[$mode-$conns]=$(awk -v l="$loop" -v r="$req" 'BEGIN { printf "%.3f", l / r }')
      printf '  %-13s conns=%-5s requests=%-7s loop syscalls=%-8s (%s) per req=%s; all syscalls per req=%s\n' \
        "$mode" "$conns" "$req" "$loop" "${names%,}" "${STRACE_PER_REQ[$mode-$conns]}" \
        "$(awk -v t="$total" -v r="$req" 'BEGIN { printf "%.3f", t / r }')"
    done
  done
else
  echo "strace not installed (apt-get install -y strace): syscalls per request from the client's own count only"
fi

# ---- medians ----
echo
echo "medians over $REPS reps ($DUR s each):"
printf '| %-13s | %5s | %9s | %10s | %23s | %21s | %9s | %15s |\n' mode conns req/s "CPU µs/req" "loop syscalls/req (own)" "syscalls/req (strace)" "nginx CPU" "nginx µs/req"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' --------------- ------- ----------- ------------ ------------------------- ----------------------- ----------- -----------------
declare -A MED_RPS=() MED_CPU=()
for conns in $CONNS_LIST; do
  for mode in $MODES; do
    sel() { awk -v m="$mode" -v c="$conns" -v k="$1" '$1 == m && $2 == c { print $k }' "$SCR/results" | median; }
    MED_RPS[$mode-$conns]=$(sel 3)
    MED_CPU[$mode-$conns]=$(sel 4)
    printf '| %-13s | %5s | %9.0f | %10.3f | %23.3f | %21s | %8s%% | %15.3f |\n' "$mode" "$conns" \
      "${MED_RPS[$mode-$conns]}" "${MED_CPU[$mode-$conns]}" "$(sel 5)" "${STRACE_PER_REQ[$mode-$conns]:--}" "$(sel 6)" "$(sel 7)"
  done
done
echo
echo "ratios against epoll (req/s: >1 is faster; CPU/req: <1 is cheaper):"
for conns in $CONNS_LIST; do
  [[ -n ${MED_RPS[epoll-$conns]:-} ]] || continue
  for mode in $MODES; do
    [[ $mode == epoll ]] && continue
    awk -v m="$mode" -v c="$conns" -v r1="${MED_RPS[$mode-$conns]}" -v r0="${MED_RPS[epoll-$conns]}" \
      -v c1="${MED_CPU[$mode-$conns]}" -v c0="${MED_CPU[epoll-$conns]}" \
      'BEGIN { printf "  %-13s/epoll conns=%-5s req/s x%.3f   CPU/req x%.3f\n", m, c, r1 / r0, c1 / c0 }'
  done
done
