---@meta luaload.metrics
-- luaload.metrics.lua -- lua-language-server annotations of
-- require("luaload.metrics") (src/lua_api/custom_metrics.c): Counter,
-- Gauge, Rate and Trend, the script's own metrics, as k6's k6/metrics.
-- Editor support only, never loaded at run time (docs/editor.md).

---Custom metrics (docs/metrics.md): made in init code, recorded in VU code with `metric:add(value[, tags])`.
---@class luaload.metrics
local metrics = {}

---A custom metric.
---@class luaload.metrics.Metric
---@field name string The metric's name.
---@field type "counter"|"gauge"|"rate"|"trend" Its type.
local Metric = {}

---Records a sample, tagged with `tags`, the VU's group and tags. Not in init code.
---@param value number
---@param tags? luaload.Tags
---@return true
function Metric:add(value, tags) end

---A sum (`count`, `rate` in the summary).
---@class luaload.metrics.Counter: luaload.metrics.Metric

---The last value (`value`, `min`, `max`).
---@class luaload.metrics.Gauge: luaload.metrics.Metric

---A share of non-zero values (`rate`, `passes`, `fails`).
---@class luaload.metrics.Rate: luaload.metrics.Metric
local Rate = {}

---Records a pass (true, or a non-zero number) or a fail.
---@param value boolean|number
---@param tags? luaload.Tags
---@return true
function Rate:add(value, tags) end

---A distribution (`avg`, `min`, `med`, `max`, `p(90)`, `p(95)`).
---@class luaload.metrics.Trend: luaload.metrics.Metric

---A Counter, made in init code. `name`: letters, digits and `_`, not starting with a digit, at most 128.
---@param name string
---@return luaload.metrics.Counter
function metrics.Counter(name) end

---A Gauge, made in init code.
---@param name string
---@return luaload.metrics.Gauge
function metrics.Gauge(name) end

---A Rate, made in init code.
---@param name string
---@return luaload.metrics.Rate
function metrics.Rate(name) end

---A Trend, made in init code; with `is_time` its values are milliseconds, shown as times.
---@param name string
---@param is_time? boolean
---@return luaload.metrics.Trend
function metrics.Trend(name, is_time) end

return metrics
