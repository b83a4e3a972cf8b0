#!/usr/bin/env bash
# test_redirects.sh -- k6's HTTP semantics against a real nginx
# (tests/e2e/servers.sh): each redirect hop is its own sample with its own
# url and status tags, the limits return the last 3xx, methods and bodies
# follow Go's rules; the VU's cookie jar (Set-Cookie on every hop, emptied
# at each iteration, http.cookie_jar(), res.cookies, explicit cookies);
# http.batch.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
start_nginx || exit 1
H=http://127.0.0.1:$NGINX_HTTP_PORT

m() { jqv "$T/s.json" ".metrics[\"$1\"].$2 // 0"; }

# ---- each hop a sample; res.url the final URL ----
f=$(script hops.lua <<EOF
local http = require("luaload.http")
options = { thresholds = {
  ["http_reqs{status:302}"] = { "count>0" }, ["http_reqs{status:200}"] = { "count>0" },
  ["http_reqs{url:$H/redirect/3}"] = { "count>0" }, ["http_reqs{url:$H/redirect/1}"] = { "count>0" },
  ["http_reqs{url:$H/echo}"] = { "count>0" } } }
function default()
  local r = http.get("$H/redirect/3")
  if r.status ~= 200 or r.url ~= "$H/echo" then print("BAD", r.status, tostring(r.url)) end
  if not r.body:find("cookie=hop3=yes; hop2=yes; hop1=yes", 1, true) then print("BAD cookies", r.body) end
end
EOF
)
run_ll run "$f" -u 2 -i 10 -q --summary-export "$T/s.json"
expect_eq "hops: exit 0" "$RC" 0
expect_eq "hops: 200 at the final URL with the three hops' cookies" "$(grep -c '^BAD' "$OUT")" 0
expect_eq "hops: 4 samples per chain" "$(m http_reqs count)" 40
expect_eq "hops: 30 with status 302" "$(m "http_reqs{status:302}" count)" 30
expect_eq "hops: 10 with status 200" "$(m "http_reqs{status:200}" count)" 10
expect_eq "hops: the first hop's url tag" "$(m "http_reqs{url:$H/redirect/3}" count)" 10
expect_eq "hops: the third hop's url tag" "$(m "http_reqs{url:$H/redirect/1}" count)" 10
expect_eq "hops: the final url tag" "$(m "http_reqs{url:$H/echo}" count)" 10

# ---- the same over HTTP/2 (h2c): the native transport notes Set-Cookie in
# its header callback, and the jar takes each hop's ----
f=$(script hops2.lua <<EOF
local http = require("luaload.http")
local c = http.Client{ http_version = "2" }
function default()
  local r = c:get("http://127.0.0.1:$NGINX_H2C_PORT/redirect/3")
  print("h2", r.status, r.proto, r.body:match("cookie=[^ ]*; [^ ]*; [^ ]*"))
  r = c:get("http://127.0.0.1:$NGINX_H2C_PORT/set-cookie")
  print("h2 set", r.status, http.cookieJar():cookiesForURL("http://127.0.0.1:$NGINX_H2C_PORT/echo").b[1])
end
EOF
)
run_ll run "$f" -i 1 -q --no-summary
expect_eq "h2 hops: exit 0" "$RC" 0
expect_match "h2 hops: the three hops' cookies sent" "$OUT" $'^h2\t200\tHTTP/2.0\tcookie=hop3=yes; hop2=yes; hop1=yes$'
expect_match "h2: a response's Set-Cookie in the jar" "$OUT" $'^h2 set\t200\t2$'

# ---- limits: Client, request, options.maxRedirects; the last 3xx comes back ----
f=$(script limits.lua <<EOF
local http = require("luaload.http")
local one = http.Client{ max_redirects = 1 }
local none = http.Client{ max_redirects = 0 }
function default()
  local r = one:get("$H/redirect/3")
  print("client1", r.status, r.url, r.error_code)
  r = none:get("$H/redirect/3")
  print("client0", r.status, r.url)
  r = http.get("$H/redirect/3", { redirects = 2 })
  print("request2", r.status, r.url)
  r = one:get("$H/redirect/3", { redirects = 3 })
  print("request wins", r.status, r.url)
  r = http.get("$H/loop")
  print("loop", r.status, r.error_code)
  r = http.get("$H/redirect/abs")
  print("absolute", r.status, r.url)
end
EOF
)
run_ll run "$f" -i 1 -q --summary-export "$T/s.json"
expect_eq "limits: exit 0" "$RC" 0
expect_match "max_redirects = 1: the second 302" "$OUT" $'^client1\t302\t'"$H"$'/redirect/2\t0$'
expect_match "max_redirects = 0: the first 302" "$OUT" $'^client0\t302\t'"$H/redirect/3\$"
expect_match "redirects = 2 in params" "$OUT" $'^request2\t302\t'"$H/redirect/1\$"
expect_match "the request's redirects win over the Client's" "$OUT" $'^request wins\t200\t'"$H/echo\$"
expect_match "a loop stops after k6's 10 redirects with the 302, no error" "$OUT" $'^loop\t302\t0$'
expect_match "an absolute Location" "$OUT" $'^absolute\t200\t'"$H/echo\$"
# 2 + 1 + 3 + 4 + 11 + 2 samples
expect_eq "limits: one sample per hop" "$(m http_reqs count)" 23
expect_eq "limits: a 3xx is not a failure" "$(m http_req_failed passes)" 0

f=$(script maxopt.lua <<EOF
local http = require("luaload.http")
options = { maxRedirects = 1 }
function default()
  local r = http.get("$H/redirect/3")
  print("option", r.status, r.url)
end
EOF
)
run_ll run "$f" -i 1 -q
expect_match "options.maxRedirects = 1" "$OUT" $'^option\t302\t'"$H/redirect/2\$"

# ---- methods and bodies across 301/302/303 and 307/308 ----
f=$(script methods.lua <<EOF
local http = require("luaload.http")
function default()
  for _, s in ipairs({ "301", "302", "303", "307", "308" }) do
    local r = http.post("$H/r" .. s, "abcde", { headers = { ["Content-Type"] = "text/plain" } })
    print(s, r.status, r.body:match("method=%S+ len=%S*"))
  end
  local r = http.head("$H/r302")
  print("head", r.status)
end
EOF
)
run_ll run "$f" -i 1 -q
for s in 301 302 303; do expect_match "$s: POST becomes GET without the body" "$OUT" "^$s"$'\t200\tmethod=GET len=$'; done
for s in 307 308; do expect_match "$s: POST stays POST with its body" "$OUT" "^$s"$'\t200\tmethod=POST len=5$'; done
expect_match "HEAD stays HEAD" "$OUT" $'^head\t200$'

# ---- the cookie jar ----
f=$(script jar.lua <<EOF
local http = require("luaload.http")
local ll = require("luaload")
function default()
  local first = http.get("$H/echo").body:match("cookie=(%S*)")
  print("iteration start", ll.vu.iteration, "[" .. first .. "]")
  local r = http.get("$H/set-cookie")
  print("res.cookies", r.cookies.a[1].value, r.cookies.a[1].path, tostring(r.cookies.b[1].http_only), r.cookies.b[1].path)
  print("sent", http.get("$H/echo").body:match("cookie=([^\n]-) ua="))
  print("path", http.get("$H/").status, http.get("$H/status/200").status)
  local jar = http.cookie_jar()
  jar:set("$H/", "manual", "m1")
  local c = jar:cookies_for_url("$H/echo")
  print("for url", c.a[1], c.b[1], c.manual[1])
  c = jar:cookies_for_url("$H/other")
  print("other path", c.a[1], tostring(c.b))
  print("merged", http.get("$H/echo", { cookies = { explicit = "e1" } }).body:match("cookie=([^ ]*[^\n]-) ua="))
  print("replaced", http.get("$H/echo", { cookies = { a = { value = "mine", replace = true } } }).body:match("cookie=([^\n]-) ua="))
  jar:delete("$H/", "a")
  print("deleted", http.get("$H/echo").body:match("cookie=([^\n]-) ua="))
  jar:clear("$H/echo")
  print("cleared", "[" .. http.get("$H/echo").body:match("cookie=(%S*)") .. "]")
end
EOF
)
run_ll run "$f" -u 1 -i 2 -q
expect_eq "jar: exit 0" "$RC" 0
expect_match "the jar is empty at the first iteration" "$OUT" $'^iteration start\t0\t\\[\\]$'
expect_match "the jar is emptied at the next iteration" "$OUT" $'^iteration start\t1\t\\[\\]$'
expect_match "res.cookies: name, value, path, http_only" "$OUT" $'^res.cookies\t1\t/\ttrue\t/echo$'
expect_match "the jar's cookies go back, the longer path first" "$OUT" $'^sent\tb=2; a=1$'
expect_match "cookies_for_url" "$OUT" $'^for url\t1\t2\tm1$'
expect_match "cookies_for_url honours the path" "$OUT" $'^other path\t1\tnil$'
expect_match "explicit cookies merged with the jar's" "$OUT" $'^merged\texplicit=e1; '
expect_match "an explicit cookie with replace = true keeps the jar's out" "$OUT" $'^replaced\ta=mine; b=2; manual=m1$'
expect_match "delete(url, name)" "$OUT" $'^deleted\tb=2; manual=m1$'
expect_match "clear(url)" "$OUT" $'^cleared\t\\[\\]$'

# ---- http.batch ----
f=$(script batch.lua <<EOF
local http = require("luaload.http")
options = { batch = 2, batchPerHost = 1,
  thresholds = { ["http_reqs{status:404}"] = { "count>0" }, ["http_reqs{status:302}"] = { "count>0" } } }
local req = http.Request("$H/echo", { method = "PUT", body = "xyz" })
function default()
  local rs = http.batch({
    "$H/",
    { "POST", "$H/echo", "abc" },
    { method = "GET", url = "$H/status/404" },
    req,
    "$H/redirect/3",
    { "GET", "$H/echo", nil, { headers = { ["X-A"] = "1" }, tags = { name = "tagged" } } },
  })
  local out = {}
  for i, r in ipairs(rs) do out[#out + 1] = r.status end
  print("list", #rs, table.concat(out, ","), rs[2].body:match("method=%S+ len=%S*"), rs[4].body:match("method=%S+ len=%S*"))
  local t = http.batch({ home = "$H/", missing = "$H/status/404" })
  print("table", t.home.status, t.missing.status)
end
EOF
)
run_ll run "$f" -u 2 -i 4 -q --summary-export "$T/s.json"
expect_eq "batch: exit 0" "$RC" 0
expect_match "batch: responses in order" "$OUT" $'^list\t6\t200,200,404,200,200,200\tmethod=POST len=3\tmethod=PUT len=3$'
expect_match "batch: a table keeps its keys" "$OUT" $'^table\t200\t404$'
# per iteration: 6 + 3 hops + 2
expect_eq "batch: each request (and hop) is a sample" "$(m http_reqs count)" 44
expect_eq "batch: 404s counted" "$(m "http_reqs{status:404}" count)" 8
expect_eq "batch: redirect hops counted" "$(m "http_reqs{status:302}" count)" 12

f=$(script badbatch.lua <<EOF
local http = require("luaload.http")
function default() http.batch({ "$H/", 42 }) end
EOF
)
run_ll run "$f" -i 1 -q
expect_match "batch: a bad element names its place and the script line" "$ERR" 'badbatch.lua:2: http.batch: request 2 must be a URL'

finish
