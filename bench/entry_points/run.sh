#!/usr/bin/env bash
# On the GPU machine, from the repository root: builds the probe and runs
# it under the CUDA runtime linked statically and as a shared library, a
# one-rank FSDP2 training step (PyTorch, cuBLAS, NCCL) and torch.compile's
# Triton kernels. Writes to stdout; no runtime of this project is loaded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-$here/../../build-gpu/entry-points}
mkdir -p "$work"
cuda=${CUDA_HOME:-/usr/local/cuda}
g++ -O2 -shared -fPIC -std=c++17 -I"$cuda/include" -I"$cuda/extras/CUPTI/include" \
  "$here/entry_point_probe.cpp" -o "$work/libentry_point_probe.so" -ldl || exit 2
nvcc -O2 "$here/launches.cu" -o "$work/launches_static" || exit 2
nvcc -O2 -cudart shared "$here/launches.cu" -o "$work/launches_shared" || exit 2
probe=$work/libentry_point_probe.so
echo "== CUDA runtime, static"; LD_PRELOAD=$probe "$work/launches_static"
echo "== CUDA runtime, shared"; LD_PRELOAD=$probe "$work/launches_shared"
echo "== FSDP2, 20 steps"
LD_PRELOAD=$probe timeout 150 python3 "$here/../real/train_step.py" fsdp2 --steps 20 --warmup 3 2>&1 |
  grep -E '^(PROBE|XSC_STEP)'
echo "== torch.compile"
# Inductor compiles in worker processes, each of which prints its own line.
LD_PRELOAD=$probe timeout 150 python3 "$here/compiled_launches.py" 2>&1 | grep -E '^PROBE|^compiled' |
  grep -v 'proc_address_calls=0 swapped=0 carried=0 bypassed=0$'
