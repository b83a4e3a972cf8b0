#!/usr/bin/env bash
# luaload convert, Postman: a v2.1 collection written here (folders inside
# folders, collection variables, a pre-request script, a test script that
# sets the token and the item's id, raw JSON, urlencoded and formdata
# bodies, a file field, bearer auth on a folder, basic auth, a disabled
# header and query parameter, a dynamic {{$guid}}) converted, inspected
# and run against `luaload serve`: every check passes (the API refuses a
# request without the token a test script set) and serve counts the
# headers; v2.0's auth layout; v1 and broken collections refused in one
# line with exit 104.
source "$(dirname "$0")/lib.sh"
start_serve --echo-header Authorization --echo-header X-Trace

cat >"$T/c.json" <<'JSON'
{
  "info": {"name": "Demo shop", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
  "variable": [
    {"key": "base_url", "value": "http://127.0.0.1:9"},
    {"key": "username", "value": "alice"},
    {"key": "item-name", "value": "from postman"}
  ],
  "item": [
    {"name": "Auth", "item": [
      {"name": "Log in", "event": [
         {"listen": "prerequest", "script": {"exec": ["pm.variables.set(\"started\", Date.now());"]}},
         {"listen": "test", "script": {"exec": [
            "pm.test(\"ok\", function () { pm.response.to.have.status(200); });",
            "var data = pm.response.json();",
            "pm.collectionVariables.set(\"token\", data.token);"]}}],
       "request": {"method": "POST",
         "header": [{"key": "Accept", "value": "application/json"}, {"key": "X-Off", "value": "1", "disabled": true}],
         "body": {"mode": "raw", "raw": "{\"username\": \"{{username}}\", \"password\": \"secret\"}",
                  "options": {"raw": {"language": "json"}}},
         "url": {"raw": "{{base_url}}/api/login", "host": ["{{base_url}}"], "path": ["api", "login"]}}}
    ]},
    {"name": "Items", "auth": {"type": "bearer", "bearer": [{"key": "token", "value": "{{token}}", "type": "string"}]},
     "item": [
      {"name": "Create", "event": [{"listen": "test", "script": {"exec": [
         "pm.response.to.have.status(201);", "pm.environment.set('item_id', pm.response.json().id);"]}}],
       "request": {"method": "POST", "header": [],
         "body": {"mode": "raw", "raw": "{\"name\": \"{{item-name}}\"}", "options": {"raw": {"language": "json"}}},
         "url": "{{base_url}}/api/items"}},
      {"name": "Read", "item": [
        {"name": "Get one", "request": {"method": "GET", "url": "{{base_url}}/api/items/{{item_id}}?t={{$timestamp}}"}},
        {"name": "List", "request": {"method": "GET", "url": {"raw": "{{base_url}}/api/items?off=1&on=2",
           "host": ["{{base_url}}"], "path": ["api", "items"],
           "query": [{"key": "off", "value": "1", "disabled": true}, {"key": "on", "value": "2"}]}}}
      ]}
    ]},
    {"name": "Echo form", "request": {"method": "POST",
       "auth": {"type": "basic", "basic": [{"key": "username", "value": "u"}, {"key": "password", "value": "p"}]},
       "header": [{"key": "X-Trace", "value": "{{$guid}}"}],
       "body": {"mode": "urlencoded", "urlencoded": [{"key": "who", "value": "{{username}}"}, {"key": "n", "value": "1"}]},
       "url": "{{base_url}}/echo"}},
    {"name": "Multipart", "request": {"method": "POST",
       "body": {"mode": "formdata", "formdata": [{"key": "title", "value": "hi", "type": "text"},
                                                 {"key": "photo", "type": "file", "src": "/home/me/p.png"}]},
       "url": "{{base_url}}/multipart"}}
  ]
}
JSON
run_ll convert "$T/c.json" -o "$T/c.lua"
expect_eq "convert: exit 0" "$RC" 0
S=$T/c.lua
expect_match "header: what it came from" "$S" '^-- c\.lua -- written by `luaload convert` from c\.json \(Postman collection v2\.1 "Demo shop"\): 6 requests\.$'
expect_match "vars: the environment first" "$S" '^  base_url = __ENV\.base_url or "http://127\.0\.0\.1:9",$'
expect_match "vars: a name that is no identifier" "$S" '^  \["item-name"\] = __ENV\["item-name"\] or "from postman",$'
expect_match "vars: one the collection does not define" "$S" '^  token = __ENV\.token or "", -- not in the collection'
expect_match "folders as groups" "$S" '^  ll\.group\("Items", function\(\)$'
expect_match "nested" "$S" '^    ll\.group\("Read", function\(\)$'
expect_match "the pre-request script as a comment" "$S" '^      -- pm\.variables\.set\("started", Date\.now\(\)\);$'
expect_match "{{var}} in a raw body" "$S" '"\{\\"username\\": \\"" \.\. vars\.username \.\. "\\", \\"password\\": \\"secret\\"\}"'
expect_match "the test's set() as Lua" "$S" '^    vars\.token = res:json\("token"\) -- the test script.s pm\.collectionVariables\.set'
expect_match "the folder's bearer auth" "$S" '^        Authorization = "Bearer " \.\. vars\.token,$'
expect_match "the status a test expects" "$S" '\["Create: status is 201"\] = function\(r\) return r\.status == 201 end'
expect_match "a disabled query parameter left out" "$S" 'http\.get\(vars\.base_url \.\. "/api/items\?on=2", \{'
expect_eq "a disabled header left out" "$(grep -c 'X-Off' "$S")" 0
expect_match "basic auth" "$S" '^      Authorization = "Basic dTpw",$'
expect_match "{{\$guid}}" "$S" '^      \["X-Trace"\] = utils\.uuidv4\(\),$'
expect_match "urlencoded: a table" "$S" '^    who = vars\.username,$'
expect_match "formdata: http.Form" "$S" 'http\.post\(vars\.base_url \.\. "/multipart", http\.Form\{$'
expect_match "a file field: a comment" "$S" '^  -- file field photo: /home/me/p\.png in Postman'
run_ll inspect "$S"
expect_eq "inspect: exit 0" "$RC" 0

run_ll run -e base_url="$URL" --vus 2 --iterations 4 --summary-export "$T/s.json" "$S"
expect_eq "run: exit 0 (every check passed)" "$RC" 0
expect_eq "run: 4 iterations x 6 checks" "$(passes checks) $(cnt iterations)" "24 4"
expect_eq "run: no failed request" "$(rate http_req_failed)" 0
HDRS=$(curl -s "$URL/stats" | jq -c '[.headers.authorization.requests, .headers.authorization.distinct, .headers["x-trace"].requests, .headers["x-trace"].distinct]')
# Authorization: 3 bearer requests (the token set by the test) + 1 basic, per iteration
expect_eq "serve got the token and the basic auth, and a new guid each time" "$HDRS" "[16,2,4,4]"

# ---- v2.0: auth as an object ----
jq '.info.schema = "https://schema.getpostman.com/json/collection/v2.0.0/collection.json"
    | .item[1].auth = {type: "bearer", bearer: {token: "{{token}}"}}
    | .item[2].request.auth = {type: "basic", basic: {username: "{{username}}", password: "p"}}' "$T/c.json" >"$T/c20.json"
run_ll convert "$T/c20.json"
expect_eq "v2.0: exit 0" "$RC" 0
expect_match "v2.0: bearer" "$OUT" '^        Authorization = "Bearer " \.\. vars\.token,$'
expect_match "v2.0: basic with a variable, encoded at run time" "$OUT" \
  '^      Authorization = "Basic " \.\. encoding\.b64encode\(vars\.username \.\. ":p"\),$'
expect_match "... with luaload.encoding" "$OUT" '^local encoding = require\("luaload\.encoding"\)$'
cp "$OUT" "$T/c20.lua"
run_ll inspect "$T/c20.lua"
expect_eq "v2.0: inspect: exit 0" "$RC" 0

# ---- bad input ----
bad() { # NAME FILE-CONTENT WANT
  printf '%s' "$2" >"$T/bad.json"
  run_ll convert "$T/bad.json"
  expect_eq "$1" "$RC $(cat "$ERR")" "104 luaload: convert: $T/bad.json$3"
}
V21='"info": {"name": "x", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"}'
bad "v1" '{"id": "1", "name": "old", "order": [], "requests": []}' \
  ': Postman collection v1 is not supported (v2.1 and v2.0 are: export it again from Postman as v2.1)'
bad "an unknown schema" '{"info": {"schema": "https://example.com/v9"}, "item": []}' \
  ": info.schema: not a Postman collection schema I know ('https://example.com/v9'; v2.1 and v2.0 are supported)"
bad "a request without a url" "{$V21, \"item\": [{\"name\": \"f\", \"item\": [{\"request\": {\"method\": \"GET\"}}]}]}" \
  ': item[0].item[0].request: no url'
bad "an item that is neither" "{$V21, \"item\": [{\"name\": \"f\"}]}" ': item[0]: neither a request nor a folder (no request, no item)'
bad "no request at all" "{$V21, \"item\": []}" ': item: no request to convert'
bad "truncated" "{$V21, \"item\": [{\"name\": " ':1:125: the JSON ends too soon (truncated?)'
finish
