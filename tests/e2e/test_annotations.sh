#!/usr/bin/env bash
# The editor annotations (lib/lua/meta, docs/editor.md) against the binary:
# helpers/api_names.lua lists every public name a script can reach (module
# functions and fields, the methods and fields of the objects they make,
# the globals), this file lists what lib/lua/meta/*.lua annotates
# (`function t.f(` / `function T:m(`, `t.f = ...`, `---@field f`, globals,
# `---@class A: B` inheriting B's), and each name missing on either side
# fails. Also: every module a script can require has its meta file
# (`---@meta NAME` ... `return`), every meta file parses, none is where
# require() looks for a module, and the fields of the input shapes
# (options, params) are names the sources know.
source "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
META=$ROOT/lib/lua/meta
# modules a script does not require itself (luaload.core is the C half of
# luaload, luaload.coroutine replaces the coroutine library, http_wrap and
# http_forms are parts of luaload.http, sse_wrap of luaload.sse)
INTERNAL=" luaload.core luaload.coroutine luaload.http_wrap luaload.http_forms luaload.sse_wrap "

# the modules: package.preload (src/lua_api/state.c) and lib/lua's files
{
  grep -o 'preload(L, "[^"]*"' "$ROOT/src/lua_api/state.c" | sed 's/.*"\(.*\)"/\1/'
  [[ -f $ROOT/lib/lua/luaload.lua ]] && echo luaload
  for f in "$ROOT"/lib/lua/luaload/*.lua; do echo "luaload.$(basename "$f" .lua)"; done
} | sort -u | while read -r m; do [[ $INTERNAL == *" $m "* ]] || echo "$m"; done >"$T/modules.txt"

# What lib/lua/meta annotates: "class C" and "name C.m" lines (globals as
# members of the class _G); a member is attributed through the class bound
# to its table (`---@class C` right above `local t = {}` or a global
# `t = {}`), and a class gets its parents' members (`---@class C: P`).
annotated() {
  awk '
    FNR == 1 { delete var; cur = ""; pending = "" }
    /^---@class[ \t]/ {
      s = $0; sub(/^---@class[ \t]+/, "", s); sub(/^\([^)]*\)[ \t]*/, "", s)
      name = s; sub(/[ \t:].*$/, "", name)
      cur = name; pending = name
      print "class " name
      if (match(s, /^[^ \t:]+[ \t]*:[ \t]*[^ \t,]+/)) {
        p = substr(s, RSTART, RLENGTH); sub(/^[^:]*:[ \t]*/, "", p)
        parent[name] = p
      }
      next
    }
    /^---@field[ \t]/ {
      s = $0; sub(/^---@field[ \t]+/, "", s); sub(/^(public|private|protected|package)[ \t]+/, "", s)
      if (s ~ /^\[/) next
      f = s; sub(/[? \t].*$/, "", f)
      if (cur == "") print "error " FILENAME ":" FNR ": @field outside a class block"
      else { print "name " cur "." f; has[cur SUBSEP f] = 1 }
      next
    }
    /^---/ { next }
    /^[ \t]*(--.*)?$/ { cur = ""; pending = ""; next }
    {
      line = $0
      if (line ~ /^local[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*=/) {
        v = line; sub(/^local[ \t]+/, "", v); sub(/[ \t=].*$/, "", v)
        if (pending != "") var[v] = pending
      } else if (line ~ /^function[ \t]+[A-Za-z_][A-Za-z0-9_]*[.:][A-Za-z_][A-Za-z0-9_]*[ \t]*\(/ ||
                 line ~ /^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*[ \t]*=/) {
        s = line; sub(/^function[ \t]+/, "", s)
        t = s; sub(/[.:].*$/, "", t)
        m = s; sub(/^[^.:]*[.:]/, "", m); sub(/[^A-Za-z0-9_].*$/, "", m)
        if (t in var) { print "name " var[t] "." m; has[var[t] SUBSEP m] = 1 }
        else print "error " FILENAME ":" FNR ": " t " is no table bound to a ---@class"
      } else if (line ~ /^function[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/) {
        f = line; sub(/^function[ \t]+/, "", f); sub(/[^A-Za-z0-9_].*$/, "", f)
        print "name _G." f; print "class _G"
      } else if (line ~ /^[A-Za-z_][A-Za-z0-9_]*[ \t]*=/) {
        v = line; sub(/[ \t=].*$/, "", v)
        print "name _G." v; print "class _G"
        if (pending != "") var[v] = pending
      }
      cur = ""; pending = ""
    }
    END { # a class has its parents members
      for (c in parent)
        for (p = parent[c]; p != ""; p = parent[p])
          for (k in has) {
            split(k, a, SUBSEP)
            if (a[1] == p) print "name " c "." a[2]
          }
    }' "$@"
}
annotated "$META"/*.lua | sort -u >"$T/annotated.txt"
sed -n 's/^name //p' "$T/annotated.txt" | sort -u >"$T/a_names.txt"
sed -n 's/^class //p' "$T/annotated.txt" | sort -u >"$T/a_classes.txt"
if grep -q '^error ' "$T/annotated.txt"; then
  while read -r _ msg; do not_ok "annotation: $msg"; done < <(grep '^error ' "$T/annotated.txt")
else
  ok "every annotated member belongs to a class"
fi

# the names the sources know (identifiers of the C and the Lua), and the
# candidates api_names.lua tries on objects whose __index is a function
find "$ROOT/src" "$ROOT/lib/lua" \( -name '*.[ch]' -o -name '*.lua' \) -not -path "$META/*" -print0 |
  xargs -0 grep -ohE '[A-Za-z_][A-Za-z0-9_]*' | sort -u >"$T/source_names.txt"
{ cat "$T/source_names.txt"; sed 's/.*\.//' "$T/a_names.txt"; } | sort -u >"$T/candidates.txt"

start_serve
echo "a file for http.FileStream" >"$T/file.txt"
run_ll run "$(dirname "$0")/helpers/api_names.lua" -i 1 -u 1 -q \
  -e "URL=$URL" -e "FILE=$T/file.txt" -e "CANDIDATES=$T/candidates.txt" \
  -e "MODULES=$(paste -sd, "$T/modules.txt")" -e "META_FILES=$(printf '%s\n' "$META"/*.lua | paste -sd,)"
cp "$OUT" "$T/runtime.txt"
expect_eq "api_names.lua: exit 0" "$RC" 0
expect_match "api_names.lua ran to its end (handle_summary)" "$T/runtime.txt" '^done$'
if grep -q '^error ' "$T/runtime.txt"; then
  while read -r _ msg; do not_ok "api_names.lua: $msg"; done < <(grep '^error ' "$T/runtime.txt")
else
  ok "api_names.lua made every object it inspects"
fi
sed -n 's/^name //p' "$T/runtime.txt" | sort -u >"$T/r_names.txt"
sed -n 's/^class //p' "$T/runtime.txt" | sort -u >"$T/r_classes.txt"
sed -n 's/^shape //p' "$T/runtime.txt" | sort -u >"$T/shapes.txt"
expect_cmp "the binary has names to compare (over 200)" "x > 200" "$(wc -l <"$T/r_names.txt")"

# every module: a meta file named after it, ---@meta NAME first, a return last
n=0
while read -r m; do
  n=$((n + 1))
  f=$META/$m.lua
  if [[ ! -f $f ]]; then
    not_ok "module $m has lib/lua/meta/$m.lua" "no such file"
    continue
  fi
  if [[ $(head -n 1 "$f") != "---@meta $m" ]] || ! grep -v '^[[:space:]]*$' "$f" | tail -n 1 | grep -q '^return [A-Za-z_]'; then
    not_ok "lib/lua/meta/$m.lua starts with ---@meta $m and ends with a return" "first line: $(head -n 1 "$f")"
  fi
  grep -qx "module $m" "$T/runtime.txt" || not_ok "api_names.lua inspected module $m"
done <"$T/modules.txt"
expect_cmp "modules to annotate (at least 12)" "x >= 12" "$n"
for f in "$META"/*.lua; do
  b=$(basename "$f" .lua)
  [[ $b == globals ]] && continue
  grep -qx "$b" "$T/modules.txt" || not_ok "lib/lua/meta/$b.lua annotates a module a script can require" "no module $b"
done
expect_eq "globals.lua is ---@meta _ (no module)" "$(head -n 1 "$META/globals.lua")" "---@meta _"

# the meta files parse, and require() never finds one
bad=$(grep '^syntax ' "$T/runtime.txt" | grep -v ' ok$')
expect_eq "every meta file parses as Lua" "$bad" ""
expect_eq "every meta file was parsed" "$(grep -c '^syntax ' "$T/runtime.txt")" "$(printf '%s\n' "$META"/*.lua | wc -l)"
shadow=$(grep '^resolves ' "$T/runtime.txt" | grep '/meta/')
expect_eq "require() of a module never reaches lib/lua/meta" "$shadow" ""
expect_eq "every module resolved (preload or a file)" \
  "$(grep '^resolves ' "$T/runtime.txt" | awk '$3 == "nil"' | wc -l)" 0

# classes: each inspected one annotated, each annotated one inspected or a shape
while read -r c; do
  grep -qxF "$c" "$T/a_classes.txt" || not_ok "class $c is annotated" "no ---@class $c in lib/lua/meta"
done <"$T/r_classes.txt"
sort -u "$T/r_classes.txt" "$T/shapes.txt" >"$T/known_classes.txt"
while read -r c; do
  grep -qxF "$c" "$T/known_classes.txt" ||
    not_ok "annotated class $c is inspected by api_names.lua or listed there as a shape" "neither"
done <"$T/a_classes.txt"
while read -r c; do
  grep -qxF "$c" "$T/a_classes.txt" || not_ok "shape $c (api_names.lua) is annotated" "no ---@class $c"
done <"$T/shapes.txt"

# the names, both ways, on the inspected classes
awk 'NR == FNR { keep[$0] = 1; next } { c = $0; sub(/\.[^.]*$/, "", c); if (c in keep) print }' \
  "$T/r_classes.txt" "$T/a_names.txt" | sort -u >"$T/a_checked.txt"
comm -23 "$T/r_names.txt" "$T/a_checked.txt" >"$T/missing.txt"
comm -13 "$T/r_names.txt" "$T/a_checked.txt" >"$T/extra.txt"
while read -r name; do not_ok "annotated: $name" "the binary has it, lib/lua/meta does not"; done <"$T/missing.txt"
while read -r name; do not_ok "exists: $name" "lib/lua/meta annotates it, the binary has no such name"; done <"$T/extra.txt"
[[ ! -s $T/missing.txt ]] && ok "every name of the binary is annotated ($(wc -l <"$T/r_names.txt"))"
[[ ! -s $T/extra.txt ]] && ok "every annotated name exists ($(wc -l <"$T/a_checked.txt"))"

# the shapes' fields are names the sources know (a typo such as multiplx fails)
awk 'NR == FNR { keep[$0] = 1; next } { c = $0; sub(/\.[^.]*$/, "", c); if (c in keep) print }' \
  "$T/shapes.txt" "$T/a_names.txt" >"$T/shape_names.txt"
unknown=0
while read -r name; do
  if ! grep -qxF "${name##*.}" "$T/source_names.txt"; then
    not_ok "shape field $name is a name the sources know" "no '${name##*.}' in src/ or lib/lua/"
    unknown=$((unknown + 1))
  fi
done <"$T/shape_names.txt"
expect_cmp "shape fields checked (over 100)" "x > 100" "$(wc -l <"$T/shape_names.txt")"
expect_eq "every shape field is known" "$unknown" 0
finish
