#!/usr/bin/env bash
# The end of a run (the summary, --summary-export, handle_summary's files,
# the report, the exit code) does not depend on what the test used up or
# on who reads stdout: a closed stdout (luaload run ... | head -1) is no
# SIGPIPE death, and a test that ran into the open-file limit still gets
# its summary and its files, with the connections it could not make
# counted and explained.
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8
start_serve

# ---- a closed stdout: exit as if printed, the files written ----
S=$(script sleep.lua <<'LUA'
local ll = require("luaload")
function default() ll.sleep(0.05) end
LUA
)
# pipe_run EXPORT ARGS...: luaload run ARGS | head -1; sets RC (luaload's own
# exit code) and HEAD (what head printed)
pipe_run() {
  local export=$1
  shift
  HEAD=$(timeout -k 5 60 "$LUALOAD" run "$@" --summary-export "$export" 2>"$T/pipe.err" | head -1
         echo "rc=${PIPESTATUS[0]}")
  RC=$(sed -n 's/^rc=//p' <<<"$HEAD")
}
pipe_run "$T/p1.json" "$S" -u 2 -d 1s
expect_eq "| head -1: luaload exits 0, not 141 (SIGPIPE)" "$RC" 0
expect_cmp "| head -1: --summary-export written" "x > 0" "$(jqv "$T/p1.json" '.metrics.iterations.count // 0')"
expect_eq "| head -1: no error on stderr" "$(noprogress "$T/pipe.err")" ""

T99=$(script t99.lua <<'LUA'
local ll = require("luaload")
options = { thresholds = { iterations = { "count<1" } } }
function default() ll.sleep(0.05) end
LUA
)
pipe_run "$T/p2.json" "$T99" -u 2 -d 1s
expect_eq "| head -1, a failed threshold: exit 99 as if printed" "$RC" 99
expect_eq "| head -1, a failed threshold: the export says so" "$(jqv "$T/p2.json" '.metrics.iterations.thresholds["count<1"]')" true

HS=$(script hs.lua <<LUA
local ll = require("luaload")
function default() ll.sleep(0.05) end
function handle_summary(data)
  return { stdout = string.rep("a summary line\n", 5000), ["$T/hs-file.txt"] = "written\n" }
end
LUA
)
pipe_run "$T/p3.json" "$HS" -u 2 -d 1s
expect_eq "| head -1, handle_summary's stdout: exit 0" "$RC" 0
expect_eq "| head -1, handle_summary's file written" "$(cat "$T/hs-file.txt" 2>/dev/null)" written
expect_eq "| head -1, handle_summary: no error on stderr" "$(noprogress "$T/pipe.err")" ""

# ---- the open-file limit used up by the test ----
# 150 VUs with batches of 4 want 600 connections; the limit is 256. The
# workers close theirs as they finish: teardown() can make its request.
B=$(script batch.lua <<LUA
local http = require("luaload.http")
function default()
  http.batch({ { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" } })
end
function teardown()
  local res = http.get("$URL/")
  if res.status ~= 200 then error("teardown's request failed: " .. tostring(res.error)) end
end
LUA
)
# low_fd ARGS...: luaload ARGS with ulimit -n 256 (hard), RC OUT ERR as run_ll
low_fd() {
  echo 99 >"$T/rc"
  (ulimit -n 256 && run_ll "$@" && echo "$RC" >"$T/rc")
  RC=$(cat "$T/rc") OUT=$T/out.txt ERR=$T/err.txt
}
low_fd run "$B" -u 150 -d 1s -w 1 --summary-export "$T/fd.json" --out "html=$T/fd.html"
expect_eq "fd limit used up: exit 0 (teardown's request made)" "$RC" 0
expect_match "fd limit used up: the summary is printed" "$OUT" "http_reqs\.+:"
expect_cmp "fd limit used up: the export is written, with the failed connects" "x > 0" \
  "$(jqv "$T/fd.json" '.metrics.http_req_failed.passes // 0')"
expect_match "fd limit used up: the report is written" "$T/fd.html" "<html"
expect_eq "fd limit used up: no 'cannot' on stderr" "$(grep -c 'cannot format\|cannot write\|cannot print' "$ERR")" 0
expect_match "fd limit used up: the failed connects say why" "$ERR" \
  "× dial tcp 127\.0\.0\.1:$PORT: cannot make a socket: too many open files \(error_code 1210\)"
expect_match "fd limit used up: counted, with the limit and the way out" "$ERR" \
  "^luaload: [0-9]+ connections? could not be made: the open-file limit \(256\) was reached \(raise it with ulimit -n"

# handle_summary writing a file, in the same state
HB=$(script batch_hs.lua <<LUA
local http = require("luaload.http")
function default()
  http.batch({ { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" } })
end
function handle_summary(data)
  local summary = require("luaload.summary")
  return { ["$T/fd-hs.txt"] = summary.text(data, { enableColors = false }) }
end
LUA
)
low_fd run "$HB" -u 150 -d 1s -w 1
expect_eq "fd limit used up, handle_summary: exit 0" "$RC" 0
expect_match "fd limit used up, handle_summary: its file is written" "$T/fd-hs.txt" "http_reqs\.+:"

# a worker given up on (its Lua code never yields) keeps its connections
# open to the end: the descriptors kept aside from the start still let the
# summary export be written
# (VU 1 sleeps 0.1 s an iteration and spins from 1.2 s on, after the
# worker's first snapshot: its metrics are those of that snapshot)
STUCK=$(script stuck.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { scenarios = { s = { executor = "constant-vus", vus = 150, duration = "2s", gracefulStop = "0s" } } }
function default()
  if __VU > 1 then
    http.batch({ { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" }, { "GET", "$URL/" } })
  elseif __ITER < 12 then
    ll.sleep(0.1)
  else
    while true do end
  end
end
LUA
)
low_fd run "$STUCK" -w 1 -q --summary-export "$T/stuck.json"
expect_match "stuck worker at the fd limit: given up on" "$ERR" "did not stop: its Lua code does not yield"
expect_cmp "stuck worker at the fd limit: the export is written" "x > 0" "$(jqv "$T/stuck.json" '.metrics.http_reqs.count // 0')"
expect_eq "stuck worker at the fd limit: no 'cannot write'" "$(grep -c 'cannot write' "$ERR")" 0

# the summary needs no file at the end: luaload.summary is built in (a
# lib/lua without it, beside a copy of the binary, still gives the summary)
mkdir -p "$T/inst/bin" "$T/inst/lib"
cp "$LUALOAD" "$T/inst/bin/luaload"
cp -r "$(dirname "$0")/../../lib/lua" "$T/inst/lib/"
rm "$T/inst/lib/lua/luaload/summary.lua"
LUALOAD_SAVED=$LUALOAD LUALOAD=$T/inst/bin/luaload
run_ll run "$S" -u 1 -i 2 -q
LUALOAD=$LUALOAD_SAVED
expect_eq "no summary.lua on disk: exit 0" "$RC" 0
expect_match "no summary.lua on disk: the summary is printed" "$OUT" "iterations\.+: 2 "
finish
