-- luaload.http_wrap: makes the request functions of luaload.http raise an
-- error when a request with throw = true fails at the transport level
-- (connection refused, timeout, TLS...), as k6's params.throw.
-- The C functions yield the VU and are resumed with (response, error): a C
-- function that yielded cannot raise once resumed, so the check lives here.
local names = { "get", "head", "post", "put", "patch", "delete", "del", "options", "request" }

return function(...)
  for _, t in ipairs({ ... }) do
    for _, name in ipairs(names) do
      local f = t[name]
      if f then
        t[name] = function(...)
          local res, err = f(...)
          if err then error(err, 2) end
          return res
        end
      end
    end
  end
end
