#!/usr/bin/env bash
# HTTP/3 against Caddy (tests/e2e/servers.sh): http_version = "3" with the
# test CA gives HTTP/3.0 responses over TLS 1.3 on one QUIC connection per VU,
# counted by proto and status; error statuses are failed; multiplex shares
# connections between the VUs of a worker (max_streams bounds the streams of
# each); mTLS over h3 by success or failure (Caddy 2.6 does not expand the TLS
# placeholders of /mtls over HTTP/3); certificate verification; HTTP/1.1 and
# HTTP/2 over TCP on the same port; bad PEM paths fail at init; params.on_chunk
# streams a body over HTTP/3 (luaload serve's /sse through Caddy's proxy).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
start_serve
UPSTREAM_PORT=$PORT start_caddy || exit 1
H3=https://127.0.0.1:$CADDY_PORT
MTLS=https://127.0.0.1:$CADDY_MTLS_PORT
N=8

# stat NAME FIELD: a value of $T/s.json (cnt, passes, rate, conns: lib.sh)
stat() { jqv "$T/s.json" ".metrics[\"$1\"][\"$2\"] // \"missing\""; }

# HTTP/3: N iterations of one VU, each a 200 and a 503
S=$(script h3.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" } }
options = {
  thresholds = {
    ["http_reqs{proto:HTTP/3.0}"] = { "count>0" }, ["http_reqs{status:200}"] = { "count>0" },
    ["http_reqs{status:503}"] = { "count>0" }, ["http_reqs{error_code:1503}"] = { "count>0" },
    ["http_req_failed{kind:ok}"] = { "rate>=0" }, ["http_req_failed{kind:503}"] = { "rate>=0" },
  },
}
function default()
  local r = c:get("$H3/", { tags = { kind = "ok" } })
  print("ok", r.status, r.proto, r.tls_version, r.error_code, r.body == "hello\n", r.url)
  r = c:get("$H3/status/503", { tags = { kind = "503" } })
  print("503", r.status, r.proto, r.error_code, r.body)
end
LUA
)
run_ll run "$S" -q -u 1 -i $N --summary-export "$T/s.json" -o json="$T/h3.json"
expect_eq "h3: exit 0" "$RC" 0
expect_eq "h3: http_reqs = 2 per iteration" "$(cnt http_reqs)" $((2 * N))
expect_eq "h3: http_reqs{proto:HTTP/3.0} = all of them" "$(cnt 'http_reqs{proto:HTTP/3.0}')" $((2 * N))
expect_eq "h3: http_reqs{status:200} = N" "$(cnt 'http_reqs{status:200}')" $N
expect_eq "h3: http_reqs{status:503} = N" "$(cnt 'http_reqs{status:503}')" $N
expect_eq "h3: every 200 has proto HTTP/3.0, tls1.3, the body and the URL" \
  "$(grep -c -P "^ok\t200\tHTTP/3.0\ttls1.3\t0\ttrue\t$H3/$" "$OUT")" $N
expect_eq "h3: every 503 is HTTP/3.0 with error_code 1503" \
  "$(grep -c -P "^503\t503\tHTTP/3.0\t1503\tstatus 503$" "$OUT")" $N
expect_eq "h3: http_reqs{error_code:1503} = N" "$(cnt 'http_reqs{error_code:1503}')" $N
expect_eq "h3: http_req_failed: the 503s" "$(passes http_req_failed)" $N
expect_eq "h3: http_req_failed rate 0.5" "$(rate http_req_failed)" 0.5
expect_eq "h3: http_req_failed{kind:503} rate 1" "$(rate 'http_req_failed{kind:503}')" 1
expect_eq "h3: http_req_failed{kind:ok} rate 0" "$(rate 'http_req_failed{kind:ok}')" 0
expect_cmp "h3: http_req_duration avg > 0" "x > 0" "$(stat http_req_duration avg)"
expect_cmp "h3: http_req_duration min > 0" "x > 0" "$(stat http_req_duration min)"
expect_cmp "h3: http_req_waiting avg > 0" "x > 0" "$(stat http_req_waiting avg)"
# (not min: a reply read in the same libcurl call as the send can make one
# sample's waiting 0 at microsecond resolution once sending is taken out)
expect_cmp "h3: http_req_tls_handshaking max > 0 (the QUIC handshake)" "x > 0" "$(stat http_req_tls_handshaking max)"
expect_eq "h3: one VU keeps one QUIC connection for all its requests" "$(conns "$T/h3.json")" 1

# multiplex: 5 VUs of one worker share one connection; with max_streams = 2
# they need ceil(5 / 2) = 3; without multiplex each VU has its own
mux_script() { # NAME CLIENT-OPTIONS
  script "$1.lua" <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", $2, tls = { ca = "$CERTS/ca.pem" } }
options = { thresholds = { ["http_reqs{proto:HTTP/3.0}"] = { "count>0" }, ["http_reqs{status:200}"] = { "count>0" } } }
function default()
  local r = c:get("$H3/echo")
  if r.status ~= 200 then print("bad", r.status, r.error_code, r.error) end
end
LUA
}
for mux in "mux:multiplex = true:1" "mux2:multiplex = true, max_streams = 2:3" "nomux:multiplex = false:5"; do
  IFS=: read -r name opts want <<<"$mux"
  S=$(mux_script "$name" "$opts")
  run_ll run "$S" -q -u 5 -i 40 -w 1 --summary-export "$T/s.json" -o json="$T/$name.json"
  expect_eq "$name: exit 0" "$RC" 0
  expect_eq "$name: http_reqs = 40" "$(cnt http_reqs)" 40
  expect_eq "$name: http_reqs{proto:HTTP/3.0} = 40" "$(cnt 'http_reqs{proto:HTTP/3.0}')" 40
  expect_eq "$name: http_reqs{status:200} = 40" "$(cnt 'http_reqs{status:200}')" 40
  expect_eq "$name: no failure" "$(passes http_req_failed)" 0
  expect_eq "$name: $want connection(s) for 5 VUs ($opts)" "$(conns "$T/$name.json")" "$want"
done

# mTLS over h3 (CADDY_MTLS_PORT requires a client cert signed by ca.pem):
# with client.pem 200; without a cert, or with one of another CA, status 0
S=$(script mtls.lua <<LUA
local http = require("luaload.http")
local good = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem",
  certificate = "$CERTS/client.pem", private_key = "$CERTS/client.key" } }
local none = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" } }
local bad = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem",
  certificate = "$CERTS/bad-client.pem", private_key = "$CERTS/bad-client.key" } }
options = {
  thresholds = {
    ["http_req_failed{kind:cert}"] = { "rate>=0" }, ["http_req_failed{kind:nocert}"] = { "rate>=0" },
    ["http_req_failed{kind:badcert}"] = { "rate>=0" }, ["http_reqs{kind:nocert}"] = { "count>=0" },
    ["http_reqs{proto:HTTP/3.0}"] = { "count>=0" },
  },
}
function default()
  local r = good:get("$MTLS/mtls", { tags = { kind = "cert" } })
  print("cert", r.status, r.proto, r.tls_version, r.body)
  r = none:get("$MTLS/mtls", { tags = { kind = "nocert" } })
  print("nocert", r.status, r.proto, r.error_code ~= 0, r.error ~= "")
  r = bad:get("$MTLS/mtls", { tags = { kind = "badcert" } })
  print("badcert", r.status, r.error_code ~= 0)
end
LUA
)
run_ll run "$S" -q -i 3 --summary-export "$T/s.json"
expect_eq "mtls: exit 0" "$RC" 0
# over HTTP/3 Caddy 2.6 sends the placeholder unexpanded (servers.sh)
expect_eq "mtls: with client.pem, 200 over HTTP/3" \
  "$(grep -c -P '^cert\t200\tHTTP/3.0\ttls1.3\tclient=\{http.request.tls.client.subject\}$' "$OUT")" 3
expect_eq "mtls: without a cert, status 0 and an error" "$(grep -c -P '^nocert\t0\t\ttrue\ttrue$' "$OUT")" 3
expect_eq "mtls: a cert of another CA, status 0" "$(grep -c -P '^badcert\t0\ttrue$' "$OUT")" 3
expect_eq "mtls: http_req_failed{kind:cert} rate 0" "$(rate 'http_req_failed{kind:cert}')" 0
expect_eq "mtls: http_req_failed{kind:nocert} rate 1" "$(rate 'http_req_failed{kind:nocert}')" 1
expect_eq "mtls: http_req_failed{kind:nocert} passes 3" "$(passes 'http_req_failed{kind:nocert}')" 3
expect_eq "mtls: http_req_failed{kind:badcert} rate 1" "$(rate 'http_req_failed{kind:badcert}')" 1
expect_eq "mtls: the failures are counted in http_reqs" "$(cnt 'http_reqs{kind:nocert}')" 3
expect_eq "mtls: only the successes have proto HTTP/3.0" "$(cnt 'http_reqs{proto:HTTP/3.0}')" 3

# verification: Caddy's server.pem is signed by the test CA, which the
# system store does not hold. Over h3 (ngtcp2 + GnuTLS here) the failure is
# reported as a certificate verification failure, error_code 1310 ("server
# verification failed: certificate signer not trusted"), not the generic
# TLS error 1300. insecure_skip_verify = true, or a ca of another CA plus
# insecure_skip_verify, succeeds.
S=$(script verify.lua <<LUA
local http = require("luaload.http")
local strict = http.Client{ http_version = "3" }
local other = http.Client{ http_version = "3", tls = { ca = "$CERTS/other-ca.pem" } }
local skip = http.Client{ http_version = "3", tls = { insecure_skip_verify = true } }
options = { thresholds = { ["http_reqs{error_code:1310}"] = { "count>=0" } } }
function default()
  local r = strict:get("$H3/")
  print("strict", r.status, r.proto, r.error_code)
  r = other:get("$H3/")
  print("other", r.status, r.error_code)
  r = skip:get("$H3/")
  print("skip", r.status, r.proto, r.tls_version, r.body)
end
LUA
)
run_ll run "$S" -q -i 2 --summary-export "$T/s.json"
expect_eq "verify: exit 0" "$RC" 0
expect_eq "verify: no ca, no skip: status 0, error_code 1310" "$(grep -c -P '^strict\t0\t\t1310$' "$OUT")" 2
expect_eq "verify: a ca of another CA: error_code 1310" "$(grep -c -P '^other\t0\t1310$' "$OUT")" 2
expect_eq "verify: http_reqs{error_code:1310} = 4" "$(cnt 'http_reqs{error_code:1310}')" 4
expect_eq "verify: insecure_skip_verify: 200 over HTTP/3" "$(grep -c -P '^skip\t200\tHTTP/3.0\ttls1.3\thello$' "$OUT")" 2

# the same Caddy port over TCP: HTTP/1.1 when asked (Client or request
# param), HTTP/2 by ALPN by default; HTTP/3 as a request param
S=$(script tcp.lua <<LUA
local http = require("luaload.http")
local h1 = http.Client{ http_version = "1.1", tls = { ca = "$CERTS/ca.pem" } }
local def = http.Client{ tls = { ca = "$CERTS/ca.pem" } }
options = {
  thresholds = {
    ["http_reqs{proto:HTTP/1.1}"] = { "count>=0" }, ["http_reqs{proto:HTTP/2.0}"] = { "count>=0" },
    ["http_reqs{proto:HTTP/3.0}"] = { "count>=0" },
  },
}
function default()
  local r = h1:get("$H3/")
  print("h1", r.status, r.proto, r.tls_version, r.tls_cipher_suite ~= "", r.body)
  r = def:get("$H3/")
  print("h2", r.status, r.proto, r.tls_version, r.tls_cipher_suite ~= "", r.body)
  r = def:get("$H3/", { http_version = "1.1" })
  print("param1", r.status, r.proto)
  r = def:get("$H3/", { http_version = "3" })
  print("param3", r.status, r.proto)
end
LUA
)
run_ll run "$S" -q -i 3 --summary-export "$T/s.json"
expect_eq "tcp: exit 0" "$RC" 0
expect_eq "tcp: http_version 1.1: HTTP/1.1 over TLS 1.3" "$(grep -c -P '^h1\t200\tHTTP/1.1\ttls1.3\ttrue\thello$' "$OUT")" 3
expect_eq "tcp: default: HTTP/2.0 over TLS 1.3" "$(grep -c -P '^h2\t200\tHTTP/2.0\ttls1.3\ttrue\thello$' "$OUT")" 3
expect_eq "tcp: params.http_version 1.1 on a default Client" "$(grep -c -P '^param1\t200\tHTTP/1.1$' "$OUT")" 3
expect_eq "tcp: params.http_version 3 on a default Client" "$(grep -c -P '^param3\t200\tHTTP/3.0$' "$OUT")" 3
expect_eq "tcp: http_reqs{proto:HTTP/1.1}" "$(cnt 'http_reqs{proto:HTTP/1.1}')" 6
expect_eq "tcp: http_reqs{proto:HTTP/2.0}" "$(cnt 'http_reqs{proto:HTTP/2.0}')" 3
expect_eq "tcp: http_reqs{proto:HTTP/3.0}" "$(cnt 'http_reqs{proto:HTTP/3.0}')" 3

# a missing or non-PEM ca / certificate / private_key fails at init: exit 107
# naming the option and the file
echo "not a certificate" >"$T/notpem.txt"
for c in "ca:ca = '$T/missing-ca.pem':cannot read ca '$T/missing-ca.pem'" \
  "cert:certificate = '$T/missing.pem', private_key = '$CERTS/client.key':cannot read certificate '$T/missing.pem'" \
  "key:certificate = '$CERTS/client.pem', private_key = '$T/missing.key':cannot read private_key '$T/missing.key'" \
  "notpem:ca = '$T/notpem.txt':ca '$T/notpem.txt' is not a PEM file"; do
  IFS=: read -r name opts msg <<<"$c"
  S=$(script "bad_$name.lua" <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", tls = { $opts } }
function default() c:get("$H3/") end
LUA
)
  run_ll run "$S" -q -i 1
  expect_eq "bad $name: exit 107" "$RC" 107
  expect_match "bad $name: the message names the file" "$ERR" "http.Client tls: $msg"
done
# qlog_dir: ngtcp2's qlog of each native QUIC connection, a file each (one
# VU, one connection); tls.server_name: the name verified and sent as SNI
mkdir -p "$T/qlog"
S=$(script qlog.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" }, qlog_dir = "$T/qlog" }
local named = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem", server_name = "localhost" } }
local wrong = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem", server_name = "wrong.example" } }
function default()
  print("qlog", c:get("$H3/").status)
  print("sni", named:get("$H3/").status)
  local r = wrong:get("$H3/")
  print("wrong name", r.status, r.error_code)
end
LUA
)
run_ll run "$S" -q -i 2
expect_eq "qlog: exit 0" "$RC" 0
if [[ ${LUALOAD_TRANSPORT:-} == curl ]]; then
  expect_eq "qlog: libcurl writes none (the native transport's option)" "$(find "$T/qlog" -name '*.sqlog' | wc -l)" 0
else
  expect_eq "qlog: one .sqlog for the VU's one connection" "$(find "$T/qlog" -name '*.sqlog' | wc -l)" 1
  QLOG=$(find "$T/qlog" -name '*.sqlog' | head -1)
  expect_match "qlog: ngtcp2's JSON-SEQ trace of a client" "$QLOG" '"qlog_format":"JSON-SEQ".*"type":"client"'
  expect_match "qlog: the connection's packets in it" "$QLOG" 'transport:packet_received'
  expect_match "tls.server_name over h3: the name the certificate carries is verified" "$OUT" $'^sni\t200$'
  expect_match "tls.server_name over h3: another name fails verification (1310)" "$OUT" $'^wrong name\t0\t1310$'
fi

# params.on_chunk over HTTP/3: the events as they come, nothing kept
S=$(script h3_chunk.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" } }
function default()
  local pieces = {}
  local r = c:get("$H3/proxy/sse?n=5&interval=50", { on_chunk = function(b) pieces[#pieces + 1] = b end })
  local _, events = table.concat(pieces):gsub("data: event %d", "")
  print("h3 chunk", r.proto, r.status, #r.body, #pieces > 1, events)
end
LUA
)
run_ll run "$S" -q -i 1
expect_eq "on_chunk over h3: exit 0" "$RC" 0
expect_match "on_chunk over h3: the body streamed in several pieces, none kept" "$OUT" $'^h3 chunk\tHTTP/3.0\t200\t0\ttrue\t5$'
finish
