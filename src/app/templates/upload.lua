-- @NAME@ -- uploads: a multipart form and a file streamed from disk (made by
-- `luaload new`).
--   luaload serve --port 8080 &
--   luaload run @NAME@
-- `luaload serve` answers /multipart with the parts it got and /sha256 with
-- the digest of the body, so the checks prove every byte arrived.
-- UPLOAD_FILE names the file to stream (default: this script itself).
local http = require("luaload.http")
local ll = require("luaload")
local crypto = require("luaload.crypto")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"

options = {
  vus = 2,
  iterations = 40,
  thresholds = { checks = { "rate==1" }, http_req_failed = { "rate==0" } },
}

-- init code: the file is read once per worker here, for the form and its digest
local path = ll.env.UPLOAD_FILE or debug.getinfo(1, "S").source:sub(2) -- "@path" of this script
local f = assert(io.open(path, "rb"))
local contents = f:read("*a")
f:close()
local digest = crypto.sha256(contents, "hex")
-- a FileStream is read from disk as it is sent: no copy in memory per VU
local stream = http.FileStream(path, { content_type = "application/octet-stream" })

function default()
  local form = http.post(base .. "/multipart", {
    title = "upload " .. __ITER,
    file = http.file(contents, "data.bin", "application/octet-stream"),
  })
  ll.check(form, {
    ["multipart: 200"] = function(r) return r.status == 200 end,
    ["multipart: the file intact"] = function(r)
      for _, p in ipairs(r:json("parts")) do
        if p.name == "file" then return p.sha256 == digest end
      end
      return false
    end,
  })
  local streamed = http.post(base .. "/sha256", stream)
  ll.check(streamed, {
    ["streamed: the same digest"] = function(r) return r.body:match("%x+") == digest end,
  })
end
