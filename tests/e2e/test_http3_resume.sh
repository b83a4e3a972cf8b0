#!/usr/bin/env bash
# Native HTTP/3 resumes TLS sessions, as the TCP transports do: against
# Debian's ngtcp2-server (gtlsserver, ngtcp2's example server; its qlog per
# connection is what the test reads), a Client with disable_keep_alive
# makes a new QUIC connection per request; the first does a full handshake
# (the server's Handshake packets carry its certificate), the next ones
# resume the session ticket the first received (no certificate: a fraction
# of the bytes). A Client of its own starts over with a full handshake.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
command -v gtlsserver >/dev/null || { not_ok "gtlsserver installed (scripts/setup.sh: ngtcp2-server)"; finish; exit 1; }
make_certs || exit 1
mkdir -p "$T/htdocs" "$T/qlog"
echo hello >"$T/htdocs/index.html"
UPORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
gtlsserver -q --qlog-dir "$T/qlog" -d "$T/htdocs" 127.0.0.1 "$UPORT" "$CERTS/server.key" "$CERTS/server.pem" \
  >"$T/gtlsserver.log" 2>&1 &
EXTRA_PIDS+=($!)
for ((i = 0; i < 50; i++)); do [[ -n $(ss -Hulpn "( sport = :$UPORT )") ]] && break; sleep 0.1; done

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
finish
