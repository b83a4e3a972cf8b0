---@meta luaload.sse
-- luaload.sse.lua -- lua-language-server annotations of require("luaload.sse")
-- (src/lua_api/lua_sse.c, lib/lua/luaload/sse_wrap.lua): server-sent
-- events in xk6-sse's shape; sse.open returns once the stream has ended or
-- been closed. Editor support only, never loaded at run time (docs/editor.md).

---Server-sent event streams as xk6-sse (docs/api.md, "luaload.sse").
---@class luaload.sse
local sse = {}

---The params of sse.open: http's params (headers, tags, timeout, cookies, ...) and these.
---@class luaload.sse.Params
---@field method? string The request's method, "GET" by default ("POST" for an LLM API).
---@field body? string|table The request's body, as http.post takes it.
---@field headers? table<string, string> Sent with the request (Accept: text/event-stream unless given).
---@field tags? table<string, string|number> Added to the request's and the stream's samples.
---@field timeout? string|number The whole stream's limit; a day by default.
---@field reconnect? boolean|integer Reconnect when the stream ends or fails (true: up to 1000 times), waiting the server's retry: (1 s without one) and sending Last-Event-ID.
---@field max_event_size? integer Bytes of one event at most (1 MiB by default); a bigger one is dropped and counted in sse_errors.
---@field maxEventSize? integer k6-style name of `max_event_size`.

---An event, as the event handler gets it.
---@class luaload.sse.Event
---@field id string This event's id: field, "" without one.
---@field name string Its event: field, "message" without one.
---@field data string Its data: lines joined with "\n".
---@field last_event_id string The stream's last event ID (kept from earlier events), what Last-Event-ID sends.
---@field lastEventId string k6-style name of `last_event_id`.

---What the error handler gets: a malformed line, a failed request, a status other than 200.
---@class luaload.sse.Error
---@field message string What went wrong.
local Error = {}

---The message (xk6-sse's e.error()).
---@return string
function Error:error() end

---The client given to sse.open's function.
---@class luaload.sse.Client
local Client = {}

---Registers a handler: "open" (the stream's first bytes), "event" (each event), "error" (a
---luaload.sse.Error). Handlers run as the stream arrives and cannot wait (no request, sleep or await).
---@param event "open"|"event"|"error"
---@param fn function
function Client:on(event, fn) end

---Ends the stream cleanly once the running handler returns (res.stopped is then true).
function Client:close() end

---Sends the request, runs fn(client) first to register its handlers, and returns the Response once
---the stream has ended or been closed (after its reconnections, if asked). A handler's error is raised.
---@param url string http:// or https://
---@param params? luaload.sse.Params
---@param fn? fun(client: luaload.sse.Client)
---@return luaload.http.Response
---@overload fun(url: string, fn: fun(client: luaload.sse.Client)): luaload.http.Response
function sse.open(url, params, fn) end

return sse
