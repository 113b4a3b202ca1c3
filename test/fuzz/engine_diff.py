#!/usr/bin/env python3
"""Random event streams through two `xstream-check` binaries, reports compared.

Each seed makes a trace of the kinds of event a checked program produces,
biased towards what the engine's fast paths depend on: caching-allocator
blocks reused soon after their free (and long after), deferred frees
completed at once, later or never, uses of live and of freed ranges,
interior pointers, event records and waits, host synchronizations and
streams created again. Both binaries replay it; their text and JSON
reports and exit statuses must be identical.

  engine_diff.py --old XSC --new XSC [--seeds N] [--first S] [--keep DIR]

Compare a build before a change of the engine with one after it; with the
same binary twice the run checks that replay is deterministic and never
crashes on these streams.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

BASE = 0x7F0000000000
BLOCK = 4096


def make_trace(seed):
    rnd = random.Random(seed)
    lines = [{"format": "xstream-trace", "version": 1, "pid": 1, "program": f"engine_diff {seed}"}]
    streams = [0x1000 * (i + 1) for i in range(rnd.randint(2, 5))]
    for s in streams:
        lines.append({"t": "stream_create", "s": s, "fl": rnd.choice(["non_blocking", "blocking"])})
    names = ["copy", "gemm", "reduce"]
    for i, name in enumerate(names, 1):
        lines.append({"t": "name", "id": i, "str": name})
    for i in range(1, 7):
        lines.append({"t": "stack", "id": i, "frames": [{"fn": f"site{i}", "file": "/src/p.py", "line": i}]})
    slots = rnd.randint(2, 40)
    live = {}       # start -> size
    pending = []    # deferred frees not completed yet
    for _ in range(rnd.randint(20, 500)):
        r = rnd.random()
        any_stream = rnd.choice(streams + [0])
        sk = rnd.randint(1, 6)
        if r < 0.25:
            start = BASE + rnd.randrange(slots) * 4 * BLOCK + rnd.choice([0, 0, 0, BLOCK])
            size = rnd.choice([BLOCK, 2 * BLOCK, 3 * BLOCK])
            kind = rnd.choice(["caching", "caching", "stream_ordered", "sync"])
            lines.append({"t": "alloc", "sk": sk, "a": start, "n": size, "s": any_stream, "ak": kind})
            live[start] = size
        elif r < 0.45 and live:
            start = rnd.choice(list(live))
            deferred = rnd.random() < 0.8
            kind = rnd.choice(["caching", "caching", "caching", "stream_ordered", "sync"])
            lines.append({"t": "free", "sk": sk, "a": start, "s": any_stream, "fk": kind, "d": deferred})
            del live[start]
            if deferred:
                if rnd.random() < 0.7:
                    lines.append({"t": "free_done", "a": start})
                else:
                    pending.append(start)
        elif r < 0.5 and pending:
            lines.append({"t": "free_done", "a": pending.pop(rnd.randrange(len(pending)))})
        elif r < 0.75:
            candidates = list(live) + [BASE + rnd.randrange(slots) * 4 * BLOCK + rnd.randrange(0, 3 * BLOCK, 8)]
            addr = rnd.choice(candidates) + rnd.choice([0, 0, 8, BLOCK])
            lines.append({"t": "use", "sk": sk, "a": addr, "n": rnd.choice([0, 0, 16, BLOCK]), "s": any_stream,
                          "ac": rnd.choice(["read", "write", "unknown"]), "w": "kernel",
                          "nm": rnd.randint(1, len(names))})
        elif r < 0.85:
            event = rnd.randint(1, 4) * 0x100
            lines.append({"t": "record", "s": any_stream, "e": event})
            if rnd.random() < 0.7:
                lines.append({"t": "wait", "sk": sk, "s": rnd.choice(streams + [0]), "e": event})
        elif r < 0.9:
            lines.append({"t": "stream_sync", "s": any_stream})
        elif r < 0.92:
            lines.append({"t": "device_sync"})
        elif r < 0.94:
            s = rnd.choice(streams)
            lines.append({"t": "stream_destroy", "s": s})
            lines.append({"t": "stream_create", "s": s, "fl": "non_blocking"})
    return "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"


def replay(xsc, trace, report):
    proc = subprocess.run([xsc, "replay", trace, f"--report={report}"], capture_output=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--keep", help="write each differing trace here")
    args = ap.parse_args()
    differing = findings = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first, args.first + args.seeds):
            trace = os.path.join(tmp, f"seed{seed}.jsonl")
            with open(trace, "w") as f:
                f.write(make_trace(seed))
            results = {}
            for report in ("text", "json"):
                old, new = replay(args.old, trace, report), replay(args.new, trace, report)
                results[report] = (old, new)
            if any(old != new for old, new in results.values()):
                differing += 1
                print(f"seed {seed}: reports differ")
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    with open(trace) as src, open(os.path.join(args.keep, f"seed{seed}.jsonl"), "w") as dst:
                        dst.write(src.read())
            status = results["text"][1][0]
            if status not in (0, 66):
                print(f"seed {seed}: exit {status}: {results['text'][1][2].decode(errors='replace')[:200]}")
                differing += 1
            findings += status == 66
    print(f"{args.seeds} streams, {findings} with findings, {differing} differing or failing")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
