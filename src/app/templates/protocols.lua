-- @NAME@ -- one target over HTTP/1.1, HTTP/2 or HTTP/3 (made by `luaload new`).
--   luaload serve --port 8080 &
--   luaload run @NAME@
-- HTTP_VERSION picks the version: "1.1" (default; all `luaload serve` speaks),
-- "2" (ALPN on https://, h2c on http://) or "3" (QUIC, https:// only):
--   luaload run @NAME@ -e BASE_URL=https://127.0.0.1:8443 -e HTTP_VERSION=2
-- See docs/protocols.md for TLS, mTLS and multiplexing.
local http = require("luaload.http")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"
local version = ll.env.HTTP_VERSION or "1.1"

options = {
  vus = 4,
  iterations = 200,
  thresholds = { checks = { "rate==1" } },
}

-- Clients are made in init code: connection settings, kept by each VU.
local client = http.Client{
  http_version = version,
  timeout = "10s",
  -- multiplex = true,                        -- VUs share HTTP/2 and HTTP/3 connections
  tls = { insecure_skip_verify = ll.env.INSECURE == "1" }, -- self-signed test servers
}
-- A prepared request is built once and sent many times.
local home = http.Request(base .. "/")

function default()
  local res = client:get(home)
  ll.check(res, {
    ["status is 200"] = function(r) return r.status == 200 end,
    ["spoke the version asked for"] = function(r)
      return r.proto == (version == "1.1" and "HTTP/1.1" or "HTTP/" .. version)
    end,
  })
  -- several requests at once on this VU's connections
  local responses = client:batch({
    { method = "GET", url = base .. "/bytes/1024" },
    { method = "GET", url = base .. "/status/204" },
  })
  ll.check(responses[1], { ["1 KiB body"] = function(r) return #r.body == 1024 end })
end
