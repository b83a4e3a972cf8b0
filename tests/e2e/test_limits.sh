#!/usr/bin/env bash
# VU counts that cannot fit: refused with exit 104 and a one-line error that
# names the count and the limit (open files, memory, INT_MAX), fast, before
# setup() runs and before any worker is made; a normal run still works.
# Open files are refused only where the need is known at the start (quick
# mode's one connection per VU); a script's VUs that may hold connections
# get a warning, and a script with no network module none.
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

# a hard fd limit far below them; the scripts' counts are too many for the
# memory of any machine (1e8 VUs: about 3 TiB), quick mode's for the fds
low_fd() {
  echo "none 99" >"$T/rc"
  (ulimit -n 4096 && run_ll "$@" && echo "$RC $ELAPSED" >"$T/rc")
  read -r RC ELAPSED <"$T/rc"
  ERR=$T/err.txt
}

S1=$(vus_script vus1e9.lua '{ vus = 1e9, duration = "1s" }')
low_fd run "$S1" -q
expect_refused "options.vus = 1e9" 1000000000
S2=$(vus_script vus1e8.lua '{ vus = 1e8, duration = "1s" }')
low_fd run "$S2" -q
expect_refused "options.vus = 1e8" 100000000
low_fd run "$S" -u 1000000000 -d 1s -q
expect_refused "-u 1000000000" 1000000000
low_fd run "$S" -u 100000000 -d 1s -q
expect_refused "-u 100000000" 100000000
low_fd run "$URL/" -c 1000000 -d 1s -q
expect_refused "quick mode -c 1000000" 1000000
S3=$(vus_script arrival.lua '{ scenarios = { open = { executor = "constant-arrival-rate", rate = 10,
  duration = "1s", preAllocatedVUs = 2, maxVUs = 1e8 } } }')
low_fd run "$S3" -q
expect_refused "scenario maxVUs = 1e8" 100000000
S4=$(vus_script two.lua '{ scenarios = {
  a = { executor = "constant-vus", vus = 60000000, duration = "1s" },
  b = { executor = "ramping-vus", stages = { { duration = "1s", target = 40000000 } } } } }')
low_fd run "$S4" -q
expect_refused "VUs summed over scenarios" 100000000

# the open-file limit alone, quick mode: one connection per VU, the reserve
# counted too
echo "none 99" >"$T/rc"
(ulimit -n 200 && run_ll run "$URL/" -c 300 -d 1s -q && echo "$RC $ELAPSED" >"$T/rc")
read -r RC ELAPSED <"$T/rc"
expect_refused "quick mode, fd limit 200, 300 VUs" 300
expect_match "fd limit: says how to raise it" "$T/err.txt" "the limit is 200 \(raise it with ulimit -n / LimitNOFILE, or use fewer VUs\)"

# VUs that hold no connection (no network module: a sleep-only script) need
# no open file each: 1000 of them run under a limit of 256, no warning
SL=$(script sleep.lua <<'LUA'
local ll = require("luaload")
function default() ll.sleep(0.2) end
LUA
)
echo "none 99" >"$T/rc"
(ulimit -n 256 && run_ll run "$SL" -u 1000 -d 1s -q --summary-export "$T/sleep.json" && echo "$RC $ELAPSED" >"$T/rc")
read -r RC ELAPSED <"$T/rc"
expect_eq "sleep-only, 1000 VUs, fd limit 256: runs (exit 0)" "$RC" 0
expect_eq "sleep-only: 1000 VUs" "$(jqv "$T/sleep.json" .metrics.vus_max.value)" 1000
expect_cmp "sleep-only: their iterations" "x >= 1000" "$(jqv "$T/sleep.json" .metrics.iterations.count)"
expect_eq "sleep-only: no warning" "$(cat "$T/err.txt")" ""

# a script whose VUs may each hold a connection, more of them than the
# limit: a one-line warning, the run goes on; the connections past the
# limit fail, counted at the end with the limit
H=$(script http300.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default() http.get("$URL/") ll.sleep(0.5) end
LUA
)
echo "none 99" >"$T/rc"
(ulimit -n 200 && run_ll run "$H" -u 300 -i 300 -q --summary-export "$T/h300.json" && echo "$RC $ELAPSED" >"$T/rc")
read -r RC ELAPSED <"$T/rc"
expect_eq "http, 300 VUs, fd limit 200: runs (exit 0)" "$RC" 0
expect_match "http, over the limit: a warning" "$T/err.txt" \
  "^luaload: warning: 300 VUs may need about [0-9]+ open files if each holds a connection .*but the limit is 200: connections past it will fail \(raise it with ulimit -n / LimitNOFILE\)$"
expect_eq "http, over the limit: 300 requests" "$(jqv "$T/h300.json" .metrics.http_reqs.count)" 300
expect_cmp "http, over the limit: some failed for want of files" "x > 0" "$(jqv "$T/h300.json" .metrics.http_req_failed.passes)"
expect_match "http, over the limit: counted at the end" "$T/err.txt" \
  "^luaload: [0-9]+ connections? could not be made: the open-file limit \(200\) was reached"

# the workers' own descriptors must fit: refused
echo "none 99" >"$T/rc"
(ulimit -n 100 && run_ll run "$SL" -u 8 -w 8 -d 1s -q && echo "$RC $ELAPSED" >"$T/rc")
read -r RC ELAPSED <"$T/rc"
expect_eq "8 workers, fd limit 100: exit 104" "$RC" 104
expect_match "8 workers, fd limit 100: names the limit" "$T/err.txt" \
  "^luaload: 8 workers need about [0-9]+ open files of their own, but the limit is 100 "

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
