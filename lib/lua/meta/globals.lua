---@meta _
-- globals.lua -- lua-language-server (LuaLS) annotations of the globals of a
-- luaload script: those luaload sets (console, __ENV, __VU, __ITER), those
-- the script defines and luaload calls or reads (options, default, setup,
-- teardown, handle_summary), and the types shared by the other files of
-- lib/lua/meta (durations, sizes, tags, the options table's shape). Editor
-- support only: nothing here is loaded at run time (docs/editor.md), and
-- tests/e2e/test_annotations.sh checks these names against the binary's.

---A duration: a string of `<number><unit>` parts (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`) such as `"10s"`, `"1m30s"`, `"1.5s"`, `"250ms"` or `"0"`, or a number of milliseconds (`2500` is 2.5 s).
---@alias luaload.Duration string|number

---A size in bytes: a number, or a string such as `"64MiB"`, `"512k"`, `"1GB"` (binary units).
---@alias luaload.Size string|number

---Sample tags: names to strings (numbers and booleans are converted).
---@alias luaload.Tags table<string, string|number|boolean>

---A TLS version, as k6 names them (`"1.2"` works too).
---@alias luaload.TLSVersion
---| "tls1.0"
---| "tls1.1"
---| "tls1.2"
---| "tls1.3"

---k6's executors (docs/scenarios.md).
---@alias luaload.Executor
---| "shared-iterations" # `iterations` in all, taken by whichever VU is free, within `maxDuration`
---| "per-vu-iterations" # each of `vus` VUs runs `iterations`
---| "constant-vus" # `vus` VUs loop for `duration`
---| "ramping-vus" # the number of VUs follows `stages` from `startVUs`
---| "constant-arrival-rate" # `rate` iterations per `timeUnit`, whatever the server's latency
---| "ramping-arrival-rate" # the rate follows `stages` from `startRate`

---One stage of a ramping scenario: reach `target` (VUs, or iterations per `timeUnit`) linearly over `duration`.
---@class luaload.Stage
---@field duration luaload.Duration How long this stage lasts.
---@field target number The VUs (or the rate) at its end.

---A threshold: `"p(95)<200"`, or the expression with k6's abort settings.
---@class luaload.ThresholdObject
---@field threshold string The expression, e.g. `"rate>0.99"`.
---@field abortOnFail? boolean Stop the test (exit 99) as soon as it fails.
---@field delayAbortEval? luaload.Duration Not before this long from the start.

---@alias luaload.Threshold string|luaload.ThresholdObject

---A client certificate, as k6's `tlsAuth`: PEM text (from `ll.open`), used for every host.
---@class luaload.TLSAuth
---@field domains? string[] The domains it is meant for.
---@field cert string The certificate, PEM text.
---@field key string The private key, PEM text.

---One scenario of `options.scenarios` (docs/scenarios.md).
---@class luaload.Scenario
---@field executor luaload.Executor Required: one of k6's six executors.
---@field exec? string The global function each iteration calls (with the setup data). Default `"default"`.
---@field startTime? luaload.Duration When the scenario starts, from the test start. Default `"0s"`.
---@field gracefulStop? luaload.Duration How long running iterations may go on after its end. Default `"30s"`.
---@field env? table<string, string> Extra `__ENV` entries for this scenario's VUs.
---@field tags? table<string, string> Tags of every sample of the scenario (besides `scenario = <name>`).
---@field vus? integer VUs (shared-iterations, per-vu-iterations, constant-vus).
---@field iterations? integer Iterations: in all (shared-iterations) or per VU (per-vu-iterations).
---@field duration? luaload.Duration How long it runs (constant-vus, constant-arrival-rate).
---@field maxDuration? luaload.Duration Limit of the iteration executors. Default `"10m"`.
---@field startVUs? integer VUs at the start (ramping-vus).
---@field stages? luaload.Stage[] The ramp (ramping-vus, ramping-arrival-rate).
---@field gracefulRampDown? luaload.Duration How long a VU above the target may finish its iteration (ramping-vus).
---@field rate? number Iterations per `timeUnit` (constant-arrival-rate).
---@field startRate? number The rate at the start (ramping-arrival-rate).
---@field timeUnit? luaload.Duration The period of `rate`. Default `"1s"`.
---@field preAllocatedVUs? integer VUs made before the start (arrival rates).
---@field maxVUs? integer At most this many VUs; beyond, iterations are dropped (arrival rates).

---The global `options` table: the test's shape (docs/api.md#options). Command-line flags and `LUALOAD_*` variables win.
---@class luaload.Options
---@field vus? integer Number of virtual users.
---@field duration? luaload.Duration Run for this long (the constant-vus scenario).
---@field iterations? integer Total iterations shared by the VUs (the shared-iterations scenario).
---@field gracefulStop? luaload.Duration How long running iterations may continue after the end. Default `"30s"`.
---@field stages? luaload.Stage[] `{ { duration = "30s", target = 100 }, ... }`: a ramping-vus default scenario.
---@field scenarios? table<string, luaload.Scenario> Several scenarios and k6's six executors.
---@field setupTimeout? luaload.Duration Limit of `setup()`, default `"60s"` (exit 100).
---@field teardownTimeout? luaload.Duration Limit of `teardown()`, default `"60s"` (exit 101).
---@field thresholds? table<string, luaload.Threshold|luaload.Threshold[]> Pass/fail criteria by metric or sub-metric: `{ http_req_duration = { "p(95)<200" } }`.
---@field tags? table<string, string> Tags added to every sample.
---@field summaryTrendStats? string[] Trend columns of the summary, e.g. `{ "avg", "p(99)", "count" }`.
---@field summaryTimeUnit? "s"|"ms"|"us" The unit of every time in the summary.
---@field seed? integer|string The seed of `math.random` (0 to 2^53, or a string of digits); `--seed` and `LUALOAD_SEED` win.
---@field rps? number At most this many requests/s over all VUs (0: none); `--rps` wins. The wait is in no request timing nor iteration_duration.
---@field httpDebug? "headers"|"full"|"" Print requests and responses on stderr (`--http-debug[=full]` wins).
---@field failWhenAllIterationsFail? boolean Exit 107 when every iteration failed with a script error.
---@field executionSegment? string This process's part of a split test, e.g. `"1/4:2/4"` (docs/distributed.md).
---@field executionSegmentSequence? string All the parts of the split test, e.g. `"0,1/4,2/4,3/4,1"`.
---@field userAgent? string Every Client's default `User-Agent`; `""` sends none.
---@field insecureSkipTLSVerify? boolean Don't verify servers' certificates.
---@field tlsAuth? luaload.TLSAuth[] The client certificate, as k6's (one entry).
---@field tlsVersion? luaload.TLSVersion|{ min?: luaload.TLSVersion, max?: luaload.TLSVersion } TLS versions allowed.
---@field tlsCipherSuites? string[] Cipher suites by IANA name.
---@field maxRedirects? integer Redirects followed, default 10.
---@field discardResponseBodies? boolean `res.body` is nil unless a request's `response_type` asks for it.
---@field noConnectionReuse? boolean A new connection for every request.
---@field noVUConnectionReuse? boolean A VU's connections are closed at the start of each of its iterations.
---@field hosts? table<string, string> `{ ["test.example"] = "127.0.0.1" }`: connect to that address instead.
---@field batch? integer At most this many requests of an `http.batch` at once, default 20.
---@field batchPerHost? integer At most this many to one host, default 6 (0: no limit).

---The test's options (docs/api.md#options), read once the init code has run.
---@type luaload.Options
options = {}

---The process environment, with `-e KEY=VALUE` applied on top (and a scenario's `env`).
---@type table<string, string>
__ENV = {}

---The running VU's id (as `require("luaload").vu.id`); 0 in init code, `setup()` and `teardown()`.
---@type integer
__VU = 0

---The running VU's iteration, from 0; 0 in init code, `setup()` and `teardown()`.
---@type integer
__ITER = 0

---k6's console: each call writes one logfmt line on stderr (or to `--console-output FILE`); arguments are joined by spaces, a table is printed as JSON. Needs no `require`.
---@class luaload.console
console = {}

---Logs at level info.
---@param ... any
function console.log(...) end

---Logs at level info.
---@param ... any
function console.info(...) end

---Logs at level warning.
---@param ... any
function console.warn(...) end

---Logs at level error.
---@param ... any
function console.error(...) end

---Logs at level debug: shown only with `-v` (or `LUALOAD_VERBOSE=1`).
---@param ... any
function console.debug(...) end

---One iteration of a VU: the script must define it (exit 107 without it), unless every scenario names its own `exec` function.
---@param data any What `setup()` returned (JSON-decoded; the same table for the VUs of a worker: treat it as read-only), or nil.
function default(data) end

---Runs once before the VUs start; may make requests and sleep. Its return value (tables, strings, numbers, booleans, `json.null`) is JSON-encoded and handed to every iteration and to `teardown`.
---@return any data
function setup() end

---Runs once after the VUs finish (also after Ctrl-C, not after an abort).
---@param data any What `setup()` returned.
function teardown(data) end

---Replaces the end-of-test summary: returns a table mapping `stdout`, `stderr` or a file path to the text to write there (nil writes nothing). When it raises, the default summary is printed.
---@param data luaload.summary.Data The summary data, k6's `handleSummary` shape.
---@return table<string, string>?
function handle_summary(data) end
