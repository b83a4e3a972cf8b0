#!/usr/bin/env bash
# math.random: one generator per VU, seeded from the run's seed (--seed,
# LUALOAD_SEED, options.seed, else getrandom(2) and printed in the banner);
# the same seed gives the same sequences; Lua 5.1's ranges and errors; bad
# seeds exit 104. No traffic: the scripts only draw numbers.
source "$(dirname "$0")/lib.sh"

# 4 VUs x 2 iterations each, on however many workers -w says; every line is
# one io.write, so lines from the two workers do not interleave
S=$(script seq.lua <<'LUA'
local ll = require("luaload")
options = { scenarios = { s = { executor = "per-vu-iterations", vus = 4, iterations = 2 } } }
local at_init = math.random(1, 1000000000)
function setup() return { n = math.random(1, 1000000000) } end
function default(data)
  local t = {}
  for i = 1, 5 do t[i] = math.random(1, 1000000000) end
  io.write(string.format("R vu=%d it=%d %s\n", ll.vu.id, ll.vu.iteration, table.concat(t, ",")))
  if ll.vu.id == 1 and ll.vu.iteration == 0 then io.write(string.format("R setup %d\n", data.n)) end
end
function teardown() io.write(string.format("R teardown %d\n", math.random(1, 1000000000))) end
LUA
)
# draws FILE ARGS...: the draws of a run, sorted by VU and iteration
draws() {
  local f=$1
  shift
  run_ll run "$S" --no-summary "$@"
  grep '^R ' "$OUT" | sort >"$T/$f"
  cp "$OUT" "$T/$f.out"
}

draws a -w 2
expect_eq "no seed: exit 0" "$RC" 0
expect_eq "no seed: 4 VUs x 2 iterations + setup + teardown" "$(wc -l <"$T/a")" 10
draws b -w 2
if cmp -s "$T/a" "$T/b"; then not_ok "two runs without --seed differ" "$(head -3 "$T/a")"; else ok "two runs without --seed differ"; fi
expect_match "the banner prints the seed it picked" "$T/a.out" "^       seed: [0-9]+ \(random; --seed [0-9]+ to repeat\)$"
SEED=$(sed -n 's/^       seed: \([0-9]*\) (random.*/\1/p' "$T/a.out")
draws a2 -w 2 --seed "$SEED"
expect_eq "--seed <the banner's seed> repeats the run" "$(cmp -s "$T/a" "$T/a2" && echo same)" same
expect_match "the banner prints a given seed" "$T/a2.out" "^       seed: $SEED$"

draws s1 -w 2 --seed 42
draws s2 -w 2 --seed 42
expect_eq "--seed 42 twice, 2 workers: the same sequences" "$(cmp -s "$T/s1" "$T/s2" && echo same)" same
if cmp -s "$T/s1" "$T/a"; then not_ok "--seed 42 differs from a random seed"; else ok "--seed 42 differs from a random seed"; fi
draws s3 -w 1 --seed 42
expect_eq "a VU's sequence does not depend on the worker count" \
  "$(grep vu= "$T/s3")" "$(grep vu= "$T/s1")"
expect_eq "VUs draw different sequences" \
  "$(grep 'it=0' "$T/s1" | awk '{ print $4 }' | sort -u | wc -l)" 4
expect_eq "iterations of a VU go on with its sequence" \
  "$(grep 'vu=1 ' "$T/s1" | awk '{ print $4 }' | sort -u | wc -l)" 2
draws s4 -w 2 --seed 43
if cmp -s "$T/s1" "$T/s4"; then not_ok "--seed 43 differs from --seed 42"; else ok "--seed 43 differs from --seed 42"; fi

# LUALOAD_SEED and options.seed: CLI > env > options
LUALOAD_SEED=42 draws e1 -w 2
expect_eq "LUALOAD_SEED=42 is --seed 42" "$(cmp -s "$T/s1" "$T/e1" && echo same)" same
sed -i 's/^options = {/options = { seed = 42,/' "$S"
draws o1 -w 2
expect_eq "options.seed = 42 is --seed 42 (setup and teardown included)" "$(cmp -s "$T/s1" "$T/o1" && echo same)" same
draws o2 -w 2 --seed 43
expect_eq "--seed beats options.seed" "$(cmp -s "$T/s4" "$T/o2" && echo same)" same
LUALOAD_SEED=43 draws o3 -w 2
expect_eq "LUALOAD_SEED beats options.seed" "$(cmp -s "$T/s4" "$T/o3" && echo same)" same
sed -i 's/seed = 42,/seed = "42",/' "$S"
draws o4 -w 2
expect_eq "options.seed as a string" "$(cmp -s "$T/s1" "$T/o4" && echo same)" same

# Lua 5.1's contract: ranges, errors; math.randomseed
R=$(script range.lua <<'LUA'
function default()
  local seen, bad = {}, 0
  for i = 1, 20000 do
    local d = math.random(1, 6)
    if d < 1 or d > 6 or d ~= math.floor(d) then bad = bad + 1 end
    seen[d] = true
    local f = math.random()
    if f < 0 or f >= 1 then bad = bad + 1 end
    local m = math.random(3)
    if m < 1 or m > 3 or m ~= math.floor(m) then bad = bad + 1 end
    local n = math.random(-2, 2)
    if n < -2 or n > 2 then bad = bad + 1 end
  end
  local faces = 0
  for k in pairs(seen) do faces = faces + 1 end
  io.write("bad=", bad, " faces=", faces, " one=", math.random(7, 7), "\n")
  local ok, err = pcall(function() local x = math.random(0) return x end)
  io.write("random(0): ", tostring(ok), " ", err, "\n")
  ok, err = pcall(function() local x = math.random(5, 2) return x end)
  io.write("random(5,2): ", tostring(ok), " ", err, "\n")
  ok, err = pcall(function() local x = math.random(1, 2, 3) return x end)
  io.write("random(1,2,3): ", tostring(ok), " ", err, "\n")
  math.randomseed(7)
  local a = { math.random(), math.random(100) }
  math.randomseed(7)
  local b = { math.random(), math.random(100) }
  io.write("reseed: ", tostring(a[1] == b[1] and a[2] == b[2]), "\n")
end
LUA
)
run_ll run "$R" -q --no-summary
expect_eq "range script: exit 0" "$RC" 0
expect_match "math.random(1,6), (), (3), (-2,2) stay in range; all 6 faces" "$OUT" "^bad=0 faces=6 one=7$"
expect_match "math.random(0) raises" "$OUT" "^random\(0\): false .*bad argument #1 to 'random' \(interval is empty\)$"
expect_match "math.random(5,2) raises" "$OUT" "^random\(5,2\): false .*bad argument #2 to 'random' \(interval is empty\)$"
expect_match "math.random(1,2,3) raises" "$OUT" "^random\(1,2,3\): false .*wrong number of arguments$"
expect_match "math.randomseed(7) repeats a sequence" "$OUT" "^reseed: true$"

# bad seeds: 104 with one line
run_ll run "$S" --seed abc
expect_eq "bad --seed: exit 104" "$RC" 104
expect_eq "bad --seed: message" "$(cat "$ERR")" \
  "luaload: invalid value for --seed: 'abc' (expected an integer from 0 to 18446744073709551615)"
run_ll run "$S" --seed=18446744073709551616
expect_eq "--seed above 2^64-1: exit 104" "$RC" 104
expect_match "--seed above 2^64-1: message" "$ERR" "invalid value for --seed: '18446744073709551616'"
run_ll run "$S" --seed -1
expect_eq "negative --seed: exit 104" "$RC" 104
LUALOAD_SEED=soon run_ll run "$S"
expect_eq "bad LUALOAD_SEED: exit 104" "$RC" 104
expect_match "bad LUALOAD_SEED: message" "$ERR" "invalid value for LUALOAD_SEED: 'soon'"
sed -i 's/seed = "42",/seed = 1.5,/' "$S"
run_ll run "$S"
expect_eq "bad options.seed: exit 104" "$RC" 104
expect_match "bad options.seed: message" "$ERR" "^luaload: options.seed: expected an integer from 0 to 9007199254740992"
expect_eq "bad options.seed: one line" "$(wc -l <"$ERR")" 1
finish
