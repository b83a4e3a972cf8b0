#!/usr/bin/env bash
# test_docs.sh -- every example of README.md and docs/*.md runs as written
# (issue 37, point 11), so the documentation cannot drift from the program.
#
# Each ```lua block is, by default, a complete script: `luaload run` with
# -u 1 -i 1 must exit 0 with no script error, no failed check and no failed
# request. A block that is not a complete script says what it is in an HTML
# comment on the line before its fence (blank lines may come between):
#   <!-- docs-test: script -->     a complete script (the default)
#   <!-- docs-test: fragment -->   lines of an iteration: run inside
#                                  function default(), after the prelude below
#   <!-- docs-test: init -->       init code: run after the prelude, with an
#                                  empty default() if it defines none
#   <!-- docs-test: inspect -->    options (durations of minutes): after the
#                                  prelude, `luaload inspect` must accept them
#   <!-- docs-test: scenario -->   NAME = { executor = ... }: inspected as
#                                  options.scenarios.NAME
#   <!-- docs-test: syntax (why) -->  compiled only, never run (why not: said)
#   <!-- docs-test: skip (why) -->    not tested at all (why not: said)
# A block that fails requests on purpose (a 404 to show one) says so:
#   <!-- docs-test: fragment (failed requests: why) -->
# and one whose BASE_URL is a JSON API with GET /items (python's
# http.server here) says (static server: why).
# A ```sh/```bash/```console block that calls luaload runs whole, with bash,
# in a directory of its own holding the files the examples name (script.lua,
# hello.lua, big.bin, part1.hlog ...), `luaload` being a wrapper that bounds
# each run (-d 1s unless -i is given, serve --die-after 1s) and records its
# exit code: every luaload call must exit 0. `<!-- docs-test: clean -->`
# runs it in an empty directory; `<!-- docs-test: skip (why) -->` not at all.
# Shell blocks that never call luaload, and other languages, are not examples
# of luaload and are only counted.
#
# The URLs of the examples (127.0.0.1:8080, localhost:8080, example hosts)
# are rewritten to a `luaload serve --port 0` the test starts, and the whole
# test runs in a network namespace of its own (only a loopback): no example
# can reach anything outside it.
if [[ ${LL_DOCS_NETNS:-} != 1 ]]; then
  if ! unshare -n true 2>/dev/null; then
    echo "FAIL - unshare -n: cannot make a network namespace (this test runs as root)"
    exit 1
  fi
  LL_DOCS_NETNS=1 exec unshare -n bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
ip link set lo up
# the source addresses protocols.md's --local-ips example hands out
ip route add local 10.0.0.0/24 dev lo
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LUALOAD=$(readlink -f "$LUALOAD")
start_serve
# a JSON API of one route, GET /items, for from-k6.md's script
mkdir -p "$T/www" && echo '{"items":[{"id":1},{"id":2}]}' >"$T/www/items"
STATIC_PORT=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$STATIC_PORT" >"$T/static.log" 2>&1 &
EXTRA_PIDS+=($!)
for ((i = 0; i < 50; i++)); do (: </dev/tcp/127.0.0.1/"$STATIC_PORT") 2>/dev/null && break; sleep 0.1; done
STATIC_URL=http://127.0.0.1:$STATIC_PORT

# ---- the blocks: $T/blocks/N.txt and one manifest line each:
# N <TAB> file:line <TAB> lang <TAB> mode <TAB> reason
mkdir -p "$T/blocks"
(cd "$ROOT" && python3 - "$T/blocks" README.md docs/*.md) <<'EOF' >"$T/manifest" || exit 1
import re, sys
out, files = sys.argv[1], sys.argv[2:]
fence = re.compile(r'^(\s*)```(\S*)\s*$')
marker = re.compile(r'^\s*<!--\s*docs-test:\s*([a-z-]+)\s*(?:\((.*)\))?\s*-->\s*$')
n = 0
for f in files:
    lines = open(f, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        ind, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(r'^\s*```\s*$', lines[j]):
            j += 1
        k = i - 1
        while k >= 0 and lines[k].strip() == '':
            k -= 1
        mode, reason = 'default', ''
        if k >= 0 and 'docs-test' in lines[k]:
            mm = marker.match(lines[k])
            if not mm:
                sys.exit(f'{f}:{k + 1}: a docs-test marker must read <!-- docs-test: MODE (reason) -->')
            mode, reason = mm.group(1), (mm.group(2) or '').strip()
        body = [l[len(ind):] if l.startswith(ind) else l.lstrip() for l in lines[i + 1:j]]
        n += 1
        open(f'{out}/{n}.txt', 'w', encoding='utf-8').write('\n'.join(body) + '\n')
        print(f'{n}\t{f}:{i + 1}\t{lang or "-"}\t{mode}\t{reason}')
        i = j + 1
EOF

# rewrite FILE: the examples' targets become the test's server
rewrite() {
  sed -i -e "s#\(127\.0\.0\.1\|localhost\):8080#127.0.0.1:$PORT#g" \
    -e "s#https://staging\.example\.com#$URL#g; s#http://127\.0\.0\.1:9090#$URL#g" \
    -e "s#https://example\.test#$URL#g; s#https\?://test\.k6\.io#$URL#g" "$1"
}

# ---- the files the examples name, in $T/glue (copied for each run)
G=$T/glue
mkdir -p "$G/data" "$G/certs" "$G/build" "$G/bin" "$G/home"
make_certs || exit 1
cp "$CERTS"/{ca.pem,client.pem,client.key} "$G/certs/"
openssl ecparam -name prime256v1 -genkey -noout -out "$G/es256.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$G/private-key.pem" 2>/dev/null
head -c 262144 /dev/urandom >"$G/big.bin"
head -c 65536 /dev/urandom >"$G/video.mp4"
head -c 4096 /dev/urandom >"$G/photo.jpg"
echo '[{"name":"u1","pass":"p"},{"name":"u2","pass":"q"}]' >"$G/data/users.json"
printf 'name,pass\na,1\nb,2\n' >"$G/users.csv"
echo '{"users":2}' >"$G/config.json"
printf '{"id":1}\n{"id":2}\n' >"$G/events.jsonl"
BIG_SHA=$(sha256sum "$G/big.bin" | cut -d' ' -f1)
# script.lua, test.lua (the names the shell lines use): a small script on BASE_URL
cat >"$G/script.lua" <<'EOF'
local http = require("luaload.http")
local ll = require("luaload")
options = { vus = 2, iterations = 4 }
function setup() return { token = "abc" } end
function default(data)
  http.checkstatus(200, http.get(ll.env.BASE_URL .. "/"))
end
EOF
cp "$G/script.lua" "$G/test.lua"
# hello.lua: getting-started.md's first script, as that page writes it
HELLO=$(awk -F'\t' '$2 ~ /^docs\/getting-started.md:/ && $3 == "lua" { print $1; exit }' "$T/manifest")
cp "$T/blocks/$HELLO.txt" "$G/hello.lua" && rewrite "$G/hello.lua"
# the parts of a split test, for `luaload merge`
for i in 1 2 3 4; do
  (cd "$G" && "$LUALOAD" run script.lua -q --no-summary -e BASE_URL="$URL" --shard "$i/4" --out "hdrlog=part$i.hlog" >/dev/null 2>&1) ||
    { echo "FAIL - glue: part $i of script.lua for luaload merge"; exit 1; }
done
# luaload as the shell lines call it: bounded, its exit code recorded
cat >"$G/bin/luaload" <<'EOF'
#!/usr/bin/env bash
args=("$@")
case ${1:-} in
  serve) args+=(--die-after 1s) ;;
  run)
    iter= lua=
    for a in "$@"; do
      case $a in -i | --iterations | --iterations=* | -i[0-9]*) iter=1 ;; *.lua) lua=1 ;; esac
    done
    [[ -n $lua ]] && args=(run -e "BASE_URL=$DOCS_URL" "${@:2}")
    [[ -z $iter ]] && args+=(-d 1s) ;;
esac
timeout -k 2 30 "$DOCS_LUALOAD" "${args[@]}"
rc=$?
printf '%s\t%s\n' "$rc" "$*" >>"$DOCS_LOG"
exit $rc
EOF
# the commands of other machines a shell block might call: not run
for c in ssh scp docker kubectl sudo; do
  printf '#!/bin/sh\necho "test_docs: %s is not run" >&2\ncat >/dev/null\n' "$c" >"$G/bin/$c"
done
chmod +x "$G"/bin/*
cp "$G/bin/luaload" "$G/build/luaload"
export DOCS_URL=$URL DOCS_LUALOAD=$LUALOAD

# the names the fragments use, on the first line of the wrapper (so that a
# block's line k is the wrapper's line k + 1)
PRELUDE="local http = require('luaload.http'); local ll = require('luaload'); local json = require('luaload.json'); \
local jwt = require('luaload.jwt'); local summary = require('luaload.summary'); local base = '$URL'; local url, target, method, body, params = base .. '/echo', base .. '/', 'GET', 'x', nil; \
local client = http.Client{}; local req = http.Request(base .. '/'); local requests = { base .. '/' }; \
local login = http.Request(base .. '/echo', { method = 'POST', body = '{\"user\":\"u1\"}' }); \
local urls, results, rows, doc, expected = { base .. '/', base .. '/echo' }, {}, { 'a', 'b' }, { a = 1 }, '$BIG_SHA'; local res;"

# tally WHERE KIND: one block counted (run, inspected, compiled, skipped, other)
tally() { echo "${1%%:*} $2" >>"$T/tally"; }
: >"$T/tally"

# fail_block WHERE WHAT FILE...: one failure, with the block's place and the error
fail_block() {
  local where=$1 what=$2
  shift 2
  not_ok "$where: $what" "$(cat "$@" 2>/dev/null | grep -v '^\s*$' | head -8 | sed 's/^/         /')"
}

# docline WHERE OFFSET FILE...: the files, with doc.lua:K (line K of the
# wrapper, whose block starts at line OFFSET + 1) as the Markdown file's line
docline() {
  local where=$1 off=$2
  shift 2
  perl -pe 'BEGIN { ($f, $l, $o) = splice(@ARGV, 0, 3) } s/doc\.lua:(\d+)/"$f:" . ($l + $1 - $o)/ge' \
    "${where%:*}" "${where##*:}" "$off" "$@" 2>/dev/null
}

# run_lua N WHERE MODE REASON: one Lua block
run_lua() {
  local n=$1 where=$2 mode=$3 reason=$4 d=$T/run/$1 f
  mkdir -p "$d" && cp -r "$G"/. "$d"/
  f=$d/doc.lua
  case $mode in
    default | script) cp "$T/blocks/$n.txt" "$f" ;;
    fragment) { echo "$PRELUDE function default() res = client:get(req)"; cat "$T/blocks/$n.txt"; echo "end"; } >"$f" ;;
    init | inspect)
      { echo "$PRELUDE"; cat "$T/blocks/$n.txt"; echo "if default == nil then function default() end end"; } >"$f" ;;
    scenario)
      local name
      name=$(sed -n '1s/^\([A-Za-z_][A-Za-z0-9_]*\) *=.*/\1/p' "$T/blocks/$n.txt")
      [[ -n $name ]] || { fail_block "$where" "a scenario block starts with NAME = {" /dev/null; return; }
      { echo "$PRELUDE"; cat "$T/blocks/$n.txt"; echo "options = { scenarios = { $name = $name } }; function default() end"; } >"$f" ;;
    syntax) { echo "$PRELUDE if false then"; cat "$T/blocks/$n.txt"; echo "end function default() end"; } >"$f" ;;
    *) fail_block "$where" "unknown docs-test mode '$mode'" /dev/null; return ;;
  esac
  rewrite "$f"
  local off=1
  [[ $mode == default || $mode == script ]] && off=0
  case $mode in
    default | script | fragment | init)
      local target=$URL
      [[ $reason == "static server:"* ]] && target=$STATIC_URL
      (cd "$d" && HOME=$d/home timeout -k 2 30 "$LUALOAD" run doc.lua -q -u 1 -i 1 -e BASE_URL="$target" \
        --summary-export s.json >out0.txt 2>err0.txt)
      local rc=$? fails failed
      docline "$where" "$off" "$d/out0.txt" >"$d/out.txt"
      docline "$where" "$off" "$d/err0.txt" >"$d/err.txt"
      fails=$(jq -r '.metrics.checks.fails // 0' "$d/s.json" 2>/dev/null)
      failed=$(jq -r '.metrics.http_req_failed.passes // 0' "$d/s.json" 2>/dev/null)
      [[ $reason == "failed requests:"* ]] && failed=0
      if [[ $rc -ne 0 ]]; then fail_block "$where" "luaload run exited $rc" "$d/err.txt" "$d/out.txt"
      elif grep -q 'script error' "$d/err.txt"; then fail_block "$where" "a script error" "$d/err.txt"
      elif [[ $fails != 0 ]]; then fail_block "$where" "$fails failed checks" "$d/out.txt"
      elif [[ $failed != 0 ]]; then fail_block "$where" "$failed failed requests" "$d/err.txt"
      else ok "$where: runs ($mode)"; tally "$where" run; fi ;;
    inspect | scenario | syntax)
      (cd "$d" && HOME=$d/home timeout -k 2 30 "$LUALOAD" inspect doc.lua -e BASE_URL="$URL" >out.txt 2>err0.txt)
      local rc=$?
      docline "$where" "$off" "$d/err0.txt" >"$d/err.txt"
      if [[ $rc -ne 0 ]]; then fail_block "$where" "luaload inspect exited $rc" "$d/err.txt"
      elif [[ $mode == scenario ]] && ! jq -e '.scenarios | length == 1' "$d/out.txt" >/dev/null; then
        fail_block "$where" "inspect shows no scenario" "$d/out.txt"
      elif [[ $mode == syntax ]]; then ok "$where: compiles"; tally "$where" compiled
      else ok "$where: inspected ($mode)"; tally "$where" inspected; fi ;;
  esac
}

# run_sh N WHERE MODE: one shell block that calls luaload
run_sh() {
  local n=$1 where=$2 mode=$3 d=$T/run/$1
  mkdir -p "$d"
  if [[ $mode == clean ]]; then mkdir -p "$d/build" "$d/home"; cp -r "$G/bin" "$d/"; cp "$G/bin/luaload" "$d/build/"
  elif [[ $mode == default ]]; then cp -r "$G"/. "$d"/
  else fail_block "$where" "unknown docs-test mode '$mode' for a shell block" /dev/null; return; fi
  { cat "$T/blocks/$n.txt"; echo; echo wait; } >"$d/doc.sh"
  rewrite "$d/doc.sh"
  (cd "$d" && PATH=$d/bin:$PATH HOME=$d/home DOCS_LOG=$d/calls timeout -k 2 60 bash doc.sh </dev/null >out.txt 2>err.txt)
  if [[ ! -s $d/calls ]]; then fail_block "$where" "no luaload call ran" "$d/err.txt" "$d/out.txt"
  elif grep -qv '^0	' "$d/calls"; then fail_block "$where" "a luaload call failed" <(grep -v '^0	' "$d/calls" | sed 's/^/exit /') "$d/err.txt"
  else ok "$where: $(wc -l <"$d/calls") luaload calls exit 0"; tally "$where" run; fi
}

while IFS=$'\t' read -r n where lang mode reason; do
  t0=$EPOCHREALTIME
  if [[ $mode == skip || $mode == syntax ]] && [[ -z $reason ]]; then
    not_ok "$where: docs-test: $mode needs a reason in parentheses"
    continue
  fi
  case $lang in
    lua)
      if [[ $mode == skip ]]; then tally "$where" skipped; echo "skip - $where ($reason)"
      else run_lua "$n" "$where" "$mode" "$reason"; fi ;;
    sh | bash | console | shell)
      if ! grep -Eq '(^|[[:space:];&|(/])luaload([[:space:]]|$)' "$T/blocks/$n.txt"; then tally "$where" other
      elif [[ $mode == skip ]]; then tally "$where" skipped; echo "skip - $where ($reason)"
      else run_sh "$n" "$where" "$mode"; fi ;;
    *) tally "$where" other ;;
  esac
  [[ -n ${DOCS_TIMES:-} ]] && awk -v a="$t0" -v b="$EPOCHREALTIME" -v w="$where" 'BEGIN { printf "time %.2f s %s\n", b - a, w }'
done <"$T/manifest"

# the counts, by file and in all: blocks run, inspected, compiled only,
# skipped (marked), not luaload examples (output, JSON, other commands)
awk '{ n[$1 " " $2]++; f[$1] = 1; t[$2]++ }
  function line(name, k) { printf "%-26s %3d run %3d inspected %3d compiled %3d skipped %3d other\n", name,
    n[k "run"], n[k "inspected"], n[k "compiled"], n[k "skipped"], n[k "other"] }
  END { for (x in f) line(x, x " "); for (k in t) n["all " k] = t[k]; line("all", "all ") }' "$T/tally" | sort
expect_cmp "the examples were found and tested" "x >= 60" "$(grep -cE ' (run|inspected|compiled)$' "$T/tally")"
finish
