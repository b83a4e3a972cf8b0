-- api_names.lua -- run by test_annotations.sh (luaload run ... -i 1 -u 1):
-- prints every public name the running binary has, for the test to diff
-- against the annotations in lib/lua/meta. One name a line:
--   module M        a module the test listed (MODULES), with
--   resolves M X    where require(M) finds it: "preload" or a file
--   class C         a class whose members follow (a module is the class
--                   named after it; "_G" the globals)
--   shape C         an annotated class no object exists for (a table the
--                   script writes: options, params): the test checks only
--                   that its fields are names the sources know
--   name C.m        a member of C
--   syntax F ok|... whether meta file F parses as Lua
--   done            the end (from handle_summary, which runs last)
-- Members are the string keys of the object (a table), of its metatable's
-- __index table, and, when __index is a function, every candidate name
-- (CANDIDATES: the identifiers of the sources and of the annotations) it
-- answers with a value that is not nil. Objects are made in default() (a
-- request to URL, a FileStream on FILE), the metrics in init code, the
-- summary data's shapes come from handle_summary's argument.
local ll = require("luaload")
local http = require("luaload.http")
local metrics = require("luaload.metrics")
local crypto = require("luaload.crypto")
local jwt = require("luaload.jwt")
local html = require("luaload.html")
local exec = require("luaload.execution")
local ws = require("luaload.ws")
local grpc = require("luaload.grpc")
local websockets = require("luaload.websockets")
local sse = require("luaload.sse")
local stream = require("luaload.data").stream(__ENV.FILE, { format = "csv" }) -- a reader (init code only)

local counter = metrics.Counter("api_names_counter")
local gauge = metrics.Gauge("api_names_gauge")
local rate = metrics.Rate("api_names_rate")
local trend = metrics.Trend("api_names_trend")

options = { thresholds = { iterations = { "count>=0" } } }

local function split(s, sep)
  local out = {}
  for piece in (s or ""):gmatch("[^" .. sep .. "]+") do out[#out + 1] = piece end
  return out
end

-- the functions a script defines and luaload calls, or reads: not found in
-- _G unless this script defines them
local HOOKS = { "options", "default", "setup", "teardown", "handle_summary" }

-- Lua 5.1's and LuaJIT's own globals: not luaload's
local STD = {}
for _, k in ipairs(split("assert collectgarbage dofile error getfenv getmetatable ipairs load loadfile " ..
  "loadstring module next pairs pcall print rawequal rawget rawlen rawset require select setfenv " ..
  "setmetatable tonumber tostring type unpack xpcall _G _VERSION coroutine debug io math os package " ..
  "string table bit jit gcinfo newproxy", " ")) do STD[k] = true end

-- annotated classes that describe tables the script makes (nothing to inspect)
local SHAPES = {
  "luaload.Options", "luaload.Scenario", "luaload.Stage", "luaload.ThresholdObject", "luaload.TLSAuth",
  "luaload.http.Params", "luaload.http.ClientOptions", "luaload.http.TLSOptions", "luaload.http.BatchRequest",
  "luaload.http.CookieOptions", "luaload.http.FileStreamOptions", "luaload.http.FormParts",
  "luaload.http.BlobOptions", "luaload.http.RandomPNGOptions", "luaload.http.SubmitFormOptions",
  "luaload.http.ClickLinkOptions", "luaload.data.CSVOptions", "luaload.data.StreamOptions", "luaload.jwt.GeneratorOptions",
  "luaload.jwt.SignOptions", "luaload.summary.TextOptions", "luaload.summary.JUnitOptions",
  "luaload.ws.Params", "luaload.grpc.TLSParams", "luaload.grpc.ConnectParams", "luaload.grpc.Params",
  "luaload.grpc.Error", "luaload.grpc.Response", "luaload.grpc.StreamParams", "luaload.grpc.Stream",
  "luaload.websockets.Params", "luaload.websockets.Event",
  "luaload.sse.Params",
}

local lines = {}
local function out(s) lines[#lines + 1] = s end
local function flush()
  table.sort(lines)
  for _, s in ipairs(lines) do print(s) end
  lines = {}
end

local candidates
local function load_candidates()
  candidates = {}
  local f = assert(io.open(__ENV.CANDIDATES, "r"))
  for k in f:lines() do candidates[#candidates + 1] = k end
  f:close()
end

local function members(obj)
  local found = {}
  if type(obj) == "table" then
    for k in pairs(obj) do
      if type(k) == "string" then found[k] = true end
    end
  end
  local mt = debug.getmetatable(obj) -- also a locked (__metatable) one
  local index = mt and rawget(mt, "__index")
  if type(index) == "table" then
    for k in pairs(index) do
      if type(k) == "string" then found[k] = true end
    end
  elseif type(index) == "function" then
    for _, k in ipairs(candidates) do
      local ok, v = pcall(index, obj, k)
      if ok and v ~= nil then found[k] = true end
    end
  end
  return found
end

local function class(name, obj)
  out("class " .. name)
  if obj == nil then
    out("error " .. name .. ": no object to inspect")
    return
  end
  for k in pairs(members(obj)) do out("name " .. name .. "." .. k) end
end

function default()
  load_candidates()
  for _, s in ipairs(SHAPES) do out("shape " .. s) end

  for _, m in ipairs(split(__ENV.MODULES, ",")) do
    out("module " .. m)
    if package.preload[m] then
      out("resolves " .. m .. " preload")
    else
      out("resolves " .. m .. " " .. tostring(package.searchpath(m, package.path)))
    end
    local ok, mod = pcall(require, m)
    if ok then class(m, mod) else out("error require " .. m .. ": " .. tostring(mod)) end
  end

  -- the globals: luaload's, and the hooks it calls
  out("class _G")
  for k in pairs(members(_G)) do
    if not STD[k] then out("name _G." .. k) end
  end
  for _, k in ipairs(HOOKS) do out("name _G." .. k) end

  local res = http.get(__ENV.URL .. "/login") -- sets the cookie csrf
  if res.status ~= 200 then out("error GET /login: " .. res.status .. " " .. res.error) end
  local wsock
  local wres = ws.connect(__ENV.URL:gsub("^http", "ws") .. "/ws/echo", function(s)
    wsock = s
    s:on("open", function() s:close() end)
  end)
  if wres.status ~= 101 then out("error ws /ws/echo: " .. wres.status .. " " .. wres.error) end
  -- a WebSocket with every handler set (an unset one reads nil); it closes once open
  local wsb = websockets.WebSocket(__ENV.URL:gsub("^http", "ws") .. "/ws/echo")
  local function noop() end
  wsb.onopen = function() wsb:close() end
  wsb.onerror = function(e) out("error websockets /ws/echo: " .. tostring(e.error)) end
  wsb.onmessage, wsb.onclose, wsb.onping, wsb.onpong = noop, noop, noop, noop
  local sclient, sevent, serror
  sse.open(__ENV.URL .. "/sse?n=1", {}, function(c)
    sclient = c
    c:on("event", function(e) sevent = e end)
  end)
  sse.open(__ENV.URL .. "/status/404", {}, function(c) c:on("error", function(e) serror = e end) end)
  local objects = {
    ["luaload.VU"] = ll.vu,
    ["luaload.console"] = console,
    ["luaload.http.Client"] = http.Client{},
    ["luaload.http.Request"] = http.Request(__ENV.URL .. "/"),
    ["luaload.http.Response"] = res,
    ["luaload.http.Promise"] = http.async_request("GET", __ENV.URL .. "/"),
    ["luaload.http.Timings"] = res.timings,
    ["luaload.http.ResponseCookie"] = res.cookies.csrf and res.cookies.csrf[1],
    ["luaload.http.CookieJar"] = http.cookie_jar(),
    ["luaload.http.FileStream"] = http.FileStream(__ENV.FILE),
    ["luaload.http.Form"] = http.Form{},
    ["luaload.http.Blob"] = http.Blob{ size = 1 },
    ["luaload.http.FileData"] = http.file("x"),
    ["luaload.http.ExpectedStatuses"] = http.expected_statuses(200),
    ["luaload.metrics.Metric"] = counter,
    ["luaload.metrics.Counter"] = counter,
    ["luaload.metrics.Gauge"] = gauge,
    ["luaload.metrics.Rate"] = rate,
    ["luaload.metrics.Trend"] = trend,
    ["luaload.crypto.Hasher"] = crypto.create_hash("sha256"),
    ["luaload.jwt.Source"] = jwt.Generator{ secret = "s3cret" },
    ["luaload.html.Selection"] = html.parse("<p>x</p>"),
    ["luaload.execution.VU"] = exec.vu,
    ["luaload.execution.VUMetrics"] = exec.vu.metrics,
    ["luaload.execution.Scenario"] = exec.scenario,
    ["luaload.execution.Instance"] = exec.instance,
    ["luaload.execution.Test"] = exec.test,
    ["luaload.ws.Socket"] = wsock,
    ["luaload.ws.Response"] = wres,
    ["luaload.grpc.Client"] = grpc.Client(),
    ["luaload.websockets.WebSocket"] = wsb,
    ["luaload.sse.Client"] = sclient,
    ["luaload.sse.Event"] = sevent,
    ["luaload.sse.Error"] = serror,
    ["luaload.data.Stream"] = stream,
  }
  for name, obj in pairs(objects) do class(name, obj) end

  for _, f in ipairs(split(__ENV.META_FILES, ",")) do
    local chunk, err = loadfile(f)
    out("syntax " .. f .. " " .. (chunk and "ok" or tostring(err)))
  end

  -- for the summary data: a check at the top and one in a group
  ll.check(res, { top = true })
  ll.group("g", function() ll.check(res, { inner = true }) end)
  flush()
end

function handle_summary(data)
  load_candidates()
  local m = data.metrics.iterations
  class("luaload.summary.Data", data)
  class("luaload.summary.Options", data.options)
  class("luaload.summary.State", data.state)
  class("luaload.summary.Metric", m)
  class("luaload.summary.Threshold", m and m.thresholds and m.thresholds["count>=0"])
  class("luaload.summary.Group", data.root_group)
  class("luaload.summary.Check", data.root_group.checks[1])
  flush()
  print("done")
  return nil
end
