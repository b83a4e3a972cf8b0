#!/usr/bin/env bash
# test_quick_flags.sh -- quick mode's flags, each one's effect seen by
# `luaload serve` (its /stats: methods, --echo-header counts, connections,
# routes, bytes) or, through nginx for TLS and HTTP/2, by the samples'
# tags; --threshold; bad flags get one-line errors and exit 104.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_serve --echo-header X-A --echo-header Authorization
stats() { curl -s "$URL/stats"; }
st() { stats | jq -r "$1"; }
reset_serve() { stop_pid "$SERVE_PID"; SERVE_PID=; start_serve "$@"; }

# -m, -H, -b: the method, the header and the body arrive
run_ll run "$URL/echo" -m PUT -H 'X-A: one' -H 'x-b:two' -b hello -c 2 -r 10 -q --summary-export "$T/s.json"
expect_eq "-m -H -b: exit 0" "$RC" 0
expect_eq "-r 10: exactly 10 requests" "$(jqv "$T/s.json" .metrics.http_reqs.count)" 10
expect_eq "-m PUT: serve saw PUT" "$(st '.methods.PUT')" 10
expect_eq "-H: serve saw the header on each" "$(st '.headers["x-a"].requests')" 10
expect_eq "-H 'name:value' (gopayloader's form) is accepted" "$(jqv "$T/s.json" .metrics.http_req_failed.passes)" 0
expect_match "the table: a count per status" "$OUT" '^     status 200\.+: 10$'
expect_match "the table: requests/s under 2 whole seconds, the average only" "$OUT" \
  '^     requests/s\.+: avg=[0-9.]+ \(under 2 whole seconds: no per-second figures\)$'
expect_match "the table: sizes" "$OUT" '^     request size\.+: [0-9]+ B each'
# getopt's, wrk's and hey's habits: attached values; their flags named
run_ll run "$URL/" -c2 -r6 -q --summary-export "$T/att.json"
expect_eq "-c2 -r6 (values attached, as getopt reads them): exit 0" "$RC" 0
expect_eq "-c2 -r6: 6 requests" "$(jqv "$T/att.json" .metrics.http_reqs.count)" 6
expect_eq "-c2: 2 VUs" "$(jqv "$T/att.json" .metrics.vus_max.max)" 2
run_ll run "$URL/" -n 10 -q
expect_eq "-n 10 (hey, ab): exit 104" "$RC" 104
expect_eq "-n 10 (hey, ab): names -r" "$(cat "$ERR")" \
  "luaload: run: unknown flag -n: use -r N (hey's and ab's -n: the requests in all) (see luaload run --help)"
run_ll run "$URL/" -z 2s -q
expect_match "-z (hey): names -d" "$ERR" "unknown flag -z: use -d D \(hey's -z: the duration\)"
run_ll run "$URL/" --timeout 2s -q
expect_match "--timeout (wrk): names --read-timeout" "$ERR" "unknown flag --timeout: use --read-timeout D \(wrk's --timeout\)"
run_ll run "$URL/" -t 4 -q
expect_eq "-t 4 (wrk's threads): exit 104" "$RC" 104
expect_match "-t 4 (wrk's threads): says -t is a duration and threads are -w" "$ERR" \
  "invalid value for -t: '4' \(expected a duration such as 5s \(-t is --time, as gopayloader's; wrk's -t threads is -w N\)\)"
run_ll run "$URL/" -t4 -q
expect_match "-t4: the same" "$ERR" "invalid value for -t: '4'"
run_ll run "$URL/" -c 1 -d 3s --rate 200 -q
expect_match "the table: requests/s over whole seconds, lowest and highest" "$OUT" \
  '^     requests/s\.+: avg=[0-9.]+ min=[0-9]+ max=[0-9]+ \([2-9] whole seconds\)$'

# a body alone makes a POST; --body-file streams a file
head -c 100000 /dev/urandom >"$T/body.bin"
reset_serve
run_ll run "$URL/sha256" --body-file "$T/body.bin" -c 1 -r 3 -q
expect_eq "--body-file: POST" "$(st '.methods.POST')" 3
expect_cmp "--body-file: the bytes arrived" "x >= 300000" "$(st '.bytes_received')"
run_ll run "$URL/" -b x -c 1 -r 2 -q
expect_eq "-b without -m: POST" "$(st '.methods.POST')" 5

# -k: a connection per request; without it, one per VU
reset_serve
run_ll run "$URL/" -c 2 -r 20 -q
expect_eq "keep-alive: one connection per VU" "$(st '.connections')" 3
reset_serve
run_ll run "$URL/" -c 2 -r 20 -q -k
expect_eq "-k: a connection per request" "$(st '.connections')" 21

# URL lists, round-robin: a,b and @file
reset_serve
run_ll run "$URL/status/201,$URL/bytes/10" -c 1 -r 10 -q
expect_eq "a,b: half each" "$(st .routes.status)/$(st .routes.bytes)" "5/5"
printf '# targets\n%s/status/202\n\n%s/delay/1\n' "$URL" "$URL" >"$T/urls.txt"
run_ll run "@$T/urls.txt" -c 1 -r 6 -q
expect_eq "@file: comments and empty lines skipped" "$(st .routes.status)/$(st .routes.delay)" "8/3"

# -r with -d: spread evenly (an open model); --rate
run_ll run "$URL/" -c 4 -r 40 -d 2s -q --summary-export "$T/open.json"
expect_cmp "-r 40 -d 2s: about 40, over 2 s" "x >= 38 && x <= 40" "$(jqv "$T/open.json" .metrics.http_reqs.count)"
expect_cmp "-r 40 -d 2s: it took the 2 s" "x >= 1.9" "$ELAPSED"
run_ll run "$URL/" -c 2 --rate 30 -d 1s -q --summary-export "$T/rate.json"
expect_cmp "--rate 30 -d 1s: about 30" "x >= 28 && x <= 30" "$(jqv "$T/rate.json" .metrics.http_reqs.count)"

# --think: a pause after each request
run_ll run "$URL/" -c 1 -r 4 --think 100-150ms -q
expect_cmp "--think 100-150ms: 4 pauses" "x >= 0.4" "$ELAPSED"

# -v: the ticker
run_ll run "$URL/" -c 1 -d 2s -v --ticker 500ms -q
expect_cmp "-v --ticker 500ms: a line each half second" "x >= 3" "$(grep -c -E '^luaload: +[0-9.]+s +[0-9]+ requests +[0-9]+/s$' "$ERR")"

# --threshold, for quick runs and scripts
run_ll run "$URL/" -c 1 -r 5 -q --threshold 'http_req_failed=rate==0' --threshold 'http_reqs{status:200}=count==5'
expect_eq "--threshold: passing ones, exit 0" "$RC" 0
run_ll run "$URL/status/500" -c 1 -r 5 -q --threshold 'http_req_failed=rate<0.1'
expect_eq "--threshold: a failing one, exit 99" "$RC" 99
expect_match "--threshold: named on stderr" "$ERR" "threshold failed: http_req_failed 'rate<0.1'"

# TLS, HTTP/2, mTLS through nginx, which proxies to serve
UPSTREAM_PORT=$PORT
make_certs && start_nginx || exit 1
S=https://127.0.0.1:$NGINX_HTTPS_PORT
run_ll run "$S/" -c 1 -r 2 -q --summary-export "$T/tls.json"
expect_eq "https without --skip-verify: the self-signed server fails" "$(jqv "$T/tls.json" .metrics.http_req_failed.passes)" 2
for f in --skip-verify --insecure; do
  run_ll run "$S/" -c 1 -r 2 -q $f --summary-export "$T/tls.json"
  expect_eq "$f: verified no more" "$(jqv "$T/tls.json" .metrics.http_req_failed.passes)" 0
done
for v in "--http 1.1:HTTP/1.1" "--http 2:HTTP/2.0" "--client fasthttp-1:HTTP/1.1" "--client nethttp-2:HTTP/2.0"; do
  run_ll run "$S/proxy/echo" -c 1 -r 3 -q --skip-verify ${v%%:*} -o json="$T/p.json"
  expect_eq "${v%%:*}: ${v##*:}" "$(jq -r 'select(.type == "Point" and .metric == "http_reqs") | .data.tags.proto' "$T/p.json" | sort -u)" "${v##*:}"
done
run_ll run "$S/redirect/3" -c 1 -r 2 -q --skip-verify --summary-export "$T/r.json"
expect_eq "redirects are followed hop by hop, each a request (3 hops + /echo, twice)" "$(jqv "$T/r.json" .metrics.http_reqs.count)" 8
M=https://127.0.0.1:$NGINX_MTLS_PORT
run_ll run "$M/mtls" -c 1 -r 2 -q --skip-verify --summary-export "$T/m.json"
expect_eq "mTLS port without a certificate: 400s" "$(jqv "$T/m.json" .metrics.http_req_failed.passes)" 2
run_ll run "$M/mtls" -c 1 -r 2 -q --skip-verify --mtls-cert "$CERTS/client.pem" --mtls-key "$CERTS/client.key" \
  --summary-export "$T/m.json"
expect_eq "--mtls-cert/--mtls-key: accepted" "$(jqv "$T/m.json" .metrics.http_req_failed.passes)" 0
run_ll run "$S/proxy/echo" -c 4 -r 40 -q --skip-verify --http 2 --parallel -w 1
expect_eq "--parallel: VUs share an h2 connection" "$RC" 0

# bad flags: one line, exit 104, before anything runs
bad() {
  local want=$1; shift
  run_ll run "$@"
  expect_eq "$*: exit 104" "$RC" 104
  expect_eq "$*: one line" "$(wc -l <"$ERR")" 1
  expect_match "$*: says what" "$ERR" "$want"
}
bad "invalid value for -m: 'GE T'" "$URL/" -m "GE T"
bad "invalid value for -H: 'nocolon'" "$URL/" -H nocolon
bad "invalid value for --http: '4' \(expected 1.1, 2 or 3\)" "$URL/" --http 4
bad "invalid value for --client: 'curl'" "$URL/" --client curl
bad "invalid value for --rate: '0'" "$URL/" --rate 0 -d 1s
bad "invalid value for -r: '0'" "$URL/" -r 0
bad "invalid value for --think: 'soon'" "$URL/" --think soon
bad "--body-file: cannot read $T/none: No such file" "$URL/" --body-file "$T/none"
bad "--mtls-cert and --mtls-key go together" "$URL/" --mtls-cert "$CERTS/client.pem"
bad "--rate needs a duration" "$URL/" --rate 5
bad "--body and --body-file: give one of them" "$URL/" -b x --body-file "$T/body.bin"
bad "invalid value for --threshold" "$URL/" --threshold nothing
bad "--threshold 'http_req_failed=rat<1'" "$URL/" --threshold 'http_req_failed=rat<1'
bad "the --jwt-\* claims need --jwt-key" "$URL/" --jwt-sub me
echo 'function default() end' >"$T/s.lua"
bad "--method is a quick-mode flag: give a URL instead of a script" "$T/s.lua" -m GET
bad "no URL in it" "@/dev/null"
finish
