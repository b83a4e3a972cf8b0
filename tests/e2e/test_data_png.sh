#!/usr/bin/env bash
# luaload.data (data.csv, data.json: read once in init code, read-only) and
# http.RandomPNG (a new valid PNG of noise per call): values seen from
# default(), writes that raise, bad files that stop the run with exit 107
# naming the file and line, PNGs checked byte by byte with python3 (zlib
# only: signature, chunk CRCs, IHDR, the inflated rows), sizes, --seed.
source "$(dirname "$0")/lib.sh"
start_serve

# RFC 4180: a header, "" inside quotes, a separator and a line break inside
# quotes, CRLF line ends, an empty line (skipped), no line break at the end
printf 'name,quote,note\r\nalice,"she said ""hi""","two\nlines"\r\nbob,plain,\r\n\r\n"x,y",2,3' >"$T/users.csv"
printf 'a;b\n1;"2;3"\n' >"$T/semi.csv"
cat >"$T/conf.json" <<'JSON'
{ "users": [ { "id": 1, "tags": ["a", "b"] }, { "id": 2, "tags": [] } ],
  "limit": 2.5, "none": null, "on": true }
JSON

S=$(script data.lua <<LUA
local data = require("luaload.data")
local json = require("luaload.json")
local http = require("luaload.http")
local rows = data.csv("users.csv", { header = true })
local raw = data.csv("users.csv")
local semi = data.csv("$T/semi.csv", { separator = ";" })
local conf = data.json("conf.json")
local function out(...) io.write(table.concat({ ... }, "|"), "\n") end
local function err(f) local ok, e = pcall(f); return ok and "no error" or e end
function default()
  out("rows", #rows, rows[1].name, rows[1].quote, rows[1].note:gsub("\n", "\\\\n"), rows[2].note == "" and "empty" or "?",
      rows[3].name, rows[3].note)
  local n, cols = 0, 0
  for _, r in ipairs(rows) do n = n + 1 end
  for _ in pairs(rows[1]) do cols = cols + 1 end
  out("iter", n, cols, json.decode(json.encode(rows[2])).quote)
  out("raw", #raw, #raw[1], raw[1][1], raw[4][1], semi[2][2])
  out("json", #conf.users, conf.users[1].tags[2], #conf.users[2].tags, conf.limit, tostring(conf.none == json.null), tostring(conf.on))
  out("w1", err(function() rows[1].extra = 1 end))
  out("w2", err(function() rows[#rows + 1] = {} end))
  out("w3", err(function() conf.users[1].tags[3] = "c" end))
  out("w4", err(function() setmetatable(rows, nil) end))
  out("mt", getmetatable(conf))
  out("late", err(function() data.csv("users.csv") end))
end
LUA
)
run_ll run "$S" -u 1 -i 1 -q --no-summary
expect_eq "data: exit 0" "$RC" 0
[[ -s $ERR ]] && cat "$ERR"
line() { grep "^$1|" "$OUT" | head -1; }
expect_eq "csv rows keyed by the header, quotes and line breaks inside quotes" "$(line rows)" \
  'rows|3|alice|she said "hi"|two\nlines|empty|x,y|3'
expect_eq "ipairs, pairs and json.encode see the rows" "$(line iter)" "iter|3|3|plain"
expect_eq "csv without a header: lists of strings; separator" "$(line raw)" "raw|4|3|name|x,y|2;3"
expect_eq "json values" "$(line json)" "json|2|b|0|2.5|true|true"
expect_eq "adding a field to a row raises" "$(line w1)" "w1|$S:19: luaload.data: the data is read-only"
expect_eq "appending a row raises" "$(line w2)" "w2|$S:20: luaload.data: the data is read-only"
expect_eq "writing into nested json raises" "$(line w3)" "w3|$S:21: luaload.data: the data is read-only"
expect_eq "the metatable is protected" "$(line w4)" "w4|$S:22: cannot change a protected metatable"
expect_eq "getmetatable says what it is" "$(line mt)" "mt|luaload.data (read-only)"
expect_eq "data.csv only in init code" "$(line late)" \
  "late|$S:24: luaload.data.csv: only available in init code (outside setup, default and teardown)"

# bad files stop the run at init: exit 107 with the file and the place
bad() { # NAME LUA-CALL
  script "$1.lua" <<LUA >/dev/null
local data = require("luaload.data")
local x = $2
function default() end
LUA
  run_ll run "$T/$1.lua" -u 1 -i 1 -q --no-summary
}
printf 'id,text\n1,ok\n2,"never closed\n3,x\n' >"$T/bad.csv"
bad badcsv 'data.csv("bad.csv", { header = true })'
expect_eq "unterminated quote: exit 107" "$RC" 107
expect_match "unterminated quote: file, line and column" "$ERR" \
  "badcsv.lua:2: luaload.data.csv: 'bad.csv' line 3, column 3: the quote that opens this field is never closed"
printf 'a,b\n1,2\n3\n' >"$T/short.csv"
bad shortcsv 'data.csv("short.csv", { header = true })'
expect_match "a row shorter than the header" "$ERR" "'short.csv' line 3: 1 field where the header has 2"
bad missing 'data.csv("missing.csv")'
expect_eq "missing file: exit 107" "$RC" 107
expect_match "missing file: the message" "$ERR" "luaload.data.csv: cannot read 'missing.csv': No such file or directory"
printf '{\n  "a": [1, 2,\n  }\n' >"$T/bad.json"
bad badjson 'data.json("bad.json")'
expect_eq "bad json: exit 107" "$RC" 107
expect_match "bad json: file, line and column" "$ERR" "luaload.data.json: 'bad.json' line 3, column 3: invalid JSON at byte 18"
printf '{"a":1}\n{"a":2}\n' >"$T/lines.json"
bad jsonlines 'data.json("lines.json")'
expect_match "a second JSON value is an error" "$ERR" "'lines.json' line 2, column 1: text after the JSON value"
bad badopt 'data.csv("users.csv", { headers = true })'
expect_match "an unknown csv option" "$ERR" "luaload.data.csv: unknown option 'headers'"

# RandomPNG: valid PNGs of the asked dimensions or size, new bytes each call
P=$(script png.lua <<LUA
local http = require("luaload.http")
local function save(name, s) local f = assert(io.open("$T/" .. name, "wb")); f:write(s); f:close() end
local function err(f) local ok, e = pcall(f); return ok and "no error" or e end
local at_init = http.RandomPNG{ width = 2, height = 2 }
function default()
  save("a.png", http.RandomPNG{ width = 37, height = 23 })
  save("b.png", http.RandomPNG{ width = 37, height = 23 })
  save("one.png", http.RandomPNG{ width = 1, height = 1 })
  save("s100.png", http.RandomPNG{ size = 100 })
  save("s50k.png", http.RandomPNG{ size = "50KB" })
  save("s3m.png", http.RandomPNG{ size = "3MB" })
  save("wide.png", http.RandomPNG{ width = 16384, height = 1 })
  local png = http.RandomPNG{ size = 20000 }
  local res = http.post("$URL/echo", png)
  io.write("echo|", tostring(res.status == 200 and res.body == png), "\n")
  io.write("e1|", err(function() http.RandomPNG{ width = 0, height = 5 } end), "\n")
  io.write("e2|", err(function() http.RandomPNG{ width = 5, height = 16385 } end), "\n")
  io.write("e3|", err(function() http.RandomPNG{ size = 99 } end), "\n")
  io.write("e4|", err(function() http.RandomPNG{ size = "257MiB" } end), "\n")
  io.write("e5|", err(function() http.RandomPNG{ size = "lots" } end), "\n")
  io.write("e6|", err(function() http.RandomPNG{ width = 5, height = 5, color = "red" } end), "\n")
  io.write("e7|", err(function() http.RandomPNG{ width = 5 } end), "\n")
  io.write("e8|", err(function() http.RandomPNG{ width = 5, height = 5, size = 1000 } end), "\n")
  io.write("e9|", err(function() http.RandomPNG("640x480") end), "\n")
end
LUA
)
run_ll run "$P" -u 1 -i 1 -q --no-summary --seed 7
expect_eq "png: exit 0" "$RC" 0
[[ -s $ERR ]] && cat "$ERR"
cat >"$T/checkpng.py" <<'PY'
import struct, sys, zlib
def check(path, w=None, h=None):
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", "signature"
    pos, chunks, idat = 8, [], b""
    while pos < len(b):
        n, kind = struct.unpack(">I4s", b[pos:pos + 8])
        body = b[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", b[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xffffffff, "CRC of " + kind.decode()
        chunks.append(kind)
        if kind == b"IHDR": iw, ih, depth, color, comp, filt, inter = struct.unpack(">IIBBBBB", body)
        if kind == b"IDAT": idat += body
        pos += 12 + n
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks, chunks
    assert (depth, color, comp, filt, inter) == (8, 2, 0, 0, 0), "8-bit RGB"
    assert (w is None or iw == w) and (h is None or ih == h), "%dx%d" % (iw, ih)
    rows = zlib.decompress(idat)
    assert len(rows) == ih * (1 + 3 * iw), "inflated %d bytes" % len(rows)
    assert all(rows[y * (1 + 3 * iw)] <= 4 for y in range(ih)), "filter bytes"
    return len(b)
for arg in sys.argv[1:]:
    path, _, dims = arg.partition("=")
    w, h = (int(x) for x in dims.split("x")) if dims else (None, None)
    try:
        print("%s ok %d" % (path.rsplit("/", 1)[-1], check(path, w, h)))
    except Exception as e:
        print("%s FAIL %r" % (path.rsplit("/", 1)[-1], e))
PY
python3 "$T/checkpng.py" "$T/a.png=37x23" "$T/b.png=37x23" "$T/one.png=1x1" "$T/s100.png" "$T/s50k.png" "$T/s3m.png" \
  "$T/wide.png=16384x1" >"$T/png.txt" 2>&1
for f in a b one s100 s50k s3m wide; do expect_match "$f.png is a valid PNG" "$T/png.txt" "^$f.png ok "; done
size_of() { sed -n "s/^$1.png ok //p" "$T/png.txt"; }
expect_cmp "size = 100: within 10%" "x >= 90 && x <= 110" "$(size_of s100)"
expect_cmp "size = 50KB: within 10%" "x >= 0.9 * 51200 && x <= 1.1 * 51200" "$(size_of s50k)"
expect_cmp "size = 3MB: within 10%" "x >= 0.9 * 3145728 && x <= 1.1 * 3145728" "$(size_of s3m)"
if cmp -s "$T/a.png" "$T/b.png"; then not_ok "two calls give different bytes"; else ok "two calls give different bytes"; fi
expect_match "a PNG as a body comes back from /echo intact" "$OUT" "^echo\|true$"
expect_match "width 0" "$OUT" "^e1\|$P:[0-9]+: http.RandomPNG: width must be an integer from 1 to 16384, got 0$"
expect_match "height over 16384" "$OUT" "^e2\|.*height must be an integer from 1 to 16384, got 16385$"
expect_match "size under 100 bytes" "$OUT" "^e3\|.*size must be from 100 bytes to 256MiB, got 99$"
expect_match "size over 256MiB" "$OUT" "^e4\|.*size must be from 100 bytes to 256MiB, got '257MiB'$"
expect_match "size not a size" "$OUT" "^e5\|.*size must be a number of bytes or a string such as \"200KB\", got 'lots'$"
expect_match "unknown option" "$OUT" "^e6\|.*http.RandomPNG: unknown option 'color'$"
expect_match "width without height" "$OUT" "^e7\|.*needs both width and height \(or size\)$"
expect_match "dimensions and size" "$OUT" "^e8\|.*give width and height, or size, not both$"
expect_match "not a table" "$OUT" "^e9\|.*expected a table such as \{ width = 640, height = 480 \} or \{ size = \"200KB\" \}, got string$"

# the noise follows the VU's math.random: the same --seed, the same PNG
cp "$T/a.png" "$T/a1.png"
run_ll run "$P" -u 1 -i 1 -q --no-summary --seed 7
if cmp -s "$T/a.png" "$T/a1.png"; then ok "--seed repeats the PNGs"; else not_ok "--seed repeats the PNGs"; fi
run_ll run "$P" -u 1 -i 1 -q --no-summary --seed 8
if cmp -s "$T/a.png" "$T/a1.png"; then not_ok "another seed, other PNGs"; else ok "another seed, other PNGs"; fi
finish
