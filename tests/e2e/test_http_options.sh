#!/usr/bin/env bash
# k6's global HTTP options in the script's `options` (the defaults of every
# Client, which a Client's own settings override), against nginx (and Caddy
# for TLS 1.3, see below): userAgent, maxRedirects, discardResponseBodies,
# noConnectionReuse, noVUConnectionReuse, insecureSkipTLSVerify, tlsAuth,
# tlsVersion, tlsCipherSuites, hosts, batch, batchPerHost; http.batch; a bad
# value of each exits 104 naming options.<key>.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
start_nginx || exit 1
H=http://127.0.0.1:$NGINX_HTTP_PORT
HS=https://127.0.0.1:$NGINX_HTTPS_PORT
M=https://127.0.0.1:$NGINX_MTLS_PORT
N=4

# lines PATTERN: lines of $OUT matching the Perl regex PATTERN
lines() { grep -c -P -- "$1" "$OUT"; }

# userAgent; a Client's user_agent wins; "" sends none
S=$(script ua.lua <<LUA
local http = require("luaload.http")
options = { userAgent = "k6-options-ua/1.0" }
local own = http.Client{ user_agent = "own-client/2.0" }
local plain = http.Client{}
function default()
  print("default", http.get("$H/echo").body)
  print("plain", plain:get("$H/echo").body)
  print("own", own:get("$H/echo").body)
end
LUA
)
run_ll run "$S" -q -i 2
expect_eq "userAgent: exit 0" "$RC" 0
expect_eq "userAgent: the default Client sends it" "$(lines '^default\tmethod=GET .* ua=k6-options-ua/1.0 host=127.0.0.1$')" 2
expect_eq "userAgent: a Client without user_agent sends it" "$(lines '^plain\tmethod=GET .* ua=k6-options-ua/1.0 host=')" 2
expect_eq "userAgent: a Client's user_agent wins" "$(lines '^own\tmethod=GET .* ua=own-client/2.0 host=')" 2
S=$(script ua_empty.lua <<LUA
local http = require("luaload.http")
options = { userAgent = "" }
function default() print("empty", http.get("$H/echo").body) end
LUA
)
run_ll run "$S" -q -i 1
expect_eq "userAgent = \"\": no User-Agent" "$(lines '^empty\tmethod=GET len= ae= cookie= ua= host=127.0.0.1$')" 1

# maxRedirects = 1: /redirect/3 -> /redirect/2 (302, the result) = 2 requests;
# a request's redirects and a Client's max_redirects win
S=$(script redirects.lua <<LUA
local http = require("luaload.http")
options = {
  maxRedirects = 1,
  thresholds = { ["http_reqs{kind:opt}"] = { "count>=0" }, ["http_reqs{kind:param}"] = { "count>=0" },
                 ["http_reqs{kind:client}"] = { "count>=0" }, ["http_req_failed{kind:opt}"] = { "rate>=0" } },
}
local c = http.Client{ max_redirects = 0 }
function default()
  local r = http.get("$H/redirect/3", { tags = { kind = "opt" } })
  print("opt", r.status, r.url)
  r = http.get("$H/redirect/3", { redirects = 5, tags = { kind = "param" } })
  print("param", r.status, r.url)
  r = c:get("$H/redirect/3", { tags = { kind = "client" } })
  print("client", r.status, r.url)
end
LUA
)
run_ll run "$S" -q -i $N --summary-export "$T/s.json"
expect_eq "maxRedirects: exit 0" "$RC" 0
expect_eq "maxRedirects = 1: the 302 of the second hop is the result" "$(lines "^opt\t302\t$H/redirect/2$")" $N
expect_eq "maxRedirects = 1: exactly 2 http_reqs per iteration" "$(cnt 'http_reqs{kind:opt}')" $((2 * N))
expect_eq "maxRedirects = 1: the last 302 is not a failure" "$(passes 'http_req_failed{kind:opt}')" 0
expect_eq "params.redirects = 5 wins: the whole chain to /echo" "$(lines "^param\t200\t$H/echo$")" $N
expect_eq "params.redirects = 5: 4 http_reqs per iteration" "$(cnt 'http_reqs{kind:param}')" $((4 * N))
expect_eq "a Client's max_redirects = 0 wins: the first 302" "$(lines "^client\t302\t$H/redirect/3$")" $N
expect_eq "max_redirects = 0: 1 http_req per iteration" "$(cnt 'http_reqs{kind:client}')" $N

# discardResponseBodies: body nil unless response_type asks; a Client's
# discard_response_bodies = false wins
S=$(script discard.lua <<LUA
local http = require("luaload.http")
options = { discardResponseBodies = true }
local keep = http.Client{ discard_response_bodies = false }
function default()
  local r = http.get("$H/")
  print("discard", r.status, r.body == nil, type(r.body))
  r = http.get("$H/", { response_type = "text" })
  print("text", r.status, r.body)
  r = http.get("$H/", { response_type = "binary" })
  print("binary", r.status, r.body)
  r = keep:get("$H/")
  print("keep", r.status, r.body)
end
LUA
)
run_ll run "$S" -q -i 2 --summary-export "$T/s.json"
expect_eq "discardResponseBodies: exit 0" "$RC" 0
expect_eq "discardResponseBodies: res.body is nil" "$(lines '^discard\t200\ttrue\tnil$')" 2
expect_eq "discardResponseBodies: response_type text gives the body" "$(lines '^text\t200\thello$')" 2
expect_eq "discardResponseBodies: response_type binary gives the body" "$(lines '^binary\t200\thello$')" 2
expect_eq "discardResponseBodies: a Client's discard_response_bodies = false wins" "$(lines '^keep\t200\thello$')" 2
expect_cmp "discardResponseBodies: the discarded bodies are still received (data_received)" "x > 0" "$(cnt data_received)"

# noConnectionReuse: every request connects (http_req_connecting > 0); a
# Client's disable_keep_alive = false wins; without it one connection per VU
S=$(script reuse.lua <<LUA
local http = require("luaload.http")
options = { noConnectionReuse = (__ENV.REUSE == "no") }
local keep = http.Client{ disable_keep_alive = false }
local tls = http.Client{ tls = { ca = "$CERTS/ca.pem" } }
function default()
  local r = http.get("$H/", { tags = { kind = "default" } })
  if r.status ~= 200 then print("bad", r.status) end
  r = tls:get("$HS/echo", { tags = { kind = "tls" } })
  if r.status ~= 200 then print("bad", r.status) end
  if __ENV.KEEP == "1" then keep:get("$H/echo", { tags = { kind = "keep" } }) end
end
LUA
)
run_ll run "$S" -q -e REUSE=no -i $N --summary-export "$T/s.json" -o json="$T/noreuse.json"
expect_eq "noConnectionReuse: exit 0" "$RC" 0
expect_eq "noConnectionReuse: http_reqs" "$(cnt http_reqs)" $((2 * N))
expect_eq "noConnectionReuse: a new connection for every request" "$(conns "$T/noreuse.json")" "$(cnt http_reqs)"
expect_eq "noConnectionReuse: a TLS handshake for every HTTPS request" \
  "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_req_tls_handshaking" and .data.value > 0)] | length' "$T/noreuse.json")" $N
expect_eq "noConnectionReuse: no request failed" "$(passes http_req_failed)" 0
run_ll run "$S" -q -e REUSE=no -e KEEP=1 -i $N --summary-export "$T/s.json" -o json="$T/keep.json"
expect_eq "noConnectionReuse + a Client's disable_keep_alive = false: that Client reuses (1 connection)" \
  "$(jq -s '[.[] | select(.type == "Point" and .metric == "http_req_connecting" and .data.value > 0 and .data.tags.kind == "keep")] | length' "$T/keep.json")" 1
run_ll run "$S" -q -e REUSE=yes -i $N --summary-export "$T/s.json" -o json="$T/reuse.json"
expect_eq "noConnectionReuse = false: one connection per Client for one VU" "$(conns "$T/reuse.json")" 2

# noVUConnectionReuse: the VU's connections close at each iteration's start
S=$(script vureuse.lua <<LUA
local http = require("luaload.http")
options = { noVUConnectionReuse = true }
function default()
  http.get("$H/")
  http.get("$H/echo")
end
LUA
)
run_ll run "$S" -q -i $N --summary-export "$T/s.json" -o json="$T/vureuse.json"
expect_eq "noVUConnectionReuse: exit 0" "$RC" 0
expect_eq "noVUConnectionReuse: one connection per iteration, reused inside it" "$(conns "$T/vureuse.json")" $N
expect_eq "noVUConnectionReuse: http_reqs" "$(cnt http_reqs)" $((2 * N))

# insecureSkipTLSVerify: the default Client reaches nginx HTTPS without a
# ca; without it certificate verification fails (1310); a Client's
# insecure_skip_verify = false wins
S=$(script insecure.lua <<LUA
local http = require("luaload.http")
options = { insecureSkipTLSVerify = (__ENV.SKIP == "1") }
local strict = http.Client{ tls = { insecure_skip_verify = false } }
function default()
  local r = http.get("$HS/")
  print("default", r.status, r.error_code, r.proto, r.body)
  r = strict:get("$HS/")
  print("strict", r.status, r.error_code)
end
LUA
)
run_ll run "$S" -q -e SKIP=1 -i 2
expect_eq "insecureSkipTLSVerify: exit 0" "$RC" 0
expect_eq "insecureSkipTLSVerify = true: the default Client gets 200 over HTTP/2" "$(lines '^default\t200\t0\tHTTP/2.0\thello$')" 2
expect_eq "insecureSkipTLSVerify = true: a Client's insecure_skip_verify = false wins: 1310" "$(lines '^strict\t0\t1310$')" 2
run_ll run "$S" -q -e SKIP=0 -i 2
expect_eq "insecureSkipTLSVerify = false: status 0, error_code 1310" "$(lines '^default\t0\t1310\t\t$')" 2
S=$(script noskip.lua <<LUA
local http = require("luaload.http")
function default()
  local r = http.get("$HS/")
  print("unset", r.status, r.error_code)
end
LUA
)
run_ll run "$S" -q -i 2
expect_eq "no insecureSkipTLSVerify: status 0, error_code 1310" "$(lines '^unset\t0\t1310$')" 2

# tlsAuth: the PEM text read at init is the client certificate of every
# Client; nginx's mTLS port verifies it (verify=SUCCESS), else answers 400
S=$(script tlsauth.lua <<LUA
local http = require("luaload.http")
local function read(p) local f = assert(io.open(p)) local s = f:read("a") f:close() return s end
options = { insecureSkipTLSVerify = true }
if __ENV.AUTH == "1" then
  options.tlsAuth = { { domains = { "127.0.0.1" }, cert = read("$CERTS/client.pem"), key = read("$CERTS/client.key") } }
end
local c = http.Client{ tls = { ca = "$CERTS/ca.pem" } }
function default()
  local r = http.get("$M/mtls")
  print("default", r.status, r.proto, r.body)
  r = c:get("$M/mtls")
  print("client", r.status, r.body)
end
LUA
)
run_ll run "$S" -q -e AUTH=1 -i 2
expect_eq "tlsAuth: exit 0" "$RC" 0
expect_eq "tlsAuth: the default Client's certificate is verified by nginx" \
  "$(lines '^default\t200\tHTTP/2.0\tclient=CN=luaload-client verify=SUCCESS$')" 2
expect_eq "tlsAuth: a Client without a certificate of its own sends it too" \
  "$(lines '^client\t200\tclient=CN=luaload-client verify=SUCCESS$')" 2
run_ll run "$S" -q -e AUTH=0 -i 2
expect_eq "no tlsAuth: nginx answers 400" "$(lines '^default\t400\tHTTP/2.0\t')" 2
expect_eq "no tlsAuth: 400 for the Client too" "$(lines '^client\t400\t')" 2

# tlsVersion. nginx 1.22 (Debian 12) offers only TLS 1.0-1.2 (ssl_protocols'
# default gained TLSv1.3 in nginx 1.23.4; `openssl s_client -tls1_3` gets
# "alert protocol version"), so against nginx { min = "tls1.3" } fails with
# a TLS error (1300: "handshake failed: Error in protocol version"), and the
# TLS 1.3 case runs against Caddy, which offers 1.2 and 1.3.
start_caddy || exit 1
C=https://127.0.0.1:$CADDY_PORT
S=$(script tlsversion.lua <<LUA
local http = require("luaload.http")
local v = __ENV.TLSV
options = { insecureSkipTLSVerify = true,
  tlsVersion = v == "12" and "tls1.2" or v == "13" and { min = "tls1.3" } or { min = "tls1.2", max = "tls1.3" } }
local own = http.Client{ tls = { insecure_skip_verify = true, min_version = "tls1.3" } }
function default()
  local r = http.get("$C/")
  print("caddy", r.status, r.tls_version, r.tls_cipher_suite)
  r = http.get("$HS/")
  print("nginx", r.status, r.error_code, r.tls_version)
  r = own:get("$C/")
  print("own", r.status, r.tls_version)
end
LUA
)
run_ll run "$S" -q -e TLSV=12 -i 2
expect_eq "tlsVersion: exit 0" "$RC" 0
expect_eq "tlsVersion = tls1.2: Caddy speaks TLS 1.2" "$(lines '^caddy\t200\ttls1.2\tTLS_ECDHE_ECDSA_WITH_')" 2
expect_eq "tlsVersion = tls1.2: nginx too" "$(lines '^nginx\t200\t0\ttls1.2$')" 2
expect_eq "tlsVersion = tls1.2: a Client's min_version = tls1.3 wins" "$(lines '^own\t200\ttls1.3$')" 2
run_ll run "$S" -q -e TLSV=13 -i 2
expect_eq "tlsVersion = { min = tls1.3 }: Caddy speaks TLS 1.3" "$(lines '^caddy\t200\ttls1.3\tTLS_AES_')" 2
expect_eq "tlsVersion = { min = tls1.3 }: nginx (no TLS 1.3) fails, 1300" "$(lines '^nginx\t0\t1300\t$')" 2
run_ll run "$S" -q -e TLSV=range -i 2
expect_eq "tlsVersion = { min = tls1.2, max = tls1.3 }: Caddy at 1.3" "$(lines '^caddy\t200\ttls1.3\t')" 2
expect_eq "tlsVersion = { min = tls1.2, max = tls1.3 }: nginx at 1.2" "$(lines '^nginx\t200\t0\ttls1.2$')" 2

# tlsCipherSuites: the suite nginx negotiates (TLS 1.2); a Client's ciphers win
S=$(script ciphers.lua <<LUA
local http = require("luaload.http")
options = { insecureSkipTLSVerify = true, tlsCipherSuites = { "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" } }
local own = http.Client{ tls = { insecure_skip_verify = true, ciphers = { "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" } } }
function default()
  local r = http.get("$HS/")
  print("opt", r.status, r.tls_cipher_suite)
  r = own:get("$HS/")
  print("own", r.status, r.tls_cipher_suite)
end
LUA
)
run_ll run "$S" -q -i 2
expect_eq "tlsCipherSuites: exit 0" "$RC" 0
expect_eq "tlsCipherSuites: the suite asked for" "$(lines '^opt\t200\tTLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256$')" 2
expect_eq "tlsCipherSuites: a Client's ciphers win" "$(lines '^own\t200\tTLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384$')" 2

# hosts: test.local -> 127.0.0.1 (the Host header stays test.local), and
# name:port -> address:port
S=$(script hosts.lua <<LUA
local http = require("luaload.http")
options = { hosts = { ["test.local"] = "127.0.0.1", ["other.local:81"] = "127.0.0.1:$NGINX_HTTP_PORT" } }
function default()
  local r = http.get("http://test.local:$NGINX_HTTP_PORT/echo")
  print("hosts", r.status, r.url, r.body)
  r = http.get("http://other.local:81/echo")
  print("hostport", r.status, r.url, r.body)
end
LUA
)
run_ll run "$S" -q -i 2
expect_eq "hosts: exit 0" "$RC" 0
expect_eq "hosts: test.local reaches nginx, host=test.local" \
  "$(lines "^hosts\t200\thttp://test.local:$NGINX_HTTP_PORT/echo\tmethod=GET .* host=test.local$")" 2
expect_eq "hosts: name:port -> address:port" "$(lines '^hostport\t200\thttp://other.local:81/echo\tmethod=GET .* host=other.local$')" 2

# http.batch: 6 requests, responses in order; at most options.batch at once
# (one VU, HTTP/1.1: one connection per request running at once, reused by
# the next iterations), at most batchPerHost per host (default 6)
S=$(script batch.lua <<LUA
local http = require("luaload.http")
options = {
  batch = tonumber(__ENV.BATCH), batchPerHost = tonumber(__ENV.PERHOST),
  thresholds = { ["http_reqs{status:200}"] = { "count>=0" }, ["http_reqs{status:404}"] = { "count>=0" } },
}
function default()
  local rs = http.batch({
    "$H/", "$H/status/404", { "GET", "$H/echo" }, { method = "GET", url = "$H/" },
    http.Request("$H/status/404"), { "POST", "$H/echo", "abc" },
  })
  local t = {}
  for i, r in ipairs(rs) do t[i] = r.status .. ":" .. (r.body or ""):gsub("\n", ""):sub(1, 15) end
  print("batch", #rs, table.concat(t, ","))
end
LUA
)
WANT_BATCH='batch	6	200:hello,404:status 404,200:method=GET len=,200:hello,404:status 404,200:method=POST len'
# batch=default: options.batch not set (k6's 20), the same for batchPerHost (6)
for b in "default:default:6" "2:default:2" "default:1:1" "3:0:3"; do
  IFS=: read -r batch perhost want <<<"$b"
  run_ll run "$S" -q -i 3 -e BATCH="$batch" -e PERHOST="$perhost" --summary-export "$T/s.json" -o json="$T/batch.json"
  expect_eq "batch=$batch perHost=$perhost: exit 0" "$RC" 0
  expect_eq "batch=$batch perHost=$perhost: 6 responses in order" "$(grep -c -x -F "$WANT_BATCH" "$OUT")" 3
  expect_eq "batch=$batch perHost=$perhost: http_reqs" "$(cnt http_reqs)" 18
  expect_eq "batch=$batch perHost=$perhost: 12 x 200" "$(cnt 'http_reqs{status:200}')" 12
  expect_eq "batch=$batch perHost=$perhost: 6 x 404" "$(cnt 'http_reqs{status:404}')" 6
  expect_eq "batch=$batch perHost=$perhost: $want requests at once ($want connections)" "$(conns "$T/batch.json")" "$want"
done

# a bad value of each option: exit 104, one line naming options.<key>
while IFS='|' read -r key value; do
  printf 'options = { %s = %s }\nfunction default() end\n' "$key" "$value" >"$T/bad.lua"
  run_ll run "$T/bad.lua" -q -i 1
  expect_eq "options.$key = $value: exit 104" "$RC" 104
  expect_match "options.$key = $value: the message names options.$key" "$ERR" "^luaload: options\.$key: "
  expect_eq "options.$key = $value: one line" "$(wc -l <"$ERR")" 1
done <<'EOF'
userAgent|{}
insecureSkipTLSVerify|"yes"
tlsAuth|"x"
tlsAuth|{ { cert = "x", key = "y" } }
tlsVersion|"tls9"
tlsVersion|{ min = "tls1.3", max = "tls1.2" }
tlsCipherSuites|5
maxRedirects|"x"
maxRedirects|-1
maxRedirects|1.5
discardResponseBodies|1
noConnectionReuse|"no"
noVUConnectionReuse|0
hosts|{ ["a"] = 5 }
batch|0
batch|0/0
batchPerHost|-1
EOF
finish
