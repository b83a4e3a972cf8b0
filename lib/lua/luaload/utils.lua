-- luaload.utils: the helpers of k6's jslib k6-utils that ported scripts
-- reach for (randomIntBetween, randomItem, randomString, uuidv4,
-- findBetween), each under its k6 name and a snake_case one. The random
-- ones draw from math.random, so --seed repeats them.
local crypto = require("luaload.crypto")

local M = {}

local function int_arg(fn, what, v)
  if type(v) ~= "number" or v ~= math.floor(v) then
    error(fn .. ": " .. what .. " must be an integer, got " .. tostring(v), 3)
  end
  return v
end

-- random_int_between(min, max): an integer from min to max, both included
function M.random_int_between(min, max)
  min = int_arg("random_int_between", "min", min)
  max = int_arg("random_int_between", "max", max)
  if max < min then error("random_int_between: max (" .. max .. ") is below min (" .. min .. ")", 2) end
  return math.random(min, max)
end

-- random_item(list): one element of a non-empty list
function M.random_item(list)
  if type(list) ~= "table" or #list == 0 then error("random_item: expected a non-empty list", 2) end
  return list[math.random(1, #list)]
end

-- random_string(length[, charset]): length characters drawn from charset
-- (default: the lowercase ASCII letters, as k6-utils)
function M.random_string(length, charset)
  length = int_arg("random_string", "length", length)
  charset = charset or "abcdefghijklmnopqrstuvwxyz"
  if type(charset) ~= "string" or charset == "" then error("random_string: charset must be a non-empty string", 2) end
  local out = {}
  for i = 1, length do
    local k = math.random(1, #charset)
    out[i] = charset:sub(k, k)
  end
  return table.concat(out)
end

-- uuidv4(): a random (version 4) UUID, from OpenSSL's generator
function M.uuidv4() return crypto.uuid() end

-- find_between(content, left, right[, all]): the text between the first
-- left and the right after it; with all, a list of every such text, each
-- search going on after the last right; nil when there is none (k6's null)
function M.find_between(content, left, right, all)
  if type(content) ~= "string" or type(left) ~= "string" or type(right) ~= "string" then
    error("find_between: expected (content, left, right) strings", 2)
  end
  local found, pos = {}, 1
  while true do
    local a, b = content:find(left, pos, true)
    if not a then break end
    local c, d = content:find(right, b + 1, true)
    if not c then break end
    local piece = content:sub(b + 1, c - 1)
    if not all then return piece end
    found[#found + 1] = piece
    pos = math.max(d + 1, a + 1) -- empty left and right must still move on
    if pos > #content + 1 then break end
  end
  if all and #found > 0 then return found end
  return nil
end

M.randomIntBetween = M.random_int_between
M.randomItem = M.random_item
M.randomString = M.random_string
M.findBetween = M.find_between

return M
