#!/usr/bin/env bash
# check_layers.sh SRC_DIR -- the layer rules that include paths cannot enforce.
#
# CMake gives each library only the include directories of the rooms below
# it, so a project header from the wrong room does not compile. System
# headers are always found, though, so this checks them by name, and checks
# the project headers once more in case a file is compiled elsewhere:
#   base    <- nothing               token   <- base
#   serve   <- base                  metrics <- base
#   convert <- base (cJSON and libyaml: `luaload convert`)
#   proto   <- base (the one C++ file: libprotobuf's headers only there)
#   live    <- metrics, base         http    <- metrics, base
#   run     <- http, live, token, metrics, base
#   quick, dist <- run and all below it (not each other)
#   lua_api <- run and all below it, and proto
#   app     <- every room
#   lua_api reaches run/ through its two doors only: script_host.h (up: the
#     worker and the VU as opaque types, and functions) and script.h (down:
#     it implements it), and config.h (options.c fills the config); those
#     reach no other run/ header than http_exchange.h, scenario.h and
#     segment.h, so ll_worker, ll_vu and ll_run stay opaque to lua_api
#   curl headers only in src/core/http/, c-ares's only in http/dns_lookup.c,
#   wslay's only in src/core/serve/ and src/core/http/ (WebSocket framing),
#   nghttp2's only there too (the client's HTTP/2, serve's h2c gRPC echo),
#   Lua headers only in src/lua_api/; file names unique across src/;
#   and the libraries of CMakeLists.txt link by the same rules.
set -uo pipefail
SRC=${1:?usage: check_layers.sh SRC_DIR}
cd "$SRC" || exit 2
fail=0
ROOMS="base token serve convert metrics proto live http run quick dist lua_api app"
below_run="run http live token metrics base"
allowed() {
  case $1 in
    base) echo "base" ;;
    token) echo "token base" ;;
    serve) echo "serve base" ;;
    convert) echo "convert base" ;;
    proto) echo "proto base" ;;
    metrics) echo "metrics base" ;;
    live) echo "live metrics base" ;;
    http) echo "http metrics base" ;;
    run) echo "$below_run" ;;
    quick) echo "quick $below_run" ;;
    dist) echo "dist $below_run" ;;
    lua_api) echo "lua_api $below_run proto" ;;
    app) echo "app $ROOMS" ;;
  esac
}
room_dir() { # where a room's files are
  case $1 in lua_api | app) echo "src/$1" ;; *) echo "src/core/$1" ;; esac
}
# the run/ headers a lua_api file may include, and all that they may reach
LUA_API_DOORS="script_host.h script.h config.h"
LUA_API_SEES="$LUA_API_DOORS http_exchange.h scenario.h segment.h"
declare -A room_of # a project header's name -> its room
files=()
for r in $ROOMS; do
  for f in "$(room_dir "$r")"/*.[ch] "$(room_dir "$r")"/*.cc; do
    [[ -f $f ]] || continue
    files+=("$f")
    [[ $f == *.h && -z ${room_of[${f##*/}]:-} ]] && room_of[${f##*/}]=$r
  done
done
for f in "${files[@]}"; do
  room=${f%/*}
  room=${room##*/}
  ok=$(allowed "$room")
  if [[ -z $ok ]]; then
    echo "FAIL $f is in src/$room/, which is no room of the layer rules"
    fail=1
    continue
  fi
  while IFS= read -r h; do
    d=${room_of[$h]:-}
    [[ -z $d ]] && continue
    if [[ " $ok " != *" $d "* ]]; then
      echo "FAIL $f includes $h from $d/ (a $room file may include: $ok)"
      fail=1
    elif [[ $room == lua_api && $d == run && " $LUA_API_DOORS " != *" $h "* ]]; then
      echo "FAIL $f includes $h from run/ (lua_api reaches run/ only through: $LUA_API_DOORS)"
      fail=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
  if grep -q '^#include <curl/' "$f" && [[ $room != http ]]; then
    echo "FAIL $f includes a curl header (only src/core/http may)"
    fail=1
  fi
  if grep -q '^#include <google/protobuf/' "$f" && [[ $room != proto ]]; then
    echo "FAIL $f includes a libprotobuf header (only src/core/proto may)"
    fail=1
  fi
  if grep -q '^#include <ares' "$f" && [[ $f != src/core/http/dns_lookup.c ]]; then
    echo "FAIL $f includes a c-ares header (only src/core/http/dns_lookup.c may)"
    fail=1
  fi
  if grep -q '^#include <wslay/' "$f" && [[ $room != serve && $room != http ]]; then
    echo "FAIL $f includes a wslay header (only src/core/serve and src/core/http may)"
    fail=1
  fi
  if grep -q '^#include <nghttp2/' "$f" && [[ $room != serve && $room != http ]]; then
    echo "FAIL $f includes an nghttp2 header (only src/core/serve and src/core/http may)"
    fail=1
  fi
  if grep -qE '^#include <(lua|lauxlib|lualib|luajit)\.h>' "$f" && [[ $room != lua_api ]]; then
    echo "FAIL $f includes a Lua header (only src/lua_api may; run/ goes through script.h)"
    fail=1
  fi
done
# what lua_api's doors include from run/, all the way down, keeps ll_worker,
# ll_vu and ll_run opaque to it
for h in $LUA_API_SEES; do
  [[ -f src/core/run/$h ]] || { echo "FAIL src/core/run/$h, a header lua_api may see, is missing"; fail=1; continue; }
  while IFS= read -r i; do
    [[ ${room_of[$i]:-} == run && " $LUA_API_SEES " != *" $i "* ]] || continue
    echo "FAIL src/core/run/$h includes $i, which lua_api would see through its doors (they may reach: $LUA_API_SEES)"
    fail=1
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "src/core/run/$h")
done
# a room of src/core that the rules do not know
for d in src/core/*/; do
  r=$(basename "$d")
  [[ " $ROOMS " == *" $r "* ]] || { echo "FAIL src/core/$r/ is no room of the layer rules"; fail=1; }
done
# the libraries link down the layers too (CMakeLists.txt): run links no
# Lua, the rooms above it hand it what it needs (script.h, mode.h)
if [[ -f CMakeLists.txt ]]; then
  while read -r lib deps; do
    room=${lib#ll_}
    ok=$(allowed "$room")
    [[ -z $ok ]] && continue
    for d in $deps; do
      [[ $d == ll_* ]] || continue
      [[ " $ok " == *" ${d#ll_} "* ]] && continue
      echo "FAIL CMakeLists.txt links $lib with $d (${room} may use: $ok)"
      fail=1
    done
  done < <(tr '\n' ' ' <CMakeLists.txt | grep -o 'target_link_libraries( *ll_[a-z_]*[^)]*)' |
    sed 's/target_link_libraries( *\(ll_[a-z_]*\)\([^)]*\))/\1 \2/')
fi
# a reader finds a file by its name alone
dups=$(find src -name '*.[ch]' -printf '%f\n' | sort | uniq -d)
for d in $dups; do
  echo "FAIL more than one file named $d:" $(find src -name "$d")
  fail=1
done
n=${#files[@]}
if ((fail)); then echo "layers: violations found in $n files"; exit 1; fi
echo "layers: $n files, every include points down the layers, file names unique"
