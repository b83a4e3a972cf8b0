---@meta luaload
-- luaload.lua -- lua-language-server annotations of require("luaload")
-- (lib/lua/luaload.lua on the C module luaload.core): check, group, sleep,
-- fail, open, abort, the running VU and the environment. Editor support
-- only, never loaded at run time (docs/editor.md).

---luaload's core functions: `local ll = require("luaload")`.
---@class luaload
---@field vu luaload.VU The running VU, read-only.
---@field env table<string, string> The same table as the global `__ENV`: the process environment, with `-e KEY=VALUE` applied on top.
local ll = {}

---The running VU (`ll.vu`), read-only.
---@class luaload.VU
---@field id integer The VU's number: 1 to N, unique across all workers; 0 in init code, `setup()` and `teardown()`.
---@field iteration integer This VU's iteration count, from 0.
---@field worker integer The worker thread's index, from 0; -1 in the lifecycle state that runs `setup()` and `teardown()`.

---Named checks: `{ ["status is 200"] = function(r) return r.status == 200 end, fast = true }`, or a list `{ { name, fn_or_value }, ... }` that keeps the declared order.
---@alias luaload.Checks table<string, any>|{ [1]: string, [2]: any }[]

---Runs each check (a function is called with `value`, a plain value is taken as it is; truthy passes) and records it in the current group and in the `checks` rate. A check function may make requests or sleep. Not in init code.
---@param value any What the check functions get.
---@param checks luaload.Checks
---@param tags? luaload.Tags Tags of the check samples (for thresholds such as `checks{kind:api}`).
---@return boolean all true when every check passed
function ll.check(value, checks, tags) end

---Ends the iteration with `message` as its error, as k6's `fail()`: it is counted and reported with the script's line.
---@param message? any
function ll.fail(message) end

---Runs `fn` inside the named group: its checks are reported under it (groups nest as `::outer::inner`) and its time is recorded in `group_duration`. Returns what `fn` returns; its errors are raised again. Not in init code.
---@param name string Not empty, without `::`.
---@param fn fun(): ...
---@return any ...
function ll.group(name, fn) end

---Pauses this VU for `seconds` (a fraction such as 0.25 works); the other VUs keep running. Not in init code.
---@param seconds number
function ll.sleep(seconds) end

---Reads a whole file, as k6's `open()`: only in init code. A relative path is relative to the script's directory.
---@param path string
---@param mode? "b"|"r" Accepted for k6 compatibility: Lua strings hold bytes either way.
---@return string contents
function ll.open(path, mode) end

---The Responses of promises (`http.async_request`) in order; raises with the first failure of a `throw = true` request.
---@param promises luaload.http.Promise[]
---@return luaload.http.Response[]
function ll.await_all(promises) end

---k6-style name of `await_all`.
---@param promises luaload.http.Promise[]
---@return luaload.http.Response[]
function ll.awaitAll(promises) end

---Stops the whole test at once (from init code, `setup()`, an iteration or `teardown()`); luaload prints the summary and exits with code 108.
---@param reason? string
function ll.abort(reason) end

return ll
