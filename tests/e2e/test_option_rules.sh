#!/usr/bin/env bash
# Script options read by k6's rules (docs/options.md): one way of saying
# what runs (two execution shortcuts, or one with scenarios, are exit 104
# with k6's words), option names in any case as k6 reads them (startVus is
# startVUs), and a misspelt option named with the nearest one.
source "$(dirname "$0")/lib.sh"

opts() { # FILE OPTIONS-TABLE: a script with those options
  script "$1" <<LUA
options = $2
function default() end
LUA
}
conflict() { # NAME OPTIONS-TABLE MESSAGE
  local f
  f=$(opts "c_$1.lua" "$2")
  run_ll run "$f" -q --no-summary
  expect_eq "$1: exit 104" "$RC" 104
  expect_eq "$1: k6's message" "$(head -1 "$ERR")" "luaload: options: $3"
}
conflict "duration and stages" '{ duration = "1s", stages = { { duration = "1s", target = 1 } } }' \
  'using multiple execution config shortcuts (`duration` and `stages`) simultaneously is not allowed'
conflict "iterations and stages" '{ iterations = 3, stages = { { duration = "1s", target = 1 } } }' \
  'using multiple execution config shortcuts (`iterations` and `stages`) simultaneously is not allowed'
conflict "duration and scenarios" \
  '{ duration = "1s", scenarios = { a = { executor = "shared-iterations", iterations = 1 } } }' \
  'using an execution configuration shortcut (`duration`) and `scenarios` simultaneously is not allowed'
conflict "stages and scenarios" \
  '{ stages = { { duration = "1s", target = 1 } }, scenarios = { a = { executor = "shared-iterations" } } }' \
  'using an execution configuration shortcut (`stages`) and `scenarios` simultaneously is not allowed'

# iterations with duration is k6's shared-iterations with a maxDuration
f=$(opts both.lua '{ vus = 2, iterations = 6, duration = "10s" }')
run_ll run "$f" -q --summary-export "$T/both.json"
expect_eq "iterations and duration: exit 0" "$RC" 0
expect_eq "iterations and duration: 6 iterations" "$(jqv "$T/both.json" .metrics.iterations.count)" 6

# names in another case, as k6 (Go's JSON) reads them
f=$(opts case.lua '{ scenarios = { ramp = { executor = "ramping-vus", startVus = 2, stages = { { duration = "1s", target = 2 } } },
  open = { executor = "constant-arrival-rate", rate = 4, timeUnit = "1s", duration = "1s", preAllocatedVus = 1, maxVus = 2 } } }')
run_ll run "$f" -q --summary-export "$T/case.json"
expect_eq "startVus, preAllocatedVus, maxVus: exit 0" "$RC" 0
expect_eq "startVus, preAllocatedVus, maxVus: no warning" "$(cat "$ERR")" ""
expect_eq "startVus: read as startVUs (vus_max 2 + 2)" "$(jqv "$T/case.json" .metrics.vus_max.max)" 4
f=$(opts topcase.lua '{ VUs = 3, Iterations = 3 }')
run_ll run "$f" -q --summary-export "$T/top.json"
expect_eq "VUs, Iterations: read" "$(jqv "$T/top.json" .metrics.iterations.count) $(jqv "$T/top.json" .metrics.vus_max.max)" "3 3"

# misspelt: the nearest option named
f=$(opts typo.lua '{ duraton = "1s", iterations = 1 }')
run_ll run "$f" -q --no-summary
expect_eq "a misspelt option: still a warning, the run goes on" "$RC" 0
expect_eq "a misspelt option: did you mean" "$(cat "$ERR")" \
  "luaload: warning: script option 'duraton' is not supported by this version; ignored (did you mean duration?)"
f=$(opts typo2.lua '{ scenarios = { a = { executor = "shared-iterations", iteratons = 2 } } }')
run_ll run "$f" -q --no-summary
expect_eq "a misspelt scenario option: exit 104" "$RC" 104
expect_match "a misspelt scenario option: did you mean" "$ERR" \
  "options.scenarios.a: unknown option 'iteratons' \\(did you mean iterations\\?\\)$"
f=$(opts far.lua '{ colour = "red" }')
run_ll run "$f" -q --no-summary -i 1
expect_eq "an option near nothing: no suggestion" "$(cat "$ERR")" \
  "luaload: warning: script option 'colour' is not supported by this version; ignored"
finish
