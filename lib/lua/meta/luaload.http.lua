---@meta luaload.http
-- luaload.http.lua -- lua-language-server annotations of
-- require("luaload.http"): the module functions (src/lua_api/http*.c and
-- lib/lua/luaload/http_wrap.lua), Client and Request, the request params
-- and Client options, bodies (FileStream, Form, Blob, http.file,
-- RandomPNG), cookies, expected statuses, and the Response (with
-- lib/lua/luaload/http_forms.lua's submit_form and click_link). Editor
-- support only, never loaded at run time (docs/editor.md).

---HTTP requests, as k6's `k6/http`: `local http = require("luaload.http")`. Requests can only be made in `default()`, `setup()` and `teardown()` (and the functions they call), not in init code.
---@class luaload.http
local http = {}

---An HTTP version.
---@alias luaload.http.Version
---| "1.1" # HTTP/1.1 only
---| "2" # HTTP/2: ALPN on https://, h2c with prior knowledge on http://
---| "3" # HTTP/3 over QUIC only

---A method: GET, POST, PUT, PATCH, DELETE, HEAD and OPTIONS are matched in any case; any other token is sent as written.
---@alias luaload.http.Method
---| "GET"
---| "POST"
---| "PUT"
---| "PATCH"
---| "DELETE"
---| "HEAD"
---| "OPTIONS"
---| string

---What a request goes to: a URL (`http://` or `https://`) or a prepared `http.Request`.
---@alias luaload.http.Target string|luaload.http.Request

---A request body: a string (or number), a FileStream, a Form, a Blob, `http.file(...)`, or a table (form-urlencoded; multipart when a value is a file).
---@alias luaload.http.Body string|number|luaload.http.FileStream|luaload.http.Form|luaload.http.Blob|luaload.http.FileData|table<string, any>

---@alias luaload.http.Compression
---| "gzip"
---| "deflate"
---| "br"
---| "zstd"

---@alias luaload.http.ResponseType
---| "text" # the default: `res.body` holds the bytes
---| "binary" # the same, `res.body` holds the bytes
---| "none" # the body is discarded as it arrives: `res.body` is nil

---@alias luaload.http.Transport
---| "native" # luaload's own HTTP/1.1 and HTTP/2
---| "curl" # libcurl for everything

---The request params, for `http.Request` and the one-off calls (k6's camelCase names work too). An unknown one raises.
---@class luaload.http.Params
---@field method? luaload.http.Method Used by `request(req)`. Default GET.
---@field headers? table<string, string|number> Request headers.
---@field body? luaload.http.Body The request body (docs/uploads.md).
---@field compression? luaload.http.Compression Compress the body in memory and set `Content-Encoding`.
---@field host? string Sends this `Host` header.
---@field disable_keep_alive? boolean Close the connection after this request.
---@field disableKeepAlive? boolean k6's name of `disable_keep_alive`.
---@field throw? boolean Raise an error when the request fails at the transport level (status 0). Default false.
---@field timeout? luaload.Duration This request's limit, over the Client's.
---@field redirects? integer How many redirects to follow, over the Client's.
---@field http_version? luaload.http.Version This request's HTTP version.
---@field httpVersion? luaload.http.Version k6's name of `http_version`.
---@field max_response_body? luaload.Size The longest response body kept, over the Client's.
---@field maxResponseBody? luaload.Size k6's name of `max_response_body`.
---@field cookies? table<string, string|{ value: string, replace?: boolean }> Sent before the jar's cookies; `replace` keeps the jar's of that name out.
---@field tags? table<string, string|number> Tags of this request's samples (`name` replaces the URL in the `name` tag).
---@field on_chunk? fun(bytes: string): boolean? The body handed over as it arrives (decoded) instead of kept; it cannot wait; per call only; returning false stops the body cleanly (res.stopped).
---@field onChunk? fun(bytes: string): boolean? k6-style name of `on_chunk`.
---@field response_type? luaload.http.ResponseType What `res.body` holds.
---@field responseType? luaload.http.ResponseType k6's name of `response_type`.
---@field response_callback? luaload.http.ExpectedStatuses Which statuses are expected for this request.
---@field responseCallback? luaload.http.ExpectedStatuses k6's name of `response_callback`.
---@field auth? "basic"|"digest"|"ntlm" How the URL's credentials (`http://user:pass@host/`) are sent, as k6's `params.auth`; Basic without it.

---The options of `http.Client` (xk6-fasthttp's names). An unknown one raises.
---@class luaload.http.ClientOptions
---@field timeout? luaload.Duration Limit for the whole request. Default `"60s"`; 0: none.
---@field read_timeout? luaload.Duration For xk6-fasthttp: without `timeout`, the larger of the two is the request's limit.
---@field write_timeout? luaload.Duration For xk6-fasthttp: see `read_timeout`.
---@field dial_timeout? luaload.Duration Limit for DNS, TCP and TLS.
---@field max_conn_duration? luaload.Duration Connections older than this are not reused.
---@field user_agent? string `User-Agent` header. Default `luaload/<version>`.
---@field max_response_body? luaload.Size The longest response body kept. Default `"512MiB"`.
---@field proxy? string `http://`, `https://`, `socks5://` or `socks5h://` proxy URL.
---@field max_redirects? integer How many redirects to follow. Default `options.maxRedirects`, else 10.
---@field http_version? luaload.http.Version Default: HTTP/2 when ALPN offers it, else HTTP/1.1.
---@field multiplex? boolean The VUs of a worker share HTTP/2 and HTTP/3 connections, as streams.
---@field max_streams? integer With `multiplex`: concurrent streams per connection. Default 100.
---@field max_conns_per_host? integer With `multiplex`: connections per host, per worker.
---@field disable_keep_alive? boolean A new connection for every request. Default `options.noConnectionReuse`.
---@field discard_response_bodies? boolean Requests without a `response_type` discard their bodies.
---@field tls? luaload.http.TLSOptions TLS settings.
---@field transport? luaload.http.Transport Which transport serves this Client's requests.
---@field qlog_dir? string A directory for ngtcp2's qlog of each native HTTP/3 connection.
---@field zero_rtt? boolean HTTP/3: a resumed QUIC connection sends GET, HEAD and OPTIONS without a body as 0-RTT early data.
---@field alt_svc? boolean Alt-Svc discovery: an https origin's advertised HTTP/3 serves its next requests (native transport).

---The `tls` table of `http.Client`. A file that cannot be read, or is not PEM, raises when the Client is made.
---@class luaload.http.TLSOptions
---@field insecure_skip_verify? boolean Don't verify the server's certificate or host name.
---@field ca? string Path to a PEM file of CA certificates to trust.
---@field certificate? string Path to the client certificate (PEM), for mutual TLS.
---@field private_key? string Path to the client private key (PEM).
---@field min_version? luaload.TLSVersion
---@field max_version? luaload.TLSVersion
---@field ciphers? string|string[] Cipher suites by IANA name (a string goes to the TLS library as it is).
---@field server_name? string The name sent in SNI and verified in the certificate.

---Connection settings: make Clients in init code. Each VU has its own connection in every Client it uses (unless `multiplex`).
---@class luaload.http.Client
local Client = {}

---A request prepared once (at init) and reused: `client:request(req)` sends it as it is, the fast path.
---@class luaload.http.Request

---One element of `http.batch`: a URL, an `http.Request`, a list `{ method, url, body, params }`, or this table.
---@class luaload.http.BatchRequest
---@field method? luaload.http.Method Default GET.
---@field url luaload.http.Target
---@field body? luaload.http.Body
---@field params? luaload.http.Params

---The phases of a request, in milliseconds (k6's meanings).
---@class luaload.http.Timings
---@field blocked number From submitting the request until it was about to be sent: DNS, connecting, TLS of a new connection, waits in the worker.
---@field connecting number TCP connect; 0 on a reused connection.
---@field tls_handshaking number TLS handshake; 0 on a reused connection or plain HTTP.
---@field sending number Writing the request.
---@field waiting number From the request sent to the first byte of the response.
---@field receiving number From the first byte of the response to the last.
---@field duration number `sending + waiting + receiving`.

---A cookie of a response's `Set-Cookie` headers.
---@class luaload.http.ResponseCookie
---@field name string
---@field value string
---@field domain string `""` for a host-only cookie.
---@field path string
---@field http_only boolean
---@field secure boolean
---@field max_age number Seconds.
---@field expires number Unix milliseconds; 0 when none.

---What every request returns. A transport error is no Lua error: `status` is 0 and `error` says why.
---@class luaload.http.Response
---@field status integer HTTP status of the final response; 0 on a transport error.
---@field proto string `"HTTP/1.1"`, `"HTTP/2.0"`, ...; `""` when there was no response.
---@field body string? The body (decoded from gzip, deflate, br, zstd); nil with `response_type = "none"`.
---@field headers table<string, string> The final response's headers, canonical names (`Content-Type`); repeated ones joined with `", "`.
---@field error string `""`, or the transport error's message.
---@field zero_rtt boolean true when the request went as HTTP/3 0-RTT early data and the server accepted it.
---@field stopped boolean true when on_chunk returned false: the body was ended early on purpose, a complete response all the same; else false.
---@field error_code integer 0, or a k6 code: 1000 + status for an HTTP status >= 400, 1050 timeout, 1212 refused, ...
---@field url string The final URL, after redirects.
---@field cookies table<string, luaload.http.ResponseCookie[]> The response's `Set-Cookie` headers by name.
---@field tls_version string `"tls1.2"`, `"tls1.3"`, ...; `""` without TLS.
---@field ocsp { status: string, revocation_reason: string, produced_at: number, this_update: number, next_update: number, revoked_at: number } The stapled OCSP response (k6's res.ocsp); times in unix ms.
---@field tls_cipher_suite string The IANA name; `""` without TLS.
---@field timings luaload.http.Timings The phases, in milliseconds.
---@field status_text string `"200 OK"`; `""` when there was no response.
local Response = {}

---The VU's cookie jar (emptied at every iteration, as k6's): works on the jar of the VU that calls it.
---@class luaload.http.CookieJar
local CookieJar = {}

---`jar:set` options.
---@class luaload.http.CookieOptions
---@field domain? string A domain cookie (default host-only).
---@field path? string Default: the URL's directory.
---@field expires? string|number A date such as `"Mon, 02 Jan 2026 15:04:05 GMT"`, or unix milliseconds.
---@field max_age? number Seconds; < 0 deletes.
---@field secure? boolean
---@field http_only? boolean

---A file streamed from disk as a body or a form part, never read into memory. The fields can be read.
---@class luaload.http.FileStream
---@field size number The bytes it sends (`length`).
---@field path string The file's path.
---@field filename string Its filename in a form.
---@field content_type string Its Content-Type in a form (default `application/octet-stream`).

---`http.FileStream` options.
---@class luaload.http.FileStreamOptions
---@field offset? luaload.Size Send from this byte.
---@field length? luaload.Size Send this many bytes. Default: to the end.
---@field filename? string The part's filename in a form. Default: the file's name.
---@field content_type? string The part's Content-Type in a form.

---A `multipart/form-data` body, its parts streamed one after another.
---@class luaload.http.Form

---`http.Form` parts: names to strings, numbers, `http.file(...)`, FileStreams and Blobs; fields first, then files, each in name order.
---@class luaload.http.FormParts
---@field fields? table<string, string|number|luaload.http.FileData|luaload.http.FileStream|luaload.http.Blob>
---@field files? table<string, string|number|luaload.http.FileData|luaload.http.FileStream|luaload.http.Blob>

---Generated bytes (byte i is i % 251), made as they go out.
---@class luaload.http.Blob
---@field size number Its size in bytes.

---`http.Blob` options.
---@class luaload.http.BlobOptions
---@field size luaload.Size Required: `"17MB"`, a number of bytes.

---k6's file part: a string with a filename and a type.
---@class luaload.http.FileData
---@field data string
---@field filename string
---@field content_type string

---`http.RandomPNG` options: `width` and `height` (1 to 16384), or `size` (100 bytes to 256 MiB, within 1%).
---@class luaload.http.RandomPNGOptions
---@field width? integer
---@field height? integer
---@field size? luaload.Size

---A response callback made by `http.expected_statuses`.
---@class luaload.http.ExpectedStatuses

---`res:submit_form` options (k6's camelCase names work too).
---@class luaload.http.SubmitFormOptions
---@field form_selector? string The form. Default `"form"`.
---@field formSelector? string k6's name of `form_selector`.
---@field fields? table<string, string> Laid over the form's own values.
---@field submit_selector? string The submit button. Default `'[type="submit"]'`.
---@field submitSelector? string k6's name of `submit_selector`.
---@field params? luaload.http.Params

---`res:click_link` options.
---@class luaload.http.ClickLinkOptions
---@field selector? string The link. Default `"a[href]"`.
---@field params? luaload.http.Params

---Makes a Client (in init code). An unknown option raises.
---@param options? luaload.http.ClientOptions
---@return luaload.http.Client
function http.Client(options) end

---Prepares a request once, at init, to reuse in every iteration.
---@param url string `http://` or `https://`.
---@param params? luaload.http.Params
---@return luaload.http.Request
function http.Request(url, params) end

---GET with the default Client.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.get(target, params) end

---HEAD with the default Client.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.head(target, params) end

---POST with the default Client (an empty body when none).
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.post(target, body, params) end

---PUT with the default Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.put(target, body, params) end

---PATCH with the default Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.patch(target, body, params) end

---DELETE with the default Client (also `http.del`).
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.delete(target, body, params) end

---DELETE with the default Client: k6's name of `http.delete`.
http.del = http.delete

---OPTIONS with the default Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.options(target, body, params) end

---Sends `method` to `target` with the default Client; or, given a Request, sends it with its own method (or GET).
---@overload fun(req: luaload.http.Request, params?: luaload.http.Params): luaload.http.Response
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function http.request(method, target, body, params) end

---Sends several requests at once (on the default Client) and waits for all of them; the responses come back in the shape of the argument (a list in order, or a table with the same keys). At most `options.batch` at once.
---@param requests table<any, string|luaload.http.Request|luaload.http.BatchRequest|table>
---@return table<any, luaload.http.Response>
function http.batch(requests) end

---Starts a request without waiting (k6's `http.asyncRequest`) on the default Client: a promise of its Response.
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function http.async_request(method, target, body, params) end

---k6's name of `http.async_request`.
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function http.asyncRequest(method, target, body, params) end

---A request in flight (`http.async_request`, `client:async_*`): its Response once in.
---@class luaload.http.Promise
local Promise = {}

---Waits (in the coroutine that calls it) for the Response; raises as the call would with `throw = true`. At once, and the same, once it is in.
---@return luaload.http.Response
function Promise:await() end

---Runs `on_ok(response)` or `on_err(message)` as a coroutine of its own once settled. Returns the promise.
---@param on_ok? fun(res: luaload.http.Response)
---@param on_err? fun(message: string)
---@return luaload.http.Promise
function Promise:next(on_ok, on_err) end

---`"pending"`, `"fulfilled"` or `"rejected"`.
---@return string
function Promise:state() end

---Records the check `status is <status>` (passes when `res.status == status`) and returns whether it passed.
---@param status integer
---@param res luaload.http.Response
---@return boolean
function http.checkstatus(status, res) end

---The calling VU's cookie jar (also `http.cookieJar`).
---@return luaload.http.CookieJar
function http.cookie_jar() end

---k6's name of `http.cookie_jar`.
http.cookieJar = http.cookie_jar

---A file streamed from disk as a body or a form part: opened now (normally in init code), so a missing file stops the run before the test.
---@param path string
---@param opts? luaload.http.FileStreamOptions
---@return luaload.http.FileStream
function http.FileStream(path, opts) end

---A multipart/form-data body.
---@param parts luaload.http.FormParts
---@return luaload.http.Form
function http.Form(parts) end

---A body of `size` generated bytes, made as they go out.
---@param opts luaload.http.BlobOptions
---@return luaload.http.Blob
function http.Blob(opts) end

---k6's file part for forms and table bodies: `data` with a filename (default `file`) and a type (default `application/octet-stream`).
---@param data string
---@param filename? string
---@param content_type? string
---@return luaload.http.FileData
function http.file(data, filename, content_type) end

---A new, valid PNG (8-bit RGB noise) at each call, from the VU's random generator.
---@param opts luaload.http.RandomPNGOptions
---@return string png
function http.RandomPNG(opts) end

---A response callback: these statuses and `{ min = N, max = M }` ranges are expected, any other is a failed request (also `http.expectedStatuses`).
---@param ... integer|{ min: integer, max: integer }
---@return luaload.http.ExpectedStatuses
function http.expected_statuses(...) end

---k6's name of `http.expected_statuses`.
http.expectedStatuses = http.expected_statuses

---Makes `cb` the state's default response callback (call it in init code); nil turns the judgement off: no `http_req_failed` sample, no `expected_response` tag. Also `http.setResponseCallback`.
---@param cb luaload.http.ExpectedStatuses|false|nil
function http.set_response_callback(cb) end

---k6's name of `http.set_response_callback`.
http.setResponseCallback = http.set_response_callback

---k6's TLS versions, as `res.tls_version` gives them and `tlsVersion` takes them.
http.TLS_1_0 = "tls1.0"
http.TLS_1_1 = "tls1.1"
http.TLS_1_2 = "tls1.2"
http.TLS_1_3 = "tls1.3"
---k6's OCSP statuses (`res.ocsp.status`).
http.OCSP_STATUS_GOOD = "good"
http.OCSP_STATUS_REVOKED = "revoked"
http.OCSP_STATUS_SERVER_FAILED = "server_failed"
http.OCSP_STATUS_UNKNOWN = "unknown"
---k6's OCSP revocation reasons (`res.ocsp.revocation_reason`).
http.OCSP_REASON_UNSPECIFIED = "unspecified"
http.OCSP_REASON_KEY_COMPROMISE = "key_compromise"
http.OCSP_REASON_CA_COMPROMISE = "ca_compromise"
http.OCSP_REASON_AFFILIATION_CHANGED = "affiliation_changed"
http.OCSP_REASON_SUPERSEDED = "superseded"
http.OCSP_REASON_CESSATION_OF_OPERATION = "cessation_of_operation"
http.OCSP_REASON_CERTIFICATE_HOLD = "certificate_hold"
http.OCSP_REASON_REMOVE_FROM_CRL = "remove_from_crl"
http.OCSP_REASON_PRIVILEGE_WITHDRAWN = "privilege_withdrawn"
http.OCSP_REASON_AA_COMPROMISE = "aa_compromise"

---GET with this Client.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:get(target, params) end

---HEAD with this Client.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:head(target, params) end

---POST with this Client (an empty body when none).
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:post(target, body, params) end

---PUT with this Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:put(target, body, params) end

---PATCH with this Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:patch(target, body, params) end

---DELETE with this Client (also `client:del`).
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:delete(target, body, params) end

---DELETE with this Client: the same as `client:delete`.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:del(target, body, params) end

---OPTIONS with this Client.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:options(target, body, params) end

---Sends `method` to `target`; or, given a Request, sends it with its own method (or GET). A Request alone, without body or params, is the fast path.
---@overload fun(self: luaload.http.Client, req: luaload.http.Request, params?: luaload.http.Params): luaload.http.Response
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Response
function Client:request(method, target, body, params) end

---`http.async_request` on this Client.
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_request(method, target, body, params) end

---k6's name of `async_request`.
---@param method luaload.http.Method
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:asyncRequest(method, target, body, params) end

---GET with this Client, without waiting.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_get(target, params) end

---HEAD with this Client, without waiting.
---@param target luaload.http.Target
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_head(target, params) end

---POST with this Client, without waiting.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_post(target, body, params) end

---PUT with this Client, without waiting.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_put(target, body, params) end

---PATCH with this Client, without waiting.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_patch(target, body, params) end

---DELETE with this Client, without waiting.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_delete(target, body, params) end

---OPTIONS with this Client, without waiting.
---@param target luaload.http.Target
---@param body? luaload.http.Body
---@param params? luaload.http.Params
---@return luaload.http.Promise
function Client:async_options(target, body, params) end

---`http.batch` on this Client.
---@param requests table<any, string|luaload.http.Request|luaload.http.BatchRequest|table>
---@return table<any, luaload.http.Response>
function Client:batch(requests) end

---Decodes the body as JSON; a selector picks a value as k6's `res.json(selector)`: `"a.b"`, `"items.0.id"` (0-based), `"items.#"` (the length), `"items.#.id"`. Raises when there is no body or the JSON is invalid.
---@param selector? string
---@return any
function Response:json(selector) end

---Parses the body as HTML: a Selection of the document, or of `find(selector)` (k6's `res.html(selector)`).
---@param selector? string
---@return luaload.html.Selection
function Response:html(selector) end

---k6's `res.submitForm`: sends the form found in the body (its values, the submit button's, `fields` over them) to its `action`, and returns the response.
---@param opts? luaload.http.SubmitFormOptions
---@return luaload.http.Response
function Response:submit_form(opts) end

---k6's name of `res:submit_form`.
---@param opts? luaload.http.SubmitFormOptions
---@return luaload.http.Response
function Response:submitForm(opts) end

---k6's `res.clickLink`: GETs the `href` of the first element that matches the selector (default `"a[href]"`).
---@param opts? luaload.http.ClickLinkOptions
---@return luaload.http.Response
function Response:click_link(opts) end

---k6's name of `res:click_link`.
---@param opts? luaload.http.ClickLinkOptions
---@return luaload.http.Response
function Response:clickLink(opts) end

---Stores a cookie for `url`.
---@param url string
---@param name string
---@param value string
---@param opts? luaload.http.CookieOptions
function CookieJar:set(url, name, value, opts) end

---The cookies a request to `url` would carry: `{ name = { value, ... } }`.
---@param url string
---@return table<string, string[]>
function CookieJar:cookies_for_url(url) end

---k6's name of `jar:cookies_for_url`.
---@param url string
---@return table<string, string[]>
function CookieJar:cookiesForURL(url) end

---Removes every cookie a request to `url` would carry.
---@param url string
function CookieJar:clear(url) end

---Removes the cookie `name` that a request to `url` would carry.
---@param url string
---@param name string
function CookieJar:delete(url, name) end

return http
