# serve-lib.sh -- sourced by the example runner, the benchmarks and the tests:
# starts `luaload serve` on a free loopback port and waits until it listens.
#
#   ll_start_serve LOGFILE COMMAND...
#     runs COMMAND --port 0 in the background, COMMAND being the luaload serve
#     command line (possibly behind taskset), e.g.
#       ll_start_serve "$log" taskset -c 0 build/luaload serve --threads 1
#     sets LL_SERVE_PID and LL_SERVE_PORT; returns 1 (with the log on stderr)
#     when the server did not come up within 5 s.

ll_start_serve() {
  local log=$1
  shift
  "$@" --port 0 >"$log" 2>&1 &
  LL_SERVE_PID=$!
  LL_SERVE_PORT=
  for _ in $(seq 100); do
    LL_SERVE_PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
    [[ -n $LL_SERVE_PORT ]] && return 0
    sleep 0.05
  done
  echo "luaload serve did not start: $(cat "$log")" >&2
  return 1
}
