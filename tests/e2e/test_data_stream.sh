#!/usr/bin/env bash
# luaload.data's data.stream: one cursor for every worker (each row once,
# counted by the server's --echo-header, not by the script), rows split
# between --shard parts run as separate processes, circular wrapping,
# random's window, JSON lines, gzip and zstd (and concatenated gzip
# members), errors naming the file and line, on_end's three behaviours and
# the option errors.
source "$(dirname "$0")/lib.sh"

# stats FILTER: a jq filter on the server's GET /stats
stats() { curl -s "$URL/stats" | jq -c -r "$1"; }
restart() {
  [[ -n $SERVE_PID ]] && stop_pid "$SERVE_PID"
  SERVE_PID=
  start_serve "$@"
}

# users.csv: a header, 2000 rows (ids u1..u2000), some quoted with a comma,
# a quote or a line break inside, CRLF line ends, empty lines between
N=2000
{
  printf 'id,name\r\n'
  for ((i = 1; i <= N; i++)); do
    case $((i % 4)) in
      0) printf 'u%d,"a, b"\r\n' "$i" ;;
      1) printf 'u%d,"say ""hi"""\r\n' "$i" ;;
      2) printf 'u%d,"two\nlines"\r\n' "$i" ;;
      3) printf 'u%d,plain\r\n\r\n' "$i" ;;
    esac
  done
} >"$T/users.csv"

# uniq_script FILE [OPTIONS]: uniq-FILE.lua: each iteration sends its row's id in X-Row, and
# checks the fields came out whole
uniq_script() {
  local opts=${2:-"{ header = true }"}
  script "uniq-$(basename "$1").lua" <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local data = require("luaload.data")
local rows = data.stream("$1", $opts)
function default()
  local row = rows:next()
  local n = tonumber(row.id:sub(2)) % 4
  local want = ({ [0] = "a, b", [1] = 'say "hi"', [2] = "two\nlines", [3] = "plain" })[n]
  ll.check(row, { ["fields whole"] = function(r) return r.name == want end })
  http.get("$URL/", { headers = { ["X-Row"] = row.id } })
end
LUA
}

# ---- unique over 4 workers: each row once, then the scenarios end ----
start_serve --echo-header X-Row
S=$(uniq_script "$T/users.csv")
run_ll run "$S" -w 4 -u 16 -i 5000 --summary-export "$T/s.json" -q
expect_eq "4 workers: exit 0" "$RC" 0
expect_eq "4 workers: each row once (requests, distinct)" \
  "$(stats '.headers["x-row"] | "\(.requests) \(.distinct) \(.distinct_exact)"')" "$N $N true"
expect_eq "4 workers: fields whole" "$(passes checks)" "$N"
expect_match "4 workers: the end is told" "$ERR" "luaload.data.stream: '.*users.csv': no rows left \(unique\): the scenarios end"
expect_eq "4 workers: no script error" "$(grep -c 'error\|Error' "$ERR")" 0
expect_cmp "4 workers: ended early, not at 5000 iterations" "x == $N" "$(cnt iterations)"

# ---- unique over 4 shards, 4 processes at once ----
restart --echo-header X-Row
S=$(uniq_script "$T/users.csv") # the new server's URL
pids=()
for i in 1 2 3 4; do
  timeout -k 5 60 "$LUALOAD" run "$S" --shard "$i/4" -w 2 -u 8 -i 4000 -q >"$T/shard$i.out" 2>"$T/shard$i.err" &
  pids+=($!)
done
rcs=""
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
expect_eq "4 shards: exit 0 each" "$rcs" "0000"
expect_eq "4 shards: each row once over all parts" \
  "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "$N $N"

# ---- circular: wraps (past the BOM again); each part cycles over its own rows ----
{ printf '\xEF\xBB\xBF'; seq -f 'r%g' 1 10 | sed '1i id'; } >"$T/ten.csv" # a UTF-8 BOM before the header
circ() {
  script "circ$1.lua" <<LUA
local http = require("luaload.http")
local rows = require("luaload.data").stream("$T/ten.csv", { header = true, mode = "circular" })
function default()
  local row = rows:next()
  print(row.id)
  http.get("$URL/", { headers = { ["X-Row"] = row.id, ["$1"] = row.id } })
end
LUA
}
restart --echo-header X-Row --echo-header X-A --echo-header X-B
run_ll run "$(circ X-A)" -w 2 -u 2 -i 25 -q
expect_eq "circular: exit 0" "$RC" 0
expect_eq "circular: 25 requests over the 10 rows" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "25 10"
run_ll run "$(circ X-A)" -w 1 -u 1 -i 12 -q
expect_eq "circular: in file order, then again from the top" "$(grep '^r[0-9]' "$OUT" | tr '\n' ' ')" "r1 r2 r3 r4 r5 r6 r7 r8 r9 r10 r1 r2 "
restart --echo-header X-Row --echo-header X-A --echo-header X-B
run_ll run "$(circ X-A)" --shard 1/2 -u 2 -i 20 -q # 10 iterations each
run_ll run "$(circ X-B)" --shard 2/2 -u 2 -i 20 -q
expect_eq "circular shards: each part cycles over its own 5 rows" \
  "$(stats '[.headers["x-a"].distinct, .headers["x-b"].distinct, .headers["x-a"].requests, .headers["x-row"].distinct] | join(" ")')" \
  "5 5 10 10"

# ---- random: a window of rows, each drawn once per pass ----
seq -f 'r%g' 1 100 | sed '1i id' >"$T/hundred.csv"
restart --echo-header X-Row
S=$(script random.lua <<LUA
local http = require("luaload.http")
local rows = require("luaload.data").stream("$T/hundred.csv", { header = true, mode = "random", window = 10 })
function default()
  local row = rows:next()
  print(row.id)
  http.get("$URL/", { headers = { ["X-Row"] = row.id } })
end
LUA
)
run_ll run "$S" -w 1 -u 1 -i 1000 -q
expect_eq "random: exit 0" "$RC" 0
expect_eq "random: every row drawn" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "1000 100"
expect_eq "random: each row 9 to 11 times (once per pass)" "$(grep '^r[0-9]' "$OUT" | sort | uniq -c | awk '$1 < 9 || $1 > 11' | wc -l)" 0
expect_eq "random: not in file order" "$(grep '^r[0-9]' "$OUT" | head -20 | tr '\n' ' ' | grep -c '^r1 r2 r3 r4 r5 r6 r7 r8 r9 r10 ')" 0

# ---- JSON lines, gzip, zstd ----
restart --echo-header X-Row
for ((i = 1; i <= 500; i++)); do
  printf '{"id": "j%d", "n": %d, "tags": ["a", null]}\n' "$i" "$i"
  ((i % 100 == 0)) && printf '\n'
done >"$T/rows.jsonl"
S=$(script jsonl.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local json = require("luaload.json")
local rows = require("luaload.data").stream("$T/rows.jsonl")
function default()
  local row = rows:next()
  ll.check(row, { ["decoded"] = function(r) return r.id == "j" .. r.n and r.tags[2] == json.null end })
  http.get("$URL/", { headers = { ["X-Row"] = row.id } })
end
LUA
)
run_ll run "$S" -w 2 -u 4 -i 600 --summary-export "$T/s.json" -q
expect_eq "jsonl: each line once" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "500 500"
expect_eq "jsonl: values decoded (json.null)" "$(passes checks)" 500

gzip -c "$T/users.csv" >"$T/users.csv.gz"
zstd -q -c "$T/users.csv" >"$T/users.csv.zst"
# concatenated gzip members: the first half, then the second
head -n 1500 "$T/users.csv" | gzip -c >"$T/halves.csv.gz"
tail -n +1501 "$T/users.csv" | gzip -c >>"$T/halves.csv.gz"
cp "$T/users.csv.zst" "$T/zstd-named.data"
for f in users.csv.gz users.csv.zst halves.csv.gz zstd-named.data; do
  restart --echo-header X-Row
  opts='{ header = true }'
  [[ $f == *.data ]] && opts='{ header = true, format = "csv" }'
  run_ll run "$(uniq_script "$T/$f" "$opts")" -w 2 -u 4 -i 3000 --summary-export "$T/s.json" -q
  expect_eq "$f: exit 0" "$RC" 0
  expect_eq "$f: each row once" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"') $(passes checks)" "$N $N $N"
done
gzip -c "$T/ten.csv" >"$T/ten.csv.gz"
zstd -q -c "$T/ten.csv" >"$T/ten.csv.zst"
for f in ten.csv.gz ten.csv.zst; do
  restart --echo-header X-Row --echo-header X-A
  sed "s|$T/ten.csv|$T/$f|" "$(circ X-A)" >"$T/circ-$f.lua"
  run_ll run "$T/circ-$f.lua" -w 2 -u 2 -i 25 -q
  expect_eq "$f circular: exit 0, read again at each pass" "$RC $(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "0 25 10"
done
head -c 5000 "$T/users.csv.gz" >"$T/cut.csv.gz"
S=$(script cut.lua <<LUA
local rows = require("luaload.data").stream("$T/cut.csv.gz", { header = true })
function default() rows:next() end
LUA
)
run_ll run "$S" -u 1 -i 3000 -q
expect_match "gzip cut short: told" "$ERR" "luaload.data.stream: '.*cut.csv.gz': the gzip data is cut short"

# ---- a bad row names the file and line ----
printf 'id,name\nu1,a\nu2,"b\nc"\nu3,c,extra\nu4,d\n' >"$T/bad.csv"
S=$(script bad.lua <<LUA
local rows = require("luaload.data").stream("bad.csv", { header = true })
function default() rows:next() end
LUA
)
run_ll run "$S" -u 1 -i 3 -q
expect_match "bad row: file and line (after a quoted line break)" "$ERR" \
  "luaload.data.stream: 'bad.csv' line 5: more fields than the header's 2"
printf '{"a": 1}\n{"a": 2,}\n' >"$T/bad.jsonl"
S=$(script badj.lua <<LUA
local rows = require("luaload.data").stream("$T/bad.jsonl")
function default() rows:next() end
LUA
)
run_ll run "$S" -u 1 -i 2 -q
expect_match "bad JSON line: file and line" "$ERR" "luaload.data.stream: '.*bad.jsonl' line 2, column [0-9]+: invalid JSON"

printf 'id\n' >"$T/empty.csv"
seq -f 'r%g' 1 3 | sed '1i id' >"$T/three.csv"
S=$(script none.lua <<LUA
local rows = require("luaload.data").stream(__ENV.FILE, { header = true, mode = "circular" })
function default() rows:next() end
LUA
)
run_ll run "$S" -e FILE="$T/empty.csv" -u 1 -i 1 -q
expect_match "circular, no rows: told" "$ERR" "'.*empty.csv': no rows to draw: the file has no rows"
run_ll run "$S" -e FILE="$T/three.csv" --shard 4/4 -u 4 -i 8 -q # part 4 owns row index 3 on
expect_match "circular, a part with none of 3 rows: told" "$ERR" \
  "'.*three.csv': no rows to draw: this part of the split test owns none of its 3 rows"

# ---- on_end ----
restart --echo-header X-Row --echo-header X-Nil
seq -f 'r%g' 1 30 | sed '1i id' >"$T/thirty.csv"
onend() {
  script "onend-$1.lua" <<LUA
local http = require("luaload.http")
local rows = require("luaload.data").stream("$T/thirty.csv", { header = true, on_end = "$1" })
function default()
  local row = rows:next()
  if row == nil then http.get("$URL/", { headers = { ["X-Nil"] = "1" } }) return end
  http.get("$URL/", { headers = { ["X-Row"] = row.id } })
end
LUA
}
run_ll run "$(onend nil)" -w 2 -u 2 -i 50 --summary-export "$T/s.json" -q
expect_eq "on_end nil: exit 0" "$RC" 0
expect_eq "on_end nil: 30 rows, then nil 20 times" \
  "$(stats '[.headers["x-row"].requests, .headers["x-row"].distinct, .headers["x-nil"].requests] | join(" ")')" "30 30 20"
restart --echo-header X-Row
run_ll run "$(onend raise)" -w 2 -u 2 -i 50 --summary-export "$T/s.json" -q
expect_eq "on_end raise: 30 rows" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "30 30"
expect_match "on_end raise: the error" "$ERR" "luaload.data.stream: '.*thirty.csv': no rows left \(unique\)"
expect_eq "on_end raise: the run goes on (50 iterations)" "$(cnt iterations)" 50
restart --echo-header X-Row
run_ll run "$(onend stop)" -w 2 -u 2 -d 30s -q
expect_eq "on_end stop: exit 0" "$RC" 0
expect_cmp "on_end stop: a 30 s test ends when the rows do" "x < 10" "$ELAPSED"
expect_eq "on_end stop: 30 rows" "$(stats '.headers["x-row"] | "\(.requests) \(.distinct)"')" "30 30"
S=$(script setup.lua <<LUA
local rows = require("luaload.data").stream("$T/thirty.csv", { header = true })
function setup() for i = 1, 31 do rows:next() end end
function default() end
LUA
)
run_ll run "$S" -u 1 -i 1 -q
expect_eq "on_end stop in setup(): raises (exit 107)" "$RC" 107
expect_match "on_end stop in setup(): the error" "$ERR" "no rows left \(unique\)"

# ---- option and call errors ----
bad_call() { # NAME EXPR REGEX
  local s
  s=$(script call.lua <<LUA
local data = require("luaload.data")
$2
function default() end
LUA
)
  run_ll run "$s" -u 1 -i 1 -q
  expect_match "$1" "$ERR" "$3"
}
bad_call "format from the name" 'data.stream("'"$T"'/x.txt")' "cannot tell the format from the name"
bad_call "unknown option" 'data.stream("'"$T"'/ten.csv", { sep = ";" })' "unknown option 'sep'"
bad_call "bad mode" 'data.stream("'"$T"'/ten.csv", { mode = "once" })' 'mode must be "unique", "circular" or "random", got once'
bad_call "missing file" 'data.stream("'"$T"'/none.csv")' "cannot read '.*none.csv': No such file"
bad_call "next() in init code" 'data.stream("'"$T"'/ten.csv"):next()' "reader:next\(\) is for setup, default and teardown, not init code"
bad_call "jsonl with header" 'data.stream("'"$T"'/rows.jsonl", { header = true })' "header and separator are for CSV"
bad_call "window" 'data.stream("'"$T"'/ten.csv", { mode = "random", window = 0 })' "window must be a whole number"

finish
