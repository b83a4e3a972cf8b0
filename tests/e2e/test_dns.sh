#!/usr/bin/env bash
# Names and addresses (docs/failures.md, docs/from-k6.md), in a network and
# mount namespace of the test's own: only its loopback, its /etc/hosts and
# its /etc/resolv.conf (bind-mounted), a DNS server of its own
# (helpers/dns_server.py) that answers some names and drops the queries for
# the others. It checks that
#   - a lookup that gets no answer does not stall the worker: a VU on a
#     name nobody answers fails at its request timeout (1050) while a VU of
#     the same worker on 127.0.0.1 goes on, and the run ends on time;
#   - answers are kept for the dns option's ttl (queries counted);
#   - a name with 127.0.0.1 and ::1, the server on ::1 only, works: a failed
#     connect goes on to the next address; a connect that hangs gives way
#     to the next address after 250 ms (Happy Eyeballs);
#   - dns select (first, roundRobin, random) and policy (onlyIPv6,
#     preferIPv6, onlyIPv4) choose the addresses connections go to, on both
#     transports as far as libcurl has them;
#   - --local-ips hands each VU its source address;
#   - bad values exit 104 naming the flag, variable or option.
if [[ ${LL_DNS_NETNS:-} != 1 ]]; then
  source "$(dirname "$0")/unshare_mounts.sh"
  if ! unshare -n -m "${LL_UNSHARE_PROPAGATION[@]}" true 2>/dev/null; then
    echo "FAIL - unshare -n -m: cannot make a network and mount namespace (this test runs as root)"
    exit 1
  fi
  LL_DNS_NETNS=1 exec unshare -n -m "${LL_UNSHARE_PROPAGATION[@]}" bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8
HELP=$(dirname "$0")/helpers
ip link set lo up

# start_py OUT SCRIPT ARGS...: a helper server in the background, until it
# printed "ready"
start_py() {
  local out=$1 i
  shift
  python3 "$@" >"$out" 2>&1 &
  EXTRA_PIDS+=($!)
  for ((i = 0; i < 200; i++)); do
    grep -q '^ready' "$out" && return 0
    sleep 0.05
  done
  echo "not ready: $* $(cat "$out")"
  return 1
}

cat >"$T/hosts" <<EOF
127.0.0.1 localhost
127.0.0.1 dual.test
::1 dual.test
127.0.0.1 multi.test
127.0.0.2 multi.test
::1 multi.test
127.0.0.3 slow.test
::1 slow.test
EOF
printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:2\n' >"$T/resolv.conf"
# The two files bind-mounted over the system's; where /etc has no hosts
# file to mount over (debootstrap's minbase), an overlay of /etc holds them
# (written to $T, never to /etc). Unmounted at exit: in a chroot the
# namespace's mounts may propagate (unshare_mounts.sh).
# LL_DNS_OVERLAY=1 takes the overlay where /etc/hosts exists (to try it).
MOUNTED=()
trap 'for ((m = ${#MOUNTED[@]} - 1; m >= 0; m--)); do umount "${MOUNTED[m]}" 2>/dev/null; done; cleanup' EXIT
if [[ -f /etc/hosts && -f /etc/resolv.conf && ${LL_DNS_OVERLAY:-} != 1 ]]; then
  mount --bind "$T/hosts" /etc/hosts && MOUNTED+=(/etc/hosts) || exit 1
  mount --bind "$T/resolv.conf" /etc/resolv.conf && MOUNTED+=(/etc/resolv.conf) || exit 1
else
  mkdir -p "$T/etc.upper" "$T/etc.work" && cp "$T/hosts" "$T/resolv.conf" "$T/etc.upper/" || exit 1
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/etc.upper,workdir=$T/etc.work" /etc && MOUNTED+=(/etc) || exit 1
fi
start_py "$T/dns.out" "$HELP/dns_server.py" 127.0.0.1 53 "$T/dns.log" cached.test=127.0.0.1 || exit 1
start_serve
P6=18080 PM=18081 PS=18082
start_py "$T/dual.out" "$HELP/addr_server.py" $P6 "$T/dual.log" ::1 || exit 1
start_py "$T/multi.out" "$HELP/addr_server.py" $PM "$T/multi.log" 127.0.0.1 127.0.0.2 ::1 || exit 1
start_py "$T/slow.out" "$HELP/addr_server.py" $PS "$T/slow.log" ::1 || exit 1
start_py "$T/tarpit.out" "$HELP/tarpit.py" 127.0.0.3 $PS || exit 1

# --- a lookup nobody answers: the other VU of the worker goes on ---
S=$(script stuck.lua <<LUA
local http = require("luaload.http")
local exec = require("luaload.execution")
local metrics = require("luaload.metrics")
local ll = require("luaload")
local waited = metrics.Trend("lookup_wait_ms")
local near_iters = metrics.Counter("near_iters")
options = {
  scenarios = {
    stuck = { executor = "constant-vus", vus = 1, duration = "3s", exec = "stuck" },
    near = { executor = "constant-vus", vus = 1, duration = "3s", exec = "near" },
  },
}
function stuck()
  local t0 = exec.instance.currentTestRunDuration
  local r = http.get("http://stuck.test:$PORT/", { timeout = "1s" })
  waited:add(exec.instance.currentTestRunDuration - t0)
  print("stuck", r.error_code, r.error)
end
function near()
  if http.get("$URL/").status == 200 then near_iters:add(1) end
  ll.sleep(0.01)
end
LUA
)
run_ll run "$S" -w 1 -q --no-summary --summary-export "$T/s.json"
expect_eq "stuck lookup: exit 0" "$RC" 0
expect_cmp "stuck lookup: the run ends on time, $ELAPSED s" "x < 7" "$ELAPSED"
expect_cmp "stuck lookup: the other VU of the worker goes on ($(cnt near_iters) iterations in 3 s)" "x >= 120" \
  "$(cnt near_iters)"
n=$(grep -c $'^stuck\t1050\trequest timeout$' "$OUT")
expect_cmp "stuck lookup: each request fails at its timeout with 1050 ($n of them)" "x >= 2 && x <= 5" "$n"
expect_eq "stuck lookup: nothing else fails" "$(grep -c '^stuck' "$OUT")" "$n"
expect_cmp "stuck lookup: a failed request took its 1 s timeout (min)" "x >= 950" "$(jqv "$T/s.json" '.metrics.lookup_wait_ms.min')"
expect_cmp "stuck lookup: a failed request took its 1 s timeout (max)" "x < 1600" "$(jqv "$T/s.json" '.metrics.lookup_wait_ms.max')"
expect_eq "stuck lookup: one query for the name, shared by its waits" "$(grep -c '^stuck.test A$' "$T/dns.log")" 1

# --- the answers are kept for the ttl ---
S=$(script ttl.lua <<LUA
local http = require("luaload.http")
options = { noConnectionReuse = true }
function default() print("ttl", http.get("http://cached.test:$PORT/").status) end
LUA
)
: >"$T/dns.log"
run_ll run "$S" -q --no-summary -i 5
expect_eq "ttl 5m (default): 5 requests" "$(grep -c $'^ttl\t200$' "$OUT")" 5
expect_eq "ttl 5m (default): one lookup" "$(grep -c '^cached.test A$' "$T/dns.log")" 1
: >"$T/dns.log"
run_ll run "$S" -q --no-summary -i 5 --dns ttl=0
expect_eq "ttl=0: 5 requests" "$(grep -c $'^ttl\t200$' "$OUT")" 5
expect_eq "ttl=0: a lookup for each connection" "$(grep -c '^cached.test A$' "$T/dns.log")" 5

# --- two addresses, the server on the second only ---
S=$(script dual.lua <<LUA
local http = require("luaload.http")
options = { noConnectionReuse = true }
function default()
  local r = http.get("http://dual.test:$P6/")
  print("dual", r.status, r.body, r.error)
end
LUA
)
for tr in native curl; do
  run_ll run "$S" -q --no-summary -i 4 --transport $tr
  expect_eq "127.0.0.1 and ::1, a server on ::1 ($tr): every request answered from ::1" \
    "$(grep -c $'^dual\t200\t::1 ::1\t$' "$OUT")" 4
done
# the first address does not answer at all: the next one 250 ms later
S=$(script slow.lua <<LUA
local http = require("luaload.http")
function default()
  local r = http.get("http://slow.test:$PS/", { timeout = "5s" })
  print("slow", r.status, r.body, string.format("%.0f", r.timings.blocked))
end
LUA
)
run_ll run "$S" -q --no-summary -i 1
expect_eq "a connect that hangs gives way to the next address" "$(grep -c $'^slow\t200\t::1 ::1\t' "$OUT")" 1
expect_cmp "... after about 250 ms (blocked $(cut -f4 "$OUT") ms)" "x >= 240 && x < 1500" "$(cut -f4 "$OUT")"

# --- dns select and policy: which addresses connections go to ---
S=$(script multi.lua <<LUA
local http = require("luaload.http")
options = { noConnectionReuse = true }
function default() print("multi", http.get("http://multi.test:$PM/").body) end
LUA
)
# spread NAME ARGS...: 20 requests; the server addresses they came to
spread() {
  run_ll run "$S" -q --no-summary -i 20 "$@"
  grep '^multi' "$OUT" | cut -f2 | cut -d' ' -f1 | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }'
}
expect_eq "select=roundRobin: IPv4 addresses in turn" "$(spread --dns select=roundRobin)" "127.0.0.1=10 127.0.0.2=10 "
expect_match_str() { if [[ $2 =~ $3 ]]; then ok "$1"; else not_ok "$1" "'$2' does not match /$3/"; fi; }
expect_match_str "select=random (default): both IPv4 addresses" "$(spread)" '^127\.0\.0\.1=[0-9]+ 127\.0\.0\.2=[0-9]+ $'
expect_match_str "select=first: one address" "$(spread --dns select=first)" '^127\.0\.0\.[12]=20 $'
expect_eq "policy=onlyIPv6: ::1 only" "$(spread --dns policy=onlyIPv6)" "::1=20 "
expect_eq "policy=preferIPv6: ::1" "$(spread --dns policy=preferIPv6,select=roundRobin)" "::1=20 "
expect_eq "LUALOAD_DNS=policy=onlyIPv6" "$(LUALOAD_DNS=policy=onlyIPv6 spread)" "::1=20 "
expect_eq "curl: policy=onlyIPv6" "$(spread --dns policy=onlyIPv6 --transport curl)" "::1=20 "
expect_match_str "curl: policy=onlyIPv4" "$(spread --dns policy=onlyIPv4 --transport curl)" '^127\.0\.0\.[12]=[0-9]+ (127\.0\.0\.2=[0-9]+ )?$'
S=$(script multi_opts.lua <<LUA
local http = require("luaload.http")
options = { noConnectionReuse = true, dns = { select = "roundRobin", policy = "onlyIPv4", ttl = "1m" } }
function default() print("multi", http.get("http://multi.test:$PM/").body) end
LUA
)
expect_eq "options.dns = { select = \"roundRobin\", policy = \"onlyIPv4\" }" "$(spread)" "127.0.0.1=10 127.0.0.2=10 "
expect_eq "--dns wins over options.dns, field by field" "$(spread --dns policy=onlyIPv6)" "::1=20 "

# --- --local-ips: the VUs' source addresses ---
S=$(script local.lua <<LUA
local http = require("luaload.http")
function default() print("local", http.get("http://127.0.0.1:$PM/").body) end
LUA
)
for tr in native curl; do
  run_ll run "$S" -q --no-summary -u 2 -i 10 --local-ips 127.0.0.2,127.0.0.3 --transport $tr
  expect_eq "--local-ips 127.0.0.2,127.0.0.3 ($tr): the server sees both" \
    "$(grep '^local' "$OUT" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" "127.0.0.2 127.0.0.3 "
done
run_ll run "$S" -q --no-summary -u 3 -i 12 --local-ips 127.0.0.4-127.0.0.5,127.0.0.8/30
expect_eq "--local-ips a range and a CIDR block: one address per VU" \
  "$(grep '^local' "$OUT" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" "127.0.0.4 127.0.0.5 127.0.0.9 "
run_ll run "$S" --no-summary -i 1 --local-ips 127.0.0.4-127.0.0.5 --dns select=first
expect_match "the banner shows the local IPs" "$OUT" 'local IPs: 127\.0\.0\.4-127\.0\.0\.5 '
expect_match "the banner shows the dns option" "$OUT" 'dns: ttl=5m0s,select=first,policy=preferIPv4$'

# --- bad values: 104, naming what ---
S=$(script plain.lua <<LUA
function default() end
LUA
)
bad() { # NAME REGEX ARGS...
  local name=$1 re=$2
  shift 2
  run_ll "$@"
  expect_eq "$name: exit 104" "$RC" 104
  expect_match "$name: the message" "$ERR" "$re"
}
bad "--dns select=fastest" "invalid value for --dns: 'select=fastest' \(expected select: first, random or roundRobin\)" \
  run "$S" --dns select=fastest
bad "--dns ttl=soon" "invalid value for --dns: 'ttl=soon' \(expected ttl: " run "$S" --dns ttl=soon
bad "--dns color=blue" "invalid value for --dns: 'color=blue' \(expected ttl, select or policy" run "$S" --dns color=blue
LUALOAD_DNS=policy=ipv4 bad "LUALOAD_DNS" \
  "invalid value for LUALOAD_DNS: 'policy=ipv4' \(expected policy: preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any\)" run "$S"
S=$(script bad_opt.lua <<LUA
options = { dns = { select = "first", policy = "v6" } }
function default() end
LUA
)
bad "options.dns" "options.dns: invalid policy 'v6' \(expected policy: " run "$S"
S=$(script plain.lua <<LUA
function default() end
LUA
)
bad "--local-ips 10.0.0.x" "invalid value for --local-ips: '10.0.0.x' \('10.0.0.x' is not an IP address, range \(A-B\) or CIDR block \(A/N\)\)" \
  run "$S" --local-ips 10.0.0.x
bad "--local-ips a falling range" "invalid value for --local-ips: '10.0.0.9-10.0.0.1'" run "$S" --local-ips 10.0.0.9-10.0.0.1
LUALOAD_LOCAL_IPS=::1/129 bad "LUALOAD_LOCAL_IPS" "invalid value for LUALOAD_LOCAL_IPS: '::1/129'" run "$S"
finish
