#!/usr/bin/env bash
# Builds xstream-check on the GPU test machine and runs the GPU lit suites
# (test/runtime, and test/torch, test/nccl, test/corpus, test/cupy when present).
#
#   bash test/gpu/run.sh          from the repository root, with .gpu-tools/
#                                 carried (filled by test/gpu/prepare-tools.sh)
#
# The GPU machine has the CUDA toolkit (nvcc, CUPTI), cmake, ninja, g++ and
# python3 with torch, but no network and no lit, FileCheck, elfutils,
# simdjson, nlohmann-json or GoogleTest: those come from .gpu-tools/.
# Logs and a summary go to $OUT (default build-gpu/out), at most 8 files:
#   env.log configure.log build.log lit.log lit-results.json
#   lit-outputs.tar.gz summary.txt
# XSC_GPU_BUDGET_S (default 540) bounds the whole run in seconds;
# XSC_GPU_SUITES picks suites ("none": build only); XSC_GPU_TARGETS builds
# only these ninja targets (e.g. "xstream_check xstream_torch" for a PyTorch
# measurement; default: everything).
# Exit status: lit's (0 when every test passed or was unsupported), or the
# failing step's.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=$root/build-gpu
tools=$root/.gpu-tools
multiarch=x86_64-linux-gnu
out=${OUT:-$build/out}
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
start=$SECONDS
# The whole run must fit in one 10-minute device command: the build gets at
# most 300 s and lit whatever is left of the budget (at least 60 s).
budget=${XSC_GPU_BUDGET_S:-540}

note() { echo "$*" | tee -a "$summary"; }
elapsed() { echo "$((SECONDS - start))s"; }

if [ ! -x "$tools/bin/FileCheck" ] || [ ! -f "$tools/bin/lit" ]; then
  note "run.sh: $tools is missing or incomplete: run test/gpu/prepare-tools.sh and carry .gpu-tools"
  exit 2
fi

[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH
[ -x /usr/local/cuda/bin/nvcc ] && export CUDACXX=/usr/local/cuda/bin/nvcc
export PATH=$tools/bin:$PATH
export LD_LIBRARY_PATH=$tools/lib:$tools/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_PATH=$tools/lib/$multiarch/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
jobs=$(nproc 2>/dev/null || echo 4)

# --- 1. environment -----------------------------------------------------------
torch=OFF
if torch_version=$(timeout 120 python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>&1); then
  torch=ON
fi
{
  echo "== date";        date -u
  echo "== nvidia-smi";  nvidia-smi 2>&1 || true
  echo "== nvcc";        nvcc --version 2>&1 || true
  echo "== cmake";       cmake --version 2>&1 | head -1
  echo "== ninja";       ninja --version 2>&1
  echo "== g++";         g++ --version 2>&1 | head -1
  echo "== python3";     python3 --version 2>&1
  echo "== torch";       echo "$torch_version"
  echo "== lit";         python3 "$tools/bin/lit" --version 2>&1
  echo "== FileCheck";   FileCheck --version 2>&1 | head -2
  echo "== carried";     cat "$tools/MANIFEST" 2>/dev/null
  echo "== git";         git -C "$root" log -1 --oneline 2>/dev/null || true
} > "$out/env.log" 2>&1
note "gpu: $(nvidia-smi -L 2>/dev/null | head -1 || echo none); torch adapter: $torch"

# cuDNN comes with torch's pip install there, not with the toolkit: its
# headers and library are what the runtime's cuDNN interposers and
# examples/cuda/cudnn_write build against (the lit feature `cudnn`).
cudnn_root=$(timeout 60 python3 -c 'import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])' 2> /dev/null || true)
echo "== cudnn root: ${cudnn_root:-none}" >> "$out/env.log"

# --- 2. configure --------------------------------------------------------------
if ! timeout 120 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$tools" \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DXSC_BUILD_CLANG_PLUGIN=OFF \
    -DXSC_BUILD_EXAMPLES=ON \
    -DXSC_BUILD_TORCH=$torch \
    -DXSC_BUILD_BENCH=ON \
    -DXSC_BUILD_TESTS=ON \
    -DXSC_CUDNN_ROOT="$cudnn_root" > "$out/configure.log" 2>&1; then
  note "configure: FAILED after $(elapsed) (configure.log)"
  tail -n 30 "$out/configure.log"
  exit 3
fi
note "configure: ok ($(elapsed)); $(grep -E '^config\.have_' "$build/test/lit.site.cfg.py" | sed 's/config\.have_//; s/ = /=/' | tr '\n' ' ')"

# --- 3. build ----------------------------------------------------------------
# Keep going past a broken target: the suites that can still run, run.
# shellcheck disable=SC2086  # a list of target names
if timeout 300 ninja -C "$build" -k 0 -j "$jobs" ${XSC_GPU_TARGETS:-} > "$out/build.log" 2>&1; then
  note "build: ok ($(elapsed))"
else
  note "build: FAILED ($(elapsed)); first errors:"
  grep -m 8 -E 'error|FAILED' "$out/build.log" | tee -a "$summary"
fi

# --- 4. lit ------------------------------------------------------------------
# XSC_GPU_SUITES names the suites to run (default: all GPU suites); "none"
# stops after the build (bench/run.sh builds this way).
if [ "${XSC_GPU_SUITES:-}" = none ]; then
  note "lit: skipped (XSC_GPU_SUITES=none)"
  exit 0
fi
suites=()
for s in ${XSC_GPU_SUITES:-runtime torch nccl reliability corpus cupy}; do
  [ -d "$root/test/$s" ] && suites+=("$build/test/$s")
done
lit_time=$(( budget - (SECONDS - start) - 20 ))
(( lit_time < 60 )) && lit_time=60
lit_args=(-sv -j "$(( jobs < 8 ? jobs : 8 ))" --max-time "$lit_time" -o "$out/lit-results.json")
# Per-test timeouts need psutil; without it a hung test is stopped by --max-time.
if python3 -c 'import psutil' > /dev/null 2>&1; then lit_args+=(--timeout 180); fi
timeout $(( lit_time + 30 )) python3 "$tools/bin/lit" "${lit_args[@]}" "${suites[@]}" > "$out/lit.log" 2>&1
lit_rc=$?
note "lit: exit $lit_rc ($(elapsed)) on ${suites[*]#$build/}"

# Each test's temporaries (the checked programs' outputs and reports).
tar -czf "$out/lit-outputs.tar.gz" -C "$build" \
  $(cd "$build" && for s in runtime torch nccl reliability corpus; do [ -d "test/$s" ] && echo "test/$s"; done) \
  2> /dev/null || true

# The lit summary: the failing tests and the totals.
summary_lines=$(awk '/^(Failed|Unresolved|Timed Out) Tests \(/ {p=1} /^Testing Time:/ {p=1} p' "$out/lit.log")
echo "$summary_lines" >> "$summary"
echo "$summary_lines"
exit "$lit_rc"
