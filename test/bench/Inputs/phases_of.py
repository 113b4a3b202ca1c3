"""Feeds bench/run_all.py's phases_of a checked run's output and the span
the harness measured, and prints the parts it finds."""
import sys

sys.path.insert(0, sys.argv[1])
import run_all  # noqa: E402

OUTPUT = """step 0
xstream-check: 0 finding(s) (0 suppressed)
xstream-check: timing: start-up 5.5 ms (CUPTI load and subscription 5.0 ms), 424 callbacks handled in 1.4 ms, report at exit 4.2 ms
xstream-check: timing: CUPTI loading 0.5 ms, cuptiSubscribe 4.2 ms, enabling callbacks 0.3 ms; CLOCK_MONOTONIC ms: runtime loaded 1010.000, first callback 1020.000, report at exit 1300.000 to 1304.200
"""
for label, span in (("inside", (1000e6, 1330e6)), ("another clock", (5000e6, 5330e6))):
    phases = run_all.phases_of(OUTPUT, span)
    print(label + ":", "none" if phases is None else
          ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
print("no timing lines:", run_all.phases_of("step 0\n", (1000e6, 1330e6)))
