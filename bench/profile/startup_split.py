#!/usr/bin/env python3
"""Splits the fixed cost xstream-check adds to a short program.

Runs one command under several environments, interleaved (A B C A B C ...),
and prints per variant the median wall time, the median difference to the
native run of the same round, and the median of any `key=value` numbers the
program prints (bench_startup prints context_ms and first_kernel_ms).

    startup_split.py --build build-gpu --reps 20 [--variants a,b] -- CMD ARGS

Variants (names for --variants):
  native          no preload
  empty-preload   LD_PRELOAD of an empty shared library (the loader's share)
  no-cupti        the runtime preloaded, CUPTI not found
  no-cupti-nosig  the same without the fatal-signal report
  bare            CUPTI subscribed, no callback enabled
  full            xstream-check as shipped
  full-nosig      xstream-check without the fatal-signal report
  no-adapter      xstream-check without the PyTorch allocator adapter
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

NUMBER = re.compile(r"\b([a-z_]+_ms)=([0-9.]+)")


def empty_library(workdir):
    """An empty shared library, or None when no C compiler is found."""
    source = os.path.join(workdir, "empty.c")
    library = os.path.join(workdir, "libempty.so")
    with open(source, "w") as f:
        f.write("int xsc_startup_split_empty(void) { return 0; }\n")
    for cc in ("cc", "gcc", "clang"):
        try:
            subprocess.run([cc, "-shared", "-fPIC", "-o", library, source], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return library
        except (OSError, subprocess.CalledProcessError):
            continue
    return None


def variants(build, workdir):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    base = {"LD_PRELOAD": lib, "XSC_OPTIONS": "exitcode=0"}
    no_cupti = dict(base, XSC_CUPTI_LIB="/nonexistent/libcupti.so")
    table = {
        "native": {},
        "no-cupti": no_cupti,
        "no-cupti-nosig": dict(no_cupti, XSC_HANDLE_SEGV="0"),
        "bare": dict(base, XSC_PROFILE="subscribe-bare"),
        "full": base,
        "full-nosig": dict(base, XSC_HANDLE_SEGV="0"),
        "no-adapter": dict(base, XSC_TORCH_ADAPTER="/nonexistent/libxstream_torch.so"),
    }
    empty = empty_library(workdir)
    if empty is not None:
        table["empty-preload"] = {"LD_PRELOAD": empty}
    return table


def run_once(command, extra_env):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(extra_env)
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    wall = time.perf_counter() - start
    numbers = {k: float(v) for k, v in NUMBER.findall(proc.stdout)}
    return wall, numbers, proc.returncode, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--variants", default="")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if not os.path.exists(os.path.join(args.build, "lib", "libxstream_check.so")):
        print(f"startup_split: {args.build}/lib/libxstream_check.so not found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as workdir:
        table = variants(args.build, workdir)
        chosen = [v for v in args.variants.split(",") if v] or list(table)
        unknown = [v for v in chosen if v not in table]
        if unknown:
            print(f"startup_split: unknown variant(s) {', '.join(unknown)}", file=sys.stderr)
            return 2
        if "native" not in chosen:
            chosen.insert(0, "native")
        walls = {v: [] for v in chosen}
        deltas = {v: [] for v in chosen}
        numbers = {v: {} for v in chosen}
        for rep in range(args.reps):
            native_wall = None
            for name in chosen:
                wall, found, rc, output = run_once(command, table[name])
                if rc != 0 and rep == 0:
                    print(f"startup_split: {name} exited {rc}: {output.strip()[-300:]}",
                          file=sys.stderr)
                walls[name].append(wall)
                if name == "native":
                    native_wall = wall
                deltas[name].append(wall - native_wall)
                for key, value in found.items():
                    numbers[name].setdefault(key, []).append(value)
        keys = sorted({k for v in chosen for k in numbers[v]})
        header = ["variant", "runs", "wall ms", "added ms (pairwise)"] + keys
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for name in chosen:
            row = [name, str(len(walls[name])), f"{1000 * statistics.median(walls[name]):.1f}",
                   f"{1000 * statistics.median(deltas[name]):+.1f}"]
            for key in keys:
                values = numbers[name].get(key)
                row.append(f"{statistics.median(values):.2f}" if values else "-")
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
