#!/usr/bin/env bash
# HTTP/3 under loss, which is what QUIC is for: gtlsserver in a network
# namespace this test makes, reached over a veth pair (10.213.0.1 here,
# 10.213.0.2 there) with netem's 5% loss and 20 ms delay on both ends.
# Every request completes with 200 (QUIC resends), the delay shows in the
# durations, and luaload's count equals the requests the server answered;
# then all packets lost (100%): the requests end as counted request
# timeouts. Where namespaces are not allowed, it says SKIP and passes; where
# the kernel has no netem (sch_netem), a python3 relay in the namespace
# drops and delays the datagrams the same way (5% each way, 20 ms).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
_srv_need gtlsserver ip tc || exit 1
make_certs || exit 1
NS=luaload-h3loss-$$
VETH=llh3l$$
# ip netns add makes /run/netns a mount point the first time; one this
# test made goes with it, so the machine is left as it was
NS_MOUNT=0
mountpoint -q /run/netns 2>/dev/null || NS_MOUNT=1
cleanup_ns() {
  cleanup # the servers first, gently
  ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null
  ip link del "$VETH" 2>/dev/null
  ip netns del "$NS" 2>/dev/null
  if ((NS_MOUNT)) && [[ -z $(ls -A /run/netns 2>/dev/null) ]]; then umount /run/netns 2>/dev/null; fi
}
trap cleanup_ns EXIT
if ! ip netns add "$NS" 2>"$T/ns.err"; then
  echo "SKIP: cannot make a network namespace ($(head -1 "$T/ns.err"))"
  exit 0
fi
if ! {
  ip link add "$VETH" type veth peer name "${VETH}p" netns "$NS" &&
    ip addr add 10.213.0.1/30 dev "$VETH" && ip link set "$VETH" up &&
    ip -n "$NS" addr add 10.213.0.2/30 dev "${VETH}p" && ip -n "$NS" link set "${VETH}p" up &&
    ip -n "$NS" link set lo up
} 2>"$T/ns.err"; then
  echo "SKIP: cannot set up a veth pair into the namespace ($(head -1 "$T/ns.err"))"
  exit 0
fi
RELAY=
if tc qdisc add dev "$VETH" root netem loss 5% delay 20ms 2>"$T/tc.err"; then
  ip netns exec "$NS" tc qdisc add dev "${VETH}p" root netem loss 5% delay 20ms || exit 1
  H3=https://10.213.0.2:4433
else
  echo "# no netem here ($(head -1 "$T/tc.err")): a python3 relay in the namespace drops and delays"
  cat >"$T/relay.py" <<'PY'
# relay.py LISTEN-ADDR PORT TARGET-PORT LOSS DELAY: UDP from LISTEN to
# 127.0.0.1:TARGET-PORT and back, each datagram dropped with probability
# LOSS (1 after SIGUSR1) and delayed DELAY seconds, each way
import heapq, random, select, signal, socket, sys, time
state = {"loss": float(sys.argv[4])}
signal.signal(signal.SIGUSR1, lambda *a: state.update(loss=1.0))
delay = float(sys.argv[5])
front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
front.bind((sys.argv[1], int(sys.argv[2])))
back, owner, due, seq = {}, {}, [], 0
print("relaying", flush=True)
while True:
    wait = max(0.0, due[0][0] - time.monotonic()) if due else None
    ready, _, _ = select.select([front] + list(owner), [], [], wait)
    for s in ready:
        data, addr = s.recvfrom(65536)
        if random.random() < state["loss"]:
            continue
        if s is front:
            b = back.get(addr)
            if b is None:
                b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                b.connect(("127.0.0.1", int(sys.argv[3])))
                back[addr], owner[b] = b, addr
            heapq.heappush(due, (time.monotonic() + delay, seq, b, None, data))
        else:
            heapq.heappush(due, (time.monotonic() + delay, seq, front, owner[s], data))
        seq += 1
    while due and due[0][0] <= time.monotonic():
        _, _, s, dst, data = heapq.heappop(due)
        if dst:
            s.sendto(data, dst)
        else:
            s.send(data)
PY
  _srv_launch "$T/relay.log" ip netns exec "$NS" /usr/bin/python3 "$T/relay.py" 10.213.0.2 4434 4433 0.05 0.02
  RELAY=$_SRV_PID
  for ((i = 0; i < 50; i++)); do grep -qs relaying "$T/relay.log" && break; sleep 0.1; done
  H3=https://10.213.0.2:4434
fi
WWW=$T/www
mkdir -p "$WWW" && echo hello >"$WWW/index.html"
# a certificate for 10.213.0.2, signed by the test CA
(
  cd "$CERTS" &&
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ns.key &&
    openssl req -new -key ns.key -subj /CN=ns -out ns.csr &&
    printf 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:10.213.0.2\n' >ns.ext &&
    openssl x509 -req -in ns.csr -CA ca.pem -CAkey ca.key -set_serial 0x4242 -days 2 -extfile ns.ext -out ns.pem
) >"$T/nscert.log" 2>&1 || { echo "cannot make the namespace's certificate: $(tail -2 "$T/nscert.log")"; exit 1; }
_srv_launch "$T/gtls.log" ip netns exec "$NS" gtlsserver -d "$WWW" --no-quic-dump --no-http-dump \
  "$([[ -n $RELAY ]] && echo 127.0.0.1 || echo 10.213.0.2)" 4433 "$CERTS/ns.key" "$CERTS/ns.pem"
for ((i = 0; i < 50; i++)); do grep -qs "Using document root" "$T/gtls.log" && break; sleep 0.1; done

# 5 VUs, 200 requests, each within 5 s
S=$(script loss.lua <<LUA
local http = require("luaload.http")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" }, timeout = "5s" }
options = { thresholds = { ["http_reqs{status:200}"] = { "count>=0" } } }
function default()
  local r = c:get("$H3/index.html")
  if r.status ~= 200 or r.body ~= "hello\n" then print("bad", r.status, r.error_code, r.error) end
end
LUA
)
run_ll run "$S" -q -u 5 -i 200 --summary-export "$T/s.json"
expect_eq "loss: exit 0" "$RC" 0
expect_eq "loss: http_reqs = 200" "$(cnt http_reqs)" 200
expect_eq "loss: every request a 200 with the body" "$(cnt 'http_reqs{status:200}')" 200
expect_eq "loss: no failure" "$(passes http_req_failed)" 0
expect_eq "loss: the server answered as many requests" "$(grep -c "submit response headers" "$T/gtls.log")" 200
expect_cmp "loss: p(95) duration above the 40 ms round trip" "x > 40" "$(jqv "$T/s.json" '.metrics.http_req_duration["p(95)"]')"
expect_cmp "loss: med duration at least the 40 ms round trip" "x >= 40" "$(jqv "$T/s.json" '.metrics.http_req_duration.med')"

# all lost after the first request of each VU: its second one times out (2 s)
S=$(script blackhole.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local c = http.Client{ http_version = "3", tls = { ca = "$CERTS/ca.pem" }, timeout = "2s" }
options = { thresholds = { ["http_reqs{error_code:1050}"] = { "count>=0" }, ["http_reqs{status:200}"] = { "count>=0" } } }
function default()
  local r = c:get("$H3/index.html")
  print("first", r.status, r.error_code)
  local f = io.open("$T/firsts", "a") -- the shell starts the blackhole once all five are in
  f:write("x")
  f:close()
  ll.sleep(4)
  r = c:get("$H3/index.html")
  print("second", r.status, r.error_code, r.error)
end
LUA
)
OUT=$T/out.txt
timeout -k 5 60 "$LUALOAD" run "$S" -q -u 5 -i 5 --summary-export "$T/s.json" >"$OUT" 2>"$T/err.txt" &
LL=$!
# the blackhole once every VU has its first answer (a lost handshake packet
# can hold one back for a retransmission timeout), well before their second
for ((i = 0; i < 100; i++)); do [[ $(stat -c %s "$T/firsts" 2>/dev/null || echo 0) -ge 5 ]] && break; sleep 0.05; done
if [[ -n $RELAY ]]; then
  kill -USR1 "$RELAY"
else
  tc qdisc change dev "$VETH" root netem loss 100% delay 20ms
  ip netns exec "$NS" tc qdisc change dev "${VETH}p" root netem loss 100% delay 20ms
fi
wait $LL
RC=$?
expect_eq "blackhole: exit 0" "$RC" 0
expect_eq "blackhole: the first requests, 200" "$(grep -c -P '^first\t200\t0$' "$OUT")" 5
expect_eq "blackhole: the second ones, 1050 request timeout" "$(grep -c -P '^second\t0\t1050\trequest timeout$' "$OUT")" 5
expect_eq "blackhole: http_reqs{error_code:1050} = 5" "$(cnt 'http_reqs{error_code:1050}')" 5
expect_eq "blackhole: http_req_failed passes 5" "$(passes http_req_failed)" 5
expect_cmp "blackhole: the timeouts took 2 s" "x >= 2000 && x < 2500" "$(jqv "$T/s.json" '.metrics.http_req_duration.max')"
finish
