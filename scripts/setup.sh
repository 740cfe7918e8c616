#!/usr/bin/env bash
# Everything the tests need on a fresh machine with only Node.js and npm: Bun (from npm), then the
# Debian packages the suites start for real (redis-server; nginx and wrk for the benchmark's smoke run),
# then the project's dependencies from the lockfile. Safe to run again: it installs only what is missing.
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
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bun install --frozen-lockfile
