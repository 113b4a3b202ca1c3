#!/usr/bin/env bash
# The main job on its embedded default: build xstream-check, check the bundled
# recorded trace of the buggy PyTorch pipeline, and lint the CUDA examples.
# Exits 0 when both checks ran and found the seeded bug; 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${XSC_BUILD_DIR:-$root/build}
trace=${1:-$root/examples/traces/torch_buggy.jsonl}

bash "$root/test/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target xstream-check xstream-lint

status=0
echo "== xstream-check replay $(realpath --relative-to="$root" "$trace")"
"$build/bin/xstream-check" replay "$trace" || status=$?
if [ "$status" -ne 66 ]; then
  echo "demo: expected findings (exit 66) from the buggy trace, got exit $status" >&2
  exit 1
fi

echo "== xstream-lint -p $(realpath --relative-to="$root" "$build") examples/cuda/*.cu"
lint_status=0
# The build's compile_commands.json holds the examples' nvcc commands, which
# the lint translates for clang.
"$build/bin/xstream-lint" -p "$build" "$root"/examples/cuda/*.cu || lint_status=$?
if [ "$lint_status" -ne 1 ]; then
  echo "demo: expected warnings (exit 1) from the buggy examples, got exit $lint_status" >&2
  exit 1
fi
echo "demo: both checks found the seeded cross-stream bug"
