#!/usr/bin/env bash
# On the GPU machine, from the repository root, after a build into
# build-gpu: samples a command natively and under xstream-check with the
# perf of build-perf-tools/ (bench/profile/prepare-perf.sh) and writes, per
# variant, the top DSOs per thread, the top symbols, and the run's output,
# packed into $OUT/profiles.tgz (one file: the device returns at most
# eight).
#
#   bash bench/profile/profile.sh [COMMAND ARGS...]
#
# Default command: the training loop, 300 steps. VARIANTS (default
# "xsc native") picks among xsc, native, nostacks (XSC_PROFILE=no-stacks),
# noadapter (no PyTorch allocator adapter), thread (checker_thread=1),
# inline (checker_thread=0) and hookoff (torch_op_access=0). Reports carry
# sample counts, so that variants compare in absolute terms (a share of a run
# whose idle worker threads spin says little). Before sampling, each
# variant runs once under `perf stat` (CPU time of all threads, context
# switches, migrations): extra CPU time against extra wall time tells work
# from waiting. STAT=0 skips that run; VERBOSITY=1 leaves out the timing
# summary (and the clock reads around each callback it needs); REPORT=one
# makes one report per variant, by thread, DSO and symbol (3000 rows),
# instead of two. STEADY=1 samples only what the command marks through
# perf's control fifos (bench/profile/perf_control.py: the timed steps of
# bench/real/train_step.py); a command that marks nothing gets no sample.
set -u
root=$PWD
tools=$root/build-perf-tools
[ -x "$tools/perf" ] || { echo "profile: $tools/perf missing: run bench/profile/prepare-perf.sh and carry build-perf-tools" >&2; exit 2; }
perf=("$tools/ld-linux-x86-64.so.2" --library-path "$tools/lib" "$tools/perf")
lib=$root/build-gpu/lib/libxstream_check.so
out=${OUT:-$root/build-gpu/profile}
work=$out/prof
mkdir -p "$work"
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(python3 examples/torch/train_prefetch.py --steps 300)
# Every checked variant: the runtime preloaded with these options first.
options=exitcode=0:verbosity=${VERBOSITY:-2}
for v in ${VARIANTS:-xsc native}; do
  case $v in
    xsc) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options") ;;
    nostacks) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options" XSC_PROFILE=no-stacks) ;;
    noadapter) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options" XSC_TORCH_ADAPTER=/nonexistent) ;;
    thread) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options":checker_thread=1) ;;
    inline) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options":checker_thread=0) ;;
    hookoff) env=(LD_PRELOAD="$lib" XSC_OPTIONS="$options":torch_op_access=0) ;;
    native) env=(XSC_PROFILE_NATIVE=1) ;;
    *) echo "profile: unknown variant $v" >&2; exit 2 ;;
  esac
  if [ "${STAT:-1}" != 0 ]; then
    timeout 300 "${perf[@]}" stat -e task-clock,context-switches,cpu-migrations -o "$work/stat-$v.txt" \
      -- env "${env[@]}" "${cmd[@]}" > "$work/stat-run-$v.txt" 2>&1
    echo "profile: $v perf stat: $(grep -h 'steady_s=\|XSC_STEP' "$work/stat-run-$v.txt")"
  fi
  data=$out/$v.data
  # STEADY=1: events start off and the command turns them on and off
  # through perf's control fifos (bench/profile/perf_control.py), so only
  # its timed part is sampled.
  steady=()
  if [ "${STEADY:-0}" = 1 ]; then
    rm -f "$work/perf-ctl" "$work/perf-ack"
    mkfifo "$work/perf-ctl" "$work/perf-ack"
    steady=(-D -1 --control "fifo:$work/perf-ctl,$work/perf-ack")
    env+=(XSC_PERF_CTL="$work/perf-ctl" XSC_PERF_ACK="$work/perf-ack")
  fi
  # The environment goes to the profiled command only, not to perf.
  timeout 300 "${perf[@]}" record -e cpu-clock -F 1999 "${steady[@]}" -o "$data" \
    -- env "${env[@]}" "${cmd[@]}" > "$work/run-$v.txt" 2>&1
  rc=$?
  rm -f "$work/perf-ctl" "$work/perf-ack"
  echo "profile: $v exit $rc; $(grep -h 'steady_s=\|XSC_STEP\|XSC_WORDS\|XSC_OPS' "$work/run-$v.txt")"
  report=("${perf[@]}" report -i "$data" --stdio --no-children -n)
  if [ "${REPORT:-full}" = one ]; then
    # One pass (symbols are loaded once): samples per thread, DSO and
    # symbol, the most sampled first; sums per thread or DSO are made from it.
    timeout 240 "${report[@]}" --sort comm,dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' \
      | head -3000 > "$work/comm-dso-sym-$v.txt"
  else
    timeout 120 "${report[@]}" --sort comm,dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 > "$work/comm-$v.txt"
    timeout 180 "${report[@]}" --sort dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -400 > "$work/sym-$v.txt"
  fi
  rm -f "$data"
done
tar czf "$out/profiles.tgz" -C "$out" prof && rm -rf "$work"
echo "profile: $out/profiles.tgz"
