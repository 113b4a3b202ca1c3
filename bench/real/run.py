#!/usr/bin/env python3
"""Real training workloads, native against checked, interleaved, pair by pair.

    python3 bench/real/run.py --build build [--pairs 5] [--workloads eager,hf,fsdp2,ddp]
    python3 bench/real/run.py --build build --workloads compile
    python3 bench/real/run.py --build build --profile --pairs 3 --workloads eager
    python3 bench/real/run.py --build build --variants thread,parts
    python3 bench/real/run.py --build build --cpus gpu
    python3 bench/real/run.py --build build --workloads ddp+item

Each pair runs the workload (bench/real/train_step.py) natively and under
the runtime (LD_PRELOAD, XSC_OPTIONS unset: every check on), in alternating
order, and reads the program's steady state (median ms/step after its
warm-up) and the whole process's wall time. Each pair's steady states are
printed as it ends (a command cut short keeps the pairs it finished); per
workload then each pair's ratios and their median, both sides of each
pair, and the warm-up (compilation) apart.

Under each variant it also splits the process's wall time into phases
(train_step.py's XSC_PHASES marks: launch, import, setup, warm-up, steps,
finish, exit), each the median of its runs with, for the checked variants,
the median difference to native's pair by pair: where the whole process's
extra time lies.

A workload named WORKLOAD+item reads the loss on the host at every step
(loss.item(), a copy into pinned memory and a synchronization), as a loop
that logs it does; WORKLOAD+batchN runs the step on N sequences instead of
64 (the MLP workloads: more GPU work for the same host work). Suffixes
combine: fsdp2+batch256+item.

--profile also runs, in each pair, the variants that split the checked
cost (docs/performance-knobs.md), and prints where the steady-state time
goes:
  CUPTI        XSC_PROFILE=subscribe-only (callbacks return at once) - native
  stacks       full - XSC_PROFILE=no-stacks
  op hook      full - torch_op_access=0
  interposers  full - cublas_access=0:cudnn_access=0
  checker etc. full - native - the four above (event processing, locks)
Expected run time on an H200: about 6 s per process for eager/hf/ddp/fsdp2
(import, CUDA start-up, 10 + 100 steps), 20-40 s for compile (Inductor; its
cache makes later processes faster): 5 pairs of eager,hf,fsdp2,ddp about
4 minutes, 5 pairs of compile about 5 minutes, --profile --pairs 3 of one
workload about 2 minutes.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# XSC_BENCH_TRAIN_STEP: another script in train_step.py's place (the tests'
# stand-in, test/bench/real-run.test).
STEP = os.environ.get("XSC_BENCH_TRAIN_STEP") or os.path.join(HERE, "train_step.py")

PROFILE_VARIANTS = {
    "no-stacks": {"XSC_PROFILE": "no-stacks"},
    "hook off": {"XSC_OPTIONS": "torch_op_access=0"},
    "interposers off": {"XSC_OPTIONS": "cublas_access=0:cudnn_access=0"},
    "subscribe-only": {"XSC_PROFILE": "subscribe-only", "XSC_OPTIONS": "launch_callbacks=driver"},
}
# Variants run only when asked for (--variants).
EXTRA_VARIANTS = {
    "no-backward-stacks": {"XSC_PROFILE": "no-backward-stacks"},
    # Every check on, each part of the runtime's host time counted inside
    # the process (runtime/timing.h): train_step.py prints it per step.
    "parts": {"XSC_PROFILE": "parts"},
    # Every check on, the checker on a thread of the runtime's own
    # (runtime/checker_thread.cpp): what that saves the program's threads.
    "thread": {"XSC_OPTIONS": "checker_thread=1"},
    # Every check on, the checker fed on the thread that made each event.
    "inline": {"XSC_OPTIONS": "checker_thread=0"},
    # The runtime without the PyTorch adapter: CUDA calls alone, no
    # allocator blocks, operator writes or Python stacks.
    "no-adapter": {"XSC_TORCH_ADAPTER": "/nonexistent/libxstream_torch.so"},
}


def parse_cpus(text):
    """CPU numbers from "0-3,8" (a cpulist, as /sys writes them)."""
    cpus = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        low, _, high = item.partition("-")
        try:
            cpus.update(range(int(low), int(high or low) + 1))
        except ValueError:
            sys.exit(f"run.py: --cpus: '{text}' is not a CPU list such as 0-7 or 0,2,4")
    if not cpus:
        sys.exit(f"run.py: --cpus: '{text}' names no CPU")
    return cpus


def gpu_local_cpus():
    """The CPUs on the GPU's own NUMA node (its PCI device's local_cpulist),
    or None when they cannot be read."""
    try:
        bus = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=60).stdout.strip().lower()
    except (OSError, subprocess.SubprocessError):
        return None
    if not bus:
        return None
    # nvidia-smi writes an 8-digit domain; sysfs names it with 4.
    domain, _, rest = bus.partition(":")
    path = f"/sys/bus/pci/devices/{domain[-4:]}:{rest}/local_cpulist"
    try:
        with open(path, encoding="ascii") as f:
            return parse_cpus(f.read())
    except OSError:
        return None


# Set by main(): the CPUs every measured process is bound to, or None.
CPUS = None


def bind():
    os.sched_setaffinity(0, CPUS)


# The process's phases, between train_step.py's marks (XSC_PHASES) and the
# times run.py started it and saw it end.
PHASES = [("launch", "spawned", "started"),    # the interpreter's start
          ("import", "started", "imported"),   # torch and the script's imports
          ("setup", "imported", "ready"),      # CUDA, the runtime's attach, model, data
          ("warm-up", "ready", "warm"),
          ("steps", "warm", "stepped"),
          ("finish", "stepped", "ended"),      # checks, prints, process-group teardown
          ("exit", "ended", "exited")]         # interpreter teardown, the report at exit


def phases_of(text, spawned, exited):
    """{phase: seconds} from train_step.py's XSC_PHASES marks, or {} when a
    mark is missing."""
    marks = {"spawned": spawned, "exited": exited}
    for item in text.split():
        key, _, value = item.partition("=")
        try:
            marks[key] = float(value)
        except ValueError:
            return {}
    if any(a not in marks or b not in marks for _, a, b in PHASES):
        return {}
    return {name: marks[b] - marks[a] for name, a, b in PHASES}


def step_options(suffixes):
    """train_step.py's options for a workload's suffixes: `item` (the step
    reads its loss on the host, loss.item(), as a loop that logs it does)
    and `batchN` (N sequences a step)."""
    options = []
    for suffix in suffixes:
        batch = re.fullmatch(r"batch([0-9]+)", suffix)
        if suffix == "item":
            options.append("--item")
        elif batch:
            options += ["--batch", batch.group(1)]
        else:
            raise SystemExit("run.py: unknown workload suffix '+%s' (item, batchN)" % suffix)
    return options


def run_once(workload, variant, build, steps, warmup):
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "XSC_OPTIONS", "XSC_PROFILE"):
        env.pop(key, None)
    if variant != "native":
        env["LD_PRELOAD"] = os.path.join(build, "lib", "libxstream_check.so")
        env.update(PROFILE_VARIANTS.get(variant, EXTRA_VARIANTS.get(variant, {})))
    start = time.perf_counter()
    spawned = time.time()
    name, *suffixes = workload.split("+")
    proc = subprocess.run([sys.executable, STEP, name, "--steps", str(steps), "--warmup",
                           str(warmup)] + step_options(suffixes),
                          env=env, capture_output=True, text=True,
                          preexec_fn=bind if CPUS else None)
    wall = time.perf_counter() - start
    exited = time.time()
    match = re.search(r"XSC_STEP .*steady_ms=([0-9.]+) warmup_s=([0-9.]+)", proc.stdout)
    if proc.returncode not in (0, 66) or match is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"run.py: {workload} ({variant}) failed, exit {proc.returncode}: {tail}")
    findings = re.search(r"xstream-check: (\d+) finding", proc.stderr)
    parts = re.search(r"^XSC_PARTS (.*)$", proc.stdout, re.M)
    host = re.search(r"XSC_STEP .*host_ms=([0-9.]+)", proc.stdout)
    quartiles = re.search(r"XSC_STEP .*quartiles_ms=([0-9.]+)/([0-9.]+)", proc.stdout)
    halves = re.search(r"XSC_STEP .*halves_ms=([0-9.]+)/([0-9.]+)", proc.stdout)
    ops = re.search(r"^XSC_OPS (.*)$", proc.stdout, re.M)
    words = re.search(r"^XSC_WORDS (.*)$", proc.stdout, re.M)
    view = re.search(r"^XSC_VIEW (.*)$", proc.stdout, re.M)
    sched = re.search(r"^XSC_SCHED (.*)$", proc.stdout, re.M)
    marks = re.search(r"^XSC_PHASES (.*)$", proc.stdout, re.M)
    return {"ops": ops.group(1) if ops else "", "words": words.group(1) if words else "",
            "view": view.group(1) if view else "",
            "sched": sched.group(1) if sched else "",
            "phases": phases_of(marks.group(1), spawned, exited) if marks else {},
            "steady_ms": float(match.group(1)), "warmup_s": float(match.group(2)), "wall_s": wall,
            "findings": int(findings.group(1)) if findings else 0,
            "host_ms": float(host.group(1)) if host else float("nan"),
            "quartiles_ms": (float(quartiles.group(1)), float(quartiles.group(2)))
            if quartiles else None,
            "halves_ms": (float(halves.group(1)), float(halves.group(2))) if halves else None,
            # part -> (µs per step, scopes per step)
            "parts": {k: tuple(float(x) for x in v.split("/"))
                      for k, v in (item.split("=") for item in parts.group(1).split())}
            if parts else {}}


def quartile_text(run):
    """' (q1-q3; halves a/b)': the spread of one process's steps and the
    medians of their first and second halves, where it says them."""
    q, h = run.get("quartiles_ms"), run.get("halves_ms")
    parts = [f"{q[0]:.2f}-{q[1]:.2f}"] if q else []
    if h:
        parts.append(f"halves {h[0]:.2f}/{h[1]:.2f}")
    return f" ({'; '.join(parts)})" if parts else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workloads", default="eager,hf,fsdp2,ddp")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cpus", default="",
                        help="bind every measured process to these CPUs (a list such as 0-7, or 'gpu': the "
                             "GPU's own NUMA node), so that runs differ less by where they ran")
    parser.add_argument("--variants", default="",
                        help="comma-separated variants to run beside native and checked (e.g. no-backward-stacks)")
    args = parser.parse_args()
    lib = os.path.join(args.build, "lib", "libxstream_check.so")
    if not os.path.exists(lib):
        print(f"run.py: {lib} not found (build xstream_check and xstream_torch first)",
              file=sys.stderr)
        return 2
    global CPUS
    if args.cpus == "gpu":
        CPUS = gpu_local_cpus()
        print(f"run.py: bound to the GPU's CPUs {sorted(CPUS)}" if CPUS else
              "run.py: the GPU's CPUs cannot be read; processes are not bound", file=sys.stderr)
    elif args.cpus:
        CPUS = parse_cpus(args.cpus)
    if CPUS and not CPUS <= os.sched_getaffinity(0):
        usable = sorted(os.sched_getaffinity(0))
        print(f"run.py: --cpus: {len(CPUS - set(usable))} of them not available to this process "
              f"(it may use {usable[0]}-{usable[-1]})", file=sys.stderr)
        return 2
    extra = [v for v in args.variants.split(",") if v]
    unknown = [v for v in extra if v not in PROFILE_VARIANTS and v not in EXTRA_VARIANTS]
    if unknown:
        print(f"run.py: unknown variant {unknown[0]}", file=sys.stderr)
        return 2
    variants = ["native", "checked"] + (list(PROFILE_VARIANTS) if args.profile else []) + \
        [v for v in extra if not (args.profile and v in PROFILE_VARIANTS)]
    rows = []
    for workload in args.workloads.split(","):
        runs = {v: [] for v in variants}
        for pair in range(args.pairs):
            # Alternate which goes first, so a drift does not favour one.
            order = variants if pair % 2 == 0 else list(reversed(variants))
            for v in order:
                runs[v].append(run_once(workload, v, args.build, args.steps, args.warmup))
            # As it comes, so that a command cut short by its time limit
            # still leaves the pairs it finished.
            print(f"{workload} pair {pair + 1}: " + ", ".join(
                f"{v} {runs[v][-1]['steady_ms']:.3f} ms/step" + quartile_text(runs[v][-1])
                for v in variants), flush=True)
        native = runs["native"]
        print(f"\n== {workload}: {args.pairs} pairs, {args.steps} timed steps after {args.warmup}")
        for v in variants:
            steady = [r["steady_ms"] for r in runs[v]]
            ratios = [r["steady_ms"] / n["steady_ms"] for r, n in zip(runs[v], native)]
            walls = [r["wall_s"] / n["wall_s"] for r, n in zip(runs[v], native)]
            warm = [r["warmup_s"] for r in runs[v]]
            print(f"{v:>16}: steady {statistics.median(steady):8.3f} ms/step  pairs "
                  + " ".join(f"{x:.3f}" for x in ratios)
                  + f"  median {statistics.median(ratios):.3f}x; host "
                  + f"{statistics.median(r['host_ms'] for r in runs[v]):.3f} ms/step; process "
                  + f"{statistics.median(r['wall_s'] for r in runs[v]):.2f} s "
                  + f"(median {statistics.median(walls):.3f}x); warm-up "
                  + f"{statistics.median(warm):.2f} s; findings "
                  + f"{max(r['findings'] for r in runs[v])}")
            if v != "native":
                # Both sides of each ratio: whether a pair's spread is the
                # native run's or this one's.
                sides = [(n["steady_ms"], r["steady_ms"]) for r, n in zip(runs[v], native)]
                print(f"{'':>18}pairs, ms/step (native / {v}, difference): " + "  ".join(
                    f"{a:.2f} / {b:.2f} ({b - a:+.2f})" for a, b in sides))
            if runs[v][0]["ops"]:
                print(f"{'':>18}PyTorch adapter per step, first run: {runs[v][0]['ops']}")
            if runs[v][0]["words"]:
                print(f"{'':>18}kernel argument words per step, first run: {runs[v][0]['words']}")
            if runs[v][0]["view"]:
                print(f"{'':>18}the runtime's view after the steps, first run: "
                      f"{runs[v][0]['view']}")
            if runs[v][0]["sched"]:
                print(f"{'':>18}threads per step, first run (ms on CPU/ms waiting for one/"
                      f"voluntary/involuntary switches): {runs[v][0]['sched']}")
            phases = [r["phases"] for r in runs[v]]
            if all(phases) and all(n["phases"] for n in native):
                # Each phase's median, and its median difference to native's
                # pair by pair: where the whole process's extra time lies.
                def phase(name):
                    text = f"{name} {statistics.median(p[name] for p in phases):.2f}"
                    if v == "native":
                        return text
                    added = statistics.median(p[name] - n["phases"][name]
                                              for p, n in zip(phases, native))
                    return text + f" ({added:+.2f})"
                print(f"{'':>18}phases, s: " + ", ".join(phase(name) for name, _, _ in PHASES))
            rows.append((workload, v, statistics.median(steady), statistics.median(ratios),
                         statistics.median(walls), statistics.median(warm)))
        if "parts" in runs and runs["parts"][0]["parts"]:
            names = list(runs["parts"][0]["parts"])
            us = {k: statistics.median(r["parts"][k][0] for r in runs["parts"]) for k in names}
            per = {k: statistics.median(r["parts"][k][1] for r in runs["parts"]) for k in names}
            added = 1e3 * (statistics.median(r["steady_ms"] for r in runs["parts"])
                           - statistics.median(r["steady_ms"] for r in native))
            print("  the runtime's own host time per step (medians, XSC_PROFILE=parts): "
                  + ", ".join(f"{k} {us[k]:.0f} us ({per[k]:.0f})" for k in names)
                  + f"; sum on the program's threads {sum(v for k, v in us.items() if k != 'checker_thread'):.0f} us"
                  + f", step {added:+.0f} us over native")
        if args.profile:
            def med(v):
                return statistics.median(r["steady_ms"] for r in runs[v])
            full, nat = med("checked"), med("native")
            parts = {"CUPTI": med("subscribe-only") - nat, "stacks": full - med("no-stacks"),
                     "op hook": full - med("hook off"),
                     "interposers": full - med("interposers off")}
            parts["checker etc."] = full - nat - sum(parts.values())
            print(f"  where the {full - nat:+.3f} ms/step go: "
                  + ", ".join(f"{k} {val:+.3f} ms" for k, val in parts.items()))
    print("\n| workload | tool | steady ms/step | × native (pairwise median) | process × native | warm-up s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for w, v, steady, ratio, wall, warm in rows:
        print(f"| {w} | {v} | {steady:.3f} | {ratio:.3f} | {wall:.3f} | {warm:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
