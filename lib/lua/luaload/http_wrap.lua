-- luaload.http_wrap: wraps the request functions of luaload.http so that
-- (1) a request with throw = true that fails at the transport level
-- (connection refused, timeout, TLS...) raises, as k6's params.throw, and
-- (2) every error they raise names the script's file and line, not this
-- file: the C function runs under pcall (LuaJIT yields across it), so its
-- message carries no position, and error(msg, 2) adds the caller's.
-- The C functions yield the VU and are resumed with (response, error): a C
-- function that yielded cannot raise once resumed, so the check lives here.
-- (3) With --rps, gate(n) (http.c) first waits for the slot of the n
-- requests about to go (an http.batch's: the entries of its table); gate
-- is nil without a limit, and the wrapper as before.
-- (4) The async functions return a promise, whose await (the promise's
-- method table is one of the tables) raises as the call would; await waits
-- for no --rps slot: its request took one when it started.
local names = { "get", "head", "post", "put", "patch", "delete", "del", "options", "request", "batch",
  "async_get", "async_head", "async_post", "async_put", "async_patch", "async_delete", "async_options",
  "async_request", "asyncRequest", "await" }
local ungated = { await = true }
local pcall, error, select, type, pairs = pcall, error, select, type, pairs

-- the requests of a batch: the entries of its first table argument
local function count(...)
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if type(a) == "table" then
      local n = 0
      for _ in pairs(a) do n = n + 1 end
      return n
    end
  end
  return 1
end

return function(gate, ...)
  for _, t in ipairs({ ... }) do
    for _, name in ipairs(names) do
      local f = t[name]
      if f and gate and not ungated[name] then
        local batch = name == "batch"
        t[name] = function(...)
          local ok, e = pcall(gate, batch and count(...) or 1)
          if not ok then error(e, 2) end
          local ok, res, err = pcall(f, ...)
          if not ok then error(res, 2) end
          if err then error(err, 2) end
          return res
        end
      elseif f then
        t[name] = function(...)
          local ok, res, err = pcall(f, ...)
          if not ok then error(res, 2) end
          if err then error(err, 2) end
          return res
        end
      end
    end
  end
end
