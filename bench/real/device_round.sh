#!/usr/bin/env bash
# One device command that says where a checked training step's time goes:
# builds the runtime (test/gpu/run.sh, runtime targets only), then samples
# each workload of bench/real/train_step.py natively and checked with perf
# (bench/profile/profile.sh, REPORT=one) and sums the samples by group,
# thread and symbol (bench/profile/attribute.py).
#
#   tar xJf build-perf-pack/perf.tar.xz     (perf: bench/README.md, "The GPU
#                                           machine has no profiler")
#   bash bench/real/device_round.sh [WORKLOAD:STEPS ...]
#
# Default workloads: ddp:500 hf:400 fsdp2:250 eager:500, in that order of
# importance (the host-bound steps first). VARIANTS (default "native
# inline") are profile.sh's; STEADY (default 1) samples the timed steps
# only, so that start-up is no part of the per-step sums (0: the whole
# process). Each workload gets at most ROUND_WORKLOAD_S
# seconds (default 140), so that a 10-minute device command still returns
# the workloads it finished. Writes to $OUT: round.log (build summary and
# every attribution) and WORKLOAD.tgz (the raw reports), at most 5 files.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
out=${OUT:-$root/build-gpu/round}
mkdir -p "$out"
log=$out/round.log
: > "$log"
[ -x build-perf-tools/perf ] || { echo "device_round: build-perf-tools/perf missing (bench/profile/prepare-perf.sh)" | tee -a "$log"; exit 2; }
(
  export XSC_GPU_SUITES=none XSC_GPU_TARGETS="xstream_check xstream_torch"
  OUT=$root/build-gpu/out timeout 200 bash test/gpu/run.sh > /dev/null 2>&1
  cat "$root/build-gpu/out/summary.txt"
) >> "$log" 2>&1
[ -f build-gpu/lib/libxstream_check.so ] || { echo "device_round: the build failed" | tee -a "$log"; exit 3; }
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(ddp:500 hf:400 fsdp2:250 eager:500)
for spec in "${specs[@]}"; do
  w=${spec%%:*}
  steps=${spec#*:}
  [ "$steps" = "$spec" ] && steps=300
  work=$root/build-gpu/round-$w
  rm -rf "$work"
  echo "== $w, $steps steps" >> "$log"
  OUT=$work STAT=0 REPORT=one VERBOSITY=1 STEADY=${STEADY:-1} VARIANTS="${VARIANTS:-native inline}" \
    timeout "${ROUND_WORKLOAD_S:-140}" bash bench/profile/profile.sh \
    python3 bench/real/train_step.py "$w" --steps "$steps" --warmup 10 >> "$log" 2>&1
  if [ -f "$work/profiles.tgz" ]; then
    cp "$work/profiles.tgz" "$out/$w.tgz"
    mkdir -p "$work/x" && tar xzf "$work/profiles.tgz" -C "$work/x"
    python3 bench/profile/attribute.py "$work/x/prof" --steps "$steps" >> "$log" 2>&1
  else
    echo "device_round: $w gave no profile (its time ran out)" >> "$log"
  fi
done
cat "$log"
