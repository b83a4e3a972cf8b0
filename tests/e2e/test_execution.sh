#!/usr/bin/env bash
# test_execution.sh -- luaload.execution as k6/execution: the VU, its
# scenario (name, executor, start time, progress, dense iteration numbers
# over all workers), the instance's counters, test.options (the
# consolidated options) and test.abort; and --console-output FILE.
source "$(dirname "$0")/lib.sh"

f=$(script exec.lua <<'LUA'
local exec = require("luaload.execution")
local ll = require("luaload")
local json = require("luaload.json")
options = {
  scenarios = {
    shared = { executor = "shared-iterations", vus = 3, iterations = 40 },
    late = { executor = "constant-vus", vus = 2, duration = "1s", startTime = "300ms", exec = "late" },
  },
  thresholds = { iterations = { "count>1" } },
  myOwn = { x = 1 },
}
local ok, e = pcall(function() return exec.vu.idInTest end)
print("initvu", ok, e)
local o = exec.test.options
print("initopts", o.myOwn.x, o.scenarios.late.executor)
function setup()
  local ok, e = pcall(function() return exec.scenario.name end)
  print("setup", ok, e, exec.vu.id_in_test)
end
function default()
  print(string.format("shared %d %d %d %d %s %s", exec.scenario.iterationInTest, exec.scenario.iteration_in_instance,
    exec.vu.idInTest, exec.vu.iteration_in_scenario, exec.scenario.name, exec.scenario.executor))
  if exec.scenario.iteration_in_test == 39 then print("progress_last", exec.scenario.progress) end
  ll.sleep(0.005)
end
local t0 = os.time() * 1000
function late()
  if exec.vu.iterationInInstance == 0 then
    local st = exec.scenario.startTime
    print("late", exec.scenario.name, exec.vu.id_in_instance, st > 1.7e12 and "epoch_ms" or st,
      exec.instance.vusActive, exec.instance.vus_initialized, exec.instance.currentTestRunDuration >= 250 and "dur_ok" or exec.instance.currentTestRunDuration)
    local p = exec.scenario.progress
    print("lateprog", p >= 0 and p < 0.5)
    local opts = exec.test.options
    print("opts", opts.scenarios.shared.iterations, opts.scenarios.shared.executor, opts.scenarios.late.startTime,
      opts.scenarios.late.gracefulStop, opts.thresholds.iterations[1], opts.myOwn.x, opts.setupTimeout)
    opts.scenarios = nil
    print("copy", exec.test.options.scenarios ~= nil)
    print("set", pcall(function() exec.vu.idInTest = 3 end))
  end
  ll.sleep(0.25)
end
function teardown() print("completed", exec.instance.iterations_completed >= 44, exec.instance.iterationsInterrupted) end
LUA
)
run_ll run "$f" -q -w 2
expect_eq "exit 0" "$RC" 0
expect_match "vu in init code: a clear error" "$OUT" $'^initvu\tfalse\t.*exec.lua:12: luaload.execution: vu.idInTest is not available in the init context'
expect_match "test.options in init code: the script's options" "$OUT" $'^initopts\t1\tconstant-vus$'
expect_match "scenario in setup: a clear error; vu.id_in_test is 0" "$OUT" \
  $'^setup\tfalse\t.*scenario.name is only available in a scenario.s iterations.*\t0$'
expect_eq "iteration_in_test: 0..39 each once over 2 workers" \
  "$(awk '$1 == "shared" { print $2 }' "$OUT" | sort -n | uniq | tr '\n' ' ')" "$(seq 0 39 | tr '\n' ' ')"
expect_eq "iteration_in_instance equals it in one instance" "$(awk '$1 == "shared" && $2 != $3' "$OUT" | wc -l)" 0
expect_eq "name and executor" "$(awk '$1 == "shared" { print $6, $7 }' "$OUT" | sort -u)" "shared shared-iterations"
shared_ids=$(awk '$1 == "shared" { print $4 }' "$OUT" | sort -nu | tr '\n' ' ')
expect_match "3 VUs in the shared scenario, ids in one run of 5" <(echo "$shared_ids") '^(1 2 3|3 4 5) $'

expect_eq "iteration_in_scenario per VU: 0.. dense" \
  "$(awk '$1 == "shared" { n[$4]++; if ($5 > m[$4]) m[$4] = $5 } END { for (v in n) if (m[v] != n[v] - 1) print "bad", v }' "$OUT")" ""
expect_match "progress near 1 at the last iteration" "$OUT" $'^progress_last\t0.9[0-9]*$'
expect_eq "the late scenario: 2 VUs, ids after the shared ones, epoch start, instance counters" \
  "$(grep -c -E $'^late\tlate\t[1245]\tepoch_ms\t[12]\t[45]\tdur_ok$' "$OUT")" 2
expect_eq "progress of a timed scenario is its own time" "$(grep -c $'^lateprog\ttrue$' "$OUT")" 2
expect_match "test.options: consolidated, with k6's defaults and the script's own keys" "$OUT" \
  $'^opts\t40\tshared-iterations\t300ms\t30s\tcount>1\t1\t1m0s$'
expect_match "test.options is a copy" "$OUT" $'^copy\ttrue$'
expect_match "fields are read-only" "$OUT" $'^set\tfalse\t.*luaload.execution: vu is read-only'
expect_match "instance counters in teardown" "$OUT" $'^completed\ttrue\t0$'

# CLI overrides show in test.options
f=$(script opts.lua <<'LUA'
local exec = require("luaload.execution")
options = { vus = 1, duration = "10s" }
function default()
  local o = exec.test.options
  print("o", o.vus, o.duration, o.scenarios.default.executor, o.scenarios.default.vus, o.scenarios.default.duration)
  exec.test.abort("enough")
end
LUA
)
run_ll run "$f" -q -u 2 -d 3s
expect_eq "test.abort: exit 108" "$RC" 108
expect_match "test.abort: the reason" "$ERR" "enough"
expect_match "the command line's -u and -d in test.options" "$OUT" $'^o\t2\t3s\tconstant-vus\t2\t3s$'

# --console-output FILE: console lines go to the file, not stderr
f=$(script console.lua <<'LUA'
console.log("from init")
function default() console.warn("w", 1); console.debug("dbg") end
LUA
)
run_ll run "$f" -q -i 2 --console-output "$T/console.log"
expect_eq "--console-output: nothing on stderr" "$(grep -c 'level=' "$ERR")" 0
expect_eq "--console-output: the lines in the file" "$(grep -c -E 'level=warning msg="w 1" source=console vu=1 iteration=[01]$' "$T/console.log")" 2
expect_match "--console-output: init code too" "$T/console.log" 'level=info msg="from init" source=console$'
run_ll run "$f" -q -i 1 -v --console-output "$T/console.log"
expect_eq "--console-output truncates; -v adds debug" "$(grep -c -E 'level=(warning|debug)' "$T/console.log")" 2
run_ll run "$f" -q -i 1 --console-output "$T/nodir/x.log"
expect_eq "--console-output: a path that cannot be written: exit 104" "$RC" 104
expect_match "--console-output: the error names the flag and file" "$ERR" "^luaload: --console-output: cannot write $T/nodir/x.log: No such file"
# vu.tags: the VU's own tags on its samples; test.fail: exit 110; summary.junit
start_serve
f=$(script tags.lua <<LUA
local exec = require("luaload.execution")
local http = require("luaload.http")
local summary = require("luaload.summary")
options = { thresholds = { ["http_reqs{team:blue}"] = { "count==2" }, ["http_reqs{team:red}"] = { "count==2" } } }
function default()
  exec.vu.tags.team = "blue"
  print("tag", exec.vu.tags.team, exec.vu.tags.scenario, exec.vu.metrics.tags.team)
  http.get("$URL/")
  http.get("$URL/", { tags = { team = "red" } }) -- a request's own tag comes first
  exec.vu.tags.team = nil
  print("removed", tostring(exec.vu.tags.team))
  print("bad", pcall(function() exec.vu.tags.x = {} end))
  if __ITER == 1 then exec.test.fail("bad data") end
end
function handle_summary(d) return { stdout = summary.junit(d, { name = "ci gate" }) } end
LUA
)
run_ll run "$f" -q -i 2
expect_eq "test.fail: the test goes on, exit 110" "$RC" 110
expect_match "test.fail: the message" "$ERR" "^luaload: test marked as failed: bad data$"
expect_eq "vu.tags: read back, with the scenario's" "$(grep -c $'^tag\tblue\tdefault\tblue$' "$OUT")" 2
expect_eq "vu.tags: nil removes" "$(grep -c $'^removed\tnil$' "$OUT")" 2
expect_match "vu.tags: a table is refused" "$OUT" $'^bad\tfalse\t.*vu.tags.x: a tag must be a string, number or boolean, got table'
expect_match "vu.tags tag the samples (thresholds on them pass): junit" "$OUT" '^<testsuites tests="2" failures="0">$'
expect_match "summary.junit: the suite name and a testcase per threshold" "$OUT" \
  '<testsuite name="ci gate" tests="2" failures="0"><testcase name="http_reqs\{team:blue\} - count==2" />'
# Iterations that never wait (the next one starts after a loop turn): the
# VUs between two of them are still active, in the gauge and the API (one
# worker: two would start a few ms apart).
f=$(script busy.lua <<'LUA'
local exec = require("luaload.execution")
local low = 0
function default()
  if exec.instance.vusActive ~= 2 then low = low + 1 end
  if exec.vu.iterationInScenario == 2000 then print("low", low) end
end
function handle_summary(d)
  local v = d.metrics.vus.values
  return { stdout = string.format("vus\t%d\t%d\n", v.min, v.max) }
end
LUA
)
run_ll run "$f" -q -u 2 -d 1500ms -w 1
expect_eq "iterations that never wait: exit 0" "$RC" 0
expect_eq "iterations that never wait: the vus gauge stays at 2" "$(grep $'^vus\t' "$OUT")" $'vus\t2\t2'
expect_eq "iterations that never wait: vusActive is 2 in each" "$(grep -c $'^low\t0$' "$OUT")" 2
finish
