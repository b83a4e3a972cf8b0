#!/usr/bin/env bash
# Native HTTP/3 resumes TLS sessions, as the TCP transports do: against
# Debian's ngtcp2-server (gtlsserver, ngtcp2's example server; its qlog per
# connection is what the test reads), a Client with disable_keep_alive
# makes a new QUIC connection per request; the first does a full handshake
# (the server's Handshake packets carry its certificate), the next ones
# resume the session ticket the first received (no certificate: a fraction
# of the bytes). A Client of its own starts over with a full handshake.
# 0-RTT (zero_rtt = true): the resumed connections send a GET as early data
# (the server's qlog shows 0-RTT packets received; res.zero_rtt and the
# http_req_zero_rtt counter say so), a POST waits for the handshake; a
# server restarted in between (new ticket keys) refuses the early data, and
# the GET is sent again after the handshake: one response, not counted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
command -v gtlsserver >/dev/null || { not_ok "gtlsserver installed (scripts/setup.sh: ngtcp2-server)"; finish; exit 1; }
make_certs || exit 1
mkdir -p "$T/htdocs" "$T/qlog"
echo hello >"$T/htdocs/index.html"
UPORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# start_server QLOG_DIR: gtlsserver on UPORT (its pid in GTLS_PID)
start_server() {
  mkdir -p "$1"
  gtlsserver -q --qlog-dir "$1" -d "$T/htdocs" 127.0.0.1 "$UPORT" "$CERTS/server.key" "$CERTS/server.pem" \
    >"$T/gtlsserver.log" 2>&1 &
  GTLS_PID=$!
  EXTRA_PIDS+=($GTLS_PID)
  for ((i = 0; i < 50; i++)); do [[ -n $(ss -Hulpn "( sport = :$UPORT )") ]] && break; sleep 0.1; done
}
start_server "$T/qlog"

S=$(script resume.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", disable_keep_alive = true, tls = { ca = "$CERTS/ca.pem" } }
function default()
  local r = c:get("https://127.0.0.1:$UPORT/index.html")
  print("got", r.status, r.proto, r.body)
  ll.sleep(0.1) -- the ticket comes after the handshake; the next connection takes it
end
LUA
)
run_ll run "$S" -q -i 3
expect_eq "resume: exit 0" "$RC" 0
expect_eq "resume: three 200s over HTTP/3" "$(grep -c -P '^got\t200\tHTTP/3.0\thello$' "$OUT")" 3
# hs FILE: the bytes of the Handshake packets the server sent on that connection
hs() { grep '"transport:packet_sent"' "$1" | grep '"packet_type":"handshake"' | grep -o '"length":[0-9]*' |
  cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'; }
mapfile -t LOGS < <(ls -tr "$T"/qlog/*.sqlog)
expect_eq "resume: a QUIC connection per request (the server's qlogs)" "${#LOGS[@]}" 3
FULL=$(hs "${LOGS[0]}") R1=$(hs "${LOGS[1]}") R2=$(hs "${LOGS[2]}")
expect_cmp "resume: the first handshake is a full one (the certificate: > 500 bytes)" "x > 500" "$FULL"
expect_cmp "resume: the second connection resumed (under half the bytes: $R1 of $FULL)" "x < $FULL / 2" "$R1"
expect_cmp "resume: the third too ($R2 of $FULL)" "x < $FULL / 2" "$R2"

# zero_rtt: a connection per request; each iteration a GET then a POST
rm -f "$T"/qlog/*.sqlog
S=$(script zero.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", disable_keep_alive = true, zero_rtt = true, tls = { ca = "$CERTS/ca.pem" } }
function default()
  local r = c:get("https://127.0.0.1:$UPORT/index.html")
  print("get", r.status, r.proto, r.zero_rtt, r.body)
  ll.sleep(0.1)
  r = c:post("https://127.0.0.1:$UPORT/index.html", "x")
  print("post", r.status, r.proto, r.zero_rtt)
  ll.sleep(0.1)
end
LUA
)
run_ll run "$S" -q -i 3 --summary-export "$T/s.json"
expect_eq "0-RTT: exit 0" "$RC" 0
expect_eq "0-RTT: the first GET goes after a full handshake" "$(sed -n 1p "$OUT")" "$(printf 'get\t200\tHTTP/3.0\tfalse\thello')"
expect_eq "0-RTT: the next GETs go as 0-RTT (res.zero_rtt)" "$(grep -c -P '^get\t200\tHTTP/3.0\ttrue\thello$' "$OUT")" 2
expect_eq "0-RTT: a POST never does" "$(grep -c -P '^post\t200\tHTTP/3.0\tfalse$' "$OUT")" 3
expect_eq "0-RTT: http_req_zero_rtt counts the 2" "$(cnt http_req_zero_rtt)" 2
# zrtt FILE: the 0-RTT packets the server received, and whether a HEADERS
# frame on a request stream (id 0) came in one of them
zrtt() { grep '"transport:packet_received"' "$1" | grep -c '"packet_type":"0RTT"'; }
zreq() { grep '"transport:packet_received"' "$1" | grep '"packet_type":"0RTT"' | grep -c '"stream_id":0,'; }
mapfile -t LOGS < <(ls -tr "$T"/qlog/*.sqlog)
expect_eq "0-RTT: a QUIC connection per request" "${#LOGS[@]}" 6
expect_eq "0-RTT: none on the first connection (no ticket yet)" "$(zrtt "${LOGS[0]}")" 0
expect_eq "0-RTT: the server received the resumed GETs' request stream in 0-RTT packets" \
  "$(($(zreq "${LOGS[2]}") > 0 && $(zreq "${LOGS[4]}") > 0))" 1
expect_eq "0-RTT: and the POSTs' request streams after the handshake" \
  "$(($(zreq "${LOGS[1]}") + $(zreq "${LOGS[3]}") + $(zreq "${LOGS[5]}")))" 0

# a server restarted between two requests has new ticket keys: the early
# data is refused and the GET goes again after the handshake
S=$(script refused.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", disable_keep_alive = true, zero_rtt = true, tls = { ca = "$CERTS/ca.pem" },
  qlog_dir = "$T/cqlog" }
function default()
  local r = c:get("https://127.0.0.1:$UPORT/index.html")
  print("first", r.status, r.zero_rtt)
  io.stdout:flush()
  ll.sleep(0.1)
  for i = 1, 60 do
    local f = io.open("$T/restarted")
    if f then f:close() break end
    ll.sleep(0.1)
  end
  r = c:get("https://127.0.0.1:$UPORT/index.html")
  print("after", r.status, r.proto, r.zero_rtt, r.body)
end
LUA
)
mkdir -p "$T/cqlog"
timeout -k 5 60 "$LUALOAD" run "$S" -q -i 1 --summary-export "$T/r.json" >"$T/refused.out" 2>"$T/refused.err" &
LL_PID=$!
for ((i = 0; i < 100; i++)); do grep -q '^first' "$T/refused.out" && break; sleep 0.1; done
stop_pid "$GTLS_PID"
start_server "$T/qlog2"
touch "$T/restarted"
wait "$LL_PID"
expect_eq "refused 0-RTT: exit 0" "$?" 0
expect_eq "refused 0-RTT: the first GET" "$(grep -c -P '^first\t200\tfalse$' "$T/refused.out")" 1
expect_eq "refused 0-RTT: the GET sent again gets its response, not as 0-RTT" \
  "$(grep -c -P '^after\t200\tHTTP/3.0\tfalse\thello$' "$T/refused.out")" 1
expect_eq "refused 0-RTT: http_reqs = 2 (the refused try is no request)" "$(jqv "$T/r.json" '.metrics.http_reqs.count')" 2
expect_eq "refused 0-RTT: http_req_zero_rtt none" "$(jqv "$T/r.json" '.metrics.http_req_zero_rtt.count // 0')" 0
L2=$(ls -t "$T"/cqlog/*.sqlog | head -1)
expect_cmp "refused 0-RTT: the client did send its GET in 0-RTT packets (its qlog)" "x > 0" \
  "$(grep '"transport:packet_sent"' "$L2" | grep '"packet_type":"0RTT"' | grep -c '"stream_id":0,')"
expect_cmp "refused 0-RTT: and again after the handshake" "x > 0" \
  "$(grep '"transport:packet_sent"' "$L2" | grep '"packet_type":"1RTT"' | grep -c '"stream_id":0,')"
finish
