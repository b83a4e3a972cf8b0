#!/usr/bin/env bash
# Quick mode (`luaload run URL`): an invalid URL is a config error (exit 104)
# before anything runs, an argument that looks like a URL is never taken for
# a script, and any run with failed requests ends with the top errors and
# their counts on stderr (even with -q); a run without failures prints none.
source "$(dirname "$0")/lib.sh"
start_serve
INVALID="(expected http:// or https://, a host, and no spaces or control characters)"

run_ll run http:// -d 1s
expect_eq "http://: exit 104" "$RC" 104
expect_eq "http://: the one-line error" "$(cat "$ERR")" "luaload: invalid URL 'http://' $INVALID"
expect_cmp "http://: at once" "x < 2" "$ELAPSED"
for u in ftp://x http//x https:x "http://a b" http:///path; do
  run_ll run "$u" -d 1s
  expect_eq "'$u': exit 104" "$RC" 104
  expect_match "'$u': invalid URL" "$ERR" "^luaload: invalid URL '$u' \(expected http:// or https://"
done

# a valid quick run: no error report
run_ll run "$URL/" -u 2 -d 1s -q --summary-export "$T/ok.json"
expect_eq "quick run: exit 0" "$RC" 0
expect_cmp "quick run: requests made" "x > 10" "$(jqv "$T/ok.json" .metrics.http_reqs.count)"
expect_eq "quick run: none failed" "$(jqv "$T/ok.json" .metrics.http_req_failed.passes)" 0
expect_eq "quick run: nothing on stderr" "$(cat "$ERR")" ""
run_ll run "HTTP://127.0.0.1:$PORT/" -i 3 -q --summary-export "$T/case.json"
expect_eq "quick run, upper-case scheme: 3 requests" "$(jqv "$T/case.json" .metrics.http_reqs.count)" 3
run_ll run "$URL/?a=]==]b]]c]=]" -i 2 -q --summary-export "$T/brackets.json"
expect_eq "quick run, a URL with Lua long brackets: 2 requests" "$(jqv "$T/brackets.json" .metrics.http_reqs.count)" 2

# a closed port: the report, with -q, its count matching http_req_failed
run_ll run http://127.0.0.1:1/ -d 1s -q --summary-export "$T/closed.json"
expect_eq "closed port: exit 0" "$RC" 0
expect_match "closed port: the report" "$ERR" "^luaload: failed requests by error:$"
expect_match "closed port: connection refused, 1212" "$ERR" \
  "^luaload:   [0-9]+ × dial tcp 127.0.0.1:1: connect: connection refused \(error_code 1212\)$"
FAILED=$(jqv "$T/closed.json" .metrics.http_req_failed.passes)
expect_eq "closed port: counts add up to http_req_failed" \
  "$(awk '$1 == "luaload:" && $3 == "×" { n += $2 } END { print n + 0 }' "$ERR")" "$FAILED"
expect_eq "closed port: one message (timings left out)" "$(grep -c ' × ' "$ERR")" 1

# HTTP statuses: "HTTP 503" with its exact count; the top 5 of 7
S=$(script statuses.lua <<LUA
local http = require("luaload.http")
function default()
  http.get("$URL/")
  http.get("$URL/status/503")
end
LUA
)
run_ll run "$S" -u 2 -i 10 -q --summary-export "$T/503.json"
expect_eq "503s: exit 0" "$RC" 0
expect_match "503s: counted" "$ERR" "^luaload:   10 × HTTP 503$"
expect_eq "503s: 10 failed" "$(jqv "$T/503.json" .metrics.http_req_failed.passes)" 10
S=$(script seven.lua <<LUA
local http = require("luaload.http")
function default()
  for s = 0, 6 do
    for _ = 1, 7 - s do http.get("$URL/status/" .. (500 + s)) end
  end
end
LUA
)
run_ll run "$S" -i 2 -q
expect_match "7 messages: top 5 of 7" "$ERR" "^luaload: failed requests by error \(top 5 of 7\):$"
expect_eq "7 messages: 5 lines" "$(grep -c ' × ' "$ERR")" 5
expect_eq "7 messages: most frequent first" "$(grep ' × ' "$ERR" | head -1)" "luaload:   14 × HTTP 500"
expect_eq "7 messages: fifth" "$(grep ' × ' "$ERR" | tail -1)" "luaload:   6 × HTTP 504"

# bounded: a worker keeps 32 distinct messages, then counts "other errors"
S=$(script forty.lua <<LUA
local http = require("luaload.http")
function default()
  for s = 500, 539 do http.get("$URL/status/" .. s) end
end
LUA
)
run_ll run "$S" -i 1 -w 1 -q
expect_match "40 messages, one worker: top 5 of the 32 kept" "$ERR" "^luaload: failed requests by error \(top 5 of 32\):$"
expect_match "40 messages, one worker: the rest as other errors" "$ERR" "^luaload:   8 × other errors"
finish
