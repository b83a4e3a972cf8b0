#!/usr/bin/env bash
# run-example.sh [SCRIPT] [luaload run flags...] -- runs an example load test
# against the built-in target server (`luaload serve`, on a free loopback
# port), then stops the server. Default: hello.lua for 5 s with 10 VUs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${LUALOAD:-$here/../../build/luaload}
script=${1:-$here/hello.lua}
shift || true
[[ -x $bin ]] || { echo "run-example.sh: $bin not built (cmake -S . -B build && cmake --build build)" >&2; exit 1; }
log=$(mktemp)
"$bin" serve --port 0 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
  [[ -n $port ]] && break
  sleep 0.05
done
[[ -n $port ]] || { echo "run-example.sh: luaload serve did not start: $(cat "$log")" >&2; exit 1; }
"$bin" run "$script" -e BASE_URL="http://127.0.0.1:$port" "$@"
