#!/usr/bin/env bash
# Coroutines the script creates (lib/lua/luaload/coroutine.lua): a request or
# sleep inside them suspends the whole VU and its result comes back to the
# call that waited; user yields and errors keep plain Lua semantics; a yield
# in the VU's own coroutine is a clear error; an interrupted wait inside a
# user coroutine ends on time.
source "$(dirname "$0")/lib.sh"
start_serve

# (a) batch emulation: 3 coroutine.wrap requests per iteration
S=$(script batch.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local res = {}
  for i = 1, 3 do
    local co = coroutine.wrap(function() return http.get("$URL/") end)
    res[i] = co()
  end
  for i = 1, 3 do
    if not (res[i] and res[i].status == 200) then error("response " .. i .. " lost") end
  end
  ll.check(res, { ["all 200"] = true })
end
LUA
)
run_ll run "$S" -i 10 -q --summary-export "$T/a.json"
expect_eq "batch: exit 0" "$RC" 0
expect_eq "batch: 30 requests" "$(jqv "$T/a.json" .metrics.http_reqs.count)" 30
expect_eq "batch: none failed" "$(jqv "$T/a.json" '.metrics.http_req_failed.passes')" 0
expect_eq "batch: 10 iterations passed the check" "$(jqv "$T/a.json" '.root_group.checks["all 200"].passes')" 10
expect_eq "batch: no script error" "$(grep -c 'error\|in flight' "$ERR")" 0

# (b) create/resume with a user yield between requests: values both ways
S=$(script values.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local co = coroutine.create(function(a, b)
    local r1 = http.get("$URL/status/201")
    assert(coroutine.isyieldable(), "isyieldable in a user coroutine")
    local c, d = coroutine.yield(a + b, r1.status)
    local r2 = http.get("$URL/status/202")
    return c .. d, r2.status
  end)
  assert(not coroutine.isyieldable(), "isyieldable in the VU's coroutine")
  local ok, sum, st1 = coroutine.resume(co, 1, 2)
  assert(ok and sum == 3 and st1 == 201, "first resume: " .. tostring(sum) .. " " .. tostring(st1))
  assert(coroutine.status(co) == "suspended", "status after the yield")
  local ok2, cd, st2 = coroutine.resume(co, "x", "y")
  assert(ok2 and cd == "xy" and st2 == 202, "second resume: " .. tostring(cd) .. " " .. tostring(st2))
  assert(coroutine.status(co) == "dead", "status at the end")
  local ok3, msg = coroutine.resume(co)
  assert(not ok3 and msg == "cannot resume dead coroutine", "dead: " .. tostring(msg))
  ll.check(1, { ["values intact"] = true })
end
LUA
)
run_ll run "$S" -i 3 -q --summary-export "$T/b.json"
expect_eq "values: exit 0" "$RC" 0
expect_eq "values: 6 requests" "$(jqv "$T/b.json" .metrics.http_reqs.count)" 6
expect_eq "values: passed both ways" "$(jqv "$T/b.json" '.root_group.checks["values intact"].passes')" 3
expect_eq "values: no script error" "$(grep -c 'values.lua' "$ERR")" 0

# (c) nested coroutines: sleep then request two levels down
S=$(script nested.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local outer = coroutine.wrap(function()
    local inner = coroutine.wrap(function()
      ll.sleep(0.01)
      local r = http.get("$URL/")
      coroutine.yield("inner yielded")
      return r.status
    end)
    local y = inner()
    local ll_status = inner()
    return y, ll_status
  end)
  local y, st = outer()
  if y == "inner yielded" and st == 200 then ll.check(1, { nested = true }) end
end
LUA
)
run_ll run "$S" -u 2 -i 6 -q --summary-export "$T/c.json"
expect_eq "nested: exit 0" "$RC" 0
expect_eq "nested: 6 requests" "$(jqv "$T/c.json" .metrics.http_reqs.count)" 6
expect_eq "nested: results delivered" "$(jqv "$T/c.json" '.root_group.checks.nested.passes')" 6

# (d) coroutine.yield in the VU's own coroutine: a script error, not a hang;
# the VU's own coroutine cannot be resumed
S=$(script vu_yield.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  http.get("$URL/")
  local me = coroutine.running()
  local ok, msg = coroutine.wrap(function() return coroutine.resume(me) end)()
  if not ok and msg:find("did not create", 1, true) then ll.check(1, { ["VU coroutine not resumable"] = true }) end
  if ll.vu.iteration % 2 == 0 then coroutine.yield() end
  http.get("$URL/")
end
LUA
)
run_ll run "$S" -i 4 -q --summary-export "$T/d.json"
expect_eq "VU yield: exit 0" "$RC" 0
expect_cmp "VU yield: no hang" "x < 5" "$ELAPSED"
expect_match "VU yield: clear error" "$ERR" "vu_yield.lua:8: coroutine.yield: not inside a coroutine the script created"
expect_match "VU yield: counted" "$ERR" "in 2 iterations"
expect_eq "VU yield: later iterations make requests" "$(jqv "$T/d.json" .metrics.http_reqs.count)" 6
expect_eq "VU yield: its coroutine cannot be resumed" "$(jqv "$T/d.json" '.root_group.checks["VU coroutine not resumable"].passes')" 4

# (e) errors inside a user coroutine after a request: resume returns false,
# wrap rethrows; an "http:" error of the C function propagates too; a wait
# where the VU cannot yield is refused and the VU goes on
S=$(script co_err.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local ok, msg = coroutine.resume(coroutine.create(function()
    http.get("$URL/")
    error("after the request")
  end))
  if not ok and msg:find("co_err.lua:6: after the request", 1, true) then ll.check(1, { ["resume false"] = true }) end
  local ok2, msg2 = pcall(coroutine.wrap(function() http.get("$URL/"); error("wrapped") end))
  if not ok2 and msg2:find("wrapped", 1, true) then ll.check(1, { ["wrap rethrows"] = true }) end
  local ok3, msg3 = coroutine.resume(coroutine.create(function() http.get("$URL/", { timeout = "bogus" }) end))
  if not ok3 and msg3:find("http", 1, true) then ll.check(1, { ["http error"] = true }) end
  table.sort({ 2, 1 }, function(a, b)
    local ok4, msg4 = coroutine.resume(coroutine.create(function() http.get("$URL/delay/200") end))
    if not ok4 and msg4:find("cannot wait", 1, true) then ll.check(1, { ["C boundary refused"] = true }) end
    return a < b
  end)
  local ok5, msg5 = pcall(table.sort, { 2, 1 }, function(a, b) ll.sleep(0.2) return a < b end)
  if not ok5 and msg5:find("cannot wait", 1, true) then ll.check(1, { ["C boundary refused directly"] = true }) end
  if http.get("$URL/").status == 200 then ll.check(1, { ["VU goes on"] = true }) end
end
LUA
)
run_ll run "$S" -i 2 -q --summary-export "$T/e.json"
expect_eq "user errors: exit 0" "$RC" 0
for c in "resume false" "wrap rethrows" "http error" "C boundary refused" "C boundary refused directly" "VU goes on"; do
  expect_eq "user errors: $c" "$(jqv "$T/e.json" ".root_group.checks[\"$c\"].passes")" 2
done
expect_eq "user errors: refused waits are not requests" "$(jqv "$T/e.json" .metrics.http_reqs.count)" 6
expect_eq "user errors: no failed iteration" "$(grep -c 'co_err.lua' "$ERR")" 0
expect_cmp "user errors: refused waits cancelled (no 200 ms waits)" "x < 3" "$ELAPSED"

# (f) the end of the test interrupts a VU whose user coroutine waits
S=$(script interrupt.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "1s", gracefulStop = "0s" } } }
function default()
  coroutine.wrap(function()
    coroutine.wrap(function() http.get("$URL/delay/5000") end)()
  end)()
end
LUA
)
run_ll run "$S" -q --summary-export "$T/f.json"
expect_eq "interrupt: exit 0" "$RC" 0
expect_cmp "interrupt: ends on time" "x < 4" "$ELAPSED"
expect_match "interrupt: iterations interrupted" "$ERR" "interrupted"
# the cut requests had reached the server: each counts, failed
expect_eq "interrupt: the cut requests count as failed" \
  "$(jqv "$T/f.json" '[.metrics.http_reqs.count, .metrics.http_req_failed.passes] | @tsv')" "$(printf '2\t2')"

finish
