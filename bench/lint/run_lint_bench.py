#!/usr/bin/env python3
"""Times xstream-lint against `clang++ -fsyntax-only` on the same translation
unit with the same flags, and prints the ratio.

CPU time (user + system of the child) is the primary measure: it does not
depend on what else the machine is doing. Wall time is printed too.

  run_lint_bench.py --lint build/bin/xstream-lint [--clang clang++-22]
                    [--reps 5] [--cuda-path /usr/local/cuda] [--max-ratio 1.3] [FILE]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, proc.stderr, cpu, wall


def measure(name, cmd, reps, ok_codes):
    cpus, walls = [], []
    for i in range(reps + 1):  # the first run warms the file cache; not counted
        rc, err, cpu, wall = run_once(cmd)
        if rc not in ok_codes:
            sys.exit(f"{name} failed (exit {rc}):\n{err}")
        if i:
            cpus.append(cpu)
            walls.append(wall)
    return statistics.median(cpus), statistics.median(walls), min(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=os.path.join(HERE, "stream_pipelines.cu"))
    ap.add_argument("--lint", required=True)
    ap.add_argument("--clang", default="clang++-22")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cuda-path", default=os.environ.get("CUDA_PATH", "/usr/local/cuda"))
    ap.add_argument("--max-ratio", type=float, default=0.0, help="fail above this CPU-time ratio")
    args = ap.parse_args()

    # The flags xstream-lint adds to .cu files by default, spelled out so that
    # both tools parse exactly the same thing.
    flags = ["-x", "cuda", "--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version",
             "--cuda-path=" + args.cuda_path, "-isystem", os.path.join(args.cuda_path, "include", "cccl"),
             "-std=c++17"]
    clang_cmd = [args.clang, "-fsyntax-only", *flags, args.file]
    lint_cmd = [args.lint, args.file, "--", *flags]

    c_cpu, c_wall, c_min = measure("clang", clang_cmd, args.reps, {0})
    l_cpu, l_wall, l_min = measure("xstream-lint", lint_cmd, args.reps, {0, 1})
    ratio = l_cpu / c_cpu
    lines = sum(1 for _ in open(args.file))
    print(f"file: {os.path.basename(args.file)} ({lines} lines + CUB), {args.reps} runs each, median")
    print(f"{'':24}{'cpu s':>10}{'min cpu s':>12}{'wall s':>10}")
    print(f"{'clang++ -fsyntax-only':24}{c_cpu:10.2f}{c_min:12.2f}{c_wall:10.2f}")
    print(f"{'xstream-lint':24}{l_cpu:10.2f}{l_min:12.2f}{l_wall:10.2f}")
    print(f"ratio (cpu): {ratio:.3f}   ratio (min cpu): {l_min / c_min:.3f}   ratio (wall): {l_wall / c_wall:.3f}")
    if args.max_ratio and ratio > args.max_ratio:
        print(f"FAIL: ratio {ratio:.3f} above {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
