#!/usr/bin/env bash
# Configures the project at $1 into $2 with only what picks the library
# headers mattering (no runtime, tests, examples or plugin to build), with
# $3 on PYTHONPATH ("" for none), then the remaining arguments; prints
# CMake's output and exits with its status.
set -uo pipefail
src=$1 build=$2 pythonpath=$3
shift 3
env ${pythonpath:+PYTHONPATH=$pythonpath} cmake -S "$src" -B "$build" -G Ninja \
  -DXSC_BUILD_RUNTIME=OFF -DXSC_BUILD_TORCH=OFF -DXSC_BUILD_TESTS=OFF \
  -DXSC_BUILD_EXAMPLES=OFF -DXSC_BUILD_BENCH=OFF -DXSC_BUILD_CLANG_PLUGIN=OFF "$@" 2>&1
