#!/usr/bin/env bash
# Installs the Debian packages xstream-check builds and tests with. Idempotent;
# skips apt-get entirely when everything is already present.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 python3-venv python3-flake8 python3-pytest
  clang-22 libclang-22-dev clang-tidy-22 llvm-22-dev llvm-22-tools libclang-rt-22-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libsimdjson-dev
  libdw-dev libelf-dev libunwind-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
