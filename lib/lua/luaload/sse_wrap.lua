-- luaload.sse_wrap: sse.open(url, params, fn) over lua_sse.c's pieces.
-- new_client(url, params) makes the client fn(client) sets its handlers
-- on; open_once(client, url, params) sends the request and yields the VU
-- until the stream ends (resumed with the Response, or nil and the error
-- a handler raised: raised here, at the script's line, as a C function
-- that yielded cannot raise once resumed); after(client, res) returns the
-- seconds to wait before a reconnection (params.reconnect, the server's
-- retry:), or nil. The wait is luaload.sleep's: the VU waits, the worker
-- does not.
local pcall, error, type = pcall, error, type

return function(new_client, open_once, after)
  local sleep = require("luaload").sleep
  local sse = {}
  function sse.open(url, params, fn)
    if type(params) == "function" and fn == nil then params, fn = nil, params end
    local ok, client = pcall(new_client, url, params)
    if not ok then error(client, 2) end
    if fn ~= nil then
      if type(fn) ~= "function" then error("sse.open: the third argument must be a function, got " .. type(fn), 2) end
      fn(client)
    end
    while true do
      local ok, res, err = pcall(open_once, client, url, params)
      if not ok then error(res, 2) end
      if err then error(err, 0) end -- a handler's, with its own line
      local wait = after(client, res)
      if not wait then return res end
      sleep(wait)
    end
  end
  return sse
end
