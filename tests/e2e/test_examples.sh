#!/usr/bin/env bash
# test_examples.sh -- every script of scripts/examples runs against
# `luaload serve` with its own options: exit 0, no failed check, no failed
# request (chat-ws.lua: WebSocket sessions, its thresholds on ws_connecting
# and ws_session_duration pass; grpc-echo.lua: gRPC over serve's h2c echo,
# its thresholds on grpc_req_duration pass); and open-model.lua gates CI (exit 99)
# against a slow server.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../scripts/examples" && pwd)
start_serve

for s in hello crud-api form-login file-upload open-model browse checkout; do
  run_ll run "$EX/$s.lua" -q -e BASE_URL="$URL" --summary-export "$T/$s.json"
  expect_eq "$s.lua: exit 0" "$RC" 0
  [[ $RC -eq 0 ]] || sed -n 1,15p "$ERR"
  expect_cmp "$s.lua: checks ran" "x > 0" "$(jqv "$T/$s.json" '.metrics.checks.passes // 0')"
  expect_eq "$s.lua: no failed check" "$(jqv "$T/$s.json" '.metrics.checks.fails // "missing"')" 0
  expect_eq "$s.lua: no failed request" "$(jqv "$T/$s.json" '.metrics.http_req_failed.passes // "missing"')" 0
  expect_eq "$s.lua: no script error" "$(grep -c 'error' "$ERR")" 0
done
expect_cmp "checkout.lua: 4 VUs x 10 iterations" "x == 40" "$(jqv "$T/checkout.json" '.metrics.iterations.count')"
# chat-ws.lua: WebSocket sessions on /ws/echo, no HTTP request; 5 VUs for 3 s
run_ll run "$EX/chat-ws.lua" -q -e BASE_URL="$URL" --summary-export "$T/chat-ws.json"
expect_eq "chat-ws.lua: exit 0 (its thresholds passed)" "$RC" 0
[[ $RC -eq 0 ]] || sed -n 1,15p "$ERR"
expect_cmp "chat-ws.lua: a message checked per echo" "x > 100" "$(jqv "$T/chat-ws.json" '.metrics.checks.passes // 0')"
expect_eq "chat-ws.lua: checks 100%" "$(jqv "$T/chat-ws.json" '.metrics.checks.fails // "missing"')" 0
expect_cmp "chat-ws.lua: 5 VUs x ~1 s sessions over 3 s" "x >= 5 && x <= 20" "$(jqv "$T/chat-ws.json" '.metrics.ws_sessions.count')"
for m in ws_connecting ws_session_duration; do
  expect_eq "chat-ws.lua: $m thresholds ran and passed" \
    "$(jqv "$T/chat-ws.json" "[.metrics.$m.thresholds // {} | to_entries[] | .value] | (length > 0) and all(. == false)")" true
done
expect_eq "chat-ws.lua: every message echoed" "$(jqv "$T/chat-ws.json" '.metrics.ws_msgs_received.count == .metrics.ws_msgs_sent.count')" true
expect_eq "chat-ws.lua: no script error" "$(grep -c 'error' "$ERR")" 0
# grpc-echo.lua: luaload.grpc against serve's h2c gRPC echo, unary and a bidirectional chat; 5 VUs for 3 s
run_ll run "$EX/grpc-echo.lua" -q -e BASE_URL="$URL" --summary-export "$T/grpc-echo.json" -o json="$T/grpc-echo.points"
expect_eq "grpc-echo.lua: exit 0 (its thresholds passed)" "$RC" 0
[[ $RC -eq 0 ]] || sed -n 1,15p "$ERR"
expect_cmp "grpc-echo.lua: checks ran" "x > 50" "$(jqv "$T/grpc-echo.json" '.metrics.checks.passes // 0')"
expect_eq "grpc-echo.lua: checks 100%" "$(jqv "$T/grpc-echo.json" '.metrics.checks.fails // "missing"')" 0
expect_cmp "grpc-echo.lua: calls and chats timed (grpc_req_duration samples)" "x > 0" \
  "$(jq -s '[.[] | select(.type == "Point" and .metric == "grpc_req_duration")] | length' "$T/grpc-echo.points")"
expect_eq "grpc-echo.lua: every chat line echoed" \
  "$(jqv "$T/grpc-echo.json" '.metrics.grpc_streams_msgs_received.count == .metrics.grpc_streams_msgs_sent.count')" true
expect_eq "grpc-echo.lua: no script error" "$(grep -c 'error' "$ERR")" 0
expect_cmp "open-model.lua: arrivals near the planned 470" "x >= 420 && x <= 480" "$(jqv "$T/open-model.json" '.metrics.iterations.count')"

# the same open model against a server that takes 300 ms: the p(95) budget fails the run
stop_pid "$SERVE_PID"
SERVE_PID=
start_serve --delay 300ms
run_ll run "$EX/open-model.lua" -q -e BASE_URL="$URL"
expect_eq "open-model.lua against a slow server: exit 99 (thresholds failed)" "$RC" 99
expect_match "open-model.lua: the p(95) threshold is the one that failed" "$OUT" "✗ 'p\(95\)<250' p\(95\)="
finish
