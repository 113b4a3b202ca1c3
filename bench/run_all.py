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
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(cmd, env, timeout):
    """Runs cmd; returns (wall seconds, exit code, combined output, child peak RSS KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - start
        out = proc.stdout + proc.stderr
        code = proc.returncode
    except subprocess.TimeoutExpired as exc:
        wall = float("nan")
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        code = "timeout"
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, code, out, max(before, after)


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


def launch_overhead_us(out):
    m = re.search(r"median_ns_per_launch[=: ]+([0-9.]+)", out)
    return float(m.group(1)) / 1000.0 if m else None


def tools_for(kind, build):
    lib = os.path.join(build, "lib", "libxstream_check.so")
    tools = [("native", [], {}), ("xstream-check", [], {"LD_PRELOAD": lib, "XSC_OPTIONS": "exitcode=0"})]
    if kind == "cuda":
        tools.append(("compute-sanitizer", ["compute-sanitizer", "--tool", "memcheck",
                                            "--track-stream-ordered-races", "all"], {}))
    elif kind == "torch":
        tools.append(("torch-sanitizer", [], {"TORCH_CUDA_SANITIZER": "1"}))
    return tools


def workloads(build, quick):
    ex = os.path.join(build, "bin", "examples")
    py = sys.executable
    launches = "20000" if quick else "100000"
    items = [
        ("launch-bound (4 streams)", "cuda", [os.path.join(build, "bin", "bench_launch"), launches], True),
    ]
    for mode in ("buggy", "record_stream", "stall", "keep_ref"):
        items.append((f"cuda pipelines_async {mode}", "cuda",
                      [os.path.join(ex, "pipelines_async"), mode, "--trials", "3"], mode == "buggy"))
    for mode in ("buggy", "record_stream", "stall", "keep_ref"):
        items.append((f"torch pipelines {mode}", "torch",
                      [py, os.path.join(ROOT, "examples", "torch", "pipelines.py"), mode, "--trials", "3"],
                      mode == "buggy"))
    items.append(("torch train_prefetch (200 steps)", "torch",
                  [py, os.path.join(ROOT, "examples", "torch", "train_prefetch.py"), "--steps", "200"], False))
    load = os.path.join(ex, "faults", "load")
    if os.path.exists(load):
        items.append(("10^6 launches, 10^4 live allocations", "load", [load, "--launches", "1000000",
                                                                        "--live", "10000"], False))
    return [w for w in items if os.path.exists(w[2][0]) or w[2][0] == py and os.path.exists(w[2][1])]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-gpu"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--quick", action="store_true", help="smaller launch counts")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    results = []
    for name, kind, cmd, has_bug in workloads(args.build, args.quick):
        tools = tools_for("cuda" if kind == "load" else kind, args.build)
        if kind == "load":
            tools = tools[:2]
        samples = {t[0]: [] for t in tools}
        outputs = {}
        for _ in range(args.reps):
            for tool, prefix, extra in tools:
                env = dict(os.environ)
                env.pop("LD_PRELOAD", None)
                env.update(extra)
                wall, code, out, rss = run_once(prefix + cmd, env, args.timeout)
                samples[tool].append({"wall": wall, "code": code, "rss_kib": rss,
                                      "launch_us": launch_overhead_us(out)})
                outputs[tool] = out
                if code == "timeout":
                    break
        for tool, runs in samples.items():
            walls = [r["wall"] for r in runs if r["wall"] == r["wall"]]
            results.append({
                "workload": name, "tool": tool, "has_bug": has_bug,
                "median_s": statistics.median(walls) if walls else None,
                "min_s": min(walls) if walls else None, "max_s": max(walls) if walls else None,
                "runs": len(runs), "timeouts": sum(1 for r in runs if r["code"] == "timeout"),
                "findings": count_findings(tool, outputs.get(tool, "")),
                "launch_us": [r["launch_us"] for r in runs if r["launch_us"] is not None],
                "exit_codes": [r["code"] for r in runs],
                "tail": outputs.get(tool, "")[-1500:],
            })
        print(f"bench: {name}: done", flush=True)

    native = {r["workload"]: r["median_s"] for r in results if r["tool"] == "native"}
    for r in results:
        base = native.get(r["workload"])
        r["ratio"] = (r["median_s"] / base) if (base and r["median_s"]) else None
        if r["findings"] is None:
            r["caught"] = None
        else:
            r["caught"] = (r["findings"] > 0) if r["has_bug"] else (r["findings"] == 0)

    meta = {"date": datetime.date.today().isoformat(), "host": platform.node()}
    try:
        meta["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True).stdout.strip()
    except OSError:
        meta["gpu"] = "unknown"
    try:
        import torch  # noqa: F401 (only for the version line)
        meta["torch"] = torch.__version__
    except Exception:  # torch is optional here
        meta["torch"] = "absent"
    with open(os.path.join(args.out, "perf.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    with open(os.path.join(args.out, "performance-table.md"), "w") as f:
        f.write(render_table(meta, results))
    print(render_table(meta, results))


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def render_table(meta, results):
    lines = [f"Measured {meta['date']} on {meta['gpu']} (torch {meta['torch']}); "
             "medians of interleaved runs, min–max in brackets.", "",
             "| workload | tool | wall s (min–max) | × native | findings | verdict |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if r["timeouts"]:
            wall = f"timeout ({r['timeouts']}/{r['runs']})"
        else:
            wall = f"{fmt(r['median_s'], '.3f')} ({fmt(r['min_s'], '.3f')}–{fmt(r['max_s'], '.3f')})"
        verdict = {None: "—", True: "right", False: "WRONG"}[r["caught"]]
        if r["has_bug"] and r["caught"] is not None:
            verdict = "caught the bug" if r["caught"] else "missed the bug"
        elif r["caught"] is False:
            verdict = "false report"
        elif r["caught"] is True:
            verdict = "clean"
        lines.append(f"| {r['workload']} | {r['tool']} | {wall} | {fmt(r['ratio'], '.2f')} | "
                     f"{fmt(r['findings'], 'd')} | {verdict} |")
    launch = [r for r in results if r["workload"].startswith("launch-bound") and r["launch_us"]]
    if len(launch) >= 2:
        per = {r["tool"]: statistics.median(r["launch_us"]) for r in launch}
        if "native" in per and "xstream-check" in per:
            lines += ["", f"Launch-bound: {per['native']:.3f} µs per launch native, "
                          f"{per['xstream-check']:.3f} µs under xstream-check "
                          f"(+{per['xstream-check'] - per['native']:.3f} µs)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
