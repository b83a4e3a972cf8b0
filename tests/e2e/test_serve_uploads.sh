#!/usr/bin/env bash
# luaload serve: request bodies. /sha256 hashes the body as it arrives
# (Content-Length or chunked, 0 bytes to 1 GiB) and /multipart parses
# multipart/form-data as it streams (a SHA-256 per part); bad multipart
# bodies get a 400 with a reason; a 1 GiB upload does not grow the server;
# /stats counts the routes.
source "$(dirname "$0")/lib.sh"
start_serve
SHA_REQS=0 MP_REQS=0 ERR_REQS=0

hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$SERVE_PID/status"; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# post_sha256 FILE [curl args...]: POSTs FILE's bytes to /sha256; sets CODE,
# BODY (the answer's first line) and SIZE (X-Body-Size)
post_sha256() {
  local f=$1
  shift
  SHA_REQS=$((SHA_REQS + 1))
  CODE=$(curl -s --max-time 60 -D "$T/h" -o "$T/b" -w '%{http_code}' "$@" --data-binary @"$f" "$URL/sha256")
  BODY=$(head -n 1 "$T/b")
  SIZE=$(tr -d '\r' <"$T/h" | sed -n 's/^[Xx]-[Bb]ody-[Ss]ize: //p')
}

printf x >"$T/one"
: >"$T/zero"
head -c 1048576 /dev/urandom >"$T/r1m"
head -c 104857600 /dev/urandom >"$T/r100m"

# OpenSSL's first use maps its tables: take the baseline after it
post_sha256 "$T/zero"
hwm0=$(hwm_kib)

for f in zero one r1m r100m; do
  bytes=$(stat -c %s "$T/$f")
  post_sha256 "$T/$f"
  expect_eq "/sha256 $f: 200" "$CODE" 200
  expect_eq "/sha256 $f: the sha256sum" "$BODY" "$(sha_of "$T/$f")"
  expect_eq "/sha256 $f: X-Body-Size" "$SIZE" "$bytes"
  post_sha256 "$T/$f" -H 'Transfer-Encoding: chunked'
  expect_eq "/sha256 $f chunked: the sha256sum" "$BODY" "$(sha_of "$T/$f")"
  expect_eq "/sha256 $f chunked: X-Body-Size" "$SIZE" "$bytes"
done
expect_eq "/sha256 answer: 64 hex digits and a newline" \
  "$(wc -c <"$T/b") $(tail -c 1 "$T/b" | od -An -c | tr -d ' ')" '65 \n'
expect_eq "/sha256 answer: Content-Length 65" "$(tr -d '\r' <"$T/h" | sed -n 's/^Content-Length: //p')" 65
SHA_REQS=$((SHA_REQS + 1))
expect_eq "GET /sha256 without a body: the empty body's digest" \
  "$(curl -s --max-time 10 "$URL/sha256")" e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
SHA_REQS=$((SHA_REQS + 1))
expect_eq "PUT /sha256 (curl -T, Expect: 100-continue)" \
  "$(curl -s --max-time 60 -T "$T/r1m" "$URL/sha256")" "$(sha_of "$T/r1m")"

# ---- /multipart ----
printf 'hello, multipart\r\n--not a boundary\r\n' >"$T/f"
MP_REQS=$((MP_REQS + 1))
curl -s --max-time 10 -o "$T/mp.json" -w '%{http_code} %{content_type}' \
  -F a=1 -F "file=@$T/f;filename=x.bin;type=application/octet-stream" -F empty=@/dev/null "$URL/multipart" >"$T/code"
want=$(jq -cn --arg a "$(printf 1 | sha256sum | cut -d' ' -f1)" --arg f "$(sha_of "$T/f")" \
  --arg e "$(sha_of /dev/null)" --argjson fsize "$(stat -c %s "$T/f")" '{parts: [
    {name: "a", filename: null, content_type: null, size: 1, sha256: $a},
    {name: "file", filename: "x.bin", content_type: "application/octet-stream", size: $fsize, sha256: $f},
    {name: "empty", filename: "null", content_type: "application/octet-stream", size: 0, sha256: $e}]}')
expect_eq "/multipart curl -F: 200 application/json" "$(cat "$T/code")" "200 application/json"
expect_eq "/multipart curl -F: the exact JSON" "$(cat "$T/mp.json")" "$want"
expect_eq "/multipart: the answer ends in a newline" "$(tail -c 1 "$T/mp.json" | od -An -c | tr -d ' ')" '\n'

MP_REQS=$((MP_REQS + 1))
curl -s --max-time 60 -o "$T/mp.json" -F "small=<$T/one" -F "big=@$T/r100m" "$URL/multipart"
expect_eq "/multipart 100 MiB part: its size" "$(jqv "$T/mp.json" '.parts[1].size')" 104857600
expect_eq "/multipart 100 MiB part: its sha256sum" "$(jqv "$T/mp.json" '.parts[1].sha256')" "$(sha_of "$T/r100m")"
expect_eq "/multipart 100 MiB part: the part before it" \
  "$(jqv "$T/mp.json" '.parts[0] | "\(.name) \(.size)"')" "small 1"

MP_REQS=$((MP_REQS + 1))
curl -s --max-time 60 -o "$T/mp.json" -H 'Transfer-Encoding: chunked' -F "big=@$T/r1m" "$URL/multipart"
expect_eq "/multipart chunked: the part's sha256sum" "$(jqv "$T/mp.json" '.parts[0].sha256')" "$(sha_of "$T/r1m")"

# a hand-made body: preamble, a quoted name with escapes and a tab, UTF-8,
# padding after a delimiter, an epilogue
printf 'preamble\r\n--XyZ  \r\n' >"$T/hand"
printf 'Content-Disposition: form-data; name="q\\"b\\\\s\tt"; filename="\xc3\xa9.txt"\r\n' >>"$T/hand"
printf 'Content-Type: text/plain; charset=utf-8\r\n\r\n12345\r\n--XyZ--\r\nepilogue' >>"$T/hand"
MP_REQS=$((MP_REQS + 1))
curl -s --max-time 10 -o "$T/mp.json" -H 'Content-Type: multipart/form-data; boundary="XyZ"' \
  --data-binary @"$T/hand" "$URL/multipart"
expect_eq "/multipart: JSON-escaped name" "$(jqv "$T/mp.json" '.parts[0].name')" "$(printf 'q"b\\s\tt')"
expect_match "/multipart: the escapes on the wire" "$T/mp.json" '"name":"q\\"b\\\\s\\tt","filename":"é\.txt"'
expect_eq "/multipart: part Content-Type, size, sha256" \
  "$(jqv "$T/mp.json" '.parts[0] | "\(.content_type) \(.size) \(.sha256)"')" \
  "text/plain; charset=utf-8 5 $(printf 12345 | sha256sum | cut -d' ' -f1)"

# bad_mp NAME CONTENT-TYPE BODY REASON-REGEX: a 400 with a one-line reason
bad_mp() {
  ERR_REQS=$((ERR_REQS + 1))
  printf '%b' "$3" >"$T/bad"
  local code
  code=$(curl -s --max-time 10 -o "$T/b" -w '%{http_code}' -H "Content-Type: $2" --data-binary @"$T/bad" \
    "$URL/multipart")
  expect_eq "bad multipart, $1: 400" "$code" 400
  expect_eq "bad multipart, $1: one line" "$(wc -l <"$T/b")" 1
  expect_match "bad multipart, $1: the reason" "$T/b" "$4"
}
part='--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n'
bad_mp "no boundary parameter" "multipart/form-data" "$part--b--\r\n" "no boundary parameter"
bad_mp "not multipart" "application/x-www-form-urlencoded" "a=1" "not multipart/form-data"
bad_mp "missing closing delimiter" "multipart/form-data; boundary=b" "$part" "missing closing delimiter"
bad_mp "no delimiter at all" "multipart/form-data; boundary=b" "just text" "no delimiter"
bad_mp "part without a name" "multipart/form-data; boundary=b" \
  '--b\r\nContent-Disposition: form-data; filename="f"\r\n\r\n1\r\n--b--\r\n' "no Content-Disposition name"
bad_mp "part without Content-Disposition" "multipart/form-data; boundary=b" \
  '--b\r\nContent-Type: text/plain\r\n\r\n1\r\n--b--\r\n' "no Content-Disposition name"
ERR_REQS=$((ERR_REQS + 1))
expect_eq "bad multipart, no Content-Type: 400" \
  "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H 'Content-Type:' --data-binary x "$URL/multipart")" 400
ERR_REQS=$((ERR_REQS + 1)) SHA_REQS=$((SHA_REQS + 1))
printf '%b' "$part" >"$T/bad"
expect_eq "a bad multipart body keeps the connection: 400 then 200 on one connection" \
  "$(curl -s --max-time 10 -o /dev/null -w '%{http_code} %{num_connects}\n' \
    -H 'Content-Type: multipart/form-data; boundary=b' --data-binary @"$T/bad" "$URL/multipart" \
    --next -s --max-time 10 -o /dev/null -w '%{http_code} %{num_connects}\n' --data-binary x "$URL/sha256" |
    tr '\n' ' ')" "400 1 200 0 "

# ---- 1 GiB ----
truncate -s 1G "$T/sparse"
cat "$T/sparse" >/dev/null # the first read of a sparse file is slow: time the server, not that
SHA_REQS=$((SHA_REQS + 1))
start=$(date +%s.%N)
got=$(curl -s --max-time 30 -T "$T/sparse" "$URL/sha256")
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
expect_eq "1 GiB of zeros to /sha256 within 30 s (curl exit 0)" "$rc" 0
expect_eq "1 GiB of zeros: its sha256" "$got" 49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14
echo "#    1 GiB in ${secs} s: $(awk -v s="$secs" 'BEGIN { printf "%.0f", 1073.741824 / s }') MB/s"
SHA_REQS=$((SHA_REQS + 1))
got=$(curl -s --max-time 30 -H 'Transfer-Encoding: chunked' -T "$T/sparse" "$URL/sha256")
expect_eq "1 GiB of zeros chunked: its sha256" "$got" 49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14
expect_eq "1 GiB to the default route (dropped): 200" \
  "$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -T "$T/sparse" "$URL/")" 200
hwm1=$(hwm_kib)
echo "#    serve's peak RSS: ${hwm0} KiB before the uploads of 100 MiB and 1 GiB, ${hwm1} KiB after"
expect_cmp "uploads do not grow the server (peak RSS +$((hwm1 - hwm0)) KiB)" "x < 8192" $((hwm1 - hwm0))

# ---- /stats ----
curl -s --max-time 10 -o "$T/stats.json" "$URL/stats"
expect_eq "/stats counts /sha256" "$(jqv "$T/stats.json" '.routes.sha256')" "$SHA_REQS"
expect_eq "/stats counts /multipart" "$(jqv "$T/stats.json" '.routes.multipart')" "$MP_REQS"
expect_eq "/stats counts bad multipart bodies as error" "$(jqv "$T/stats.json" '.routes.error')" "$ERR_REQS"
finish
