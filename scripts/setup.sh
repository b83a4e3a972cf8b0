#!/usr/bin/env bash
# setup.sh -- install everything luaload's build, tests and benchmarks need.
#
# Idempotent: safe to run again. On Debian 12 (bookworm) it enables
# bookworm-backports when missing, because luaload needs a libcurl built with
# HTTP/2 and HTTP/3 (libcurl4-gnutls-dev 8.x from backports). On another
# system it prints what to install and exits 1.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config git ca-certificates
  luajit libluajit-5.1-dev libcjson-dev libssl-dev libnghttp2-dev libjwt-dev zlib1g-dev
  nginx wrk nghttp2-client jq time curl clang python3 iproute2 procps influxdb
  libgnutls28-dev caddy tinyproxy openssl brotli zstd libpng-dev libbrotli-dev libzstd-dev
  libxml2-dev libhttp-parser-dev liburing-dev libc-ares-dev libwslay-dev python3-websockets
  default-jre-headless libhdrhistogram-java
  libprotobuf-c-dev protobuf-c-compiler libsnappy-dev prometheus chromium
  libprotobuf-dev libprotoc-dev protobuf-compiler python3-grpcio python3-protobuf python3-h2 libyaml-dev python3-yaml
  zsh fish
  file
)
BACKPORT_PKGS=(libcurl4-gnutls-dev libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev ngtcp2-server)

other_system() {
  cat >&2 <<'MSG'
setup.sh: this is not Debian 12; install these yourself, then build with CMake:
  a C11 compiler, cmake >= 3.16, pkg-config,
  LuaJIT 2.1 (headers), libcurl >= 8 built with HTTP/2 and HTTP/3,
  cJSON, OpenSSL 3, nghttp2, libjwt, zlib, brotli, zstd, libpng, libxml2, libyaml,
  http-parser 2.9, liburing, c-ares, wslay, protobuf-c (and protoc-c), snappy,
  libprotobuf 3.21 with its compiler headers (libprotoc) and a C++17 compiler;
  GnuTLS (headers);
  for the tests: protoc, python3 with websockets, grpcio and h2, nginx, caddy 2.x, tinyproxy, openssl, brotli, zstd, jq, curl, influxdb 1.x,
  a Java runtime and HdrHistogram 2.1 (its jar in /usr/share/java/hdrhistogram.jar),
  Prometheus 2.x, Node.js and npm;
  for the benchmarks: wrk, h2load (nghttp2), GNU time.
MSG
  exit 1
}

[[ -r /etc/os-release ]] || other_system
. /etc/os-release
[[ ${ID:-} == debian && ${VERSION_CODENAME:-} == bookworm ]] || other_system

SUDO=
if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi

if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "setup.sh: enabling bookworm-backports" >&2
  $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
# apt-get update fails when an unrelated third-party source is unreachable;
# the install below is what must succeed.
$SUDO apt-get update -qq || echo "setup.sh: apt-get update reported errors, continuing" >&2
$SUDO apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports "${BACKPORT_PKGS[@]}" >/dev/null

ver=$(pkg-config --modversion libcurl)
case $ver in
  7.*) echo "setup.sh: libcurl $ver is too old (need 8.x from bookworm-backports)" >&2; exit 1 ;;
esac
# from the npm registry, each pinned by its package-lock.json: the offline
# validator of `luaload k8s`'s manifests (tests/e2e/test_k8s.sh), kubernetes-models
if ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
root=$(cd "$(dirname "$0")/.." && pwd)
npm ci --prefix "$root/deploy/k8s/validate" --no-audit --no-fund --silent
# uPlot for the HTML report, built into luaload (no CDN)
npm ci --prefix "$root/src/core/metrics/report/page" --no-audit --no-fund --silent
# third-party OpenAPI and Swagger descriptions (the petstores and more) for
# tests/e2e/test_convert_openapi.sh
npm ci --prefix "$root/tests/e2e/openapi" --no-audit --no-fund --silent

echo "setup.sh: ready (libcurl $ver, $(luajit -v | cut -d' ' -f1-2))" >&2
