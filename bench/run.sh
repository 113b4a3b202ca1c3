#!/usr/bin/env bash
# The one benchmark command, for a GPU machine: builds what it needs (the
# runtime, the PyTorch adapter, the examples and bench_launch, through
# test/gpu/run.sh with .gpu-tools carried), then measures native runs against
# xstream-check, compute-sanitizer (C++ programs) and TORCH_CUDA_SANITIZER=1
# (PyTorch scripts), interleaved, and writes perf.json and
# performance-table.md to $OUT (default build-gpu/perf). With matplotlib
# present it also renders performance.md and performance.png there
# (otherwise run bench/report.py on perf.json elsewhere).
#
#   bash bench/run.sh [run_all.py options, e.g. --reps 3 --quick]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/build-gpu/perf}
mkdir -p "$out"
XSC_GPU_SUITES=none OUT="$out" bash test/gpu/run.sh || exit $?
export LD_LIBRARY_PATH=$root/.gpu-tools/lib:$root/.gpu-tools/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 bench/run_all.py --build "$root/build-gpu" --out "$out" "$@" || exit $?
if python3 -c 'import matplotlib' > /dev/null 2>&1; then
  python3 bench/report.py "$out/perf.json" --out "$out/performance.md" --png "$out/performance.png"
fi
