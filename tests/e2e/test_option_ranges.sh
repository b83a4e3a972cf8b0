#!/usr/bin/env bash
# Options that once lied: durations past what int64 nanoseconds hold wrapped
# (-d 5124095.577h ended after 3.6 s), abortOnFail = "false" was true, and a
# bad LUALOAD_DURATION or K6_WEB_DASHBOARD_PORT got an error that did not
# name it. Each is exit 104 naming the option now.
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8

S=$(script ok.lua <<'LUA'
function default() end
LUA
)

# durations: 2^64 ns (which wrapped) and just past 2^63-1 ns are refused, by name
run_ll run "$S" -q -d 5124095.577h
expect_eq "-d 5124095.577h: exit 104" "$RC" 104
expect_match "-d 5124095.577h: names -d" "$ERR" "invalid value for -d: '5124095.577h'"
run_ll run "$S" -q --duration 2562047h47m16s854776us
expect_eq "--duration one microsecond past 2^63-1 ns: exit 104" "$RC" 104
expect_match "--duration past the longest: names --duration" "$ERR" "invalid value for --duration"
run_ll run "$S" -q -d 1s --graceful-stop 5124095.577h
expect_eq "--graceful-stop 5124095.577h: exit 104" "$RC" 104
expect_match "--graceful-stop: names it" "$ERR" "invalid value for --graceful-stop: '5124095.577h'"
# each within range, their sum not: the scenario's end would wrap
run_ll run "$S" -q -d 2562047h --graceful-stop 2562047h
expect_eq "-d + --graceful-stop past the longest duration: exit 104" "$RC" 104
expect_match "the sum: names the scenario" "$ERR" "scenario default: startTime \+ duration .* past the longest duration"

# script options: every duration, as a string or a number of milliseconds
check_opt() { # NAME OPTIONS-TABLE WANTED-MESSAGE
  local f
  f=$(script "opt_$1.lua" <<LUA
options = $2
function default() end
LUA
)
  run_ll run "$f" -q --no-summary
  expect_eq "$1: exit 104" "$RC" 104
  expect_match "$1: names the option" "$ERR" "$3"
}
check_opt duration '{ duration = "5124095.577h" }' 'options.duration: expected a duration'
check_opt duration_ms '{ duration = 1e300 }' 'options.duration: expected a duration .* got 1e\+300'
check_opt duration_negative '{ vus = 1, duration = -1000 }' 'options.duration: expected a duration'
check_opt gracefulStop '{ gracefulStop = "5124095.577h" }' 'options.gracefulStop: expected a duration'
check_opt setupTimeout '{ setupTimeout = 18446744073709552 }' 'options.setupTimeout: expected a duration'
check_opt teardownTimeout '{ teardownTimeout = "9999999999h" }' 'options.teardownTimeout: expected a duration'
check_opt stage '{ stages = { { duration = "1s", target = 1 }, { duration = "5124095.577h", target = 1 } } }' \
  'options.stages\[2\].duration: expected a duration'
check_opt scenario_stage '{ scenarios = { a = { executor = "ramping-vus", stages = { { duration = 1e300, target = 1 } } } } }' \
  'options.scenarios.a.stages\[1\].duration: expected a duration'
check_opt gracefulRampDown '{ scenarios = { a = { executor = "ramping-vus", gracefulRampDown = "5124095.577h", stages = { { duration = "1s", target = 1 } } } } }' \
  'options.scenarios.a.gracefulRampDown: expected a duration'
check_opt startTime_sum '{ scenarios = { a = { executor = "constant-vus", vus = 1, duration = "2000000h", startTime = "2000000h" } } }' \
  'scenario a: startTime \+ duration'
check_opt delayAbortEval '{ duration = "1s", thresholds = { iterations = { { threshold = "count>0", delayAbortEval = "5124095.577h" } } } }' \
  'delayAbortEval: expected a duration'
# booleans are booleans: k6 fails on a JSON string, and "false" is not false
check_opt abortOnFail '{ duration = "1s", thresholds = { iterations = { { threshold = "count>1e9", abortOnFail = "false" } } } }' \
  'options.thresholds\["iterations"\]: abortOnFail: expected true or false, got the string "false"'
check_opt abortOnFail_number '{ duration = "1s", thresholds = { iterations = { { threshold = "count>1e9", abortOnFail = 0 } } } }' \
  'abortOnFail: expected true or false, got 0'
# abortOnFail = false stays false: the run goes its full second, then fails its threshold
A=$(script abort_false.lua <<'LUA'
options = { duration = "1s", thresholds = { iterations = { { threshold = "count>1e12", abortOnFail = false } } } }
function default() require("luaload").sleep(0.05) end
LUA
)
run_ll run "$A" -q --no-summary
expect_eq "abortOnFail = false: thresholds failed, exit 99" "$RC" 99
expect_cmp "abortOnFail = false: not aborted (ran its second)" "x >= 1" "$ELAPSED"

# a Client's booleans and timeouts, at init: a script error naming the key
C=$(script client_bool.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client{ discard_response_bodies = "false" }
function default() end
LUA
)
run_ll run "$C" -q --no-summary
expect_eq "Client discard_response_bodies = \"false\": exit 107" "$RC" 107
expect_match "Client bool: names it" "$ERR" "discard_response_bodies must be true or false, got string"
C=$(script client_timeout.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client{ timeout = 1e300 }
function default() end
LUA
)
run_ll run "$C" -q --no-summary
expect_eq "Client timeout = 1e300: exit 107" "$RC" 107
expect_match "Client timeout: names it" "$ERR" "timeout must be a duration from 0 to about 292 years"

# environment variables: the error names the variable
LUALOAD_DURATION=0 run_ll run "$S" -q
expect_eq "LUALOAD_DURATION=0: exit 104" "$RC" 104
expect_match "LUALOAD_DURATION=0: names it" "$ERR" "invalid value for LUALOAD_DURATION: '0'"
LUALOAD_DURATION=5124095.577h run_ll run "$S" -q
expect_eq "LUALOAD_DURATION=5124095.577h: exit 104" "$RC" 104
expect_match "LUALOAD_DURATION too long: names it" "$ERR" "invalid value for LUALOAD_DURATION"
K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=eighty run_ll run "$S" -q -d 1s
expect_eq "K6_WEB_DASHBOARD_PORT=eighty: exit 104" "$RC" 104
expect_match "K6_WEB_DASHBOARD_PORT: names it" "$ERR" "K6_WEB_DASHBOARD_PORT: 'eighty' is not a port number"
K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=99999999999999999999 run_ll run "$S" -q -d 1s
expect_eq "K6_WEB_DASHBOARD_PORT past long: exit 104" "$RC" 104
finish
