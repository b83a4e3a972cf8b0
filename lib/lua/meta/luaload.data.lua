---@meta luaload.data
-- luaload.data.lua -- lua-language-server annotations of
-- require("luaload.data") (src/lua_api/data.c): csv and json data files,
-- loaded in init code, read-only. Editor support only, never loaded at run
-- time (docs/editor.md).

---Data files for init code, k6's SharedArray without a copy per VU. A relative path is relative to the script's folder; the tables are read-only.
---@class luaload.data
local data = {}

---`data.csv` options.
---@class luaload.data.CSVOptions
---@field header? boolean Key each row by the first line's names. Default false: each row a list of strings.
---@field separator? string The field separator. Default `","`.

---The rows of a CSV file (RFC 4180). Only in init code.
---@param path string
---@param opts? luaload.data.CSVOptions
---@return string[][]|table<string, string>[] rows
function data.csv(path, opts) end

---The decoded value of a JSON file (`json.null` for null). Only in init code.
---@param path string
---@return any
function data.json(path) end

return data
