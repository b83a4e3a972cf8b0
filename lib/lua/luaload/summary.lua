-- luaload.summary: the end-of-test text summary, k6's layout.
-- text(data, opts) takes the same data handle_summary receives and returns
-- the text luaload prints; opts.indent (default "     ").
local M = {}

-- "%.2f" without trailing zeros: 1.50 -> "1.5", 3.00 -> "3"
local function num2(x)
  local s = string.format("%.2f", x):gsub("0+$", ""):gsub("%.$", "")
  return s
end

local function fmt_duration(ms)
  if ms == 0 then return "0s" end
  local us = ms * 1000
  if us < 1 then return string.format("%.0fns", us * 1000) end
  if us < 1000 then return num2(us) .. "µs" end
  if ms < 1000 then return num2(ms) .. "ms" end
  local s = ms / 1000
  if s < 60 then return num2(s) .. "s" end
  local m = math.floor(s / 60)
  if m < 60 then return string.format("%dm%ss", m, num2(s - m * 60)) end
  local h = math.floor(m / 60)
  return string.format("%dh%dm%.0fs", h, m - h * 60, s - m * 60)
end

local function fmt_bytes(n)
  local units = { "B", "kB", "MB", "GB", "TB" }
  local i = 1
  while n >= 1000 and i < #units do
    n = n / 1000
    i = i + 1
  end
  if i == 1 then return string.format("%d %s", n, units[i]) end
  return string.format("%.1f %s", n, units[i])
end

local function fmt_number(v)
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
  return string.format("%.6g", v)
end

local function fmt_value(v, contains)
  if contains == "time" then return fmt_duration(v) end
  if contains == "data" then return fmt_bytes(v) end
  return fmt_number(v)
end

local function fmt_rate(v, contains)
  if contains == "data" then return fmt_bytes(v) .. "/s" end
  return string.format("%.6g/s", v)
end

local function percent(passes, total)
  if total == 0 then return "0.00%" end
  return string.format("%.2f%%", passes / total * 100)
end

local function pad(s, n)
  local len = #s:gsub("[\128-\191]", "") -- count UTF-8 characters
  if len >= n then return s end
  return s .. string.rep(" ", n - len)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function checks_text(group, indent, out)
  for _, c in ipairs(group.checks or {}) do
    local total = c.passes + c.fails
    if c.fails == 0 then
      out[#out + 1] = string.format("%s✓ %s", indent, c.name)
    else
      out[#out + 1] = string.format("%s✗ %s\n%s ↳  %s — ✓ %d / ✗ %d", indent, c.name, indent,
        percent(c.passes, total), c.passes, c.fails)
    end
  end
  for _, g in ipairs(group.groups or {}) do
    out[#out + 1] = ""
    out[#out + 1] = string.format("%s█ %s", indent, g.name)
    out[#out + 1] = ""
    checks_text(g, indent .. "  ", out)
  end
end

local function metric_line(name, m, stats, width)
  local v = m.values
  local body
  if m.type == "trend" then
    local parts = {}
    for _, st in ipairs(stats) do
      local x = v[st]
      if x ~= nil then
        local s = st == "count" and fmt_number(x) or fmt_value(x, m.contains)
        parts[#parts + 1] = pad(st .. "=" .. s, 14)
      end
    end
    body = table.concat(parts, " ")
  elseif m.type == "counter" then
    body = pad(fmt_value(v.count, m.contains), 9) .. " " .. fmt_rate(v.rate, m.contains)
  elseif m.type == "rate" then
    local total = v.passes + v.fails
    body = pad(percent(v.passes, total), 9) .. " " .. pad("✓ " .. v.passes, 11) .. " ✗ " .. v.fails
  else
    body = pad(fmt_value(v.value, m.contains), 9) .. " " .. pad("min=" .. fmt_value(v.min, m.contains), 11)
      .. " max=" .. fmt_value(v.max, m.contains)
  end
  local dots = width - #name
  return name .. string.rep(".", dots > 0 and dots or 1) .. ": " .. body
end

function M.text(data, opts)
  opts = opts or {}
  local indent = opts.indent or "     "
  local out = { "" }
  local root = data.root_group or {}
  if (root.checks and #root.checks > 0) or (root.groups and #root.groups > 0) then
    checks_text(root, indent, out)
    out[#out + 1] = ""
  end
  local stats = (data.options and data.options.summaryTrendStats)
    or { "avg", "min", "med", "max", "p(90)", "p(95)" }
  local names = sorted_keys(data.metrics or {})
  local width = 0
  for _, n in ipairs(names) do
    if #n > width then width = #n end
  end
  width = width + 3
  for _, n in ipairs(names) do
    out[#out + 1] = indent .. metric_line(n, data.metrics[n], stats, width)
  end
  out[#out + 1] = ""
  return table.concat(out, "\n") .. "\n"
end

M.format_duration = fmt_duration
M.format_bytes = fmt_bytes

return M
