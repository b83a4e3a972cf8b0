#!/usr/bin/env bash
# VU counts that cannot fit: refused with exit 104 and a one-line error that
# names the count and the limit (open files, memory, INT_MAX), fast, before
# setup() runs and before any worker is made; a normal run still works.
source "$(dirname "$0")/lib.sh"
start_serve

# setup() fails the run with 107: a 104 means it never ran
S=$(script plain.lua <<LUA
local http = require("luaload.http")
function setup() error("setup ran") end
function default() http.get("$URL/") end
LUA
)
vus_script() { # vus_script NAME OPTIONS
  script "$1" <<LUA
options = $2
function setup() error("setup ran") end
function default() end
LUA
}

# expect_refused NAME COUNT: exit 104 within 2 s, one line naming COUNT and a limit
expect_refused() {
  expect_eq "$1: exit 104" "$RC" 104
  expect_cmp "$1: refused at once" "x < 2" "$ELAPSED"
  expect_match "$1: names the count and the limit" "$ERR" \
    "^luaload: $2 VUs need about [0-9.]+ .*, but (the limit is [0-9]+ |[0-9.]+ [KMGTPE]?i?B is available)"
  expect_eq "$1: one line" "$(wc -l <"$ERR")" 1
}

# a hard fd limit far below them, so that the check holds on any machine
# (with a lot of memory and open files, 1e6 VUs could otherwise fit)
low_fd() {
  echo "none 99" >"$T/rc"
  (ulimit -n 4096 && run_ll "$@" && echo "$RC $ELAPSED" >"$T/rc")
  read -r RC ELAPSED <"$T/rc"
  ERR=$T/err.txt
}

S1=$(vus_script vus1e9.lua '{ vus = 1e9, duration = "1s" }')
low_fd run "$S1" -q
expect_refused "options.vus = 1e9" 1000000000
S2=$(vus_script vus1e6.lua '{ vus = 1e6, duration = "1s" }')
low_fd run "$S2" -q
expect_refused "options.vus = 1e6" 1000000
low_fd run "$S" -u 1000000000 -d 1s -q
expect_refused "-u 1000000000" 1000000000
low_fd run "$S" -u 1000000 -d 1s -q
expect_refused "-u 1000000" 1000000
low_fd run "$URL/" -c 1000000 -d 1s -q
expect_refused "quick mode -c 1000000" 1000000
S3=$(vus_script arrival.lua '{ scenarios = { open = { executor = "constant-arrival-rate", rate = 10,
  duration = "1s", preAllocatedVUs = 2, maxVUs = 1e6 } } }')
low_fd run "$S3" -q
expect_refused "scenario maxVUs = 1e6" 1000000
S4=$(vus_script two.lua '{ scenarios = {
  a = { executor = "constant-vus", vus = 600000, duration = "1s" },
  b = { executor = "ramping-vus", stages = { { duration = "1s", target = 400000 } } } } }')
low_fd run "$S4" -q
expect_refused "VUs summed over scenarios" 1000000

# the open-file limit alone: the reserve is counted too
echo "none 99" >"$T/rc"
(ulimit -n 200 && run_ll run "$S" -u 300 -d 1s -q && echo "$RC $ELAPSED" >"$T/rc")
read -r RC ELAPSED <"$T/rc"
expect_refused "fd limit 200, 300 VUs" 300
expect_match "fd limit: says how to raise it" "$T/err.txt" "the limit is 200 \(raise it with ulimit -n / LimitNOFILE, or use fewer VUs\)"

# more VUs than VU ids (ints): an error naming the option, never an overflow
run_ll run "$S" -u 2147483648 -d 1s
expect_eq "-u 2147483648: exit 104" "$RC" 104
expect_match "-u 2147483648: names the flag" "$ERR" "invalid value for -u: '2147483648' \(expected at most 2147483647 VUs\)"
run_ll run "$S" -s 1s:99999999999
expect_eq "-s 1s:99999999999: exit 104" "$RC" 104
expect_match "-s: names the flag" "$ERR" "invalid value for -s: '1s:99999999999'"
S5=$(vus_script vus3e9.lua '{ vus = 3e9, duration = "1s" }')
run_ll run "$S5"
expect_eq "options.vus = 3e9: exit 104" "$RC" 104
expect_match "options.vus = 3e9: names the option" "$ERR" "scenario default: vus = 3000000000 VUs is out of range \(at most 2147483647\)"
S6=$(vus_script maxvus.lua '{ scenarios = { open = { executor = "ramping-arrival-rate", preAllocatedVUs = 1,
  maxVUs = 1e15, stages = { { duration = "1s", target = 10 } } } } }')
run_ll run "$S6"
expect_eq "maxVUs = 1e15: exit 104" "$RC" 104
expect_match "maxVUs = 1e15: names the option" "$ERR" "scenario open: maxVUs = 1e\+15 VUs is out of range"
S7=$(vus_script target.lua '{ stages = { { duration = "1s", target = math.huge } } }')
run_ll run "$S7"
expect_eq "stage target = math.huge: exit 104" "$RC" 104
expect_match "stage target: names the option" "$ERR" "scenario default: stages\[1\]\.target = inf VUs is out of range"

# a normal run still works (the soft fd limit is raised to the hard one)
S8=$(script ok.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/") end
LUA
)
echo none >"$T/rc"
(ulimit -Sn 100 && run_ll run "$S8" -u 150 -i 300 -q --summary-export "$T/ok.json" && echo "$RC" >"$T/rc")
expect_eq "normal run: exit 0" "$(cat "$T/rc")" 0
expect_eq "normal run: no error" "$(cat "$T/err.txt")" ""
expect_eq "normal run: 300 requests" "$(jqv "$T/ok.json" .metrics.http_reqs.count)" 300
expect_eq "normal run: none failed" "$(jqv "$T/ok.json" .metrics.http_req_failed.passes)" 0
finish
