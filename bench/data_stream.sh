#!/usr/bin/env bash
# data_stream.sh -- data.stream's rows per second per core in each mode, and
# the peak RSS while reading a file far larger than memory would hold.
#
# Generates a CSV of SIZE_GB (default 10) in $TMPDIR (a header and rows of
# about 60 bytes: an id, a name, a quoted field with a comma, a number),
# then runs luaload with one worker and one VU whose iterations call
# rows:next() 1,000 times each (no requests: the reader's cost alone,
# parsing each row into a table keyed by the header):
#   unique   the whole big file, each row once (on_end = "stop" ends the run)
#   circular ROWS rows of a 100 MB copy of its start
#   random   the same with the default window (4096 rows)
#   gzip     unique over the 100 MB copy gzip'd
#   zstd     unique over the 100 MB copy zstd'd
#   jsonl    unique over the 100 MB copy as JSON lines
#   unique-2w  unique over the 100 MB copy with 2 workers sharing the cursor
# and prints rows/s of wall time, rows per CPU second (user + system) and
# the peak RSS (GNU time). The files are deleted at the end.
#
# Knobs: SIZE_GB(10) ROWS(20000000) LUALOAD(build/luaload) TMPDIR(/tmp) CPU(1)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
SIZE_GB=${SIZE_GB:-10}
ROWS=${ROWS:-20000000}
CPU=${CPU:-1}
[[ -x $LUALOAD ]] || { echo "data_stream.sh: build luaload first" >&2; exit 2; }
SCR=$(mktemp -d -p "${TMPDIR:-/tmp}" luaload-data-stream.XXXXXX)
trap 'rm -rf "$SCR"' EXIT
trap 'exit 130' INT TERM
avail_gb=$(df -P -BG "$SCR" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
if ((avail_gb < SIZE_GB + 3)); then
  SIZE_GB=$((avail_gb - 3))
  echo "data_stream.sh: only ${avail_gb} GB free: a ${SIZE_GB} GB file" >&2
  ((SIZE_GB >= 1)) || exit 1
fi

# a 64 MiB block of rows (ids 0..n), repeated up to SIZE_GB
python3 - "$SCR/block.csv" <<'PY'
import sys
out = open(sys.argv[1], "w")
i, size = 0, 0
while size < 64 * 1024 * 1024:
    line = 'u%09d,name-%09d,"city, %d",%d\n' % (i, i, i % 1000, i % 97)
    out.write(line)
    size += len(line)
    i += 1
PY
BIG=$SCR/big.csv
echo "id,name,city,n" >"$BIG"
blocks=$((SIZE_GB * 16))
for ((b = 0; b < blocks; b++)); do cat "$SCR/block.csv"; done >>"$BIG"
big_rows=$((blocks * $(wc -l <"$SCR/block.csv")))
SMALL=$SCR/small.csv
head -c 100000000 "$BIG" | head -n -1 >"$SMALL"
small_rows=$(($(wc -l <"$SMALL") - 1))
gzip -1 -c "$SMALL" >"$SMALL.gz"
zstd -q -c "$SMALL" >"$SMALL.zst"
tail -n +2 "$SMALL" | awk -F, '{ printf "{\"id\":\"%s\",\"name\":\"%s\",\"n\":%s}\n", $1, $2, $NF }' >"$SCR/small.jsonl"

cat >"$SCR/read.lua" <<'LUA'
local data = require("luaload.data")
local opts = { mode = __ENV.MODE }
if __ENV.FILE:find("%.csv") then opts.header = true end
local rows = data.stream(__ENV.FILE, opts)
function default()
  for _ = 1, 1000 do rows:next() end
end
LUA

# case_run NAME ROWS FILE MODE: one run (VUS, WORKERS: 1), one line
printf '%-10s %12s %10s %14s %10s %10s\n' case rows wall_s rows/s rows/cpu_s peak_RSS
case_run() {
  local name=$1 rows=$2 file=$3 mode=$4
  local iters=$(((rows + 999) / 1000 + 1))
  /usr/bin/time -f '%e %U %S %M' -o "$SCR/time" taskset -c "$CPU" "$LUALOAD" run "$SCR/read.lua" -q --no-summary \
    -e FILE="$file" -e MODE="$mode" -u "${VUS:-1}" -w "${WORKERS:-1}" -i "$iters" >/dev/null 2>"$SCR/err" ||
    { echo "$name: failed: $(tail -3 "$SCR/err")" >&2; return; }
  read -r wall user sys rss <"$SCR/time"
  awk -v n="$name" -v r="$rows" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN {
    printf "%-10s %12d %10.1f %14.0f %10.0f %8.1f MB\n", n, r, w, r / w, r / (u + s), m / 1024 }'
}
case_run unique "$big_rows" "$BIG" unique
case_run circular "$ROWS" "$SMALL" circular
case_run random "$ROWS" "$SMALL" random
case_run gzip "$small_rows" "$SMALL.gz" unique
case_run zstd "$small_rows" "$SMALL.zst" unique
case_run jsonl "$small_rows" "$SCR/small.jsonl" unique
# two workers drawing from one cursor: CPU over both cores (taskset -c 0,1)
CPU=0,1 VUS=2 WORKERS=2 case_run unique-2w "$small_rows" "$SMALL" unique
echo "file: $((SIZE_GB)) GB, $big_rows rows ($(du -h "$BIG" | cut -f1)); 100 MB copy: $small_rows rows"
