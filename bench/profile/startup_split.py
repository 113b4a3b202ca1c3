#!/usr/bin/env python3
"""Splits the fixed cost xstream-check adds to a short program.

Runs one command under several environments, interleaved (A B C A B C ...),
and prints per variant the median wall time, the median difference to the
native run of the same round, the medians of the process's CPU time and
minor page faults, and the medians of any `key=value` numbers the program
prints (bench_startup prints context_ms and first_kernel_ms).

    startup_split.py --build build-gpu --reps 20 [--phases] [--variants a,b] -- CMD ARGS

--phases preloads bench/profile/phase_clock.c (built here with the C
compiler) in front of every variant and splits each run's wall time:
  start      exec and loading, up to the phase clock's constructor (the
             runtime's constructor, with CUPTI's subscription, falls here)
  main       up to main's return (context creation and the program's work)
  handlers   the program's exit handlers and destructors (the statically
             linked CUDA runtime's teardown among them)
  exit_tail  the rest up to the reaping: the runtime's report, the later
             libraries' destructors (libcupti's, libcuda's) and the kernel
             releasing the process

Variants (names for --variants):
  native              no preload
  native-exit-early   (--phases only) the phase clock ends the process with
                      _exit from its exit handler, skipping the later
                      libraries' destructors, the driver's among them
  empty-preload       LD_PRELOAD of an empty shared library (the loader's share)
  no-cupti            the runtime preloaded, CUPTI not found
  no-cupti-nosig      the same without the fatal-signal report
  bare                CUPTI subscribed, no callback enabled
  bare-cupti-buffers  the same with CUPTI's default of 3 activity buffers
                      pre-allocated per context (XSC_CUPTI_DEVICE_BUFFERS=3)
  full                xstream-check as shipped (exitcode=0)
  full-exitcode       xstream-check with its default exit code (66 on a finding)
  full-cupti-buffers  xstream-check with CUPTI's 3 activity buffers
  full-nosig          xstream-check without the fatal-signal report
  no-adapter          xstream-check without the PyTorch allocator adapter
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NUMBER = re.compile(r"\b([a-z_]+_ms)=([0-9.]+)")
PHASES = re.compile(r"phases ctor=(\d+) main_return=(\d+) dtor=(\d+) exit_handler=(\d+)")


def compile_library(workdir, name, source_text=None, source_path=None):
    """A shared library built from source, or None when no C compiler is found."""
    library = os.path.join(workdir, name)
    if source_path is None:
        source_path = os.path.join(workdir, name + ".c")
        with open(source_path, "w") as f:
            f.write(source_text)
    for cc in ("cc", "gcc", "clang"):
        try:
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", library, source_path, "-ldl"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return library
        except (OSError, subprocess.CalledProcessError):
            continue
    return None


def variants(build, workdir, clock):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    base = {"LD_PRELOAD": lib, "XSC_OPTIONS": "exitcode=0"}
    no_cupti = dict(base, XSC_CUPTI_LIB="/nonexistent/libcupti.so")
    bare = dict(base, XSC_PROFILE="subscribe-bare")
    table = {
        "native": {},
        "no-cupti": no_cupti,
        "no-cupti-nosig": dict(no_cupti, XSC_HANDLE_SEGV="0"),
        "bare": bare,
        "bare-cupti-buffers": dict(bare, XSC_CUPTI_DEVICE_BUFFERS="3"),
        "full": base,
        "full-exitcode": {"LD_PRELOAD": lib},
        "full-cupti-buffers": dict(base, XSC_CUPTI_DEVICE_BUFFERS="3"),
        "full-nosig": dict(base, XSC_HANDLE_SEGV="0"),
        "no-adapter": dict(base, XSC_TORCH_ADAPTER="/nonexistent/libxstream_torch.so"),
    }
    empty = compile_library(workdir, "libempty.so",
                            source_text="int xsc_startup_split_empty(void) { return 0; }\n")
    if empty is not None:
        table["empty-preload"] = {"LD_PRELOAD": empty}
    if clock is not None:
        table["native-exit-early"] = {"XSC_PHASE_EXIT_EARLY": "1"}
        for env in table.values():
            env["LD_PRELOAD"] = ":".join(p for p in (clock, env.get("LD_PRELOAD")) if p)
    return table


def run_once(command, extra_env, phase_file):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(extra_env)
    if phase_file is not None:
        env["XSC_PHASE_FILE"] = phase_file
        if os.path.exists(phase_file):
            os.unlink(phase_file)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic_ns()
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    end = time.monotonic_ns()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = {k: float(v) for k, v in NUMBER.findall(proc.stdout)}
    found["cpu_ms"] = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3
    found["faults"] = after.ru_minflt - before.ru_minflt
    if phase_file is not None:
        try:
            with open(phase_file) as f:
                phases = PHASES.search(f.read())
        except OSError:
            phases = None
        if phases is not None:
            ctor, main_return, _dtor, handler = (int(x) for x in phases.groups())
            found["start_ms"] = (ctor - start) / 1e6
            found["main_ms"] = (main_return - ctor) / 1e6
            found["handlers_ms"] = (handler - main_return) / 1e6
            found["exit_tail_ms"] = (end - handler) / 1e6
    return (end - start) / 1e9, found, proc.returncode, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--variants", default="")
    parser.add_argument("--phases", action="store_true",
                        help="preload the phase clock and split each run's wall time")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    if not os.path.exists(os.path.join(args.build, "lib", "libxstream_check.so")):
        print(f"startup_split: {args.build}/lib/libxstream_check.so not found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as workdir:
        clock = None
        if args.phases:
            clock = compile_library(workdir, "libphase_clock.so",
                                    source_path=os.path.join(HERE, "phase_clock.c"))
            if clock is None:
                print("startup_split: no C compiler to build the phase clock", file=sys.stderr)
                return 2
        table = variants(args.build, workdir, clock)
        chosen = [v for v in args.variants.split(",") if v] or list(table)
        unknown = [v for v in chosen if v not in table]
        if unknown:
            print(f"startup_split: unknown variant(s) {', '.join(unknown)}"
                  f"{' (native-exit-early needs --phases)' if 'native-exit-early' in unknown else ''}",
                  file=sys.stderr)
            return 2
        if "native" not in chosen:
            chosen.insert(0, "native")
        phase_file = os.path.join(workdir, "phases.txt") if clock is not None else None
        walls = {v: [] for v in chosen}
        deltas = {v: [] for v in chosen}
        numbers = {v: {} for v in chosen}
        codes = {v: set() for v in chosen}
        for rep in range(args.reps):
            native_wall = None
            for name in chosen:
                wall, found, rc, output = run_once(command, table[name], phase_file)
                codes[name].add(rc)
                if rc != 0 and rep == 0:
                    print(f"startup_split: {name} exited {rc}: {output.strip()[-300:]}",
                          file=sys.stderr)
                walls[name].append(wall)
                if name == "native":
                    native_wall = wall
                deltas[name].append(wall - native_wall)
                for key, value in found.items():
                    numbers[name].setdefault(key, []).append(value)
        order = ["start_ms", "main_ms", "handlers_ms", "exit_tail_ms", "cpu_ms", "faults"]
        keys = [k for k in order if any(k in numbers[v] for v in chosen)]
        keys += sorted({k for v in chosen for k in numbers[v]} - set(order))
        header = ["variant", "runs", "exit codes", "wall ms", "added ms (pairwise)"] + keys
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for name in chosen:
            row = [name, str(len(walls[name])), ",".join(str(c) for c in sorted(codes[name])),
                   f"{1000 * statistics.median(walls[name]):.1f}",
                   f"{1000 * statistics.median(deltas[name]):+.1f}"]
            for key in keys:
                values = numbers[name].get(key)
                if not values:
                    row.append("-")
                else:
                    row.append(f"{statistics.median(values):.0f}" if key == "faults"
                               else f"{statistics.median(values):.2f}")
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
