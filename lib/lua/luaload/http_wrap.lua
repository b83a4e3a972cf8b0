-- luaload.http_wrap: wraps the request functions of luaload.http so that
-- (1) a request with throw = true that fails at the transport level
-- (connection refused, timeout, TLS...) raises, as k6's params.throw, and
-- (2) every error they raise names the script's file and line, not this
-- file: the C function runs under pcall (LuaJIT yields across it), so its
-- message carries no position, and error(msg, 2) adds the caller's.
-- The C functions yield the VU and are resumed with (response, error): a C
-- function that yielded cannot raise once resumed, so the check lives here.
local names = { "get", "head", "post", "put", "patch", "delete", "del", "options", "request", "batch" }
local pcall, error = pcall, error

return function(...)
  for _, t in ipairs({ ... }) do
    for _, name in ipairs(names) do
      local f = t[name]
      if f then
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
