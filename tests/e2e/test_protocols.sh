#!/usr/bin/env bash
# test_protocols.sh -- HTTP versions, connection models, TLS and mTLS, and
# compression against a real nginx (tests/e2e/servers.sh): the proto tag and
# res.proto say what went on the wire, exact status counts, non-zero timing
# phases, Clients that never share connections, multiplexing, keep-alive off.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_serve # behind nginx's /proxy/: its /delay/MS keeps requests in flight together
make_certs && UPSTREAM_PORT=$PORT start_nginx || exit 1
H=http://127.0.0.1:$NGINX_HTTP_PORT
S=https://127.0.0.1:$NGINX_HTTPS_PORT
C=http://127.0.0.1:$NGINX_H2C_PORT
M=https://127.0.0.1:$NGINX_MTLS_PORT
CA=$CERTS/ca.pem

m() { jqv "$T/s.json" ".metrics[\"$1\"].$2 // 0"; }
# samples of METRIC with a value above 0 in the -o json output
nonzero() { jq -s "[.[] | select(.type == \"Point\" and .metric == \"$1\" and .data.value > 0)] | length" "$T/o.json"; }

# ---- each HTTP version over each transport, exact counts and phases ----
# (nginx 1.22 here offers TLS 1.2 at most; test_http3.sh sees TLS 1.3 from Caddy)
proto_case() { # NAME URL CLIENT_OPTS WANT_PROTO WANT_TLS
  local f
  f=$(script "p_$1.lua" <<EOF
local http = require("luaload.http")
local c = http.Client{ $3 }
options = { thresholds = {
  ["http_reqs{proto:$4}"] = { "count>0" }, ["http_reqs{status:200}"] = { "count>0" },
  ["http_req_duration{proto:$4}"] = { "max>0" } } }
function default()
  local r = c:get("$2/")
  print("got", r.status, r.proto, r.tls_version)
end
EOF
)
  run_ll run "$f" -u 2 -i 20 -q --summary-export "$T/s.json"
  expect_eq "$1: exit 0" "$RC" 0
  expect_eq "$1: every response 200 over $4, tls_version '$5'" "$(grep -c -F -x "$(printf 'got\t200\t%s\t%s' "$4" "$5")" "$OUT")" 20
  expect_eq "$1: 20 requests as $4" "$(m "http_reqs{proto:$4}" count)" 20
  expect_eq "$1: 20 with status 200" "$(m "http_reqs{status:200}" count)" 20
  expect_eq "$1: none failed" "$(m http_req_failed passes)" 0
  expect_cmp "$1: duration > 0" "x > 0" "$(m http_req_duration max)"
  expect_cmp "$1: waiting > 0" "x > 0" "$(m http_req_waiting max)"
  expect_cmp "$1: connecting > 0 (2 connections)" "x > 0" "$(m http_req_connecting max)"
  if [[ -n $5 ]]; then expect_cmp "$1: TLS handshake > 0" "x > 0" "$(m http_req_tls_handshaking max)"; fi
}
proto_case "h1 clear" "$H" "" "HTTP/1.1" ""
proto_case "h2 over TLS (ALPN, the default)" "$S" "tls = { ca = \"$CA\" }" "HTTP/2.0" "tls1.2"
proto_case "h1 over TLS" "$S" "http_version = \"1.1\", tls = { ca = \"$CA\" }" "HTTP/1.1" "tls1.2"
proto_case "h2c prior knowledge" "$C" "http_version = \"2\"" "HTTP/2.0" ""
proto_case "h2 asked for over TLS" "$S" "http_version = \"2\", tls = { ca = \"$CA\" }" "HTTP/2.0" "tls1.2"

# ---- Clients never share connections; a request can ask for a version ----
f=$(script isolation.lua <<EOF
local http = require("luaload.http")
local a = http.Client{ http_version = "1.1", tls = { ca = "$CA" } }
local b = http.Client{ tls = { ca = "$CA" } }
options = { thresholds = { ["http_reqs{proto:HTTP/1.1}"] = { "count>0" }, ["http_reqs{proto:HTTP/2.0}"] = { "count>0" } } }
function default()
  local r1 = a:get("$S/")
  local r2 = b:get("$S/")
  local r3 = b:get("$S/", { http_version = "1.1" })
  if r1.proto ~= "HTTP/1.1" or r2.proto ~= "HTTP/2.0" or r3.proto ~= "HTTP/1.1" then
    print("BAD", r1.proto .. " " .. r2.proto .. " " .. r3.proto)
  end
end
EOF
)
run_ll run "$f" -u 3 -i 30 -q --summary-export "$T/s.json"
expect_eq "isolation: exit 0" "$RC" 0
expect_eq "isolation: every response on its version" "$(grep -c '^BAD' "$OUT")" 0
expect_eq "isolation: 60 requests over HTTP/1.1" "$(m "http_reqs{proto:HTTP/1.1}" count)" 60
expect_eq "isolation: 30 over HTTP/2 (never the other Client's h1 connection)" "$(m "http_reqs{proto:HTTP/2.0}" count)" 30

# ---- connection models: per VU, multiplexed, no keep-alive ----
conn_case() { # NAME CLIENT_OPTS VUS ITERATIONS WANT_CONNECTIONS [PATH]
  local f
  f=$(script "c_$1.lua" <<EOF
local http = require("luaload.http")
local c = http.Client{ tls = { ca = "$CA" }, $2 }
function default()
  local r = c:get("$S${6:-/}")
  if r.status ~= 200 then print("BAD", r.status, r.error) end
end
EOF
)
  run_ll run "$f" -u "$3" -i "$4" -w 1 -q --summary-export "$T/s.json" -o json="$T/o.json"
  expect_eq "$1: exit 0" "$RC" 0
  expect_eq "$1: $4 requests" "$(m http_reqs count)" "$4"
  expect_eq "$1: all 200" "$(grep -c '^BAD' "$OUT")" 0
  expect_eq "$1: $5 connections" "$(nonzero http_req_tls_handshaking)" "$5"
}
conn_case "per-VU h2 connections" "" 8 80 8
conn_case "multiplexed, one connection" "multiplex = true, max_conns_per_host = 1" 8 80 1
# one stream each, and each request 50 ms long (luaload serve's /delay behind
# nginx): the 8 VUs' requests overlap and need both connections whatever the
# load (with instant responses a loaded machine could start them one by one,
# and libcurl then keeps to one connection)
conn_case "multiplexed, two connections" "multiplex = true, max_conns_per_host = 2, max_streams = 1" 8 40 2 /proxy/delay/50
conn_case "keep-alive off" "disable_keep_alive = true, http_version = \"1.1\"" 2 20 20

# ---- TLS: verification, mTLS, versions ----
f=$(script tls.lua <<EOF
local http = require("luaload.http")
local plain = http.Client{}
local skip = http.Client{ tls = { insecure_skip_verify = true } }
local mtls = http.Client{ tls = { ca = "$CA", certificate = "$CERTS/client.pem", private_key = "$CERTS/client.key" } }
local mtls11 = http.Client{ http_version = "1.1", tls = { ca = "$CA", certificate = "$CERTS/client.pem", private_key = "$CERTS/client.key" } }
local bad = http.Client{ tls = { ca = "$CA", certificate = "$CERTS/bad-client.pem", private_key = "$CERTS/bad-client.key" } }
local none = http.Client{ tls = { ca = "$CA" } }
local t12 = http.Client{ tls = { ca = "$CA", max_version = "tls1.2" } }
local suite = http.Client{ tls = { ca = "$CA", max_version = "tls1.2", ciphers = { "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" } } }
local sni = http.Client{ tls = { ca = "$CA", server_name = "localhost" } }
local wrongsni = http.Client{ tls = { ca = "$CA", server_name = "elsewhere.test" } }
local fresh = http.Client{ tls = { ca = "$CA" }, disable_keep_alive = true, http_version = "1.1" }
options = { thresholds = { ["http_req_failed{name:selfsigned}"] = { "rate>0" } } }
function default()
  local r = plain:get("$S/", { tags = { name = "selfsigned" } })
  print("selfsigned", r.status, r.error_code)
  r = skip:get("$S/")
  print("skip", r.status)
  r = mtls:get("$M/mtls")
  print("mtls", r.status, r.proto, r.body)
  r = mtls11:get("$M/mtls")
  print("mtls11", r.status, r.proto, r.body)
  r = bad:get("$M/mtls")
  print("badcert", r.status)
  r = none:get("$M/mtls")
  print("nocert", r.status)
  r = t12:get("$S/")
  print("tls12", r.status, r.tls_version, r.tls_cipher_suite ~= "")
  r = suite:get("$S/")
  print("suite", r.status, r.tls_cipher_suite)
  r = sni:get("$S/echo")
  print("sni", r.status, r.url, r.body:match("host=%S+"))
  r = wrongsni:get("$S/")
  print("wrongsni", r.status, r.error_code)
  local seen = {}
  for i = 1, 3 do seen[i] = fresh:get("$S/tls-session").body:match("reused=(%S)") end
  print("resume", table.concat(seen, " "))
end
EOF
)
run_ll run "$f" -i 1 -q --summary-export "$T/s.json"
expect_eq "tls: exit 0" "$RC" 0
expect_match "self-signed without skip-verify: status 0, error 1310" "$OUT" $'^selfsigned\t0\t1310$'
expect_eq "self-signed: counted in http_req_failed" "$(m "http_req_failed{name:selfsigned}" passes)" 1
expect_match "insecure_skip_verify: 200" "$OUT" $'^skip\t200$'
# (libcurl on GnuTLS does a full handshake each time here: native only)
[[ ${LUALOAD_TRANSPORT:-native} == native ]] &&
  expect_match "a new connection resumes the TLS session" "$OUT" $'^resume\t\\. r r$'
expect_match "mTLS over h2: verified client" "$OUT" $'^mtls\t200\tHTTP/2.0\tclient=CN=luaload-client verify=SUCCESS'
expect_match "mTLS over h1: verified client" "$OUT" $'^mtls11\t200\tHTTP/1.1\tclient=CN=luaload-client verify=SUCCESS'
expect_match "mTLS with another CA's certificate: 400" "$OUT" $'^badcert\t400$'
expect_match "mTLS without a certificate: 400" "$OUT" $'^nocert\t400$'
expect_match "max_version tls1.2" "$OUT" $'^tls12\t200\ttls1.2\ttrue$'
expect_match "ciphers by IANA name (k6's tlsCipherSuites)" "$OUT" $'^suite\t200\tTLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256$'
expect_match "server_name: verified as localhost, Host and url unchanged" "$OUT" $'^sni\t200\t'"$S"$'/echo\thost=127.0.0.1$'
expect_match "server_name the certificate lacks: 1310" "$OUT" $'^wrongsni\t0\t1310$'

# a bad path or a file that is no key fails before the test, naming the file
f=$(script badca.lua <<EOF
local http = require("luaload.http")
local c = http.Client{ tls = { ca = "$T/nope.pem" } }
function default() end
EOF
)
run_ll run "$f" -i 1 -q
expect_eq "missing ca: exit 107" "$RC" 107
expect_match "missing ca: names the file" "$ERR" "cannot read ca '$T/nope.pem': No such file or directory"
echo "not a key" >"$T/junk.key"
f=$(script badkey.lua <<EOF
local http = require("luaload.http")
local c = http.Client{ tls = { certificate = "$CERTS/client.pem", private_key = "$T/junk.key" } }
function default() end
EOF
)
run_ll run "$f" -i 1 -q
expect_eq "junk key: exit 107" "$RC" 107
expect_match "junk key: names the file" "$ERR" "private_key '$T/junk.key' is not a PEM file"
f=$(script h9.lua <<'EOF'
local http = require("luaload.http")
local c = http.Client{ http_version = "9" }
function default() end
EOF
)
run_ll run "$f" -i 1 -q
expect_match "http_version 9: a clear error" "$ERR" 'http_version must be "1.1", "2" or "3"'

# ---- compression: decoded, counted on the wire, Accept-Encoding only when set ----
f=$(script gzip.lua <<EOF
local http = require("luaload.http")
local plain = io.open("$NGINX_WWW/plain.txt"):read("*a")
function default()
  for _, enc in ipairs({ "gzip", "deflate", "br", "zstd" }) do
    local r = http.get("$H/" .. enc)
    print(enc, r.status, r.body == plain, r.headers["Content-Encoding"])
  end
  print("ae", http.get("$H/echo").body:match("ae=(%S*)"))
  print("ae set", http.get("$H/echo", { headers = { ["Accept-Encoding"] = "gzip" } }).body:match("ae=(%S*)"))
end
EOF
)
run_ll run "$f" -i 1 -q --summary-export "$T/s.json"
expect_eq "compression: exit 0" "$RC" 0
for enc in gzip deflate br zstd; do
  expect_match "$enc: decoded to the original text" "$OUT" "^$enc"$'\t200\ttrue\t'"$enc\$"
done
expect_match "no Accept-Encoding unless the script sets it" "$OUT" $'^ae\t$'
expect_match "Accept-Encoding as set" "$OUT" $'^ae set\tgzip$'
# 4 bodies of 20000 bytes decoded; on the wire they are far smaller
expect_cmp "data_received counts compressed bytes" "x < 20000" "$(m data_received count)"

finish
