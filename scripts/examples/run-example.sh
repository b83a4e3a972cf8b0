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
source "$here/../serve-lib.sh"
log=$(mktemp)
trap 'kill $LL_SERVE_PID 2>/dev/null; wait $LL_SERVE_PID 2>/dev/null; rm -f "$log"' EXIT
ll_start_serve "$log" "$bin" serve || exit 1
port=$LL_SERVE_PORT
"$bin" run "$script" -e BASE_URL="http://127.0.0.1:$port" "$@"
