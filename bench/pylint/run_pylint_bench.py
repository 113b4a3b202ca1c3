#!/usr/bin/env python3
"""Times the Python check (python -m xstream_check.lint) against
`python3 -m py_compile` on the same files: files/s and lines/s, one process
each (one core), CPU time of the child (user + system) as the primary
measure, wall time too.

  run_pylint_bench.py [--reps 5] [--min-lines-per-s 20000] [TREE]

TREE defaults to the installed torch's torch/distributed. The check's own
numbers come from a second, in-process pass that also counts what it did:
functions interpreted, frees checked, uses on another stream.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "python"))


def default_tree():
    try:
        import torch  # noqa: F401  (only to find it)
    except ImportError:
        sys.exit("no torch here: pass the tree to time (e.g. an unpacked wheel's torch/distributed)")
    return os.path.join(os.path.dirname(torch.__file__), "distributed")


def python_files(tree):
    out = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".py"))
    return out


def run_once(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, proc.stderr, cpu, wall


def measure(name, cmd, reps, ok_codes, env):
    cpus, walls = [], []
    for i in range(reps + 1):  # the first run warms the file cache; not counted
        rc, err, cpu, wall = run_once(cmd, env)
        if rc not in ok_codes:
            sys.exit(f"{name} failed (exit {rc}):\n{err[-2000:]}")
        if i:
            cpus.append(cpu)
            walls.append(wall)
    return statistics.median(cpus), statistics.median(walls)


def counts(files):
    """What the check did on these files (in-process, not timed)."""
    sys.path.insert(0, PYTHON_DIR)
    from xstream_check.lint.report import check_file
    stats = {}
    warnings = 0
    for f in files:
        found, _ = check_file(f, stats)
        warnings += len(found)
    stats["warnings"] = warnings
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--min-lines-per-s", type=float, default=0,
                    help="exit 1 when the check's lines/s (CPU time) is below this")
    args = ap.parse_args()
    tree = args.tree or default_tree()
    files = python_files(tree)
    if not files:
        sys.exit(f"no .py files under {tree}")
    lines = 0
    for f in files:
        with open(f, "rb") as fh:
            lines += fh.read().count(b"\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        # py_compile writes .pyc files; keep them out of the tree.
        compile_env = dict(env, PYTHONPYCACHEPREFIX=tmp)
        compile_cpu, compile_wall = measure("py_compile", [args.python, "-m", "py_compile"] + files,
                                            args.reps, (0,), compile_env)
    lint_cpu, lint_wall = measure("xstream_check.lint", [args.python, "-m", "xstream_check.lint"] + files,
                                  args.reps, (0, 1, 2), env)
    stats = counts(files)
    print(f"tree: {tree}")
    print(f"files: {len(files)}, lines: {lines}, python: {args.python}")
    print(f"{'command':<28} {'CPU s':>8} {'wall s':>8} {'files/s':>9} {'lines/s':>10}")
    for name, cpu, wall in (("python3 -m py_compile", compile_cpu, compile_wall),
                            ("python3 -m xstream_check.lint", lint_cpu, lint_wall)):
        print(f"{name:<28} {cpu:8.2f} {wall:8.2f} {len(files) / cpu:9.0f} {lines / cpu:10.0f}")
    print(f"check / py_compile (CPU): {lint_cpu / compile_cpu:.2f}")
    print("check's work: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.items())))
    if args.min_lines_per_s and lines / lint_cpu < args.min_lines_per_s:
        print(f"FAIL: {lines / lint_cpu:.0f} lines/s < {args.min_lines_per_s:.0f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
