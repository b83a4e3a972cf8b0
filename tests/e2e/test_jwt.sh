#!/usr/bin/env bash
# luaload.jwt: tokens from jwt.Generator (EC P-256/P-384/P-521, RSA, PSS,
# Ed25519, HS*) and jwt.sign verified with the openssl command line (an ES
# signature's raw r||s turned into DER by a few lines of python3), never
# with luaload's own code; the header and claims (kid, sub, aud, iss,
# claims, iat, exp, a v4 jti), alg inference, unique jti across VUs, the
# pregenerated cache (reused on a second run: its stderr line and the file's
# inode; regenerated when the key file's contents change), clear-cache, a
# user's token file streamed (CRLF, blank lines) with each token used once,
# running out, the ahead ring, jwt.decode, and one-line errors (exit 107).
# No traffic: the tokens are printed.
source "$(dirname "$0")/lib.sh"
export XDG_CACHE_HOME=$T/xdg

K=$T/keys
mkdir -p "$K"
openssl ecparam -name prime256v1 -genkey -noout -out "$K/p256.pem" 2>/dev/null # SEC1
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$K/p384.pem" 2>/dev/null # PKCS#8
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out "$K/p521.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$K/rsa.pem" 2>/dev/null
openssl genpkey -algorithm ed25519 -out "$K/ed.pem" 2>/dev/null
openssl ecparam -name secp256k1 -genkey -noout -out "$K/k256.pem" 2>/dev/null
for k in p256 p384 p521 rsa ed; do openssl pkey -in "$K/$k.pem" -pubout -out "$K/$k.pub" 2>/dev/null; done
SECRET='s3cret-for-hs'

# split TOKEN DIR: DIR/msg (the signing input), DIR/sig (raw), DIR/sig.der
# (ES: r||s as an ASN.1 SEQUENCE), DIR/header.json, DIR/payload.json
split() {
  mkdir -p "$2"
  python3 "$(dirname "$0")/helpers/jwt_split.py" "$1" "$2"
}

# verify TOKEN PUBKEY|SECRET: 0 when openssl verifies its signature
verify() {
  local d=$T/v.$RANDOM
  split "$1" "$d"
  local alg md
  alg=$(jq -r .alg "$d/header.json")
  md=sha${alg:2}
  case $alg in
    ES*) openssl dgst "-$md" -verify "$2" -signature "$d/sig.der" "$d/msg" >/dev/null 2>&1 ;;
    RS*) openssl dgst "-$md" -verify "$2" -signature "$d/sig" "$d/msg" >/dev/null 2>&1 ;;
    PS*) openssl dgst "-$md" -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:-1 -verify "$2" \
           -signature "$d/sig" "$d/msg" >/dev/null 2>&1 ;;
    EdDSA) openssl pkeyutl -verify -pubin -inkey "$2" -rawin -in "$d/msg" -sigfile "$d/sig" >/dev/null 2>&1 ;;
    HS*) [[ $(openssl dgst "-$md" -mac HMAC -macopt "key:$2" -binary "$d/msg" | od -An -tx1 | tr -d ' \n') == \
            $(od -An -tx1 "$d/sig" | tr -d ' \n') ]] ;;
    *) return 1 ;;
  esac
}
hdr() { local d=$T/h.$RANDOM; split "$1" "$d"; jq -r "$2" "$d/header.json"; }
pay() { local d=$T/p.$RANDOM; split "$1" "$d"; jq -r "$2" "$d/payload.json"; }
tok() { grep "^$1|" "$OUT" | head -1 | cut -d'|' -f2; }
UUID4='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# --- every algorithm, verified by openssl ---
V=$(script algs.lua <<LUA
local jwt = require("luaload.jwt")
local common = { kid = "key-1", sub = "user-7", aud = "api", iss = "luaload-test", exp_in = "1h",
                 claims = { browser = "chrome", n = 3, sub = "overridden" } }
local function gen(extra)
  local o = {}
  for k, v in pairs(common) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return jwt.Generator(o)
end
local gens = {
  p256 = gen{ key = "$K/p256.pem" }, p384 = gen{ key = "$K/p384.pem" }, p521 = gen{ key = "$K/p521.pem" },
  rsa = gen{ key = "$K/rsa.pem" }, ed = gen{ key = "$K/ed.pem" }, hs = gen{ secret = "$SECRET" },
  rs512 = gen{ key = "$K/rsa.pem", alg = "RS512" }, ps256 = gen{ key = "$K/rsa.pem", alg = "PS256" },
  hs512 = gen{ secret = "$SECRET", alg = "HS512" },
  bare = jwt.Generator{ key = "$K/p256.pem" },
}
function default()
  for name, g in pairs(gens) do print(name .. "|" .. g:token()) end
  print("sign.hs|" .. jwt.sign({ a = 1, sub = "x" }, "$SECRET", "HS256"))
  print("sign.rsa|" .. jwt.sign('{"b":2}', "$K/rsa.pem", { alg = "RS384", kid = "r" }))
  local pem = assert(io.open("$K/ed.pem")):read("*a")
  print("sign.edpem|" .. jwt.sign({ c = 3 }, pem))
  local h, p = jwt.decode(gens.p256:token())
  print("decode|" .. h.alg .. " " .. h.typ .. " " .. h.kid .. " " .. p.sub .. " " .. p.browser .. " " .. (p.exp - p.iat))
end
LUA
)
run_ll run "$V" -i 1 -q --no-summary
expect_eq "algorithms: exit 0" "$RC" 0
declare -A WANT=([p256]=ES256 [p384]=ES384 [p521]=ES512 [rsa]=RS256 [ed]=EdDSA [hs]=HS256 [rs512]=RS512
                 [ps256]=PS256 [hs512]=HS512 [bare]=ES256)
declare -A PUB=([p256]=$K/p256.pub [p384]=$K/p384.pub [p521]=$K/p521.pub [rsa]=$K/rsa.pub [ed]=$K/ed.pub
                [hs]=$SECRET [rs512]=$K/rsa.pub [ps256]=$K/rsa.pub [hs512]=$SECRET [bare]=$K/p256.pub)
for g in p256 p384 p521 rsa ed hs rs512 ps256 hs512 bare; do
  t=$(tok "$g")
  expect_eq "$g: alg ${WANT[$g]} (inferred unless given)" "$(hdr "$t" .alg)" "${WANT[$g]}"
  if verify "$t" "${PUB[$g]}"; then ok "$g: openssl verifies the ${WANT[$g]} signature"
  else not_ok "$g: openssl verifies the ${WANT[$g]} signature" "$t"; fi
done
t=$(tok p256)
expect_eq "header: typ and kid" "$(hdr "$t" '.typ + " " + .kid')" "JWT key-1"
expect_eq "header: only alg, typ, kid" "$(hdr "$t" 'keys | join(",")')" "alg,kid,typ"
expect_eq "claims: sub over the claims' sub, aud, iss, browser, n" \
  "$(pay "$t" '[.sub, .aud, .iss, .browser, (.n | tostring)] | join(" ")')" "user-7 api luaload-test chrome 3"
expect_eq "claims: exp = iat + 3600" "$(pay "$t" '.exp - .iat')" 3600
expect_cmp "claims: iat is now" "x >= $(date +%s) - 60 && x <= $(date +%s) + 5" "$(pay "$t" .iat)"
if [[ $(pay "$t" .jti) =~ $UUID4 ]]; then ok "claims: jti is a v4 UUID"; else not_ok "claims: jti is a v4 UUID" "$(pay "$t" .jti)"; fi
t=$(tok bare)
expect_eq "no kid, sub, exp when not given" "$(hdr "$t" '.kid // "none"') $(pay "$t" '(.sub // "none") + " " + (.exp // "none" | tostring)')" "none none none"
expect_eq "without claims: iat and jti only" "$(pay "$t" 'keys | join(",")')" "iat,jti"
t=$(tok sign.hs)
expect_eq "jwt.sign: the claims as given (no iat, jti)" "$(pay "$t" '(keys | join(",")) + " " + (.a | tostring) + " " + .sub')" "a,sub 1 x"
if verify "$t" "$SECRET"; then ok "jwt.sign HS256 verifies"; else not_ok "jwt.sign HS256 verifies" "$t"; fi
t=$(tok sign.rsa)
expect_eq "jwt.sign: alg and kid from the options table" "$(hdr "$t" '.alg + " " + .kid')" "RS384 r"
if verify "$t" "$K/rsa.pub"; then ok "jwt.sign RS384 verifies"; else not_ok "jwt.sign RS384 verifies" "$t"; fi
t=$(tok sign.edpem)
if verify "$t" "$K/ed.pub"; then ok "jwt.sign with PEM text verifies (EdDSA inferred)"; else not_ok "jwt.sign with PEM text verifies" "$t"; fi
expect_eq "jwt.decode: header and payload tables" "$(tok decode)" "ES256 JWT key-1 user-7 chrome 3600"

# --- unique jti across VUs and workers, signed live ---
U=$(script unique.lua <<LUA
local jwt = require("luaload.jwt")
local gen = jwt.Generator{ key = "$K/p256.pem", exp_in = 600 }
function default() print(gen:token()) end
LUA
)
run_ll run "$U" -u 8 -i 400 -q --no-summary
expect_eq "live: exit 0" "$RC" 0
jtis=$(python3 -c '
import base64, json, sys
for t in sys.stdin:
    p = t.split(".")[1]
    print(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))["jti"])' <"$OUT" | sort -u | wc -l)
expect_eq "live: 400 tokens, 400 distinct jti over 8 VUs" "$(wc -l <"$OUT") $jtis" "400 400"
if verify "$(tail -1 "$OUT")" "$K/p256.pub"; then ok "live: the last token verifies"; else not_ok "live: the last token verifies"; fi

# --- pregenerated into the cache, streamed, reused ---
C=$T/cache
P=$(script pregen.lua <<LUA
local jwt = require("luaload.jwt")
local gen = jwt.Generator{ key = "$K/p256.pem", kid = "c", exp_in = "2h", pregenerate = 600, cache_dir = "$C" }
function default() print(gen:token()) end
LUA
)
run_ll run "$P" -u 4 -i 600 -q --no-summary
expect_eq "pregenerate: exit 0" "$RC" 0
expect_match "pregenerate: stderr says it generated" "$ERR" '^luaload: jwt: generating 600 ES256 tokens on [0-9]+ threads into '"$C"'$'
expect_match "pregenerate: and how fast" "$ERR" '^luaload: jwt: generated 600 tokens in [0-9.]+ s \([0-9]+/s, [0-9]+/s per thread\)$'
expect_eq "pregenerate: announced once (lifecycle and workers share it)" "$(grep -c 'luaload: jwt:' "$ERR")" 2
F=$(ls "$C"/*.jwt 2>/dev/null)
expect_eq "pregenerate: one cache file of 600 tokens" "$(echo "$F" | wc -l) $(wc -l <"$F")" "1 600"
expect_eq "pregenerate: its mode is 0600" "$(stat -c %a "$F")" 600
expect_eq "pregenerate: 600 iterations used the 600 tokens, each once" "$(sort -u "$OUT" | wc -l) $(sort "$OUT" | cmp - <(sort "$F") && echo same)" "600 same"
if verify "$(head -1 "$F")" "$K/p256.pub" && verify "$(tail -1 "$F")" "$K/p256.pub"; then ok "pregenerate: cached tokens verify"
else not_ok "pregenerate: cached tokens verify"; fi
expect_eq "pregenerate: cached tokens carry kid and exp" "$(hdr "$(head -1 "$F")" .kid) $(pay "$(head -1 "$F")" '.exp - .iat')" "c 7200"
inode=$(stat -c %i "$F") mtime=$(stat -c %Y "$F")
run_ll run "$P" -u 4 -i 600 -q --no-summary
expect_eq "second run: exit 0" "$RC" 0
expect_match "second run: tokens from the cache" "$ERR" "^luaload: jwt: 600 tokens from the cache $F\$"
if grep -q generat "$ERR"; then not_ok "second run: nothing generated" "$(cat "$ERR")"; else ok "second run: nothing generated"; fi
expect_eq "second run: the same file, untouched" "$(stat -c '%i %Y' "$F")" "$inode $mtime"
expect_eq "second run: the same 600 tokens, each once" "$(sort -u "$OUT" | wc -l) $(sort "$OUT" | cmp - <(sort "$F") && echo same)" "600 same"

# fewer wanted: the cache still serves; more wanted: regenerated
sed 's/pregenerate = 600/pregenerate = 300/' "$P" >"$T/pregen300.lua"
run_ll run "$T/pregen300.lua" -i 10 -q --no-summary
expect_match "fewer tokens wanted: the cache serves" "$ERR" "600 tokens from the cache"
sed 's/pregenerate = 600/pregenerate = 700/' "$P" >"$T/pregen700.lua"
run_ll run "$T/pregen700.lua" -i 10 -q --no-summary
expect_match "more tokens wanted: generated again" "$ERR" "generating 700 ES256 tokens"
expect_eq "more tokens wanted: the larger file replaced the smaller" "$(ls "$C"/*.jwt | wc -l) $(cat "$C"/*.jwt | wc -l)" "1 700"

# the key's contents key the cache, not its path
cp "$K/p256.pem" "$K/p256.orig"
openssl ecparam -name prime256v1 -genkey -noout -out "$K/p256.pem" 2>/dev/null
run_ll run "$T/pregen700.lua" -i 10 -q --no-summary
expect_match "a new key at the same path: generated again" "$ERR" "generating 700 ES256 tokens"
expect_eq "a new key at the same path: its own file" "$(ls "$C"/*.jwt | wc -l)" 2
cp "$K/p256.orig" "$K/p256.pem"

# the default directory, then clear-cache
D=$(script default_dir.lua <<LUA
local jwt = require("luaload.jwt")
local gen = jwt.Generator{ secret = "$SECRET", pregenerate = 50 }
function default() print(gen:token()) end
LUA
)
run_ll run "$D" -u 2 -i 50 -q --no-summary
expect_eq "default cache dir: exit 0" "$RC" 0
expect_eq "default cache dir: \$XDG_CACHE_HOME/luaload/jwt" "$(ls "$XDG_CACHE_HOME"/luaload/jwt/*.jwt | wc -l)" 1
if verify "$(head -1 "$OUT")" "$SECRET"; then ok "default cache dir: HS256 tokens verify"; else not_ok "default cache dir: HS256 tokens verify"; fi
"$LUALOAD" clear-cache >"$T/clear.out" 2>&1
expect_eq "clear-cache: exit 0" "$?" 0
expect_match "clear-cache: says what it removed" "$T/clear.out" "^luaload: removed the JWT cache $XDG_CACHE_HOME/luaload/jwt \\(2 files\\)$"
if [[ -e $XDG_CACHE_HOME/luaload/jwt ]]; then not_ok "clear-cache: the directory is gone"; else ok "clear-cache: the directory is gone"; fi
touch "$C/not-ours.txt"
"$LUALOAD" clear-cache --jwt-cache "$C" >"$T/clear.out" 2>&1
expect_eq "clear-cache --jwt-cache DIR: only the cache's files" "$(ls "$C")" "not-ours.txt"
"$LUALOAD" clear-cache extra args >"$T/clear.out" 2>&1
expect_eq "clear-cache with bad arguments: exit 104" "$?" 104

# --- a user's token file, streamed, each used once ---
python3 - "$T/tokens.txt" <<'PY'
import sys
with open(sys.argv[1], "w", newline="") as f:
    for i in range(1, 121):
        f.write("user-token-%03d" % i + ("\r\n" if i % 2 else "\n"))
        if i % 10 == 0: f.write("\n  \r\n")
PY
S=$(script stream.lua <<LUA
local jwt = require("luaload.jwt")
local src = jwt.stream("$T/tokens.txt")
function default() print(src:token()) end
LUA
)
run_ll run "$S" -u 6 -i 120 -q --no-summary
expect_eq "stream: exit 0" "$RC" 0
expect_eq "stream: 120 iterations, 120 distinct tokens" "$(wc -l <"$OUT") $(sort -u "$OUT" | wc -l)" "120 120"
expect_eq "stream: CR and blank lines gone" "$(grep -c $'\r' "$OUT") $(grep -c '^user-token-[0-9]*$' "$OUT")" "0 120"
run_ll run "$S" -u 6 -i 125 -q --no-summary
expect_eq "stream used up: every token once" "$(sort -u "$OUT" | wc -l) $(wc -l <"$OUT")" "120 120"
expect_match "stream used up: the 5 iterations left fail with the reason" "$ERR" \
  "script error in 5 iterations: .*jwt.stream: the tokens of '$T/tokens.txt' are used up \\(120 handed out\\)"

# --- the ahead ring: unique, valid, and the count of falling behind ---
A=$(script ahead.lua <<LUA
local jwt = require("luaload.jwt")
local gen = jwt.Generator{ key = "$K/rsa.pem", ahead = 16 }
function default() print(gen:token()) end
function teardown() io.stderr:write("fell_behind=" .. gen:fell_behind() .. "\n") end
LUA
)
run_ll run "$A" -u 4 -i 300 -q --summary-export "$T/s.json"
expect_eq "ahead: exit 0" "$RC" 0
expect_eq "ahead: 300 tokens, 300 distinct" "$(grep -c '^ey' "$OUT") $(grep '^ey' "$OUT" | sort -u | wc -l)" "300 300"
if verify "$(grep '^ey' "$OUT" | head -1)" "$K/rsa.pub"; then ok "ahead: tokens verify"; else not_ok "ahead: tokens verify"; fi
fb=$(sed -n 's/^fell_behind=//p' "$ERR")
expect_cmp "ahead: RS256 on one thread fell behind 4 VUs at full speed" "x > 0" "$fb"
expect_eq "ahead: the summary's jwt_fell_behind counts it" "$(cnt jwt_fell_behind)" "$fb"

# --- errors: one line naming the function, exit 107 ---
err_case() { # NAME LUA-EXPR REGEX
  local f
  f=$(script "err.lua" <<LUA
local jwt = require("luaload.jwt")
local x = $2
function default() end
LUA
)
  run_ll run "$f" -i 1 -q --no-summary
  expect_eq "$1: exit 107" "$RC" 107
  expect_match "$1: the message" "$ERR" "$3"
  expect_eq "$1: one line" "$(wc -l <"$ERR")" 1
}
err_case "missing key" "jwt.Generator{ key = '$T/none.pem' }" \
  "err.lua:2: jwt.Generator: cannot read key '$T/none.pem': No such file or directory\$"
err_case "not a key" "jwt.Generator{ key = '$T/tokens.txt' }" "jwt.Generator: key '$T/tokens.txt' is not an unencrypted PEM private key\$"
err_case "unknown alg" "jwt.Generator{ key = '$K/p256.pem', alg = 'XS256' }" \
  "jwt.Generator: unknown alg 'XS256' \\(expected HS256, .*EdDSA\\)\$"
err_case "key and alg disagree" "jwt.Generator{ key = '$K/p256.pem', alg = 'ES384' }" \
  "jwt.Generator: alg ES384 needs an EC P-384 key, '$K/p256.pem' is EC P-256\$"
err_case "a secret for RS256" "jwt.Generator{ secret = 'x', alg = 'RS256' }" "jwt.Generator: alg RS256 needs a key"
err_case "a key for HS256" "jwt.Generator{ key = '$K/rsa.pem', alg = 'HS256' }" "jwt.Generator: alg HS256 takes a secret, not a key\$"
err_case "a curve JWT has no alg for" "jwt.Generator{ key = '$K/k256.pem' }" "jwt.Generator: key '$K/k256.pem' is EC secp256k1"
err_case "bad claims JSON" "jwt.Generator{ secret = 'x', claims = '{\"a\":' }" "jwt.Generator: claims: expected a JSON object, got"
err_case "unknown option" "jwt.Generator{ secret = 'x', kidd = 1 }" "jwt.Generator: unknown option 'kidd' \\(expected key, "
err_case "bad exp_in" "jwt.Generator{ secret = 'x', exp_in = 'soon' }" "jwt.Generator: exp_in: expected a duration"
err_case "bad pregenerate" "jwt.Generator{ secret = 'x', pregenerate = 0 }" "jwt.Generator: pregenerate: expected an integer of 1 or more, got 0"
err_case "missing token file" "jwt.stream('$T/none.txt')" "jwt.stream: cannot read tokens from '$T/none.txt': No such file or directory\$"
err_case "jwt.sign with a bad key" "jwt.sign({}, '$T/none.pem', 'ES256')" "jwt.sign: cannot read key"
err_case "jwt.decode of a malformed token" "jwt.decode('abc.def')" \
  "jwt.decode: malformed token: expected three base64url parts separated by '.'\$"
err_case "jwt.decode of a non-JSON part" "jwt.decode('eyJh.e30.x')" "jwt.decode: malformed token: the header is not a JSON object\$"

finish
