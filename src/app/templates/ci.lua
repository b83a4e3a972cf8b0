-- @NAME@ -- a CI gate: fail the build when latency or errors go over budget
-- (made by `luaload new`).
--   luaload serve --port 8080 &
--   luaload run @NAME@ --summary-export summary.json; echo "exit $?"
-- luaload exits 99 when a threshold fails (as k6): CI marks the job failed.
-- Budgets come from the environment, so the pipeline can tighten them:
--   luaload run @NAME@ -e BASE_URL=$TARGET -e P95_MS=300 -e MAX_FAILED=0.001
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"
local p95 = tonumber(ll.env.P95_MS or "500")
local max_failed = tonumber(ll.env.MAX_FAILED or "0.01")

options = {
  scenarios = {
    -- an open model: requests arrive at a fixed rate, however slow the server
    steady = {
      executor = "constant-arrival-rate",
      rate = 50, timeUnit = "1s", duration = "10s",
      preAllocatedVUs = 10, maxVUs = 50,
    },
  },
  thresholds = {
    http_req_failed = { "rate<" .. max_failed },
    http_req_duration = { "p(95)<" .. p95, "p(99)<" .. (p95 * 2) },
    -- stop early, and fail, when half the checks fail after 5 s
    checks = { { threshold = "rate>0.5", abortOnFail = true, delayAbortEval = "5s" } },
  },
}

function default()
  local res = http.get(base .. "/", { tags = { name = "home" } })
  ll.check(res, { ["status is 200"] = function(r) return r.status == 200 end })
end

-- What CI keeps: the summary on stdout and a JSON file for the job's artifacts.
function handle_summary(data)
  local summary = require("luaload.summary")
  return {
    stdout = summary.text(data),
    [ll.env.SUMMARY_FILE or "summary.json"] = require("luaload.json").encode(data),
  }
end
