#!/usr/bin/env bash
# luaload convert, HAR: a real browser session (headless chromium over its
# DevTools protocol, helpers/record_har.py) against one `luaload serve`,
# converted, inspected, and run against ANOTHER serve: its key differs, so
# the API token and the CSRF token recorded are worthless there, and every
# check passes only if the script took them from the responses
# (correlation). Then a small HAR written here for what a browser session
# does not show (a binary body, multipart, a JSON body with an empty list,
# HTTP/2 pseudo-headers, other hosts, a WebSocket), the flags, and bad
# input with its one-line message and exit code 104.
source "$(dirname "$0")/lib.sh"
HELPERS=$(dirname "$0")/helpers
CHROMIUM=$(command -v chromium || command -v chromium-browser)
[[ -n $CHROMIUM ]] || { not_ok "chromium is installed (scripts/setup.sh)"; finish; exit; }

# ---- record: a page load, a form post and XHRs, in a real browser ----
start_serve
RECORDED_ON=$URL
if timeout -k 5 90 /usr/bin/python3 "$HELPERS/record_har.py" "$CHROMIUM" "$URL" "$T/s.har" 2>"$T/rec.err"; then
  ok "chromium recorded a session"
else
  not_ok "chromium recorded a session" "$(tail -5 "$T/rec.err")"
  finish
  exit
fi
RECORDED_TOKEN=$(cat "$T/s.har.token")
expect_eq "the HAR: 8 entries (two favicons), 3 pages" \
  "$(jq '.log.entries | length' "$T/s.har") $(jq '.log.pages | length' "$T/s.har")" "8 2"
stop_pid "$SERVE_PID"
SERVE_PID=

# ---- convert ----
run_ll convert "$T/s.har" -o "$T/s.lua" --skip-static
expect_eq "convert: exit 0" "$RC" 0
expect_eq "convert: says what it wrote" "$(cat "$ERR")" "wrote $T/s.lua"
S=$T/s.lua
expect_match "header: what it came from" "$S" '^-- s\.lua -- written by `luaload convert` from s\.har \(HAR 1\.2\):$'
expect_match "header: the favicons left out" "$S" '^-- \(2 static left out: --skip-static\)\.$'
expect_match "header: what to check" "$S" '^-- Check before running it:$'
expect_match "base from BASE_URL" "$S" "^local base = ll.env.BASE_URL or \"$RECORDED_ON\"\$"
expect_match "a group per page, named by its title" "$S" '^  ll\.group\("Log in - luaload demo", function\(\)$'
expect_match "the redirect's page" "$S" '^  ll\.group\("Welcome - luaload demo", function\(\)$'
expect_match "csrf token from the page's input" "$S" '^    csrf_token = doc:find\("input\[name=\\"csrf_token\\"\]"\):attr\("value"\)$'
expect_match "... sent in the form, a table" "$S" '^      csrf_token = csrf_token,$'
expect_match "api token from the JSON" "$S" '^    token = res:json\("token"\)$'
expect_match "... sent in Authorization" "$S" '^        Authorization = "Bearer " \.\. token,$'
expect_match "item id from the JSON, in the URL" "$S" '^    res = http\.get\(base \.\. "/api/items/" \.\. id, \{$'
expect_match "the comment says where a value came from" "$S" '^    -- token: from the response to POST /api/login above \(recorded '
expect_match "JSON body as a table" "$S" 'json\.encode\(\{ username = "alice", password = "secret" \}\)'
expect_match "the POST that redirected: checks the final status" "$S" '\["POST /login: status is 200"\]'
expect_eq "a status check per request" "$(grep -c '^    ll.check(res, ' "$S")" 5
expect_match "think time from the recorded gaps" "$S" '^  ll\.sleep\([0-9.]+\)$'
if grep -Eiq '^ *(\["?)?(cookie|host|content-length|connection|sec-ch-ua|sec-fetch-[a-z]+)("\])? =' "$S"; then
  not_ok "no Cookie, Host, Content-Length, hop-by-hop or client-hint headers" "$(grep -Ei 'cookie|host|sec-' "$S")"
else
  ok "no Cookie, Host, Content-Length, hop-by-hop or client-hint headers"
fi
expect_eq "GET /welcome is not sent twice (the redirect is followed)" "$(grep -c 'http.get(base .. "/welcome"' "$S")" 0
run_ll inspect "$S"
expect_eq "inspect: exit 0" "$RC" 0

# ---- run it against another serve: recorded tokens are worthless there ----
start_serve --echo-header Authorization
run_ll run -e BASE_URL="$URL" --vus 2 --iterations 4 --summary-export "$T/sum.json" "$S"
expect_eq "run: exit 0 (every check passed)" "$RC" 0
cp "$T/sum.json" "$T/s.json"
expect_eq "run: 4 iterations x 5 checks, all passed" "$(passes checks) $(cnt iterations)" "20 4"
expect_eq "run: no failed request" "$(rate http_req_failed)" 0
expect_eq "serve got the extracted token: 8 requests, 1 value" \
  "$(curl -s "$URL/stats" | jq -c '.headers.authorization | [.requests, .distinct]')" "[8,1]"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $RECORDED_TOKEN" "$URL/api/items")
expect_eq "the recorded token is refused by the new serve" "$CODE" 401

# ---- flags ----
run_ll convert "$T/s.har" --no-think-time
expect_eq "--no-think-time: no sleep" "$(grep -c 'll.sleep' "$OUT")" 0
expect_match "without --skip-static: the favicons" "$OUT" 'GET /favicon\.ico: status is 200'
run_ll convert "$T/s.har" --only-domains example.com
expect_eq "--only-domains with no request left: 104" "$RC" 104
expect_eq "... and says so" "$(cat "$ERR")" \
  "luaload: convert: $T/s.har: log.entries: no HTTP request to convert (after the filters)"

# ---- what a browser session did not show ----
BIN=$(head -c 300 /dev/urandom | base64 -w0)
head -c 0 /dev/null >"$T/x"
B=----formboundary7
MP=$(printf -- '--%s\r\nContent-Disposition: form-data; name="title"\r\n\r\nhello\r\n--%s\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nsome text\r\n--%s--\r\n' $B $B $B)
jq -n --arg url "$URL" --arg bin "$BIN" --arg mp "$MP" --arg b "$B" '{log: {version: "1.2", creator: {name: "test"}, entries: [
  {startedDateTime: "2026-01-02T03:04:05.000+01:00", time: 10, request: {method: "POST", url: ($url + "/sha256"),
    headers: [{name: ":authority", value: "x"}, {name: "Cookie", value: "a=b"}, {name: "Host", value: "x"},
              {name: "content-type", value: "application/octet-stream"}, {name: "X-Keep", value: "1"}],
    postData: {mimeType: "application/octet-stream", text: $bin, encoding: "base64"}}, response: {status: 200}},
  {startedDateTime: "2026-01-02T02:04:07.500Z", time: 10, request: {method: "POST", url: ($url + "/multipart"),
    headers: [{name: "Content-Type", value: ("multipart/form-data; boundary=" + $b)}],
    postData: {mimeType: ("multipart/form-data; boundary=" + $b), text: $mp}}, response: {status: 200}},
  {startedDateTime: "2026-01-02T02:04:07.600Z", time: 10, request: {method: "PUT", url: ($url + "/echo"), headers: [],
    postData: {mimeType: "application/json", text: "{\"tags\":[],\"n\":1}"}}, response: {status: 200}},
  {startedDateTime: "2026-01-02T02:04:07.700Z", time: 10, request: {method: "GET", url: "http://other.invalid/x", headers: []},
    response: {status: 200}},
  {startedDateTime: "2026-01-02T02:04:07.800Z", time: 10, request: {method: "GET", url: "ws://127.0.0.1:1/ws", headers: []},
    response: {status: 101}}]}}' >"$T/m.har"
run_ll convert "$T/m.har" -o "$T/out/m.lua" --only-domains 127.0.0.1
expect_eq "convert to a missing folder: 1 (cannot write)" "$RC" 1
mkdir "$T/out"
run_ll convert "$T/m.har" -o "$T/out/m.lua" --only-domains 127.0.0.1
expect_eq "convert: exit 0" "$RC" 0
M=$T/out/m.lua
expect_match "binary body: read beside the script in init code" "$M" '^local body_0 = ll\.open\("body-0\.bin", "b"\) -- recorded, 300 bytes$'
if cmp -s "$T/out/body-0.bin" <(echo "$BIN" | base64 -d); then ok "binary body: the file holds the bytes"
else not_ok "binary body: the file holds the bytes"; fi
expect_eq "pseudo-headers, Cookie, Host dropped; X-Keep kept" "$(grep -ciE '^ +(\[")?(:authority|cookie|host|X-Keep)("\])? = ' "$M")" 1
expect_match "multipart: http.Form" "$M" '^  res = http\.post\(base \.\. "/multipart", http\.Form\{$'
expect_match "multipart: the file part" "$M" 'doc = http\.file\("some text", "a\.txt", "text/plain"\),'
expect_eq "multipart: no recorded boundary" "$(grep -c 'formboundary7' "$M")" 0
expect_match "JSON with an empty list: the recorded string" "$M" 'http\.put\(base \.\. "/echo", "\{\\"tags\\":\[\],\\"n\\":1\}"\)'
expect_match "offset times: the 1.5 s gap" "$M" '^  ll\.sleep\(2\.5\)$'
expect_match "other hosts and WebSockets left out, counted" "$M" '\(1 to other hosts left out: --only-domains\)'
run_ll run "$M"
expect_eq "run: exit 0" "$RC" 0

# ---- correlation: only values a response gave first ----
jq -n '{log: {version: "1.2", entries: [
  {request: {method: "POST", url: "http://127.0.0.1:1/login", headers: [],
    postData: {mimeType: "application/json", text: "{\"user\":\"alice-the-user\"}"}},
   response: {status: 200, content: {mimeType: "application/json",
     text: "{\"user\":\"alice-the-user\",\"session\":{\"key\":\"k-1234567890\"},\"kind\":\"application/json\"}"}}},
  {request: {method: "GET", url: "http://127.0.0.1:1/me?u=alice-the-user&k=k-1234567890x", headers: [
     {name: "Accept", value: "application/json"}, {name: "X-Key", value: "k-1234567890"}]},
   response: {status: 200}}]}}' >"$T/c.har"
run_ll convert "$T/c.har"
expect_match "a response value sent back: taken from the response" "$OUT" '^  key = res:json\("session\.key"\)$'
expect_match "... and sent" "$OUT" '^      \["X-Key"\] = key,$'
expect_match "the client's own value, echoed by a response, stays as typed" "$OUT" \
  '^  res = http\.get\(base \.\. "/me\?u=alice-the-user&k=k-1234567890x", \{$'
expect_match "a common value a response happened to hold stays as it is" "$OUT" '^      Accept = "application/json",$'

# ---- many values from responses: one table (a group's closure holds at most 60 upvalues) ----
/usr/bin/python3 - "$T/many.har" <<'PY'
import json, sys
vals = {f"id{j}_id": f"v{j}x{j * 7919}" for j in range(70)}
json.dump({"log": {"version": "1.2", "pages": [{"id": "p", "title": "many"}], "entries": [
    {"pageref": "p", "request": {"method": "GET", "url": "http://127.0.0.1:1/a", "headers": []},
     "response": {"status": 200, "content": {"mimeType": "application/json", "text": json.dumps(vals)}}},
    {"pageref": "p", "request": {"method": "GET", "url": "http://127.0.0.1:1/b?" + "&".join(f"{k}={v}" for k, v in vals.items()),
                                 "headers": []}, "response": {"status": 200}}]}}, open(sys.argv[1], "w"))
PY
run_ll convert "$T/many.har" -o "$T/many.lua"
expect_match "70 values: fields of one table" "$T/many.lua" '^  local v = \{\} -- values from responses$'
expect_match "... taken as fields" "$T/many.lua" '^    v\.id69_id = res:json\("id69_id"\)$'
run_ll inspect "$T/many.lua"
expect_eq "... and the script loads (no upvalue limit hit)" "$RC $(head -c 300 "$ERR")" "0 "

# ---- a large recording converts in bounded time (no quadratic scans) ----
/usr/bin/python3 - "$T/big.har" <<'PY'
import json, random, string, sys
random.seed(1)
rs = lambda n: ''.join(random.choice(string.ascii_letters + string.digits) for _ in range(n))
entries = [{"startedDateTime": "2026-01-01T00:%02d:%02d.000Z" % (i // 60, i % 60), "time": 5,
            "request": {"method": "POST", "url": f"http://127.0.0.1:1/x/{i}", "headers": [{"name": "X-A", "value": rs(30)}],
                        "postData": {"mimeType": "application/json", "text": json.dumps({f"f{j}": rs(20) for j in range(80)})}},
            "response": {"status": 200, "content": {"mimeType": "application/json",
                                                     "text": json.dumps({**{f"k{j}": rs(12) for j in range(100)}, "id": i + 1000})}}}
           for i in range(300)]
json.dump({"log": {"version": "1.2", "entries": entries}}, open(sys.argv[1], "w"))
PY
run_ll convert "$T/big.har" -o "$T/big.lua"
expect_eq "a 1.7 MB HAR of 300 entries: exit 0" "$RC" 0
expect_cmp "... in under 5 s (was 9 s with a scan per value)" "x < 5" "$ELAPSED"

# ---- bad input: one line naming the file and where, exit 104 ----
bad() { # NAME FILE-CONTENT WANT
  printf '%s' "$2" >"$T/bad.har"
  run_ll convert "$T/bad.har"
  expect_eq "$1" "$RC $(cat "$ERR")" "104 luaload: convert: $T/bad.har$3"
}
bad "truncated JSON" '{"log": {"version": "1.2",
  "entries": [{"request": {"url": "http://a' ':2:44: the JSON ends too soon (truncated?)'
bad "invalid JSON" '{"log": {"entries": [1,,2]}}' ':1:24: invalid JSON'
bad "HAR 2.0" '{"log": {"version": "2.0", "entries": []}}' ': log.version: HAR 2.0 is not supported (1.1 and 1.2 are)'
bad "an entry without a url" '{"log": {"entries": [{"request": {"method": "GET", "url": "http://a/"}}, {"request": {"method": "GET"}}]}}' \
  ': log.entries[1].request: no url'
bad "an entry without a request" '{"log": {"entries": [{}]}}' ': log.entries[0]: no request'
bad "entries not a list" '{"log": {"entries": {}}}' ': log.entries: not a list'
bad "not a HAR" '{"x": 1}' ': not a HAR file (log.entries), an OpenAPI or Swagger description (openapi, swagger) or a Postman collection (info.schema, item)'
bad "an empty file" '' ': the file is empty'
run_ll convert "$T/nope.har"
expect_eq "a missing file" "$RC $(cat "$ERR")" "104 luaload: convert: $T/nope.har: cannot read: No such file or directory"
run_ll convert "$T/s.har" -o "$S"
expect_eq "an existing output without --force" "$RC $(cat "$ERR")" "104 luaload: convert: $S exists (--force to overwrite it)"
finish
