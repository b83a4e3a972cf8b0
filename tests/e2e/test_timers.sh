#!/usr/bin/env bash
# luaload.timers (k6/timers) on the VU's event loop: callbacks run with
# their arguments in their own coroutine and may make requests and sleep
# while the iteration's function waits on its own; an interval runs until
# cleared; a cleared timer never fires; the iteration ends only once its
# function returned and no timer of it is left (k6's event-loop rule); an
# error in a callback fails the iteration with its line; at the end of the
# test a timer that never ends is cut like any wait; camelCase names.
source "$(dirname "$0")/lib.sh"
start_serve

# (a) what runs, in what order, with what
S=$(script order.lua <<LUA
local timers = require("luaload.timers")
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local order = {}
  timers.set_timeout(function(a, b)
    order[#order + 1] = "timeout " .. a .. b
    local r = http.get("$URL/delay/100")
    order[#order + 1] = "timeout got " .. r.status
    ll.sleep(0.01)
    order[#order + 1] = "timeout slept"
  end, 50, "x", "y")
  local n, id = 0, nil
  id = timers.set_interval(function()
    n = n + 1
    order[#order + 1] = "tick " .. n
    if n == 3 then timers.clear_interval(id) end
  end, 20)
  local never = timers.setTimeout(function() order[#order + 1] = "cleared one fired" end, 10)
  timers.clearTimeout(never)
  local r = http.get("$URL/delay/30")
  order[#order + 1] = "main got " .. r.status
  timers.set_timeout(function()
    local s = table.concat(order, ",")
    ll.check(s, {
      ["callback args"] = function(x) return x:find("timeout xy", 1, true) ~= nil end,
      ["callback request"] = function(x) return x:find("timeout got 200,timeout slept", 1, true) ~= nil end,
      ["interval ran 3 times"] = function(x) return x:find("tick 3", 1, true) and not x:find("tick 4", 1, true) end,
      ["cleared never fired"] = function(x) return not x:find("cleared", 1, true) end,
      ["main went on meanwhile"] = function(x) return x:find("main got 200", 1, true) < x:find("timeout got", 1, true) end,
    })
  end, 150)
end
LUA
)
run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/a.json"
expect_eq "order: exit 0" "$RC" 0
for c in "callback args" "callback request" "interval ran 3 times" "cleared never fired" "main went on meanwhile"; do
  expect_eq "order: $c (6 of 6)" "$(jqv "$T/a.json" ".root_group.checks[\"$c\"].passes")" 6
done
expect_eq "order: two requests per iteration, the callback's counted" "$(jqv "$T/a.json" .metrics.http_reqs.count)" 12
expect_eq "order: no script error" "$(noprogress "$ERR" | grep -c 'error')" 0
# the last timer fires 150 ms after the main request (30 ms): no iteration
# ends before its timers
expect_cmp "order: each iteration lasted until its last timer (min >= 175 ms)" \
  "x >= 175" "$(jqv "$T/a.json" '.metrics.iteration_duration.min')"

# (b) an error in a callback fails the iteration, named with its line
S=$(script boom.lua <<'LUA'
local timers = require("luaload.timers")
local ll = require("luaload")
function default()
  timers.set_timeout(function() error("boom in a timer") end, 10)
  ll.sleep(0.5)
  print("NOT REACHED")
end
LUA
)
run_ll run "$S" -i 2 -q
expect_eq "error: exit 0 (a script error in iterations, as k6)" "$RC" 0
expect_match "error: named with its file and line" "$ERR" "boom.lua:4: boom in a timer"
expect_eq "error: the iteration's function was cut" "$(grep -c 'NOT REACHED' "$OUT" "$ERR" | awk -F: '{ s += $2 } END { print s }')" 0
expect_cmp "error: the sleep was cancelled, not waited for (< 0.45 s)" "x < 0.45" "$ELAPSED"

# (c) an interval never cleared: the iteration is cut at the end of the test
S=$(script forever.lua <<'LUA'
local timers = require("luaload.timers")
options = { scenarios = { s = { executor = "constant-vus", vus = 3, duration = "500ms", gracefulStop = "200ms" } } }
function default()
  timers.set_interval(function() end, 5)
end
LUA
)
run_ll run "$S" -q
expect_eq "forever: exit 0" "$RC" 0
expect_cmp "forever: the run ends on time (< 3 s)" "x < 3" "$ELAPSED"
expect_match "forever: the iterations are cut at the end" "$ERR" "3 iterations still running at the end were interrupted"

# (d) not in init code, and a function is required
S=$(script init.lua <<'LUA'
local timers = require("luaload.timers")
timers.set_timeout(function() end, 10)
function default() end
LUA
)
run_ll run "$S" -i 1 -q
expect_eq "init: exit 107" "$RC" 107
expect_match "init: a clear error" "$ERR" "set_timeout\(\) is not available in the init context"
S=$(script nofn.lua <<'LUA'
local timers = require("luaload.timers")
function default() timers.set_timeout("soon", 10) end
LUA
)
run_ll run "$S" -i 1 -q
expect_match "no function: a clear error with the line" "$ERR" "nofn.lua:2: .*function expected"
finish
