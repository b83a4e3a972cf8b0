#!/usr/bin/env bash
# The live progress on stderr (issue 37, points 2 and 3): k6's lines every
# second without a terminal (none with -q, none in a run under a second);
# on a terminal, lines fitted to its width and redrawn on SIGWINCH; an
# arrival-rate scenario's VUs, a delayed scenario's own time, singular counts.
source "$(dirname "$0")/lib.sh"
start_serve
PTY="/usr/bin/python3 $(dirname "$0")/helpers/pty_run.py"
# strip FILE: the text a terminal shows, without escape sequences and CRs
strip() { sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1" | tr -d '\r'; }
# widest FILE REGEX: the longest line matching REGEX, in characters
widest() { strip "$1" | grep -E -- "$2" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }'; }

S=$(script mix.lua <<LUA
local http = require("luaload.http")
options = { scenarios = {
  arr = { executor = "constant-arrival-rate", rate = 100, timeUnit = "1s", duration = "3500ms",
          preAllocatedVUs = 20, maxVUs = 30 },
  late_starting_after_all_the_others = { executor = "constant-vus", vus = 2, duration = "1s", startTime = "1500ms" },
  once = { executor = "per-vu-iterations", vus = 1, iterations = 1 },
  ramp = { executor = "ramping-vus", stages = { { duration = "1s", target = 1 } } },
} }
function default() http.get("$URL/") end
LUA
)
run_ll run "$S" --no-summary
expect_eq "non-tty: exit 0" "$RC" 0
# k6's lines: "running (01.0s), 03/51 VUs, 120 complete and 0 interrupted iterations", then one per scenario
# (the clock as wide as the longest the test may last: once's 10 min here)
n=$(grep -cE '^running \(00m0[0-9]\.[0-9]s\), [0-9]{2}/[0-9]{2} VUs, [0-9]+ complete and [0-9]+ interrupted iterations$' "$ERR")
expect_cmp "non-tty: a running line each second of a 3.5 s run" "x >= 3 && x <= 4" "$n"
expect_eq "non-tty: one line per scenario each time" "$(grep -cE '^(arr|late\S*|once|ramp) +\[ +[0-9]+% \] ' "$ERR")" $((n * 4))
expect_eq "non-tty: no escape sequences" "$(grep -c $'\033' "$ERR")" 0
expect_match "non-tty: a blank line before each block" "$ERR" '^$'
# the arrival-rate scenario shows its VUs: in an iteration now / made for it (20 pre-allocated)
expect_eq "arrival rate: its VUs made, every line" "$(grep -cE '^arr +\[ +[0-9]+% \] [0-9]+/(2[0-9]|30) VUs ' "$ERR")" "$n"
expect_match "arrival rate: its iterations/s over the last second" "$ERR" '^arr .* (9[0-9]|10[0-9])/s$'
# the delayed scenario: "starts at 1.5s" before, its own time after, never past its 1 s
expect_match "delayed: waits, saying when it starts" "$ERR" '^late_starting_after_all_the\.\.\. +\[ +0% \] 0 VUs +starts at 1\.5s '
expect_match "delayed: its own time once it runs" "$ERR" '^late\S* .* 0\.[0-9]s/1s '
expect_match "delayed: done, its time stops at its duration" "$ERR" '^late\S* +\[ 100% \] 0 VUs +1\.0s/1s '
expect_eq "delayed: never past its duration" "$(grep -E '^late' "$ERR" | grep -cvE ' (0\.[0-9]|1\.0)s/1s |starts at')" 0
# singular counts
expect_match "singular: 1 VU, 1/1 iteration" "$ERR" '^once +\[ 100% \] 0 VUs .* 1/1 iteration +0/s$'
expect_match "banner: 1 iteration for 1 VU" "$OUT" 'once: 1 iteration for 1 VU \(max 10m00s\)'
expect_match "banner: up to 1 VU over 1 stage" "$OUT" 'ramp: up to 1 VU over 1 stage, 1s'
expect_match "banner: 2 VUs (plural stays)" "$OUT" 'late_starting_after_all_the_others: 2 VUs for 1s, starting at 1.5s'

run_ll run "$S" --no-summary -q
expect_eq "-q: no progress lines" "$(grep -c 'running (' "$ERR")" 0

S=$(script short.lua <<LUA
local http = require("luaload.http")
options = { vus = 2, duration = "500ms" }
function default() http.get("$URL/") end
LUA
)
run_ll run "$S" --no-summary
expect_eq "a run under a second: no progress line" "$(grep -c 'running (' "$ERR")" 0
expect_eq "a run under a second: stderr empty" "$(wc -c <"$ERR")" 0

# quick mode: the same lines; with -v its ticker instead
run_ll run "$URL/" -c 2 -d 1500ms --no-summary
expect_match "quick mode: k6's lines" "$ERR" '^running \(0?1\.[0-9]s\), 2/2 VUs, [0-9]+ complete and 0 interrupted iterations$'
expect_match "quick mode: its scenario's line" "$ERR" '^default +\[ +[0-9]+% \] 2 VUs '
run_ll run "$URL/" -c 2 -d 1500ms --no-summary -v
expect_match "quick mode -v: the ticker" "$ERR" '^luaload: +1\.[0-9]s +[0-9]+ requests'
expect_eq "quick mode -v: no progress lines besides" "$(grep -c 'running (' "$ERR")" 0

# a terminal 80 columns wide, made 50 wide 2 s in (SIGWINCH): every line
# fits, the second scenario's line is there each time
S=$(script wide.lua <<LUA
local http = require("luaload.http")
options = { scenarios = {
  first_scenario = { executor = "constant-vus", vus = 3, duration = "3500ms" },
  second = { executor = "constant-arrival-rate", rate = 50, timeUnit = "1s", duration = "3500ms",
             preAllocatedVUs = 10, maxVUs = 200 },
} }
function default() http.get("$URL/") end
LUA
)
timeout -k 5 60 $PTY 80 2 50 -- "$LUALOAD" run "$S" --no-summary >"$T/tty.txt"
expect_eq "tty: exit 0" "$?" 0
expect_match "tty: a bar at 80 columns" "$T/tty.txt" 'second +\[=+>?-*\] [0-9]+/[0-9]+ VUs'
expect_cmp "tty: every progress line fits 80 columns" "x >= 60 && x < 80" \
  "$(widest "$T/tty.txt" '^(running|first_scenario|second)')"
draws=$(strip "$T/tty.txt" | grep -c '^running (')
expect_cmp "tty: redrawn each second, on SIGWINCH and at the end" "x >= 5" "$draws"
expect_eq "tty: the second scenario's line in every draw" "$(strip "$T/tty.txt" | grep -c '^second ')" "$draws"
# from 3 s on (after the resize, whenever the run started): every line fits 50 columns
strip "$T/tty.txt" | awk '/^running \(0[3-9]\./ { on = 1 } on' >"$T/after.txt"
expect_cmp "tty: after SIGWINCH, every line fits 50 columns" "x > 0 && x < 50" \
  "$(widest "$T/after.txt" '^(running|first_scenario|second)')"
expect_eq "tty: after SIGWINCH, the second scenario's line still there" \
  "$(grep -c '^second ' "$T/after.txt")" "$(grep -c '^running (' "$T/after.txt")"
expect_eq "tty: -q draws nothing" \
  "$(timeout -k 5 60 $PTY 80 -- "$LUALOAD" run "$S" --no-summary -q | strip /dev/stdin | grep -c 'running (')" 0

finish
