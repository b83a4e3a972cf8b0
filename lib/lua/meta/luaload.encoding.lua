---@meta luaload.encoding
-- luaload.encoding.lua -- lua-language-server annotations of
-- require("luaload.encoding") (src/lua_api/encoding.c): base64 and hex, as
-- k6's k6/encoding. Editor support only, never loaded at run time
-- (docs/editor.md).

---k6's `k6/encoding` (docs/encoding-crypto.md); every value in and out is a Lua string.
---@class luaload.encoding
local encoding = {}

---@alias luaload.encoding.Variant
---| "std" # `+/`, padded (the default)
---| "rawstd" # `+/`, no `=`
---| "url" # `-_`, padded
---| "rawurl" # `-_`, no `=`

---The base64 of `s`.
---@param s string
---@param variant? luaload.encoding.Variant
---@return string
function encoding.b64encode(s, variant) end

---The decoded bytes; raises on input outside the variant's alphabet or padding rules.
---@param s string
---@param variant? luaload.encoding.Variant
---@param format? "s" A string either way (k6 gives an ArrayBuffer without it).
---@return string
function encoding.b64decode(s, variant, format) end

---The lowercase hex of `s`.
---@param s string
---@return string
function encoding.hexencode(s) end

---The bytes of hex digits (either case); raises on an odd length or a non-hex digit.
---@param s string
---@return string
function encoding.hexdecode(s) end

return encoding
