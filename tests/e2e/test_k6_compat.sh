#!/usr/bin/env bash
# test_k6_compat.sh -- the script API k6 users reach for (issue 12, growing):
# check's list form keeps the declared order and check returns whether all
# passed; fail(message) ends the iteration with that message.
source "$(dirname "$0")/lib.sh"

f=$(script checks.lua <<'LUA'
local ll = require("luaload")
function default()
  local ok = ll.check(1, { { "z first", function(v) return v == 1 end }, { "a second", true }, { "m third", false } })
  local ok2 = ll.check(1, { yes = function(v) return v == 1 end })
  print("returns", ok, ok2)
  if ll.vu.iteration == 1 then ll.fail("stop here") end
  print("after fail", ll.vu.iteration)
end
LUA
)
run_ll run "$f" -i 2 -q --summary-export "$T/s.json"
expect_eq "checks: exit 0 (a failed iteration is no failed run)" "$RC" 0
expect_eq "check returns false when one failed, true when all passed" "$(grep -c $'^returns\tfalse\ttrue$' "$OUT")" 2
expect_eq "the summary lists a list of checks in the declared order" \
  "$(grep -E '^ +[✓✗] ' "$OUT" | sed -E 's/^ +[✓✗] //' | head -3 | tr '\n' ',')" "z first,a second,m third,"
expect_eq "fail() ends the iteration" "$(grep -c '^after fail' "$OUT")" 1
expect_match "fail(message): the message and the script line" "$ERR" "checks.lua:6: stop here"
f=$(script badcheck.lua <<'LUA'
local ll = require("luaload")
function default() ll.check(1, { { "ok", true }, "oops" }) end
LUA
)
run_ll run "$f" -i 1 -q
expect_match "a bad item of the list form names its place" "$ERR" "badcheck.lua:2: check: item 2 must be { name, function or boolean }"
# console.log/info/warn/error/debug: logfmt lines on stderr, as k6's
f=$(script console.lua <<'LUA'
function default()
  console.log("hello", 42, { a = 1 })
  console.warn('a "quote"')
  console.error("bad")
  console.debug("details")
end
LUA
)
run_ll run "$f" -i 2 -q
expect_eq "console.log: level, message, source, VU and iteration" \
  "$(grep -c -E '^time="[0-9T:Z-]+" level=info msg="hello 42 \{\\"a\\":1\}" source=console vu=1 iteration=[01]$' "$ERR")" 2
expect_match "console.warn: quotes escaped" "$ERR" 'level=warning msg="a \\"quote\\""'
expect_match "console.error" "$ERR" 'level=error msg="bad"'
expect_eq "console.debug is hidden by default" "$(grep -c 'level=debug' "$ERR")" 0
LUALOAD_VERBOSE=1 run_ll run "$f" -i 1 -q
expect_eq "console.debug with LUALOAD_VERBOSE=1" "$(grep -c 'level=debug msg="details"' "$ERR")" 1
run_ll run "$f" -i 1 -q -v
expect_eq "console.debug with -v" "$(grep -c 'level=debug msg="details"' "$ERR")" 1

# check(value, checks, tags): the tags tag the check samples
f=$(script ctags.lua <<'LUA'
local ll = require("luaload")
options = { thresholds = { ["checks{kind:api}"] = { "rate==0.5" }, ["checks{kind:ui}"] = { "rate==1" } } }
function default()
  ll.check(1, { ["api ok"] = true, ["api bad"] = false }, { kind = "api" })
  ll.check(1, { ["ui ok"] = true }, { kind = "ui" })
end
LUA
)
run_ll run "$f" -i 3 -q --summary-export "$T/t.json"
expect_eq "check tags: checks{kind:api} thresholds see them (exit 0)" "$RC" 0
expect_eq "check tags: 6 api samples" "$(jqv "$T/t.json" '.metrics["checks{kind:api}"].passes + .metrics["checks{kind:api}"].fails')" 6
expect_eq "check tags: 3 ui samples" "$(jqv "$T/t.json" '.metrics["checks{kind:ui}"].passes')" 3

# res:json(selector), gjson's basic paths (serve's /echo sends the body back)
start_serve
f=$(script json.lua <<LUA
local http = require("luaload.http")
local doc = '{"a":{"b":"deep"},"items":[{"id":7,"tags":["x"]},{"id":9}],"n":3,"10":"ten"}'
function default()
  local r = http.post("$URL/echo", doc)
  local ids = r:json("items.#.id")
  print("json", r:json("a.b"), r:json("items.1.id"), r:json("items.#"), #ids, ids[1], ids[2],
    r:json("items.0.tags.0"), tostring(r:json("nope.x")), r:json("10"), type(r:json()))
end
LUA
)
run_ll run "$f" -i 1 -q
expect_match "res:json(selector): keys, 0-based indexes, # and #.path" "$OUT" $'^json\tdeep\t9\t2\t2\t7\t9\tx\tnil\tten\ttable$'
finish
