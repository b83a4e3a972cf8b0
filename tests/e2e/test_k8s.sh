#!/usr/bin/env bash
# luaload k8s: the manifests validate offline against the Kubernetes schemas
# (kubernetes-models, deploy/k8s/validate); their objects fit together (the
# Indexed Job's pods, the headless Service, the ConfigMap's files, the
# volume); and the shell steps inside them, run here as the pods would run
# them (JOB_COMPLETION_INDEX, SCRIPTS, RESULTS, API_ADDR, PART_HOSTS), split
# a test into parts, release them together, and merge them into one
# process's counts, with the whole test's threshold deciding the exit code.
source "$(dirname "$0")/lib.sh"
start_serve
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VALIDATE=$ROOT/deploy/k8s/validate/validate.mjs
mkdir -p "$T/test/lib"
cat >"$T/test/lib/target.lua" <<'LUA'
return { path = "/" }
LUA
cat >"$T/test/main.lua" <<'LUA'
local http = require("luaload.http")
local target = require("lib.target")
local client = http.Client{}
options = {
  scenarios = { s = { executor = "shared-iterations", vus = 6, iterations = 601 } },
  thresholds = { http_reqs = { "count<400" } },
}
function setup() return { base = __ENV.BASE } end
function default(d) client:get(d.base .. target.path) end
LUA
printf 'not\0text' >"$T/test/blob.bin"

run_ll k8s "$T/test/main.lua" --instances 3 --file "$T/test/lib/target.lua" --file "$T/test/blob.bin" \
  --name demo -- -e "BASE=$URL"
expect_eq "k8s: exit 0" "$RC" 0
M=$T/manifests.json
cp "$OUT" "$M"
if command -v node >/dev/null && [[ -d $ROOT/deploy/k8s/validate/node_modules ]]; then
  node "$VALIDATE" "$M" >"$T/validate.txt" 2>&1
  expect_eq "the manifests validate against the Kubernetes schemas" "$?" 0
  expect_match "five objects validated" "$T/validate.txt" '^5 valid, 0 invalid'
  jq '.items[3].spec.completionMode = "Sideways"' "$M" >"$T/broken.json"
  node "$VALIDATE" "$T/broken.json" >"$T/broken.txt" 2>&1
  expect_eq "the validator refuses a broken Job" "$?" 1
else
  echo "FAIL - node or deploy/k8s/validate/node_modules missing (scripts/setup.sh installs them)"
  FAILS=$((FAILS + 1))
fi
item() { jq -c ".items[] | select(.kind == \"$1\" and .metadata.name == \"$2\")" "$M"; }
parts=$(item Job demo-parts)
collect=$(item Job demo-collect)
svc=$(item Service demo)
cm=$(item ConfigMap demo-script)
expect_eq "parts: an Indexed Job" "$(jq -r .spec.completionMode <<<"$parts")" Indexed
expect_eq "parts: parallelism = completions = 3" "$(jq -c '[.spec.parallelism, .spec.completions]' <<<"$parts")" '[3,3]'
expect_eq "parts: the pods' subdomain is the headless Service" "$(jq -r .spec.template.spec.subdomain <<<"$parts")" demo
expect_eq "Service: headless" "$(jq -r .spec.clusterIP <<<"$svc")" None
expect_eq "Service: selects the parts' pods" \
  "$(jq -c '.spec.template.metadata.labels | with_entries(select(.key != "app.kubernetes.io/name"))' <<<"$parts")" \
  "$(jq -c .spec.selector <<<"$svc")"
expect_eq "the parts' status API port" "$(jq '.spec.ports[0].port' <<<"$svc")" 6565
expect_eq "collector: the start step runs first" "$(jq -r '.spec.template.spec.initContainers[0].name' <<<"$collect")" start
expect_eq "collector: the parts by their DNS names" \
  "$(jq -r '.spec.template.spec.initContainers[0].env[] | select(.name == "PART_HOSTS") | .value' <<<"$collect")" \
  "demo-parts-0.demo:6565 demo-parts-1.demo:6565 demo-parts-2.demo:6565"
expect_eq "ConfigMap: the script and its library as text" "$(jq -c '.data | keys' <<<"$cm")" '["lib_target.lua","main.lua"]'
expect_eq "ConfigMap: a binary file as binaryData" "$(jq -r '.binaryData["blob.bin"]' <<<"$cm" | base64 -d | od -c | head -1 | tr -s ' ')" \
  "0000000 n o t \\0 t e x t"
expect_eq "the volume puts each file at its path" \
  "$(jq -c '[.spec.template.spec.volumes[0].configMap.items[] | .path]' <<<"$parts")" '["main.lua","lib/target.lua","blob.bin"]'
expect_eq "every pod mounts the results volume" \
  "$(jq -r '[.items[] | select(.kind == "Job") | .spec.template.spec.volumes[1].persistentVolumeClaim.claimName] | unique | .[]' "$M")" \
  demo-results

# the steps, run as the pods run them: the ConfigMap's files in SCRIPTS,
# the volume in RESULTS, the parts on ports of 127.0.0.1
mkdir -p "$T/scripts" "$T/results" "$T/bin"
ln -s "$(readlink -f "$LUALOAD")" "$T/bin/luaload"
jq -c '.spec.template.spec.volumes[0].configMap.items[]' <<<"$parts" | while read -r it; do
  key=$(jq -r .key <<<"$it") path=$(jq -r .path <<<"$it")
  mkdir -p "$(dirname "$T/scripts/$path")"
  if jq -e ".data[\"$key\"]" <<<"$cm" >/dev/null; then jq -j ".data[\"$key\"]" <<<"$cm" >"$T/scripts/$path"
  else jq -r ".binaryData[\"$key\"]" <<<"$cm" | base64 -d >"$T/scripts/$path"; fi
done
expect_eq "the files come out as they went in" "$(cat "$T/scripts/lib/target.lua")" "$(cat "$T/test/lib/target.lua")"
step() { jq -r "$1" <<<"$2"; }
part_step=$(step '.spec.template.spec.containers[0].command[2]' "$parts")
start_step=$(step '.spec.template.spec.initContainers[0].command[2]' "$collect")
collect_step=$(step '.spec.template.spec.containers[0].command[2]' "$collect")
before=$(curl -s "$URL/stats" | jq .requests)
pids=() hosts=
for i in 0 1 2; do
  port=$(free_port)
  hosts="$hosts 127.0.0.1:$port"
  env PATH="$T/bin:$PATH" JOB_COMPLETION_INDEX=$i SCRIPTS="$T/scripts" RESULTS="$T/results" API_ADDR="127.0.0.1:$port" \
    timeout -k 5 60 sh -c "$part_step" >"$T/part$i.out" 2>&1 &
  pids+=($!)
done
env PATH="$T/bin:$PATH" SCRIPTS="$T/scripts" RESULTS="$T/results" PART_HOSTS="${hosts# }" \
  timeout -k 5 60 sh -c "$start_step" >"$T/start.out" 2>&1
expect_eq "start step: setup() once, then the parts released: exit 0" "$?" 0
expect_eq "start step: setup()'s result for the parts" "$(jq -r .base "$T/results/setup.json")" "$URL"
rcs=
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$?"; done
expect_eq "parts: each exits 0 (its own share passes count<400)" "$rcs" 000
env PATH="$T/bin:$PATH" SCRIPTS="$T/scripts" RESULTS="$T/results" timeout -k 5 60 sh -c "$collect_step" \
  >"$T/collect.out" 2>"$T/collect.err"
expect_eq "collector: exit 99, the whole test fails count<400" "$?" 99
expect_eq "collector: the merged requests are one process's" "$(jqv "$T/results/summary.json" .metrics.http_reqs.count)" 601
expect_eq "collector: serve counted the same" "$(($(curl -s "$URL/stats" | jq .requests) - before))" 601
expect_match "collector: names the threshold" "$T/collect.err" "threshold failed: http_reqs 'count<400'"

# bad input: one line, exit 104
bad() {
  local label=$1 want=$2; shift 2
  run_ll k8s "$@"
  expect_eq "$label: exit 104" "$RC" 104
  expect_match "$label: says why" "$ERR" "$want"
}
bad "no --instances" 'expected a script and --instances N' "$T/test/main.lua"
bad "--instances 0" "invalid --instances '0'" "$T/test/main.lua" --instances 0
bad "a file outside the script's directory" 'is not under the script' "$T/test/main.lua" -n 2 --file "$ROOT/README.md"
bad "a missing script" 'cannot read' "$T/nope.lua" -n 2
bad "a bad name" "invalid --name 'Demo'" "$T/test/main.lua" -n 2 --name Demo
bad "an unknown flag" 'unknown flag --vus' "$T/test/main.lua" -n 2 --vus 3
finish
