#!/usr/bin/env bash
# Scripts that once killed or hung the whole run: unbounded recursion
# through a C function that calls back into Lua (string.gsub's callback,
# coroutine.resume, print and tostring through __tostring) and a memory bomb
# under an address-space limit. A script error stays a script error: the
# iteration fails naming the line, the run goes on and ends with its summary
# (exit 0: iterations that fail do not fail the run, as in k6). What LuaJIT
# cannot recover from (a fault in compiled code when memory runs out) ends
# with one line, the summary of what completed and exit 109 (crash.c).
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8

# hostile NAME EXPECTED-ERROR: runs the script $T/NAME.lua (3 iterations),
# which must end with exit 0, the summary and EXPECTED-ERROR
hostile() {
  run_ll run "$T/$1.lua" -q
  expect_eq "$1: exit 0 (the iterations failed, the run did not)" "$RC" 0
  expect_match "$1: a script error naming the line" "$ERR" "$2"
  expect_match "$1: the summary" "$OUT" "iterations\.+: 3 "
  expect_cmp "$1: bounded" "x < 30" "$ELAPSED"
}

script gsub.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local function f(s) return (string.gsub("x", "x", f)) end
function default() f("x") end
LUA
hostile gsub "script error in 3 iterations: .*gsub.lua:2: C stack overflow in string.gsub"

script resume.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local function f()
  local ok, err = coroutine.resume(coroutine.create(f))
  if not ok then error(err, 0) end
end
function default() f() end
LUA
hostile resume "resume.lua:3: C stack overflow in coroutine.resume"

script wrap.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local function f() return coroutine.wrap(f)() end
function default() f() end
LUA
hostile wrap "wrap.lua:[23]: C stack overflow in coroutine.wrap"

# LuaJIT's tostring tail-calls __tostring: this looped for ever
script tostring.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local mt = {}
mt.__tostring = function(t) return tostring(t) end
function default() local s = tostring(setmetatable({}, mt)) end
LUA
hostile tostring "stack overflow.*tostring.lua:[34]"

script print.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local mt = {}
mt.__tostring = function(t) print(t) return "x" end
function default() print(setmetatable({}, mt)) end
LUA
hostile print "print.lua:3: C stack overflow in print"

script format.lua >/dev/null <<'LUA'
options = { iterations = 3 }
local mt = {}
mt.__tostring = function(t) return string.format("%s", t) end
function default() local s = string.format("%s", setmetatable({}, mt)) end
LUA
hostile format "stack overflow \(at [^ ]*format.lua:[34]\)"

# the guards leave a deep but bounded recursion alone
script deep_ok.lua >/dev/null <<'LUA'
options = { iterations = 1 }
local function f(n) if n == 0 then return "x" end return (string.gsub("x", "x", function() return f(n - 1) end)) end
local function g(n) if n == 0 then return true end local ok, v = coroutine.resume(coroutine.create(g), n - 1) return v end
function default()
  assert(f(150) == "x")
  assert(g(150) == true)
end
LUA
run_ll run "$T/deep_ok.lua" -q
expect_eq "150 nested gsub callbacks and coroutines: exit 0, no error" "$RC $(grep -c 'script error' "$ERR")" "0 0"

# the crash guard itself: a fault in a worker's Lua code (a null pointer
# read through the FFI) ends the run with one line, the summary of what
# completed (the iterations before it) and exit 109
script fault.lua >/dev/null <<'LUA'
local ffi = require("ffi")
options = { scenarios = { s = { executor = "per-vu-iterations", vus = 1, iterations = 1000, maxDuration = "20s" } } }
function default()
  if __ITER == 5 then return ffi.cast("int *", 0)[0] end
  require("luaload").sleep(0.01)
end
LUA
run_ll run "$T/fault.lua" -q
expect_eq "a fault in an iteration: exit 109" "$RC" 109
expect_match "a fault: one line" "$ERR" "worker 0 crashed: SIGSEGV in its Lua code.*the test stops"
expect_match "a fault: the summary of what completed" "$OUT" "iterations\.+: 5 "
expect_cmp "a fault: ends at once" "x < 10" "$ELAPSED"
for step in setup teardown; do
  script "fault_$step.lua" >/dev/null <<LUA
local ffi = require("ffi")
options = { iterations = 1 }
function $step() return ffi.cast("int *", 0)[0] end
function default() end
LUA
  run_ll run "$T/fault_$step.lua" -q
  expect_eq "a fault in $step(): exit 109" "$RC" 109
  expect_match "a fault in $step(): one line" "$ERR" "the lifecycle state .* crashed: SIGSEGV"
done

# memory bombs under an address-space limit (ASan reserves terabytes of it: not there)
if ldd "$LUALOAD" 2>/dev/null | grep -q libasan; then
  echo "# skipping the memory bombs: an ASan build cannot run under prlimit --as"
else
  # memory freed with the iteration: each one fails with "not enough memory", the run goes on
  script bomb_local.lua >/dev/null <<'LUA'
options = { iterations = 3 }
function default()
  local t, s = {}, string.rep("x", 1024 * 1024)
  while true do t[#t + 1] = s .. #t end
end
LUA
  OUT=$T/out.txt ERR=$T/err.txt
  timeout -k 5 60 prlimit --as=600000000 "$LUALOAD" run "$T/bomb_local.lua" -q >"$OUT" 2>"$ERR"
  RC=$?
  expect_eq "memory bomb, freed each iteration: exit 0" "$RC" 0
  expect_match "memory bomb, freed: not enough memory is a script error" "$ERR" "script error in 3 iterations: not enough memory"
  expect_match "memory bomb, freed: the summary" "$OUT" "iterations\.+: 3 "
  # memory kept across iterations: LuaJIT 2.1 faults raising out-of-memory
  # from compiled code, or the next iteration cannot start; never a SIGSEGV
  # or a PANIC, but one line, the summary and 109 -- or failed iterations
  script bomb_kept.lua >/dev/null <<'LUA'
options = { iterations = 3 }
keep = {}
function default()
  local s = string.rep("x", 1024 * 1024)
  while true do keep[#keep + 1] = s .. #keep end
end
LUA
  timeout -k 5 60 prlimit --as=600000000 "$LUALOAD" run "$T/bomb_kept.lua" -q >"$OUT" 2>"$ERR"
  RC=$?
  if [[ $RC == 109 ]]; then
    ok "memory bomb, kept: the crash guard's exit 109"
    expect_match "memory bomb, kept: one line says what happened" "$ERR" "worker 0 crashed: SIGSEGV .*the test stops"
  else
    expect_eq "memory bomb, kept: exit 0 (failed iterations) or 109" "$RC" 0
  fi
  expect_match "memory bomb, kept: the summary" "$OUT" "iterations\.+: "
  if grep -q PANIC "$ERR"; then not_ok "memory bomb, kept: no PANIC"; else ok "memory bomb, kept: no PANIC"; fi
fi
finish
