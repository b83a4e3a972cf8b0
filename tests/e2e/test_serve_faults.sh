#!/usr/bin/env bash
# luaload serve: /fault/NAME routes, --faults, --seed, /stats and the exit
# stats line, --die-after, bad --faults values.
source "$(dirname "$0")/lib.sh"

# fetch NAME CURL-ARGS...: curl with a 5 s cap; sets CRC (curl's exit code),
# CODE (status), SIZE (body bytes), HSIZE (header bytes), TIME (seconds);
# the body is in $T/body, curl's output with -i/-v in $T/curl.err
fetch() {
  local w
  w=$(curl -sS -m 5 -o "$T/body" -w '%{http_code} %{size_download} %{size_header} %{time_total}' "$@" 2>"$T/curl.err")
  CRC=$?
  read -r CODE SIZE HSIZE TIME <<<"$w"
}

# stop_serve: SIGINT, wait for the exit; sets SERVE_RC
stop_serve() {
  kill -INT "$SERVE_PID"
  wait "$SERVE_PID"
  SERVE_RC=$?
  SERVE_PID=
}

# stats FILE: GET /stats into FILE
stats() { curl -s -m 5 -o "$1" "$URL/stats"; }

# ---- the /fault/NAME routes ----
start_serve --threads 2
fetch "$URL/fault/reset"
expect_eq "/fault/reset: curl sees a connection reset (56)" "$CRC" 56
fetch -i "$URL/fault/close-headers"
expect_eq "/fault/close-headers: no blank line ends the head" "$(grep -c $'^\r$' "$T/body")" 0
expect_match "/fault/close-headers: the head begins" "$T/body" "^HTTP/1.1 200 OK"
fetch "$URL/fault/close-body"
expect_eq "/fault/close-body: curl fails with a partial body (18)" "$CRC $SIZE" "18 512"
fetch "$URL/fault/garbage"
expect_cmp "/fault/garbage: curl fails" "x != 0" "$CRC"
fetch "$URL/fault/slow-headers"
expect_eq "/fault/slow-headers: 200 with the body" "$CRC $CODE $SIZE" "0 200 12"
expect_cmp "/fault/slow-headers: takes about 1 s" "x >= 0.8 && x < 3" "$TIME"
fetch "$URL/fault/slow-body"
expect_eq "/fault/slow-body: 200 with the body" "$CRC $CODE $SIZE" "0 200 12"
expect_cmp "/fault/slow-body: takes about 1 s" "x >= 0.8 && x < 3" "$TIME"
fetch "$URL/fault/huge-headers"
expect_eq "/fault/huge-headers: 200 with the body" "$CRC $CODE $SIZE" "0 200 12"
expect_cmp "/fault/huge-headers: over 256 KiB of headers" "x > 262144" "$HSIZE"
curl -sS -m 5 -i "$URL/fault/early-hints" >"$T/hints" 2>&1
expect_eq "/fault/early-hints: curl succeeds" "$?" 0
expect_match "/fault/early-hints: a 103 with a Link header" "$T/hints" "^HTTP/1.1 103 Early Hints"
expect_match "/fault/early-hints: then the 200" "$T/hints" "^HTTP/1.1 200 OK"
expect_match "/fault/early-hints: the Link header" "$T/hints" "^Link: "
start=$(date +%s.%N)
curl -s -m 1 -o /dev/null "$URL/fault/stall"
crc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
expect_eq "/fault/stall: curl -m 1 times out (28)" "$crc" 28
expect_cmp "/fault/stall: after about 1 s" "x >= 0.9 && x < 3" "$elapsed"
fetch -I "$URL/fault/close-headers"
expect_cmp "HEAD /fault/close-headers: curl fails" "x != 0" "$CRC"
fetch "$URL/fault/nope"
expect_eq "/fault/nope: 404" "$CODE" 404
expect_match "/fault/nope: the body lists the faults" "$T/body" "reset, close-headers"

# ---- /stats ----
stats "$T/s1.json"
expect_eq "/stats: 11 requests so far" "$(jqv "$T/s1.json" .requests)" 11
expect_eq "/stats: routes" "$(jqv "$T/s1.json" '.routes | [.fault, .error] | @tsv')" "$(printf '10\t1')"
expect_eq "/stats: each fault once, close-headers twice" \
  "$(jqv "$T/s1.json" '.faults | [.reset, ."close-headers", ."close-body", .garbage, ."slow-headers", ."slow-body", .stall, ."huge-headers", ."early-hints"] | @tsv')" \
  "$(printf '1\t2\t1\t1\t1\t1\t1\t1\t1')"
for i in 1 2 3 4 5 6; do curl -s -o /dev/null "$URL/"; done
curl -s -o /dev/null -o /dev/null -o /dev/null "$URL/status/201" "$URL/bytes/100" "$URL/echo"
stats "$T/s2.json"
stats "$T/s3.json"
expect_eq "/stats: counts the default route and each route" \
  "$(jqv "$T/s3.json" '[.requests, .routes.default, .routes.status, .routes.bytes, .routes.echo] | @tsv')" \
  "$(printf '20\t6\t1\t1\t1')"
expect_eq "/stats: does not count itself" "$(jqv "$T/s2.json" .requests)" "$(jqv "$T/s3.json" .requests)"
expect_eq "/stats: no stats route listed" "$(jqv "$T/s3.json" '.routes.stats // "none"')" none
expect_cmp "/stats: bytes received" "x > 1000" "$(jqv "$T/s3.json" .bytes_received)"
expect_cmp "/stats: bytes sent (huge-headers alone sent 256 KiB)" "x > 262144" "$(jqv "$T/s3.json" .bytes_sent)"
expect_eq "/stats: application/json" \
  "$(curl -s -o /dev/null -w '%{content_type}' "$URL/stats")" application/json
stop_serve
expect_eq "SIGINT: exit 0" "$SERVE_RC" 0
sed -n 's/^luaload serve: stats //p' "$T/serve.out" >"$T/exit.json"
expect_eq "SIGINT: the stats line has the same requests" "$(jqv "$T/exit.json" .requests)" 20

# ---- --faults ----
start_serve --faults reset=100%
for path in / /status/200 /bytes/10 /delay/1; do
  fetch "$URL$path"
  expect_eq "--faults reset=100%: $path is reset" "$CRC" 56
done
fetch --data-binary ping "$URL/echo"
expect_eq "--faults reset=100%: /echo is reset" "$CRC" 56
stats "$T/f.json"
expect_eq "--faults reset=100%: /stats is not faulted, counts 5 resets" \
  "$(jqv "$T/f.json" '[.requests, .faults.reset] | @tsv')" "$(printf '5\t5')"
stop_serve

# sequence SEED: sets SEQ to 24 requests' curl exit codes under a seeded mix
# of faults (one thread, one request at a time: the draws come in order)
sequence() {
  start_serve --faults reset=20%,close-body=20%,garbage=20%,close-headers=20% --seed "$1"
  expect_match "--seed $1: printed" "$T/serve.out" "injecting faults, --seed $1\$"
  SEQ=
  for _ in $(seq 24); do
    curl -s -m 5 -o /dev/null "$URL/bytes/10"
    SEQ="$SEQ$?,"
  done
  curl -s "$URL/stats" | jq -c .faults >>"$T/seq.faults"
  stop_serve
}
sequence 42
a=$SEQ
sequence 42
b=$SEQ
sequence 7
c=$SEQ
expect_eq "--seed 42 twice: the same fault sequence" "$a" "$b"
expect_eq "--seed 42 twice: the same fault counts" "$(sed -n 1p "$T/seq.faults")" "$(sed -n 2p "$T/seq.faults")"
expect_cmp "--seed 42: a mix of outcomes" "x >= 3" "$(tr , '\n' <<<"$a" | sort -u | grep -c .)"
if [[ "$a" != "$c" ]]; then ok "--seed 7: another sequence"; else not_ok "--seed 7: another sequence" "$c"; fi

# ---- --die-after ----
run_ll serve --port 0 --threads 1 --die-after 1s
expect_eq "--die-after 1s: exit 0" "$RC" 0
expect_cmp "--die-after 1s: within 2 s" "x >= 0.9 && x < 2" "$ELAPSED"
expect_match "--die-after 1s: prints the stats line" "$ERR" \
  '^luaload serve: stats \{"requests":0,"bytes_received":0,"bytes_sent":0,"routes":\{\},"faults":\{\},"methods":\{\},"connections":0,"reused":0,"websocket":\{"sessions":0,"messages_received":0,"messages_sent":0\},"sse":\{"streams":0,"events":0\},"http2":\{"connections":0,"streams":0\},"grpc":\{"messages_received":0,"messages_sent":0\},"headers":\{\}\}$'

# ---- bad --faults ----
for bad in foo=1% reset=1 reset=101% reset=60%,stall=50% reset reset=1%,reset=2% reset=0.00001% ''; do
  run_ll serve --port 0 --faults "$bad"
  expect_eq "--faults '$bad': exit 104" "$RC" 104
  expect_eq "--faults '$bad': one line naming --faults" \
    "$(wc -l <"$ERR") $(grep -c '^luaload serve: --faults: ' "$ERR")" "1 1"
done
run_ll serve --faults foo=1%
expect_match "--faults foo=1%: lists the faults" "$ERR" "unknown fault 'foo' \(expected reset, close-headers, "
finish
