#!/usr/bin/env bash
# Builds xstream-check and runs every test suite (GoogleTest unit tests and
# the lit suites) through ctest, then the sanitizer stage. GPU suites report
# as unsupported on a machine without a CUDA GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${XSC_BUILD_DIR:-$root/build}

bash "$root/test/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build"
status=0
(cd "$build" && ctest --output-on-failure) || status=1

# Stage 2, sanitizers: the checker core (xsc_checker, its unit tests, the
# xstream-check CLI and the lit suites that need no GPU) built with ASan+UBSan
# in a tree of its own, plus a bounded libFuzzer run over trace replay (a
# clang-22 sub-build). docs/reliability.md. XSC_SKIP_SANITIZE=1 skips it.
if [ "${XSC_SKIP_SANITIZE:-0}" != 1 ]; then
  sanitize="$build/sanitize"
  cmake -S "$root" -B "$sanitize" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXSC_SANITIZE=ON \
    -DXSC_BUILD_RUNTIME=OFF -DXSC_BUILD_TORCH=OFF -DXSC_BUILD_CLANG_PLUGIN=OFF \
    -DXSC_BUILD_EXAMPLES=OFF -DXSC_BUILD_BENCH=OFF -DXSC_BUILD_FUZZERS=ON
  cmake --build "$sanitize"
  (cd "$sanitize" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure) || status=1
fi

# Stage 3, the pip route: a wheel built from scratch, installed into a fresh
# venv, replaying the bundled trace and running the pytest plugin's suite
# with pytest-xdist from there (test/wheel/test-wheel.sh; minutes on two
# cores). XSC_SKIP_WHEEL=1 skips it.
if [ "${XSC_SKIP_WHEEL:-0}" != 1 ]; then
  bash "$root/test/wheel/test-wheel.sh" || status=1
fi
# Stage 4, library headers: the runtime's cuDNN, cuBLAS and NCCL
# interposers compiled against the oldest supported and the newest headers,
# taken from the libraries' PyPI wheels (test/headers/check-headers.sh; the
# headers are cached in ~/.cache/xstream-check/headers, about 5 MB; a first
# run downloads some 3 GB of wheels). XSC_SKIP_HEADERS=1 skips it.
if [ "${XSC_SKIP_HEADERS:-0}" != 1 ]; then
  XSC_HEADERS_BUILD="$build/headers" bash "$root/test/headers/check-headers.sh" || status=1
fi
# Stage 5, the runtime's threads under ThreadSanitizer: libxstream_check.so
# built with -fsanitize=thread, preloaded into programs that feed it from
# several threads, flood it and fork, with the checker on its own thread
# and inline (test/tsan/check-thread.sh; about a minute on two cores).
# XSC_SKIP_TSAN=1 skips it.
if [ "${XSC_SKIP_TSAN:-0}" != 1 ]; then
  bash "$root/test/tsan/check-thread.sh" "$build/tsan" || status=1
fi
exit $status
