---@meta luaload.websockets
-- luaload.websockets.lua -- lua-language-server annotations of
-- require("luaload.websockets") (src/lua_api/lua_websockets.c): k6/websockets,
-- the browser-like WebSocket that does not block. Editor support only, never
-- loaded at run time (docs/editor.md).

---Browser-like WebSockets as k6/websockets (docs/api.md, "luaload.websockets").
---@class luaload.websockets
local websockets = {}

---readyState: the open is under way.
websockets.CONNECTING = 0
---readyState: messages go both ways.
websockets.OPEN = 1
---readyState: the close handshake is under way.
websockets.CLOSING = 2
---readyState: closed (or the open failed).
websockets.CLOSED = 3

---The params of websockets.WebSocket.
---@class luaload.websockets.Params
---@field headers? table<string, string> Sent with the handshake.
---@field tags? table<string, string|number> Added to the session's samples.
---@field cookies? table<string, string|{value: string, replace?: boolean}> Sent with the VU's jar's.
---@field compression? "deflate" permessage-deflate.
---@field client? luaload.http.Client Whose options (TLS, timeouts, hosts) the handshake uses.

---What a handler receives.
---@class luaload.websockets.Event
---@field type "open"|"message"|"error"|"close"|"ping"|"pong"
---@field data? string message: the text, or the bytes of a binary message; ping, pong: their data.
---@field binary? boolean message: whether it was a binary one.
---@field error? string error: the message.
---@field code? integer close: the close code (1006: the connection dropped or never opened); error: k6's error code.
---@field reason? string close: the reason the server gave.
---@field was_clean? boolean close: whether the close handshake completed.

---A WebSocket: it opens in the background; its events run its handlers as coroutines of the VU.
---@class luaload.websockets.WebSocket
---@field url string
---@field ready_state integer 0 CONNECTING, 1 OPEN, 2 CLOSING, 3 CLOSED.
---@field readyState integer k6's name of ready_state.
---@field binary_type "blob"|"arraybuffer" How binary messages are given (in Lua a string either way); "blob" by default.
---@field binaryType "blob"|"arraybuffer" k6's name of binary_type.
---@field buffered_amount integer Bytes queued by send and not yet on the wire.
---@field bufferedAmount integer k6's name of buffered_amount.
---@field protocol string The subprotocol the server chose, "" none.
---@field extensions string The extensions the server took, "" none.
---@field onopen? fun(event: luaload.websockets.Event)
---@field onmessage? fun(event: luaload.websockets.Event)
---@field onerror? fun(event: luaload.websockets.Event)
---@field onclose? fun(event: luaload.websockets.Event)
---@field onping? fun(event: luaload.websockets.Event)
---@field onpong? fun(event: luaload.websockets.Event)
local WebSocket = {}

---Sends a text message; raises when the socket is not open.
---@param text string
function WebSocket:send(text) end

---Sends a binary message; raises when the socket is not open.
---@param bytes string
function WebSocket:send_binary(bytes) end

---k6's name of send_binary.
---@param bytes string
function WebSocket:sendBinary(bytes) end

---Sends a ping (ws_ping times it to its pong); raises when the socket is not open.
function WebSocket:ping() end

---Starts the close handshake (code 1000 by default, or 3000 to 4999; a reason of at most 123 bytes).
---Nothing on a closed socket.
---@param code? integer
---@param reason? string
function WebSocket:close(code, reason) end

---Adds a handler of event, run after the on-handler, in the order added.
---@param event "open"|"message"|"error"|"close"|"ping"|"pong"
---@param fn fun(event: luaload.websockets.Event)
function WebSocket:add_event_listener(event, fn) end

---k6's name of add_event_listener.
---@param event "open"|"message"|"error"|"close"|"ping"|"pong"
---@param fn fun(event: luaload.websockets.Event)
function WebSocket:addEventListener(event, fn) end

---Removes a handler added with add_event_listener.
---@param event "open"|"message"|"error"|"close"|"ping"|"pong"
---@param fn fun(event: luaload.websockets.Event)
function WebSocket:remove_event_listener(event, fn) end

---k6's name of remove_event_listener.
---@param event "open"|"message"|"error"|"close"|"ping"|"pong"
---@param fn fun(event: luaload.websockets.Event)
function WebSocket:removeEventListener(event, fn) end

---Starts opening a WebSocket and returns it at once (CONNECTING). The iteration goes on until
---every socket it opened has closed. A failed handshake (a 404 ...) gives an error event and a
---close event, not a script error.
---@param url string ws:// or wss://
---@param protocols? string|string[] Subprotocols offered.
---@param params? luaload.websockets.Params
---@return luaload.websockets.WebSocket
function websockets.WebSocket(url, protocols, params) end

return websockets
