---@meta luaload.utils
-- luaload.utils.lua -- lua-language-server annotations of
-- require("luaload.utils") (lib/lua/luaload/utils.lua): k6-utils' helpers
-- under their k6 names and snake_case ones. Editor support only, never
-- loaded at run time (docs/editor.md).

---k6's jslib k6-utils; the random ones draw from `math.random`, so `--seed` repeats them.
---@class luaload.utils
local utils = {}

---An integer from `min` to `max`, both included.
---@param min integer
---@param max integer
---@return integer
function utils.random_int_between(min, max) end

---k6's name of `random_int_between`.
utils.randomIntBetween = utils.random_int_between

---One element of a non-empty list.
---@generic T
---@param list T[]
---@return T
function utils.random_item(list) end

---k6's name of `random_item`.
utils.randomItem = utils.random_item

---`length` characters drawn from `charset` (default: the lowercase ASCII letters).
---@param length integer
---@param charset? string
---@return string
function utils.random_string(length, charset) end

---k6's name of `random_string`.
utils.randomString = utils.random_string

---A random (version 4) UUID.
---@return string
function utils.uuidv4() end

---The text between the first `left` and the `right` after it; with `all`, a list of every such text; nil when there is none.
---@param content string
---@param left string
---@param right string
---@param all? boolean
---@return string|string[]|nil
function utils.find_between(content, left, right, all) end

---k6's name of `find_between`.
utils.findBetween = utils.find_between

return utils
