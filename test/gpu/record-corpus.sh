#!/usr/bin/env bash
# Records a trace of each clean-corpus program (examples/torch/real/) under
# the runtime on the GPU machine, so that rule changes can be replayed
# against real programs offline:
#
#   bash test/gpu/run.sh && bash test/gpu/record-corpus.sh [PROGRAM ...]
#
# Writes $OUT/corpus-traces.tar.xz (one TRACE per program, plus each run's
# output) and prints each run's closing line. Replay them anywhere with
# `xstream-check replay NAME.trace`.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
xsc=$root/build-gpu/bin/xstream-check
out=${OUT:-$root/build-gpu/out}
work=$(mktemp -d)
[ -x "$xsc" ] || { echo "record-corpus.sh: $xsc missing: run test/gpu/run.sh first" >&2; exit 2; }
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(ddp_train fsdp2_train fsdp1_train compile_train hf_gpt2
                                       graphed_callables save_on_cpu timm_train cupy_streams)
for p in "${programs[@]}"; do
  src=$root/examples/torch/real/$p.py
  [ -f "$src" ] || { echo "$p: no $src"; continue; }
  timeout 300 "$xsc" run --record="$work/$p.trace" -- python3 "$src" > "$work/$p.out" 2>&1
  echo "$p: exit $? $(grep -h 'finding(s)' "$work/$p.out" | tail -1)"
done
tar cJf "$out/corpus-traces.tar.xz" -C "$work" .
ls -la "$out/corpus-traces.tar.xz"
