---@meta luaload.crypto
-- luaload.crypto.lua -- lua-language-server annotations of
-- require("luaload.crypto") (src/lua_api/crypto.c): digests, HMAC, the
-- incremental hashers, random bytes and UUIDs, as k6's k6/crypto. Editor
-- support only, never loaded at run time (docs/editor.md).

---k6's `k6/crypto` on OpenSSL (docs/encoding-crypto.md).
---@class luaload.crypto
local crypto = {}

---@alias luaload.crypto.Algorithm
---| "md5"
---| "sha1"
---| "sha256"
---| "sha384"
---| "sha512"

---An output encoding (nil: hex).
---@alias luaload.crypto.Encoding
---| "hex" # lowercase (the default)
---| "base64"
---| "base64url" # padded
---| "base64rawurl"
---| "binary" # the raw bytes

---An incremental hash or HMAC.
---@class luaload.crypto.Hasher
local Hasher = {}

---Adds `s`; returns the hasher, so calls chain.
---@param s string
---@return luaload.crypto.Hasher
function Hasher:update(s) end

---The digest of everything added so far; the hasher goes on (later updates continue from there).
---@param enc? luaload.crypto.Encoding
---@return string
function Hasher:digest(enc) end

---The MD5 digest of `s`.
---@param s string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.md5(s, enc) end

---The SHA-1 digest of `s`.
---@param s string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.sha1(s, enc) end

---The SHA-256 digest of `s`.
---@param s string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.sha256(s, enc) end

---The SHA-384 digest of `s`.
---@param s string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.sha384(s, enc) end

---The SHA-512 digest of `s`.
---@param s string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.sha512(s, enc) end

---HMAC-`algo` of `data` keyed with `secret` (an empty key is allowed).
---@param algo luaload.crypto.Algorithm
---@param secret string
---@param data string
---@param enc? luaload.crypto.Encoding
---@return string
function crypto.hmac(algo, secret, data, enc) end

---An incremental hasher (k6's `createHash`).
---@param algo luaload.crypto.Algorithm
---@return luaload.crypto.Hasher
function crypto.create_hash(algo) end

---An incremental HMAC (k6's `createHMAC`).
---@param algo luaload.crypto.Algorithm
---@param secret string
---@return luaload.crypto.Hasher
function crypto.create_hmac(algo, secret) end

---`n` random bytes (0 to 65536) from OpenSSL's `RAND_bytes`.
---@param n integer
---@return string
function crypto.random_bytes(n) end

---A random (version 4) UUID, lowercase.
---@return string
function crypto.uuid() end

return crypto
