#!/usr/bin/env bash
# Script errors: iteration errors are counted and reported once; init, setup
# and parse errors stop the run with exit 107; a refused connection is an error
# in the metrics, not a crash.
source "$(dirname "$0")/lib.sh"
start_serve
S=$(script iter_err.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  http.get("$URL/")
  if ll.vu.iteration % 2 == 0 then
    error("boom")
  end
end
LUA
)
run_ll run "$S" -u 2 -i 20 -q --summary-export "$T/s.json"
expect_eq "iteration error: exit 0" "$RC" 0
expect_match "error names file and line" "$ERR" "iter_err.lua:6: boom"
expect_eq "reported once" "$(grep -c 'boom' "$ERR")" 1
expect_match "with its count" "$ERR" "in 10 iterations"
expect_eq "the VUs went on: 20 requests" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 20

S=$(script parse_err.lua <<'LUA'
function default()
  local x = = 1
end
LUA
)
run_ll run "$S" -i 1
expect_eq "parse error: exit 107" "$RC" 107
expect_match "parse error names file and line" "$ERR" "parse_err.lua:2:"

S=$(script init_err.lua <<'LUA'
local t = nil
local y = t.field
function default() end
LUA
)
run_ll run "$S" -i 1
expect_eq "init error: exit 107" "$RC" 107
expect_match "init error names file and line" "$ERR" "init_err.lua:2:"

S=$(script setup_err.lua <<'LUA'
function setup() error("no token") end
function default() end
LUA
)
run_ll run "$S" -i 1
expect_eq "setup error: exit 107" "$RC" 107
expect_match "setup error message" "$ERR" "setup\(\) failed: .*setup_err.lua:1: no token"

S=$(script nodefault.lua <<'LUA'
local x = 1
LUA
)
run_ll run "$S" -i 1
expect_eq "no default function: exit 107" "$RC" 107
expect_match "no default function: message" "$ERR" "no function default"

run_ll run "$T/missing.lua"
expect_eq "missing script: exit 107" "$RC" 107
expect_match "missing script: message says why" "$ERR" "cannot read script .*missing.lua: No such file or directory"

# script errors whose message changes every time: a bounded table, a bounded report
S=$(script manyerr.lua <<'LUA'
local n = 0
function default() n = n + 1 error("boom " .. n) end
LUA
)
run_ll run "$S" -i 600 -u 1 -q
expect_eq "600 distinct script errors: 20 shown" "$(grep -c '^luaload: script error in 1 iteration: .*boom' "$ERR")" 20
expect_match "600 distinct script errors: the rest counted" "$ERR" "script errors with other messages in 580 more iterations"

# handle_summary returning something else than a table: one error line, then the default summary
S=$(script badsummary.lua <<'LUA'
function default() end
function handle_summary(data) return "not a table" end
LUA
)
run_ll run "$S" -i 1
expect_match "handle_summary returns a string: the error" "$ERR" "handle_summary\(\) must return a table of destination = text, got string: printing the default summary"
expect_match "handle_summary returns a string: the default summary" "$OUT" "iterations\.+: 1"
expect_eq "handle_summary returns a string: exit 0" "$RC" 0

# luaload.abort(): exit 108 with the reason, from an iteration, init or setup
echo "payload-123" >"$T/data.txt"
S=$(script abort.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local data = ll.open("data.txt")       -- relative to the script
function default()
  http.get("$URL/")
  if ll.vu.id == 1 and ll.vu.iteration == 3 then ll.abort("seen " .. data:gsub("%s+$", "")) end
end
LUA
)
run_ll run "$S" -u 2 -d 20s -q --summary-export "$T/s.json"
expect_eq "abort in an iteration: exit 108" "$RC" 108
expect_match "abort: reason printed" "$ERR" "test aborted: seen payload-123"
expect_eq "abort: not reported as a script error" "$(grep -c 'script error' "$ERR")" 0
expect_cmp "abort: stopped early, summary exported" "x >= 3 && x < 1000" "$(jqv "$T/s.json" .metrics.iterations.count)"
S=$(script abort_init.lua <<'LUA'
require("luaload").abort("no config")
function default() end
LUA
)
run_ll run "$S"
expect_eq "abort in init: exit 108" "$RC" 108
expect_match "abort in init: reason" "$ERR" "test aborted: no config"
S=$(script abort_setup.lua <<'LUA'
function setup() require("luaload").abort("target down") end
function default() end
LUA
)
run_ll run "$S"
expect_eq "abort in setup: exit 108" "$RC" 108
S=$(script open_late.lua <<'LUA'
local ll = require("luaload")
function default() ll.open("x.txt") end
LUA
)
run_ll run "$S" -i 1
expect_match "open() outside init is an error" "$ERR" "open: only available in init code"

FREE=$(free_port)
S=$(script refused.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local res = http.get("http://127.0.0.1:$FREE/")
  ll.check(res, { ["status 0"] = function(r) return r.status == 0 end,
                  ["error_code 1212"] = function(r) return r.error_code == 1212 end,
                  ["error text"] = function(r) return #r.error > 0 end })
end
LUA
)
run_ll run "$S" -u 2 -i 10 -q --summary-export "$T/s.json"
expect_eq "refused: exit 0" "$RC" 0
S2=$(script throw.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{}
local req = http.Request("http://127.0.0.1:$FREE/", { throw = true })
function default()
  local ok, err = pcall(http.get, "http://127.0.0.1:$FREE/", { throw = true })
  ll.check(err, { ["pcall sees the error"] = function(e) return not ok and e:find("error_code 1212") ~= nil end })
  client:get(req)
end
LUA
)
run_ll run "$S2" -i 3 -q --summary-export "$T/t.json"
expect_eq "throw: the run goes on (exit 0)" "$RC" 0
expect_match "throw: raised at the script's line" "$ERR" "throw.lua:8: GET http://127.0.0.1:$FREE/: .*error_code 1212.* in 3 iterations|in 3 iterations: .*throw.lua:8: GET"
expect_eq "throw: pcall caught it" "$(jqv "$T/t.json" .metrics.checks.passes)" 3
expect_eq "throw: the failed requests still count" "$(jqv "$T/t.json" .metrics.http_req_failed.passes)" 6
expect_eq "refused: 10 requests" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 10
expect_eq "refused: all failed" "$(jqv "$T/s.json" .metrics.http_req_failed.value)" 1
expect_eq "refused: checks all passed" "$(jqv "$T/s.json" .metrics.checks.fails)" 0
finish
