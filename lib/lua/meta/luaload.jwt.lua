---@meta luaload.jwt
-- luaload.jwt.lua -- lua-language-server annotations of
-- require("luaload.jwt") (src/lua_api/jwt.c): Generator, stream, sign,
-- decode and the token sources. Editor support only, never loaded at run
-- time (docs/editor.md).

---Signed JSON Web Tokens (docs/jwt.md).
---@class luaload.jwt
local jwt = {}

---@alias luaload.jwt.Algorithm
---| "HS256"
---| "HS384"
---| "HS512"
---| "RS256"
---| "RS384"
---| "RS512"
---| "PS256"
---| "PS384"
---| "PS512"
---| "ES256"
---| "ES384"
---| "ES512"
---| "EdDSA"

---`jwt.Generator` options. An unknown one raises.
---@class luaload.jwt.GeneratorOptions
---@field key? string PEM private key: a file's path, or the PEM text.
---@field secret? string The secret of HS256/384/512 (give `key` or `secret`).
---@field alg? luaload.jwt.Algorithm Default: inferred from the key or secret.
---@field kid? string The header's `kid`.
---@field sub? string
---@field aud? string
---@field iss? string
---@field exp_in? string|number `exp = iat + exp_in`: a duration string, or a number of **seconds**.
---@field claims? table|string More claims: a table, or a JSON object string.
---@field pregenerate? integer Make N tokens before the test into the disk cache; `token()` streams them, each once (init code only).
---@field ahead? integer A ring of N tokens kept full by a background thread (init code only).
---@field cache_dir? string The cache directory of `pregenerate`.
---@field threads? integer Threads that sign for `pregenerate` (default: one per core) or `ahead` (default 1).

---`jwt.sign` options.
---@class luaload.jwt.SignOptions
---@field alg? luaload.jwt.Algorithm
---@field kid? string

---Where `:token()` takes its tokens: a Generator or a `jwt.stream`.
---@class luaload.jwt.Source
local Source = {}

---The next token. Raises when a file's (or the cache's) tokens are used up.
---@return string
function Source:token() end

---How many times a VU found the `ahead` ring empty and signed its own token (all states).
---@return number
function Source:fell_behind() end

---A token generator: signed live, pregenerated into a disk cache, or signed ahead on a thread.
---@param opts luaload.jwt.GeneratorOptions
---@return luaload.jwt.Source
function jwt.Generator(opts) end

---Your own tokens, one per line, each handed out once in the run.
---@param path string
---@return luaload.jwt.Source
function jwt.stream(path) end

---A one-off: signs exactly `claims` (no `iat`, `exp` or `jti` added). With an HS* alg the second argument is the secret, else a PEM key (path or text).
---@param claims table|string
---@param key_or_secret string
---@param alg? luaload.jwt.Algorithm|luaload.jwt.SignOptions
---@return string token
function jwt.sign(claims, key_or_secret, alg) end

---The header and the payload of a token, **without verifying** the signature. Raises on a malformed token.
---@param token string
---@return table header
---@return table payload
function jwt.decode(token) end

return jwt
