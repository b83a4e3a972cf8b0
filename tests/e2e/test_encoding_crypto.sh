#!/usr/bin/env bash
# luaload.encoding and luaload.crypto (k6/encoding, k6/crypto): known
# vectors (RFC 4231, FIPS 180, RFC 1321, RFC 4648 variants), agreement with
# the openssl/base64/sha256sum CLIs on 10 KB of random bytes written at
# init, UUID and random_bytes shapes, and errors (exit 107 at init). No
# traffic.
source "$(dirname "$0")/lib.sh"

V=$(script vectors.lua <<LUA
local encoding = require("luaload.encoding")
local crypto = require("luaload.crypto")
local function out(k, v) io.write(k, "|", v, "\n") end
-- setup runs once (init code runs in every VU state): the random file is
-- written there, hashed here and by the CLIs
function setup()
  local rnd = crypto.random_bytes(10240)
  local f = assert(io.open("$T/rand.bin", "wb"))
  f:write(rnd)
  f:close()
  out("cli.sha256", crypto.sha256(rnd))
  out("cli.md5", crypto.md5(rnd))
  out("cli.sha1", crypto.sha1(rnd))
  out("cli.sha384", crypto.sha384(rnd))
  out("cli.sha512", crypto.sha512(rnd))
  out("cli.b64", crypto.sha256(encoding.b64encode(rnd)))
  out("cli.b64url", crypto.sha256(encoding.b64encode(rnd, "rawurl")))
  out("cli.b64rt", tostring(encoding.b64decode(encoding.b64encode(rnd)) == rnd))
  out("cli.hmac", crypto.hmac("sha256", "s3cret", rnd))
  out("cli.hex", crypto.sha256(encoding.hexencode(rnd)))
  out("cli.hexrt", tostring(encoding.hexdecode(encoding.hexencode(rnd)) == rnd))
end
-- the modules work in init code too
out("init.md5", crypto.md5("") .. " " .. encoding.b64encode("x"))
function default()
  out("hmac.rfc4231", crypto.hmac("sha256", "Jefe", "what do ya want for nothing?"))
  out("hmac.b64", crypto.hmac("sha256", "Jefe", "what do ya want for nothing?", "base64"))
  out("hmac.md5", crypto.hmac("md5", "Jefe", "what do ya want for nothing?"))
  out("hmac.emptykey", crypto.hmac("sha1", "", ""))
  out("sha256.abc", crypto.sha256("abc"))
  out("md5.empty", crypto.md5(""))
  out("sha1.abc", crypto.sha1("abc"))
  out("sha256.abc.b64", crypto.sha256("abc", "base64"))
  out("sha256.abc.b64url", crypto.sha256("abc", "base64url"))
  out("sha256.abc.b64rawurl", crypto.sha256("abc", "base64rawurl"))
  out("sha256.abc.bin", encoding.hexencode(crypto.sha256("abc", "binary")))
  local h = crypto.create_hash("sha256")
  h:update("a"):update("b")
  out("hash.ab", h:digest("hex"))
  h:update("c")
  out("hash.abc", h:digest())
  local m = crypto.create_hmac("sha256", "Jefe")
  m:update("what do ya want "); m:update("for nothing?")
  out("hmac.inc", m:digest("hex"))
  local s = "\255\254\253"
  for _, v in ipairs({ "std", "rawstd", "url", "rawurl" }) do
    local e = encoding.b64encode(s, v)
    out("b64." .. v, e)
    out("b64rt." .. v, tostring(encoding.b64decode(e, v) == s))
  end
  out("b64.default", encoding.b64encode("hello"))
  out("b64.dec", encoding.b64decode("aGVsbG8=", nil, "s"))
  out("b64.dec1", encoding.b64decode("QQ=="))
  out("b64.dec2", encoding.b64decode("QUI="))
  out("b64.raw1", encoding.b64decode("QQ", "rawstd"))
  out("b64.empty", "[" .. encoding.b64decode("") .. "]" .. "[" .. encoding.b64encode("") .. "]")
  out("hex.enc", encoding.hexencode("\0\1\171\255"))
  out("hex.dec", tostring(encoding.hexdecode("0001abFF") == "\0\1\171\255"))
  out("hex.rt", encoding.hexdecode(encoding.hexencode("round trip")))
  out("uuid", crypto.uuid())
  out("uuid.differ", tostring(crypto.uuid() ~= crypto.uuid()))
  out("rb.len", #crypto.random_bytes(16) .. "," .. #crypto.random_bytes(0) .. "," .. #crypto.random_bytes(65536))
  out("rb.differ", tostring(crypto.random_bytes(16) ~= crypto.random_bytes(16)))
  local function err(k, fn) local ok, e = pcall(fn) out("err." .. k, tostring(ok) .. " " .. tostring(e)) end
  err("b64std", function() return encoding.b64decode("QQ=") end)
  err("b64raw", function() return encoding.b64decode("QQ==", "rawstd") end)
  err("b64url", function() return encoding.b64decode("/w==", "url") end)
  err("b64chars", function() return encoding.b64decode("Q!==") end)
  err("variant", function() return encoding.b64encode("x", "base32") end)
  err("format", function() return encoding.b64decode("QQ==", "std", "b") end)
  err("hexodd", function() return encoding.hexdecode("abc") end)
  err("hexbad", function() return encoding.hexdecode("zz") end)
  err("enc", function() return crypto.sha256("x", "base32") end)
  err("algo", function() return crypto.create_hash("md4") end)
  err("rbbig", function() return crypto.random_bytes(65537) end)
  err("rbneg", function() return crypto.random_bytes(-1) end)
end
LUA
)
run_ll run "$V" -i 1 -q --no-summary
expect_eq "vectors: exit 0" "$RC" 0
line() { grep "^$1|" "$OUT" | cut -d'|' -f2- | sort -u; }
expect_eq "the modules load in init code" "$(line init.md5)" "d41d8cd98f00b204e9800998ecf8427e eA=="

expect_eq "HMAC-SHA256 RFC 4231 case 2" "$(line hmac.rfc4231)" 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843
expect_eq "HMAC-SHA256 as base64" "$(line hmac.b64)" "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="
expect_eq "HMAC-MD5 RFC 2104" "$(line hmac.md5)" 750c783e6ab0b503eaa86e310a5db738
expect_eq "HMAC-SHA1 with an empty key" "$(line hmac.emptykey)" fbdb1d1b18aa6c08324b7d64b71fb76370690e1d
expect_eq "sha256(abc)" "$(line sha256.abc)" ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
expect_eq "md5('')" "$(line md5.empty)" d41d8cd98f00b204e9800998ecf8427e
expect_eq "sha1(abc)" "$(line sha1.abc)" a9993e364706816aba3e25717850c26c9cd0d89d
expect_eq "sha256(abc) base64" "$(line sha256.abc.b64)" "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
expect_eq "sha256(abc) base64url" "$(line sha256.abc.b64url)" "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0="
expect_eq "sha256(abc) base64rawurl" "$(line sha256.abc.b64rawurl)" "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"
expect_eq "sha256(abc) binary" "$(line sha256.abc.bin)" "$(line sha256.abc)"
expect_eq "create_hash: digest after ab" "$(line hash.ab)" fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603
expect_eq "create_hash: digest goes on after a digest" "$(line hash.abc)" "$(line sha256.abc)"
expect_eq "create_hmac in two updates" "$(line hmac.inc)" "$(line hmac.rfc4231)"
expect_eq "b64 std of ff fe fd" "$(line b64.std)" "//79"
expect_eq "b64 rawstd of ff fe fd" "$(line b64.rawstd)" "//79"
expect_eq "b64 url of ff fe fd" "$(line b64.url)" "__79"
expect_eq "b64 rawurl of ff fe fd" "$(line b64.rawurl)" "__79"
for v in std rawstd url rawurl; do expect_eq "b64 $v round trip" "$(line b64rt.$v)" true; done
expect_eq "b64encode default is std, padded" "$(line b64.default)" "aGVsbG8="
expect_eq "b64decode with format s" "$(line b64.dec)" hello
expect_eq "b64decode strips == padding" "$(line b64.dec1)" A
expect_eq "b64decode strips = padding" "$(line b64.dec2)" AB
expect_eq "b64decode rawstd without padding" "$(line b64.raw1)" A
expect_eq "empty input" "$(line b64.empty)" "[][]"
expect_eq "hexencode is lowercase" "$(line hex.enc)" 0001abff
expect_eq "hexdecode takes either case" "$(line hex.dec)" true
expect_eq "hex round trip" "$(line hex.rt)" "round trip"
expect_match "uuid: v4 format with RFC 4122 variant" "$OUT" '^uuid\|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
expect_eq "two uuids differ" "$(line uuid.differ)" true
expect_eq "random_bytes lengths 16, 0, 65536" "$(line rb.len)" "16,0,65536"
expect_eq "random_bytes differ" "$(line rb.differ)" true

# the CLIs on the random file
expect_eq "10 KB random file written" "$(stat -c %s "$T/rand.bin")" 10240
expect_eq "sha256 = sha256sum" "$(line cli.sha256)" "$(sha256sum "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "md5 = md5sum" "$(line cli.md5)" "$(md5sum "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "sha1 = openssl dgst -sha1" "$(line cli.sha1)" "$(openssl dgst -sha1 -r "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "sha384 = openssl dgst -sha384" "$(line cli.sha384)" "$(openssl dgst -sha384 -r "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "sha512 = openssl dgst -sha512" "$(line cli.sha512)" "$(openssl dgst -sha512 -r "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "b64encode = base64 -w0" "$(line cli.b64)" "$(base64 -w0 "$T/rand.bin" | sha256sum | cut -d' ' -f1)"
expect_eq "b64encode rawurl = base64 -w0 | tr" "$(line cli.b64url)" \
  "$(base64 -w0 "$T/rand.bin" | tr '+/' '-_' | tr -d = | sha256sum | cut -d' ' -f1)"
expect_eq "b64decode of it gives the bytes back" "$(line cli.b64rt)" true
expect_eq "hmac = openssl dgst -hmac" "$(line cli.hmac)" "$(openssl dgst -sha256 -hmac s3cret -r "$T/rand.bin" | cut -d' ' -f1)"
expect_eq "hexencode = od -tx1" "$(line cli.hex)" "$(od -An -v -tx1 "$T/rand.bin" | tr -d ' \n' | sha256sum | cut -d' ' -f1)"
expect_eq "hexdecode of it gives the bytes back" "$(line cli.hexrt)" true

# errors raised in the iteration, caught by pcall
expect_match "b64decode: std needs padding" "$OUT" '^err\.b64std\|false .*encoding\.b64decode: invalid base64 input \(std\)$'
expect_match "b64decode: rawstd rejects padding" "$OUT" '^err\.b64raw\|false .*encoding\.b64decode: invalid base64 input \(rawstd\)$'
expect_match "b64decode: url rejects /" "$OUT" '^err\.b64url\|false .*encoding\.b64decode: invalid base64 input \(url\)$'
expect_match "b64decode: bad characters" "$OUT" '^err\.b64chars\|false .*invalid base64 input \(std\)$'
expect_match "unknown variant" "$OUT" "^err\.variant\|false .*encoding\.b64encode: unknown variant 'base32' \(expected std, rawstd, url, rawurl\)$"
expect_match "unknown format" "$OUT" "^err\.format\|false .*encoding\.b64decode: unknown format 'b'"
expect_match "hexdecode: odd length" "$OUT" '^err\.hexodd\|false .*encoding\.hexdecode: odd length \(3\)$'
expect_match "hexdecode: non-hex" "$OUT" '^err\.hexbad\|false .*encoding\.hexdecode: invalid hex digit at byte 1$'
expect_match "unknown output encoding" "$OUT" "^err\.enc\|false .*crypto\.sha256: unknown output encoding 'base32'"
expect_match "unknown algorithm" "$OUT" "^err\.algo\|false .*crypto\.create_hash: unknown algorithm 'md4' \(expected md5, sha1, sha256, sha384, sha512\)$"
expect_match "random_bytes above 65536" "$OUT" '^err\.rbbig\|false .*crypto\.random_bytes: size must be an integer from 0 to 65536, got 65537$'
expect_match "random_bytes below 0" "$OUT" '^err\.rbneg\|false .*crypto\.random_bytes: size must be an integer from 0 to 65536'

# errors in init code stop the run: exit 107 with the message
bad() { # NAME LUA-CALL
  script "$1.lua" <<LUA >/dev/null
local encoding = require("luaload.encoding")
local crypto = require("luaload.crypto")
local x = $2
function default() end
LUA
  run_ll run "$T/$1.lua" -i 1 -q --no-summary
}
bad badalgo 'crypto.hmac("md4", "k", "d")'
expect_eq "unknown hmac algorithm at init: exit 107" "$RC" 107
expect_match "unknown hmac algorithm at init: the message" "$ERR" \
  "badalgo.lua:3: crypto.hmac: unknown algorithm 'md4' \(expected md5, sha1, sha256, sha384, sha512\)"
bad badb64 'encoding.b64decode("@@@@", "url")'
expect_eq "invalid base64 at init: exit 107" "$RC" 107
expect_match "invalid base64 at init: the message" "$ERR" "badb64.lua:3: encoding.b64decode: invalid base64 input \(url\)"
finish
