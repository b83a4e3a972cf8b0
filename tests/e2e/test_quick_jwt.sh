#!/usr/bin/env bash
# test_quick_jwt.sh -- quick mode with a JWT per request (gopayloader's
# flags): every request carries a different token (serve --echo-header
# counts them), the tokens verify with openssl, a known count is made
# ahead into the cache and the cache is reused on the next run (its line
# on stderr and the file's inode, not timing), a -f file is streamed and
# running out stops the test, a duration signs during the run, and bad
# keys or flags are one-line errors with exit 104.
source "$(dirname "$0")/lib.sh"
export XDG_CACHE_HOME=$T/xdg
openssl ecparam -name prime256v1 -genkey -noout -out "$T/ec.pem" 2>/dev/null
openssl pkey -in "$T/ec.pem" -pubout -out "$T/ec.pub" 2>/dev/null
start_serve --echo-header Authorization --echo-header X-Token
st() { curl -s "$URL/stats" | jq -r "$1"; }
reset_serve() { stop_pid "$SERVE_PID"; SERVE_PID=; start_serve --echo-header Authorization --echo-header X-Token; }

# verify_es256 TOKEN PUBKEY: openssl checks the signature (helpers/jwt_split.py
# makes the raw r||s DER); leaves the header and claims in $T/v/*.json
verify_es256() {
  rm -rf "$T/v" && mkdir -p "$T/v"
  python3 "$(dirname "$0")/helpers/jwt_split.py" "$1" "$T/v" || return 1
  openssl dgst -sha256 -verify "$2" -signature "$T/v/sig.der" "$T/v/msg" >/dev/null 2>&1
}

# -r known: made ahead into the cache, each request a token of its own
run_ll run "$URL/" -c 4 -r 500 --jwt-key "$T/ec.pem" --jwt-kid k1 --jwt-sub me --jwt-aud api --jwt-iss luaload \
  --jwt-exp 1h --jwt-claims '{"role":"tester"}' -q
expect_eq "jwt -r 500: exit 0" "$RC" 0
expect_match "jwt -r 500: generated ahead" "$ERR" "^luaload: jwt: generating 500 ES256 tokens on [0-9]+ threads? into $XDG_CACHE_HOME/luaload/jwt$"
expect_eq "jwt: 500 requests, each with Authorization" "$(st '.headers.authorization.requests')" 500
expect_eq "jwt: 500 different tokens" "$(st '.headers.authorization.distinct')" 500
expect_match "the table: where the tokens came from" "$OUT" '^     jwt tokens\.+: 500 from the cache \(made ahead\)$'
CACHE=$(ls "$XDG_CACHE_HOME"/luaload/jwt/*.jwt)
expect_eq "the cache: one file of 500 tokens" "$(wc -l <"$CACHE")" 500
tok=$(head -1 "$CACHE")
if verify_es256 "$tok" "$T/ec.pub"; then ok "a cached token verifies with openssl"; else not_ok "a cached token verifies with openssl"; fi
expect_eq "its header: alg, typ, kid" "$(jq -c . "$T/v/header.json")" '{"alg":"ES256","typ":"JWT","kid":"k1"}'
expect_eq "its claims: sub aud iss, the extra claim, a v4 jti, exp = iat + 1h" \
  "$(jq -r '[.sub, .aud, .iss, .role, (.jti | test("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")), .exp - .iat] | join(",")' "$T/v/payload.json")" \
  "me,api,luaload,tester,true,3600"
if verify_es256 "$(tail -1 "$CACHE")" "$T/ec.pub"; then ok "the last one too"; else not_ok "the last one too"; fi

# the next run with the same settings reuses the cache
inode=$(stat -c %i "$CACHE")
reset_serve
run_ll run "$URL/" -c 4 -r 500 --jwt-key "$T/ec.pem" --jwt-kid k1 --jwt-sub me --jwt-aud api --jwt-iss luaload \
  --jwt-exp 1h --jwt-claims '{"role":"tester"}' -q
expect_match "a second run: the tokens from the cache" "$ERR" "^luaload: jwt: 500 tokens from the cache $CACHE$"
expect_eq "a second run: not generated again" "$(grep -c generating "$ERR")" 0
expect_eq "a second run: the same file" "$(stat -c %i "$CACHE")" "$inode"
expect_eq "a second run: 500 different tokens again" "$(st '.headers.authorization.distinct')" 500
run_ll run "$URL/" -c 2 -r 100 --jwt-key "$T/ec.pem" --jwt-kid k2 -q
expect_match "other settings: other tokens" "$ERR" "generating 100 ES256 tokens"
run_ll clear-cache
expect_eq "clear-cache: exit 0" "$RC" 0
expect_eq "clear-cache: the files are gone" "$(ls "$XDG_CACHE_HOME"/luaload/jwt/*.jwt 2>/dev/null | wc -l)" 0

# a duration without a count: signed during the run, by a thread ahead of use
reset_serve
run_ll run "$URL/" -c 2 -d 1s --jwt-secret 's3cret' --jwt-header X-Token -q --summary-export "$T/live.json"
expect_eq "jwt -d: exit 0" "$RC" 0
N=$(jqv "$T/live.json" .metrics.http_reqs.count)
expect_eq "jwt -d: every request a different token" "$(st '.headers["x-token"].distinct')" "$N"
expect_eq "--jwt-header: the token goes there, not in Authorization" "$(st '.headers.authorization.requests')" 0
expect_match "the table: signed during the run, and whether the signer kept ahead" "$OUT" \
  '^     jwt tokens\.+: [0-9]+ signed during the run, the signer (kept ahead|fell behind)$'

# -f: the user's tokens, one per line, each used once; running out stops the test
reset_serve
for i in $(seq 1 30); do echo "tok-$i"; done >"$T/tokens.txt"
run_ll run "$URL/" -c 2 -r 30 -f "$T/tokens.txt" --jwt-header X-Token -q
expect_eq "-f: exit 0" "$RC" 0
expect_eq "-f: 30 requests, 30 tokens" "$(st '.headers["x-token"].distinct')" 30
run_ll run "$URL/" -c 2 -d 5s -f "$T/tokens.txt" -q
expect_eq "-f run out: exit 108" "$RC" 108
expect_match "-f run out: says so" "$ERR" "test aborted: -f $T/tokens.txt: every token was used \(30\)"
expect_cmp "-f run out: stops at once" "x < 4" "$ELAPSED"

# bad keys and flags: one line, exit 104
bad() {
  local want=$1; shift
  run_ll run "$URL/" "$@"
  expect_eq "$*: exit 104" "$RC" 104
  expect_eq "$*: one line" "$(wc -l <"$ERR")" 1
  expect_match "$*: says what" "$ERR" "$want"
}
echo "not a key" >"$T/bad.pem"
bad "jwt-key" -r 5 --jwt-key "$T/bad.pem"
bad "jwt-key: cannot read $T/none.pem" -r 5 --jwt-key "$T/none.pem"
bad "ES384" -r 5 --jwt-key "$T/ec.pem" --jwt-alg ES384
bad "unknown alg" -r 5 --jwt-key "$T/ec.pem" --jwt-alg XS256
bad "invalid value for --jwt-claims" -r 5 --jwt-key "$T/ec.pem" --jwt-claims '[1]'
bad "-f: cannot read $T/none.txt" -r 5 -f "$T/none.txt"
bad "--jwt-key and --jwt-secret: give one of them" -r 5 --jwt-key "$T/ec.pem" --jwt-secret x
finish
