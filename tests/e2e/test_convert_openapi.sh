#!/usr/bin/env bash
# test_convert_openapi.sh -- `luaload convert` on OpenAPI 3.0/3.1 and
# Swagger 2.0 descriptions: the petstores and the rest of
# @readme/oas-examples (descriptions nobody here wrote, pinned in
# tests/e2e/openapi/package.json, installed by scripts/setup.sh) convert,
# pass `luaload inspect`, and run against helpers/openapi_server.py, which
# reads the same description on its own and logs what it received: each
# operation called once per iteration, path parameters substituted,
# required query and header parameters sent, JSON bodies that parse. Also
# --tags, --base-url, BASE_URL, server variables, YAML anchors, a run
# against `luaload serve`'s demo API, and the bad-input messages (exit 104).
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
EX=$HERE/openapi/node_modules/@readme/oas-examples
SRV=$HERE/helpers/openapi_server.py

if [[ ! -d $EX/3.0 ]]; then
  not_ok "tests/e2e/openapi/node_modules missing (scripts/setup.sh installs @readme/oas-examples)"
  finish
  exit 1
fi

# serve_spec SPEC PREFIX: starts openapi_server.py for SPEC; sets SP (port)
# and SLOG (its log)
serve_spec() {
  SLOG=$T/srv.$RANDOM.log
  /usr/bin/python3 "$SRV" serve "$1" "$2" "$SLOG" >"$T/srv.port" &
  SRV_PID=$!
  EXTRA_PIDS+=($SRV_PID)
  : >"$SLOG"
  for _ in $(seq 50); do [[ -s $T/srv.port ]] && break; sleep 0.1; done
  SP=$(cat "$T/srv.port")
  rm -f "$T/srv.port"
}

# ---- the petstores: convert, inspect, run twice, every operation called twice as described ----
for spec in 3.0/yaml/petstore.yaml 3.1/yaml/petstore.yaml 2.0/json/petstore.json 3.1/yaml/train-travel.yaml \
  3.0/yaml/form-data.yaml 3.0/yaml/file-uploads.yaml 3.0/yaml/security.yaml 3.0/yaml/parameters-common.yaml \
  3.0/yaml/request-examples.yaml; do
  serve_spec "$EX/$spec" /v2
  run_ll convert "$EX/$spec" --base-url "http://127.0.0.1:$SP/v2/" -f -o "$T/s.lua"
  expect_eq "$spec: converted" "$RC" 0
  run_ll inspect "$T/s.lua"
  expect_eq "$spec: inspect" "$RC" 0
  run_ll run -q -i 2 --summary-export "$T/s.json" "$T/s.lua"
  expect_eq "$spec: runs" "$RC" 0
  expect_eq "$spec: every check passed" "$(passes checks) $(jqv "$T/s.json" '.metrics.checks.fails')" \
    "$(($(grep -c '^function api\.' "$T/s.lua") * 2)) 0"
  if /usr/bin/python3 "$SRV" check "$EX/$spec" "$SLOG" 2 >"$T/check.txt"; then
    ok "$spec: each operation called twice, as described"
  else
    not_ok "$spec: the server saw" "$(head -5 "$T/check.txt")"
  fi
  stop_pid "$SRV_PID"
done

# what the petstore's script holds, line by line
run_ll convert "$EX/3.0/yaml/petstore.yaml"
expect_match "header names the API" "$OUT" '^-- Swagger Petstore 1\.0\.0: a test written by `luaload convert` from petstore\.yaml \(OpenAPI 3\.0\.0\)'
expect_match "default base: the first server" "$OUT" '^local base = __ENV\.BASE_URL or "http://petstore\.swagger\.io/v2"$'
expect_match "a function per operationId" "$OUT" '^function api\.getPetById\(\)$'
expect_match "path parameter into the URL" "$OUT" 'http\.get\(base \.\. "/pet/" \.\. enc\(petId\), \{'
expect_match "placeholder marked" "$OUT" '^  local petId = 1 -- path, required; placeholder: integer \(int64\)$'
expect_match "enum's first value, exploded list" "$OUT" '^  local status = \{ "available" \} -- query, required$'
expect_match "OAuth 2 as a bearer token from __ENV" "$OUT" 'petstore_auth = __ENV\.PETSTORE_AUTH_TOKEN or ""'
expect_match "API key header" "$OUT" '^      api_key = auth\.api_key,$'
expect_match "multipart as http.Form" "$OUT" 'file = http\.file\("example", "file\.bin", "application/octet-stream"\)'
expect_match "form-urlencoded as a table" "$OUT" '^  local body = \{ name = "string", status = "string" \}$'
expect_match "lowest 2xx checked" "$OUT" '"loginUser: status 200", function\(r\) return r\.status == 200 end'
expect_match "no success documented: any 2xx" "$OUT" '"addPet: status 2xx", function\(r\) return r\.status >= 200 and r\.status < 300 end'
expect_eq "default() calls each in order" "$(sed -n '/^function default/,/^end/p' "$OUT" | sed -n '2p;$p' | tr '\n' ' ')" "  api.addPet() end "
expect_eq "default() calls all 20" "$(sed -n '/^function default/,/^end/p' "$OUT" | grep -c '^  api\.')" 20

# Swagger 2.0: schemes, host, basePath; BASE_URL from the environment instead
run_ll convert "$EX/2.0/json/petstore.json" -o "$T/sw.lua"
expect_match "swagger base: schemes[0]://host/basePath" "$T/sw.lua" '^local base = __ENV\.BASE_URL or "http://petstore\.swagger\.io/v2"$'
expect_match "swagger multi: a list" "$T/sw.lua" '^  local status = \{ "available" \} -- query, required$'
serve_spec "$EX/2.0/json/petstore.json" /v2
run_ll run -q -i 1 -e "BASE_URL=http://127.0.0.1:$SP/v2" "$T/sw.lua"
expect_eq "swagger: runs with BASE_URL" "$RC" 0
if /usr/bin/python3 "$SRV" check "$EX/2.0/json/petstore.json" "$SLOG" 1 >"$T/check.txt"; then
  ok "swagger: BASE_URL from the environment reached the server"
else
  not_ok "swagger: BASE_URL" "$(head -3 "$T/check.txt")"
fi
stop_pid "$SRV_PID"

# server variables: their defaults
run_ll convert "$EX/3.0/yaml/server-variables.yaml"
expect_match "server variables substituted" "$OUT" '^local base = __ENV\.BASE_URL or "https://demo\.example\.com:443/v2"$'

# ---- --tags: only those operations are called; an unknown tag names itself ----
serve_spec "$EX/3.0/yaml/petstore.yaml" ""
run_ll convert "$EX/3.0/yaml/petstore.yaml" --tags "store, user" --base-url "http://127.0.0.1:$SP" -o "$T/tags.lua"
expect_eq "--tags: converted" "$RC" 0
expect_eq "--tags: 12 operations" "$(grep -c '^function api\.' "$T/tags.lua")" 12
expect_match "--tags: named in the header" "$T/tags.lua" '^-- the operations tagged store, user\.$'
run_ll run -q -i 1 "$T/tags.lua"
if /usr/bin/python3 "$SRV" check "$EX/3.0/yaml/petstore.yaml" "$SLOG" 1 store,user >"$T/check.txt"; then
  ok "--tags: the store and user operations, once each, no pet ones"
else
  not_ok "--tags" "$(head -3 "$T/check.txt")"
fi
stop_pid "$SRV_PID"
run_ll convert "$EX/3.0/yaml/petstore.yaml" --tags pet,nope
expect_eq "--tags unknown: exit 104" "$RC" 104
expect_eq "--tags unknown: the message" "$(cat "$ERR")" \
  "luaload: convert: $EX/3.0/yaml/petstore.yaml: --tags: no operation has the tag 'nope' (the tags: 'pet', 'store', 'user')"

# ---- every description of the package converts and passes inspect ----
bad=
n=0
for f in "$EX"/3.0/yaml/*.yaml "$EX"/3.1/yaml/*.yaml "$EX"/2.0/json/*.json "$EX"/3.0/json/*.json; do
  [[ $f == */webhooks.yaml ]] && continue # no paths: below
  n=$((n + 1))
  if ! "$LUALOAD" convert "$f" >"$T/any.lua" 2>"$T/any.err" || ! "$LUALOAD" inspect "$T/any.lua" >/dev/null 2>>"$T/any.err"; then
    bad+="$f: $(head -2 "$T/any.err") "
  fi
done
expect_eq "all $n descriptions of @readme/oas-examples convert and pass inspect" "$bad" ""

# a recursive schema (circular.yaml) is cut, not followed forever
run_ll convert "$EX/3.0/yaml/circular.yaml"
expect_eq "circular schema converts" "$RC" 0

# schemas that contain themselves (a list of itself, allOf and oneOf of
# itself, a property of itself) are cut where they repeat
cat >"$T/self.json" <<'EOF'
{"openapi": "3.0.3", "info": {"title": "self", "version": "1"},
 "components": {"schemas": {
   "L": {"type": "array", "items": {"$ref": "#/components/schemas/L"}},
   "A": {"allOf": [{"$ref": "#/components/schemas/A"}, {"properties": {"n": {"type": "integer"}}}]},
   "O": {"oneOf": [{"$ref": "#/components/schemas/O"}]},
   "T": {"type": "object", "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/components/schemas/T"}}}}}},
 "paths": {"/s": {"post": {"operationId": "s",
   "parameters": [{"name": "l", "in": "query", "schema": {"$ref": "#/components/schemas/L"}}],
   "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/T"}}}},
   "responses": {"201": {"description": "ok"}}}},
  "/m": {"post": {"operationId": "m",
   "requestBody": {"content": {"multipart/form-data": {"schema": {"properties": {
     "l": {"$ref": "#/components/schemas/L"}, "a": {"$ref": "#/components/schemas/A"}, "o": {"$ref": "#/components/schemas/O"}}}}}},
   "responses": {"201": {"description": "ok"}}}}}}
EOF
run_ll convert "$T/self.json" -o "$T/self.lua"
expect_eq "self-containing schemas: converted" "$RC" 0
expect_match "self-containing schemas: cut at the repeat" "$T/self.lua" '^    kids = \{\},$'
expect_match "self-containing schemas: in a form" "$T/self.lua" '^    fields = \{ l = "", a = "\{\\"n\\":1\}" \},$'
run_ll inspect "$T/self.lua"
expect_eq "self-containing schemas: inspect" "$RC" 0

# ---- a description of luaload serve's demo API, in YAML with anchors ----
start_serve
cat >"$T/demo.yaml" <<'EOF'
openapi: "3.1.0"
info: { title: "luaload demo", version: "2" }
servers:
  - url: "http://{host}:{port}"
    variables: { host: { default: "127.0.0.1" }, port: { default: "8080" } }
security: [ { token: [] } ]
components:
  securitySchemes:
    token: { type: http, scheme: bearer }
  schemas:
    Item:
      type: object
      required: [name, price]
      properties:
        id: { type: integer, readOnly: true }
        name: { type: string, example: "widget" }
        price: { type: number, example: 2.5 }
  responses:
    item: &item
      description: an item
      content: { application/json: { schema: { $ref: "#/components/schemas/Item" } } }
paths:
  /api/login:
    post:
      operationId: login
      security: []
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                username: { type: string, default: alice }
                password: { type: string, format: password, enum: [secret] }
      responses: { "200": { description: a token } }
  /api/items:
    post:
      operationId: createItem
      requestBody:
        content: { application/json: { schema: { $ref: "#/components/schemas/Item" } } }
      responses: { "201": *item, "400": { description: bad } }
  /api/items/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: integer, example: 1 } }
    get:
      operationId: getItem
      responses: { "200": *item }
    put:
      operationId: putItem
      requestBody:
        content: { application/json: { schema: { allOf: [ { $ref: "#/components/schemas/Item" }, { properties: { name: { example: "gadget" } } } ] } } }
      responses: { "200": *item }
  /status/{code}:
    get:
      operationId: status
      parameters: [ { name: code, in: path, required: true, schema: { type: integer, enum: [202] } } ]
      responses: { "202": { description: accepted } }
EOF
run_ll convert "$T/demo.yaml" -o "$T/demo.lua"
expect_eq "demo: converted" "$RC" 0
expect_match "demo: server variables" "$T/demo.lua" '^local base = __ENV\.BASE_URL or "http://127\.0\.0\.1:8080"$'
expect_match "demo: readOnly left out, examples in" "$T/demo.lua" '^  local body = \{ name = "widget", price = 2\.5 \}$'
expect_match "demo: allOf merged" "$T/demo.lua" '^  local body = \{ name = "gadget", price = 2\.5 \}$'
expect_match "demo: security: [] sends no token" "$T/demo.lua" '^    tags = \{ name = "POST /api/login" \},$'
expect_match "demo: anchors: the aliased response's 201" "$T/demo.lua" '"createItem: status 201"'
token=$(curl -s -d '{"username":"alice","password":"secret"}' "$URL/api/login" | jq -r .token)
run_ll run -q -e "BASE_URL=$URL" -e "TOKEN_TOKEN=$token" --summary-export "$T/s.json" "$T/demo.lua"
expect_eq "demo: runs against luaload serve" "$RC" 0
expect_eq "demo: all 5 checks pass (login, create 201, get, put, status 202)" "$(passes checks) $(jqv "$T/s.json" '.metrics.checks.fails')" "5 0"

# ---- bad input: one line naming the file and where, exit 104 ----
bad_input() { # NAME FILE-CONTENT WANT-MESSAGE
  printf '%s\n' "$2" >"$T/bad.yaml"
  run_ll convert "$T/bad.yaml"
  expect_eq "$1: exit 104" "$RC" 104
  expect_eq "$1: the message" "$(cat "$ERR")" "luaload: convert: $T/bad.yaml: $3"
}
bad_input "openapi 2.5" 'openapi: 2.5
info: { title: t, version: "1" }
paths: { /a: { get: { responses: { "200": { description: ok } } } } }' \
  "openapi: version 2.5 is not supported (OpenAPI 3.0 and 3.1, Swagger 2.0 are)"
bad_input "swagger 1.2" '{"swagger": "1.2", "paths": {}}' \
  "swagger: version 1.2 is not supported (OpenAPI 3.0 and 3.1, Swagger 2.0 are)"
bad_input "no paths" 'openapi: 3.0.3
info: { title: t, version: "1" }' "paths: missing (an API description with no operations)"
bad_input "empty paths" '{"openapi": "3.1.0", "paths": {}}' "paths: empty (an API description with no operations)"
bad_input "a dangling \$ref" 'openapi: 3.0.3
info: { title: t, version: "1" }
paths:
  /a:
    post:
      operationId: make
      requestBody: { content: { application/json: { schema: { $ref: "#/components/schemas/Nope" } } } }
      responses: { "200": { description: ok } }' \
  "POST /a (make): \$ref '#/components/schemas/Nope' points nowhere"
bad_input "a dangling parameter \$ref" '{"swagger": "2.0", "paths": {"/b/{id}": {"get": {"parameters": [{"$ref": "#/parameters/id"}], "responses": {}}}}}' \
  "GET /b/{id} (get_b_id): \$ref '#/parameters/id' points nowhere"
bad_input "an external \$ref" '{"openapi": "3.0.0", "paths": {"/c": {"$ref": "other.yaml#/c"}}}' \
  "paths./c: \$ref 'other.yaml#/c' is in another file (only references within the document are followed)"
bad_input "a loop of \$refs" '{"openapi": "3.0.0", "paths": {"/d": {"get": {"parameters": [{"$ref": "#/x/a"}], "responses": {}}}}, "x": {"a": {"$ref": "#/x/b"}, "b": {"$ref": "#/x/a"}}}' \
  "GET /d (get_d): \$ref '#/x/a' is a loop of references"
run_ll convert "$EX/3.1/yaml/webhooks.yaml"
expect_eq "webhooks only: exit 104" "$RC" 104
expect_match "webhooks only: no paths" "$ERR" "webhooks\.yaml: paths: missing"

finish
