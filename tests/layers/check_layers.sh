#!/usr/bin/env bash
# check_layers.sh SRC_DIR -- the layer rules that include paths cannot enforce.
#
# CMake gives each library only the include directories of the layers below
# it, so a project header from the wrong layer does not compile. System
# headers are always found, though, so this checks them by name, and checks
# the project headers once more in case a file is compiled elsewhere:
#   base     <- nothing            metrics <- base
#   http     <- metrics, base      run     <- http, metrics, base
#   serve    <- base               lua_api <- run, http, metrics, base
#   curl headers only in src/core/http/, c-ares's only in http/dns_lookup.c,
#   Lua headers only in src/lua_api/;
#   run/main.c and run/commands.c, the command, also start serve.
set -uo pipefail
SRC=${1:?usage: check_layers.sh SRC_DIR}
cd "$SRC" || exit 2
fail=0
allowed() {
  case $1 in
    base) echo "base" ;;
    metrics) echo "metrics base" ;;
    http) echo "http metrics base" ;;
    run) echo "run http metrics base" ;;
    serve) echo "serve base" ;;
    lua_api) echo "lua_api run http metrics base" ;;
  esac
}
dir_of() { # the layer a header lives in, or "" when it is not the project's
  local h=$1 d
  for d in base metrics http run serve; do [[ -f src/core/$d/$h ]] && { echo "$d"; return; }; done
  [[ -f src/lua_api/$h ]] && echo lua_api
}
for f in src/core/*/*.[ch] src/lua_api/*.[ch]; do
  layer=$(basename "$(dirname "$f")")
  ok=$(allowed "$layer")
  [[ $f == src/core/run/main.c || $f == src/core/run/commands.c ]] && ok="$ok serve" # the command: run and serve
  while IFS= read -r h; do
    d=$(dir_of "$h")
    [[ -z $d ]] && continue
    if [[ " $ok " != *" $d "* ]]; then
      echo "FAIL $f includes $h from $d/ (a $layer file may include: $ok)"
      fail=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
  if grep -q '^#include <curl/' "$f" && [[ $layer != http ]]; then
    echo "FAIL $f includes a curl header (only src/core/http may)"
    fail=1
  fi
  if grep -q '^#include <ares' "$f" && [[ $f != src/core/http/dns_lookup.c ]]; then
    echo "FAIL $f includes a c-ares header (only src/core/http/dns_lookup.c may)"
    fail=1
  fi
  if grep -qE '^#include <(lua|lauxlib|lualib|luajit)\.h>' "$f" && [[ $layer != lua_api ]]; then
    echo "FAIL $f includes a Lua header (only src/lua_api may; run/ goes through script.h)"
    fail=1
  fi
done
n=$(ls src/core/*/*.[ch] src/lua_api/*.[ch] | wc -l)
if ((fail)); then echo "layers: violations found in $n files"; exit 1; fi
echo "layers: $n files, every include points down the layers"
