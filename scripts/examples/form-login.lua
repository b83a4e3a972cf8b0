-- form-login.lua -- a browser-style form login, as in k6's examples: GET
-- the login page, read the CSRF token from the HTML with res:html(), POST
-- the form (the VU's cookie jar keeps the csrf and session cookies), and
-- follow the 303 to the welcome page. Against `luaload serve`:
--   scripts/examples/run-example.sh scripts/examples/form-login.lua
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  vus = 5,
  duration = "5s",
  thresholds = { checks = { "rate==1" }, http_req_failed = { "rate==0" } },
}

function default()
  local page = http.get(base .. "/login")
  local form = page:html():find("form#login")
  local token = form:find("input[name=csrf_token]"):attr("value")
  ll.check(page, {
    { "login page: 200", function(r) return r.status == 200 end },
    { "login page: a CSRF token", function() return token ~= nil and #token == 32 end },
  })
  if not token then ll.fail("no CSRF token on the login page") end

  local welcome = http.post(base .. form:attr("action"), {
    username = "user" .. __VU,
    password = "secret",
    csrf_token = token,
  })
  ll.check(welcome, {
    { "logged in: redirected to /welcome", function(r) return r.url == base .. "/welcome" end },
    { "logged in: greeted by name", function(r)
      return r:html("h1#welcome"):text() == "Welcome, user" .. __VU
    end },
  })
  local links = {}
  welcome:html():find("a.nav"):each(function(_, a) links[#links + 1] = a:attr("href") end)
  ll.check(links, { { "welcome page: its links", function(l) return #l >= 2 and l[1] == "/api/items" end } })
  ll.sleep(0.2)
end
