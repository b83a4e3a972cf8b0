-- browse.lua -- visitors browsing the catalog: the home page, a few
-- product pages picked from data/products.csv, think time in between.
-- Shares lib/shop.lua with checkout.lua.
--   scripts/examples/run-example.sh scripts/examples/browse.lua
local ll = require("luaload")
local http = require("luaload.http")
local shop = require("lib.shop")

options = {
  vus = 8,
  duration = "5s",
  thresholds = {
    ["http_req_duration{name:product}"] = { "p(95)<200" },
    ["checks{page:product}"] = { "rate>0.99" },
  },
}

function default()
  shop.ok(http.get(shop.base .. "/", { tags = { name = "home" } }), "home")
  for _ = 1, 3 do
    shop.view(shop.random_product())
    ll.sleep(0.05 + math.random() * 0.1)
  end
end
