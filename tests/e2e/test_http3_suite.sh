#!/usr/bin/env bash
# test_http3_suite.sh -- the HTTP suite's essential cases over HTTP/3, to
# Caddy (tests/e2e/servers.sh) and through its /proxy/X routes to `luaload
# serve`: methods, statuses, request headers and :authority, HEAD,
# http_req_failed; k6's timing phases; redirects (each hop a sample, the
# limits, 301-308's method and body rules, a FileStream sent again on a 307);
# the cookie jar across requests and redirects; response decompression and
# a corrupt body; request bodies of every source (string, table, Form with a
# FileStream, Blob, ll.open, a region, 5 MiB over several flow-control
# windows, many streams at once) checked by the SHA-256 serve echoes;
# max_response_body, response_type, discardResponseBodies; a timeout; serve's
# faults through the proxy; no request sent twice. CMake runs it on the
# native transport and again on libcurl (e2e.curl.test_http3_suite): each
# check holds on both unless it says which transport gives what, and why.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
start_serve
UPSTREAM_PORT=$PORT start_caddy || exit 1
H3=https://127.0.0.1:$CADDY_PORT
P=$H3/proxy
TRANSPORT=${LUALOAD_TRANSPORT:-native}
CLIENT="http.Client{ http_version = \"3\", tls = { ca = \"$CERTS/ca.pem\" } }"

m() { jqv "$T/s.json" ".metrics[\"$1\"].$2 // 0"; }
lines() { grep -c -P -- "$1" "$OUT"; }

# ---- methods, statuses, request headers, :authority, HEAD ----
S=$(script basics.lua <<LUA
local http = require("luaload.http")
local c = $CLIENT
options = { thresholds = {
  ["http_reqs{proto:HTTP/3.0}"] = { "count>0" }, ["http_reqs{status:404}"] = { "count>0" },
  ["http_reqs{status:503}"] = { "count>0" }, ["http_reqs{error_code:1404}"] = { "count>0" },
  ["http_req_failed{kind:bad}"] = { "rate>=0" }, ["http_req_failed{kind:good}"] = { "rate>=0" } } }
local good, bad = { tags = { kind = "good" } }, { tags = { kind = "bad" } }
function default()
  for _, method in ipairs({ "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS" }) do
    local body = nil
    if method ~= "GET" then body = "abc" end
    local r = c:request(method, "$P/sha256", body, good)
    print("method", r.status, r.proto, r.headers["X-Method"], r.headers["X-Body-Size"])
  end
  -- (not to Caddy's own routes: its respond routes send a HEAD a body over
  -- HTTP/3, which nghttp3, under both transports, refuses as malformed)
  local r = c:head("$P/bytes/10", good)
  print("head", r.status, r.proto, #r.body, r.headers["Content-Length"])
  r = c:get("$H3/headers", { headers = { ["X-A"] = "value a", ["Content-Type"] = "text/x-test" }, tags = { kind = "good" } })
  print("headers", r.status, r.body)
  r = c:get("$H3/headers", { host = "localhost:$CADDY_PORT", tags = { kind = "good" } })
  print("host", r.status, r.body)
  for _, s in ipairs({ 200, 201, 204, 404, 503 }) do
    r = c:get("$P/status/" .. s, s >= 400 and bad or good)
    print("status", s, r.status, r.proto, r.error_code, #r.body)
  end
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json" --http-debug
expect_eq "basics: exit 0" "$RC" 0
# --http-debug: every response's status line names its version (native
# said HTTP/2 for HTTP/3 once); libcurl's has a space after the status
expect_eq "--http-debug: each response head is HTTP/3's" "$(grep -c -P '^HTTP/3 [0-9]{3} ?\r$' "$ERR")" 14
for method in GET POST PUT PATCH DELETE OPTIONS; do
  len=3
  [[ $method == GET ]] && len=0
  expect_eq "$method over HTTP/3, its body's length" "$(lines "^method\t200\tHTTP/3.0\t$method\t$len\$")" 1
done
expect_eq "HEAD: 200, no body, the Content-Length of a GET" "$(lines $'^head\t200\tHTTP/3.0\t0\t10$')" 1
expect_eq "request headers as set" "$(lines $'^headers\t200\tx-a=value a ct=text/x-test host=127.0.0.1:'"$CADDY_PORT\$")" 1
expect_eq "params.host is the :authority" "$(lines $'^host\t200\tx-a= ct= host=localhost:'"$CADDY_PORT\$")" 1
for s in 200 201 204; do
  expect_eq "status $s through the proxy" "$(lines "^status\t$s\t$s\tHTTP/3.0\t0\t")" 1
done
expect_eq "status 404: error_code 1404, the body kept" "$(lines $'^status\t404\t404\tHTTP/3.0\t1404\t[1-9]')" 1
expect_eq "status 503: error_code 1503" "$(lines $'^status\t503\t503\tHTTP/3.0\t1503\t')" 1
expect_eq "every request over HTTP/3" "$(m 'http_reqs{proto:HTTP/3.0}' count)" "$(m http_reqs count)"
expect_eq "http_req_failed: the 4xx and 5xx" "$(m 'http_req_failed{kind:bad}' passes)" 2
expect_eq "http_req_failed: none of the others" "$(m 'http_req_failed{kind:good}' passes)" 0

# ---- k6's timing phases: a connection's first request pays its handshake ----
S=$(script phases.lua <<LUA
local http = require("luaload.http")
local c = $CLIENT
function default()
  for i = 1, 3 do
    local t = c:get("$P/bytes/100000").timings
    print("phase", i, t.blocked, t.connecting, t.tls_handshaking, t.sending, t.waiting, t.receiving, t.duration)
  end
end
LUA
)
run_ll run "$S" -q -u 1 -i 2 --summary-export "$T/s.json" -o json="$T/phases.json"
expect_eq "phases: exit 0" "$RC" 0
expect_eq "phases: one connection for the VU's 6 requests" "$(conns "$T/phases.json")" 1
awk -F'\t' '$1 == "phase"' "$OUT" >"$T/phases.txt"
expect_eq "phases: connecting > 0 on the first request only" \
  "$(awk -F'\t' '{ printf "%d", ($4 > 0) }' "$T/phases.txt")" 100000
expect_eq "phases: blocked covers the handshake on the first request" \
  "$(awk -F'\t' 'NR == 1 { print ($3 >= $4) }' "$T/phases.txt")" 1
expect_eq "phases: duration = sending + waiting + receiving, none negative" \
  "$(awk -F'\t' 'function abs(v) { return v < 0 ? -v : v }
    abs($6 + $7 + $8 - $9) < 0.0015 && $6 >= 0 && $7 > 0 && $8 >= 0 && $3 >= 0 { n++ } END { print n + 0 }' "$T/phases.txt")" 6
expect_eq "phases: tls_handshaking 0 on a reused connection" \
  "$(awk -F'\t' 'NR > 1 && $5 == 0 { n++ } END { print n + 0 }' "$T/phases.txt")" 5
if [[ $TRANSPORT == native ]]; then
  # native: connecting is QUIC's whole handshake (a UDP socket's connect
  # takes no time, and QUIC's handshake is TLS's), tls_handshaking the part of
  # it from the server's first packet on: nested, 0 < tls_handshaking < connecting
  expect_eq "phases (native): 0 < tls_handshaking < connecting on the first request" \
    "$(awk -F'\t' 'NR == 1 { print ($5 > 0 && $5 < $4) }' "$T/phases.txt")" 1
else
  # libcurl: connecting runs to its CONNECT_TIME, tls_handshaking from there
  # to its APPCONNECT_TIME: the handshake split in two, one after the other,
  # where native nests them (native's connecting ~ libcurl's two together)
  expect_eq "phases (curl): tls_handshaking > 0 on the first request, blocked covers both" \
    "$(awk -F'\t' 'NR == 1 { print ($5 > 0 && $3 >= $4 + $5) }' "$T/phases.txt")" 1
fi

# ---- redirects: each hop a sample, cookies on every hop, the limits ----
S=$(script hops.lua <<LUA
local http = require("luaload.http")
local c = $CLIENT
options = { thresholds = {
  ["http_reqs{status:302}"] = { "count>0" }, ["http_reqs{status:200}"] = { "count>0" },
  ["http_reqs{url:$H3/redirect/3}"] = { "count>0" }, ["http_reqs{url:$H3/redirect/1}"] = { "count>0" },
  ["http_reqs{url:$H3/echo}"] = { "count>0" } } }
function default()
  local r = c:get("$H3/redirect/3")
  print("hops", r.status, r.proto, r.url, r.body:match("cookie=[^ ]*; [^ ]*; [^ ]*"))
end
LUA
)
run_ll run "$S" -q -u 2 -i 6 --summary-export "$T/s.json"
expect_eq "hops: exit 0" "$RC" 0
expect_eq "hops: 200 at the final URL with the three hops' cookies" \
  "$(lines $'^hops\t200\tHTTP/3.0\t'"$H3"$'/echo\tcookie=hop3=yes; hop2=yes; hop1=yes$')" 6
expect_eq "hops: 4 samples per chain" "$(m http_reqs count)" 24
expect_eq "hops: 18 with status 302" "$(m 'http_reqs{status:302}' count)" 18
expect_eq "hops: the first hop's url tag" "$(m "http_reqs{url:$H3/redirect/3}" count)" 6
expect_eq "hops: the third hop's url tag" "$(m "http_reqs{url:$H3/redirect/1}" count)" 6
expect_eq "hops: the final url tag" "$(m "http_reqs{url:$H3/echo}" count)" 6

head -c 300000 /dev/urandom >"$T/small.bin"
SMALL=$(sha256sum "$T/small.bin" | cut -d' ' -f1)
S=$(script limits.lua <<LUA
local http = require("luaload.http")
local one = http.Client{ http_version = "3", max_redirects = 1, tls = { ca = "$CERTS/ca.pem" } }
local none = http.Client{ http_version = "3", max_redirects = 0, tls = { ca = "$CERTS/ca.pem" } }
local c = $CLIENT
local file = http.FileStream("$T/small.bin")
function default()
  local r = one:get("$H3/redirect/3")
  print("client1", r.status, r.url, r.error_code)
  r = none:get("$H3/redirect/3")
  print("client0", r.status, r.url)
  r = c:get("$H3/redirect/3", { redirects = 2 })
  print("request2", r.status, r.url)
  r = one:get("$H3/redirect/3", { redirects = 3 })
  print("request wins", r.status, r.url)
  r = c:get("$H3/loop")
  print("loop", r.status, r.error_code)
  r = c:get("$H3/redirect/abs")
  print("absolute", r.status, r.url)
  for _, s in ipairs({ "301", "302", "303", "307", "308" }) do
    r = c:post("$H3/r" .. s, "abcde", { headers = { ["Content-Type"] = "text/plain" } })
    print(s, r.status, r.url, r.headers["X-Method"], r.headers["X-Body-Size"])
  end
  r = c:head("$H3/r302")
  print("head", r.status, r.url, r.headers["X-Method"])
  r = c:post("$H3/r307", file)
  print("307 file", r.status, r.url, r.body:match("%x+"), r.headers["X-Body-Size"])
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json"
expect_eq "limits: exit 0" "$RC" 0
expect_eq "max_redirects = 1: the second 302" "$(lines $'^client1\t302\t'"$H3"$'/redirect/2\t0$')" 1
expect_eq "max_redirects = 0: the first 302" "$(lines $'^client0\t302\t'"$H3/redirect/3\$")" 1
expect_eq "redirects = 2 in params" "$(lines $'^request2\t302\t'"$H3/redirect/1\$")" 1
expect_eq "the request's redirects win over the Client's" "$(lines $'^request wins\t200\t'"$H3/echo\$")" 1
expect_eq "a loop stops after k6's 10 redirects with the 302, no error" "$(lines $'^loop\t302\t0$')" 1
expect_eq "an absolute Location" "$(lines $'^absolute\t200\t'"$H3/echo\$")" 1
for s in 301 302 303; do expect_eq "$s: POST becomes GET without the body" "$(lines "^$s"$'\t200\t'"$P/sha256"$'\tGET\t0$')" 1; done
for s in 307 308; do expect_eq "$s: POST stays POST with its body" "$(lines "^$s"$'\t200\t'"$P/sha256"$'\tPOST\t5$')" 1; done
expect_eq "HEAD stays HEAD" "$(lines $'^head\t200\t'"$P/sha256"$'\tHEAD$')" 1
expect_eq "307: a FileStream sent again from disk, byte for byte" \
  "$(lines $'^307 file\t200\t'"$P/sha256"$'\t'"$SMALL"$'\t300000$')" 1
# 2 + 1 + 3 + 4 + 11 + 2 + 5 * 2 + 2 + 2 samples
expect_eq "limits: one sample per hop" "$(m http_reqs count)" 37
expect_eq "limits: a 3xx is not a failure" "$(m http_req_failed passes)" 0

# ---- the cookie jar ----
S=$(script jar.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = $CLIENT
function default()
  print("iteration start", ll.vu.iteration, "[" .. c:get("$H3/echo").body:match("cookie=(%S*)") .. "]")
  local r = c:get("$H3/set-cookie")
  print("res.cookies", r.proto, r.cookies.a[1].value, r.cookies.a[1].path, tostring(r.cookies.b[1].http_only), r.cookies.b[1].path)
  print("sent", c:get("$H3/echo").body:match("cookie=([^\n]-) ua="))
  print("other path", c:get("$H3/headers").status, http.cookie_jar():cookies_for_url("$H3/other").a[1],
    tostring(http.cookie_jar():cookies_for_url("$H3/other").b))
  print("merged", c:get("$H3/echo", { cookies = { explicit = "e1" } }).body:match("cookie=([^\n]-) ua="))
  http.cookie_jar():set("$H3/", "manual", "m1")
  print("manual", c:get("$H3/echo").body:match("cookie=([^\n]-) ua="))
end
LUA
)
run_ll run "$S" -q -u 1 -i 2
expect_eq "jar: exit 0" "$RC" 0
expect_eq "the jar is empty at each iteration's start" "$(lines $'^iteration start\t[01]\t\\[\\]$')" 2
expect_eq "res.cookies of an HTTP/3 response" "$(lines $'^res.cookies\tHTTP/3.0\t1\t/\ttrue\t/echo$')" 2
expect_eq "the jar's cookies go back, the longer path first" "$(lines $'^sent\tb=2; a=1$')" 2
expect_eq "cookies_for_url honours the path" "$(lines $'^other path\t200\t1\tnil$')" 2
expect_eq "explicit cookies merged with the jar's" "$(lines $'^merged\texplicit=e1; b=2; a=1$')" 2
expect_eq "a cookie set in the jar is sent" "$(lines $'^manual\tb=2; a=1; manual=m1$')" 2

# ---- response decompression, on the wire compressed; a corrupt body fails ----
S=$(script decode.lua <<LUA
local http = require("luaload.http")
local c = $CLIENT
local plain = io.open("$CADDY_WWW/plain.txt"):read("*a")
options = { thresholds = { ["data_received{kind:enc}"] = { "count>0" }, ["http_req_failed{kind:corrupt}"] = { "rate>=0" } } }
function default()
  for _, enc in ipairs({ "gzip", "deflate", "br", "zstd" }) do
    local r = c:get("$H3/" .. enc, { tags = { kind = "enc" } })
    print(enc, r.status, r.proto, r.body == plain, r.headers["Content-Encoding"])
  end
  print("ae", c:get("$H3/echo").body:match("ae=(%S*)"))
  print("ae set", c:get("$H3/echo", { headers = { ["Accept-Encoding"] = "gzip" } }).body:match("ae=(%S*)"))
  local r = c:get("$H3/gzip-corrupt", { tags = { kind = "corrupt" } })
  print("corrupt", r.status, r.error_code, r.error ~= "", #(r.body or ""))
  print("after", c:get("$H3/plain").status)
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json"
expect_eq "decode: exit 0" "$RC" 0
for enc in gzip deflate br zstd; do
  expect_eq "$enc: decoded to the original text" "$(lines "^$enc"$'\t200\tHTTP/3.0\ttrue\t'"$enc\$")" 1
done
expect_eq "no Accept-Encoding unless the script sets it" "$(lines $'^ae\t$')" 1
expect_eq "Accept-Encoding as set" "$(lines $'^ae set\tgzip$')" 1
expect_cmp "data_received counts the compressed bytes" "x > 0 && x < 4 * 20000" "$(m 'data_received{kind:enc}' count)"
expect_eq "a body that is not what Content-Encoding says: a failed request, 1000" \
  "$(lines $'^corrupt\t0\t1000\ttrue\t0$')" 1
expect_eq "the corrupt body counted in http_req_failed" "$(m 'http_req_failed{kind:corrupt}' passes)" 1
expect_eq "the next request works" "$(lines $'^after\t200$')" 1

# ---- request bodies of every source, byte for byte (serve's /sha256) ----
head -c 5242880 /dev/urandom >"$T/up.bin"
SHA=$(sha256sum "$T/up.bin" | cut -d' ' -f1)
SLICE=$(tail -c +1001 "$T/up.bin" | head -c 70000 | sha256sum | cut -d' ' -f1)
BLOB=$(python3 -c 'import hashlib; print(hashlib.sha256(bytes(i % 251 for i in range(5242880))).hexdigest())')
STR=$(printf 'a string body' | sha256sum | cut -d' ' -f1)
S=$(script bodies.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = $CLIENT
local file = http.FileStream("$T/up.bin")
local slice = http.FileStream("$T/up.bin", { offset = 1000, length = 70000 })
local opened = ll.open("$T/up.bin", "b")
local req = http.Request("$P/sha256", { method = "PUT", body = file })
local form = http.Form{ fields = { a = "1", b = "two words" },
  files = { file = http.FileStream("$T/up.bin", { filename = "x.bin", content_type = "application/x-test" }),
            note = http.file("hello\n", "hello.txt", "text/plain") } }
local text = string.rep("compress me ", 1000)
function default()
  local r = c:post("$P/sha256", "a string body")
  print("string", r.status, r.proto, r.body:match("%x+"), r.headers["X-Body-Size"])
  r = c:post("$P/sha256", file)
  print("file", r.status, r.proto, r.body:match("%x+"), r.headers["X-Body-Size"])
  r = c:request(req)
  print("request", r.status, r.body:match("%x+"))
  r = c:post("$P/sha256", slice)
  print("slice", r.status, r.body:match("%x+"), r.headers["X-Body-Size"])
  r = c:post("$P/sha256", file, { headers = { ["Transfer-Encoding"] = "chunked" } })
  print("chunked", r.status, r.body:match("%x+"), r.headers["X-Body-Size"])
  r = c:post("$P/sha256", http.Blob{ size = 5242880 })
  print("blob", r.status, r.body:match("%x+"), r.headers["X-Body-Size"])
  r = c:post("$P/sha256", opened)
  print("opened", r.status, r.body:match("%x+"))
  r = c:post("$P/echo", { a = "1", b = "x y&z=é" })
  print("table", r.status, r.body)
  r = c:post("$P/multipart", form)
  print("form", r.status, r.body)
  r = c:post("$P/echo", text, { compression = "gzip" })
  print("compression", r.status, #r.body < #text, r.body:sub(1, 2) == "\31\139")
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json"
expect_eq "bodies: exit 0" "$RC" 0
expect_eq "a string" "$(lines $'^string\t200\tHTTP/3.0\t'"$STR"$'\t13$')" 1
expect_eq "a 5 MiB FileStream streamed from disk" "$(lines $'^file\t200\tHTTP/3.0\t'"$SHA"$'\t5242880$')" 1
expect_eq "a FileStream in a prepared Request" "$(lines $'^request\t200\t'"$SHA\$")" 1
expect_eq "a FileStream's region" "$(lines $'^slice\t200\t'"$SLICE"$'\t70000$')" 1
if [[ $TRANSPORT == native ]]; then
  expect_eq "Transfer-Encoding: chunked (HTTP/1.1's) does not change an HTTP/3 body" \
    "$(lines $'^chunked\t200\t'"$SHA"$'\t5242880$')" 1
else
  # libcurl (8.14, ngtcp2) sends a streamed body of unknown size, which the
  # script's Transfer-Encoding: chunked asks of it, as no body at all over
  # HTTP/3: serve receives 0 bytes. libcurl's defect, recorded so that a fix
  # shows here
  expect_eq "Transfer-Encoding: chunked over HTTP/3 on libcurl: an empty body (its defect)" \
    "$(lines $'^chunked\t200\te3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\t0$')" 1
fi
expect_eq "a 5 MiB Blob, generated" "$(lines $'^blob\t200\t'"$BLOB"$'\t5242880$')" 1
expect_eq "ll.open's bytes" "$(lines $'^opened\t200\t'"$SHA\$")" 1
expect_eq "a table: form-urlencoded" "$(lines $'^table\t200\ta=1&b=x\\+y%26z%3D%C3%A9$')" 1
sed -n 's/^form\t200\t//p' "$OUT" >"$T/form.json"
expect_eq "multipart: the parts by name" "$(jq -r '[.parts[].name] | join(",")' "$T/form.json" 2>&1)" "a,b,file,note"
expect_eq "multipart: the FileStream part, byte for byte" \
  "$(jq -r '.parts[2] | "\(.filename) \(.content_type) \(.size) \(.sha256)"' "$T/form.json" 2>&1)" \
  "x.bin application/x-test 5242880 $SHA"
expect_eq "params.compression: gzip on the wire" "$(lines $'^compression\t200\ttrue\ttrue$')" 1
# 4 whole files (file, request, chunked, opened) and the form's, the blob,
# the slice (on libcurl the chunked one is not sent: above)
# libcurl's count (its REQUEST_SIZE) is 250 to 450 kB over the bytes of
# these bodies and heads, varying from run to run: a looser bound there
files=6 slack=20000
[[ $TRANSPORT == native ]] || files=5 slack=1048576
expect_cmp "data_sent counts the bodies" "x > $files * 5242880 + 70000 && x < $files * 5242880 + 70000 + $slack" "$(m data_sent count)"

# many streams at once on one connection (multiplex): each body exact
S=$(script many.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", multiplex = true, tls = { ca = "$CERTS/ca.pem" } }
local file = http.FileStream("$T/small.bin")
function default()
  local r = c:post("$P/sha256", file)
  print("got", r.status, r.proto, r.body:match("%x+"))
end
LUA
)
run_ll run "$S" -q -u 6 -i 24 -w 1 -o json="$T/many.json"
expect_eq "6 VUs' streams on one connection: 24 exact uploads" "$(lines $'^got\t200\tHTTP/3.0\t'"$SMALL\$")" 24
expect_eq "6 VUs' streams on one connection" "$(conns "$T/many.json")" 1

# ---- what comes back: max_response_body, response_type, discardResponseBodies ----
S=$(script limit.lua <<LUA
local http = require("luaload.http")
local small = http.Client{ http_version = "3", max_response_body = "1MiB", tls = { ca = "$CERTS/ca.pem" } }
local keep = http.Client{ http_version = "3", discard_response_bodies = false, tls = { ca = "$CERTS/ca.pem" } }
local c = $CLIENT
options = { discardResponseBodies = true }
function default()
  -- (response_type text: a discarded body has no limit)
  local r = small:get("$P/bytes/2000000", { response_type = "text" })
  print("client", r.status, r.error_code, r.error, #(r.body or ""))
  r = c:get("$P/bytes/2000000", { max_response_body = 1000, response_type = "text" })
  print("param", r.status, r.error_code)
  r = small:get("$P/bytes/1000", { response_type = "text" })
  print("after", r.status, #r.body)
  r = c:get("$P/bytes/3000000", { response_type = "none" })
  print("none", r.status, r.proto, tostring(r.body))
  r = c:get("$H3/", { response_type = "binary" })
  print("binary", r.status, r.body)
  r = c:get("$H3/")
  print("discard", r.status, tostring(r.body))
  r = keep:get("$H3/")
  print("keep", r.status, r.body)
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json"
expect_eq "limit: exit 0" "$RC" 0
expect_eq "Client max_response_body: the request fails, 1000" \
  "$(lines $'^client\t0\t1000\tthe response body is over max_response_body \\(1048576 bytes\\)\t0$')" 1
expect_eq "params.max_response_body" "$(lines $'^param\t0\t1000$')" 1
expect_eq "the next request works" "$(lines $'^after\t200\t1000$')" 1
expect_eq "response_type none: no body, no limit" "$(lines $'^none\t200\tHTTP/3.0\tnil$')" 1
expect_eq "response_type binary" "$(lines $'^binary\t200\thello$')" 1
expect_eq "discardResponseBodies: res.body is nil" "$(lines $'^discard\t200\tnil$')" 1
expect_eq "a Client's discard_response_bodies = false wins" "$(lines $'^keep\t200\thello$')" 1
expect_eq "the bodies over the limit are failures" "$(m http_req_failed passes)" 2
expect_cmp "data_received counts the discarded body" "x > 3000000" "$(m data_received count)"

# ---- a timeout: error_code 1050 at the timeout; the connection goes on ----
S=$(script timeout.lua <<LUA
local http = require("luaload.http")
local c = $CLIENT
function default()
  c:get("$H3/") -- the connection first: the timeout covers a handshake too
  local r = c:get("$P/delay/3000", { timeout = "400ms" })
  print("timeout", r.status, r.error_code, r.timings.duration)
  r = c:get("$H3/")
  print("after", r.status, r.proto)
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json" -o json="$T/timeout.json"
expect_eq "timeout: exit 0" "$RC" 0
expect_eq "timeout: status 0, error_code 1050" "$(lines $'^timeout\t0\t1050\t')" 1
expect_cmp "timeout: the duration is the timeout" "x >= 390 && x < 800" "$(awk -F'\t' '$1 == "timeout" { print $4 }' "$OUT")"
expect_eq "timeout: the next request works" "$(lines $'^after\t200\tHTTP/3.0$')" 1
expect_eq "timeout: counted in http_req_failed" "$(m http_req_failed passes)" 1
expect_eq "timeout: one connection" "$(conns "$T/timeout.json")" 1

# ---- serve's faults through Caddy: each a counted error, none sent twice ----
before=$(caddy_requests /proxy/fault/)
S=$(script faults.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", timeout = "1500ms", tls = { ca = "$CERTS/ca.pem" } }
options = { thresholds = { ["http_req_failed{kind:fault}"] = { "rate>=0" }, ["http_reqs{kind:fault}"] = { "count>=0" } } }
function default()
  for _, f in ipairs({ "reset", "close-headers", "garbage", "close-body", "stall" }) do
    local r = c:get("$P/fault/" .. f, { tags = { kind = "fault" } })
    print(f, r.status, r.error_code, #(r.body or ""), r.error)
  end
  for _, f in ipairs({ "slow-body", "huge-headers", "early-hints" }) do
    local r = c:get("$P/fault/" .. f)
    print(f, r.status, r.error_code, r.body)
  end
  print("after", c:get("$H3/").status)
end
LUA
)
run_ll run "$S" -q -i 1 --summary-export "$T/s.json" -o json="$T/faults.json"
expect_eq "faults: exit 0" "$RC" 0
# before the response's head Caddy answers 502 for serve's broken reply
for f in reset close-headers garbage; do
  expect_eq "$f: Caddy's 502, error_code 1502" "$(lines "^$f"$'\t502\t1502\t0\t$')" 1
done
# in the middle of the body Caddy can only end the stream short of its
# Content-Length: a malformed response, an error of that stream alone (RFC
# 9114 4.1.2). Native resets the stream (H3_MESSAGE_ERROR) and goes on on
# the same connection, as its HTTP/2 does with a stream error; libcurl
# closes the whole connection (ERR_CLOSING, 1200), failing any other
# request on it, and opens another for the next request
if [[ $TRANSPORT == native ]]; then
  expect_eq "close-body: the stream's error, 1600" \
    "$(lines $'^close-body\t0\t1600\t0\tstream error: stream ID [0-9]+; H3_MESSAGE_ERROR$')" 1
  expect_eq "faults: the connection outlives the malformed response" "$(conns "$T/faults.json")" 1
else
  expect_eq "close-body: libcurl closes the connection, 1200" "$(lines $'^close-body\t0\t1200\t0\t')" 1
  expect_eq "faults: libcurl opens a second connection after it" "$(conns "$T/faults.json")" 2
fi
expect_eq "stall: the timeout, 1050" "$(lines $'^stall\t0\t1050\t0\t')" 1
for f in slow-body huge-headers early-hints; do
  expect_eq "$f: 200 with the body" "$(lines "^$f"$'\t200\t0\thello world$')" 1
done
expect_eq "faults: the connection goes on" "$(lines $'^after\t200$')" 1
expect_eq "faults: each failed" "$(m 'http_req_failed{kind:fault}' passes)" 5
expect_eq "faults: no request sent twice (Caddy saw each once)" "$(($(caddy_requests /proxy/fault/) - before))" 8

# the other streams of a multiplexed connection outlive a malformed
# response on one of them (native; on libcurl they fail with it, unless
# done before it, so there only the malformed one is asserted)
S=$(script mux_fault.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", multiplex = true, tls = { ca = "$CERTS/ca.pem" } }
function default()
  local rs = c:batch({ "$P/bytes/3000000", "$P/bytes/3000000", "$P/fault/close-body", "$P/bytes/3000000" })
  for i, r in ipairs(rs) do print("mux", i, r.status, #(r.body or "")) end
end
LUA
)
run_ll run "$S" -q -i 1 -o json="$T/mux_fault.json"
expect_eq "mux fault: exit 0" "$RC" 0
expect_eq "mux fault: the malformed response fails" "$(lines $'^mux\t3\t0\t0$')" 1
if [[ $TRANSPORT == native ]]; then
  expect_eq "mux fault: the 3 other streams of its connection complete" "$(lines $'^mux\t[124]\t200\t3000000$')" 3
  expect_eq "mux fault: one connection" "$(conns "$T/mux_fault.json")" 1
fi

finish
