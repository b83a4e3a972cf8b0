#!/usr/bin/env bash
# k6's everyday run flags and their script options (issue 37, points 9, 8
# and 6): --tag (options.tags), --insecure-skip-tls-verify
# (options.insecureSkipTLSVerify; -H and --skip-verify with a script name
# it), --http-debug[=full] (options.httpDebug) on both transports, --rps
# (options.rps: its waiting in no request timing nor iteration duration),
# the files a run writes checked before its first request (exit 104), and a
# run whose every iteration failed: a warning, and exit 107 with
# --fail-when-all-iterations-fail (options.failWhenAllIterationsFail).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_serve
start_nginx || exit 1
HS=https://127.0.0.1:$NGINX_HTTPS_PORT

# ---- --tag NAME=VALUE: on every sample, over options.tags ----
S=$(script tags.lua <<LUA
local http = require("luaload.http")
options = { tags = { env = "opt", team = "a" }, thresholds = { ["http_reqs{env:ci}"] = { "count>=2" } } }
function default() http.get("$URL/") end
LUA
)
run_ll run -q -i 2 --tag env=ci --tag owner=b -o json="$T/tags.json" "$S"
expect_eq "--tag: exit 0 (the threshold on env:ci has its samples)" "$RC" 0
expect_eq "--tag: the flag wins over options.tags, the option's other tags stay, the flag's own are added" \
  "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags | "\(.env) \(.team) \(.owner)"' "$T/tags.json" | sort -u)" \
  "ci a b"
run_ll run -q -i 2 "$S"
expect_eq "options.tags alone: env is opt, the threshold on env:ci fails (exit 99)" "$RC" 99
run_ll run -q -i 1 --tag novalue "$S"
expect_eq "--tag without =: exit 104" "$RC" 104
expect_match "--tag without =: says NAME=VALUE" "$ERR" "--tag.*NAME=VALUE"

# ---- --insecure-skip-tls-verify: every Client, both transports ----
S=$(script tls.lua <<LUA
local http = require("luaload.http")
local c = http.Client{}
function default()
  print("default", http.get("$HS/").status)
  print("client", c:get("$HS/").status)
end
LUA
)
run_ll run -q --no-summary -i 1 "$S"
expect_eq "no flag: nginx's test certificate is refused" "$(grep -c $'\t0$' "$OUT")" 2
for tr in native curl; do
  run_ll run -q --no-summary -i 1 --transport $tr --insecure-skip-tls-verify "$S"
  expect_eq "--insecure-skip-tls-verify ($tr): both Clients get 200" "$(grep -c $'\t200$' "$OUT")" 2
done
run_ll run -q -r 2 --insecure-skip-tls-verify --summary-export "$T/s.json" "$HS/"
expect_eq "--insecure-skip-tls-verify in quick mode: no request failed" "$(rate http_req_failed) $(cnt http_reqs)" "0 2"
run_ll run -q -i 1 --skip-verify "$S"
expect_eq "--skip-verify with a script: exit 104" "$RC" 104
expect_match "--skip-verify with a script: names --insecure-skip-tls-verify" "$ERR" \
  "skip-verify is a quick-mode flag: with a script, --insecure-skip-tls-verify"
run_ll run -q -i 1 -H 'X-A: 1' "$S"
expect_eq "-H with a script: exit 104" "$RC" 104
expect_match "-H with a script: says where headers go" "$ERR" "quick-mode flag: with a script, the request's params"

# ---- --http-debug[=full], options.httpDebug, native and curl ----
S=$(script debug.lua <<LUA
local http = require("luaload.http")
function default() http.post("$URL/echo?x=1", "the-request-body", { headers = { ["X-Debug"] = "yes" } }) end
LUA
)
for tr in native curl; do
  run_ll run -q --no-summary -i 1 --transport $tr --http-debug "$S"
  expect_eq "--http-debug ($tr): exit 0" "$RC" 0
  expect_match "--http-debug ($tr): the request line after Request:" "$ERR" "^POST /echo\?x=1 HTTP/1\.1"
  expect_eq "--http-debug ($tr): Request: and Response: once each" "$(grep -c -E '^(Request|Response):$' "$ERR")" 2
  expect_match "--http-debug ($tr): its headers" "$ERR" "^X-Debug: yes"
  expect_match "--http-debug ($tr): the response's status line" "$ERR" "^HTTP/1\.1 200"
  expect_eq "--http-debug ($tr): no body" "$(grep -c 'the-request-body' "$ERR")" 0
  run_ll run -q --no-summary -i 1 --transport $tr --http-debug=full "$S"
  expect_eq "--http-debug=full ($tr): the request's body and the echoed one" "$(grep -c 'the-request-body' "$ERR")" 2
done
S2=$(script debug_opt.lua <<LUA
local http = require("luaload.http")
options = { httpDebug = "full" }
function default() http.post("$URL/echo", "opt-body") end
LUA
)
run_ll run -q --no-summary -i 1 "$S2"
expect_eq "options.httpDebug = \"full\": both bodies" "$(grep -c 'opt-body' "$ERR")" 2
run_ll run -q --no-summary -i 1 "$S"
expect_eq "no --http-debug: nothing dumped" "$(grep -c -E '^(Request|Response):' "$ERR")" 0
run_ll run -q -i 1 --http-debug=all "$S"
expect_eq "--http-debug=all: exit 104" "$RC" 104

# ---- --rps: a request slot every 1/N s over all VUs and workers ----
S=$(script rps.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/") end
LUA
)
run_ll run -q -u 4 -w 2 -i 30 --rps 20 --summary-export "$T/s.json" "$S"
expect_eq "--rps 20: exit 0" "$RC" 0
expect_eq "--rps 20: 30 requests" "$(cnt http_reqs)" 30
expect_cmp "--rps 20: 30 requests take about 1.45 s (29 intervals)" "x >= 1.35 && x < 8" "$ELAPSED"
expect_cmp "--rps: the wait is in no iteration_duration (p(95) under 50 ms)" "x < 50" \
  "$(jqv "$T/s.json" '.metrics.iteration_duration["p(95)"]')"
expect_cmp "--rps: nor in http_req_duration (p(95) under 50 ms)" "x < 50" \
  "$(jqv "$T/s.json" '.metrics.http_req_duration["p(95)"]')"
expect_cmp "--rps: nor in http_req_blocked (p(95) under 50 ms)" "x < 50" \
  "$(jqv "$T/s.json" '.metrics.http_req_blocked["p(95)"]')"
S=$(script rps_opt.lua <<LUA
local http = require("luaload.http")
options = { rps = 10 }
function default() http.batch({ "$URL/", "$URL/" }) end
LUA
)
run_ll run -q -i 5 --summary-export "$T/s.json" "$S"
expect_eq "options.rps with http.batch: 10 requests" "$(cnt http_reqs)" 10
expect_cmp "options.rps = 10: 10 requests take about 0.8 s" "x >= 0.7 && x < 8" "$ELAPSED"
run_ll run -q -i 5 --rps 100 --summary-export "$T/s.json" "$S"
expect_cmp "--rps 100 wins over options.rps = 10" "x < 0.7" "$ELAPSED"
run_ll run -q -i 1 --rps 0 "$S"
expect_eq "--rps 0: exit 104" "$RC" 104
run_ll run -q -r 3 --rps 10 "$URL/"
expect_eq "--rps in quick mode: exit 104" "$RC" 104
expect_match "--rps in quick mode: names --rate" "$ERR" "quick mode's is --rate"

# ---- every file the run writes, checked before the first request ----
S=$(script files.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/") end
LUA
)
for flag in "--summary-export=$T/none/s.json" "--out=json=$T/none/o.json" "--out=csv=$T/none/o.csv" \
            "--setup-data-out=$T/none/setup.json"; do
  name=${flag%%=*} label=${flag%%=$T*}
  run_ll run -q -d 20s "$flag" "$S"
  expect_eq "$label to a missing directory: exit 104" "$RC" 104
  expect_cmp "$label to a missing directory: at once, not after the test" "x < 10" "$ELAPSED"
  expect_match "$label to a missing directory: names the flag and the path" "$ERR" \
    "^luaload: $name[^:]*: cannot write $T/none/"
  expect_eq "$label to a missing directory: no summary" "$(grep -c http_reqs "$OUT")" 0
done

# ---- a run whose every iteration failed ----
S=$(script allfail.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/"); error("broken script") end
LUA
)
run_ll run -i 4 --summary-export "$T/s.json" "$S"
expect_eq "every iteration failed: still exit 0 by default (k6's)" "$RC" 0
expect_match "every iteration failed: a warning on stderr" "$ERR" \
  "warning: every iteration \(4\) failed with a script error"
expect_match "every iteration failed: the warning in the summary" "$OUT" "every iteration \(4\) failed"
run_ll run -q -i 4 --fail-when-all-iterations-fail "$S"
expect_eq "--fail-when-all-iterations-fail: exit 107" "$RC" 107
S=$(script allfail_opt.lua <<LUA
options = { failWhenAllIterationsFail = true }
function default() error("broken script") end
LUA
)
run_ll run -q -i 3 "$S"
expect_eq "options.failWhenAllIterationsFail: exit 107" "$RC" 107
S=$(script somefail.lua <<LUA
options = { failWhenAllIterationsFail = true }
local n = 0
function default() n = n + 1; if n % 2 == 0 then error("every other one") end end
LUA
)
run_ll run -q -w 1 -i 4 "$S"
expect_eq "half the iterations failed: exit 0" "$RC" 0
expect_eq "half the iterations failed: no warning" "$(grep -c 'every iteration' "$ERR")" 0

finish
