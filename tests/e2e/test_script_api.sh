#!/usr/bin/env bash
# require paths, -e/__ENV, setup data to iterations and teardown, vu ids,
# POST bodies, headers, response_type "none", quick mode.
source "$(dirname "$0")/lib.sh"
start_serve
mkdir -p "$T/lib1" "$T/proj/helpers"
cat >"$T/lib1/extlib.lua" <<'LUA'
return { answer = function() return 42 end }
LUA
cat >"$T/proj/helpers/util.lua" <<'LUA'
return { twice = function(x) return 2 * x end }
LUA
cat >"$T/proj/main.lua" <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local json = require("luaload.json")
local util = require("helpers.util")   -- next to the script
local ext = require("extlib")          -- from LUALOAD_PATH
local client = http.Client{ user_agent = "e2e-agent" }
local echo = http.Request("$URL/echo", { method = "POST", body = "from-request",
                                          headers = { ["X-Test"] = "1" } })
function setup()
  local res = http.get("$URL/")
  return { token = ll.env.TOKEN, twice = util.twice(ext.answer()), setup_status = res.status }
end
function default(data)
  local r1 = client:post("$URL/echo", json.encode({ n = ll.vu.id }))
  local r2 = client:request(echo)
  local r3 = client:get("$URL/bytes/5000", { response_type = "none" })
  local r4 = client:head("$URL/")
  ll.check(data, {
    ["setup data token"] = function(d) return d.token == "s3cret" end,
    ["setup data computed"] = function(d) return d.twice == 84 end,
    ["setup made a request"] = function(d) return d.setup_status == 200 end,
  })
  ll.check(r1, { ["post echo json"] = function(r) return r:json().n == ll.vu.id end })
  ll.check(r2, { ["prepared post"] = function(r) return r.body == "from-request" end,
                 ["headers parsed"] = function(r) return r.headers["Content-Length"] == "12" end,
                 ["proto"] = function(r) return r.proto == "HTTP/1.1" end })
  ll.check(r3, { ["none: no body"] = function(r) return r.body == nil and r.status == 200 end })
  ll.check(r4, { ["head"] = function(r) return r.status == 200 and r.body == "" end })
  ll.check(ll.vu, { ["vu id in range"] = function(v) return v.id >= 1 and v.id <= 4 end })
end
function teardown(data)
  local f = assert(io.open(ll.env.OUTFILE, "w"))
  f:write(data.token, " ", data.twice)
  f:close()
end
LUA
LUALOAD_PATH=$T/lib1 run_ll run "$T/proj/main.lua" -u 4 -i 20 -e TOKEN=s3cret -e OUTFILE="$T/teardown.txt" -q --summary-export "$T/s.json"
expect_eq "exit 0" "$RC" 0
[[ -s $ERR ]] && cat "$ERR"
expect_eq "all checks passed" "$(jqv "$T/s.json" .metrics.checks.fails)" 0
expect_eq "checks ran" "$(jqv "$T/s.json" .metrics.checks.passes)" 200
expect_eq "teardown got setup data" "$(cat "$T/teardown.txt" 2>/dev/null)" "s3cret 84"
expect_eq "setup's request is counted" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 81
expect_cmp "response_type none still counts bytes" "x > 100000" "$(jqv "$T/s.json" .metrics.data_received.count)"

# methods and bodies on the wire, headers, data_sent, a Client per iteration
S=$(script wire.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local c = http.Client{ read_timeout = "20s", timeout = "5s" }  -- a new client each time
  local g = c:get("$URL/echo", { body = "get-body" })
  local p = c:request("purge", "$URL/echo", "x")
  local r = c:get("$URL/")
  ll.check(g, { ["GET keeps its body"] = function(x) return x.body == "get-body" end })
  ll.check(p, { ["custom method sent"] = function(x) return x.status == 200 and x.body == "x" end })
  ll.check(r, { ["canonical header names"] = function(x) return x.headers["Content-Type"] == "text/plain" end,
                ["no hidden fields"] = function(x) return #x == 0 and rawget(x, 1) == nil end })
end
LUA
)
run_ll run "$S" -u 2 -i 30 -q --summary-export "$T/w.json"
expect_eq "wire: exit 0" "$RC" 0
expect_eq "wire: checks all passed" "$(jqv "$T/w.json" .metrics.checks.fails)" 0
expect_eq "wire: checks ran" "$(jqv "$T/w.json" .metrics.checks.passes)" 120
S=$(script sent.lua <<LUA
local http = require("luaload.http")
local body = string.rep("b", 1000)
function default() http.post("$URL/echo", body) end
LUA
)
run_ll run "$S" -i 1 -q --summary-export "$T/d.json"
expect_cmp "data_sent counts a 1000-byte body once" "x > 1000 && x < 1300" "$(jqv "$T/d.json" .metrics.data_sent.count)"

# cookies param: one Cookie header (a tiny server that answers with the header it got)
HPORT=$(free_port)
python3 - "$HPORT" "$T/hready" >/dev/null 2>&1 <<'PY' &
import sys, http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ((self.headers.get("Cookie") or "") + "|" + ",".join(self.headers.get_all("User-Agent") or [])).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.timeout = 10
open(sys.argv[2], "w").close()  # listening: the test may start
for _ in range(4): s.handle_request()
PY
PYPID=$!
for _ in $(seq 100); do [[ -e $T/hready ]] && break; sleep 0.1; done
S=$(script cookies.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local agent = http.Client{ user_agent = "e2e-agent/1" }
function default()
  local r = http.get("http://127.0.0.1:$HPORT/", { cookies = { session = "abc" } })
  ll.check(r, { ["cookie and default user agent sent"] = function(x) return x.body == "session=abc|luaload/0.1.0" end })
  r = agent:get("http://127.0.0.1:$HPORT/", { headers = { ["X-A"] = "1" } })
  ll.check(r, { ["client user agent"] = function(x) return x.body == "|e2e-agent/1" end })
  r = agent:get("http://127.0.0.1:$HPORT/", { headers = { ["user-agent"] = "mine" } })
  ll.check(r, { ["request's own user agent wins, once"] = function(x) return x.body == "|mine" end })
end
LUA
)
run_ll run "$S" -i 1 -q --summary-export "$T/c.json"
kill $PYPID 2>/dev/null; wait $PYPID 2>/dev/null
expect_eq "cookies and user agents: sent as expected" "$(jqv "$T/c.json" '.metrics.checks.passes')" 3

# keep-alive: each VU holds its own connection
S=$(script ka.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local client = http.Client{}
local req = http.Request("$URL/")
function default() client:get(req) ll.sleep(0.05) end
LUA
)
timeout 30 "$LUALOAD" run "$S" -u 25 -d 3s -q --summary-export "$T/ka.json" >/dev/null 2>&1 &
LL=$!
sleep 1.5
CONNS=$(ss -Htn state established "( dport = :$PORT )" | wc -l)
wait $LL
expect_eq "25 VUs hold 25 keep-alive connections" "$CONNS" 25

# quick mode: no script
run_ll run "$URL/" -c 3 -i 30 -q --summary-export "$T/q.json"
expect_eq "quick mode: exit 0" "$RC" 0
expect_eq "quick mode: 30 requests" "$(jqv "$T/q.json" .metrics.http_reqs.count)" 30
finish
