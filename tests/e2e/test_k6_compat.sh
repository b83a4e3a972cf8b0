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
# the list form written flat: checks "1" (always passing) and "2" before
f=$(script flatcheck.lua <<'LUA'
local ll = require("luaload")
function default()
  ll.check(500, { "status is 200", function(r) return r == 200 end })
end
LUA
)
run_ll run "$f" -i 1 --summary-export "$T/flat.json"
expect_match "a flat check list: a script error naming the line and the fix" "$ERR" \
  'flatcheck.lua:3: check: item 1 \("status is 200"\) has no name: write the list with its inner braces, \{ \{ "name", function\(r\) \.\.\. end \} \}, or name each check, \{ \["name"\] = function\(r\) \.\.\. end \}'
expect_eq "a flat check list: no check recorded" "$(jqv "$T/flat.json" '.root_group.checks | length')" 0
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
# the summary: the whole UTF-8 indent, each threshold's own aggregate,
# non-time trends as plain numbers, colors on request and on a terminal
f=$(script summary.lua <<LUA
local http = require("luaload.http")
local metrics = require("luaload.metrics")
local big = metrics.Trend("big_numbers")
options = { thresholds = { http_req_duration = { "p(99.9)<60000" }, big_numbers = { "max>0" } } }
function default()
  http.get("$URL/")
  big:add(1234567.891)
end
function handle_summary(data)
  local s = require("luaload.summary")
  return { stdout = s.text(data, { indent = "→", enableColors = false }),
    ["$T/colors.txt"] = s.text(data, { enableColors = true }) }
end
LUA
)
run_ll run "$f" -i 3 -q
expect_eq "summary.text: the whole UTF-8 indent on every metric line" \
  "$(grep -E '\.+: ' "$OUT" | grep -c -v -E '^→  (  )?[ ✓✗] [{a-z]')" 0
expect_match "summary.text: a metric line with the indent" "$OUT" '^→    http_reqs\.+: 3 '
expect_match "THRESHOLDS: the threshold's own aggregate, not a column" "$OUT" "^→    ✓ 'p\(99\.9\)<60000' p\(99\.9\)=[0-9.]+(µs|ms|s)$"
expect_match "a non-time trend in plain numbers" "$OUT" '^→  ✓ big_numbers\.+: avg=1234567\.891 +min=1234567\.891 '
expect_eq "no exponent form anywhere" "$(grep -c -E '[0-9]e[+-][0-9]' "$OUT")" 0
expect_match "enableColors = true: ANSI colors" "$T/colors.txt" $'\e\\[32m'
expect_eq "enableColors = false: none" "$(grep -c $'\e' "$OUT")" 0
# the default summary: colored on a terminal (script(1) gives it one), not with --no-color or NO_COLOR
f2=$(script plain.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/") end
LUA
)
timeout 60 script -qec "$LUALOAD run $f2 -i 1 -q" /dev/null >"$T/tty.txt" 2>&1
expect_match "the default summary on a terminal has colors" "$T/tty.txt" $'\e\\[36m'
timeout 60 script -qec "$LUALOAD run $f2 -i 1 -q --no-color" /dev/null >"$T/tty.txt" 2>&1
expect_eq "--no-color on a terminal: none" "$(grep -c $'\e\\[3' "$T/tty.txt")" 0
NO_COLOR=1 timeout 60 script -qec "$LUALOAD run $f2 -i 1 -q" /dev/null >"$T/tty.txt" 2>&1
expect_eq "NO_COLOR=1 on a terminal: none" "$(grep -c $'\e\\[3' "$T/tty.txt")" 0
run_ll run "$f2" -i 1 -q
expect_eq "not a terminal: no colors" "$(grep -c $'\e' "$OUT")" 0

# HTTP samples outside any group carry group "", as k6's
f=$(script groups.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  http.get("$URL/")
  ll.group("g1", function() http.get("$URL/") end)
end
LUA
)
run_ll run "$f" -i 1 -q -o json="$T/points.json"
expect_eq "group tag: \"\" outside groups, ::g1 inside" \
  "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.group' "$T/points.json" | tr '\n' ',')" ",::g1,"
# __VU and __ITER, as k6's globals; luaload.utils as k6-utils
f=$(script globals.lua <<'LUA'
local u = require("luaload.utils")
print("init", __VU, __ITER)
function setup() print("setup", __VU, __ITER) end
function default()
  print("it", __VU, __ITER)
  local n = u.randomIntBetween(2, 4)
  print("utils", n >= 2 and n <= 4, #u.random_string(8), u.randomString(3, "z"), u.randomItem({ "only" }),
    u.uuidv4():match("^%x+%-%x+%-4%x+%-[89ab]%x+%-%x+$") ~= nil,
    u.findBetween('<input name="csrf" value="t0k">', 'value="', '"'),
    table.concat(u.find_between("<b>1</b><b>2</b>", "<b>", "</b>", true), ","), tostring(u.findBetween("abc", "x", "y")))
end
LUA
)
run_ll run "$f" -q -u 2 -i 4
expect_match "__VU and __ITER in init code and setup: 0" "$OUT" $'^setup\t0\t0$'
expect_eq "__VU and __ITER in iterations" "$(grep -c -E $'^it\t[12]\t[0-3]$' "$OUT")" 4
expect_eq "__ITER counts each VU's iterations" "$(awk '$1 == "it" { print $2 "-" $3 }' "$OUT" | sort -u | wc -l)" 4
expect_eq "luaload.utils: k6-utils' helpers" "$(grep -c $'^utils\ttrue\t8\tzzz\tonly\ttrue\tt0k\t1,2\tnil$' "$OUT")" 4
# http.expectedStatuses / setResponseCallback: which statuses are failed requests
f=$(script expected.lua <<LUA
local http = require("luaload.http")
http.setResponseCallback(http.expectedStatuses(200, { min = 404, max = 404 }))
local req = http.Request("$URL/status/500", { responseCallback = http.expected_statuses(500) })
function default()
  http.get("$URL/status/404")
  http.get("$URL/status/201")
  http.get("$URL/status/500")
  http.get(req)
  http.get("$URL/status/503", { responseCallback = http.expectedStatuses({ min = 500, max = 599 }) })
end
LUA
)
run_ll run "$f" -i 1 -q -o json="$T/exp.json"
expect_eq "expectedStatuses: failed or not per status, the request's own callback first" \
  "$(jq -r 'select(.type == "Point" and .metric == "http_req_failed") | "\(.data.tags.status)=\(.data.value)/\(.data.tags.expected_response)"' "$T/exp.json" | tr '\n' ' ')" \
  "404=0/true 201=1/false 500=1/false 500=0/true 503=0/true "
f=$(script nocb.lua <<LUA
local http = require("luaload.http")
http.set_response_callback(nil)
function default() http.get("$URL/status/500") end
LUA
)
run_ll run "$f" -i 1 -q -o json="$T/nocb.json"
expect_eq "setResponseCallback(nil): no http_req_failed sample" "$(grep -c '"http_req_failed"' "$T/nocb.json")" 0
expect_eq "setResponseCallback(nil): no expected_response tag" "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.expected_response // "none"' "$T/nocb.json")" none
# changed during the test: each response is judged by the callback in force
f=$(script midcb.lua <<LUA
local http = require("luaload.http")
local n = 0
function default()
  n = n + 1
  if n == 2 then http.setResponseCallback(http.expectedStatuses(404)) end
  if n == 3 then http.setResponseCallback(nil) end
  if n == 4 then http.setResponseCallback(http.expectedStatuses(200)) end
  http.get("$URL/status/404")
end
LUA
)
run_ll run "$f" -u 1 -i 4 -q -o json="$T/midcb.json"
expect_eq "setResponseCallback mid-test: the callback in force judges" \
  "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.expected_response // "none"' "$T/midcb.json" | tr '\n' ' ')" \
  "false true none false "
f=$(script badcb.lua <<'LUA'
local http = require("luaload.http")
http.expectedStatuses(200, { min = 300 })
LUA
)
run_ll run "$f" -i 1 -q
expect_match "expectedStatuses: a bad range is named" "$ERR" "http.expected_statuses: argument 2: a range needs min and max statuses"
# res:submit_form / submitForm and res:click_link (k6's Response methods), res.status_text
f=$(script forms.lua <<LUA
local http = require("luaload.http")
function default()
  local page = http.get("$URL/login")
  print("status_text", page.status_text)
  local res = page:submitForm({ formSelector = "form#login", fields = { username = "bob", password = "secret" } })
  print("submitted", res.status, res.url, res:html("h1#welcome"):text())
  local next = res:click_link({ selector = "a.nav", params = { tags = { name = "nav" } } })
  print("clicked", next.status, next.url, next.status_text)
  print("noform", pcall(page.submit_form, page, { form_selector = "form#nope" }))
end
LUA
)
run_ll run "$f" -i 1 -q
expect_match "res.status_text" "$OUT" $'^status_text\t200 OK$'
expect_match "submitForm: the form's hidden CSRF field and cookie go with the fields, the 303 is followed" "$OUT" \
  $'^submitted\t200\thttp://127.0.0.1:[0-9]+/welcome\tWelcome, bob$'
expect_match "click_link: the href resolved against the page" "$OUT" $'^clicked\t401\thttp://127.0.0.1:[0-9]+/api/items\t401 Unauthorized$'
expect_match "submit_form: no such form, a clear error" "$OUT" $'^noform\tfalse\t.*res:submit_form: no form matches \'form#nope\'$'
finish
