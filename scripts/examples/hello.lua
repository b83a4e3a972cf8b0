-- hello.lua -- a first luaload script: GET a page, check the status and body.
--   luaload serve --port 8080 &
--   luaload run scripts/examples/hello.lua -u 50 -d 10s
-- BASE_URL (default http://127.0.0.1:8080) can be set with -e BASE_URL=...
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  vus = 10,
  duration = "5s",
}

-- Init code runs once per worker: the client and the prepared request are
-- shared by that worker's VUs; each VU keeps its own keep-alive connection.
local client = http.Client{ timeout = "10s" }
local home = http.Request(base .. "/")

function setup()
  local res = http.get(base .. "/")
  if res.status ~= 200 then error("target not ready: " .. res.status .. " " .. res.error) end
  return { started = os.time() }
end

function default(data)
  local res = client:get(home)
  http.checkstatus(200, res)
  ll.check(res, {
    ["body says hello"] = function(r) return r.body:find("hello", 1, true) ~= nil end,
    ["fast enough"] = function(r) return r.timings.duration < 200 end,
  })
  ll.group("api", function()
    local created = client:post(base .. "/echo", '{"name":"luaload"}',
      { headers = { ["Content-Type"] = "application/json" } })
    ll.check(created, { ["echoed json"] = function(r) return r:json().name == "luaload" end })
  end)
end

function teardown(data)
  print(string.format("test ran for about %d s", os.time() - data.started))
end
