-- @NAME@ -- a luaload test script (made by `luaload new`).
-- Try it against the built-in target server:
--   luaload serve --port 8080 &
--   luaload run @NAME@
-- Point it elsewhere with -e BASE_URL=https://staging.example.com
-- The API: docs/api.md; completion in your editor: the .luarc.json beside
-- this file (docs/editor.md).
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

-- k6's options: VUs, duration (or iterations, stages, scenarios), thresholds.
options = {
  vus = 5,
  duration = "10s",
  thresholds = {
    http_req_failed = { "rate<0.01" },     -- under 1% failed requests
    http_req_duration = { "p(95)<500" },   -- 95% of requests under 500 ms
  },
}

-- Each VU runs default() again and again until the test ends.
function default()
  local res = http.get(base .. "/")
  ll.check(res, {
    ["status is 200"] = function(r) return r.status == 200 end,
  })
  ll.sleep(0.1) -- think time between iterations, in seconds
end
