#!/usr/bin/env bash
# Runs, on the GPU machine after test/gpu/run.sh has built build-gpu/, each
# crashing scenario on its own with every diagnostic on, so that one run
# tells where each crash happens:
#   * the runtime's fatal-signal report (XSC_HANDLE_SEGV, on by default):
#     signal, faulting address, native stack of the dying thread;
#   * Python's faulthandler (-X faulthandler): the Python stack;
#   * the PyTorch adapter's step trace (XSC_TORCH_TRACE=1): the last step
#     taken before the crash;
#   * unbuffered Python output (PYTHONUNBUFFERED=1), so no line is lost.
# Everything goes to $OUT/diag.log (default build-gpu/out); frames printed as
# (module+0xOFFSET) for this project's libraries are then resolved with
# addr2line into $OUT/diag-symbolized.log.
#
#   bash test/gpu/diagnose.sh     from the repository root
#
# Each step has its own timeout (XSC_DIAG_TIMEOUT_S, default 120 s); a hang
# shows as exit=124. The script's own status is 0: the log is the result.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${XSC_DIAG_BUILD:-$root/build-gpu}
lib=$build/lib/libxstream_check.so
adapter=$build/lib/libxstream_torch.so
python=${XSC_DIAG_PYTHON:-python3}
limit=${XSC_DIAG_TIMEOUT_S:-120}
out=${OUT:-$build/out}
mkdir -p "$out"
log=$out/diag.log
: > "$log"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

note() { printf '%s\n' "$*" >> "$log"; }

# step NAME COMMAND...: runs COMMAND under the timeout, stdout and stderr
# interleaved into the log, then its exit status.
step() {
  local name=$1
  shift
  note ""
  note "======== $name"
  note "\$ $*"
  timeout -k 5 "$limit" "$@" >> "$log" 2>&1
  note "exit=$?"
}

note "== environment"
{
  date
  uname -a
  "$python" -c 'import sys, torch; print(sys.version); print("torch", torch.__version__, torch.version.cuda, torch.__file__)'
  ls -l "$lib" "$adapter"
  readelf -d "$adapter" | grep -E 'NEEDED|RUNPATH|FLAGS'
} >> "$log" 2>&1

torch_first_tensor='import torch; print("imported", flush=True); x = torch.ones(4, device="cuda"); print("tensor", flush=True); print(float(x.sum()), flush=True)'

export PYTHONUNBUFFERED=1

# The adapter alone, driven by a ctypes host API (no runtime).
step "adapter probe, no runtime" \
  env XSC_TORCH_TRACE=1 "$python" -X faulthandler test/torch/Inputs/adapter_probe.py "$adapter"

# The same with the runtime preloaded only for its fatal-signal report: its
# own adapter is hidden, so the probe's attach is the only one.
step "adapter probe, runtime preloaded for the signal report, runtime's adapter hidden" \
  env LD_PRELOAD="$lib" XSC_TORCH_ADAPTER=/nonexistent XSC_TORCH_TRACE=1 \
  "$python" -X faulthandler test/torch/Inputs/adapter_probe.py "$adapter"

step "first CUDA tensor under the runtime, with the adapter" \
  env LD_PRELOAD="$lib" XSC_OPTIONS=verbosity=2 XSC_TORCH_TRACE=1 \
  "$python" -X faulthandler -c "$torch_first_tensor"

step "first CUDA tensor under the runtime, adapter hidden (XSC_TORCH_ADAPTER=/nonexistent)" \
  env LD_PRELOAD="$lib" XSC_OPTIONS=verbosity=2 XSC_TORCH_ADAPTER=/nonexistent \
  "$python" -X faulthandler -c "$torch_first_tensor"

step "pipelines.py buggy under the runtime" \
  env LD_PRELOAD="$lib" XSC_OPTIONS=verbosity=1 XSC_TORCH_TRACE=1 \
  "$python" -X faulthandler examples/torch/pipelines.py buggy --trials 1

# The NCCL forwarding driver of test/nccl/runtime-forwarding.test: made-up
# buffers and stream handles, a fake libnccl, the runtime active.
cuda_include=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../include
step "build the fake libnccl and the NCCL driver" bash -c "
  c++ -std=c++20 -shared -fPIC -I'$cuda_include' -Wl,-soname,libnccl.so.2 \
      test/nccl/Inputs/fake_nccl.cpp -o '$scratch/libnccl.so.2' &&
  ln -sf libnccl.so.2 '$scratch/libnccl.so' &&
  c++ -std=c++20 -I'$cuda_include' test/nccl/Inputs/nccl_driver.cpp -L'$scratch' -lnccl \
      -Wl,-rpath,'$scratch' -o '$scratch/driver'"
step "NCCL driver, plain" "$scratch/driver"
step "NCCL driver under the runtime" \
  env XSC_OPTIONS=exitcode=0:verbosity=1 LD_PRELOAD="$lib" "$scratch/driver"

# Frames "(…/libxstream_*.so+0xOFF)" resolved to function and line.
symbolized=$out/diag-symbolized.log
: > "$symbolized"
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$symbolized"
  if [[ $line =~ \((/[^\)]*libxstream_[a-z]+\.so)\+(0x[0-9a-f]+)\) ]]; then
    module=${BASH_REMATCH[1]}
    offset=${BASH_REMATCH[2]}
    # Return addresses point after the call.
    [[ $line =~ \#0\  ]] || offset=$(printf '0x%x' $((offset - 1)))
    addr2line -f -C -i -e "$module" "$offset" 2>/dev/null | paste -sd' ' |
      sed 's/^/        => /' >> "$symbolized"
  fi
done < "$log"
echo "diagnostics in $log and $symbolized"
exit 0
