---@meta luaload.execution
-- luaload.execution.lua -- lua-language-server annotations of
-- require("luaload.execution") (src/lua_api/execution.c): k6/execution's
-- vu, scenario, instance and test, every field under its snake_case and
-- k6's camelCase name. Editor support only, never loaded at run time
-- (docs/editor.md).

---k6's `k6/execution`: what is running, read when the script reads a field. The tables are read-only (but `vu.tags`).
---@class luaload.execution
---@field vu luaload.execution.VU The running VU (its fields raise in init code).
---@field scenario luaload.execution.Scenario The running VU's scenario (only in its iterations).
---@field instance luaload.execution.Instance This luaload process's counters.
---@field test luaload.execution.Test The test: abort, fail, its options.
local exec = {}

---@class luaload.execution.VU
---@field id_in_test integer The VU's number, 1 to N over all workers; 0 in `setup()` and `teardown()`.
---@field idInTest integer k6's name of `id_in_test`.
---@field id_in_instance integer The VU's number in this luaload process.
---@field idInInstance integer k6's name of `id_in_instance`.
---@field iteration_in_instance integer The VU's iterations so far, from 0.
---@field iterationInInstance integer k6's name of `iteration_in_instance`.
---@field iteration_in_scenario integer The same: a VU belongs to one scenario.
---@field iterationInScenario integer k6's name of `iteration_in_scenario`.
---@field tags table<string, string|number|boolean> The VU's tags, read and write: a tag set here tags every sample the VU makes from then on; nil removes it.
---@field metrics luaload.execution.VUMetrics k6's `vu.metrics`.

---@class luaload.execution.VUMetrics
---@field tags table<string, string|number|boolean> The same table as `vu.tags`.

---@class luaload.execution.Scenario
---@field name string The scenario's name (`"default"` without `options.scenarios`).
---@field executor luaload.Executor Its executor.
---@field start_time number When it started, in Unix milliseconds.
---@field startTime number k6's name of `start_time`.
---@field progress number 0 to 1: iterations done of the total, or time out of its duration.
---@field iteration_in_test integer The iteration's number in its scenario over all workers and VUs, in start order, each once.
---@field iterationInTest integer k6's name of `iteration_in_test`.
---@field iteration_in_instance integer The same in this luaload process.
---@field iterationInInstance integer k6's name of `iteration_in_instance`.

---@class luaload.execution.Instance
---@field vus_active integer VUs in an iteration now, over all scenarios.
---@field vusActive integer k6's name of `vus_active`.
---@field vus_initialized integer VUs made so far.
---@field vusInitialized integer k6's name of `vus_initialized`.
---@field iterations_completed integer Iterations that ended (the failed ones too).
---@field iterationsCompleted integer k6's name of `iterations_completed`.
---@field iterations_interrupted integer Iterations cut off at a scenario's end or by a stop.
---@field iterationsInterrupted integer k6's name of `iterations_interrupted`.
---@field current_test_run_duration number Milliseconds since the scenarios started (0 before).
---@field currentTestRunDuration number k6's name of `current_test_run_duration`.

---@class luaload.execution.Test
---@field options luaload.Options The options in force, a fresh copy at each read.
local Test = {}

---Stops the test, as `ll.abort`: exit code 108.
---@param reason? string
function Test.abort(reason) end

---Marks the test as failed and goes on: at the end luaload exits with 110 (99 when a threshold failed).
---@param reason? string
function Test.fail(reason) end

return exec
