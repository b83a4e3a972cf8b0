-- checkout.lua -- shoppers: each VU logs in once (its first iteration),
-- then every iteration puts three products in its cart, checks the cart
-- and checks out. Shares lib/shop.lua with browse.lua.
--   scripts/examples/run-example.sh scripts/examples/checkout.lua
local ll = require("luaload")
local exec = require("luaload.execution")
local shop = require("lib.shop")

options = {
  scenarios = {
    shoppers = { executor = "per-vu-iterations", vus = 4, iterations = 10, maxDuration = "30s" },
  },
  thresholds = { checks = { "rate==1" }, ["http_req_duration{page:checkout}"] = { "p(99)<300" } },
}

-- per-VU state: init code runs once per worker, so key it by the VU
local tokens = {}

function default()
  local vu = exec.vu.id_in_test
  tokens[vu] = tokens[vu] or shop.login("shopper" .. vu)
  local token = tokens[vu]
  local expected = 0
  for _ = 1, 3 do
    local p = shop.random_product()
    shop.add_to_cart(token, p)
    expected = expected + tonumber(p.price)
  end
  ll.check(shop.cart(token), { { "cart: three items", function(items) return #items == 3 end } })
  local paid = shop.checkout(token)
  ll.check(paid, { { "checkout: the cart's total", function(t) return math.abs(t - expected) < 1e-6 end } })
  ll.check(shop.cart(token), { { "checkout: cart empty", function(items) return #items == 0 end } })
end
