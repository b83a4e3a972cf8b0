#!/usr/bin/env bash
# HTTP/3 when the server misbehaves, against ngtcp2's example server
# (gtlsserver, Debian's ngtcp2-server) on 127.0.0.1 and python3 UDP
# sockets: every case is a counted failure with its error_code and words,
# within the Client's timeout, never a hang.
#   stop     the server stops answering (SIGSTOP): 1050 request timeout; the
#            connection, silent since the request began, takes no more
#            requests, so the one after SIGCONT goes on a new connection
#   restart  the server restarts between two requests of a VU: the new one
#            answers the old connection with a stateless reset it cannot
#            authenticate (another key): 1050, then a new connection works
#   reset    a stateless reset with the server's own token (read from its
#            qlog): 1220 "the server reset the QUIC connection (stateless
#            reset)", then a new connection works
#   alert    no TLS group in common: the server closes the handshake with
#            TLS alert 40, 1300
#   credits  max-streams-bidi=2 and 10 multiplexing VUs: all complete as the
#            server grants more streams; stopped, they time out counted
#   refused  nobody on the port: ICMP port unreachable, 1212 dial udp
#   silent   a socket that drops the Initial: 1211 dial timeout
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
_srv_need gtlsserver /usr/bin/python3 || exit 1
make_certs || exit 1
WWW=$T/www
mkdir -p "$WWW" && echo hello >"$WWW/index.html"
read -r H3_PORT <<<"$(_srv_ports 1)"
H3=https://127.0.0.1:$H3_PORT

# gtls LOG ARGS...: gtlsserver on H3_PORT (UDP); sets GTLS_PID once it
# listens (its log says "Using document root" first)
gtls() {
  local log=$1 i
  shift
  _srv_launch "$log" gtlsserver -d "$WWW" --no-quic-dump --no-http-dump "$@" 127.0.0.1 "$H3_PORT" \
    "$CERTS/server.key" "$CERTS/server.pem"
  GTLS_PID=$_SRV_PID
  for ((i = 0; i < 50; i++)); do
    grep -qs "Using document root" "$log" && ss -Huan "sport = :$H3_PORT" | grep -q . && return 0
    sleep 0.1
  done
  echo "gtlsserver did not start: $(head -c 400 "$log")" >&2
  exit 1
}
# requests LOG: the requests gtlsserver answered; heard LOG: the request
# heads it read
requests() { grep -c "submit response headers" "$1"; }
heard() { grep -c "headers ended" "$1"; }
# in_background ARGS...: luaload ARGS in the background (LL its pid), its
# output in $T/out.txt (the results: lines starting with a step number, in
# $T/steps.txt once it ended: ended), the time it began in BEGAN
in_background() {
  BEGAN=$(date +%s.%N)
  timeout -k 5 60 "$LUALOAD" "$@" >"$T/out.txt" 2>"$T/err.txt" &
  LL=$!
}
ended() {
  wait $LL
  RC=$?
  grep -P '^\d\t' "$T/out.txt" >"$T/steps.txt"
}
# at SECS: sleeps until SECS after BEGAN
at() { sleep "$(awk -v a="$BEGAN" -v b="$(date +%s.%N)" -v s="$1" 'BEGIN { d = a + s - b; print (d > 0 ? d : 0) }')"; }
# steps: the results of $T/steps.txt on one line, the fields up to error
steps() { cut -f1-5 "$T/steps.txt" | tr '\t\n' ',;'; }

# a VU's requests with sleeps between them, printing each result
steps_script() { # NAME TIMEOUT SLEEP STEPS
  script "$1.lua" <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" }, timeout = "$2" }
options = { thresholds = { ["http_reqs{status:200}"] = { "count>=0" }, ["http_reqs{error_code:1050}"] = { "count>=0" },
  ["http_reqs{error_code:1220}"] = { "count>=0" } } }
function default()
  for i = 1, $4 do
    local r = c:get("$H3/index.html")
    print(i, r.status, r.proto, r.error_code, r.error, r.body)
    if i < $4 then ll.sleep($3) end
  end
end
LUA
}

# stop: 3 VUs, each: a 200 at 0 s, a request at 1.5 s into a server stopped
# at 0.7 s (timeout 2 s: 1050 at 3.5 s), SIGCONT at 4 s, a request at 5 s
# that works on a new connection
gtls "$T/stop.log"
S=$(steps_script stop 2s 1.5 3)
in_background run "$S" -q -u 3 -i 3 --summary-export "$T/s.json" -o json="$T/stop.json"
at 0.7
kill -STOP "$GTLS_PID"
at 4
kill -CONT "$GTLS_PID"
ended
expect_eq "stop: exit 0" "$RC" 0
expect_eq "stop: the first requests, 200" "$(grep -c -P '^1\t200\tHTTP/3.0\t0\t\thello$' "$T/out.txt")" 3
expect_eq "stop: the requests into the stopped server: 1050 request timeout" \
  "$(grep -c -P '^2\t0\t\t1050\trequest timeout\t$' "$T/out.txt")" 3
expect_eq "stop: after SIGCONT, 200 again" "$(grep -c -P '^3\t200\tHTTP/3.0\t0\t\thello$' "$T/out.txt")" 3
expect_eq "stop: http_reqs = 9" "$(cnt http_reqs)" 9
expect_eq "stop: http_reqs{error_code:1050} = 3" "$(cnt 'http_reqs{error_code:1050}')" 3
expect_eq "stop: http_req_failed passes 3" "$(passes http_req_failed)" 3
expect_eq "stop: the VUs dialed again after the timeouts (3 + 3 connections)" "$(conns "$T/stop.json")" 6
expect_eq "stop: the server read the 9 requests (3 once it went on)" "$(heard "$T/stop.log")" 9
stop_pid "$GTLS_PID"

# restart: a request at 0, the server restarted at 0.5 s, a request at 1 s
# (its packets reach the new instance, whose stateless reset is not the old
# connection's to authenticate: dropped, 1050 at 3 s), one at 4 s on a new
# connection
gtls "$T/restart1.log"
S=$(steps_script restart 2s 1 3)
in_background run "$S" -q -i 1 --summary-export "$T/s.json"
at 0.5
stop_pid "$GTLS_PID"
gtls "$T/restart2.log"
ended
expect_eq "restart: exit 0" "$RC" 0
expect_eq "restart: the results in order" "$(steps)" \
  "1,200,HTTP/3.0,0,;2,0,,1050,request timeout;3,200,HTTP/3.0,0,;"
expect_eq "restart: the new server sent stateless resets" \
  "$(grep -c "Unexpected packet received" "$T/restart2.log" | awk '{ print ($1 > 0) }')" 1
expect_eq "restart: http_reqs{error_code:1050} = 1" "$(cnt 'http_reqs{error_code:1050}')" 1
expect_eq "restart: http_req_failed passes 1" "$(passes http_req_failed)" 1
stop_pid "$GTLS_PID"

# reset: the server (its qlog on) answers a request at 0 s, then is killed;
# from 2 s a python3 socket on its port answers each datagram with stateless
# resets carrying the tokens the server gave (RFC 9000 10.3: a short header,
# random bytes, the 16-byte token last), meeting the request at 3 s; at 5 s
# the server is back for the request at 6 s
mkdir -p "$T/qlog"
gtls "$T/reset.log" --qlog-dir="$T/qlog"
S=$(steps_script reset 1.5s 3 3)
in_background run "$S" -q -i 1 --summary-export "$T/s.json"
at 0.5
stop_pid "$GTLS_PID"
grep -ho '"stateless_reset_token":{"data":"[0-9a-f]*"' "$T"/qlog/* | sed 's/.*"data":"//; s/"$//' | sort -u \
  >"$T/tokens.txt"
cat >"$T/resetter.py" <<'PY'
import os, socket, sys
tokens = [bytes.fromhex(t) for t in open(sys.argv[2]).read().split()]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
print("resetting with", len(tokens), "tokens", flush=True)
while True:
    data, peer = s.recvfrom(65536)
    if len(data) < 43 or data[0] & 0x80:
        continue  # a long header: a new connection's Initial, not ours to reset
    for t in tokens:
        s.sendto(bytes([0x40 | (os.urandom(1)[0] & 0x3f)]) + os.urandom(26) + t, peer)
PY
_srv_launch "$T/resetter.log" /usr/bin/python3 "$T/resetter.py" "$H3_PORT" "$T/tokens.txt"
RESETTER=$_SRV_PID
for ((i = 0; i < 50; i++)); do grep -qs resetting "$T/resetter.log" && break; sleep 0.1; done
expect_eq "reset: the resetter listens before the second request" \
  "$(awk -v a="$BEGAN" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 2.8) }')" 1
at 5
stop_pid "$RESETTER"
gtls "$T/reset2.log"
ended
expect_eq "reset: exit 0" "$RC" 0
expect_eq "reset: the server's tokens were in its qlog" "$(awk 'END { print (NR > 0) }' "$T/tokens.txt")" 1
expect_eq "reset: the results in order" "$(steps)" \
  "1,200,HTTP/3.0,0,;2,0,,1220,the server reset the QUIC connection (stateless reset);3,200,HTTP/3.0,0,;"
expect_eq "reset: http_reqs{error_code:1220} = 1" "$(cnt 'http_reqs{error_code:1220}')" 1
expect_eq "reset: http_req_failed passes 1" "$(passes http_req_failed)" 1
expect_eq "reset: the new server answered the third request" "$(requests "$T/reset2.log")" 1
stop_pid "$GTLS_PID"

# alert: the server offers only FFDHE groups, which QUIC's TLS of luaload
# does not: it closes the handshake with TLS alert 40 (handshake_failure)
gtls "$T/alert.log" --groups=-GROUP-ALL:+GROUP-FFDHE2048
S=$(steps_script alert 3s 0 2)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json"
expect_eq "alert: exit 0" "$RC" 0
expect_eq "alert: 1300 naming the alert, each request" \
  "$(grep -c -P '^[12]\t0\t\t1300\ttls: the server closed the QUIC connection with TLS alert 40 \(Handshake failed\)\t$' "$OUT")" 2
expect_eq "alert: http_req_failed passes 2" "$(passes http_req_failed)" 2
expect_cmp "alert: at once (< 2 s)" "x < 2" "$ELAPSED"
stop_pid "$GTLS_PID"

# credits: the server allows 2 concurrent request streams; 10 multiplexing
# VUs' 200 requests all complete on one connection as it grants more
gtls "$T/credits.log" --max-streams-bidi=2
S=$(script credits.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", multiplex = true, tls = { ca = "$CERTS/ca.pem" }, timeout = "2s" }
options = { thresholds = { ["http_reqs{status:200}"] = { "count>=0" }, ["http_reqs{error_code:1050}"] = { "count>=0" } } }
function default()
  local r = c:get("$H3/index.html")
  if r.status ~= 200 then print("bad", r.status, r.error_code, r.error) end
end
LUA
)
run_ll run "$S" -q -u 10 -i 200 -w 1 --summary-export "$T/s.json" -o json="$T/credits.json"
expect_eq "credits: exit 0" "$RC" 0
expect_eq "credits: http_reqs{status:200} = 200" "$(cnt 'http_reqs{status:200}')" 200
expect_eq "credits: no failure" "$(passes http_req_failed)" 0
expect_eq "credits: one connection (one worker)" "$(conns "$T/credits.json")" 1
expect_eq "credits: the server answered 200 requests" "$(requests "$T/credits.log")" 200
# then each VU's second request, 1 s after its first, meets a server
# stopped at 0.5 s: the 10 requests, in flight or waiting for a stream
# credit, end as request timeouts (2 s), counted
S=$(script credits_stop.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", multiplex = true, tls = { ca = "$CERTS/ca.pem" }, timeout = "2s" }
options = { thresholds = { ["http_reqs{status:200}"] = { "count>=0" }, ["http_reqs{error_code:1050}"] = { "count>=0" } } }
function default()
  local r = c:get("$H3/index.html")
  print("first", r.status, r.error_code, r.error)
  ll.sleep(1)
  r = c:get("$H3/index.html")
  print("second", r.status, r.error_code, r.error)
end
LUA
)
in_background run "$S" -q -u 10 -i 10 -w 1 --summary-export "$T/s.json"
at 0.5
kill -STOP "$GTLS_PID"
ended
WAITED=$(awk -v a="$BEGAN" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
kill -CONT "$GTLS_PID"
expect_eq "credits stopped: exit 0" "$RC" 0
expect_eq "credits stopped: the first requests, 200" "$(grep -c -P '^first\t200\t0\t$' "$T/out.txt")" 10
expect_eq "credits stopped: the second ones, 1050 request timeout" \
  "$(grep -c -P '^second\t0\t1050\trequest timeout$' "$T/out.txt")" 10
expect_eq "credits stopped: http_reqs = 20" "$(cnt http_reqs)" 20
expect_eq "credits stopped: http_reqs{error_code:1050} = 10" "$(cnt 'http_reqs{error_code:1050}')" 10
expect_eq "credits stopped: http_req_failed passes 10" "$(passes http_req_failed)" 10
expect_cmp "credits stopped: over at the timeout (3 to 4.5 s)" "x >= 3 && x < 4.5" "$WAITED"
stop_pid "$GTLS_PID"

# refused: nobody on the port; the ICMP port unreachable fails the dial
S=$(steps_script refused 3s 0 1)
run_ll run "$S" -q -i 2 --summary-export "$T/s.json"
expect_eq "refused: exit 0" "$RC" 0
expect_eq "refused: 1212 dial udp ... connection refused" \
  "$(grep -c -P "^1\t0\t\t1212\tdial udp 127.0.0.1:$H3_PORT: connect: connection refused\t$" "$OUT")" 2
expect_eq "refused: http_req_failed passes 2" "$(passes http_req_failed)" 2
expect_cmp "refused: at once (< 2 s)" "x < 2" "$ELAPSED"

# silent: a socket that reads and drops: the handshake never completes, a
# dial timeout at the Client's timeout (1.5 s)
_srv_launch "$T/silent.log" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
print("dropping", flush=True)
while True: s.recvfrom(65536)' "$H3_PORT"
for ((i = 0; i < 30; i++)); do grep -qs dropping "$T/silent.log" && break; sleep 0.1; done
S=$(steps_script silent 1.5s 0 1)
run_ll run "$S" -q -i 2 --summary-export "$T/s.json"
expect_eq "silent: exit 0" "$RC" 0
expect_eq "silent: 1211 dial udp ... i/o timeout" \
  "$(grep -c -P "^1\t0\t\t1211\tdial udp 127.0.0.1:$H3_PORT: i/o timeout\t$" "$OUT")" 2
expect_eq "silent: http_req_failed passes 2" "$(passes http_req_failed)" 2
expect_cmp "silent: two timeouts of 1.5 s (3 to 5 s)" "x >= 3 && x < 5" "$ELAPSED"
finish
