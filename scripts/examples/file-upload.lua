-- file-upload.lua -- uploads, as in k6's "multipart request" example and
-- beyond it: a multipart form with a generated PNG and a file part, and the
-- same file streamed from disk with http.FileStream (k6 would read it into
-- memory for every VU). `luaload serve` answers /multipart with the parts
-- it received and /sha256 with the digest of the body, so the checks prove
-- every byte arrived.
--   scripts/examples/run-example.sh scripts/examples/file-upload.lua
local http = require("luaload.http")
local ll = require("luaload")
local crypto = require("luaload.crypto")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  vus = 4,
  duration = "5s",
  thresholds = { checks = { "rate==1" }, http_req_failed = { "rate==0" } },
}

-- init code: read once per worker, shared by its VUs
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local path = here .. "data/products.csv"
local contents = ll.open("data/products.csv")
local digest = crypto.sha256(contents, "hex")
local stream = http.FileStream(path, { filename = "products.csv", content_type = "text/csv" })

function default()
  local photo = http.RandomPNG{ width = 64, height = 48 }
  local res = http.post(base .. "/multipart", {
    title = "catalog " .. __ITER,
    photo = http.file(photo, "photo.png", "image/png"),
    catalog = http.file(contents, "products.csv", "text/csv"),
  })
  ll.check(res, {
    { "multipart: 200", function(r) return r.status == 200 end },
    { "multipart: three parts", function(r) return r:json("parts.#") == 3 end },
    { "multipart: the catalog intact", function(r)
      for _, p in ipairs(r:json("parts")) do
        if p.name == "catalog" then return p.sha256 == digest and p.filename == "products.csv" end
      end
      return false
    end },
  })

  local streamed = http.post(base .. "/sha256", stream)
  ll.check(streamed, {
    { "stream: every byte arrived", function(r) return r.body == digest .. "\n" end },
    { "stream: the size", function(r) return tonumber(r.headers["X-Body-Size"]) == #contents end },
  })
  ll.sleep(0.1)
end
