-- luaload.summary: the end-of-test text summary in k6's layout and number
-- formats (k6-summary's textSummary), luaload's warnings (data.warnings)
-- at the end. text(data, opts) takes the data handle_summary receives and
-- returns the text luaload prints. opts, laid over data.options as k6 does:
--   indent            prefix of every line (default " "); checks get four
--                     more spaces, metric lines two and their mark
--   enableColors      ANSI colors (default: when stdout is a terminal and
--                     --no-color / NO_COLOR is not set)
--   summaryTrendStats the trend columns; summaryTimeUnit "s", "ms" or "us"
local M = {}

local GREEN, RED, YELLOW, CYAN, FAINT = 32, 31, 33, 36, 2

local function strip_ansi(s) return (s:gsub("\27%[[%d;]*m", "")) end

-- width on screen: UTF-8 characters, ANSI escapes left out
local function width(s) return #strip_ansi(s):gsub("[\128-\191]", "") end

-- k6's toFixedNoTrailingZeros(v, prec): fixed point, never an exponent
local function fixed(v, prec)
  if v ~= v then return "NaN" end
  if v == math.huge then return "Infinity" end
  if v == -math.huge then return "-Infinity" end
  local s = string.format("%." .. prec .. "f", v)
  if s:find(".", 1, true) then s = s:gsub("0+$", ""):gsub("%.$", "") end
  if s == "-0" then s = "0" end
  return s
end

local function trunc(x) return x >= 0 and math.floor(x) or math.ceil(x) end

-- toFixedNoTrailingZerosTrunc: truncated, not rounded, to prec decimals
local function fixed_trunc(v, prec)
  local mult = 10 ^ prec
  return fixed(trunc(v * mult) / mult, prec)
end

local UNITS = { s = { "s", 0.001 }, ms = { "ms", 1 }, us = { "µs", 1000 } }

-- a duration in milliseconds, as k6 writes it: 0s, 512ns, 1.5µs, 12.34ms,
-- 1.5s, 1m30s, 2h3m4s; with a unit, always two decimals: 1.50ms
local function fmt_duration(ms, unit)
  local u = unit and UNITS[unit]
  if u then return string.format("%.2f", ms * u[2]) .. u[1] end
  if ms == 0 then return "0s" end
  if ms < 0.001 then return string.format("%d", trunc(ms * 1e6)) .. "ns" end
  if ms < 1 then return fixed_trunc(ms * 1000, 2) .. "µs" end
  if ms < 1000 then return fixed_trunc(ms, 2) .. "ms" end
  local out = fixed_trunc((ms % 60000) / 1000, ms > 60000 and 0 or 2) .. "s"
  local rest = trunc(ms / 60000)
  if rest < 1 then return out end
  out = string.format("%d", rest % 60) .. "m" .. out
  rest = trunc(rest / 60)
  if rest < 1 then return out end
  return string.format("%d", rest) .. "h" .. out
end

-- bytes in SI units, as k6: 9 B, 123 B, 4.6 kB, 12 MB
local function fmt_bytes(n)
  local units = { "B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB" }
  if n < 10 then return fixed(n, 6) .. " B" end
  local e = math.floor(math.log(n) / math.log(1000))
  if e > #units - 1 then e = #units - 1 end
  if 1000 ^ (e + 1) <= n and e < #units - 1 then e = e + 1 end -- log's rounding
  local val = math.floor(n / 1000 ^ e * 10 + 0.5) / 10
  return string.format(val < 10 and "%.1f" or "%.0f", val) .. " " .. units[e + 1]
end

local function fmt_percent(x) return string.format("%.2f%%", trunc(x * 100 * 100) / 100) end

-- k6's humanizeValue: a metric's value in its own terms
local function humanize(v, m, unit)
  if m.type == "rate" then return fmt_percent(v) end
  if m.contains == "data" then return fmt_bytes(v) end
  if m.contains == "time" then return fmt_duration(v, unit) end
  return fixed(v, 6)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function check_line(indent, c, paint)
  if c.fails == 0 then return paint(indent .. "✓ " .. c.name, GREEN) end
  local pct = math.floor(100 * c.passes / (c.passes + c.fails))
  return paint(string.format("%s✗ %s\n%s ↳  %d%% — ✓ %d / ✗ %d", indent, c.name, indent, pct, c.passes, c.fails),
    RED)
end

-- the group's checks, then its groups ("█ name", their checks two spaces in)
local function group_lines(indent, g, paint, out)
  if g.name and g.name ~= "" then
    out[#out + 1] = indent .. "█ " .. g.name .. "\n"
    indent = indent .. "  "
  end
  local checks = g.checks or {}
  for _, c in ipairs(checks) do out[#out + 1] = check_line(indent, c, paint) end
  if #checks > 0 then out[#out + 1] = "" end
  for _, sub in ipairs(g.groups or {}) do group_lines(indent, sub, paint, out) end
end

-- "http_req_duration{status:200}" shows as "{ status:200 }", two spaces in
local function display_name(n)
  local sel = n:match("^[^{]+(%b{})$")
  if sel then return "{ " .. sel:sub(2, -2) .. " }", "  " end
  return n, ""
end

-- a metric's first value and its extras (counter: rate; gauge: min, max;
-- rate: passes, fails)
local function plain_values(m, unit)
  local v = m.values
  if m.type == "counter" then
    return { humanize(v.count, m, unit), humanize(v.rate, m, unit) .. "/s" }
  elseif m.type == "gauge" then
    return { humanize(v.value, m, unit), "min=" .. humanize(v.min, m, unit), "max=" .. humanize(v.max, m, unit) }
  elseif m.type == "rate" then
    return { humanize(v.rate, m, unit), "✓ " .. string.format("%d", v.passes), "✗ " .. string.format("%d", v.fails) }
  end
  return { "[no data]" }
end

-- "✓" / "✗" for a metric with thresholds (all passed / any failed), else " "
local function mark(m, paint)
  if not m.thresholds then return " " end
  for _, t in pairs(m.thresholds) do
    if not t.ok then return paint("✗", RED) end
  end
  return paint("✓", GREEN)
end

local function metric_lines(data, names, opts, paint, out)
  local stats, unit = opts.summaryTrendStats, opts.summaryTimeUnit
  local name_max, trend_cols, col_max, plain, plain_max, extra_max = 0, {}, {}, {}, 0, {}
  for _, n in ipairs(names) do
    local m = data.metrics[n]
    local shown, pre = display_name(n)
    if width(pre .. shown) > name_max then name_max = width(pre .. shown) end
    if m.type == "trend" then
      local cols = {}
      for i, st in ipairs(stats) do
        local x = m.values[st]
        local s = x == nil and "-" or st == "count" and fixed(x, 6) or humanize(x, m, unit)
        cols[i] = s
        if width(s) > (col_max[i] or 0) then col_max[i] = width(s) end
      end
      trend_cols[n] = cols
    else
      local vals = plain_values(m, unit)
      plain[n] = vals
      if width(vals[1]) > plain_max then plain_max = width(vals[1]) end
      for i = 2, #vals do
        if width(vals[i]) > (extra_max[i - 1] or 0) then extra_max[i - 1] = width(vals[i]) end
      end
    end
  end
  for _, n in ipairs(names) do
    local m = data.metrics[n]
    local body
    if trend_cols[n] then
      local parts = {}
      for i, s in ipairs(trend_cols[n]) do
        parts[i] = stats[i] .. "=" .. paint(s, CYAN) .. string.rep(" ", col_max[i] - width(s))
      end
      body = table.concat(parts, " ")
    else
      local vals = plain[n]
      body = paint(vals[1], CYAN) .. string.rep(" ", plain_max - width(vals[1]))
      if #vals == 2 then
        body = body .. " " .. paint(vals[2], CYAN, FAINT)
      elseif #vals > 2 then
        local parts = {}
        for i = 2, #vals do
          parts[#parts + 1] = paint(vals[i], CYAN, FAINT) .. string.rep(" ", extra_max[i - 1] - width(vals[i]))
        end
        body = body .. " " .. table.concat(parts, " ")
      end
    end
    local shown, pre = display_name(n)
    local dots = paint(string.rep(".", name_max - width(shown) - width(pre) + 3) .. ":", FAINT)
    out[#out + 1] = opts.indent .. "  " .. pre .. mark(m, paint) .. " " .. shown .. dots .. " " .. body
  end
end

-- The value a threshold was compared with, e.g. "p(99.9)=1.2ms",
-- "rate=0.50%": its own aggregate (thresholds[src].value), which need not
-- be one of the summary's columns.
local function threshold_value(src, t, m, unit)
  local agg = src:match("^%s*([%a]+%b())") or src:match("^%s*(%a+)")
  local x = t.value
  if x == nil and agg then x = m.values[agg] end
  if x == nil or not agg then return nil end
  if m.type == "rate" then return agg .. "=" .. fmt_percent(x) end
  local plain = m.contains == "data" and fmt_bytes(x) or fixed(x, 6)
  if agg == "count" then return agg .. "=" .. plain end
  if agg == "rate" then return agg .. "=" .. plain .. "/s" end
  return agg .. "=" .. humanize(x, m, unit)
end

local function threshold_lines(data, names, indent, unit, paint, out)
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
      for _, src in ipairs(sorted_keys(m.thresholds)) do
        local t = m.thresholds[src]
        local shown = threshold_value(src, t, m, unit)
        local line = string.format("%s%s '%s'%s", indent, t.ok and "✓" or "✗", src, shown and (" " .. shown) or "")
        out[#out + 1] = paint(line, t.ok and GREEN or RED)
      end
      out[#out + 1] = ""
    end
  end
end

-- luaload's warnings about the run itself (data.warnings: a saturated
-- worker, dropped iterations), after the metrics
local function warning_lines(data, indent, paint, out)
  local list = data.warnings
  if type(list) ~= "table" or #list == 0 then return end
  out[#out + 1] = ""
  out[#out + 1] = indent .. "WARNINGS"
  out[#out + 1] = ""
  for _, text in ipairs(list) do out[#out + 1] = paint(indent .. "⚠ " .. tostring(text), YELLOW) end
end

function M.text(data, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("summary.text: the options (second argument) must be a table, got " .. type(opts), 2)
  end
  opts = opts or {}
  local o, dopts, state = {}, data.options or {}, data.state or {}
  for k, v in pairs(dopts) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  o.indent = type(o.indent) == "string" and o.indent or " "
  if o.summaryTimeUnit == "" then o.summaryTimeUnit = nil end
  o.summaryTrendStats = o.summaryTrendStats or { "avg", "min", "med", "max", "p(90)", "p(95)" }
  local colors = o.enableColors
  if colors == nil then colors = state.isStdOutTTY == true and not dopts.noColor end
  local paint = function(s) return s end
  if colors then
    paint = function(s, ...)
      return "\27[" .. table.concat({ ... }, ";") .. "m" .. s .. "\27[0m"
    end
  end
  local out = { "" }
  group_lines(o.indent .. "    ", data.root_group or {}, paint, out)
  local names = sorted_keys(data.metrics or {})
  threshold_lines(data, names, o.indent .. "    ", o.summaryTimeUnit, paint, out)
  metric_lines(data, names, o, paint, out)
  warning_lines(data, o.indent .. "    ", paint, out)
  out[#out + 1] = ""
  return table.concat(out, "\n") .. "\n"
end

local function xml_escape(s)
  return (tostring(s):gsub("[&<>'\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ["'"] = "&#39;",
    ['"'] = "&quot;" }))
end

-- junit(data[, { name = "..." }]): k6-summary's jUnit, one testcase per
-- threshold ("metric - expression"), failed ones with a <failure>, for CI
-- systems that read JUnit XML
function M.junit(data, opts)
  opts = opts or {}
  local cases, failures = {}, 0
  local metrics = data.metrics or {}
  for _, n in ipairs(sorted_keys(metrics)) do
    local th = metrics[n].thresholds
    for _, src in ipairs(th and sorted_keys(th) or {}) do
      local name = xml_escape(n) .. " - " .. xml_escape(src)
      if th[src].ok then
        cases[#cases + 1] = '<testcase name="' .. name .. '" />'
      else
        failures = failures + 1
        cases[#cases + 1] = '<testcase name="' .. name .. '"><failure message="failed" /></testcase>'
      end
    end
  end
  local suite = opts.name and xml_escape(opts.name) or "k6 thresholds"
  return string.format('<?xml version="1.0"?>\n<testsuites tests="%d" failures="%d">\n'
    .. '<testsuite name="%s" tests="%d" failures="%d">%s\n</testsuite >\n</testsuites >', #cases, failures, suite,
    #cases, failures, table.concat(cases, "\n"))
end
M.jUnit = M.junit
M.textSummary = M.text

M.format_duration = fmt_duration
M.format_bytes = fmt_bytes

return M
