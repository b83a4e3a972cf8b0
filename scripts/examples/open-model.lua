-- open-model.lua -- an open-model load test for CI: arrivals at a set
-- rate whatever the server does (ramping-arrival-rate), and thresholds
-- that fail the job (exit code 99) when latency or errors go over budget,
-- one of them aborting the test early. iteration_duration_corrected
-- measures from when each iteration was due (wrk2's correction), so a
-- stalled server cannot hide behind fewer requests.
--   scripts/examples/run-example.sh scripts/examples/open-model.lua; echo "exit $?"
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  scenarios = {
    arrivals = {
      executor = "ramping-arrival-rate",
      startRate = 20,
      timeUnit = "1s",
      preAllocatedVUs = 10,
      maxVUs = 50,
      stages = {
        { target = 100, duration = "2s" }, -- ramp up to 100 iterations/s
        { target = 100, duration = "3s" }, -- hold
        { target = 0, duration = "1s" },   -- ramp down
      },
    },
  },
  thresholds = {
    http_req_failed = { { threshold = "rate<0.01", abortOnFail = true, delayAbortEval = "2s" } },
    http_req_duration = { "p(95)<250", "p(99.9)<500" },
    iteration_duration_corrected = { "p(99)<1000" },
    dropped_iterations = { "count<50" },
    ["checks{page:home}"] = { "rate>0.99" },
  },
}

local home = http.Request(base .. "/", { tags = { name = "home" } })
local slow = http.Request(base .. "/delay/5", { tags = { name = "slow" } })

function default()
  ll.check(http.get(home), { { "home: 200", function(r) return r.status == 200 end } }, { page = "home" })
  ll.check(http.get(slow), { { "slow: 200", function(r) return r.status == 200 end } })
end
