#!/usr/bin/env bash
# The runtime's threads under ThreadSanitizer: libxstream_check.so built
# with -fsanitize=thread in a tree of its own, preloaded into the programs
# of test/preload/Inputs/checker_thread.c (four producer threads at once, a
# flood of events, a fork), with the checker on its own thread
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

status=0
# run NAME EXPECTED MODE... : one program run, checked; EXPECTED is one or
# more grep patterns, separated by ';', each of which the output must match.
run() {
  local name=$1 expect=$2 missing=0 pattern
  shift 2
  env LD_PRELOAD="$build/lib/libxstream_check.so $tsan_lib" XSC_PROFILE=no-stacks XSC_HANDLE_SEGV=0 \
    TSAN_OPTIONS=halt_on_error=0:die_after_fork=0:exitcode=67 \
    XSC_OPTIONS="strict=1:exitcode=0:$name" "$out/prog" "$@" > "$out/$name-$1.log" 2>&1
  local rc=$?
  local races
  races=$(grep -c "WARNING: ThreadSanitizer" "$out/$name-$1.log")
  IFS=';' read -ra patterns <<< "$expect"
  for pattern in "${patterns[@]}"; do grep -q "$pattern" "$out/$name-$1.log" || missing=1; done
  if [ "$rc" -ne 0 ] || [ "$races" -ne 0 ] || [ "$missing" -ne 0 ]; then
    echo "check-thread: FAIL $name $*: exit $rc, $races ThreadSanitizer reports, expected output missing: $missing ($out/$name-$1.log)"
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
[ $status -eq 0 ] && echo "check-thread: PASS" || echo "check-thread: FAIL"
exit $status
