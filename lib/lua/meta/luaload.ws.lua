---@meta luaload.ws
-- luaload.ws.lua -- lua-language-server annotations of require("luaload.ws")
-- (src/lua_api/lua_ws.c): k6/ws, a WebSocket session that ws.connect waits
-- for until it has closed. Editor support only, never loaded at run time
-- (docs/editor.md).

---WebSocket sessions as k6/ws (docs/api.md, "luaload.ws").
---@class luaload.ws
local ws = {}

---What ws.connect returns: the handshake's answer.
---@class luaload.ws.Response
---@field status integer 101 when it opened; the server's status, or 0 with no response.
---@field headers table<string, string> The handshake's response headers.
---@field url string
---@field subprotocol string The subprotocol the server chose, "" none.
---@field body string Always "".
---@field error string "" when it opened.
---@field error_code integer k6's error code, 0 when it opened.

---The params of ws.connect.
---@class luaload.ws.Params
---@field headers? table<string, string> Sent with the handshake (Sec-WebSocket-Protocol: subprotocols).
---@field tags? table<string, string|number> Added to the session's samples.
---@field cookies? table<string, string|{value: string, replace?: boolean}> Sent with the VU's jar's.
---@field subprotocols? string[] Subprotocols offered.
---@field compression? "deflate" permessage-deflate.
---@field client? luaload.http.Client Whose options (TLS, timeouts, hosts) the handshake uses.

---The socket given to the setup function.
---@class luaload.ws.Socket
local Socket = {}

---Registers a handler: "open", "message" (text), "binary_message" (bytes), "ping", "pong" (data),
---"error" (message, error_code), "close" (code, reason). Each runs as a coroutine of the VU.
---@param event "open"|"message"|"binary_message"|"binaryMessage"|"ping"|"pong"|"error"|"close"
---@param fn function
function Socket:on(event, fn) end

---Sends a text message; raises when the socket is not open.
---@param text string
function Socket:send(text) end

---Sends a binary message; raises when the socket is not open.
---@param bytes string
function Socket:send_binary(bytes) end

---k6's name of send_binary.
---@param bytes string
function Socket:sendBinary(bytes) end

---Sends a ping (ws_ping times it to its pong).
function Socket:ping() end

---Starts the close handshake (code 1000 by default, or 3000 to 4999).
---@param code? integer
function Socket:close(code) end

---Calls fn after ms milliseconds, unless the socket closed first.
---@param fn function
---@param ms number
function Socket:set_timeout(fn, ms) end

---k6's name of set_timeout.
---@param fn function
---@param ms number
function Socket:setTimeout(fn, ms) end

---Calls fn every ms milliseconds until the socket closes.
---@param fn function
---@param ms number
function Socket:set_interval(fn, ms) end

---k6's name of set_interval.
---@param fn function
---@param ms number
function Socket:setInterval(fn, ms) end

---Opens a WebSocket, runs setup(socket) to register its handlers, and returns once it has closed.
---A failed handshake (a 403 ...) returns at once with its status and error: not a script error.
---@param url string ws:// or wss://
---@param params? luaload.ws.Params
---@param setup? fun(socket: luaload.ws.Socket)
---@return luaload.ws.Response
---@overload fun(url: string, setup: fun(socket: luaload.ws.Socket)): luaload.ws.Response
function ws.connect(url, params, setup) end

return ws
