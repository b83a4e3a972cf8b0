#!/usr/bin/env bash
# check_sizes.sh SRC_DIR -- no C function over 150 lines and no file over
# 900 lines under src/ (issue 36): a function a reader takes in at once, a
# file of one concern. Prints each one over, and fails when there is one.
#
# A function is counted from the first line of its signature (a line that
# starts in column 0) to its closing brace in column 0, as the sources are
# written (the brace that opens the body ends the signature's last line).
set -uo pipefail
SRC=${1:?usage: check_sizes.sh SRC_DIR}
cd "$SRC" || exit 2
MAX_FN=150
MAX_FILE=900
mapfile -t files < <(find src -name '*.[ch]' | sort)
fail=0
for f in "${files[@]}"; do
  n=$(wc -l <"$f")
  if ((n > MAX_FILE)); then
    echo "FAIL $f: $n lines (at most $MAX_FILE)"
    fail=1
  fi
done
long=$(awk -v max="$MAX_FN" '
  FNR == 1 { infn = 0; start = 0 }
  infn {
    if ($0 ~ /^}/) {
      len = FNR - start + 1
      if (len > max) printf "FAIL %s:%d: %s() is %d lines (at most %d)\n", FILENAME, start, name, len, max
      infn = 0; start = 0
    }
    next
  }
  /^[A-Za-z_]/ && $0 !~ /^(typedef|struct|enum|union|extern)[ \t]/ && $0 ~ /\(/ { start = FNR; sig = $0 }
  /^[^#].*\)[ \t]*\{[ \t]*$/ || /^[ \t]+.*\)[ \t]*\{[ \t]*$/ {
    if (start) {
      name = sig; sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
      infn = 1
    }
    next
  }
  /;[ \t]*$/ && !infn { start = 0 }
' "${files[@]}")
if [[ -n $long ]]; then
  echo "$long"
  fail=1
fi
if ((fail)); then echo "sizes: too long in ${#files[@]} files"; exit 1; fi
echo "sizes: ${#files[@]} files, none over $MAX_FILE lines, no function over $MAX_FN lines"
