---@meta luaload.data
-- luaload.data.lua -- lua-language-server annotations of
-- require("luaload.data") (src/lua_api/data.c, data_stream.c): csv and json
-- data files, loaded in init code, read-only; stream, a row at a time. Editor support only, never loaded at run
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

---`data.stream` options.
---@class luaload.data.StreamOptions
---@field format? "csv"|"jsonl" Default: from the name (.csv, .jsonl, .ndjson, maybe with .gz or .zst).
---@field header? boolean CSV: key each row by the first record's names. Default false.
---@field separator? string CSV: the field separator. Default `","`.
---@field mode? "unique"|"circular"|"random" Default "unique": each row once over the whole test (split tests too).
---@field on_end? "stop"|"raise"|"nil" When unique rows run out: end the scenarios (default), raise, or return nil.
---@field window? integer random: rows in the shuffling window. Default 4096.

---A reader of a CSV or JSON lines file, one cursor shared by every worker.
---@class luaload.data.Stream
local Stream = {}

---The next row: a table keyed by the header, a list of strings, or the line's JSON value;
---nil when unique rows ran out with on_end = "nil". Not in init code.
---@return any
function Stream:next() end

---Lets go of the file (the last reader of it closes it).
function Stream:close() end

---A reader of a file too large to load (plain, gzip or zstd). Only in init code.
---@param path string
---@param opts? luaload.data.StreamOptions
---@return luaload.data.Stream
function data.stream(path, opts) end

return data
