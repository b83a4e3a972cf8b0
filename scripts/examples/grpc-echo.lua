-- grpc-echo.lua -- gRPC (luaload.grpc, k6/net/grpc's API) against the echo
-- `luaload serve` answers over h2c: unary calls whose every field must come
-- back as sent, a call that fails on purpose (x-echo-status), and a short
-- bidirectional chat per iteration, each message written when the echo of
-- the one before has arrived. The messages are those of data/echo.proto,
-- parsed when the script loads; thresholds on grpc_req_duration and the
-- checks gate the run (exit code 99).
--   scripts/examples/run-example.sh scripts/examples/grpc-echo.lua
-- BASE_URL (default http://127.0.0.1:8080) can be set with -e BASE_URL=...;
-- the calls go to its host:port, HTTP/2 with prior knowledge.
local grpc = require("luaload.grpc")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"
local addr = base:match("^https?://([^/]+)")

options = {
  vus = 5,
  duration = "3s",
  thresholds = {
    grpc_req_duration = { "p(95)<500" },
    ["grpc_req_duration{rpc_type:bidi_streaming}"] = { "p(95)<1000" },
    checks = { "rate==1" },
  },
}

-- init code: the .proto is parsed once per worker, found next to this script
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local client = grpc.Client()
client:load({ here .. "data" }, "echo.proto")

local CHAT_LINES = 5

function default()
  if __ITER == 0 then client:connect(addr, { plaintext = true }) end
  local sent = {
    text = "hello from vu " .. ll.vu.id, seq = __ITER, tags = { "a", "b" }, mood = "CURIOUS",
    author = { name = "luaload", vu = ll.vu.id },
  }
  local res = client:invoke("luaload.example.Echo/Say", sent, { metadata = { ["x-request-id"] = "it-" .. __ITER } })
  ll.check(res, {
    ["say: status OK"] = function(r) return r.status == grpc.StatusOK end,
    ["say: every field back"] = function(r)
      local m = r.message
      return m.text == sent.text and m.seq == tostring(__ITER) and table.concat(m.tags, ",") == "a,b"
        and m.mood == "CURIOUS" and m.author.name == "luaload" and m.author.vu == ll.vu.id
    end,
  })
  -- a status other than OK is a response, not an error
  local failed = client:invoke("luaload.example.Echo/Say", { text = "no" }, { metadata = { ["x-echo-status"] = "5" } })
  ll.check(failed, { ["say: NOT_FOUND on demand"] = function(r)
    return r.status == grpc.StatusNotFound and r.error.message == "echo status 5"
  end })

  -- the chat: write a line, and the next one from the handler of its echo
  local chat = grpc.Stream(client, "luaload.example.Echo/Chat")
  local heard = 0
  chat:on("data", function(m)
    heard = heard + 1
    ll.check(m, { ["chat: echo in order"] = function(x) return x.seq == tostring(heard) end })
    if heard < CHAT_LINES then chat:write({ text = "line", seq = heard + 1 }) else chat:end_stream() end
  end)
  chat:on("end", function()
    ll.check(heard, { ["chat: every line echoed"] = function(n) return n == CHAT_LINES end })
  end)
  chat:write({ text = "line", seq = 1 })
  ll.sleep(0.1) -- think time; the chat goes on meanwhile, the iteration ends with it
end
