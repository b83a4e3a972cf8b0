---@meta luaload.timers
-- luaload.timers.lua -- lua-language-server annotations of
-- require("luaload.timers") (src/lua_api/timers.c): k6/timers, on the VU's
-- event loop. Editor support only, never loaded at run time
-- (docs/editor.md).

---k6's `k6/timers`: callbacks later, on the VU, as coroutines of their own (they may make requests and sleep). An iteration ends once none of its timers is left.
---@class luaload.timers
local timers = {}

---Calls `fn(...)` once after `ms` milliseconds (0 or nil: at the next turn of the loop). Returns its id.
---@param fn fun(...)
---@param ms? number
---@param ... any
---@return integer
function timers.set_timeout(fn, ms, ...) end

---k6's name of `set_timeout`.
---@param fn fun(...)
---@param ms? number
---@param ... any
---@return integer
function timers.setTimeout(fn, ms, ...) end

---Cancels a `set_timeout` (one that fired, was cleared or is another VU's: nothing).
---@param id integer
function timers.clear_timeout(id) end

---k6's name of `clear_timeout`.
---@param id integer
function timers.clearTimeout(id) end

---Calls `fn(...)` every `ms` milliseconds (at least 1) until `clear_interval`. Returns its id.
---@param fn fun(...)
---@param ms? number
---@param ... any
---@return integer
function timers.set_interval(fn, ms, ...) end

---k6's name of `set_interval`.
---@param fn fun(...)
---@param ms? number
---@param ... any
---@return integer
function timers.setInterval(fn, ms, ...) end

---Stops a `set_interval`.
---@param id integer
function timers.clear_interval(id) end

---k6's name of `clear_interval`.
---@param id integer
function timers.clearInterval(id) end

return timers
