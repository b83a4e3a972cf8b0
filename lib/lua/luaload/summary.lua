-- luaload.summary: the end-of-test text summary, k6's layout.
-- text(data, opts) takes the same data handle_summary receives and returns
-- the text luaload prints; opts.indent (default "     "). Time values use
-- data.options.summaryTimeUnit ("s", "ms", "us") when it is set.
local M = {}

-- "%.2f" without trailing zeros: 1.50 -> "1.5", 3.00 -> "3"
local function num2(x)
  local s = string.format("%.2f", x):gsub("0+$", ""):gsub("%.$", "")
  return s
end

local function fmt_duration(ms, unit)
  if unit == "s" then return num2(ms / 1000) .. "s" end
  if unit == "ms" then return num2(ms) .. "ms" end
  if unit == "us" then return num2(ms * 1000) .. "µs" end
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

local function fmt_value(v, contains, unit)
  if contains == "time" then return fmt_duration(v, unit) end
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

local function metric_line(label, m, stats, width, unit)
  local v = m.values
  local body
  if m.type == "trend" then
    local parts = {}
    for _, st in ipairs(stats) do
      local x = v[st]
      if x ~= nil then
        local s = st == "count" and fmt_number(x) or fmt_value(x, m.contains, unit)
        parts[#parts + 1] = pad(st .. "=" .. s, 14)
      end
    end
    body = table.concat(parts, " ")
  elseif m.type == "counter" then
    body = pad(fmt_value(v.count, m.contains, unit), 9) .. " " .. fmt_rate(v.rate, m.contains)
  elseif m.type == "rate" then
    local total = v.passes + v.fails
    body = pad(percent(v.passes, total), 9) .. " " .. pad("✓ " .. v.passes, 11) .. " ✗ " .. v.fails
  else
    body = pad(fmt_value(v.value, m.contains, unit), 9) .. " "
      .. pad("min=" .. fmt_value(v.min, m.contains, unit), 11) .. " max=" .. fmt_value(v.max, m.contains, unit)
  end
  local dots = width - #label:gsub("[\128-\191]", "")
  return label .. string.rep(".", dots > 0 and dots or 1) .. ": " .. body
end

-- "✓ " / "✗ " for a metric with thresholds (all passed / any failed), else "  "
local function mark(m)
  if not m.thresholds then return "  " end
  for _, t in pairs(m.thresholds) do
    if not t.ok then return "✗ " end
  end
  return "✓ "
end

-- The value a threshold was compared with, e.g. "p(95)=1.2ms", "rate=0.50%".
local function threshold_value(src, m, unit)
  local agg = src:match("^%s*([%a]+%b())") or src:match("^%s*(%a+)")
  local v = m.values
  if agg == "med" and m.type == "trend" then agg = "med" end
  local x = v[agg]
  if x == nil and agg == "value" then x = v.rate end
  if x == nil then return nil end
  if m.type == "rate" or (m.type == "counter" and agg == "rate") then
    if m.type == "rate" then return agg .. "=" .. string.format("%.2f%%", x * 100) end
    return agg .. "=" .. fmt_rate(x, m.contains)
  end
  if agg == "count" then return agg .. "=" .. fmt_number(x) end
  return agg .. "=" .. fmt_value(x, m.contains, unit)
end

local function thresholds_text(data, names, indent, unit, out)
  local any = false
  for _, n in ipairs(names) do
    local m = data.metrics[n]
    if m.thresholds then
      if not any then
        out[#out + 1] = indent .. "THRESHOLDS"
        out[#out + 1] = ""
        any = true
      end
      out[#out + 1] = indent .. n
      local srcs = sorted_keys(m.thresholds)
      for _, src in ipairs(srcs) do
        local ok = m.thresholds[src].ok
        local shown = threshold_value(src, m, unit)
        out[#out + 1] = string.format("%s%s '%s'%s", indent, ok and "✓" or "✗", src,
          shown and (" " .. shown) or "")
      end
      out[#out + 1] = ""
    end
  end
end

function M.text(data, opts)
  opts = opts or {}
  local indent = opts.indent or "     "
  local out = { "" }
  local root = data.root_group or {}
  local options = data.options or {}
  local unit = options.summaryTimeUnit
  if unit == "" then unit = nil end
  if (root.checks and #root.checks > 0) or (root.groups and #root.groups > 0) then
    checks_text(root, indent, out)
    out[#out + 1] = ""
  end
  local stats = options.summaryTrendStats or { "avg", "min", "med", "max", "p(90)", "p(95)" }
  local names = sorted_keys(data.metrics or {})
  thresholds_text(data, names, indent, unit, out)
  -- a sub-metric shows under its parent as "  { tag:value }"
  local labels, width = {}, 0
  for _, n in ipairs(names) do
    local sel = n:match("^[%w_]+(%b{})$")
    labels[n] = sel and ("  { " .. sel:sub(2, -2):gsub(",", ", ") .. " }") or n
    local w = #labels[n]:gsub("[\128-\191]", "")
    if w > width then width = w end
  end
  width = width + 3
  for _, n in ipairs(names) do
    local m = data.metrics[n]
    out[#out + 1] = indent:sub(1, -3) .. mark(m) .. metric_line(labels[n], m, stats, width, unit)
  end
  out[#out + 1] = ""
  return table.concat(out, "\n") .. "\n"
end

M.format_duration = fmt_duration
M.format_bytes = fmt_bytes

return M
