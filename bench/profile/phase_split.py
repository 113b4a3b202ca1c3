#!/usr/bin/env python3
"""Splits a short CUDA program's wall time around exit, natively and checked.

Every variant runs with bench/profile/phase_clock.c preloaded (built here
with the C compiler), interleaved (A B C A B C ...). Per variant it prints
the medians of:
  start      exec and loading, up to the phase clock's constructor
  main       up to main's return (context creation and the program's work)
  handlers   the program's exit handlers and destructors (the statically
             linked CUDA runtime's teardown among them)
  exit_tail  the rest: the checker's report when it has one, the later
             libraries' destructors (libcupti's, libcuda's) and the kernel
             releasing the process
  cpu        user + system CPU time of the whole process
  faults     its minor page faults (fresh memory touched)
and the median difference of the wall time to the native run of the same
round.

    phase_split.py --build build-gpu --reps 15 [--variants a,b] -- CMD ARGS

Variants: native, native-exit-early (the phase clock ends the process with
_exit from its exit handler), bare (CUPTI subscribed, no callback), full
(xstream-check, exitcode=0), full-exitcode (xstream-check with its default
exit code, 66 on a finding), bare-cupti-buffers and full-cupti-buffers
(the same with CUPTI's default of 3 pre-allocated activity buffers per
context, XSC_CUPTI_DEVICE_BUFFERS=3).
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
PHASES = re.compile(r"phases ctor=(\d+) main_return=(\d+) dtor=(\d+) exit_handler=(\d+)")


def build_phase_clock(workdir):
    library = os.path.join(workdir, "libphase_clock.so")
    source = os.path.join(HERE, "phase_clock.c")
    for cc in ("cc", "gcc", "clang"):
        try:
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            return library
        except (OSError, subprocess.CalledProcessError):
            continue
    return None


def variant_table(build, clock):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    checked = {"LD_PRELOAD": f"{clock}:{lib}"}
    return {
        "native": {"LD_PRELOAD": clock},
        "native-exit-early": {"LD_PRELOAD": clock, "XSC_PHASE_EXIT_EARLY": "1"},
        "bare": dict(checked, XSC_PROFILE="subscribe-bare", XSC_OPTIONS="exitcode=0"),
        "full": dict(checked, XSC_OPTIONS="exitcode=0"),
        "full-exitcode": dict(checked),
        "bare-cupti-buffers": dict(checked, XSC_PROFILE="subscribe-bare", XSC_OPTIONS="exitcode=0",
                                   XSC_CUPTI_DEVICE_BUFFERS="3"),
        "full-cupti-buffers": dict(checked, XSC_OPTIONS="exitcode=0", XSC_CUPTI_DEVICE_BUFFERS="3"),
    }


def run_once(command, extra_env, phase_file):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(extra_env)
    env["XSC_PHASE_FILE"] = phase_file
    if os.path.exists(phase_file):
        os.unlink(phase_file)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic_ns()
    proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    end = time.monotonic_ns()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_ms = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3
    faults = after.ru_minflt - before.ru_minflt
    return start, end, proc.returncode, proc.stderr.decode(errors="replace"), cpu_ms, faults


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
    with tempfile.TemporaryDirectory() as workdir:
        clock = build_phase_clock(workdir)
        if clock is None:
            print("phase_split: no C compiler to build the phase clock", file=sys.stderr)
            return 2
        table = variant_table(args.build, clock)
        chosen = [v for v in args.variants.split(",") if v] or list(table)
        unknown = [v for v in chosen if v not in table]
        if unknown:
            print(f"phase_split: unknown variant(s) {', '.join(unknown)}", file=sys.stderr)
            return 2
        if "native" not in chosen:
            chosen.insert(0, "native")
        phase_file = os.path.join(workdir, "phases.txt")
        rows = {v: {"wall": [], "added": [], "start": [], "main": [], "handlers": [],
                    "exit_tail": [], "cpu": [], "faults": []} for v in chosen}
        codes = {v: set() for v in chosen}
        for _ in range(args.reps):
            native_wall = None
            for name in chosen:
                start, end, code, stderr, cpu_ms, faults = run_once(command, table[name], phase_file)
                codes[name].add(code)
                wall = (end - start) / 1e6
                if name == "native":
                    native_wall = wall
                row = rows[name]
                row["wall"].append(wall)
                row["added"].append(wall - native_wall)
                try:
                    with open(phase_file) as f:
                        found = PHASES.search(f.read())
                except OSError:
                    found = None
                if found is None:
                    print(f"phase_split: {name}: no phase line; stderr: {stderr.strip()[-300:]}",
                          file=sys.stderr)
                    continue
                ctor, main_return, _dtor, handler = (int(x) for x in found.groups())
                row["start"].append((ctor - start) / 1e6)
                row["main"].append((main_return - ctor) / 1e6)
                row["handlers"].append((handler - main_return) / 1e6)
                row["exit_tail"].append((end - handler) / 1e6)
                row["cpu"].append(cpu_ms)
                row["faults"].append(faults)
        keys = ["wall", "added", "start", "main", "handlers", "exit_tail", "cpu", "faults"]
        units = {k: f"{k} ms" for k in keys}
        units["faults"] = "faults"
        print("| variant | runs | exit codes | " + " | ".join(units[k] for k in keys) + " |")
        print("|" + " --- |" * (3 + len(keys)))
        for name in chosen:
            row = rows[name]
            cells = [(f"{statistics.median(row[k]):.0f}" if k == "faults" else
                      f"{statistics.median(row[k]):.1f}") if row[k] else "-" for k in keys]
            codes_text = ",".join(str(c) for c in sorted(codes[name]))
            print(f"| {name} | {len(row['wall'])} | {codes_text} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
