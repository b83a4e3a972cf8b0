#!/usr/bin/env bash
# Outputs that fail say so: a full disk (/dev/full, and a 64 KiB tmpfs in a
# mount namespace of its own) is reported for json and csv, plain and gzip,
# small (nothing written before the end) or large; --out html into a missing
# directory stops the run before it starts with 104, as every output; long
# URLs and tags are written whole in json and csv.
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8
start_serve

S=$(script small.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/") end
LUA
)
# /dev/full under each output's name: every write (and flush, and close) fails
for f in full.json full.json.gz full.csv full.csv.gz; do
  ln -s /dev/full "$T/$f"
  type=${f#*.} && type=${type%%.*}
  run_ll run "$S" -i 1 -q --no-summary -o "$type=$T/$f"
  spec="$type=$T/$f"
  expect_eq "disk full, a tiny $f: the run itself exits 0" "$RC" 0
  expect_match "disk full, a tiny $f: warned, naming the output and why" "$ERR" \
    "^luaload: warning: output ${spec//./\\.}: write failed: No space left on device"
done
S2=$(script big.lua <<LUA
local http = require("luaload.http")
local client = http.Client{}
function default() client:get("$URL/") end
LUA
)
ln -s /dev/full "$T/big.json"
run_ll run "$S2" -i 3000 -q --no-summary -o "json=$T/big.json"
expect_match "disk full, a large json: warned once" "$ERR" "^luaload: warning: output json=.*big\\.json: write failed: No space left on device"
expect_eq "disk full, a large json: one line" "$(grep -c 'big.json: write failed' "$ERR")" 1

# a real file system that fills up half way: 64 KiB of tmpfs, its own mount
# namespace (root; nothing outside sees it; unmounted at the end, for a
# chroot, where it may propagate: unshare_mounts.sh)
source "$(dirname "$0")/unshare_mounts.sh"
mkdir "$T/small"
for f in x.json x.json.gz x.csv; do
  type=${f#*.} && type=${type%%.*}
  timeout 60 unshare -m "${LL_UNSHARE_PROPAGATION[@]}" sh -c "mount -t tmpfs -o size=64k tmpfs '$T/small' && \
    '$LUALOAD' run '$S2' -i 2000 -q --no-summary -o '$type=$T/small/$f'; echo \$? >'$T/rc'; ls -l '$T/small' >'$T/ls'; \
    umount '$T/small'" \
    >"$T/out.txt" 2>"$T/err.txt"
  ERR=$T/err.txt
  expect_eq "tmpfs full, $f: the run exits 0" "$(cat "$T/rc")" 0
  expect_match "tmpfs full, $f: warned" "$ERR" "^luaload: warning: output $type=.*small/${f//./\\.}: write failed: No space left on device"
done

# --out html into a directory that does not exist: 104 at once, naming it
S3=$(script slow.lua <<'LUA'
local ll = require("luaload")
function default() ll.sleep(5) end
LUA
)
run_ll run "$S3" -i 1 -q --out "html=$T/no/such/dir/r.html"
expect_eq "html into a missing directory: exit 104" "$RC" 104
expect_cmp "html into a missing directory: before the test (under 4 s)" "x < 4" "$ELAPSED"
expect_match "html into a missing directory: says so, naming the output" "$ERR" \
  "^luaload: --out html=$T/no/such/dir/r\\.html: cannot write .*: No such file or directory"
touch "$T/afile"
run_ll run "$S3" -i 1 -q --out "html=$T/afile/r.html"
expect_eq "html under a file: exit 104" "$RC" 104
expect_match "html under a file: says why" "$ERR" "cannot write .*afile/r\\.html: Not a directory"

# long URLs and tags: written whole
LONG=$(printf 'a%.0s' $(seq 3000))
TAG=$(printf 'b%.0s' $(seq 2500))
S4=$(script long.lua <<LUA
local http = require("luaload.http")
function default() http.get("$URL/$LONG", { tags = { long = "$TAG", name = "long" } }) end
LUA
)
run_ll run "$S4" -i 1 -q --no-summary -o "json=$T/long.json" -o "csv=$T/long.csv"
expect_eq "long: exit 0" "$RC" 0
expect_eq "long: json url whole" "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.url' "$T/long.json")" "$URL/$LONG"
expect_eq "long: json tag whole" "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.long' "$T/long.json")" "$TAG"
expect_eq "long: csv url column whole" "$(grep '^http_reqs,' "$T/long.csv" | cut -d, -f17)" "$URL/$LONG"
expect_eq "long: csv extra_tags whole" "$(grep '^http_reqs,' "$T/long.csv" | cut -d, -f18 | tr '&' '\n' | sed -n 's/^long=//p')" "$TAG"
finish
