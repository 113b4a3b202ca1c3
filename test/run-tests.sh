#!/usr/bin/env bash
# Builds xstream-check and runs every test suite (GoogleTest unit tests and
# the lit suites) through ctest. GPU suites report as unsupported on a machine
# without a CUDA GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${XSC_BUILD_DIR:-$root/build}

bash "$root/test/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build"
cd "$build"
ctest --output-on-failure
