#!/usr/bin/env bash
# Lua code that never yields (a loop with no request or sleep) cannot hold
# a run: -d with gracefulStop, setupTimeout/teardownTimeout and one SIGINT
# or SIGTERM still end it on time, with the summary.
source "$(dirname "$0")/lib.sh"
start_serve

# a compiled loop in default: the run ends within gracefulStop + 2 s
S=$(script spin.lua <<LUA
local http = require("luaload.http")
options = { scenarios = { s = { executor = "constant-vus", vus = 4, duration = "1s", gracefulStop = "0s" } } }
function default(data)
  http.get("$URL/")
  if math.random() < 0.5 then while true do end end
end
LUA
)
run_ll run "$S" -q --summary-export "$T/spin.json"
expect_cmp "compiled spin in default: ends within duration + gracefulStop + 2 s" "x < 3" "$ELAPSED"
expect_match "compiled spin: the stuck worker is reported" "$ERR" "did not stop: its Lua code does not yield"
expect_match "compiled spin: abandoned iterations reported" "$ERR" "[0-9]+ iterations? abandoned"
expect_cmp "compiled spin: the summary has the requests made" "x >= 1" "$(jqv "$T/spin.json" .metrics.http_reqs.count)"

# interpreted code (jit off) is stopped cleanly by a hook: no worker lost
S=$(script spin_interp.lua <<LUA
local http = require("luaload.http")
jit.off()
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "1s", gracefulStop = "0s" } } }
function default()
  http.get("$URL/")
  while true do end
end
LUA
)
run_ll run "$S" -q --summary-export "$T/interp.json"
expect_cmp "interpreted spin: ends on time" "x < 3" "$ELAPSED"
expect_eq "interpreted spin: no worker given up on" "$(grep -c 'did not stop' "$ERR")" 0
expect_match "interpreted spin: the iterations are interrupted" "$ERR" "iterations? still running at the end were interrupted"
expect_eq "interpreted spin: exact request count" "$(jqv "$T/interp.json" .metrics.http_reqs.count)" 2

# setupTimeout stops a setup() that spins: exit 100
S=$(script setup_spin.lua <<'LUA'
options = { setupTimeout = "1s" }
function setup() while true do end end
function default() end
LUA
)
run_ll run "$S" -q
expect_eq "spinning setup: exit 100" "$RC" 100
expect_cmp "spinning setup: within the timeout + 2 s" "x < 3" "$ELAPSED"
expect_match "spinning setup: says it timed out" "$ERR" "setup\(\) timed out after 1s"

# teardownTimeout stops a teardown() that spins: exit 101, summary still out
S=$(script teardown_spin.lua <<LUA
local http = require("luaload.http")
options = { iterations = 3, teardownTimeout = "1s" }
function default() http.get("$URL/") end
function teardown() while true do end end
LUA
)
run_ll run "$S" --summary-export "$T/td.json"
expect_eq "spinning teardown: exit 101" "$RC" 101
expect_cmp "spinning teardown: within the timeout + 2 s" "x < 3.5" "$ELAPSED"
expect_match "spinning teardown: summary printed" "$OUT" "http_reqs\.+:"
expect_eq "spinning teardown: summary exported" "$(jqv "$T/td.json" .metrics.http_reqs.count)" 3

# one SIGINT while default() spins: summary and 105 within 2 s, with the
# metrics of the workers' last snapshots (published every second)
S=$(script sig_default.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
options = { vus = 2, duration = "30s" }
function default() http.get("$URL/") ll.sleep(1.2) while true do end end
LUA
)
sigint_after 2 run "$S" --summary-export "$T/sd.json"
expect_eq "SIGINT, spinning default: exit 105" "$RC" 105
expect_cmp "SIGINT, spinning default: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"
expect_match "SIGINT, spinning default: summary printed" "$OUT" "http_reqs\.+:"
expect_eq "SIGINT, spinning default: summary exported" "$(jqv "$T/sd.json" .metrics.http_reqs.count)" 2

# one SIGTERM while setup() spins
S=$(script sig_setup.lua <<'LUA'
function setup() while true do end end
function default() end
LUA
)
OUT=$T/out.txt ERR=$T/err.txt
"$LUALOAD" run "$S" >"$OUT" 2>"$ERR" &
P=$!
sleep 1
SENT=$(date +%s.%N)
kill -TERM $P
wait $P
RC=$?
expect_eq "SIGTERM, spinning setup: exit 105" "$RC" 105
expect_cmp "SIGTERM, spinning setup: within 2 s" "x < 2" "$(awk -v a="$SENT" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
expect_match "SIGTERM, spinning setup: summary printed" "$OUT" "vus_max\.*: 1 "

# one SIGINT while the init code spins
S=$(script sig_init.lua <<'LUA'
while true do end
function default() end
LUA
)
sigint_after 1 run "$S"
expect_eq "SIGINT, spinning init code: exit 105" "$RC" 105
expect_cmp "SIGINT, spinning init code: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"

# one SIGINT while teardown() spins
S=$(script sig_teardown.lua <<LUA
local http = require("luaload.http")
options = { iterations = 2 }
function default() http.get("$URL/") end
function teardown() while true do end end
LUA
)
sigint_after 1 run "$S" --summary-export "$T/st.json"
expect_eq "SIGINT, spinning teardown: exit 105" "$RC" 105
expect_cmp "SIGINT, spinning teardown: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"
expect_eq "SIGINT, spinning teardown: summary exported" "$(jqv "$T/st.json" .metrics.http_reqs.count)" 2

# one SIGINT while handle_summary() spins: the default summary instead
S=$(script sig_summary.lua <<LUA
local http = require("luaload.http")
options = { iterations = 2 }
function default() http.get("$URL/") end
function handle_summary(data) while true do end end
LUA
)
sigint_after 1 run "$S"
expect_eq "SIGINT, spinning handle_summary: exit 105" "$RC" 105
expect_cmp "SIGINT, spinning handle_summary: within 2 s" "x < 2" "$SIGNAL_TO_EXIT"
expect_match "SIGINT, spinning handle_summary: the default summary" "$OUT" "http_reqs\.+:"
finish
