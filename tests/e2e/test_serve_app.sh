#!/usr/bin/env bash
# luaload serve: the demo application. The JSON API (/api/login, its
# tokens, /api/items CRUD per owner, 400/401/404/405/413/503), the form
# login with its CSRF cookie and token (/login, /welcome) through a curl
# cookie jar, a `luaload run` of both flows with 4 VUs x 50 iterations and
# no failed check, the route counters in /stats, and a full store freed at
# exit (no leak reported under ASan).
source "$(dirname "$0")/lib.sh"
start_serve --threads 2
API=0 LOGIN=0 CREATED=0

# req COUNTER CURL-ARGS...: one request counted in COUNTER (API or LOGIN);
# sets CODE, the headers in $T/h and the body in $T/b
req() {
  local var=$1
  shift
  printf -v "$var" '%d' $((${!var} + 1))
  CODE=$(curl -s --max-time 10 -D "$T/h" -o "$T/b" -w '%{http_code}' "$@")
}
api() { req API "$@"; }
page() { req LOGIN "$@"; }
# hdr NAME: that header of the last response ("" if none)
hdr() { tr -d '\r' <"$T/h" | sed -n "s/^$1: //Ip" | head -n 1; }
body() { cat "$T/b"; }
JS=(-H 'Content-Type: application/json')

# ---- POST /api/login ----
api "${JS[@]}" -d '{"username":"alice","password":"secret"}' "$URL/api/login"
expect_eq "api login: 200" "$CODE" 200
expect_eq "api login: application/json" "$(hdr Content-Type)" application/json
TOKEN=$(jqv "$T/b" .token)
expect_eq "api login: the JSON" "$(body)" "{\"token\":\"$TOKEN\",\"username\":\"alice\"}"
expect_match "api login: token alice. and 32 hex digits" <(echo "$TOKEN") '^alice\.[0-9a-f]{32}$'
api "${JS[@]}" -d '{"password":"secret","username":"alice","extra":1}' "$URL/api/login"
expect_eq "api login: stateless, the same token again" "$(jqv "$T/b" .token)" "$TOKEN"
api "${JS[@]}" -d '{"username":"bob.b-2_X","password":"secret"}' "$URL/api/login"
BOB=$(jqv "$T/b" .token)
expect_eq "api login: another user" "$CODE $(jqv "$T/b" .username)" "200 bob.b-2_X"
api "${JS[@]}" -d '{"username":"alice","password":"Secret"}' "$URL/api/login"
expect_eq "api login, wrong password: 401 and the JSON" "$CODE $(body)" '401 {"error":"invalid credentials"}'
for bad in 'not json' '{"username":"alice","password":"secret"} x' '[1,2]' '{"password":"secret"}' \
  '{"username":"alice"}' '{"username":"al ice","password":"secret"}' '{"username":"","password":"secret"}' \
  "{\"username\":\"$(printf 'a%.0s' {1..65})\",\"password\":\"secret\"}" '{"username":7,"password":"secret"}'; do
  api "${JS[@]}" -d "$bad" "$URL/api/login"
  expect_eq "api login, 400 for $bad" "$CODE $(jq -r 'keys | join(",")' "$T/b") $(wc -l <"$T/b")" "400 error 0"
done
api "$URL/api/login"
expect_eq "api login, GET: 405 Allow: POST" "$CODE $(hdr Allow)" "405 POST"
expect_eq "api login, GET: the JSON" "$(body)" '{"error":"method not allowed"}'
api "$URL/api/nothing"
expect_eq "/api/nothing: 404 not found" "$CODE $(body)" '404 {"error":"not found"}'

# ---- /api/items ----
AUTH=(-H "Authorization: Bearer $TOKEN")
FLIP=0; [[ ${TOKEN: -1} == 0 ]] && FLIP=1 # a last digit that differs from the token's
BAUTH=(-H "Authorization: Bearer $BOB")
for h in "" "Authorization: Bearer" "Authorization: Basic $TOKEN" "Authorization: Bearer ${TOKEN%?}$FLIP" \
  "Authorization: Bearer bob.b-2_X.${TOKEN#alice.}" "Authorization: Bearer alice.${TOKEN#alice.}x"; do
  api -H "$h" "$URL/api/items"
  expect_eq "items, 401 with '$h'" "$CODE $(body)" '401 {"error":"missing or invalid token"}'
done
api -H "authorization:   bearer   $TOKEN" "$URL/api/items"
expect_eq "items: header name and scheme in any case" "$CODE $(body)" '200 {"items":[]}'

api "${AUTH[@]}" "${JS[@]}" -d '{"name":"x","price":1.5}' "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "create: 201 and the JSON" "$CODE $(body)" '201 {"id":1,"name":"x","price":1.5,"owner":"alice"}'
expect_eq "create: Location" "$(hdr Location)" /api/items/1
expect_eq "create: application/json" "$(hdr Content-Type)" application/json
api "${AUTH[@]}" "${JS[@]}" -d '{"name":"tab\tand \"quotes\" é","extra":[1]}' "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "create without price: no price key" "$CODE $(body)" \
  '201 {"id":2,"name":"tab\tand \"quotes\" é","owner":"alice"}'
api "${BAUTH[@]}" "${JS[@]}" -d '{"name":"bobs","price":-2e3}' "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "create as bob: id 3, his" "$CODE $(body)" '201 {"id":3,"name":"bobs","price":-2000,"owner":"bob.b-2_X"}'
name256=$(printf 'n%.0s' {1..256})
api "${AUTH[@]}" -H 'Transfer-Encoding: chunked' -d "{\"name\":\"$name256\",\"price\":0.1}" "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "create, chunked body, 256-byte name" "$CODE $(jqv "$T/b" '"\(.id) \(.name | length) \(.price)"')" "201 4 256 0.1"
for bad in '{}' '{"name":""}' '{"name":5}' '{"name":null}' "{\"name\":\"n$name256\"}" '{"name":"x","price":"1"}' \
  '{"name":"x","price":[1]}' '"x"' 'name=x' ''; do
  api "${AUTH[@]}" "${JS[@]}" --data-raw "$bad" "$URL/api/items"
  expect_eq "create, 400 for '$bad'" "$CODE $(jq -r 'keys | join(",")' "$T/b")" "400 error"
done
api "${AUTH[@]}" "${JS[@]}" -d '{"name":null,"price":1}' "$URL/api/items"
expect_match "create, 400: a one-line reason" "$T/b" '^\{"error":"name must be a string"\}$'
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big"
CODE=$(curl -s --max-time 10 -o "$T/b" -w '%{http_code} %{content_type}' "${AUTH[@]}" --data-binary @"$T/big" \
  "$URL/api/items")
expect_eq "create, a 70000-byte body: 413 JSON" "$CODE $(jq -r 'keys | join(",")' "$T/b")" "413 application/json error"
CODE=$(curl -s --max-time 10 -o "$T/b" -w '%{http_code}' "${AUTH[@]}" -H 'Transfer-Encoding: chunked' \
  --data-binary @"$T/big" "$URL/api/items")
expect_eq "create, a 70000-byte chunked body: 413" "$CODE" 413
head -c 65000 /dev/zero | tr '\0' ' ' >"$T/pad"
printf '{"name":"padded"}' >>"$T/pad"
api "${AUTH[@]}" --data-binary @"$T/pad" "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "create, a 65017-byte body: 201" "$CODE $(jqv "$T/b" '"\(.id) \(.name)"')" "201 5 padded"

api "${AUTH[@]}" "$URL/api/items"
expect_eq "list: 200, alice's items in id order" "$CODE $(jq -c '[.items[] | .id]' "$T/b")" "200 [1,2,4,5]"
expect_eq "list: the exact first item" "$(jq -c '.items[0]' "$T/b")" '{"id":1,"name":"x","price":1.5,"owner":"alice"}'
api "${BAUTH[@]}" "$URL/api/items"
expect_eq "list as bob: his only" "$(body)" '{"items":[{"id":3,"name":"bobs","price":-2000,"owner":"bob.b-2_X"}]}'
CODE=$(curl -s --max-time 10 -I -o /dev/null -w '%{http_code}' "${AUTH[@]}" "$URL/api/items")
API=$((API + 1))
expect_eq "HEAD list: 200" "$CODE" 200

api "${AUTH[@]}" "$URL/api/items/1"
expect_eq "get: 200 the item" "$CODE $(body)" '200 {"id":1,"name":"x","price":1.5,"owner":"alice"}'
api "${AUTH[@]}" "$URL/api/items/3"
expect_eq "get bob's item as alice: 404" "$CODE $(body)" '404 {"error":"not found"}'
for id in 0 99 abc 1/x "" 18446744073709551616; do
  api "${AUTH[@]}" "$URL/api/items/$id"
  expect_eq "get /api/items/$id: 404" "$CODE $(body)" '404 {"error":"not found"}'
done
api "${AUTH[@]}" -X PUT "${JS[@]}" -d '{"name":"x2","price":3}' "$URL/api/items/1"
expect_eq "put: 200 the updated item" "$CODE $(body)" '200 {"id":1,"name":"x2","price":3,"owner":"alice"}'
api "${AUTH[@]}" -X PUT "${JS[@]}" -d '{"name":"x3"}' "$URL/api/items/1"
expect_eq "put without price: the price is gone" "$CODE $(body)" '200 {"id":1,"name":"x3","owner":"alice"}'
api "${AUTH[@]}" "$URL/api/items/1"
expect_eq "get after put" "$(body)" '{"id":1,"name":"x3","owner":"alice"}'
api "${AUTH[@]}" -X PUT "${JS[@]}" -d '{"price":3}' "$URL/api/items/1"
expect_eq "put without name: 400" "$CODE" 400
api "${BAUTH[@]}" -X PUT "${JS[@]}" -d '{"name":"mine"}' "$URL/api/items/1"
expect_eq "put alice's item as bob: 404" "$CODE $(body)" '404 {"error":"not found"}'
api "${BAUTH[@]}" -X DELETE "$URL/api/items/1"
expect_eq "delete alice's item as bob: 404" "$CODE" 404
api -X PUT "${JS[@]}" -d '{"name":"x"}' "$URL/api/items/1"
expect_eq "put without a token: 401" "$CODE" 401
api "${AUTH[@]}" -X DELETE "$URL/api/items/1"
expect_eq "delete: 204, no body" "$CODE $(wc -c <"$T/b")" "204 0"
api "${AUTH[@]}" "$URL/api/items/1"
expect_eq "get after delete: 404" "$CODE $(body)" '404 {"error":"not found"}'
api "${AUTH[@]}" -X DELETE "$URL/api/items/1"
expect_eq "delete again: 404" "$CODE" 404
api "${AUTH[@]}" -X PATCH "$URL/api/items/2"
expect_eq "PATCH an item: 405 and Allow" "$CODE $(hdr Allow) $(body)" \
  '405 GET, HEAD, PUT, DELETE {"error":"method not allowed"}'
api "${AUTH[@]}" -X DELETE "$URL/api/items"
expect_eq "DELETE the list: 405 and Allow" "$CODE $(hdr Allow)" "405 GET, HEAD, POST"
api "${AUTH[@]}" "$URL/api/items"
expect_eq "list after the changes" "$(jq -c '[.items[] | .id]' "$T/b")" "[2,4,5]"

# ---- the form login ----
JAR=$T/jar
# csrf_of: the form's CSRF token in $T/b
csrf_of() { sed -n 's/.*<input type="hidden" name="csrf_token" value="\([0-9a-f]*\)">.*/\1/p' "$T/b"; }
nonce_of() { hdr Set-Cookie | sed -n 's/^csrf=\([0-9a-f]*\); Path=\/; HttpOnly$/\1/p'; }
page -c "$JAR" "$URL/login"
expect_eq "GET /login: 200 text/html" "$CODE $(hdr Content-Type)" "200 text/html; charset=utf-8"
expect_match "GET /login: the form" "$T/b" '<form id="login" action="/login" method="post">'
expect_match "GET /login: the username input" "$T/b" '<input name="username">'
expect_match "GET /login: the password input" "$T/b" '<input type="password" name="password">'
expect_match "GET /login: Set-Cookie csrf=<32 hex>; Path=/; HttpOnly" <(hdr Set-Cookie) \
  '^csrf=[0-9a-f]{32}; Path=/; HttpOnly$'
NONCE=$(nonce_of) CSRF=$(csrf_of)
expect_match "GET /login: a 32-hex CSRF token" <(echo "$CSRF") '^[0-9a-f]{32}$'
expect_match "the cookie jar holds csrf" "$JAR" "csrf"$'\t'"$NONCE\$"
page -c "$JAR" "$URL/login"
expect_eq "GET /login again: a fresh nonce and token" "$([[ $(nonce_of) != "$NONCE" && $(csrf_of) != "$CSRF" ]] && echo yes)" yes
NONCE2=$(nonce_of) CSRF2=$(csrf_of)

page -b "$JAR" -c "$JAR" -d "csrf_token=$CSRF2&username=alice&password=secret" "$URL/login"
expect_eq "POST /login: 303 to /welcome" "$CODE $(hdr Location)" "303 /welcome"
SESSION=$(hdr Set-Cookie | sed -n 's/^session=\([^;]*\); Path=\/; HttpOnly$/\1/p')
expect_match "POST /login: session=alice.<32 hex>" <(echo "$SESSION") '^alice\.[0-9a-f]{32}$'
page -b "$JAR" "$URL/welcome"
expect_eq "GET /welcome with the jar: 200 text/html" "$CODE $(hdr Content-Type)" "200 text/html; charset=utf-8"
expect_match "GET /welcome: the greeting" "$T/b" '<h1 id="welcome">Welcome, alice</h1>'
expect_match "GET /welcome: the items link" "$T/b" '<a class="nav" href="/api/items">items</a>'

page -b "$JAR" -d "csrf_token=$CSRF&username=alice&password=secret" "$URL/login"
expect_eq "POST /login, the token of another nonce: 403 text/html" "$CODE $(hdr Content-Type)" \
  "403 text/html; charset=utf-8"
expect_match "POST /login, 403: the error" "$T/b" '<p class="error">invalid CSRF token</p>'
for form in "username=alice&password=secret" "csrf_token=&username=alice&password=secret" \
  "csrf_token=${CSRF2}0&username=alice&password=secret" "csrf_token=${CSRF2:0:31}&username=alice&password=secret"; do
  page -b "$JAR" -d "$form" "$URL/login"
  expect_eq "POST /login, 403 for $form" "$CODE" 403
done
page -d "csrf_token=$CSRF2&username=alice&password=secret" "$URL/login"
expect_eq "POST /login without the csrf cookie: 403" "$CODE" 403
page -H "Cookie: csrf=$NONCE" -d "csrf_token=$CSRF2&username=alice&password=secret" "$URL/login"
expect_eq "POST /login, the cookie of another nonce: 403" "$CODE" 403

page -b "$JAR" -c "$JAR" -d "csrf_token=$CSRF2&username=alice&password=wrong" "$URL/login"
expect_eq "POST /login, wrong password: 401 text/html" "$CODE $(hdr Content-Type)" "401 text/html; charset=utf-8"
expect_match "POST /login, 401: the error" "$T/b" '<p class="error">invalid credentials</p>'
expect_match "POST /login, 401: the form again" "$T/b" '<form id="login" action="/login" method="post">'
NONCE3=$(nonce_of) CSRF3=$(csrf_of)
expect_eq "POST /login, 401: a fresh cookie and token" \
  "$([[ -n $NONCE3 && $NONCE3 != "$NONCE2" && -n $CSRF3 && $CSRF3 != "$CSRF2" ]] && echo yes)" yes
for form in "username=al+ice&password=secret" "username=alice&password=secret+" "password=secret" \
  "username=alice" "username=$(printf 'a%.0s' {1..65})&password=secret"; do
  page -b "$JAR" -d "csrf_token=$CSRF3&$form" "$URL/login"
  expect_eq "POST /login, 401 for $form" "$CODE" 401
done
page -H "Cookie: a=1; csrf=$NONCE3; b=\"two\"" --data-urlencode "csrf_token=$CSRF3" -d "username=b%6fb.b-2_X" \
  -d "password=s%65cre%74" "$URL/login"
expect_eq "POST /login, Cookie with other cookies, percent-encoding: 303" "$CODE" 303
expect_match "POST /login: the decoded username in the session" <(hdr Set-Cookie) '^session=bob\.b-2_X\.[0-9a-f]{32};'
CODE=$(curl -s --max-time 10 -L -b "$JAR" -c "$JAR" -o "$T/b" -w '%{http_code} %{num_redirects} %{url_effective}' \
  -d "csrf_token=$CSRF3&username=alice&password=secret" "$URL/login")
LOGIN=$((LOGIN + 2))
expect_eq "POST /login -L: 200 at /welcome after one redirect" "$CODE" "200 1 $URL/welcome"
expect_match "POST /login -L: the greeting" "$T/b" 'Welcome, alice<'

page "$URL/welcome"
expect_eq "GET /welcome without a session: 401 text/html" "$CODE $(hdr Content-Type)" "401 text/html; charset=utf-8"
for s in "${SESSION%?}x" "bob.b-2_X.${SESSION#alice.}" "alice" "$TOKEN"; do
  page -H "Cookie: x=1; session=$s" "$URL/welcome"
  expect_eq "GET /welcome, 401 for session=$s" "$CODE" 401
done
page -H "Cookie: x=1; session=$SESSION; y=2" "$URL/welcome"
expect_eq "GET /welcome, the session among other cookies: 200" "$CODE" 200
page -X PUT "$URL/login"
expect_eq "PUT /login: 405 Allow" "$CODE $(hdr Allow)" "405 GET, HEAD, POST"
page -X POST "$URL/welcome"
expect_eq "POST /welcome: 405 Allow" "$CODE $(hdr Allow)" "405 GET, HEAD"

# ---- a load test of both flows ----
S=$(script app.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local json = require("luaload.json")
local base = "$URL"
local function auth(token)
  return { headers = { Authorization = "Bearer " .. token, ["Content-Type"] = "application/json" } }
end
function setup()
  local res = http.post(base .. "/api/login", json.encode({ username = "loadtest", password = "secret" }),
                        { headers = { ["Content-Type"] = "application/json" } })
  assert(res.status == 200, "login: " .. res.status)
  return { token = res:json().token }
end
function default(data)
  local p = auth(data.token)
  local name = "item-" .. ll.vu.id .. "-" .. ll.vu.iteration
  local res = http.post(base .. "/api/items", json.encode({ name = name, price = 2.5 }), p)
  local item = res.status == 201 and res:json() or {}
  ll.check(res, {
    ["create 201"] = function(r) return r.status == 201 end,
    ["create Location"] = function(r) return r.headers["Location"] == "/api/items/" .. tostring(item.id) end,
    ["create owner"] = function() return item.owner == "loadtest" and item.name == name end,
  })
  local url = base .. "/api/items/" .. tostring(item.id)
  ll.check(http.get(url, p), { ["get 200"] = function(r) return r.status == 200 and r:json().name == name end })
  res = http.put(url, json.encode({ name = name .. "-v2" }), p)
  ll.check(res, { ["put 200"] = function(r) return r.status == 200 and r:json().name == name .. "-v2"
                                                  and r:json().price == nil end })
  ll.check(http.del(url, nil, p), { ["delete 204"] = function(r) return r.status == 204 end })

  res = http.get(base .. "/login")
  local csrf = res.body:match('name="csrf_token" value="(%x+)"')
  ll.check(res, { ["login form"] = function(r) return r.status == 200 and csrf ~= nil end })
  res = http.post(base .. "/login", { username = "vu" .. ll.vu.id, password = "secret", csrf_token = csrf })
  ll.check(res, { ["welcome"] = function(r)
    return r.status == 200 and r.url == base .. "/welcome"
      and r.body:find('<h1 id="welcome">Welcome, vu' .. ll.vu.id .. '</h1>', 1, true) ~= nil end })
end
LUA
)
run_ll run "$S" -u 4 -i 200 -q --summary-export "$T/s.json"
expect_eq "load: exit 0" "$RC" 0
[[ -s $ERR ]] && head -n 20 "$ERR"
expect_eq "load: no failed check" "$(jqv "$T/s.json" .metrics.checks.fails)" 0
expect_eq "load: every check ran" "$(jqv "$T/s.json" .metrics.checks.passes)" $((50 * 4 * 8))
expect_eq "load: no failed request" "$(jqv "$T/s.json" .metrics.http_req_failed.passes)" 0
API=$((API + 1 + 200 * 4)) LOGIN=$((LOGIN + 200 * 3)) CREATED=$((CREATED + 200))
api -H "Authorization: Bearer $(curl -s -d '{"username":"loadtest","password":"secret"}' "$URL/api/login" | jqv /dev/stdin .token)" \
  "$URL/api/items"
API=$((API + 1))
expect_eq "load: its items all deleted" "$(body)" '{"items":[]}'
api "${AUTH[@]}" "${JS[@]}" -d '{"name":"after"}' "$URL/api/items"
CREATED=$((CREATED + 1))
expect_eq "load: ids went on increasing" "$(jqv "$T/b" .id)" "$CREATED"

# ---- /stats ----
curl -s --max-time 10 -o "$T/stats.json" "$URL/stats"
expect_eq "/stats counts the API as api" "$(jqv "$T/stats.json" .routes.api)" "$API"
expect_eq "/stats counts /login and /welcome as login" "$(jqv "$T/stats.json" .routes.login)" "$LOGIN"
expect_eq "/stats counts the 413s as malformed" "$(jqv "$T/stats.json" .routes.malformed)" 2

# ---- a full store ----
api "${AUTH[@]}" "$URL/api/items"
LIVE_ALICE=$(jq '.items | length' "$T/b")
LIVE=$((LIVE_ALICE + 1)) # and bob's one
S=$(script fill.lua <<LUA
local http = require("luaload.http")
local json = require("luaload.json")
function setup()
  return { token = http.post("$URL/api/login", json.encode({ username = "filler", password = "secret" })):json().token }
end
function default(data)
  http.post("$URL/api/items", '{"name":"f"}', { headers = { Authorization = "Bearer " .. data.token } })
end
LUA
)
run_ll run "$S" -u 8 -i $((100000 - LIVE)) -q --summary-export "$T/s.json"
expect_eq "fill: exit 0" "$RC" 0
api "${AUTH[@]}" "${JS[@]}" -d '{"name":"one too many"}' "$URL/api/items"
expect_eq "a full store: 503 store full" "$CODE $(body)" '503 {"error":"store full"}'
FILLER=$(curl -s -d '{"username":"filler","password":"secret"}' "$URL/api/login" | jqv /dev/stdin .token)
api -H "Authorization: Bearer $FILLER" "$URL/api/items"
expect_eq "a full store: 100000 live items in all" "$(($(jq '.items | length' "$T/b") + LIVE))" 100000
first=$(jq '.items[0].id' "$T/b")
api -H "Authorization: Bearer $FILLER" -X DELETE "$URL/api/items/$first"
api "${AUTH[@]}" "${JS[@]}" -d '{"name":"fits again"}' "$URL/api/items"
expect_eq "after a delete, one fits again" "$CODE" 201
api "${AUTH[@]}" "${JS[@]}" -d '{"name":"full again"}' "$URL/api/items"
expect_eq "then the store is full again" "$CODE" 503

# the store is freed at exit: nothing leaks (ASan builds check)
stop_pid "$SERVE_PID"
SERVE_PID=
expect_eq "serve exits with the store full, no sanitizer report" \
  "$(grep -c 'Sanitizer\|runtime error' "$T/serve.out")" 0
finish
