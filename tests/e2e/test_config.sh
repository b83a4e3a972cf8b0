#!/usr/bin/env bash
# Options from the script, LUALOAD_* env and flags (CLI > env > script);
# bad flags and options exit 104 with a one-line error.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script opts.lua <<LUA
local http = require("luaload.http")
options = { vus = 3, iterations = 12 }
function default() http.get("$URL/") end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "script options: 12 iterations" "$(jqv "$T/s.json" .metrics.iterations.count)" 12
expect_eq "script options: 3 VUs" "$(jqv "$T/s.json" .metrics.vus.value)" 3
LUALOAD_ITERATIONS=5 run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "env beats script" "$(jqv "$T/s.json" .metrics.iterations.count)" 5
LUALOAD_ITERATIONS=5 run_ll run "$S" -i 7 -u 2 -q --summary-export "$T/s.json"
expect_eq "CLI beats env" "$(jqv "$T/s.json" .metrics.iterations.count)" 7
expect_eq "CLI vus" "$(jqv "$T/s.json" .metrics.vus.value)" 2

run_ll run "$S" -u abc
expect_eq "bad --vus: exit 104" "$RC" 104
expect_match "bad --vus: message" "$ERR" "invalid value for -u: 'abc' \(expected an integer >= 1\)"
expect_eq "bad --vus: one line" "$(wc -l <"$ERR")" 1
run_ll run "$S" -d 10parsecs
expect_eq "bad --duration: exit 104" "$RC" 104
expect_match "bad --duration: message" "$ERR" "invalid value for -d: '10parsecs'"
run_ll run "$S" --frobnicate
expect_eq "unknown flag: exit 104" "$RC" 104
expect_match "unknown flag: message" "$ERR" "unknown flag --frobnicate"
LUALOAD_VUS=-3 run_ll run "$S"
expect_eq "bad LUALOAD_VUS: exit 104" "$RC" 104
expect_match "bad LUALOAD_VUS: message" "$ERR" "LUALOAD_VUS"
S2=$(script badopts.lua <<'LUA'
options = { duration = "forever" }
function default() end
LUA
)
run_ll run "$S2"
expect_eq "bad options.duration: exit 104" "$RC" 104
expect_match "bad options.duration: message" "$ERR" "options.duration: expected a duration"

# duration mode: constant VUs for -d, iterations keep going until the end
S3=$(script dur.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default() http.get("$URL/") ll.sleep(0.1) end
LUA
)
run_ll run "$S3" -u 5 -d 1500ms -q --summary-export "$T/s.json"
expect_eq "duration run: exit 0" "$RC" 0
expect_cmp "duration run took ~1.5 s" "x >= 1.4 && x < 4" "$ELAPSED"
# 5 VUs x (1.5 s / ~0.1 s) = ~75 iterations
expect_cmp "duration run: ~75 iterations" "x >= 55 && x <= 80" "$(jqv "$T/s.json" .metrics.iterations.count)"
expect_cmp "sleep shows in iteration_duration" "x >= 100" "$(jqv "$T/s.json" '.metrics.iteration_duration.med')"

# iterations still running after duration + graceful stop are interrupted
S4=$(script slow.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/delay/5000") end
LUA
)
run_ll run "$S4" -u 3 -d 1s --graceful-stop 500ms -q --summary-export "$T/s.json"
expect_eq "graceful stop: exit 0" "$RC" 0
expect_cmp "graceful stop: ends after ~1.5 s, not 5 s" "x >= 1.4 && x < 3" "$ELAPSED"
expect_match "graceful stop: interrupted iterations reported" "$ERR" "3 iterations still running at the end were interrupted"
expect_eq "graceful stop: no iteration counted" "$(jqv "$T/s.json" '.metrics.iterations.count // 0')" 0

# Ctrl-C: stops, still prints and exports the summary, exit 105
"$LUALOAD" run "$S3" -u 3 -d 30s -q --summary-export "$T/sig.json" >"$T/sig.out" 2>&1 &
LL=$!
sleep 1
kill -INT $LL
wait $LL
expect_eq "SIGINT: exit 105" "$?" 105
expect_match "SIGINT: summary printed" "$T/sig.out" "http_reqs\.+:"
expect_cmp "SIGINT: summary exported" "x > 0" "$(jqv "$T/sig.json" .metrics.iterations.count)"

# the open-file limit: raised to the hard limit, an error before the test
# when VUs that hold a connection each (quick mode) cannot fit (a script's
# get a warning: test_limits.sh)
(ulimit -n 200 && ulimit -Hn 200 && "$LUALOAD" run "$URL/" -c 300 -d 1s -q >"$T/fd.out" 2>"$T/fd.err")
expect_eq "fd limit: VUs that cannot fit: exit 104" "$?" 104
expect_match "fd limit: the error names the count and the limit" "$T/fd.err" "300 VUs need about [0-9]+ open files, but the limit is 200"
(ulimit -Sn 100 && "$LUALOAD" run "$S3" -u 150 -i 150 -q --summary-export "$T/fd.json" >"$T/fd.out" 2>"$T/fd.err")
expect_eq "fd limit: soft limit raised, no warning" "$(cat "$T/fd.err")" ""
expect_eq "fd limit: 150 VUs above the old soft limit all connected" "$(jqv "$T/fd.json" .metrics.http_req_failed.passes)" 0
finish
