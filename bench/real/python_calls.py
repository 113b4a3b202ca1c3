#!/usr/bin/env python3
"""Python calls per timed step of bench/real/train_step.py, function by function.

    python3 bench/real/python_calls.py --out FILE.json WORKLOAD [train_step.py options]
    python3 bench/real/python_calls.py --compare NATIVE.json CHECKED.json [--top 40]

The first form runs train_step.py in this process with a profile function on
every thread (threading.setprofile_all_threads, Python 3.12+) during the
timed steps only (train_step.py's sampling(True)/sampling(False) marks;
before 3.12, only the calling thread and threads started later), and
writes {function: calls per step}: each Python function by file, first line
and name, and each C function called from Python by its qualified name. Run
it natively and under the runtime (LD_PRELOAD) to see whether the checked
run executes other Python code; the profile function slows the steps, so
its times say nothing. XSC_BENCH_TRAIN_STEP names another step program
with the same sampling marks and main() (the tests' stand-in). The second
form prints both totals and the functions whose counts differ.
"""
import argparse
import collections
import importlib.util
import json
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def count_steps(out_path, train_args):
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "..", "profile"))
    import perf_control

    counts = collections.Counter()

    own = []  # sampling's code: its own calls are not the step's

    def profile(frame, event, arg):
        if frame.f_code in own or (frame.f_back is not None and frame.f_back.f_code in own):
            return
        if event == "call":
            code = frame.f_code
            counts[f"{code.co_filename}:{code.co_firstlineno}:{code.co_name}"] += 1
        elif event == "c_call":
            counts["C:" + getattr(arg, "__qualname__", repr(arg))] += 1

    def sampling(on):
        if hasattr(threading, "setprofile_all_threads"):
            threading.setprofile_all_threads(profile if on else None)
        else:
            threading.setprofile(profile if on else None)
            sys.setprofile(profile if on else None)
        return True

    own.append(sampling.__code__)
    # The step takes sampling from perf_control at import.
    perf_control.sampling = sampling
    step_path = os.environ.get("XSC_BENCH_TRAIN_STEP", os.path.join(HERE, "train_step.py"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(step_path)))
    spec = importlib.util.spec_from_file_location("train_step", step_path)
    train_step = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_step)

    steps = 100
    if "--steps" in train_args:
        steps = int(train_args[train_args.index("--steps") + 1])
    sys.argv = ["train_step.py"] + train_args
    status = train_step.main()
    with open(out_path, "w") as f:
        json.dump({name: n / steps for name, n in counts.items()}, f, indent=0, sort_keys=True)
    return status


def compare(native_path, checked_path, top):
    with open(native_path) as f:
        native = json.load(f)
    with open(checked_path) as f:
        checked = json.load(f)
    print(f"calls per step: native {sum(native.values()):.1f}, "
          f"checked {sum(checked.values()):.1f}")
    diffs = sorted(((checked.get(k, 0) - native.get(k, 0), k) for k in set(native) | set(checked)),
                   key=lambda d: -abs(d[0]))
    diffs = [d for d in diffs if abs(d[0]) > 1e-9]
    print(f"functions whose calls per step differ: {len(diffs)}")
    for delta, name in diffs[:top]:
        print(f"{delta:+10.2f}  {name}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="where the first form writes its counts")
    parser.add_argument("--compare", nargs=2, metavar=("NATIVE", "CHECKED"))
    parser.add_argument("--top", type=int, default=40)
    args, rest = parser.parse_known_args()
    if args.compare:
        return compare(*args.compare, args.top)
    if not args.out or not rest:
        parser.error("give --out FILE and a workload, or --compare NATIVE CHECKED")
    return count_steps(args.out, rest)


if __name__ == "__main__":
    sys.exit(main())
