#!/usr/bin/env bash
# jwt.sh -- JWT generation speed: tokens/s per core for ES256 and RS256
# (also EdDSA and HS256), as pregeneration does it (jwt.Generator{
# pregenerate = N } into a fresh cache directory), on 1 thread and on every
# core; the figure is the cache's own "generated N tokens in S s" line.
# For reference, libjwt 1.10's rate on the same keys (it parses the PEM
# key again for every token, which is why luaload signs with OpenSSL EVP
# on a key parsed once), when libjwt-dev is installed.
#
# Run it alone on the machine: flock /tmp/build.lock bench/jwt.sh
# Knobs: N_ES(200000) N_RS(20000) LUALOAD(build/luaload)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUALOAD=${LUALOAD:-$ROOT/build/luaload}
N_ES=${N_ES:-200000}
N_RS=${N_RS:-20000}
[[ -x $LUALOAD ]] || { echo "jwt.sh: build luaload first" >&2; exit 2; }
SCR=$(mktemp -d -t luaload-jwt-bench.XXXXXX)
trap 'rm -rf "$SCR"' EXIT
trap 'exit 130' INT TERM
CORES=$(nproc)

openssl ecparam -name prime256v1 -genkey -noout -out "$SCR/es256.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$SCR/rs256.pem" 2>/dev/null
openssl genpkey -algorithm ed25519 -out "$SCR/eddsa.pem" 2>/dev/null

# rate ALG KEYOPT N THREADS: prints "total/s per-thread/s"
rate() {
  local dir=$SCR/cache.$RANDOM
  cat >"$SCR/gen.lua" <<LUA
local jwt = require("luaload.jwt")
local gen = jwt.Generator{ $2, kid = "bench", sub = "user", exp_in = "1h", claims = { browser = "chrome" },
                           pregenerate = $3, threads = $4, cache_dir = "$dir" }
function default() end
LUA
  "$LUALOAD" run "$SCR/gen.lua" -i 1 -q --no-summary 2>"$SCR/err" >/dev/null
  sed -n 's/^luaload: jwt: generated [0-9]* tokens in [0-9.]* s (\([0-9]*\)\/s, \([0-9]*\)\/s per thread)$/\1 \2/p' "$SCR/err"
  rm -rf "$dir"
}

printf '%-6s %10s %14s %14s %16s\n' alg tokens "1 thread /s" "$CORES threads /s" "per core (all)"
for c in "ES256|key = \"$SCR/es256.pem\"|$N_ES" "RS256|key = \"$SCR/rs256.pem\"|$N_RS" \
         "EdDSA|key = \"$SCR/eddsa.pem\"|$N_ES" "HS256|secret = \"bench-secret\"|$N_ES"; do
  IFS='|' read -r alg opt n <<<"$c"
  read -r one _ < <(rate "$alg" "$opt" "$n" 1)
  read -r all per < <(rate "$alg" "$opt" "$n" "$CORES")
  printf '%-6s %10s %14s %14s %16s\n' "$alg" "$n" "${one:-?}" "${all:-?}" "${per:-?}"
done

if pkg-config --exists libjwt 2>/dev/null; then
  cat >"$SCR/libjwt.c" <<'C'
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    static unsigned char key[65536];
    size_t kl = fread(key, 1, sizeof(key), f);
    fclose(f);
    int n = atoi(argv[3]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        jwt_t *j;
        jwt_new(&j);
        jwt_set_alg(j, jwt_str_alg(argv[2]), key, (int)kl);
        jwt_add_grant(j, "sub", "user");
        jwt_add_grant_int(j, "iat", time(NULL));
        char *s = jwt_encode_str(j);
        if (!s) return 1;
        free(s);
        jwt_free(j);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.0f\n", n / ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9));
    return 0;
}
C
  if cc -O2 "$SCR/libjwt.c" -o "$SCR/libjwt" $(pkg-config --cflags --libs libjwt) 2>/dev/null; then
    echo "libjwt $(pkg-config --modversion libjwt), 1 thread (reference):"
    echo "  ES256 $("$SCR/libjwt" "$SCR/es256.pem" ES256 $((N_ES / 10)))/s   RS256 $("$SCR/libjwt" "$SCR/rs256.pem" RS256 $((N_RS / 10)))/s"
  fi
fi
