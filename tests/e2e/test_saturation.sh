#!/usr/bin/env bash
# An instrument that says when it is the bottleneck: each worker's busy
# share and event-loop lag are luaload's own metrics (luaload_worker_busy,
# luaload_loop_lag) that thresholds can gate on; a worker saturated for a
# noticeable part of the run, and dropped iterations, get a warning in the
# summary (and on stderr). A light script gets none.
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8

# a CPU-heavy iteration on one worker: its loop is busy all the time
CPU=$(script cpu.lua <<'LUA'
function default()
  local x = 0
  for i = 1, 200000 do x = x + math.sqrt(i) end
end
LUA
)
run_ll run "$CPU" -u 1 -w 1 -d 2s --summary-export "$T/s.json" --out "json=$T/points.json"
expect_eq "cpu-heavy: exit 0 (no threshold)" "$RC" 0
expect_match "cpu-heavy: the summary warns" "$OUT" \
  "^ +⚠ the worker was over 90% busy for [0-9.]+s of [0-9.]+s \([0-9]+%\): the load generator, not the system under test, may have set the pace"
expect_match "cpu-heavy: under a WARNINGS heading" "$OUT" "^ +WARNINGS$"
expect_match "cpu-heavy: and on stderr" "$ERR" "^luaload: warning: the worker was over 90% busy"
expect_cmp "cpu-heavy: luaload_worker_busy p(95) above 90 (percent)" "x > 90" "$(jqv "$T/s.json" '.metrics.luaload_worker_busy["p(95)"]')"
# one sample of each every 100 ms: about 20 in 2 s
points() { jq -s "[.[] | select(.type == \"Point\" and .metric == \"$1\")] | length" "$T/points.json"; }
expect_cmp "cpu-heavy: a busy sample every 100 ms" "x >= 15 && x <= 21" "$(points luaload_worker_busy)"
expect_cmp "cpu-heavy: a lag sample every 100 ms" "x >= 15 && x <= 21" "$(points luaload_loop_lag)"
expect_eq "cpu-heavy: luaload_loop_lag is a time trend" "$(jqv "$T/s.json" '.metrics.luaload_loop_lag | has("p(95)")')" true

# a threshold on the busy share fails the run whose generator was saturated
CPU_T=$(script cpu_t.lua <<'LUA'
options = { thresholds = { luaload_worker_busy = { "p(95)<90" }, luaload_loop_lag = { "p(95)<1000" } } }
function default()
  local x = 0
  for i = 1, 200000 do x = x + math.sqrt(i) end
end
LUA
)
run_ll run "$CPU_T" -u 1 -w 1 -d 2s -q --summary-export "$T/t.json"
expect_eq "cpu-heavy, threshold on luaload_worker_busy: exit 99" "$RC" 99
expect_eq "cpu-heavy: the busy threshold failed" "$(jqv "$T/t.json" '.metrics.luaload_worker_busy.thresholds["p(95)<90"]')" true
expect_eq "cpu-heavy: the lag threshold held" "$(jqv "$T/t.json" '.metrics.luaload_loop_lag.thresholds["p(95)<1000"]')" false
expect_match "cpu-heavy: the failed threshold on stderr" "$ERR" "threshold failed: luaload_worker_busy 'p\(95\)<90'"

# a light script: no warning, the thresholds hold
LIGHT=$(script light.lua <<'LUA'
local ll = require("luaload")
options = { thresholds = { luaload_worker_busy = { "p(95)<50" }, luaload_loop_lag = { "p(95)<50" } } }
function default() ll.sleep(0.1) end
function handle_summary(data)
  local json = require("luaload.json")
  return { stdout = require("luaload.summary").text(data), ["$T/light-data.json"] = json.encode(data) }
end
LUA
)
sed -i "s|\$T|$T|" "$LIGHT"
run_ll run "$LIGHT" -u 10 -w 1 -d 2s --summary-export "$T/l.json"
expect_eq "light: exit 0, the thresholds held" "$RC" 0
expect_eq "light: no warning in the summary" "$(grep -c 'WARNINGS\|⚠' "$OUT")" 0
expect_eq "light: nothing on stderr but the progress" "$(noprogress "$ERR")" ""
expect_cmp "light: luaload_worker_busy p(95) far below 90" "x >= 0 && x < 50" "$(jqv "$T/l.json" '.metrics.luaload_worker_busy["p(95)"] // -1')"
expect_eq "light: handle_summary's data.warnings is empty" "$(jq -c '.warnings | length' "$T/light-data.json")" 0

# an arrival rate that needs more VUs than maxVUs allows drops iterations
DROP=$(script drop.lua <<'LUA'
local ll = require("luaload")
options = { scenarios = { open = { executor = "constant-arrival-rate", rate = 50, timeUnit = "1s", duration = "1s",
  preAllocatedVUs = 1, maxVUs = 2 } } }
function default() ll.sleep(0.2) end
function handle_summary(data)
  local json = require("luaload.json")
  return { stdout = require("luaload.summary").text(data), ["$T/drop-data.json"] = json.encode(data) }
end
LUA
)
sed -i "s|\$T|$T|" "$DROP"
run_ll run "$DROP" --summary-export "$T/d.json"
dropped=$(jqv "$T/d.json" '.metrics.dropped_iterations.count // 0')
expect_eq "dropped: exit 0" "$RC" 0
expect_cmp "dropped: iterations were dropped" "x >= 20" "$dropped"
expect_match "dropped: the summary warns, with the count" "$OUT" \
  "^ +⚠ $dropped iterations were dropped \(dropped_iterations\): an arrival-rate scenario had no free VU"
expect_match "dropped: and on stderr" "$ERR" "^luaload: warning: $dropped iterations were dropped"
expect_match "dropped: handle_summary's data.warnings" "$T/drop-data.json" "\"warnings\":\[\"$dropped iterations were dropped"
expect_eq "dropped: the export keeps k6's keys" "$(jq -c 'keys' "$T/d.json")" '["metrics","root_group"]'
finish
