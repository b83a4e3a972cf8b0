-- crud-api.lua -- a JSON API flow, as k6's "API CRUD operations" example:
-- setup() logs in once and hands the token to every VU; each iteration
-- creates an item, reads it, lists, updates and deletes it, with checks,
-- groups and thresholds. Runs against `luaload serve`'s demo application:
--   scripts/examples/run-example.sh scripts/examples/crud-api.lua
local http = require("luaload.http")
local ll = require("luaload")
local json = require("luaload.json")
local utils = require("luaload.utils")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  vus = 5,
  duration = "5s",
  thresholds = {
    http_req_failed = { "rate<0.01" },
    ["http_req_duration{group:::items}"] = { "p(95)<200" },
    checks = { "rate>0.99" },
  },
}

function setup()
  local res = http.post(base .. "/api/login", json.encode({ username = "alice", password = "secret" }),
    { headers = { ["Content-Type"] = "application/json" } })
  if res.status ~= 200 then error("login failed: " .. res.status .. " " .. (res.body or res.error)) end
  return { token = res:json("token") }
end

function default(data)
  local params = { headers = { Authorization = "Bearer " .. data.token, ["Content-Type"] = "application/json" } }
  ll.group("items", function()
    local name = "widget-" .. utils.random_string(6)
    local price = utils.random_int_between(1, 100) / 4
    local created = http.post(base .. "/api/items", json.encode({ name = name, price = price }), params)
    ll.check(created, {
      { "created: 201", function(r) return r.status == 201 end },
      { "created: the name back", function(r) return r:json("name") == name end },
      { "created: owned by alice", function(r) return r:json("owner") == "alice" end },
    })
    if created.status ~= 201 then ll.fail("cannot create an item: " .. created.status) end
    local url = base .. created.headers["Location"]

    local got = http.get(url, params)
    ll.check(got, { { "read: the same price", function(r) return r:json("price") == price end } })

    local list = http.get(base .. "/api/items", params)
    ll.check(list, { { "list: has items", function(r) return r:json("items.#") >= 1 end } })

    local updated = http.put(url, json.encode({ name = name .. "-v2", price = price * 2 }), params)
    ll.check(updated, { { "update: new name", function(r) return r:json("name") == name .. "-v2" end } })

    ll.check(http.del(url, nil, params), { { "delete: 204", function(r) return r.status == 204 end } })
    -- a 404 is what this request expects: not a failed request
    local gone = http.get(url, { headers = params.headers, responseCallback = http.expectedStatuses(404) })
    ll.check(gone, { { "deleted: 404", function(r) return r.status == 404 end } })
  end)
  ll.sleep(0.1)
end
