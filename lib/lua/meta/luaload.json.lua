---@meta luaload.json
-- luaload.json.lua -- lua-language-server annotations of
-- require("luaload.json") (src/lua_api/json.c): encode, decode and the null
-- sentinel. Editor support only, never loaded at run time (docs/editor.md).

---JSON: `local json = require("luaload.json")`.
---@class luaload.json
---@field null lightuserdata The sentinel value for JSON `null` (what `decode` gives for it; `encode` writes it as `null`).
local json = {}

---Compact JSON text. A table whose keys are exactly `1..n` becomes an array, any other an object; nil, `json.null`, NaN and ±inf become `null`. Functions, userdata, cycles (deeper than 128) raise.
---@param value any
---@return string
function json.encode(value) end

---The Lua value of JSON text: `null` becomes `json.null`, numbers Lua numbers. Invalid text raises `json.decode: invalid JSON at byte N`.
---@param text string
---@return any
function json.decode(text) end

return json
