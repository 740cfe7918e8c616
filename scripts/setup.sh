#!/usr/bin/env bash
# Everything the tests need on a fresh machine with only Node.js and npm: Bun (from npm), then the
# Debian packages the suites start for real (redis-server; nginx, its stream and Lua modules, HAProxy,
# Caddy, wrk and h2load for the benchmark's smoke run;
# openssl for the conformance certificates; slowhttptest for the slow-client suite; chromium for the
# dashboard's browser test; libmodsecurity3 and modsecurity-crs for the WAF suites),
# the kernel setting certificate rotation relies on (net.ipv4.tcp_migrate_req), then the project's
# dependencies from the lockfile. Safe to run again: it installs only what is missing.
# The apt-get step needs root (as CI runs), or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bun >/dev/null 2>&1; then
  npm install -g bun
fi
bun --version

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
# The streams benchmark's peer is nginx's stream {} proxy, a dynamic module in Debian's nginx.
if ! nginx -V 2>&1 | grep -q -- '--with-stream '; then
  [ -f /usr/lib/nginx/modules/ngx_stream_module.so ] || need+=(libnginx-mod-stream)
fi
# The peers benchmark sets Gatehouse beside what its users would otherwise run: HAProxy, Caddy (a Go
# proxy) and nginx in ingress-nginx's shape, which needs nginx's Lua module (Debian builds it for the one
# nginx binary that nginx-light also installs, so the two go together).
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
command -v caddy >/dev/null 2>&1 || need+=(caddy)
[ -f /usr/lib/nginx/modules/ngx_http_lua_module.so ] || need+=(libnginx-mod-http-lua)
# The gRPC benchmark loads its HTTP/2 rows with h2load (wrk speaks HTTP/1.1 only).
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
# The conformance suites make their certificates with it and ask s_client what a server requests.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# The slow-client suite attacks the gateway with it (slow headers, bodies and reads).
command -v slowhttptest >/dev/null 2>&1 || need+=(slowhttptest)
# The dashboard's browser test drives Debian's Chromium (playwright-core, executablePath /usr/bin/chromium).
[ -x /usr/bin/chromium ] || need+=(chromium)
# The WAF suites run the real engine (libmodsecurity3 through bun:ffi) with Debian's OWASP Core Rule Set.
[ -f /usr/lib/x86_64-linux-gnu/libmodsecurity.so.3 ] || ldconfig -p 2>/dev/null | grep -q 'libmodsecurity\.so\.3' ||
  need+=(libmodsecurity3)
[ -d /usr/share/modsecurity-crs/rules ] || need+=(modsecurity-crs)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian starts these as services on install (Caddy's default site takes port 80); the bench starts its
  # own, so the services installed here are stopped and left off.
  for svc in haproxy caddy; do
    if [[ " ${need[*]} " == *" $svc "* ]] && command -v systemctl >/dev/null 2>&1; then
      $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || true
    fi
  done
fi

# What docs/tls.md asks of the nodes: a listening socket that closes (certificate rotation with Bun.serve
# listeners) hands its queued connections to the new one instead of resetting them. The rotation test
# then holds the gateway to zero failed requests; without it that test counts such resets apart.
if [ "$(cat /proc/sys/net/ipv4/tcp_migrate_req 2>/dev/null || echo 1)" = "0" ]; then
  if [ "$(id -u)" -eq 0 ]; then sysctl -qw net.ipv4.tcp_migrate_req=1 || true
  elif command -v sudo >/dev/null 2>&1; then sudo sysctl -qw net.ipv4.tcp_migrate_req=1 || true
  fi
fi

bun install --frozen-lockfile
