---@meta luaload.grpc
-- luaload.grpc.lua -- lua-language-server annotations of require("luaload.grpc")
-- (src/lua_api/lua_grpc.c, grpc_call.c, grpc_stream.c): k6/net/grpc, unary
-- calls and streams over HTTP/2. Editor
-- support only, never loaded at run time (docs/editor.md).

---gRPC calls as k6/net/grpc (docs/api.md, "luaload.grpc").
---@class luaload.grpc
---@field StatusOK integer 0
---@field StatusCanceled integer 1
---@field StatusUnknown integer 2
---@field StatusInvalidArgument integer 3
---@field StatusDeadlineExceeded integer 4
---@field StatusNotFound integer 5
---@field StatusAlreadyExists integer 6
---@field StatusPermissionDenied integer 7
---@field StatusResourceExhausted integer 8
---@field StatusFailedPrecondition integer 9
---@field StatusAborted integer 10
---@field StatusOutOfRange integer 11
---@field StatusUnimplemented integer 12
---@field StatusInternal integer 13
---@field StatusUnavailable integer 14
---@field StatusDataLoss integer 15
---@field StatusUnauthenticated integer 16
---@field HealthCheckUnknown integer 0
---@field HealthCheckServing integer 1
---@field HealthCheckNotServing integer 2
---@field HealthCheckServiceUnknown integer 3
---@field HealthCheckServiceUnkown integer 3 k6's spelling.
local grpc = {}

---The TLS options of connect (PEM text, as k6's open() reads it).
---@class luaload.grpc.TLSParams
---@field cacerts? string|string[] The CA that signs the server's certificate.
---@field cert? string The client certificate (mTLS), with key.
---@field key? string

---The params of connect.
---@class luaload.grpc.ConnectParams
---@field plaintext? boolean h2c (HTTP/2 without TLS); TLS by default.
---@field timeout? string|number The calls' default timeout ("2s" or milliseconds; 60s).
---@field max_receive_size? integer The largest response message (4 MiB).
---@field maxReceiveSize? integer
---@field max_send_size? integer The largest request message (4 MiB).
---@field maxSendSize? integer
---@field tls? luaload.grpc.TLSParams
---@field reflect? boolean Load the server's services through server reflection (v1, then v1alpha).
---@field reflect_metadata? table<string, string> Metadata sent with the reflection requests.
---@field reflectMetadata? table<string, string>

---The params of invoke.
---@class luaload.grpc.Params
---@field metadata? table<string, string> Sent as headers; a key ending in -bin takes bytes.
---@field tags? table<string, string|number> Added to the call's samples.
---@field timeout? string|number This call's timeout.
---@field discard_response_message? boolean The response's message is not decoded (message is nil).
---@field discardResponseMessage? boolean

---A call's error, when its status is not OK.
---@class luaload.grpc.Error
---@field code integer The status.
---@field message string The server's grpc-message, or what failed.

---What invoke returns: a status other than OK is a response, not a script error.
---@class luaload.grpc.Response
---@field status integer grpc.StatusOK ... grpc.StatusUnauthenticated.
---@field message table? The response message (proto3's JSON mapping), nil unless OK.
---@field headers table<string, string[]> The response's metadata.
---@field trailers table<string, string[]> Its trailing metadata (grpc-status ...).
---@field error luaload.grpc.Error? nil when OK.

---A gRPC client: its .proto files, and a connection per VU.
---@class luaload.grpc.Client
local Client = {}

---Parses .proto files (and what they import) found in import_paths, then the current directory. Init code only.
---@param import_paths string[]
---@param ... string The .proto files.
function Client:load(import_paths, ...) end

---Reads a compiled FileDescriptorSet (protoc --descriptor_set_out --include_imports). Init code only.
---@param file string
function Client:load_protoset(file) end

---k6's name of load_protoset.
---@param file string
function Client:loadProtoset(file) end

---Says where the VU's calls go: address is host:port. Returns true. With reflect = true, waits for the server's
---services and files; raises when it has no reflection.
---@param address string
---@param params? luaload.grpc.ConnectParams
---@return boolean
function Client:connect(address, params) end

---A unary call: method is "package.Service/Method"; request the message as a table.
---@param method string
---@param request table
---@param params? luaload.grpc.Params
---@return luaload.grpc.Response
function Client:invoke(method, request, params) end

---The same call without waiting: a promise of the Response (docs/api.md, "async").
---@param method string
---@param request table
---@param params? luaload.grpc.Params
---@return luaload.http.Promise
function Client:async_invoke(method, request, params) end

---k6's name of async_invoke.
---@param method string
---@param request table
---@param params? luaload.grpc.Params
---@return luaload.http.Promise
function Client:asyncInvoke(method, request, params) end

---grpc.health.v1.Health/Check of service ("" by default: the server's); raises when the call fails.
---@param service? string
---@param params? luaload.grpc.Params
---@return {status: integer}
function Client:health_check(service, params) end

---k6's name of health_check.
---@param service? string
---@param params? luaload.grpc.Params
---@return {status: integer}
function Client:healthCheck(service, params) end

---Closes the VU's connection; its calls need connect again.
function Client:close() end

---A new client (usually in init code, loading its .proto files there).
---@return luaload.grpc.Client
function grpc.Client() end

---The params of grpc.Stream.
---@class luaload.grpc.StreamParams
---@field metadata? table<string, string> Sent as headers; a key ending in -bin takes bytes.
---@field tags? table<string, string|number> Added to the stream's samples.
---@field timeout? string|number How long the stream may last (the connection's timeout by default, 60s).

---A client, server or bidirectional stream, open from grpc.Stream until its "end" ran.
---@class luaload.grpc.Stream
local Stream = {}

---Registers a handler, run as a coroutine of the VU: "data" (message, { ts }), "error" ({ code, message }) when
---the status is not OK, "status" ({ code, message }), "end" (). Returns the stream.
---@param event "data"|"error"|"status"|"end"
---@param fn function
---@return luaload.grpc.Stream
function Stream:on(event, fn) end

---Sends a message; raises once end_stream() was called or the stream is over.
---@param message table
function Stream:write(message) end

---Says the client has no more messages (k6's end()).
function Stream:end_stream() end

---k6's name of end_stream.
function Stream:endStream() end

---Opens a stream of method ("package.Service/Method") on the VU's connection at once.
---@param client luaload.grpc.Client
---@param method string
---@param params? luaload.grpc.StreamParams
---@return luaload.grpc.Stream
function grpc.Stream(client, method, params) end

return grpc
