# lib.sh -- helpers for luaload's end-to-end tests (sourced by test_*.sh).
# Usage in a test: LUALOAD=$1; source lib.sh; start_serve; ...; finish
set -u
# grep and sed match characters, not bytes, whatever the caller's locale
# (a fresh machine, a container or `env -i` has none): the summary's ✓ and ✗
# are one character each. C.UTF-8 is built into Debian's glibc.
export LC_ALL=C.UTF-8
LUALOAD=${LUALOAD:-$1}
T=$(mktemp -d -t luaload-e2e.XXXXXX)
PASS=0
FAIL=0
SERVE_PID=
PORT=
EXTRA_PIDS=()  # more background processes of this shell to stop at exit (servers.sh)

# stop_pid PID: SIGTERM, up to 5 s to exit, then SIGKILL; reaps it
stop_pid() {
  kill "$1" 2>/dev/null || return 0
  local i
  for ((i = 0; i < 50; i++)); do
    grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" || break
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}

cleanup() {
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
  local p
  for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${EXTRA_PIDS[@]}"; do stop_pid "$p"; done
  rm -rf "$T"
}
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/serve-lib.sh"

# start_serve [serve flags...]: starts `luaload serve` on a free loopback port
# (one thread); sets PORT and URL.
start_serve() {
  ll_start_serve "$T/serve.out" "$LUALOAD" serve --threads 1 "$@"
  local started=$?
  SERVE_PID=$LL_SERVE_PID
  ((started == 0)) || exit 1
  PORT=$LL_SERVE_PORT
  URL=http://127.0.0.1:$PORT
}

# free_port: a loopback port nothing listens on
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# run_ll ARGS...: runs luaload with a time cap; sets RC, OUT (stdout file),
# ERR (stderr file) and ELAPSED (wall seconds)
run_ll() {
  OUT=$T/out.txt ERR=$T/err.txt
  local start
  start=$(date +%s.%N)
  timeout -k 5 60 "$LUALOAD" "$@" >"$OUT" 2>"$ERR"
  RC=$?
  ELAPSED=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
}

# noprogress FILE: FILE (a run's stderr) without the progress lines printed
# each second when stderr is not a terminal: the blank line before each
# block, "running (...)", and one line per scenario
noprogress() { grep -vE '^$|^running \([0-9dhms.]+\), |^\S+ +\[ +[0-9]+% \] ' "$1"; }

ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
not_ok() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; [[ $# -gt 1 ]] && echo "       $2"; return 1; }

# expect_eq NAME GOT WANT
expect_eq() { if [[ "$2" == "$3" ]]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
# expect_match NAME FILE REGEX
expect_match() { if grep -Eq -- "$3" "$2"; then ok "$1"; else not_ok "$1" "no /$3/ in: $(head -c 600 "$2")"; fi; }
# expect_cmp NAME "awk-condition on x" VALUE   e.g. expect_cmp "rate" "x > 0.5" 0.7
expect_cmp() { if awk -v x="$3" "BEGIN { exit !($2) }"; then ok "$1"; else not_ok "$1" "value $3 fails $2"; fi; }
# jqv FILE FILTER
jqv() { jq -r "$2" "$1"; }

script() { cat >"$T/$1"; echo "$T/$1"; }

# cnt NAME / passes NAME / rate NAME: a metric's value in $T/s.json (a
# --summary-export), "missing" when it is not there
cnt() { jqv "$T/s.json" ".metrics[\"$1\"].count // \"missing\""; }
passes() { jqv "$T/s.json" ".metrics[\"$1\"].passes // \"missing\""; }
rate() { jqv "$T/s.json" ".metrics[\"$1\"].value // .metrics[\"$1\"].rate // \"missing\""; }
# conns FILE: samples of http_req_connecting above 0 in a -o json= output
# (the connections made)
conns() { jq -s '[.[] | select(.type == "Point" and .metric == "http_req_connecting" and .data.value > 0)] | length' "$1"; }

finish() {
  echo "$PASS passed, $FAIL failed"
  [[ $FAIL -eq 0 ]]
}

# sigint_after SECS ARGS...: luaload ARGS, one SIGINT after SECS; sets RC,
# OUT, ERR and SIGNAL_TO_EXIT (seconds from the signal to the exit)
sigint_after() {
  local secs=$1
  shift
  OUT=$T/out.txt ERR=$T/err.txt
  timeout -k 5 60 "$LUALOAD" "$@" >"$OUT" 2>"$ERR" &
  local p=$!
  sleep "$secs"
  local sent
  sent=$(date +%s.%N)
  kill -INT $p
  wait $p
  RC=$?
  SIGNAL_TO_EXIT=$(awk -v a="$sent" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
}
