#!/usr/bin/python3
"""Turns the numbers of bench/run_all.py (perf.json, from the GPU machine) into
docs/performance.md and a bar chart of the ratios to native (PNG).

    python3 bench/report.py PERF_JSON [PERF_JSON...] [--pool] \
        [--earlier TITLE=PERF_JSON[,...]] [--lint LINT_MD] [--replay REPLAY_MD] \
        [--notes NOTES_MD] [--rounds ROUNDS_MD] [--out docs/performance.md] \
        [--png docs/performance.png]

Several PERF_JSON files (one run_all.py run each, e.g. one per workload
group when a single device command cannot hold them all) make one table,
in the order given. With --pool, a workload measured in several runs gets
one row holding all their repetitions; its pairwise ratios are still
formed within each run.

--earlier TITLE=PERF_JSON[,PERF_JSON...] adds an earlier run's table under
its own heading, several files pooled as with --pool. LINT_MD and
REPLAY_MD are markdown fragments (the lint and replay benchmarks run on a
CPU machine) appended as their own sections. ROUNDS_MD is the runtime's
rounds of measurement written by hand (real training workloads, profiles,
each under its own heading, the latest first), put under "Runtime" before
the generated table, so that remaking the page keeps them.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_all import PROFILE_TOOLS, derive, render_table  # noqa: E402  (one table renderer)


def chart(results, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tools = [t for t in ("xstream-check", "compute-sanitizer", "torch-sanitizer")
             if any(r["tool"] == t for r in results)]
    workloads = []
    for r in results:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    # Pair by pair where there are pairs: robust against machine drift.
    ratio = {(r["workload"], r["tool"]): r.get("pair_ratio") or r["ratio"] for r in results}
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(workloads) + 1.5))
    height = 0.8 / max(1, len(tools))
    for i, tool in enumerate(tools):
        ys = [w_i + i * height for w_i in range(len(workloads))]
        xs = [ratio.get((w, tool)) or 0 for w in workloads]
        ax.barh(ys, xs, height=height, label=tool)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks([w_i + 0.4 - height / 2 for w_i in range(len(workloads))])
    ax.set_yticklabels(workloads, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("wall time / native, median of each repetition's ratio "
                  "(log scale; missing bar: not run or timed out)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


# Per-repetition lists that pooling concatenates.
POOLED_LISTS = ("walls", "native_walls", "pair_ratios", "pair_added", "launch_us",
                "launch_added_us", "context_ms", "context_added_ms", "exit_codes", "total_ms",
                "steady_s", "steady_ratios", "steady_added_s")


def pool_into(into, more):
    """Adds the repetitions of `more` (the same workload and tool, another
    run) to `into`. Pairs were formed within each run, so machines that
    differ from run to run do not mix in a ratio; each run's ratio of
    medians is kept too (see derive)."""
    into["run_ratios"] = list(into.get("run_ratios") or [into.get("ratio")]) + [more.get("ratio")]
    for key in POOLED_LISTS:
        into[key] = list(into.get(key) or []) + list(more.get(key) or [])
    if more.get("phases_ms"):
        phases = into.get("phases_ms") or {}
        into["phases_ms"] = {p: list(phases.get(p) or []) + list(v) for p, v in more["phases_ms"].items()}
    into["runs"] += more["runs"]
    into["timeouts"] += more["timeouts"]
    if more.get("findings") is not None:
        into["findings"] = max(into.get("findings") or 0, more["findings"])
    into["peak_rss_kib"] = max(into.get("peak_rss_kib") or 0, more.get("peak_rss_kib") or 0) or None
    walls = [w for w in into["walls"] if w == w]
    into["median_s"] = statistics.median(walls) if walls else None
    into["min_s"] = min(walls) if walls else None
    into["max_s"] = max(walls) if walls else None


def merge_runs(paths, pool=False):
    """One meta and one result list from several run_all.py outputs. A field
    of meta that differs between runs (the date) lists every value. The same
    workload and tool in two runs is an error, or with `pool` one result
    holding the repetitions of both."""
    meta, results = {}, []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
            run_meta, run_results = data["meta"], data["results"]
            derive(run_results)  # pairs are formed within a run
            for r in run_results:
                r["pairs_formed"] = True
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"report.py: {path}: not a run_all.py perf.json ({e})")
        for key, value in run_meta.items():
            if key not in meta:
                meta[key] = value
            elif value not in meta[key].split(" / "):
                meta[key] = f"{meta[key]} / {value}"
        for r in run_results:
            earlier = next((o for o in results
                            if o["workload"] == r["workload"] and o["tool"] == r["tool"]), None)
            if earlier is None:
                results.append(r)
            elif pool:
                pool_into(earlier, r)
            else:
                sys.exit(f"report.py: {path}: '{r['workload']}' under '{r['tool']}' is in an "
                         "earlier file too; give each workload in one run only, or --pool")
    derive(results)
    return meta, sorted(results, key=row_order(results))


def row_order(results):
    """A workload's rows together, in the order workloads first appear;
    within one: native, xstream-check, its variants, the sanitizers."""
    first = {}
    for r in results:
        first.setdefault(r["workload"], len(first))
    variants = [name for name, _, _, _ in PROFILE_TOOLS]

    def key(r):
        tool = r["tool"]
        rank = ({"native": 0, "xstream-check": 1}.get(tool)
                if tool in ("native", "xstream-check")
                else 2 + variants.index(tool) if tool in variants else 2 + len(variants))
        return (first[r["workload"]], rank)
    return key


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("perf_json", nargs="+")
    ap.add_argument("--lint")
    ap.add_argument("--replay")
    ap.add_argument("--notes", help="a markdown fragment of findings and analysis")
    ap.add_argument("--rounds", help="a markdown fragment of the runtime's measurement rounds, "
                    "put under Runtime before the generated table")
    ap.add_argument("--pool", action="store_true",
                    help="pool the repetitions of a workload and tool found in several files")
    ap.add_argument("--earlier", action="append", default=[], metavar="TITLE=PERF_JSON[,...]",
                    help="an earlier run shown as a table of its own under TITLE (e.g. "
                         "workloads not measured again; files separated by commas are pooled); "
                         "repeatable")
    ap.add_argument("--out", default="docs/performance.md")
    ap.add_argument("--png", default="docs/performance.png",
                    help="the chart's path; empty: no chart (no matplotlib needed)")
    args = ap.parse_args()
    meta, results = merge_runs(args.perf_json, args.pool)
    earlier = []
    for item in args.earlier:
        title, sep, path = item.partition("=")
        if not sep or not title or not path:
            sys.exit(f"report.py: --earlier {item}: expected TITLE=PERF_JSON")
        # Several files, separated by commas, make one table pooled as --pool does.
        paths = [p for p in path.split(",") if p]
        earlier.append((title, *merge_runs(paths, len(paths) > 1)))

    parts = ["# Performance", "",
             "Produced by `bench/run_all.py` on the GPU machine (native, xstream-check, "
             "`compute-sanitizer --tool memcheck --track-stream-ordered-races all` for C++ programs, "
             "`TORCH_CUDA_SANITIZER=1` for PyTorch scripts; interleaved runs) and "
             "`bench/report.py`.", "",
             *([f"![ratios to native]({os.path.basename(args.png)})", ""] if args.png else []),
             "## Runtime", ""]
    if args.rounds:
        with open(args.rounds) as f:
            parts += [f.read().strip(), ""]
    parts.append(render_table(meta, results))
    for title, earlier_meta, earlier_results in earlier:
        parts += [f"### {title}", "", render_table(earlier_meta, earlier_results)]
    for title, path in (("Replay (CPU)", args.replay), ("Static check (CPU)", args.lint),
                        ("Notes", args.notes)):
        if path:
            with open(path) as f:
                parts += [f"## {title}", "", f.read().strip(), ""]
    with open(args.out, "w") as f:
        f.write("\n".join(parts) + "\n")
    if args.png:
        chart(results, args.png)
        print(f"wrote {args.out} and {args.png}")
    else:
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
