# servers.sh -- real servers on 127.0.0.1 for luaload's end-to-end tests:
# nginx, Caddy (HTTP/3) and tinyproxy on free ports, configs rendered from
# tests/e2e/servers/*.in into $T, stopped at exit through lib.sh's EXTRA_PIDS.
# Usage in a test: source lib.sh; source servers.sh; start_nginx || exit 1; ...
# Call the start_* functions in the test's own shell (not in $(...) or a
# pipe): the exit trap can only stop its own children.
# Every function returns 1 when a program is missing or a server does not
# start, saying so in one line on stderr (followed, for a server that failed,
# by its log, indented); nothing is skipped.
#
# make_certs: a test PKI (EC P-256, valid 2 days) in CERTS=$T/certs, made once
#   per test (start_nginx and start_caddy call it):
#   ca.pem/ca.key (the CA), server.pem/server.key (SAN IP:127.0.0.1, IP:::1,
#   DNS:localhost), client.pem/client.key (CN=luaload-client, signed by the
#   CA), other-ca.pem/other-ca.key (an unrelated CA) and
#   bad-client.pem/bad-client.key (a client cert signed by other-ca).
# start_nginx: nginx (NGINX_WORKERS workers, default 1) on NGINX_HTTP_PORT
#   (HTTP/1.1), NGINX_H2C_PORT (h2c prior knowledge only), NGINX_HTTPS_PORT
#   (TLS, h1 + h2 by ALPN) and NGINX_MTLS_PORT (TLS + h2, client cert signed by
#   ca.pem required, else 400). Sets NGINX_PID and NGINX_WWW (its files:
#   plain.txt, the 20000-byte text that /plain, /gzip, /deflate, /br and /zstd
#   send, and big.bin, the 1 MiB /big). Routes on every port:
#     /                 200 "hello\n"
#     /status/NNN       NNN for 200 201 202 204 301 302 304 400 401 403 404
#                       405 429 500 502 503 504 (body "status NNN\n")
#     /echo             200 "method=M len=CONTENT_LENGTH ae=ACCEPT_ENCODING
#                       cookie=COOKIE ua=USER_AGENT host=HOST\n", any method
#     /redirect/3       302 -> /redirect/2 -> /redirect/1 -> /echo (relative
#                       Locations), setting cookies hop3, hop2, hop1 (=yes)
#     /redirect/abs     302 -> $scheme://$host:$port/echo
#     /r301 /r302 /r303 /r307 /r308   that status -> /echo
#     /loop             302 -> /loop, forever
#     /set-cookie       200, Set-Cookie "a=1; Path=/" and "b=2; Path=/echo; HttpOnly"
#     /mtls             200 "client=SUBJECT_DN verify=SUCCESS|NONE|...\n"
#     /plain            the text; /gzip /deflate (zlib) /br /zstd: the text,
#                       always compressed so, whatever Accept-Encoding says
#     /big              1 MiB of random bytes
#     /basic            Basic auth (user "user", password "p@ss w:rd"): 200
#                       "authorized\n" and X-User: user, else 401
#     /proxy/X          proxied to 127.0.0.1:$UPSTREAM_PORT/X (set UPSTREAM_PORT
#                       before starting, e.g. to a luaload serve for /sha256)
# start_caddy: Caddy on CADDY_PORT (HTTPS h1 + h2 over TCP, h3 over UDP, same
#   number) and CADDY_MTLS_PORT (the same, client cert signed by ca.pem
#   required in the handshake), server.pem. Sets CADDY_PID and CADDY_WWW (its
#   files, as nginx's). Routes: / "hello\n", /echo (as nginx's), /status/NNN
#   (any 100-599, body "status NNN\n"), /redirect/3 /redirect/abs /loop
#   /set-cookie /plain /gzip /deflate /br /zstd (as nginx's), /r301 /r302
#   /r303 /r307 /r308 (that status to /proxy/sha256), /gzip-corrupt
#   (Content-Encoding gzip, a body that is not), /headers "x-a=X_A
#   ct=CONTENT_TYPE host=HOST:PORT\n", /mtls "client=SUBJECT\n", /proxy/X
#   (as nginx's, with X-Method: the request's method), anything else 404.
#   Caddy's `respond` routes send a body to a HEAD over HTTP/3 (Caddy 2.6's
#   quic-go), which HTTP/3 clients refuse; /proxy/X's do not. Without a client cert, and over
#   HTTP/3 (Caddy 2.6 has no TLS details there), /mtls sends the placeholder
#   unexpanded: "client={http.request.tls.client.subject}".
# caddy_requests PATH-PREFIX: how many requests Caddy's CADDY_PORT has
#   logged (its access log) whose target begins with PATH-PREFIX
# start_tinyproxy: an HTTP proxy (plain requests and CONNECT to any port) on
#   PROXY_PORT. Sets PROXY_PID and PROXY_LOG.
# proxy_requests: how many requests (CONNECTs included) tinyproxy has read.

SERVERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/servers" && pwd)
CERTS=$T/certs

# _srv_need CMD...: fails naming the first command that is not installed
_srv_need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null && continue
    echo "servers.sh: $c is not installed (run scripts/setup.sh)" >&2
    return 1
  done
}

# _srv_ports N: N distinct loopback port numbers free for both TCP and UDP
_srv_ports() {
  python3 - "$1" <<'PY'
import socket, sys
held = []
while len(held) < 2 * int(sys.argv[1]):
    t = socket.socket(); t.bind(("127.0.0.1", 0))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", t.getsockname()[1]))
    except OSError:
        t.close(); continue
    held += [t, u]
print(" ".join(str(s.getsockname()[1]) for s in held[::2]))
PY
}

# _srv_render TEMPLATE OUT KEY=VALUE...: replaces each @KEY@ with VALUE
# (VALUE without | or &: paths and numbers)
_srv_render() {
  local in=$SERVERS_DIR/$1 out=$2 kv args=()
  shift 2
  for kv in "$@"; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  sed "${args[@]}" "$in" >"$out" || return 1
  if grep -q '@[A-Z_]*@' "$out"; then
    echo "servers.sh: unreplaced placeholder in $out: $(grep -o '@[A-Z_]*@' "$out" | head -1)" >&2
    return 1
  fi
}

# _srv_launch LOG CMD...: runs CMD in the background, stopped at exit (and
# by a parent-death signal if this shell is killed); sets _SRV_PID
_srv_launch() {
  local log=$1
  shift
  setpriv --pdeathsig TERM "$@" >>"$log" 2>&1 &
  _SRV_PID=$!
  EXTRA_PIDS+=("$_SRV_PID")
}

# _srv_alive PID: the process runs (exists and is no zombie)
_srv_alive() { grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status"; }

# _srv_listening PORT...: every PORT accepts TCP connections on 127.0.0.1
_srv_listening() {
  local p
  for p in "$@"; do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || return 1; done
}

# _srv_wait NAME PID LOG PORT...: waits (10 s at most) until every PORT
# accepts connections; else says so, prints LOG, stops PID and fails
_srv_wait() {
  local name=$1 pid=$2 log=$3 i
  shift 3
  for ((i = 0; i < 100; i++)); do
    _srv_listening "$@" && return 0
    _srv_alive "$pid" || break
    sleep 0.1
  done
  if _srv_alive "$pid"; then
    echo "servers.sh: $name does not listen on ports $* after 10 s; $log:" >&2
  else
    echo "servers.sh: $name exited at start; $log:" >&2
  fi
  sed 's/^/  /' "$log" >&2
  stop_pid "$pid"
  return 1
}

make_certs() {
  _srv_need openssl || return 1
  export CERTS
  [[ -s $CERTS/bad-client.pem ]] && return 0
  mkdir -p "$CERTS" && (
    cd "$CERTS" || exit 1
    key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
    ca() {
      key "$1" && openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    }
    # leaf NAME CA CN EXTENSIONS
    leaf() {
      key "$1" && openssl req -new -key "$1.key" -subj "/CN=$3" -out "$1.csr" &&
        printf '%s\n' "$4" >"$1.ext" &&
        openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -set_serial "0x$(openssl rand -hex 8)" \
          -days 2 -extfile "$1.ext" -out "$1.pem"
    }
    client='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth'
    ca ca "luaload test CA" && ca other-ca "luaload other CA" &&
      leaf server ca localhost 'basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost' &&
      leaf client ca luaload-client "$client" &&
      leaf bad-client other-ca luaload-bad-client "$client"
  ) >"$T/certs.log" 2>&1 && return 0
  echo "servers.sh: making certificates failed: $(tail -3 "$T/certs.log" | tr '\n' ' ')" >&2
  rm -rf "$CERTS"
  return 1
}

# _srv_www DIR: the files nginx's and Caddy's /plain, /gzip, /deflate, /br,
# /zstd, /gzip-corrupt and /big send
_srv_www() {
  mkdir -p "$1" && (
    cd "$1" || exit 1
    python3 -c '
import zlib
line = b"luaload compressible body: the quick brown fox jumps over the lazy dog\n"
body = (line * (20000 // len(line) + 1))[:20000]
open("plain.txt", "wb").write(body)
open("plain.txt.zz", "wb").write(zlib.compress(body, 9))' &&
      gzip -9 -n -c plain.txt >plain.txt.gz &&
      brotli -c plain.txt >plain.txt.br &&
      zstd -q -c plain.txt >plain.txt.zst &&
      printf 'not gzip data\n' >corrupt.gz &&
      head -c 1048576 /dev/urandom >big.bin &&
      printf 'authorized\n' >authorized.txt &&
      printf 'user:%s\n' "$(openssl passwd -apr1 'p@ss w:rd')" >htpasswd
  )
}

start_nginx() {
  _srv_need nginx python3 gzip brotli zstd setpriv || return 1
  make_certs || return 1
  local d=$T/nginx user_line=
  if ! _srv_www "$d/www"; then
    echo "servers.sh: cannot make nginx's files in $d/www" >&2
    return 1
  fi
  # run as root, nginx's workers would be 'nobody', who cannot read $T
  [[ $(id -u) == 0 ]] && user_line='user root;'
  read -r NGINX_HTTP_PORT NGINX_H2C_PORT NGINX_HTTPS_PORT NGINX_MTLS_PORT <<<"$(_srv_ports 4)"
  _srv_render nginx-routes.conf.in "$d/routes.conf" "WWW=$d/www" "UPSTREAM=${UPSTREAM_PORT:-9}" || return 1
  _srv_render nginx.conf.in "$d/nginx.conf" "DIR=$d" "CERTS=$CERTS" "USER_LINE=$user_line" \
    "WORKERS=${NGINX_WORKERS:-1}" "HTTP_PORT=$NGINX_HTTP_PORT" "H2C_PORT=$NGINX_H2C_PORT" \
    "HTTPS_PORT=$NGINX_HTTPS_PORT" "MTLS_PORT=$NGINX_MTLS_PORT" || return 1
  _srv_launch "$d/error.log" nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf" -g 'daemon off;'
  NGINX_PID=$_SRV_PID
  _srv_wait nginx "$NGINX_PID" "$d/error.log" "$NGINX_HTTP_PORT" "$NGINX_H2C_PORT" \
    "$NGINX_HTTPS_PORT" "$NGINX_MTLS_PORT" || return 1
  NGINX_WWW=$d/www
  export NGINX_HTTP_PORT NGINX_H2C_PORT NGINX_HTTPS_PORT NGINX_MTLS_PORT NGINX_PID NGINX_WWW
}

start_caddy() {
  _srv_need caddy python3 gzip brotli zstd setpriv ss || return 1
  make_certs || return 1
  local d=$T/caddy i
  mkdir -p "$d/home" "$d/data" "$d/config"
  if ! _srv_www "$d/www"; then
    echo "servers.sh: cannot make Caddy's files in $d/www" >&2
    return 1
  fi
  read -r CADDY_PORT CADDY_MTLS_PORT <<<"$(_srv_ports 2)"
  _srv_render Caddyfile.in "$d/Caddyfile" "DIR=$d" "CERTS=$CERTS" "WWW=$d/www" \
    "PORT=$CADDY_PORT" "MTLS_PORT=$CADDY_MTLS_PORT" "UPSTREAM=${UPSTREAM_PORT:-9}" || return 1
  _srv_launch "$d/caddy.log" env HOME="$d/home" XDG_DATA_HOME="$d/data" \
    XDG_CONFIG_HOME="$d/config" caddy run --adapter caddyfile --config "$d/Caddyfile"
  CADDY_PID=$_SRV_PID
  _srv_wait caddy "$CADDY_PID" "$d/caddy.log" "$CADDY_PORT" "$CADDY_MTLS_PORT" || return 1
  for ((i = 0; i < 50; i++)); do  # QUIC comes up with TCP; make sure
    [[ $(ss -Hulpn "( sport = :$CADDY_PORT or sport = :$CADDY_MTLS_PORT )" | wc -l) == 2 ]] && break
    sleep 0.1
  done
  if ((i == 50)); then
    echo "servers.sh: caddy does not listen on UDP ports $CADDY_PORT $CADDY_MTLS_PORT (HTTP/3); log $d/caddy.log" >&2
    return 1
  fi
  CADDY_WWW=$d/www
  export CADDY_PORT CADDY_MTLS_PORT CADDY_PID CADDY_WWW
}

caddy_requests() {
  jq -s --arg p "$1" '[.[] | select(.request.uri | startswith($p))] | length' "$T/caddy/access.log" 2>/dev/null ||
    echo 0
}

start_tinyproxy() {
  _srv_need tinyproxy python3 setpriv || return 1
  local d=$T/tinyproxy
  mkdir -p "$d"
  PROXY_PORT=$(_srv_ports 1)
  PROXY_LOG=$d/tinyproxy.log
  _srv_render tinyproxy.conf.in "$d/tinyproxy.conf" "DIR=$d" "PORT=$PROXY_PORT" || return 1
  _srv_launch "$d/stderr.log" tinyproxy -d -c "$d/tinyproxy.conf"
  PROXY_PID=$_SRV_PID
  _srv_wait tinyproxy "$PROXY_PID" "$d/stderr.log" "$PROXY_PORT" || { cat "$PROXY_LOG" >&2 2>/dev/null; return 1; }
  export PROXY_PORT PROXY_PID PROXY_LOG
}

proxy_requests() {
  local n=0
  [[ -r ${PROXY_LOG:-} ]] && n=$(grep -c 'Request (file descriptor' "$PROXY_LOG")
  echo "$n"
}
