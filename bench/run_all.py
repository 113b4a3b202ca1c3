#!/usr/bin/env python3
"""Measures xstream-check against native runs, compute-sanitizer and PyTorch's
CUDA sanitizer on the same workloads, interleaved (A B C A B C ...), and writes
a markdown table plus the raw numbers.

Run on a GPU machine from the repository root after building (test/gpu/run.sh
does both):  python3 bench/run_all.py --build build-gpu --out OUTDIR
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(cmd, env, timeout):
    """Runs cmd; returns (wall seconds, exit code or "timeout", combined output,
    that process's own peak RSS in KiB, from wait4, and the CLOCK_MONOTONIC
    nanoseconds at which it was started and reaped)."""
    with tempfile.TemporaryFile() as buf:
        spawned_ns = time.monotonic_ns()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=buf, stderr=subprocess.STDOUT)
        code = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                wall = time.perf_counter() - start
                code = os.waitstatus_to_exitcode(status)
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                _, _, usage = os.wait4(proc.pid, 0)
                wall, code = float("nan"), "timeout"
                break
            time.sleep(0.001)
        reaped_ns = time.monotonic_ns()
        proc.returncode = -1  # reaped above; keep Popen from waiting again
        buf.seek(0)
        out = buf.read().decode(errors="replace")
    return wall, code, out, usage.ru_maxrss, (spawned_ns, reaped_ns)


# The runtime's two timing lines (XSC_OPTIONS=verbosity=2,
# docs/performance-knobs.md).
TIMING_SUMMARY = re.compile(r"timing: start-up ([0-9.]+) ms \(CUPTI load and subscription ([0-9.]+) ms\), "
                            r"(\d+) callbacks handled in ([0-9.]+) ms")
TIMING_POINTS = re.compile(r"CLOCK_MONOTONIC ms: runtime loaded ([0-9.]+), first callback [0-9.]+, "
                           r"report at exit ([0-9.]+) to ([0-9.]+)")
# The parts of a checked run's wall time, in order (milliseconds).
PHASES = ("process start", "runtime start-up", "of which CUPTI", "program run",
          "of which callbacks", "report at exit", "teardown", "total")


def phases_of(out, span):
    """A checked run's wall time split at the runtime's points in time:
    process start (exec and loading, up to the runtime's constructor), the
    runtime's start-up, the program's run up to the runtime's exit handler
    (the callbacks it handled inside it), the report, and teardown (library
    destructors and the kernel releasing the process). None when the run
    printed no timing lines."""
    summary, points = TIMING_SUMMARY.search(out), TIMING_POINTS.search(out)
    if not summary or not points:
        return None
    spawned, reaped = (t / 1e6 for t in span)
    loaded, exit_begin, exit_end = (float(v) for v in points.groups())
    startup, cupti, callbacks = float(summary.group(1)), float(summary.group(2)), float(summary.group(4))
    if not spawned <= loaded <= exit_begin <= exit_end <= reaped:
        return None  # not this harness's clock (another machine's numbers)
    return dict(zip(PHASES, (loaded - spawned, startup, cupti, exit_begin - loaded - startup, callbacks,
                             exit_end - exit_begin, reaped - exit_end, reaped - spawned)))


def count_findings(tool, out):
    """Findings as each tool states them; None when the tool printed no verdict."""
    if tool == "xstream-check":
        m = re.search(r"xstream-check: (\d+) finding", out)
        return int(m.group(1)) if m else 0
    if tool == "compute-sanitizer":
        m = re.search(r"ERROR SUMMARY: (\d+) error", out)
        return int(m.group(1)) if m else None
    if tool == "torch-sanitizer":
        return len(re.findall(r"CSAN detected a possible data race", out))
    return None


def reported_number(out, key, scale=1.0):
    """The number a benchmark program printed as `key=X`, times `scale`;
    None when it printed none (bench_launch: median_ns_per_launch,
    bench_startup: context_ms, train_prefetch.py: steady_s)."""
    m = re.search(rf"{key}[=: ]+([0-9.]+)", out)
    return float(m.group(1)) * scale if m else None


SANITIZERS = ("compute-sanitizer", "torch-sanitizer")


def tools_for(kind, build):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    tools = [("native", [], {}), ("xstream-check", [], {"LD_PRELOAD": lib, "XSC_OPTIONS": "exitcode=0"})]
    if kind == "cuda":
        tools.append(("compute-sanitizer", ["compute-sanitizer", "--tool", "memcheck",
                                            "--track-stream-ordered-races", "all"], {}))
    elif kind == "torch":
        tools.append(("torch-sanitizer", [], {"TORCH_CUDA_SANITIZER": "1"}))
    return tools


# Variants of xstream-check (docs/performance-knobs.md), run on the
# launch-bound workload and the training loop: they split the per-launch
# overhead into CUPTI dispatch, stack capture and the rest (locking, argument
# scan, the checker). Launches end up observed through the driver's launch
# callbacks only (launch_callbacks=auto calibrates the runtime's away), so
# the dispatch-only variant subscribes the same way; the last variant keeps
# the runtime's launch callbacks on, for comparison.
PROFILE_TOOLS = [
    ("xsc subscribe-only", "subscribe-only", "launch_callbacks=driver", {}),
    # Subscribed with no callback enabled: CUPTI's start-up and its share
    # of context creation, apart from what enabling callbacks adds.
    ("xsc subscribe-bare", "subscribe-bare", "", {}),
    ("xsc no-stacks", "no-stacks", "", {}),
    ("xsc runtime+driver launch callbacks", "", "launch_callbacks=runtime", {}),
    # PyTorch only: without the allocator adapter (its hooks and the Python
    # stacks of allocations, frees and launches), which misses the bug.
    ("xsc no torch adapter", "", "", {"XSC_TORCH_ADAPTER": "/nonexistent/libxstream_torch.so"}),
    # PyTorch only: without the operator hook (torch_op_access=0), which
    # boxes each aten operator's arguments to feed its whole-tensor writes.
    ("xsc no operator writes", "", "torch_op_access=0", {}),
    # Without the library interposers (cuBLAS, cuBLASLt, cuDNN): what
    # following the libraries' reads and writes costs.
    ("xsc no library access", "", "cublas_access=0:cudnn_access=0", {}),
    # PyTorch only: Python stacks read through the C API (frame objects
    # created as it walks) instead of the interpreter's frame records.
    ("xsc C-API Python frames", "", "", {"XSC_PYTHON_FRAMES": "c-api"}),
    # The library preloaded but CUPTI not found: the fixed cost of loading
    # the runtime, apart from CUPTI's and from checking.
    ("xsc without CUPTI", "", "", {"XSC_CUPTI_LIB": "/nonexistent/libcupti.so"}),
    # Not preloaded: the driver loads the runtime at cuInit
    # (CUDA_INJECTION64_PATH) and CUPTI is subscribed from InitializeInjection.
    ("xsc injection", "", "", {"LD_PRELOAD": "", "CUDA_INJECTION64_PATH": "{lib}"}),
]


def profile_tools(build, kind):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    tools = []
    for name, mode, options, extra in PROFILE_TOOLS:
        torch_only = "XSC_TORCH_ADAPTER" in extra or "XSC_PYTHON_FRAMES" in extra or "torch_" in options
        if torch_only and kind != "torch":
            continue
        env = {"LD_PRELOAD": lib, "XSC_OPTIONS": "exitcode=0" + (":" + options if options else "")}
        if mode:
            env["XSC_PROFILE"] = mode
        env.update({key: value.replace("{lib}", lib) for key, value in extra.items()})
        tools.append((name, [], env))
    return tools


def workloads(build, quick):
    ex = os.path.join(build, "bin", "examples")
    py = sys.executable
    launches = "20000" if quick else "100000"
    items = [
        ("launch-bound (4 streams)", "cuda", [os.path.join(build, "bin", "bench_launch"), launches], False),
    ]
    # The fixed cost on the shortest CUDA program (context, one kernel).
    items.append(("cuda start-up (context, one kernel)", "cuda",
                  [os.path.join(build, "bin", "bench_startup")], False))
    for mode in ("buggy", "record_stream", "stall", "keep_ref"):
        items.append((f"cuda pipelines_async {mode}", "cuda",
                      [os.path.join(ex, "pipelines_async"), mode, "--trials", "3"], mode == "buggy"))
    for mode in ("buggy", "record_stream", "stall", "keep_ref"):
        items.append((f"torch pipelines {mode}", "torch",
                      [py, os.path.join(ROOT, "examples", "torch", "pipelines.py"), mode, "--trials", "3"],
                      mode == "buggy"))
    # The fixed cost a checker adds to any PyTorch program: import, CUDA
    # initialization, the first kernel (for xstream-check: loading the
    # runtime and CUPTI, attaching the allocator adapter, the exit report).
    items.append(("torch start-up (import, first kernel)", "torch",
                  [py, os.path.join(ROOT, "bench", "torch_startup.py")], False))
    items.append(("torch train_prefetch (200 steps)", "torch",
                  [py, os.path.join(ROOT, "examples", "torch", "train_prefetch.py"), "--steps", "200"], False))
    load = os.path.join(ex, "faults", "load")
    if os.path.exists(load):
        items.append(("10^6 launches, 10^4 live allocations", "load", [load, "history", "1000000", "10000"],
                      False))
        items.append(("8 threads x 4 streams, 10^5 launches", "load", [load, "threads", "100000"], False))
    return [w for w in items if os.path.exists(w[2][0]) or w[2][0] == py and os.path.exists(w[2][1])]


def summarize(name, has_bug, samples, outputs):
    """One result per tool from its repetitions so far."""
    results = []
    for tool, runs in samples.items():
        if not runs:
            continue
        walls = [r["wall"] for r in runs if r["wall"] == r["wall"]]
        results.append({
            "workload": name, "tool": tool, "has_bug": has_bug,
            "median_s": statistics.median(walls) if walls else None,
            "min_s": min(walls) if walls else None, "max_s": max(walls) if walls else None,
            "runs": len(runs), "timeouts": sum(1 for r in runs if r["code"] == "timeout"),
            "findings": count_findings(tool, outputs.get(tool, "")),
            "launch_us": [r["launch_us"] for r in runs if r["launch_us"] is not None],
            "context_ms": [r["context_ms"] for r in runs if r["context_ms"] is not None],
            "steady_s": [r["steady_s"] for r in runs if r.get("steady_s") is not None],
            "exit_codes": [r["code"] for r in runs],
            # Milliseconds per part of the run, per repetition (checked runs).
            "phases_ms": {p: [r["phases"][p] for r in runs if r.get("phases")] for p in PHASES}
                         if any(r.get("phases") for r in runs) else None,
            # Milliseconds from start to reaping, every tool (the phases' baseline).
            "total_ms": [(r["span"][1] - r["span"][0]) / 1e6 for r in runs if r.get("span")],
            # Per repetition (NaN: timed out), for ratios taken pair by pair.
            "walls": [r["wall"] for r in runs],
            "peak_rss_kib": max((r["rss_kib"] for r in runs), default=None),
            "tail": outputs.get(tool, "")[-1500:],
        })
    return results


def main():
    # The real training workloads (eager, torch.compile, Hugging Face, FSDP2,
    # DDP), native against checked, pair by pair: bench/real/run.py, which
    # takes the remaining arguments (--pairs, --workloads, --profile).
    if len(sys.argv) > 1 and sys.argv[1] == "real":
        real = os.path.join(ROOT, "bench", "real", "run.py")
        os.execv(sys.executable, [sys.executable, real] + sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-gpu"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--quick", action="store_true", help="smaller launch counts")
    ap.add_argument("--only", help="run only workloads whose name contains this text, or one of "
                                   "several texts separated by '|' (e.g. 'torch pipelines|start-up')")
    ap.add_argument("--tools", help="comma-separated tools to run (default: all that apply)")
    ap.add_argument("--sanitizer-reps", type=int,
                    help="run compute-sanitizer and TORCH_CUDA_SANITIZER=1 in only the first N "
                         "repetitions (they take many times longer; default: all)")
    ap.add_argument("--variants", action="store_true",
                    help="run the xstream-check variants (PROFILE_TOOLS) on every workload, "
                         "not only on the launch-bound one and the training loop")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    results = []
    missing = set()
    meta = collect_meta()
    for name, kind, cmd, has_bug in workloads(args.build, args.quick):
        if args.only and not any(part and part in name for part in args.only.split("|")):
            continue
        tools = tools_for("cuda" if kind == "load" else kind, args.build)
        if kind == "load":
            tools = tools[:2]
        if args.variants or name.startswith("launch-bound") or "train_prefetch" in name:
            tools = tools[:2] + profile_tools(args.build, kind) + tools[2:]
        if args.tools:
            wanted = args.tools.split(",")
            tools = [t for t in tools if t[0] in wanted]
        for tool, prefix, _ in list(tools):
            if prefix and shutil.which(prefix[0]) is None:
                if tool not in missing:
                    print(f"bench: {prefix[0]} not found; {tool} is left out", flush=True)
                    missing.add(tool)
                tools.remove((tool, prefix, _))
        # Checked runs of the first repetition print the runtime's timing
        # lines, from which their wall time is split into parts; not on the
        # launch-bound workloads, where timing each of 10^5 callbacks would
        # add to what is measured. Later repetitions run untimed: the clock
        # reads cost a training step about 1%, which is not the checker's.
        timed_workload = not name.startswith("launch-bound") and kind != "load"
        samples = {t[0]: [] for t in tools}
        outputs = {}
        timed_out = set()
        for rep in range(args.reps):
            for tool, prefix, extra in tools:
                if tool in timed_out:
                    continue  # one timeout says enough; keep the device time
                if tool in SANITIZERS and args.sanitizer_reps is not None and rep >= args.sanitizer_reps:
                    continue
                env = dict(os.environ)
                env.pop("LD_PRELOAD", None)
                env.update(extra)
                if timed_workload and rep == 0 and "XSC_OPTIONS" in extra:
                    env["XSC_OPTIONS"] += ":verbosity=2"
                wall, code, out, rss, span = run_once(prefix + cmd, env, args.timeout)
                samples[tool].append({"wall": wall, "code": code, "rss_kib": rss, "span": span,
                                      "phases": phases_of(out, span),
                                      "launch_us": reported_number(out, "median_ns_per_launch", 1e-3),
                                      "context_ms": reported_number(out, "context_ms"),
                                      "steady_s": reported_number(out, "steady_s")})
                outputs[tool] = out
                if code == "timeout":
                    timed_out.add(tool)
            # Written after every repetition: a run cut short (a device
            # command's time limit) still leaves the repetitions it made.
            write_outputs(args.out, meta, results + summarize(name, has_bug, samples, outputs))
        results += summarize(name, has_bug, samples, outputs)
        print(f"bench: {name}: done", flush=True)

    write_outputs(args.out, meta, results)
    print(render_table(meta, results))


def collect_meta():
    meta = {"date": datetime.date.today().isoformat(), "host": platform.node()}
    try:
        meta["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True).stdout.strip()
    except OSError:
        meta["gpu"] = "unknown"
    try:
        meta["torch"] = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                       capture_output=True, text=True, timeout=120).stdout.strip() or "absent"
    except (OSError, subprocess.SubprocessError):
        meta["torch"] = "absent"
    return meta


def pairs(values, native_values, op):
    """op(value, native value) for each repetition (each repetition runs
    every tool back to back, so a machine that drifts, other tenants or
    clocks, moves both sides of a pair together); NaN (timed out) skipped."""
    return [op(v, n) for v, n in zip(values or [], native_values or [])
            if v is not None and n is not None and v == v and n == n and n > 0]


def median_or_none(values):
    return statistics.median(values) if values else None


def derive(results):
    """Fills in what follows from the raw numbers of each result: ratios to
    native (of the medians, and pair by pair), time added pair by pair, the
    verdict. Pairs, and the native repetitions a result is compared with,
    come from the result's own run: report.py derives each run before
    pooling runs, and a result whose pairs are formed keeps them."""
    natives = {r["workload"]: r for r in results if r["tool"] == "native"}
    for r in results:
        native = natives.get(r["workload"], {})
        if not r.get("pairs_formed"):
            r["native_walls"] = list(native.get("walls") or [])
            r["native_median_s"] = native.get("median_s")  # files without per-run walls
            r["pair_ratios"] = pairs(r.get("walls"), native.get("walls"), lambda w, n: w / n)
            r["pair_added"] = pairs(r.get("walls"), native.get("walls"), lambda w, n: w - n)
            r["launch_added_us"] = pairs(r.get("launch_us"), native.get("launch_us"),
                                         lambda t, n: t - n)
            r["context_added_ms"] = pairs(r.get("context_ms"), native.get("context_ms"),
                                          lambda t, n: t - n)
            r["steady_ratios"] = pairs(r.get("steady_s"), native.get("steady_s"), lambda t, n: t / n)
            r["steady_added_s"] = pairs(r.get("steady_s"), native.get("steady_s"), lambda t, n: t - n)
        base = median_or_none([w for w in r["native_walls"] if w == w]) or r.get("native_median_s")
        r["ratio"] = (r["median_s"] / base) if (base and r["median_s"]) else None
        # Pooled from runs on machines of different speed (report.py
        # --pool), the pooled medians say little: the median of each run's
        # ratio of medians instead.
        run_ratios = [x for x in r.get("run_ratios") or [] if x is not None]
        if len(run_ratios) > 1:
            r["ratio"] = median_or_none(run_ratios)
        r["pair_ratio"] = median_or_none(r["pair_ratios"])
        r["pair_added_s"] = median_or_none(r["pair_added"])
        if r["findings"] is None:
            r["caught"] = None
        else:
            r["caught"] = (r["findings"] > 0) if r["has_bug"] else (r["findings"] == 0)


def write_outputs(out_dir, meta, results):
    derive(results)
    with open(os.path.join(out_dir, "perf.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    with open(os.path.join(out_dir, "performance-table.md"), "w") as f:
        f.write(render_table(meta, results))


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


# Time added below this is within what repeated native runs differ by on
# the lent machines; a ratio of added times against it means nothing.
NOISE_FLOOR_S = 0.01


def added_time_lines(results):
    """For each workload run under xstream-check and another checker: the
    time each adds over native (pair by pair) and how many times more the
    other checker adds; wall time ratios of short runs are dominated by the
    start-up every tool pays alike."""
    by = {(r["workload"], r["tool"]): r for r in results}
    lines = []
    for r in results:
        if r["tool"] not in SANITIZERS:
            continue
        ours = by.get((r["workload"], "xstream-check"))
        theirs, added = r.get("pair_added_s"), ours.get("pair_added_s") if ours else None
        if ours is None or theirs is None or added is None or not ours.get("median_s"):
            continue
        if added > NOISE_FLOOR_S:
            verdict = f"{theirs / added:.1f}× the time xstream-check adds"
        else:
            verdict = "xstream-check within noise of native"
        wall = r["median_s"] / ours["median_s"] if r.get("median_s") else None
        lines.append(f"- {r['workload']}: xstream-check adds {added:+.3f} s, {r['tool']} "
                     f"{theirs:+.3f} s ({verdict}; wall time {fmt(wall, '.1f')}× xstream-check's)")
    if lines:
        lines = ["", "Time added over native, median of each repetition's difference:", ""] + lines
    return lines


def phase_lines(results):
    """Per workload: the medians of each part of the checked runs' wall
    time, beside the native runs' whole; a part that grows against the
    runtime preloaded without CUPTI is CUPTI's or the driver's work."""
    natives = {r["workload"]: r for r in results if r["tool"] == "native"}
    rows = []
    for r in results:
        phases = r.get("phases_ms")
        if not phases or not phases.get("total"):
            continue
        med = {p: statistics.median(v) if v else None for p, v in phases.items()}
        native_total = median_or_none(natives.get(r["workload"], {}).get("total_ms"))
        rows.append(f"| {r['workload']} | {r['tool']} | {len(phases['total'])} | "
                    f"{fmt(med['process start'], '.1f')} | {fmt(med['runtime start-up'], '.1f')} "
                    f"({fmt(med['of which CUPTI'], '.1f')}) | {fmt(med['program run'], '.1f')} "
                    f"({fmt(med['of which callbacks'], '.1f')}) | {fmt(med['report at exit'], '.1f')} | "
                    f"{fmt(med['teardown'], '.1f')} | {fmt(med['total'], '.1f')} | "
                    f"{fmt(native_total, '.1f')} |")
    if not rows:
        return []
    return ["", "Where a checked run's wall time goes, in milliseconds (medians of the timed runs, "
                "`verbosity=2`, which are each run's first repetition; split at the "
                "runtime's points in time): process start (exec and loading, up to "
                "the runtime's constructor), the runtime's start-up (CUPTI's part), the program's "
                "run up to the runtime's exit handler (the callbacks the runtime handled in it), "
                "the report, teardown (library destructors, the kernel releasing the process); "
                "native runs are timed whole.", "",
            "| workload | tool | runs | process start | start-up (CUPTI) | program run (callbacks) | "
            "report | teardown | total | native total |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + rows


def steady_lines(results):
    """For workloads that time their own steady state (steady_s=, after
    warm-up steps, so without the start-up every tool pays alike and its
    noise): each tool's pairwise ratio and time added there."""
    lines = []
    native = {r["workload"]: r for r in results if r["tool"] == "native" and r.get("steady_s")}
    for workload, n in native.items():
        tools = [r for r in results if r["workload"] == workload and r["tool"] != "native"
                 and r.get("steady_ratios")]
        if not tools:
            continue
        added = {r["tool"]: statistics.median(r["steady_added_s"]) for r in tools}
        parts = [f"{r['tool']} {statistics.median(r['steady_ratios']):.3f}× "
                 f"({added[r['tool']]:+.3f} s, {len(r['steady_ratios'])} pairs)" for r in tools]
        line = (f"{workload}, steady state (timed inside the program after its warm-up steps): "
                f"native {statistics.median(n['steady_s']):.3f} s; pair by pair " + ", ".join(parts) + ".")
        ours = added.get("xstream-check")
        for sanitizer in SANITIZERS:
            if sanitizer in added and ours is not None and ours > 0:
                line += f" {sanitizer} adds {added[sanitizer] / ours:.1f}× the time xstream-check adds there."
        lines += ["", line]
    return lines


def render_table(meta, results):
    lines = [f"Measured {meta['date']} on {meta['gpu']} (torch {meta['torch']}); "
             "medians of interleaved runs, min–max in brackets; × native is the ratio of the "
             "medians (for rows pooled from several runs, the median of each run's ratio), "
             "pairwise the median of each repetition's ratio.", "",
             "| workload | tool | runs | wall s (min–max) | × native | pairwise | peak RSS MiB | findings | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if r["timeouts"]:
            wall = f"timeout ({r['timeouts']}/{r['runs']})"
        else:
            wall = f"{fmt(r['median_s'], '.3f')} ({fmt(r['min_s'], '.3f')}–{fmt(r['max_s'], '.3f')})"
        failed = [c for c in r["exit_codes"] if c not in (0, 66, "timeout")]
        verdict = {None: "—", True: "right", False: "WRONG"}[r["caught"]]
        if r["has_bug"] and r["caught"] is not None:
            verdict = "caught the bug" if r["caught"] else "missed the bug"
        elif r["caught"] is False:
            verdict = "false report"
        elif r["caught"] is True:
            verdict = "clean"
        if failed:
            verdict = f"run failed (exit {failed[0]})"
        lines.append(f"| {r['workload']} | {r['tool']} | {r['runs']} | {wall} | {fmt(r['ratio'], '.2f')} | "
                     f"{fmt(r.get('pair_ratio'), '.2f')} | "
                     f"{fmt(r['peak_rss_kib'] / 1024 if r['peak_rss_kib'] else None, '.0f')} | "
                     f"{fmt(r['findings'], 'd')} | {verdict} |")
    lines += added_time_lines(results)
    lines += phase_lines(results)

    def values(workload_prefix, key):
        """{tool: its list under `key`} for the workload's rows that have one."""
        return {r["tool"]: r[key] for r in results
                if r["workload"].startswith(workload_prefix) and r.get(key)}

    native_context = values("cuda start-up", "context_ms").get("native")
    context = {t: v for t, v in values("cuda start-up", "context_added_ms").items() if t != "native"}
    if native_context and context:
        lines += ["", f"CUDA start-up: context creation (cuInit and the primary context, timed "
                      f"inside the program) takes {statistics.median(native_context):.1f} ms natively; "
                      "added, pair by pair: "
                  + ", ".join(f"{t} {statistics.median(v):+.1f} ms" for t, v in context.items()) + "."]
    lines += steady_lines(results)
    native_launch = values("launch-bound", "launch_us").get("native")
    launch_added = {t: v for t, v in values("launch-bound", "launch_added_us").items() if t != "native"}
    per = {t: statistics.median(v) for t, v in launch_added.items()}
    if native_launch and "xstream-check" in per:
        lines += ["", f"Launch-bound: {statistics.median(native_launch):.3f} µs per launch natively; "
                      f"xstream-check adds {per['xstream-check']:+.3f} µs per launch (median of "
                      f"{len(launch_added['xstream-check'])} repetitions' differences, each against "
                      "the native run of its repetition)."]
        for tool, _, _, _ in PROFILE_TOOLS:
            if tool in per:
                lines.append(f"Launch-bound, {tool}: {per[tool]:+.3f} µs per launch over native.")
        if "xsc subscribe-only" in per and "xsc no-stacks" in per:
            sub, nostk, full = per["xsc subscribe-only"], per["xsc no-stacks"], per["xstream-check"]
            lines.append(f"Per-launch overhead split: CUPTI dispatch {sub:+.3f} µs, "
                         f"event processing (locking, argument scan, checker) {nostk - sub:+.3f} µs, "
                         f"stack capture {full - nostk:+.3f} µs.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
