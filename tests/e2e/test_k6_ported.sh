#!/usr/bin/env bash
# k6 examples as a k6 user ports them (syntax changes only): credentials in
# the URL (Basic, against nginx's auth_basic), params.auth = "digest" (the
# 401 challenge counted as expected, as k6 does) and "ntlm", cookie_jar:set
# for a domain the URL does not match (ignored, as Go's jar), a form body
# with a list value (repeated keys), tls_cipher_suites naming a suite the
# TLS library lacks (a warning, a suite it has is negotiated), and k6's
# http.TLS_* and http.OCSP_* constants, res.ocsp from a stapled OCSP
# response (openssl s_server and openssl ocsp). Runs on both transports (ctest's
# e2e.curl.* runs it with LUALOAD_TRANSPORT=curl).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_nginx || exit 1
H=http://127.0.0.1:$NGINX_HTTP_PORT
S=https://127.0.0.1:$NGINX_HTTPS_PORT
/usr/bin/python3 "$(dirname "$0")/helpers/auth_server.py" "$T/auth.log" >"$T/auth.port" &
EXTRA_PIDS+=($!)
for _ in $(seq 50); do [[ -s $T/auth.port ]] && break; sleep 0.1; done
A=http://127.0.0.1:$(cat "$T/auth.port")
m() { jqv "$T/s.json" ".metrics[\"$1\"].$2 // 0"; }

# ---- credentials in the URL: Basic, percent-decoded ----
f=$(script basic.lua <<EOF
local http = require("luaload.http")
local ll = require("luaload")
options = { iterations = 1 }
function default()
  local res = http.get("http://user:p%40ss%20w%3Ard@127.0.0.1:$NGINX_HTTP_PORT/basic")
  print("basic", res.status, res.headers["X-User"], res.body)
  local req = http.Request("http://user:p%40ss%20w%3Ard@127.0.0.1:$NGINX_HTTP_PORT/basic")
  print("request", http.get(req).status)
  print("wrong", http.get("http://user:nope@127.0.0.1:$NGINX_HTTP_PORT/basic").status)
  print("none", http.get("$H/basic").status)
  -- an explicit Authorization header wins over the URL's credentials
  print("header", http.get("http://user:p%40ss%20w%3Ard@127.0.0.1:$NGINX_HTTP_PORT/basic",
    { headers = { Authorization = "Basic bm9ib2R5Og==" } }).status)
end
EOF
)
run_ll run "$f" -q
expect_eq "basic: exit 0" "$RC" 0
expect_match "basic: URL credentials sent as Basic, percent-decoded" "$OUT" $'^basic\t200\tuser\tauthorized'
expect_match "basic: a prepared Request with credentials" "$OUT" $'^request\t200$'
expect_match "basic: a wrong password gets 401" "$OUT" $'^wrong\t401$'
expect_match "basic: no credentials, 401" "$OUT" $'^none\t401$'
expect_match "basic: the script's own Authorization header wins" "$OUT" $'^header\t401$'

# ---- k6's http_digest_auth example ----
f=$(script digest.lua <<EOF
local http = require("luaload.http")
local ll = require("luaload")
options = { iterations = 1, thresholds = { http_req_failed = { "rate==0" } } }
function default()
  for _, p in ipairs({ "/digest/MD5", "/digest/SHA-256", "/digest-noqop" }) do
    local res = http.get("http://user:p%40ss%20w%3Ard@127.0.0.1:$(cat "$T/auth.port")" .. p, { auth = "digest" })
    ll.check(res, { ["status is 200 " .. p] = function(r) return r.status == 200 end })
    print("digest", p, res.status, res.body)
  end
  print("bad", http.get("http://user:wrong@127.0.0.1:$(cat "$T/auth.port")/digest/MD5", { auth = "digest" }).status)
end
EOF
)
run_ll run "$f" -q --summary-export "$T/s.json"
expect_match "digest: MD5 with qop=auth" "$OUT" $'^digest\t/digest/MD5\t200\tdigest ok'
expect_match "digest: SHA-256" "$OUT" $'^digest\t/digest/SHA-256\t200\tdigest ok'
expect_match "digest: without qop (RFC 2069)" "$OUT" $'^digest\t/digest-noqop\t200\tdigest ok'
expect_match "digest: a wrong password is refused by the server" "$OUT" $'^bad\t403$'
expect_eq "digest: each challenge and answer is a request (4 x 2)" "$(m http_reqs count)" 8
expect_eq "digest: the 401 challenges count as expected (k6's rule); the 403 fails" "$(m http_req_failed passes)" 1
expect_eq "digest: the first request goes without credentials" \
  "$(grep -c '^GET /digest/MD5 -$' "$T/auth.log")" 2
expect_match "digest: the answer names the user, the URI and the opaque" "$T/auth.log" \
  '^GET /digest/SHA-256 Digest username="user", realm="luaload@test", nonce="n[0-9a-f]+", uri="/digest/SHA-256", algorithm=SHA-256, response="[0-9a-f]{64}", qop=auth, nc=00000001, cnonce="[0-9a-f]+", opaque="op4que"$'

# ---- params.auth = "ntlm" ----
f=$(script ntlm.lua <<EOF
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local res = http.get("http://user:p%40ss%20w%3Ard@127.0.0.1:$(cat "$T/auth.port")/ntlm", { auth = "ntlm" })
  print("ntlm", res.status, res.body)
end
EOF
)
run_ll run "$f" -q
expect_match "ntlm: the handshake completes (type 1, type 2, type 3)" "$OUT" $'^ntlm\t200\tntlm ok'
expect_match "ntlm: a type 1 message went out" "$T/auth.log" '^GET /ntlm NTLM TlRMTVNTUAABAAAA'
expect_match "ntlm: then a type 3" "$T/auth.log" '^GET /ntlm NTLM TlRMTVNTUAADAAAA'

f=$(script badauth.lua <<EOF
local http = require("luaload.http")
options = { iterations = 1 }
function default() http.get("$H/", { auth = "kerberos" }) end
EOF
)
run_ll run "$f" -q
expect_match "auth: an unknown scheme is a clear script error" "$ERR" \
  "auth must be \"basic\", \"digest\" or \"ntlm\".*got kerberos"

# ---- k6's cookies example: a domain the URL does not match is ignored ----
f=$(script cookies.lua <<EOF
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local jar = http.cookie_jar()
  jar:set("$H/echo", "mine", "yes", { domain = "127.0.0.1", path = "/" })
  jar:set("$H/echo", "foreign", "no", { domain = "example.com" })
  local c = jar:cookies_for_url("$H/echo")
  print("jar", c.mine and c.mine[1], c.foreign)
  print("sent", http.get("$H/echo").body)
  print("bad", pcall(jar.set, jar, "$H/echo", "a b", "1"))
end
EOF
)
run_ll run "$f" -q
expect_eq "cookie_jar:set: exit 0 with a foreign domain" "$RC" 0
expect_match "cookie_jar:set: the foreign cookie is ignored, the matching one kept" "$OUT" $'^jar\tyes\tnil$'
expect_match "cookie_jar:set: only the matching cookie is sent" "$OUT" $'^sent\tmethod=GET .*cookie=mine=yes '
expect_match "cookie_jar:set: an invalid name still raises" "$OUT" $'^bad\tfalse\t.*cannot set cookie \'a b\''

# ---- k6's html_form_post: a list value is sent under repeated keys ----
f=$(script form.lua <<EOF
local http = require("luaload.http")
options = { iterations = 1 }
function default()
  local res = http.post("$A/form", { custname = "k6 user", topping = { "bacon", "cheese" }, extra = true, n = 2 })
  print("form", res.body)
  print("bad", pcall(http.post, "$A/form", { x = { {} } }))
end
EOF
)
run_ll run "$f" -q
expect_match "form: repeated keys in order, keys sorted, booleans as Go's %v" "$OUT" \
  $'^form\tcustname=k6\\+user&extra=true&n=2&topping=bacon&topping=cheese$'
expect_match "form: a value that is no text names its key" "$OUT" $'^bad\tfalse\t.*the body\'s \'x\' must be a string, a number, a boolean or a list'

# ---- tls_cipher_suites with a suite the library lacks; TLS constants ----
f=$(script tls.lua <<EOF
local http = require("luaload.http")
options = {
  iterations = 1, insecureSkipTLSVerify = true,
  tlsCipherSuites = { "TLS_RSA_WITH_RC4_128_SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" },
  tlsVersion = { min = http.TLS_1_2, max = http.TLS_1_2 },
}
function default()
  local res = http.get("$S/")
  print("tls", res.status, res.tls_version == http.TLS_1_2, res.tls_cipher_suite)
  print("consts", http.TLS_1_0, http.TLS_1_1, http.TLS_1_3, http.OCSP_STATUS_GOOD, http.OCSP_STATUS_UNKNOWN,
    http.OCSP_REASON_KEY_COMPROMISE)
end
EOF
)
run_ll run "$f" -q
expect_eq "tls_cipher_suites: an unknown suite does not fail the run" "$RC" 0
expect_match "tls_cipher_suites: the known suite is negotiated; res.tls_version == http.TLS_1_2" "$OUT" \
  $'^tls\t200\ttrue\tTLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256$'
expect_match "tls_cipher_suites: one warning names the unknown suite" "$ERR" \
  "warning: options.tlsCipherSuites: TLS_RSA_WITH_RC4_128_SHA: not cipher suites this TLS library has"
expect_match "k6's TLS and OCSP constants" "$OUT" $'^consts\ttls1.0\ttls1.1\ttls1.3\tgood\tunknown\tkey_compromise$'
f=$(script tls-none.lua <<EOF
local http = require("luaload.http")
options = { iterations = 1, tlsCipherSuites = { "TLS_RSA_WITH_RC4_128_SHA", "TLS_NOPE" } }
function default() end
EOF
)
run_ll run "$f" -q
expect_cmp "tls_cipher_suites: none known fails at init" "x != 0" "$RC"
expect_match "tls_cipher_suites: ... naming the suites" "$ERR" "none of TLS_RSA_WITH_RC4_128_SHA, TLS_NOPE is a cipher suite"

# ---- res.ocsp: what openssl s_server staples (a response openssl ocsp signed) ----
# ocsp_resp STATE OUT: an OCSP response for server.pem, "V" good or "R" revoked
ocsp_resp() {
  local serial subject exp
  serial=$(openssl x509 -in "$CERTS/server.pem" -noout -serial | cut -d= -f2)
  subject=$(openssl x509 -in "$CERTS/server.pem" -noout -subject -nameopt compat | sed 's/^subject=//')
  exp=$(date -u -d '+2 days' +%y%m%d%H%M%SZ)
  if [[ $1 == R ]]; then
    printf 'R\t%s\t%s,keyCompromise\t%s\tunknown\t%s\n' "$exp" "$(date -u -d '-1 hour' +%y%m%d%H%M%SZ)" "$serial" "$subject"
  else
    printf 'V\t%s\t\t%s\tunknown\t%s\n' "$exp" "$serial" "$subject"
  fi >"$T/index.$1.txt"
  openssl ocsp -issuer "$CERTS/ca.pem" -cert "$CERTS/server.pem" -reqout "$T/req.der" >/dev/null 2>&1 &&
    openssl ocsp -index "$T/index.$1.txt" -CA "$CERTS/ca.pem" -rsigner "$CERTS/ca.pem" -rkey "$CERTS/ca.key" \
      -reqin "$T/req.der" -respout "$2" -ndays 1 >/dev/null 2>&1
}
# s_server STAPLE: openssl's TLS server (HTTP/1.0, -www) stapling that file; sets SPORT
s_server() {
  SPORT=$(free_port)
  openssl s_server -accept "127.0.0.1:$SPORT" -cert "$CERTS/server.pem" -key "$CERTS/server.key" \
    ${1:+-status_file "$1"} -www -quiet >"$T/s_server.log" 2>&1 </dev/null &
  EXTRA_PIDS+=($!)
  for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$SPORT") 2>/dev/null && break; sleep 0.1; done
}
ocsp_script() {
  script "ocsp$1.lua" <<EOF
local http = require("luaload.http")
options = { iterations = 1, insecureSkipTLSVerify = true }
function default()
  local res = http.get("https://127.0.0.1:$SPORT/")
  local o = res.ocsp
  print("ocsp", res.status, o.status, o.revocation_reason, o.produced_at > 1.6e12, o.this_update > 1.6e12,
    o.next_update > o.this_update, o.revoked_at > 1.6e12, o.status == http.OCSP_STATUS_GOOD)
  print("plain", http.get("$H/").ocsp.status == "")
end
EOF
}
if ocsp_resp V "$T/good.der" && ocsp_resp R "$T/revoked.der"; then
  s_server "$T/good.der"
  run_ll run "$(ocsp_script good)" -q
  if [[ ${LUALOAD_TRANSPORT:-} == curl ]]; then  # libcurl does not hand the staple over
    expect_match "res.ocsp: unknown on libcurl" "$OUT" $'^ocsp\t200\tunknown\t\tfalse\tfalse\tfalse\tfalse\tfalse$'
  else
    expect_match "res.ocsp: a good stapled response, its times in unix ms" "$OUT" \
      $'^ocsp\t200\tgood\t\ttrue\ttrue\ttrue\tfalse\ttrue$'
  fi
  expect_match "res.ocsp: status \"\" without TLS" "$OUT" $'^plain\ttrue$'
  s_server "$T/revoked.der"
  run_ll run "$(ocsp_script revoked)" -q
  [[ ${LUALOAD_TRANSPORT:-} == curl ]] ||
    expect_match "res.ocsp: revoked, with its reason and time" "$OUT" \
      $'^ocsp\t200\trevoked\tkey_compromise\ttrue\ttrue\ttrue\ttrue\tfalse$'
  s_server ""
  run_ll run "$(ocsp_script none)" -q
  expect_match "res.ocsp: nothing stapled is unknown" "$OUT" $'^ocsp\t200\tunknown\t\tfalse\tfalse'
else
  not_ok "res.ocsp: openssl ocsp could not make the test's responses"
fi

finish
