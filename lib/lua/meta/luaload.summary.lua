---@meta luaload.summary
-- luaload.summary.lua -- lua-language-server annotations of
-- require("luaload.summary") (lib/lua/luaload/summary.lua): the
-- end-of-test summary formatters (k6-summary's textSummary and jUnit) and
-- the shape of handle_summary's data. Editor support only, never loaded at
-- run time (docs/editor.md).

---The end-of-test summary formatters, k6-summary's.
---@class luaload.summary
local summary = {}

---`summary.text` options, laid over `data.options`.
---@class luaload.summary.TextOptions
---@field indent? string The prefix of every line. Default `" "`.
---@field enableColors? boolean ANSI colors. Default: on when stdout is a terminal and colors are not turned off.
---@field summaryTrendStats? string[] The trend columns.
---@field summaryTimeUnit? "s"|"ms"|"us" The time unit.

---`summary.junit` options.
---@class luaload.summary.JUnitOptions
---@field name? string The `<testsuite>`'s name. Default `"k6 thresholds"`.

---The data of `handle_summary(data)`, k6's shape.
---@class luaload.summary.Data
---@field metrics table<string, luaload.summary.Metric> By metric name.
---@field root_group luaload.summary.Group Groups and checks.
---@field options luaload.summary.Options The summary settings.
---@field state luaload.summary.State
---@field warnings string[] luaload's warnings about the run itself (a saturated worker, dropped iterations); empty when there is none.

---@class luaload.summary.Options
---@field summaryTrendStats string[] The trend columns.
---@field summaryTimeUnit string? The time unit, when set.
---@field noColor boolean Whether colors are off (`--no-color`, `NO_COLOR`).

---@class luaload.summary.Metric
---@field type "trend"|"counter"|"rate"|"gauge"
---@field contains "time"|"data"|"default"
---@field values table<string, number> trend: `avg`, `min`, `med`, `max`, `p(90)`, `p(95)` (ms for times); counter: `count`, `rate`; rate: `rate`, `passes`, `fails`; gauge: `value`, `min`, `max`.
---@field thresholds? table<string, luaload.summary.Threshold> By threshold expression.

---@class luaload.summary.Threshold
---@field ok boolean Whether it passed.
---@field value number The aggregate it was compared with.

---@class luaload.summary.Group
---@field name string
---@field path string
---@field id string
---@field groups luaload.summary.Group[]
---@field checks luaload.summary.Check[]

---@class luaload.summary.Check
---@field name string
---@field path string
---@field id string
---@field passes integer
---@field fails integer

---@class luaload.summary.State
---@field isStdOutTTY boolean
---@field isStdErrTTY boolean
---@field testRunDurationMs number

---The text luaload prints at the end of a test, in k6's layout and number formats.
---@param data luaload.summary.Data
---@param opts? luaload.summary.TextOptions
---@return string
function summary.text(data, opts) end

---k6-summary's name of `summary.text`.
summary.textSummary = summary.text

---JUnit XML: one `<testcase>` per threshold, a `<failure>` for the failed ones.
---@param data luaload.summary.Data
---@param opts? luaload.summary.JUnitOptions
---@return string
function summary.junit(data, opts) end

---k6-summary's name of `summary.junit`.
summary.jUnit = summary.junit

---A time in milliseconds as the summary writes it, e.g. `"1.23s"`.
---@param ms number
---@return string
function summary.format_duration(ms) end

---A byte count as the summary writes it, e.g. `"124 kB"`.
---@param n number
---@return string
function summary.format_bytes(n) end

return summary
