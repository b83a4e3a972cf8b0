#!/usr/bin/env bash
# Installed like a tool (docs/install.md): the .deb of cmake/package.cmake
# and `cmake --install`. The package is made from the build directory the
# binary under test lives in (cpack with its CPackConfig.cmake, into this
# test's scratch directory: a few seconds on a built tree) and unpacked with
# dpkg-deb -x into a scratch root; a `cmake --install --prefix` tree is made
# beside it. For both: the files (binary, Lua library with its editor
# annotations, man page, docs; no test binaries, no fuzzers), and the binary
# run from another directory: `luaload version`, a script against
# `luaload serve` that requires a marker module put only into that tree's
# Lua library, so it passes only if the binary uses its own tree's library
# (found beside /proc/self/exe), not the source tree's, and `luaload new`
# (its .luarc.json names the tree's annotations; its script runs).
source "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$LUALOAD")" && pwd)
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
CMAKE=$(cache CMAKE_COMMAND)
CPACK=$(cache CMAKE_CPACK_COMMAND)
VERSION=$("$LUALOAD" version | awk 'NR == 1 { print $2 }')
ARCH=$(dpkg --print-architecture)
if [[ ! -f $BUILD/CPackConfig.cmake || -z $CMAKE || -z $CPACK ]]; then
  not_ok "a configured build directory beside $LUALOAD" "no CPackConfig.cmake or CMakeCache.txt in $BUILD"
  finish
  exit
fi

# cpack runs the build tree's preinstall step (make, nothing to do on a
# built tree). Where builds take turns through /tmp/build.lock, so does this
# one, unless a parent of this test already holds the lock.
lock_held_above() {
  local ino holders p
  ino=$(stat -c %i "$1") || return 1
  holders=" $(awk -v ino="$ino" '$2 == "FLOCK" && $6 ~ (":" ino "$") { printf "%s ", $5 }' /proc/locks) "
  p=$$
  while [[ -n $p && $p -gt 1 ]]; do
    [[ $holders == *" $p "* ]] && return 0
    p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
  done
  return 1
}
build_step() {
  if [[ -e /tmp/build.lock ]] && ! lock_held_above /tmp/build.lock; then
    flock -w 90 /tmp/build.lock "$@"
  else
    "$@"
  fi
}

# ---- the package ----
start=$(date +%s.%N)
build_step "$CPACK" --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.out" 2>&1
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
expect_eq "cpack builds the package (${secs} s, a wait for the build lock included)" "$rc" 0 || tail -20 "$T/cpack.out"
DEB=$T/pkg/luaload_${VERSION}_${ARCH}.deb
expect_eq "named luaload_${VERSION}_${ARCH}.deb" "$(ls "$T/pkg"/*.deb 2>/dev/null)" "$DEB"

dpkg-deb -f "$DEB" >"$T/control" 2>&1
expect_match "control: Package: luaload" "$T/control" "^Package: luaload$"
expect_match "control: Version: $VERSION" "$T/control" "^Version: $VERSION$"
expect_match "control: Architecture: $ARCH" "$T/control" "^Architecture: $ARCH$"
expect_match "control: a Maintainer" "$T/control" "^Maintainer: .+<.+@.+>$"
expect_match "control: Section: web" "$T/control" "^Section: web$"
expect_match "control: a Description and its extended text" "$T/control" "^ luaload runs test scripts"
# dpkg-shlibdeps' list: every library the binary links, libcurl and LuaJIT among them
expect_match "Depends (dpkg-shlibdeps): libcurl" "$T/control" "^Depends: .*libcurl[^ ,]* \(>= "
expect_match "Depends (dpkg-shlibdeps): LuaJIT, libc6" "$T/control" "^Depends: .*libc6 \(>= .*libluajit"
expect_eq "control: no Homepage" "$(grep -c '^Homepage:' "$T/control")" 0

dpkg-deb -c "$DEB" | awk '{ print $NF }' | sed 's|^\./||' | grep -v '^$' >"$T/contents"
expect_eq "everything under usr/" "$(grep -vc '^usr/' "$T/contents")" 0
expect_eq "one program in usr/bin" "$(grep -c '^usr/bin/.' "$T/contents")" 1
expect_eq "no test binaries, no fuzzers" "$(grep -Ec '(^|/)(test_|fuzz_)|/tests?/' "$T/contents")" 0

dpkg-deb -x "$DEB" "$T/root"
expect_eq "dpkg-deb -x unpacks it" "$?" 0

# check_tree NAME PREFIX: the files of an installed tree (PREFIX/bin, PREFIX/share)
check_tree() {
  local name=$1 p=$2
  [[ -x $p/bin/luaload ]] && ok "$name: bin/luaload" || not_ok "$name: bin/luaload" "not in $p/bin"
  if diff -r "$ROOT/lib/lua" "$p/share/luaload/lua" >"$T/diff" 2>&1; then
    ok "$name: share/luaload/lua is lib/lua"
  else
    not_ok "$name: share/luaload/lua is lib/lua" "$(head -c 400 "$T/diff")"
  fi
  expect_eq "$name: the editor annotations (meta/*.lua)" \
    "$(ls "$p/share/luaload/lua/meta/" 2>/dev/null | grep -c '\.lua$')" "$(ls "$ROOT/lib/lua/meta/" | grep -c '\.lua$')"
  local man=$p/share/man/man1/luaload.1.gz
  if gzip -t "$man" 2>/dev/null && zcat "$man" | cmp -s - "$ROOT/docs/man/luaload.1"; then
    ok "$name: share/man/man1/luaload.1.gz is docs/man/luaload.1"
  else
    not_ok "$name: share/man/man1/luaload.1.gz is docs/man/luaload.1" "$(ls -l "$man" 2>&1)"
  fi
  # gzip -n, as Debian's: no file name (FLG bit 3) and no time stamp in the header
  expect_eq "$name: man page gzip'd without name or time" "$(od -An -tu1 -j3 -N5 "$man" | tr -s ' ')" " 0 0 0 0 0"
  if command -v man >/dev/null; then
    LC_ALL=C MANWIDTH=80 man -l "$man" >"$T/man.txt" 2>&1
    expect_match "$name: man -l renders it" "$T/man.txt" "^ +luaload - scriptable HTTP load tester$"
  fi
  if command -v groff >/dev/null; then
    expect_eq "$name: groff -ww: no warnings" "$(zcat "$man" | groff -man -Tutf8 -ww -z 2>&1)" ""
  fi
  local d
  for d in README.md docs/images/report.png; do
    [[ -f $p/share/doc/luaload/$d ]] && ok "$name: share/doc/luaload/$d" || not_ok "$name: share/doc/luaload/$d"
  done
  expect_eq "$name: share/doc/luaload/docs/*.md" \
    "$(cd "$p/share/doc/luaload/docs" 2>/dev/null && ls ./*.md)" "$(cd "$ROOT/docs" && ls ./*.md)"
}

# ---- the binary, run from elsewhere ----
# The script requires ll_install_marker, which only the tree's own Lua
# library has; it also prints package.path, which must not name the source
# tree. LUALOAD_PATH is unset so that nothing else is searched first.
mkdir -p "$T/scripts" "$T/elsewhere"
SCRIPT=$(script scripts/package.lua <<'EOF'
local http = require("luaload.http")
local ll = require("luaload")
local marker = require("ll_install_marker")
options = { vus = 2, iterations = 20 }
local client = http.Client{ timeout = "10s" }
function setup()
  print("marker: " .. marker)
  print("path: " .. package.path)
end
function default()
  local res = client:get(__ENV.URL .. "/status/200")
  ll.check(res, { ["status is 200"] = function(r) return r.status == 200 end })
end
EOF
)

# served_requests: the target's count of requests so far
served_requests() { curl -s "$URL/stats" | jq -r .requests; }

# check_run NAME PREFIX
check_run() {
  local name=$1 bin=$2/bin/luaload
  printf 'return "%s"\n' "$name" >"$2/share/luaload/lua/ll_install_marker.lua"
  (cd "$T/elsewhere" && timeout -k 5 30 "$bin" version) >"$T/version.out" 2>&1
  expect_match "$name: luaload version, from another directory" "$T/version.out" "^luaload $VERSION( |$)"
  local before
  before=$(served_requests)
  (cd "$T/elsewhere" && env -u LUALOAD_PATH timeout -k 5 60 "$bin" run "$SCRIPT" -q -e "URL=$URL" \
    --summary-export "$T/s.json") >"$T/run.out" 2>"$T/run.err"
  expect_eq "$name: run exits 0" "$?" 0 || head -c 1000 "$T/run.err"
  expect_eq "$name: http_reqs" "$(cnt http_reqs)" 20
  expect_eq "$name: checks passed" "$(passes checks)" 20
  expect_eq "$name: the target served them" "$(($(served_requests) - before))" 20
  expect_match "$name: require() used the tree's own Lua library" "$T/run.out" "^marker: $name$"
  if grep -qF "$ROOT/lib/lua" "$T/run.out"; then
    not_ok "$name: package.path does not name the source tree" "$(grep '^path:' "$T/run.out")"
  else
    ok "$name: package.path does not name the source tree"
  fi
  expect_match "$name: package.path has the tree's share/luaload/lua" "$T/run.out" \
    "^path: .*$2/bin/\.\./share/luaload/lua/\?\.lua"
  # luaload new: its .luarc.json names the tree's annotations, and its
  # script runs (-u/-i over the template's options, for a short run)
  mkdir -p "$T/new-$name"
  (cd "$T/new-$name" && timeout -k 5 30 "$bin" new) >"$T/new.out" 2>&1
  expect_eq "$name: luaload new: .luarc.json names share/luaload/lua/meta" \
    "$(jq -r '."workspace.library"[0]' "$T/new-$name/.luarc.json" 2>&1)" "$(realpath "$2/share/luaload/lua/meta")"
  (cd "$T/new-$name" && timeout -k 5 60 "$bin" run script.lua -q -u 2 -i 10 -e "BASE_URL=$URL" \
    --summary-export "$T/s.json") >"$T/run.out" 2>"$T/run.err"
  expect_eq "$name: luaload new's script runs (exit 0)" "$?" 0 || head -c 1000 "$T/run.err"
  expect_eq "$name: luaload new's script: http_reqs" "$(cnt http_reqs)" 10
}

# the server is the unpacked binary too
LUALOAD=$T/root/usr/bin/luaload start_serve

check_tree deb "$T/root/usr"
check_run deb "$T/root/usr"

# ---- cmake --install ----
"$CMAKE" --install "$BUILD" --prefix "$T/prefix" >"$T/install.out" 2>&1
expect_eq "cmake --install --prefix exits 0" "$?" 0 || tail -5 "$T/install.out"
(cd "$T/root/usr" && find . ! -name ll_install_marker.lua | sort) >"$T/deb.files"
(cd "$T/prefix" && find . | sort) >"$T/prefix.files"
if diff "$T/deb.files" "$T/prefix.files" >"$T/diff"; then
  ok "cmake --install puts the package's files"
else
  not_ok "cmake --install puts the package's files" "$(head -c 400 "$T/diff")"
fi
check_tree install "$T/prefix"
check_run install "$T/prefix"

finish
