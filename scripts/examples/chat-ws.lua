-- chat-ws.lua -- a chat over WebSocket (luaload.ws, k6/ws's API): each VU
-- joins a room, says something every 100 ms, checks that every message it
-- gets back is one it sent (in order, as JSON), pings now and then, and
-- leaves after about a second; thresholds on how long the handshake and the
-- sessions take gate the run (exit code 99).
--   scripts/examples/run-example.sh scripts/examples/chat-ws.lua
-- BASE_URL (default http://127.0.0.1:8080) can be set with -e BASE_URL=...;
-- the sockets go to its ws:// twin, /ws/echo (`luaload serve`'s echo room).
local ws = require("luaload.ws")
local json = require("luaload.json")
local ll = require("luaload")

local base = ll.env.BASE_URL or "http://127.0.0.1:8080"
local room = base:gsub("^http", "ws") .. "/ws/echo" -- http:// -> ws://, https:// -> wss://

options = {
  vus = 5,
  duration = "3s",
  thresholds = {
    ws_connecting = { "p(95)<500" },                           -- the handshake, lookup to 101
    ws_session_duration = { "p(95)<3000", "min>=900" },        -- each session lasts its ~1 s
    ws_msgs_received = { "count>0" },
    checks = { "rate==1" },
  },
}

local SAY_EVERY_MS, STAY_MS = 100, 1000

function default()
  local me = "vu" .. ll.vu.id
  local said, heard = 0, 0 -- messages sent, and echoes matched against them
  local res = ws.connect(room, { tags = { room = "lobby" } }, function(socket)
    local function say(kind, text)
      said = said + 1
      socket:send(json.encode({ from = me, kind = kind, seq = said, text = text }))
    end

    socket:on("open", function()
      say("join", me .. " joined")
      socket:set_interval(function() say("say", "hello #" .. said) end, SAY_EVERY_MS)
      socket:set_interval(function() socket:ping() end, 400)
      socket:set_timeout(function()
        say("leave", me .. " left")
        -- leave once the last echoes are in: close after a short grace
        socket:set_timeout(function() socket:close() end, 50)
      end, STAY_MS)
    end)

    socket:on("message", function(text)
      local msg = json.decode(text)
      heard = heard + 1
      ll.check(msg, {
        ["message is mine"] = function(m) return m.from == me end,
        ["message in order"] = function(m) return m.seq == heard end,
      })
    end)

    socket:on("close", function()
      ll.check(heard, { ["every message echoed"] = function(n) return n == said end })
    end)
  end)
  ll.check(res, { ["joined (101)"] = function(r) return r.status == 101 end })
end
