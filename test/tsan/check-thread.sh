#!/usr/bin/env bash
# The runtime's threads under ThreadSanitizer: libxstream_check.so built
# with -fsanitize=thread in a tree of its own, preloaded into the programs
# of test/preload/Inputs/checker_thread.c (four producer threads at once, a
# flood of events, a fork) and launch_threads.c (four threads launching
# kernels on caching blocks of their own streams, whose words go to the
# checker's thread unlooked; it needs the CUDA headers, for the stand-in
# CUPTI and libcuda), with the checker on its own thread
# (checker_thread=1) and inline. Each run must end normally, say what the
# checker found, and draw no ThreadSanitizer report.
#
#   bash test/tsan/check-thread.sh [BUILD_DIR]     (default build/tsan)
#
# The programs themselves are not instrumented: what is checked is the
# runtime, whose code is. libtsan is preloaded after the runtime, so that
# the runtime's pthread_create interposer hands the new thread to TSan's
# before its own thread-start edge runs instrumented code in it. Stacks
# are off (XSC_PROFILE=no-stacks, XSC_HANDLE_SEGV=0): libunwind's
# thread-local destructor locks a mutex after TSan has let the exiting
# thread go, which TSan cannot follow. A forked child may start the
# checker's thread of its own (die_after_fork=0).
# Exit status 0 when every run held, 1 when one failed, 2 when it cannot run.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/tsan}
tsan_lib=$(${CC:-cc} -print-file-name=libtsan.so)
if [ ! -e "$tsan_lib" ]; then
  echo "check-thread: libtsan.so not found (install the compiler's ThreadSanitizer runtime)"
  exit 2
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DXSC_BUILD_TORCH=OFF -DXSC_BUILD_CLANG_PLUGIN=OFF -DXSC_BUILD_EXAMPLES=OFF \
  -DXSC_BUILD_BENCH=OFF > "$build.configure.log" 2>&1 || { echo "check-thread: configure failed ($build.configure.log)"; exit 2; }
cmake --build "$build" --target xstream_check > "$build.build.log" 2>&1 || { echo "check-thread: build failed ($build.build.log)"; exit 2; }

out=$build/check-thread
rm -rf "$out" && mkdir -p "$out"
${CC:-cc} -std=gnu11 -g -pthread -I "$root/runtime/include" \
  "$root/test/preload/Inputs/checker_thread.c" -o "$out/prog" || exit 2
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
launches=0
if [ -f "$cuda_include/cupti.h" ]; then
  inputs=$root/test/preload/Inputs
  ${CC:-cc} -shared -fPIC -I "$cuda_include" "$inputs/fake_cupti_launches.c" \
    -o "$out/libfakecupti.so" || exit 2
  ${CC:-cc} -shared -fPIC -I "$cuda_include" -Wl,-soname,libcuda.so.1 "$inputs/fake_libcuda.c" \
    -o "$out/libcuda.so.1" || exit 2
  ${CC:-cc} -std=gnu11 -g -pthread -I "$cuda_include" -I "$root/runtime/include" \
    "$inputs/launch_threads.c" -o "$out/launch_threads" -L"$out" -lfakecupti -l:libcuda.so.1 \
    -Wl,-rpath,"$out" || exit 2
  launches=1
else
  echo "check-thread: $cuda_include/cupti.h not found: the launching threads are not run"
fi

status=0
# run NAME EXPECTED MODE ARGS... : one program run, checked; EXPECTED is one
# or more grep patterns, separated by ';', each of which the output must
# match. MODE "launches" runs launch_threads.c (ARGS: its rounds), any other
# checker_thread.c's MODE.
run() {
  local name=$1 expect=$2 missing=0 pattern
  shift 2
  local log=$out/$name-$1.log
  local -a command=("$out/prog" "$@") extra=()
  if [ "$1" = launches ]; then
    command=("$out/launch_threads" "${@:2}")
    extra=(XSC_CUPTI_LIB="$out/libfakecupti.so")
    name=$name:launch_callbacks=driver
  fi
  env LD_PRELOAD="$build/lib/libxstream_check.so $tsan_lib" XSC_PROFILE=no-stacks XSC_HANDLE_SEGV=0 \
    TSAN_OPTIONS=halt_on_error=0:die_after_fork=0:exitcode=67 "${extra[@]}" \
    XSC_OPTIONS="strict=1:exitcode=0:$name" "${command[@]}" > "$log" 2>&1
  local rc=$?
  local races
  races=$(grep -c "WARNING: ThreadSanitizer" "$log")
  IFS=';' read -ra patterns <<< "$expect"
  for pattern in "${patterns[@]}"; do grep -q "$pattern" "$log" || missing=1; done
  if [ "$rc" -ne 0 ] || [ "$races" -ne 0 ] || [ "$missing" -ne 0 ]; then
    echo "check-thread: FAIL $name $*: exit $rc, $races ThreadSanitizer reports, expected output missing: $missing ($log)"
    status=1
  else
    echo "check-thread: ok $name $*"
  fi
}
for mode in checker_thread=1 checker_thread=0; do
  run "$mode" "findings now: 1" flood 20000
  run "$mode" "findings now: [1-9]" threads
  # Without stacks the child's finding and the parent's are one site.
  run "$mode" "child findings: [1-9];child exit: 0;parent findings: 1" fork
done
if [ "$launches" = 1 ]; then
  run checker_thread=1 "handed over 8002;findings now: 1" launches 1000
  run checker_thread=0 "looked up 8002, handed over 0;findings now: 1" launches 1000
fi
[ $status -eq 0 ] && echo "check-thread: PASS" || echo "check-thread: FAIL"
exit $status
