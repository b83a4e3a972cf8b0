#!/usr/bin/env bash
# Executors and scenarios (k6's six), open-model accounting, run control.
source "$(dirname "$0")/lib.sh"
start_serve
sc() { # sc NAME SCENARIOS-LUA [EXTRA-LUA]
  script "$1" <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { scenarios = $2 }
function default() http.get("$URL/") end
${3:-}
LUA
}
S=$(sc shared.lua '{ s = { executor = "shared-iterations", vus = 10, iterations = 1000 } }')
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "shared-iterations 1000 on 10 VUs: exit 0" "$RC" 0
expect_eq "shared-iterations: exactly 1000" "$(jqv "$T/s.json" .metrics.iterations.count)" 1000
run_ll run "$S" -q -w 3 --summary-export "$T/s.json"
expect_eq "shared-iterations on 3 workers: exactly 1000" "$(jqv "$T/s.json" .metrics.iterations.count)" 1000

S=$(sc pervu.lua '{ p = { executor = "per-vu-iterations", vus = 7, iterations = 30 } }')
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "per-vu-iterations 7x30: 210" "$(jqv "$T/s.json" .metrics.iterations.count)" 210

S=$(sc car.lua '{ a = { executor = "constant-arrival-rate", rate = 200, timeUnit = "1s", duration = "5s",
                        preAllocatedVUs = 5, maxVUs = 50 } }')
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "constant-arrival-rate: exit 0" "$RC" 0
expect_cmp "constant-arrival-rate 200/s for 5 s: 1000 +-1%" "x >= 990 && x <= 1010" "$(jqv "$T/s.json" .metrics.iterations.count)"
expect_cmp "constant-arrival-rate: took ~5 s" "x >= 4.9 && x < 7" "$ELAPSED"
expect_cmp "start lag recorded, small" "x < 50" "$(jqv "$T/s.json" '.metrics.iteration_start_lag["p(95)"]')"
expect_eq "corrected durations recorded" "$(jqv "$T/s.json" '.metrics.iteration_duration_corrected | has("avg")')" true
expect_eq "corrected >= plain duration" "$(jqv "$T/s.json" '.metrics.iteration_duration_corrected.avg >= .metrics.iteration_duration.avg')" true

# open model against a slow target: iterations keep their schedule, the rest are dropped
S=$(script slow.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { slow = { executor = "constant-arrival-rate", rate = 50, duration = "2s",
                                    preAllocatedVUs = 2, maxVUs = 5 } } }
function default() http.get("$URL/delay/500") end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
D=$(jqv "$T/s.json" '.metrics.dropped_iterations.count // 0')
I=$(jqv "$T/s.json" '.metrics.iterations.count')
expect_cmp "slow target: iterations dropped" "x >= 50" "$D"
expect_eq "slow target: started + dropped = scheduled (100)" "$((D + I))" 100
expect_cmp "slow target: corrected duration shows the wait" "x >= 500" "$(jqv "$T/s.json" '.metrics.iteration_duration_corrected.max')"

# a scenario with fewer VUs than workers runs on as many workers as it has VUs
S=$(script small.lua <<LUA
local http = require("luaload.http")
options = {
  scenarios = {
    big = { executor = "constant-vus", vus = 4, duration = "1s", exec = "other" },
    one = { executor = "shared-iterations", vus = 1, iterations = 10 },
    lone = { executor = "constant-arrival-rate", rate = 5, duration = "2s", preAllocatedVUs = 1, maxVUs = 1 },
  },
  thresholds = { ["iterations{scenario:one}"] = "count==10", ["iterations{scenario:lone}"] = "count==10" },
}
function default() http.get("$URL/") end
function other() http.get("$URL/") end
LUA
)
run_ll run "$S" -w 2 -q --summary-export "$T/s.json"
expect_eq "fewer VUs than workers: all iterations ran (thresholds hold)" "$RC" 0
expect_eq "fewer VUs than workers: nothing dropped" "$(jqv "$T/s.json" '.metrics.dropped_iterations.count // 0')" 0

# an absurd rate neither hangs nor piles up work: bounded per loop turn
S=$(script absurd.lua <<'LUA'
options = { scenarios = { a = { executor = "constant-arrival-rate", rate = 1e12, duration = "1s", preAllocatedVUs = 1 } } }
function default() end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "absurd rate: exit 0" "$RC" 0
expect_cmp "absurd rate: ends on time" "x < 5" "$ELAPSED"

# ramping-vus, observed through the vus gauge in the JSON output
S=$(script ramp.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { scenarios = { r = { executor = "ramping-vus", startVUs = 0,
  stages = { { duration = "2s", target = 8 }, { duration = "1s", target = 8 }, { duration = "3s", target = 0 } },
  gracefulRampDown = "1s" } } }
function default() http.get("$URL/") ll.sleep(0.05) end
LUA
)
run_ll run "$S" -q -o "json=$T/ramp.json" --summary-export "$T/s.json"
expect_eq "ramping-vus: exit 0" "$RC" 0
VUS=$(jq -s -c '[.[] | select(.type == "Point" and .metric == "vus") | .data.value]' "$T/ramp.json")
expect_cmp "ramping-vus: reached 8 VUs" "x == 8" "$(echo "$VUS" | jq max)"
expect_cmp "ramping-vus: started low" "x <= 4" "$(echo "$VUS" | jq '.[1]')"
# the gauge is sampled on whole seconds and the run may end just before
# its last one: the samples after the peak (at 5 s the target is 2.7)
expect_cmp "ramping-vus: ramped down at the end" "x <= 3" "$(echo "$VUS" | jq '. as $a | $a[($a | index($a | max)):] | min')"

# two scenarios: different exec functions, startTime, env and tags
S=$(script two.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local metrics = require("luaload.metrics")
local seen = metrics.Counter("seen")
options = {
  scenarios = {
    first = { executor = "shared-iterations", vus = 2, iterations = 20, exec = "browse", tags = { kind = "b" } },
    second = { executor = "per-vu-iterations", vus = 1, iterations = 5, exec = "buy", startTime = "1s",
               env = { WHAT = "cart" } },
  },
  thresholds = { ["iterations{scenario:first}"] = "count==20", ["iterations{scenario:second}"] = "count==5",
                 ["http_reqs{kind:b}"] = "count==20", ["seen{what:cart}"] = "count==5" },
}
function browse() http.get("$URL/") end
function buy()
  http.get("$URL/echo")
  seen:add(1, { what = ll.env.WHAT })
end
function default() error("not used") end
LUA
)
run_ll run "$S" -q --summary-export "$T/s.json"
expect_eq "two scenarios: thresholds hold (exit 0)" "$RC" 0
expect_eq "two scenarios: 25 iterations" "$(jqv "$T/s.json" .metrics.iterations.count)" 25
expect_cmp "second scenario started after 1 s" "x >= 1" "$ELAPSED"

# -s stages on the command line; bad scenarios
S=$(sc default.lua '{ x = { executor = "constant-vus", vus = 1, duration = "30s" } }')
run_ll run "$S" -s 1s:3 -s 1s:0 -q --summary-export "$T/s.json"
expect_cmp "-s overrides the scenarios: ~2 s" "x < 5" "$ELAPSED"
for bad in '{ x = { executor = "warp-speed" } }' '{ x = { executor = "constant-vus", vus = 2 } }' \
           '{ x = { executor = "constant-arrival-rate", rate = 10, duration = "1s" } }' \
           '{ x = { executor = "constant-vus", vus = 1, duration = "1s", colour = "red" } }' \
           '{ x = { executor = "ramping-vus", stages = { { duration = "1s" } } } }'; do
  S=$(sc bad.lua "$bad")
  run_ll run "$S"
  expect_eq "bad scenario $bad: exit 104" "$RC" 104
  expect_eq "bad scenario: one line" "$(wc -l <"$ERR")" 1
done
S=$(sc noexec.lua '{ x = { executor = "constant-vus", vus = 1, duration = "1s", exec = "missing" } }')
run_ll run "$S"
expect_match "missing exec function named" "$ERR" "scenario x: the script defines no function missing"

# setupTimeout: exit 100
S=$(script st.lua <<LUA
local ll = require("luaload")
options = { setupTimeout = "500ms" }
function setup() ll.sleep(5) end
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "setupTimeout: exit 100" "$RC" 100
expect_match "setupTimeout: message" "$ERR" "setup\(\) timed out after 0.5s"
expect_cmp "setupTimeout: stopped early" "x < 3" "$ELAPSED"

S=$(script tt.lua <<LUA
local ll = require("luaload")
options = { teardownTimeout = "300ms" }
function default() end
function teardown() ll.sleep(5) end
LUA
)
run_ll run "$S" -q
expect_eq "teardownTimeout: exit 101" "$RC" 101

# the progress lines: a bar on a terminal, k6's plain lines otherwise
# (test_progress.sh has the rest), none with -q
S=$(sc prog.lua '{ p = { executor = "constant-vus", vus = 2, duration = "1500ms" } }')
command script -qec "$LUALOAD run $S --no-summary" "$T/tty.txt" >/dev/null 2>&1
expect_match "progress drawn on a terminal" "$T/tty.txt" "p \[=+>?-*\] 2 VUs .* iterations"
command script -qec "$LUALOAD run $S --no-summary -q" "$T/tty-q.txt" >/dev/null 2>&1
expect_eq "no progress with -q" "$(grep -c 'iteration' "$T/tty-q.txt")" 0
run_ll run "$S" --no-summary
expect_match "progress printed plain when stderr is not a terminal" "$ERR" '^p \[ +[0-9]+% \] 2 VUs .* iterations'
expect_eq "no escape sequences when stderr is not a terminal" "$(grep -c $'\033' "$ERR")" 0

# a second Ctrl-C exits at once, even while iterations are finishing (the
# first gives them 0.4 s; a second within 0.25 s of it is the same one)
S=$(script int2.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { c = { executor = "constant-vus", vus = 2, duration = "30s", gracefulStop = "20s" } } }
function default() http.get("$URL/delay/10000") end
LUA
)
"$LUALOAD" run "$S" -q >/dev/null 2>&1 &
P=$!
sleep 1
kill -INT $P
sleep 0.3
kill -INT $P
START2=$(date +%s.%N)
wait $P
expect_eq "second SIGINT: exit 105" "$?" 105
expect_cmp "second SIGINT: at once" "x < 2" "$(awk -v a="$START2" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"

# Ctrl-C: graceful (running iterations finish), teardown runs, summary, 105
S=$(script int.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { scenarios = { c = { executor = "constant-vus", vus = 3, duration = "30s", gracefulStop = "5s" } } }
function default() http.get("$URL/delay/300") end
function teardown() io.open(ll.env.MARK, "w"):close() end
LUA
)
MARK=$T/teardown.mark "$LUALOAD" run "$S" -q --summary-export "$T/int.json" >"$T/int.out" 2>"$T/int.err" &
P=$!
sleep 1.2
kill -INT $P
wait $P
expect_eq "SIGINT: exit 105" "$?" 105
expect_eq "SIGINT: teardown ran" "$([[ -f $T/teardown.mark ]] && echo yes)" yes
expect_eq "SIGINT: running iterations finished (none cut)" "$(grep -c 'still running at the end were interrupted' "$T/int.err")" 0
expect_cmp "SIGINT: summary exported" "x >= 9" "$(jqv "$T/int.json" .metrics.iterations.count)"
finish
