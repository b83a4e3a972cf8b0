-- lib/shop.lua -- a reusable library of the shop's requests and checks,
-- `require`d by browse.lua and checkout.lua (require("lib.shop") finds it
-- next to the script). It keeps no state of its own: whatever a VU needs
-- across iterations stays in the calling script.
local http = require("luaload.http")
local ll = require("luaload")
local json = require("luaload.json")
local data = require("luaload.data")
local utils = require("luaload.utils")

local M = {}

M.base = ll.env.BASE_URL or "http://127.0.0.1:8080"

-- the catalog: read once per worker (init code), shared by its VUs
M.products = data.csv("data/products.csv", { header = true })

local JSON = { ["Content-Type"] = "application/json" }

local function auth(token)
  return { headers = { Authorization = "Bearer " .. token, ["Content-Type"] = "application/json" } }
end

-- ok(res, what): the checks every page of the shop must pass
function M.ok(res, what)
  return ll.check(res, {
    { what .. ": status 2xx", function(r) return r.status >= 200 and r.status < 300 end },
    { what .. ": under 500 ms", function(r) return r.timings.duration < 500 end },
  }, { page = what })
end

function M.random_product() return utils.random_item(M.products) end

-- a product page; its size grows with the product's price
function M.view(product)
  local size = 256 + math.floor(tonumber(product.price) * 10)
  local res = http.get(M.base .. "/bytes/" .. size, { tags = { name = "product" } })
  M.ok(res, "product")
  return res
end

-- login(username) -> the API token
function M.login(username)
  local res = http.post(M.base .. "/api/login", json.encode({ username = username, password = "secret" }),
    { headers = JSON })
  if res.status ~= 200 then ll.fail("login failed for " .. username .. ": " .. res.status) end
  return res:json("token")
end

function M.add_to_cart(token, product)
  local res = http.post(M.base .. "/api/items", json.encode({ name = product.sku, price = tonumber(product.price) }),
    auth(token))
  M.ok(res, "add to cart")
  return res
end

function M.cart(token)
  local res = http.get(M.base .. "/api/items", auth(token))
  M.ok(res, "cart")
  return res:json("items") or {}
end

-- checkout(token) -> what the cart cost; it is empty after
function M.checkout(token)
  local total = 0
  for _, item in ipairs(M.cart(token)) do
    total = total + item.price
    M.ok(http.del(M.base .. "/api/items/" .. item.id, nil, auth(token)), "checkout")
  end
  return total
end

return M
