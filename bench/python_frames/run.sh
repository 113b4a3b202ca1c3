#!/usr/bin/env bash
# Builds bench/python_frames/frame_reader_bench.cpp against each embeddable
# CPython found (python3.N-config on PATH, or under pyenv) and runs it.
#
#   bash bench/python_frames/run.sh [ITERATIONS]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=0
# The first python3.N-config that answers (a pyenv shim for a version not
# selected is on PATH but fails).
embeddable() {
  local candidate
  for candidate in $(command -v "python$1-config") "$HOME"/.pyenv/versions/"$1".*/bin/"python$1-config"; do
    [ -x "$candidate" ] && "$candidate" --embed --ldflags > /dev/null 2>&1 && { echo "$candidate"; return; }
  done
}
for minor in 3.11 3.12 3.13; do
  config=$(embeddable "$minor")
  [ -n "$config" ] || continue
  found=1
  exe=$work/bench-$minor
  if ! g++ -std=c++17 -O2 -I"$root" $("$config" --includes) \
      "$root/bench/python_frames/frame_reader_bench.cpp" "$root/runtime/torch/python_frames.cpp" \
      $("$config" --embed --ldflags) -o "$exe"; then
    echo "python_frames: cannot build against $config" >&2
    continue
  fi
  "$exe" "${1:-200000}"
done
[ "$found" = 1 ] || { echo "python_frames: no python3.N-config found (3.11 to 3.13)" >&2; exit 2; }
