#!/usr/bin/env bash
# http.Client{ proxy = ... } through tinyproxy to nginx (tests/e2e/servers.sh):
# plain HTTP goes as one proxy request per request (absolute-form GET),
# HTTPS as one CONNECT per new connection, the tunnel kept alive across
# iterations (one per VU; one per request with disable_keep_alive); a Client
# without proxy, even with http_proxy/https_proxy/all_proxy set, goes direct;
# a proxy on a closed port fails every request with status 0, error_code 1212.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/servers.sh"
make_certs || exit 1
start_nginx || exit 1
start_tinyproxy || exit 1
PROXY=http://127.0.0.1:$PROXY_PORT
HTTP=http://127.0.0.1:$NGINX_HTTP_PORT
HTTPS=https://127.0.0.1:$NGINX_HTTPS_PORT
N=6

# proxied PATTERN: lines of tinyproxy's log of requests matching PATTERN
proxied() { grep -c -E "Request \(file descriptor [0-9]+\): $1" "$PROXY_LOG"; }

# one script for every case: MODE picks the Client and the URL
S=$(script proxy.lua <<LUA
local http = require("luaload.http")
local clients = {
  http = { http.Client{ proxy = "$PROXY" }, "$HTTP/echo" },
  https = { http.Client{ proxy = "$PROXY", tls = { ca = "$CERTS/ca.pem" } }, "$HTTPS/echo" },
  https_h1 = { http.Client{ proxy = "$PROXY", http_version = "1.1", tls = { ca = "$CERTS/ca.pem" } }, "$HTTPS/status/404" },
  https_close = { http.Client{ proxy = "$PROXY", disable_keep_alive = true, tls = { ca = "$CERTS/ca.pem" } }, "$HTTPS/" },
  direct_http = { http.Client{}, "$HTTP/echo" },
  direct_https = { http.Client{ tls = { ca = "$CERTS/ca.pem" } }, "$HTTPS/echo" },
  closed = { http.Client{ proxy = "http://127.0.0.1:$(free_port)" }, "$HTTP/echo" },
  closed_https = { http.Client{ proxy = "http://127.0.0.1:$(free_port)", tls = { ca = "$CERTS/ca.pem" } }, "$HTTPS/echo" },
}
local c = clients[__ENV.MODE]
options = { thresholds = { ["http_reqs{error_code:1212}"] = { "count>=0" }, ["http_reqs{status:200}"] = { "count>=0" },
                           ["http_reqs{error_code:1220}"] = { "count>=0" } } }
function default()
  local r = c[1]:get(c[2])
  print(__ENV.MODE, r.status, r.proto, r.error_code, r.url, r.body)
end
LUA
)

# run_mode MODE VUS: runs N iterations; sets BEFORE/AFTER (proxy_requests)
run_mode() {
  BEFORE=$(proxy_requests)
  run_ll run "$S" -q -e MODE="$1" -u "$2" -i $N --summary-export "$T/s.json" -o json="$T/$1.json"
  AFTER=$(proxy_requests)
  expect_eq "$1: exit 0" "$RC" 0
  # tinyproxy may close a kept-alive client connection just as the next
  # request goes out on it: libcurl sends it again and that first attempt
  # is one more request, error_code 1220 (docs/failures.md). RESENT counts them.
  RESENT=$(cnt 'http_reqs{error_code:1220}')
  [[ $RESENT == missing ]] && RESENT=0
  expect_eq "$1: http_reqs = $N (and $RESENT sent again)" "$(($(cnt http_reqs) - RESENT))" $N
}

run_mode http 1
expect_eq "http: every request through the proxy gets nginx's echo" \
  "$(grep -c -P "^http\t200\tHTTP/1.1\t0\t$HTTP/echo\tmethod=GET len= ae= cookie= ua=luaload/0.1.0 host=127.0.0.1$" "$OUT")" $N
expect_eq "http: the proxy read exactly one request per request" "$((AFTER - BEFORE))" $N
expect_eq "http: all of them absolute-form GETs of nginx's URL" "$(proxied "GET $HTTP/echo HTTP/1.1")" $N
expect_eq "http: no failure but the attempts sent again" "$(($(passes http_req_failed) - RESENT))" 0

run_mode https 1
expect_eq "https: HTTP/2 to nginx through the tunnel" \
  "$(grep -c -P "^https\t200\tHTTP/2.0\t0\t$HTTPS/echo\tmethod=GET .* host=127.0.0.1$" "$OUT")" $N
expect_eq "https: one CONNECT for one VU's $N keep-alive requests" "$((AFTER - BEFORE))" 1
expect_eq "https: one new connection" "$(conns "$T/https.json")" 1
expect_eq "https: the proxy saw a CONNECT to nginx's port" "$(proxied "CONNECT 127.0.0.1:$NGINX_HTTPS_PORT HTTP/1.1")" 1
expect_eq "https: no failure" "$(passes http_req_failed)" 0

run_mode https_h1 3
expect_eq "https_h1: HTTP/1.1 404s through the tunnel" "$(grep -c -P "^https_h1\t404\tHTTP/1.1\t1404\t" "$OUT")" $N
expect_eq "https_h1: one CONNECT per VU (3 VUs)" "$((AFTER - BEFORE))" 3
expect_eq "https_h1: three new connections" "$(conns "$T/https_h1.json")" 3
expect_eq "https_h1: the 404s are failed" "$(passes http_req_failed)" $N

run_mode https_close 1
expect_eq "https_close: 200s" "$(grep -c -P "^https_close\t200\tHTTP/2.0\t0\t" "$OUT")" $N
expect_eq "https_close: disable_keep_alive: one CONNECT per request" "$((AFTER - BEFORE))" $N
expect_eq "https_close: a new connection per request" "$(conns "$T/https_close.json")" $N

# a Client without proxy goes direct, whatever the environment says
export http_proxy=$PROXY https_proxy=$PROXY all_proxy=$PROXY HTTP_PROXY=$PROXY HTTPS_PROXY=$PROXY ALL_PROXY=$PROXY
run_mode direct_http 1
expect_eq "direct_http: 200s" "$(grep -c -P "^direct_http\t200\tHTTP/1.1\t0\t" "$OUT")" $N
expect_eq "direct_http: the proxy read nothing" "$((AFTER - BEFORE))" 0
run_mode direct_https 1
expect_eq "direct_https: 200s" "$(grep -c -P "^direct_https\t200\tHTTP/2.0\t0\t" "$OUT")" $N
expect_eq "direct_https: the proxy read nothing" "$((AFTER - BEFORE))" 0
unset http_proxy https_proxy all_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY

# a proxy on a closed port: connection refused (1212) on every request
for m in closed closed_https; do
  run_mode $m 1
  expect_eq "$m: status 0, no proto, error_code 1212" "$(grep -c -P "^$m\t0\t\t1212\t" "$OUT")" $N
  expect_eq "$m: http_reqs{error_code:1212} = $N" "$(cnt 'http_reqs{error_code:1212}')" $N
  expect_eq "$m: http_req_failed rate 1" "$(rate http_req_failed)" 1
  expect_eq "$m: the proxy read nothing" "$((AFTER - BEFORE))" 0
done

# SOCKS5 (tests/e2e/helpers/socks5_server.py): http and https targets through
# it, socks5h:// resolving the name at the proxy; one tunnel per connection
python3 "$(dirname "$0")/helpers/socks5_server.py" "$T/socks.port" "$T/socks.count" &
EXTRA_PIDS+=($!)
for _ in $(seq 50); do [[ -s $T/socks.port ]] && break; sleep 0.1; done
SOCKS=127.0.0.1:$(cat "$T/socks.port")
S=$(script socks.lua <<LUA
local http = require("luaload.http")
local s = http.Client{ proxy = "socks5://$SOCKS", tls = { ca = "$CERTS/ca.pem" } }
local h = http.Client{ proxy = "socks5h://$SOCKS" }
function default()
  local r = s:get("http://127.0.0.1:$NGINX_HTTP_PORT/echo")
  print("socks_http", r.status, r.proto, r.error_code)
  r = s:get("https://127.0.0.1:$NGINX_HTTPS_PORT/echo")
  print("socks_https", r.status, r.proto, r.error_code)
  r = h:get("http://localhost:$NGINX_HTTP_PORT/echo")
  print("socks5h", r.status, r.body:match("host=%S+"))
end
LUA
)
run_ll run "$S" -q -i $N
expect_eq "socks5: exit 0" "$RC" 0
expect_eq "socks5: http through the proxy" "$(grep -c -P "^socks_http\t200\tHTTP/1.1\t0$" "$OUT")" $N
expect_eq "socks5: https (h2) through the proxy" "$(grep -c -P "^socks_https\t200\tHTTP/2.0\t0$" "$OUT")" $N
expect_eq "socks5h: the name resolved at the proxy" "$(grep -c -P "^socks5h\t200\thost=localhost$" "$OUT")" $N
expect_eq "socks5: one tunnel per connection (3 clients' connections, kept alive)" "$(cat "$T/socks.count")" 3

# a bad proxy value fails at init
S=$(script badproxy.lua <<'LUA'
local http = require("luaload.http")
local c = http.Client{ proxy = 3128 }
function default() end
LUA
)
run_ll run "$S" -q -i 1
expect_eq "proxy = 3128 (a number): exit 107" "$RC" 107
expect_match "proxy = 3128: the message names the option" "$ERR" "badproxy.lua:2: http.Client: proxy must be a string, got number"
finish
