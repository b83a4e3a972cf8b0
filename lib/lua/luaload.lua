-- luaload: check, group, sleep, the running VU, environment variables.
-- The control flow lives here, in Lua, so that a check or group function may
-- itself wait (HTTP, sleep): LuaJIT can yield across pcall, not across C.
local core = require("luaload.core")

local M = {}

M.sleep = core.sleep

-- abort(reason): stops the test at once; luaload exits with code 108.
M.abort = core.abort

-- open(path[, mode]): the contents of a file, read in init code (as k6's
-- open: once per worker state, shared by that worker's VUs). A relative
-- path is relative to the script's directory. mode "b" is accepted for
-- k6 compatibility: Lua strings hold bytes either way.
function M.open(path, mode)
  if not core.in_init() then
    error("open: only available in init code (outside setup, default and teardown)", 2)
  end
  if type(path) ~= "string" or path == "" then
    error("open: expected a file path", 2)
  end
  if mode ~= nil and mode ~= "b" and mode ~= "r" then
    error("open: mode must be \"b\" or \"r\", got " .. tostring(mode), 2)
  end
  local full = path:sub(1, 1) == "/" and path or (core.script_dir() .. "/" .. path)
  local f, err = io.open(full, "rb")
  if not f then error("open: " .. err, 2) end
  local data = f:read("*a")
  f:close()
  return data
end

-- check(value, checks[, tags]) -> true when all passed; tags tag the
-- check samples (checks{tag:value} thresholds). checks is a table of
-- name = fn_or_bool, or a list { { name, fn_or_bool }, ... } that keeps the
-- declared order (a Lua table has none: the summary lists checks in the
-- order they were first seen).
function M.check(value, sets, tags)
  if type(sets) ~= "table" then
    error("check: expected a table of named checks as second argument, got " .. type(sets), 2)
  end
  if tags ~= nil and type(tags) ~= "table" then
    error("check: the tags (third argument) must be a table, got " .. type(tags), 2)
  end
  local all = true
  local function one(name, c)
    local ok = c
    if type(c) == "function" then ok = c(value) end
    ok = ok and true or false
    core.check(tostring(name), ok, tags)
    if not ok then all = false end
  end
  if type(sets[1]) == "table" then
    for i, pair in ipairs(sets) do
      if type(pair) ~= "table" or pair[1] == nil then
        error("check: item " .. i .. " must be { name, function or boolean }", 2)
      end
      one(pair[1], pair[2])
    end
  else
    -- { "status is 200", function(r) ... end }: the list form without its
    -- inner braces would record checks named 1 and 2, the first one always
    -- passing (a string is true)
    for key, c in pairs(sets) do
      if type(key) == "number" then
        local what = type(c) == "string" and string.format("%q", c) or type(c)
        error(string.format("check: item %s (%s) has no name: write the list with its inner braces, "
          .. "{ { \"name\", function(r) ... end } }, or name each check, { [\"name\"] = function(r) ... end }",
          tostring(key), what), 2)
      end
    end
    for name, c in pairs(sets) do one(name, c) end
  end
  return all
end

-- fail(message): ends the iteration with message as its error, as k6's fail
function M.fail(message)
  error(message == nil and "fail" or tostring(message), 2)
end

-- group(name, fn) runs fn inside a named group and records group_duration
-- await_all({p1, p2, ...}): the promises' values in order (their requests
-- went together, so this waits as long as the slowest); raises with the
-- first rejection, as Promise.all
function M.await_all(promises)
  if type(promises) ~= "table" then
    error("await_all: a table of promises expected, got " .. type(promises), 2)
  end
  local out = {}
  for i = 1, #promises do
    local p = promises[i]
    if type(p) ~= "userdata" or not p.await then
      error("await_all: entry " .. i .. " is not a promise (" .. type(p) .. ")", 2)
    end
    out[i] = p:await()
  end
  return out
end
M.awaitAll = M.await_all

function M.group(name, fn)
  if type(name) ~= "string" or name == "" or name:find("::", 1, true) then
    error("group: the name must be a non-empty string without '::'", 2)
  end
  if type(fn) ~= "function" then
    error("group: expected a function as second argument, got " .. type(fn), 2)
  end
  local prev, start = core.group_enter(name)
  local r = { pcall(fn) }
  core.group_leave(prev, start)
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, table.maxn(r))
end

-- vu.id (1-based in the test, 0 in setup/teardown), vu.iteration (0-based),
-- vu.worker (the worker thread's index)
M.vu = setmetatable({}, {
  __index = function(_, k)
    if k == "id" then return core.vu_id() end
    if k == "iteration" then return core.vu_iteration() end
    if k == "worker" then return core.worker_id() end
    return nil
  end,
  __newindex = function() error("luaload.vu is read-only", 2) end,
})

-- env: __ENV of the running VU's scenario (the run's, plus its env = {...})
return setmetatable(M, {
  __index = function(_, k)
    if k == "env" then return __ENV end
  end,
})
