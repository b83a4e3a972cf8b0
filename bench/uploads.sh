#!/usr/bin/env bash
# uploads.sh -- the memory proof of streaming uploads: VUS VUs each
# uploading a 1 GiB file (sparse, made here) to `luaload serve` for DUR
# seconds, against the same run uploading 1 KiB; the same with the file as
# a multipart form part. For each run: luaload's peak RSS (GNU time),
# requests, data_sent (cut-off uploads count what went out) and the bytes
# serve received (its /stats). The target: the 1 GiB runs' peak RSS within
# 64 MiB of the 1 KiB runs'.
#
# serve runs on SERVER_CPU, luaload on CLIENT_CPU with one worker.
# Knobs: VUS(200) DUR(20) SERVER_CPU(0) CLIENT_CPU(1) LUALOAD(build/luaload)
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
VUS=${VUS:-200}
DUR=${DUR:-20}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

die() { echo "uploads.sh: $*" >&2; exit 2; }
for t in taskset jq curl /usr/bin/time truncate; do command -v "$t" >/dev/null || die "$t not found"; done
[[ -x $LUALOAD ]] || die "luaload not built at $LUALOAD"
((DUR >= 1 && DUR <= 120)) || die "DUR must be 1..120"

SCR=$(mktemp -d -t luaload-uploads.XXXXXX)
SERVE_PID=
cleanup() {
  [[ -n $SERVE_PID ]] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

truncate -s 1G "$SCR/big.bin" || die "cannot make the sparse file"
head -c 1024 /dev/urandom >"$SCR/small.bin"

source "$ROOT/scripts/serve-lib.sh"
ulimit -n "$(ulimit -Hn)"
ll_start_serve "$SCR/serve.out" taskset -c "$SERVER_CPU" "$LUALOAD" serve --threads 1 ||
  die "serve did not start: $(cat "$SCR/serve.out")"
SERVE_PID=$LL_SERVE_PID
URL=http://127.0.0.1:$LL_SERVE_PORT

cat >"$SCR/upload.lua" <<'LUA'
-- __ENV.FILE uploaded as the body (MODE=raw) or as a form part (MODE=form)
local http = require("luaload.http")
options = { gracefulStop = "0s" }
local file = http.FileStream(__ENV.FILE)
local req
if __ENV.MODE == "form" then
  req = http.Request(__ENV.URL .. "/upload", { method = "POST",
    body = http.Form{ fields = { note = "bench" }, files = { file = file } }, response_type = "none" })
else
  req = http.Request(__ENV.URL .. "/upload", { method = "POST", body = file, response_type = "none" })
end
function default()
  http.request(req)
end
LUA

received() { curl -s "$URL/stats" | jq -r .bytes_received; }
printf 'case\tpeak_rss_KB\trequests\tdata_sent\tserve_received\tMB/s\n'
declare -A RSS
for mode in raw form; do
  for size in small big; do
    name=$mode-$size
    before=$(received)
    /usr/bin/time -f '%M' -o "$SCR/$name.time" timeout -k 5 $((DUR + 60)) taskset -c "$CLIENT_CPU" \
      "$LUALOAD" run "$SCR/upload.lua" -e URL="$URL" -e FILE="$SCR/$size.bin" -e MODE="$mode" \
      -u "$VUS" -d "${DUR}s" -w 1 -q --no-summary --summary-export "$SCR/$name.json" >"$SCR/$name.out" 2>&1
    sleep 1
    got=$(($(received) - before))
    rss=$(tail -n 1 "$SCR/$name.time")
    RSS[$name]=$rss
    reqs=$(jq -r '.metrics.http_reqs.count // 0' "$SCR/$name.json")
    sent=$(jq -r '.metrics.data_sent.count // 0' "$SCR/$name.json")
    mbs=$(awk -v b="$got" -v d="$DUR" 'BEGIN { printf "%.0f", b / d / 1e6 }')
    printf '%s\t%s\t%s\t%.0f\t%s\t%s\n' "$name" "$rss" "$reqs" "$sent" "$got" "$mbs"
  done
done
echo
for mode in raw form; do
  d=$(( (${RSS[$mode-big]} - ${RSS[$mode-small]}) / 1024 ))
  v=ok
  ((d <= 64)) || v=MISSED
  echo "$mode: peak RSS uploading 1 GiB - uploading 1 KiB = $d MiB (target <= 64: $v)"
done
