#!/usr/bin/env bash
# luaload serve's WebSocket and server-sent events routes against peers
# nobody here wrote: Debian's python3-websockets (/ws/echo: text, binary,
# fragmented, ping, close code and reason, 1009 past 1 MiB; /ws/send:
# counts, sizes, pacing, its close), raw frames through a plain socket (a
# frame in the upgrade's packet, an unmasked frame: 1002), curl for the
# refused upgrades and parameters, and the standard library's http.client
# reading /sse (ids, names, joined data lines, retry, pacing, the stream's
# end, the connection kept for the next request). /stats counts it all.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3 # Debian's python3-websockets is for Debian's python3
CLIENT="$(dirname "$0")/helpers/ws_sse_client.py"
start_serve
ADDR=127.0.0.1:$PORT

# peer CASE ARGS...: the client's JSON answer (bounded in time)
peer() { timeout -k 5 40 "$PY" "$CLIENT" "$ADDR" "$@" 2>"$T/peer.err" || echo "{\"failed\":\"$(head -c 300 "$T/peer.err" | tr '\n"' ' _')\"}"; }
# field JSON FILTER
field() { jq -c -r "$2" <<<"$1"; }
stats() { curl -s --max-time 10 "$URL/stats" | jq -c -r "$1"; }

# ---- /ws/echo ----
R=$(peer text 'hello, wörld')
expect_eq "echo: text as it came" "$(field "$R" '"\(.type) \(.value)"')" "str hello, wörld"
R=$(peer binary)
expect_eq "echo: binary as it came" "$(field "$R" '"\(.type) \(.same) \(.len)"')" "bytes true 256"
R=$(peer fragmented)
expect_eq "echo: a text message in 3 frames comes back whole" "$(field "$R" .text)" "frag1 frag2 frag3"
expect_eq "echo: a binary message in 3 frames comes back whole" "$(field "$R" '"\(.binary_type) \(.binary)"')" \
  "bytes 0061626364ff6566"
R=$(peer ping probe)
expect_eq "echo: ping answered by a pong with its payload" "$(field "$R" '"\(.pong) \(.then)"')" "true after ping"
R=$(peer close 4001 'bye now')
expect_eq "echo: the close's code and reason come back" "$(field "$R" '"\(.close_code) \(.close_reason)"')" \
  "4001 bye now"
R=$(peer close 1000 '')
expect_eq "echo: a plain close 1000" "$(field "$R" .close_code)" 1000
R=$(peer burst 200)
expect_eq "echo: 200 messages then a close at once: every echo before the close" \
  "$(field "$R" '"\(.count) \(.in_order) \(.close_code)"')" "200 true 1000"
R=$(peer subprotocol chat superchat)
expect_eq "echo: the first subprotocol offered is chosen" "$(field "$R" .subprotocol)" chat
R=$(peer size 1048576)
expect_eq "echo: a 1 MiB message (the limit) comes back" "$(field "$R" .echoed)" 1048576
R=$(peer size 1048577)
expect_eq "echo: a message past 1 MiB: close 1009" "$(field "$R" .closed)" 1009
R=$(peer raw_pipelined)
expect_eq "raw: 101 with the RFC 6455 Sec-WebSocket-Accept" "$(field "$R" '"\(.status) \(.accept_ok)"')" \
  "HTTP/1.1 101 Switching Protocols true"
expect_eq "raw: a frame sent with the upgrade request is echoed" "$(field "$R" '"\(.opcode) \(.payload)"')" \
  "1 early bird"
# a client that sends without reading is slowed down, not buffered: the
# server stops reading while 1 MiB waits to be sent
HWM0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVE_PID/status")
R=$(peer raw_flood 2)
HWM1=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SERVE_PID/status")
FLOOD=$(field "$R" .messages)
expect_eq "raw: a 2 s flood without reading: every echo comes back once read" "$(field "$R" .echoed_all)" true
expect_cmp "raw: the flood was held back by the socket buffers (messages)" 'x > 1000 && x < 1000000' "$FLOOD"
# (ASan keeps freed memory in quarantine: the peak says nothing there)
if ldd "$LUALOAD" 2>/dev/null | grep -q libasan; then
  echo "# skipping the peak memory check: an ASan build"
else
  expect_cmp "raw: the server's peak memory grew by under 8 MiB (KiB)" 'x < 8192' "$((HWM1 - HWM0))"
fi
R=$(peer raw_unmasked)
expect_eq "raw: an unmasked client frame: close 1002" "$(field "$R" '"\(.opcode) \(.code)"')" "8 1002"

# ---- /ws/send ----
R=$(peer send 'n=5&size=10&interval=100')
expect_eq "send: 5 text messages of 10 bytes, numbered" "$(field "$R" '"\(.count) \(.sizes) \(.types) \(.numbered)"')" \
  '5 [10] ["str"] true'
expect_eq "send: first and last" "$(field "$R" '"\(.first)|\(.last)"')" "1 xxxxxxxx|5 xxxxxxxx"
expect_eq "send: then close 1000 done" "$(field "$R" '"\(.close_code) \(.close_reason)"')" "1000 done"
expect_cmp "send: 4 intervals of 100 ms apart (ms)" 'x >= 380 && x < 5000' "$(field "$R" .ms)"
R=$(peer send '')
expect_eq "send: defaults are 10 messages of 32 bytes" "$(field "$R" '"\(.count) \(.sizes) \(.close_code)"')" \
  "10 [32] 1000"
R=$(peer send 'n=20000&size=100&interval=0')
expect_eq "send: 20000 back to back, in order" "$(field "$R" '"\(.count) \(.sizes) \(.numbered) \(.last)"')" \
  "20000 [100] true 20000 xxxxxxxxxx"
R=$(peer send 'n=3&size=1048576')
expect_eq "send: 3 messages of 1 MiB (the limit)" "$(field "$R" '"\(.count) \(.sizes) \(.close_code)"')" \
  "3 [1048576] 1000"
R=$(peer send 'n=4&size=2')
expect_eq "send: a size below the number cuts it" "$(field "$R" '"\(.count) \(.sizes) \(.first) \(.numbered)"')" \
  "4 [2] 1  true"
R=$(peer send 'n=0')
expect_eq "send: n=0 closes at once" "$(field "$R" '"\(.count) \(.close_code)"')" "0 1000"
R=$(peer send_stop 'n=1000&interval=50' 2)
expect_eq "send: the client's close mid-stream is echoed" "$(field "$R" '"\(.count) \(.close_code) \(.close_reason)"')" \
  "2 1000 enough"

# ---- refused upgrades and parameters ----
# refused PATH CURL_ARGS...: "STATUS|BODY" of a plain HTTP request
refused() {
  local path=$1
  shift
  curl -s --max-time 10 -o "$T/body" -D "$T/head" -w '%{http_code}' "$@" "$URL$path" >"$T/code"
  echo "$(cat "$T/code")|$(cat "$T/body")"
}
UPG=(-H 'Upgrade: websocket' -H 'Connection: Upgrade' -H 'Sec-WebSocket-Version: 13')
KEY=(-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==')
expect_eq "refused: a plain GET of /ws/echo: 426" "$(refused /ws/echo)" \
  "426|expected a WebSocket upgrade: GET with Upgrade: websocket, Connection: Upgrade, Sec-WebSocket-Key and Sec-WebSocket-Version: 13"
expect_match "refused: the 426 says Upgrade: websocket" "$T/head" '^Upgrade: websocket'
expect_eq "refused: no key: 400" "$(refused /ws/echo "${UPG[@]}")" \
  "400|expected one Sec-WebSocket-Key: the base64 of 16 bytes"
expect_eq "refused: a key of 15 bytes" "$(refused /ws/echo "${UPG[@]}" -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZ===')" \
  "400|expected one Sec-WebSocket-Key: the base64 of 16 bytes"
expect_eq "refused: version 8: 426" \
  "$(refused /ws/echo -H 'Upgrade: websocket' -H 'Connection: Upgrade' "${KEY[@]}" -H 'Sec-WebSocket-Version: 8')" \
  "426|expected Sec-WebSocket-Version: 13"
expect_match "refused: the version's 426 names 13" "$T/head" '^Sec-WebSocket-Version: 13'
expect_eq "refused: POST" "$(refused /ws/echo -X POST "${UPG[@]}" "${KEY[@]}")" "400|expected GET for a WebSocket upgrade"
expect_eq "refused: HTTP/1.0" "$(refused /ws/echo -0 "${UPG[@]}" "${KEY[@]}")" \
  "400|expected HTTP/1.1 for a WebSocket upgrade"
expect_eq "refused: no Connection: Upgrade" \
  "$(refused /ws/echo -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' "${KEY[@]}")" \
  "400|expected Connection: Upgrade with Upgrade: websocket"
expect_eq "refused: an unknown /ws/ route: 404" "$(refused /ws/nope "${UPG[@]}" "${KEY[@]}")" \
  "404|unknown WebSocket route: expected /ws/echo or /ws/send"
expect_eq "refused: /ws/echo takes no parameters" "$(refused '/ws/echo?x=1' "${UPG[@]}" "${KEY[@]}")" \
  "400|unknown parameter: /ws/echo takes none"
expect_eq "refused: n not a number" "$(refused '/ws/send?n=ten' "${UPG[@]}" "${KEY[@]}")" \
  "400|bad n: expected an integer from 0 to 1000000"
expect_eq "refused: n past 1000000" "$(refused '/ws/send?n=1000001' "${UPG[@]}" "${KEY[@]}")" \
  "400|bad n: expected an integer from 0 to 1000000"
expect_eq "refused: size past 1 MiB" "$(refused '/ws/send?size=1048577' "${UPG[@]}" "${KEY[@]}")" \
  "400|bad size: expected bytes from 0 to 1048576"
expect_eq "refused: interval past an hour" "$(refused '/ws/send?interval=3600001' "${UPG[@]}" "${KEY[@]}")" \
  "400|bad interval: expected milliseconds from 0 to 3600000"
expect_eq "refused: an unknown /ws/send parameter" "$(refused '/ws/send?count=1' "${UPG[@]}" "${KEY[@]}")" \
  "400|unknown parameter: /ws/send takes n, size and interval"
R=$(peer status '/ws/send?n=-1')
expect_eq "refused: python3-websockets sees the 400" "$(field "$R" .status)" 400
R=$(peer status '/ws/echo?x')
expect_eq "refused: python3-websockets sees /ws/echo's 400" "$(field "$R" .status)" 400

# ---- /sse ----
R=$(peer sse '/sse?n=5&interval=150&event=tick&retry=2500&lines=3')
expect_eq "sse: status, type, chunked" "$(field "$R" '"\(.status) \(.type) \(.te)"')" "200 text/event-stream chunked"
expect_eq "sse: ids 1..5" "$(field "$R" '[.events[].id] | join(",")')" "1,2,3,4,5"
expect_eq "sse: named events" "$(field "$R" '[.events[].event] | unique | join(",")')" "tick"
expect_eq "sse: data lines joined with \\n" "$(field "$R" '.events[4].data')" $'event 5\nline 2\nline 3'
expect_eq "sse: retry once" "$(field "$R" '.retries')" "[2500]"
expect_cmp "sse: the first event at once (ms)" 'x < 140' "$(field "$R" '.events[0].ms')"
expect_cmp "sse: 4 intervals of 150 ms apart (ms)" 'x >= 580 && x < 5000' "$(field "$R" '.events[4].ms')"
expect_eq "sse: the stream ends and the connection serves the next request" "$(field "$R" .then)" 204
R=$(peer sse /sse)
expect_eq "sse: defaults: 10 unnamed events of one data line" \
  "$(field "$R" '"\(.events | length) \([.events[].event] | unique) \(.events[9].data) \(.retries)"')" \
  '10 ["message"] event 10 []'
R=$(peer sse '/sse?n=0')
expect_eq "sse: n=0 ends at once" "$(field "$R" '"\(.status) \(.events | length) \(.then)"')" "200 0 204"
R=$(peer sse '/sse?n=100000')
expect_eq "sse: 100000 back to back (past the output mark), all in order" \
  "$(field "$R" '"\(.events | length) \(.events[99999].id) \([.events[].id | tonumber] == [range(1; 100001)])"')" \
  "100000 100000 true"
R=$(peer sse '/sse?n=2&event=llm' POST)
expect_eq "sse: a POST with a body starts a stream too" "$(field "$R" '"\(.events | length) \(.events[1].event) \(.then)"')" \
  "2 llm 204"
curl -s --max-time 10 -0 -D "$T/h10" -o "$T/b10" "$URL/sse?n=3"
expect_eq "sse: HTTP/1.0 gets the events" "$(grep -c '^id: ' "$T/b10")" 3
expect_match "sse: HTTP/1.0 ends with the connection (no chunks)" "$T/h10" '^Connection: close'
expect_eq "sse: HTTP/1.0 is not chunked" "$(grep -ci '^transfer-encoding' "$T/h10")" 0
expect_eq "sse: HEAD gets the head alone" "$(curl -s --max-time 10 -I "$URL/sse?n=3" | tr -d '\r' | grep -c '^Content-Type: text/event-stream')" 1
# curl -N reads it as it comes; the pipelined request after it is answered
curl -s -N --max-time 10 "$URL/sse?n=3&interval=50" "$URL/status/201" >"$T/curl_sse"
expect_eq "sse: curl -N: 3 events then the next request's answer on the same connection" \
  "$(grep -c '^data: event' "$T/curl_sse") $(tail -n 1 "$T/curl_sse")" "3 201 Created"
expect_eq "refused: sse n" "$(refused '/sse?n=x')" "400|bad n: expected an integer from 0 to 1000000"
expect_eq "refused: sse event name" "$(refused '/sse?event=a%20b')" "400|bad event: expected 1 to 64 of A-Z a-z 0-9 _ . -"
expect_eq "refused: sse lines 0" "$(refused '/sse?lines=0')" "400|bad lines: expected an integer from 1 to 100"
expect_eq "refused: sse retry" "$(refused '/sse?retry=soon')" "400|bad retry: expected milliseconds from 0 to 86400000"
expect_eq "refused: an unknown sse parameter" "$(refused '/sse?size=9')" \
  "400|unknown parameter: /sse takes n, interval, event, retry and lines"

# ---- /stats ----
# 101s: text binary fragmented ping close close burst subprotocol size size
# raw raw raw (13) + send x7 (20); sse streams: 7 (not HEAD); events:
# 5+10+0+100000+2+3+3
expect_eq "stats: websocket sessions = upgrades accepted" "$(stats .websocket.sessions)" 20
expect_eq "stats: routes count each upgrade and stream once" \
  "$(stats '"\(.routes.ws_echo) \(.routes.ws_send) \(.routes.sse)"')" "13 7 8"
expect_eq "stats: sse streams and events" "$(stats '"\(.sse.streams) \(.sse.events)"')" "7 100023"
# messages received: text binary 2xfragmented ping's text burst(200) size(1) raw(1) = 207
expect_eq "stats: websocket messages received" "$(stats .websocket.messages_received)" $((207 + FLOOD))
# sent: 207 echoes + 5+10+20000+3+4+0+2 (send_stop's: at least 2)
expect_cmp "stats: websocket messages sent" "x >= $((20230 + FLOOD))" "$(stats .websocket.messages_sent)"
kill -INT "$SERVE_PID"
wait "$SERVE_PID"
expect_eq "SIGINT: exit 0" "$?" 0
SERVE_PID=

# ---- --faults leaves the WebSocket and SSE routes alone ----
start_serve --faults reset=100%
ADDR=127.0.0.1:$PORT
expect_eq "faults: the default route is reset" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/")" 000
R=$(peer text 'not faulted')
expect_eq "faults: /ws/echo still echoes" "$(field "$R" .value)" "not faulted"
R=$(peer sse '/sse?n=2')
expect_eq "faults: /sse still streams (the next request on its connection is reset)" \
  "$(field "$R" '"\(.events | length) \(.then | test("ConnectionReset|RemoteDisconnected"))"')" "2 true"
finish
