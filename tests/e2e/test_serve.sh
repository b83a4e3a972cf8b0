#!/usr/bin/env bash
# luaload serve: default route flags, routes, keep-alive, bad input.
source "$(dirname "$0")/lib.sh"
start_serve --status 201 --body-size 100 --delay 50ms
code=$(curl -s -o "$T/b" -w '%{http_code} %{size_download} %{time_total}' "$URL/")
read -r st size tt <<<"$code"
expect_eq "--status" "$st" 201
expect_eq "--body-size" "$size" 100
expect_cmp "--delay 50ms" "x >= 0.045 && x < 1" "$tt"
expect_eq "/status/418" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/status/418")" 418
expect_eq "/bytes/12345" "$(curl -s -o /dev/null -w '%{size_download}' "$URL/bytes/12345")" 12345
expect_eq "/echo" "$(curl -s --data-binary 'ping' "$URL/echo")" ping
expect_eq "/echo chunked" "$(printf 'abc%.0s' $(seq 1000) | curl -s -H 'Transfer-Encoding: chunked' --data-binary @- "$URL/echo" | wc -c)" 3000
expect_eq "keep-alive: 3 requests, 1 connection" \
  "$(curl -s -o /dev/null -o /dev/null -o /dev/null -w '%{num_connects}\n' "$URL/status/200" "$URL/status/200" "$URL/status/200" | awk '{s += $1} END {print s}')" 1
resp=$(printf 'garbage\r\n\r\n' | timeout 5 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read())
print(s.recv(100).split(b"\r\n")[0].decode())' "$PORT")
expect_eq "garbage gets 400" "$resp" "HTTP/1.1 400 Bad Request"
expect_eq "still serving after garbage" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/status/200")" 200

"$LUALOAD" serve --port 70000 >"$T/o" 2>"$T/e"
expect_eq "bad --port: exit 104" "$?" 104
expect_match "bad --port: message names the flag" "$T/e" "--port"
"$LUALOAD" serve --bogus >"$T/o" 2>"$T/e"
expect_eq "unknown flag: exit 104" "$?" 104
finish
