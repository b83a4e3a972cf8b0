#!/usr/bin/env bash
# test_mistakes.sh -- the mistakes a k6 user makes in the first hour get
# Lua's message and one more line that names the fix (docs/getting-started.md,
# "Common mistakes"): a JavaScript file, require("k6/http"), res.json() with
# a dot, != and &&, a module or function used without its require.
source "$(dirname "$0")/lib.sh"
start_serve

# the hint line under the error, exactly as the docs show it
hint() { # NAME FILE HINT
  expect_eq "$1" "$(grep -A1 -F -- "$2" "$ERR" | grep '^  hint: ' | head -1)" "  hint: $3"
}

f=$(script k6.js <<'JS'
import http from "k6/http";
export default function () { http.get("http://127.0.0.1/"); }
JS
)
run_ll run "$f" -i 1 -q
expect_eq "a JavaScript file: exit 107" "$RC" 107
expect_match "a JavaScript file: Lua's message kept" "$ERR" "k6\\.js:1: '=' expected near 'http'"
hint "a JavaScript file: the hint" "k6.js:1:" \
  "luaload runs Lua scripts: port the k6 script as docs/from-k6.md shows, side by side (luaload new makes a Lua script to start from)"

f=$(script k6mod.lua <<'LUA'
local http = require("k6/http")
function default() end
LUA
)
run_ll run "$f" -i 1 -q
expect_eq "require k6/http: exit 107" "$RC" 107
expect_match "require k6/http: Lua's first line kept" "$ERR" "k6mod\\.lua:1: module 'k6/http' not found$"
expect_eq "require k6/http: no search-path dump" "$(grep -c "no file" "$ERR")" 0
hint "require k6/http: the hint" "not found" "k6's \"k6/http\" is require(\"luaload.http\") in luaload (docs/from-k6.md)"

f=$(script dot.lua <<LUA
local http = require("luaload.http")
function default()
  local res = http.get("$URL/json")
  print(res.json("token"))
end
LUA
)
run_ll run "$f" -i 1 -q
expect_match "res.json(): Lua's message kept" "$ERR" "dot\\.lua:4: bad argument #1 to 'json' \\(table expected, got string\\)"
hint "res.json(): the hint" "bad argument #1 to 'json'" "a method is called with a colon: res:json(...), not res.json(...)"

f=$(script ne.lua <<'LUA'
function default() if 1 != 2 then end end
LUA
)
run_ll run "$f" -i 1 -q
expect_eq "!=: exit 107" "$RC" 107
hint "!=: the hint" "near '!'" "Lua writes != as ~= and !x as not x"
f=$(script and.lua <<'LUA'
function default() if true && false then end end
LUA
)
run_ll run "$f" -i 1 -q
hint "&&: the hint" "near '&'" "Lua writes && as and"

f=$(script norequire.lua <<LUA
function default() http.get("$URL/") end
LUA
)
run_ll run "$f" -i 2 -q
expect_match "a missing require: Lua's message kept" "$ERR" "norequire\\.lua:1: attempt to index global 'http' \\(a nil value\\)"
hint "a missing require: the hint" "global 'http'" "http is a module: local http = require(\"luaload.http\")"
f=$(script nocheck.lua <<'LUA'
function default() check(1, { ok = true }) end
LUA
)
run_ll run "$f" -i 1 -q
hint "check without ll: the hint" "global 'check'" "check is ll.check: local ll = require(\"luaload\")"

# no hint where Lua's message is the whole story
f=$(script plain.lua <<'LUA'
function default() error("my own failure") end
LUA
)
run_ll run "$f" -i 1 -q
expect_match "a script's own error: kept" "$ERR" "plain\\.lua:1: my own failure"
expect_eq "a script's own error: no hint" "$(grep -c 'hint:' "$ERR")" 0
finish
