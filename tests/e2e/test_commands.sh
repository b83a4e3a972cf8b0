#!/usr/bin/env bash
# k6's everyday commands: luaload version (--json), help and --help, the
# nearest command or flag to a mistyped one (exit 104), new (each template
# runs against luaload serve; no overwrite without --force; .luarc.json),
# inspect (the options run would use, --execution-requirements), shell
# completion (bash run for real; zsh and fish parsed when installed), and
# docs/commands.md, which must be what `luaload help --markdown` prints.
source "$(dirname "$0")/lib.sh"
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)

# ---- version
run_ll version
expect_eq "version: exit 0" "$RC" 0
expect_match "version: luaload and its commit" "$OUT" '^luaload [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}|unknown'
for lib in LuaJIT libcurl OpenSSL nghttp2 ngtcp2 nghttp3 c-ares; do
  expect_match "version: names $lib" "$OUT" "^ +$lib "
done
run_ll version --json
expect_eq "version --json: valid JSON with the libraries" \
  "$(jq -r '[.luaload, .luajit, .libcurl.version, .openssl, .nghttp2, ."c-ares"] | map(type) | unique | join(",")' "$OUT")" string
expect_eq "version --json: libcurl's features include HTTP2" "$(jq '.libcurl.features | index("HTTP2") != null' "$OUT")" true
expect_eq "version --json: libcurl's protocols include https" "$(jq '.libcurl.protocols | index("https") != null' "$OUT")" true
expect_eq "version --json: libcurl's TLS backend" "$(jq -r '.libcurl.ssl | type' "$OUT")" string
expect_eq "--version is version" "$("$LUALOAD" --version | head -1)" "$("$LUALOAD" version | head -1)"

# ---- help, and the nearest command or flag
run_ll help
expect_eq "help: exit 0" "$RC" 0
for c in run inspect new merge k8s serve completion version clear-cache help; do
  expect_match "help lists $c" "$OUT" "^  $c "
done
for c in run merge k8s serve new inspect version completion clear-cache; do
  a=$("$LUALOAD" help "$c" 2>&1); ra=$?
  b=$("$LUALOAD" "$c" --help 2>&1); rb=$?
  expect_eq "help $c is $c --help (exit 0)" "$ra $rb $([[ "$a" == "$b" && "$a" == *usage* ]] && echo same)" "0 0 same"
done
run_ll help version --json
expect_eq "help with more than a command: exit 104, runs nothing" "$RC $(wc -c <"$OUT")" "104 0"
run_ll k8s --instances=2 "$T/none.lua"
expect_match "k8s takes --flag=value too" "$ERR" 'none.lua'
run_ll rnu script.lua
expect_eq "a mistyped command: exit 104" "$RC" 104
expect_match "a mistyped command: did you mean run?" "$ERR" "unknown command 'rnu' \(did you mean run\?\)"
run_ll frobnicate
expect_eq "an unknown command far from any: exit 104, no guess" "$RC $(grep -c 'did you mean' "$ERR")" "104 0"
run_ll run --vu 2 x.lua
expect_eq "a mistyped flag: exit 104" "$RC" 104
expect_match "a mistyped flag: did you mean --vus?" "$ERR" 'unknown flag --vu \(did you mean --vus\?\)'
run_ll run --sumary-export=s.json x.lua
expect_match "a mistyped flag with =value: did you mean --summary-export?" "$ERR" 'did you mean --summary-export\?'
run_ll merge --no-thresold a.hlog
expect_match "merge: did you mean --no-thresholds?" "$ERR" 'did you mean --no-thresholds\?'
run_ll serve --prot 0
expect_eq "serve: a mistyped flag: exit 104" "$RC" 104
expect_match "serve: did you mean --port?" "$ERR" 'did you mean --port\?'
run_ll k8s x.lua --instance 2
expect_match "k8s: did you mean --instances?" "$ERR" 'did you mean --instances\?'

# ---- new
cd "$T" || exit 1
start_serve
run_ll new
expect_eq "new: exit 0" "$RC" 0
expect_eq "new: script.lua and .luarc.json" "$(ls -A "$T" | grep -cx -e script.lua -e .luarc.json)" 2
lib=$(jq -r '."workspace.library"[0]' "$T/.luarc.json")
expect_eq ".luarc.json: LuaJIT" "$(jq -r '."runtime.version"' "$T/.luarc.json")" LuaJIT
expect_cmp ".luarc.json: the library holds the annotations" "x >= 10" "$(ls "$lib"/luaload*.lua 2>/dev/null | wc -l)"
expect_match "the annotations: ---@meta" "$lib/luaload.http.lua" '^---@meta luaload.http'
cp "$T/script.lua" "$T/keep.lua"
run_ll new
expect_eq "new: an existing file is refused (exit 104)" "$RC" 104
expect_match "new: says --force" "$ERR" 'script.lua exists \(--force'
expect_eq "new: the file is untouched" "$(cmp -s "$T/script.lua" "$T/keep.lua" && echo same)" same
echo '-- mine' >"$T/script.lua"
run_ll new --force
expect_eq "new --force: overwrites" "$RC $(grep -c 'mine' "$T/script.lua")" "0 0"
run_ll new x.lua --template nope
expect_eq "new: an unknown template: exit 104" "$RC" 104
expect_match "new: an unknown template: names them" "$ERR" 'minimal, protocols, upload or ci'
mkdir -p "$T/sub"
for t in minimal protocols upload ci; do
  run_ll new "sub/$t.lua" --template "$t"
  expect_eq "new --template $t: written" "$RC $(test -s "$T/sub/$t.lua" && echo yes)" "0 yes"
  expect_match "new --template $t: commented, names itself" "$T/sub/$t.lua" "^-- $t.lua -- "
  run_ll run "sub/$t.lua" -q -e "BASE_URL=$URL" -e "SUMMARY_FILE=$T/ci-summary.json" -i 8 -u 2 \
    --summary-export "$T/$t.json"
  expect_eq "the $t template runs against luaload serve: exit 0" "$RC" 0
  expect_cmp "the $t template made requests" "x >= 8" "$(jq '.metrics.http_reqs.count' "$T/$t.json")"
  expect_eq "the $t template's checks all pass" "$(jq '.metrics.checks.fails // 0' "$T/$t.json")" 0
done
mv "$T/sub/upload.lua" "$T/sub/moved.lua"
run_ll run "sub/moved.lua" -q -e "BASE_URL=$URL" -i 2 -u 1
expect_eq "the upload template still runs under another name" "$RC" 0
expect_eq "new in sub/: .luarc.json beside the script" "$(test -f "$T/sub/.luarc.json" && echo yes)" yes
expect_eq "the ci template's handle_summary wrote its file" "$(jq '.metrics.http_reqs.values.count' "$T/ci-summary.json")" \
  "$(jq '.metrics.http_reqs.count' "$T/ci.json")"

# ---- inspect
S=$(script insp.lua <<'LUA'
options = { vus = 3, thresholds = { http_req_duration = { "p(95)<300" } },
  scenarios = {
    a = { executor = "constant-vus", vus = 4, duration = "30s", gracefulStop = "5s" },
    b = { executor = "ramping-vus", startTime = "10s", stages = { { duration = "1m", target = 20 } } } } }
function default() end
LUA
)
run_ll inspect "$S" --threshold 'http_reqs=count>1' -e A=1
expect_eq "inspect: exit 0" "$RC" 0
expect_eq "inspect: the scenarios" "$(jq -r '.scenarios | keys | join(",")' "$OUT")" a,b
expect_eq "inspect: a's settings" "$(jq -r '.scenarios.a | [.executor, .vus, .duration, .gracefulStop] | join(" ")' "$OUT")" \
  "constant-vus 4 30s 5s"
expect_eq "inspect: the script's threshold and the flag's" \
  "$(jq -c '[.thresholds.http_req_duration, .thresholds.http_reqs]' "$OUT")" '[["p(95)<300"],["count>1"]]'
expect_eq "inspect: no test ran (nothing but the JSON on stdout)" "$(jq -e . "$OUT" >/dev/null && echo json)" json
run_ll inspect "$S" --execution-requirements
expect_eq "inspect --execution-requirements: maxVUs 4 + 20" "$(jq '.maxVUs' "$OUT")" 24
expect_eq "inspect --execution-requirements: totalDuration (b ends at 10s + 1m + 30s)" "$(jq -r '.totalDuration' "$OUT")" 1m40s
expect_eq "inspect --execution-requirements: per scenario" \
  "$(jq -c '[.executionRequirements.scenarios.a.maxVUs, .executionRequirements.scenarios.a.end, .executionRequirements.scenarios.b.maxVUs]' "$OUT")" \
  '[4,"35s",20]'
Q=$(script plain.lua <<'LUA'
function default() end
LUA
)
LUALOAD_VUS=9 run_ll inspect "$Q" -d 5s
expect_eq "inspect: the environment and the flags (LUALOAD_VUS=9, -d 5s)" \
  "$(jq -r '[.vus, .duration] | join(" ")' "$OUT")" "9 5s"
run_ll inspect "$T/missing.lua"
expect_eq "inspect: a missing script: exit 107" "$RC" 107
run_ll run "$S" --inspect
expect_eq "run does not take inspect's flags" "$RC" 104

# ---- completion
run_ll completion bash
expect_eq "completion bash: exit 0" "$RC" 0
cp "$OUT" "$T/luaload.bash"
complete_words() { # the words bash completes for the command line "$@" (last word: the one typed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _luaload; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$T/luaload.bash" "$@" | sort | tr '\n' ' '
}
expect_eq "bash: commands" "$(complete_words luaload i)" "inspect "
expect_match "bash: run's flags" <(complete_words luaload run --summ) '--summary-export --summary-time-unit --summary-trend-stats'
expect_eq "bash: --transport's values" "$(complete_words luaload run --transport '')" "curl native "
expect_eq "bash: --http's values (quick mode)" "$(complete_words luaload run --http '')" "1.1 2 3 "
expect_eq "bash: new --template's values" "$(complete_words luaload new --template '')" "ci minimal protocols upload "
expect_eq "bash: completion's shells" "$(complete_words luaload completion '')" "bash fish zsh "
expect_match "bash: -o's outputs" <(complete_words luaload run -o '') 'csv= experimental-prometheus-rw hdrlog= html= influxdb= json= web-dashboard'
touch "$T/a.lua" "$T/b.txt"
expect_match "bash: run completes .lua scripts" <(cd "$T" && complete_words luaload run '') 'a.lua'
expect_eq "bash: and not other files" "$(cd "$T" && complete_words luaload run '' | grep -c b.txt)" 0
for sh in zsh fish; do
  run_ll completion "$sh"
  expect_eq "completion $sh: exit 0" "$RC" 0
  if command -v "$sh" >/dev/null; then
    "$sh" -n "$OUT" 2>"$T/sh.err"
    expect_eq "completion $sh: $sh parses it" "$?" 0
  else
    echo "skip - $sh is not installed (scripts/setup.sh installs it)"
  fi
done
if command -v fish >/dev/null; then
  "$LUALOAD" completion fish >"$T/luaload.fish"
  expect_eq "fish: completes --transport's values" \
    "$(fish -c "source $T/luaload.fish; complete -C 'luaload run --transport '" | cut -f1 | sort | tr '\n' ' ')" "curl native "
  expect_eq "fish: completes commands" "$(fish -c "source $T/luaload.fish; complete -C 'luaload ins'" | cut -f1)" inspect
fi
expect_match "zsh: the flags' help" <("$LUALOAD" completion zsh) "'\*--vus=\[virtual users \(default 1\)\]:N: '"
expect_match "fish: the flags' values" <("$LUALOAD" completion fish) "-l transport -x -a 'native curl'"
run_ll completion tcsh
expect_eq "completion: an unknown shell: exit 104" "$RC" 104

# ---- the command reference
"$LUALOAD" help --markdown >"$T/commands.md"
if diff -u "$DOCS/commands.md" "$T/commands.md" >"$T/diff"; then
  ok "docs/commands.md is what luaload help --markdown prints"
else
  not_ok "docs/commands.md is what luaload help --markdown prints (regenerate: build/luaload help --markdown > docs/commands.md)" \
    "$(head -20 "$T/diff")"
fi
for f in --vus --http --jwt-key --summary-export --instances --echo-header --template --execution-requirements; do
  expect_match "the reference names $f" "$T/commands.md" "\`$f"
done
finish
