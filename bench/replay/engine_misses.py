#!/usr/bin/env python3
"""The instructions and cache misses the program's thread spends per event
on the checker, by event kind, on traces recorded from real programs,
under callgrind's cache simulation.

    python3 bench/replay/engine_misses.py [--producer engine|inline|thread]
        [--touch-kib 32] [--quarantine 1024] TRACE...

Runs build/bin/xsc_bench_replay's BM_CheckerOnRecordedTrace once per trace
under `valgrind --tool=callgrind --cache-sim=yes`, counting only inside
its producer_step, with XSC_BENCH_TOUCH_KIB (the program's own reads
between two events, which evict the checker's data) and
XSC_BENCH_QUARANTINE (a smaller quarantine, so that a short trace reaches a
long run's steady state). --producer (XSC_BENCH_PRODUCER) says what the
program's thread does per event: `engine`, feed the checker; `inline`, also
ask it what the launch path and the allocator adapter ask (checker_thread=0);
`thread`, ask the AllocationView and have it follow the event, the checker
running elsewhere (checker_thread=1). Prints, per trace, the events and
the instructions, first-level misses and last-level misses per event, and
per kind of event (use, allocation, free, completed free) where the
checker is fed on this thread.

The simulated last-level cache is 2 MiB (--ll-bytes), far smaller than a
server's; callgrind models no hardware prefetcher; and about one miss per
event is the benchmark's own read of its recorded event (a live process
builds the event on its stack). The counts compare variants on the same
trace; they are not times.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

KINDS = [
    ("all", "all events"),
    ("on_use", "use"),
    ("on_alloc", "allocation"),
    ("on_free", "free"),
    ("on_free_completed", "completed free"),
]

# The totals line: only producer_step is counted.
TOTALS = re.compile(
    r"^\s*([\d,]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+PROGRAM TOTALS")
# One caller line of callgrind_annotate's inclusive listing:
#   <Ir> <D1mr> <D1mw> <DLmr> <DLmw>  => file:xsc::Checker::Impl::on_use(...) (32,750x)
CALL = re.compile(
    r"^\s*([\d,]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+=>"
    r" .*xsc::Checker::Impl::(on_\w+)\(.*\(([\d,]+)x\)\s*$"
)


def number(text):
    return 0 if text == "." else int(text.replace(",", ""))


def fail(message):
    print("engine_misses: " + message, file=sys.stderr)
    sys.exit(2)


def measure(bench, trace, producer, touch_kib, quarantine, ll_bytes, work):
    out = os.path.join(work, "callgrind.out")
    env = dict(os.environ)
    env.update(
        XSC_BENCH_TRACE=trace,
        XSC_BENCH_PRODUCER=producer,
        XSC_BENCH_TOUCH_KIB=str(touch_kib),
        XSC_BENCH_QUARANTINE=str(quarantine),
    )
    run = subprocess.run(
        [
            "valgrind", "--tool=callgrind", "--cache-sim=yes",
            "--LL=%d,16,64" % ll_bytes,
            "--callgrind-out-file=" + out,
            "--toggle-collect=*producer_step*",
            bench, "--benchmark_filter=BM_CheckerOnRecordedTrace",
            "--benchmark_min_time=0.0001", "--benchmark_format=json",
        ],
        env=env, capture_output=True, text=True,
    )
    if run.returncode != 0 or not os.path.exists(out):
        last = (run.stderr.strip().splitlines() or ["no output"])[-1]
        fail("%s: the benchmark failed under valgrind (%s)" % (trace, last))
    try:
        result = json.loads(run.stdout)["benchmarks"][0]
    except (ValueError, KeyError, IndexError):
        fail("%s: the benchmark wrote no result" % trace)
    if result.get("error_occurred"):
        fail("%s: %s" % (trace, result.get("error_message", "the benchmark failed")))
    events = int(result["events"]) * int(result["iterations"])
    listing = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--show=Ir,D1mr,D1mw,DLmr,DLmw",
         "--threshold=100", out],
        capture_output=True, text=True,
    ).stdout
    listing = re.sub(r"\([ 0-9.]+%\)", "", listing)
    found = {}
    for line in listing.splitlines():
        total = TOTALS.match(line)
        if total:
            ir, d1r, d1w, llr, llw = (number(x) for x in total.groups())
            found["all"] = (events, ir, d1r + d1w, llr, llw)
            continue
        m = CALL.match(line)
        if not m:
            continue
        ir, d1r, d1w, llr, llw = (number(x) for x in m.groups()[:5])
        kind, calls = m.group(6), number(m.group(7))
        # A function is listed once per caller; each on_* has one caller
        # (on_event) in this build.
        if kind not in found or calls > found[kind][0]:
            found[kind] = (calls, ir, d1r + d1w, llr, llw)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE")
    parser.add_argument("--producer", choices=["engine", "inline", "thread"], default="engine")
    parser.add_argument("--touch-kib", type=int, default=32)
    parser.add_argument("--quarantine", type=int, default=1024)
    parser.add_argument("--ll-bytes", type=int, default=2 << 20)
    parser.add_argument("--bench", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin",
        "xsc_bench_replay"))
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            fail("%s is not on PATH" % tool)
    if not os.access(args.bench, os.X_OK):
        fail("%s is not built (configure with -DXSC_BUILD_BENCH=ON)" % args.bench)
    for trace in args.traces:
        if not os.path.isfile(trace):
            fail("%s: no such file" % trace)
    print("producer %s, touch %d KiB per event, quarantine %d, last-level cache %d KiB" %
          (args.producer, args.touch_kib, args.quarantine, args.ll_bytes >> 10))
    with tempfile.TemporaryDirectory() as work:
        for trace in args.traces:
            found = measure(args.bench, trace, args.producer, args.touch_kib,
                            args.quarantine, args.ll_bytes, work)
            if "all" not in found:
                fail("%s: no events were counted" % trace)
            print(os.path.basename(trace))
            print("  %-15s %8s %8s %8s %8s %8s" %
                  ("event", "calls", "instr", "L1 miss", "LL read", "LL write"))
            for kind, label in KINDS:
                if kind not in found:
                    continue
                calls, ir, d1, llr, llw = found[kind]
                print("  %-15s %8d %8.0f %8.1f %8.2f %8.2f" %
                      (label, calls, ir / calls, d1 / calls, llr / calls, llw / calls))


if __name__ == "__main__":
    main()
