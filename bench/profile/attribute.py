#!/usr/bin/env python3
"""Where a checked run's extra CPU time goes, from bench/profile/profile.sh's
REPORT=one reports (perf samples by thread, DSO and symbol).

    python3 bench/profile/attribute.py DIR [--hz 1999] [--steps N] [--top 25]

DIR holds comm-dso-sym-VARIANT.txt for `native` and one or more checked
variants (profile.sh's prof/ folder, unpacked from profiles.tgz). For each
checked variant it prints the samples per group against native's, as
milliseconds of CPU time (samples / hz) and, with --steps, per step, then
the symbols that gained the most. Groups:

  runtime       libxstream_check.so (callbacks, checker, stacks, interposers)
  adapter       libxstream_torch.so (allocator hooks, operator hook, frames)
  cupti         libcupti (CUPTI's dispatch of the callbacks)
  driver        libcuda
  torch         libtorch*, libc10* (the dispatcher's boxing shows here)
  python        libpython, the interpreter
  libc/kernel   the C library, the dynamic loader and the kernel
  other         every other DSO

A report holds the most sampled 3000 rows only, so the sums leave out a
thin tail, the same for every variant.
"""
import argparse
import collections
import os
import re
import sys

# The runtime's own thread (runtime/checker_thread.cpp), apart from the
# program's threads.
CHECKER_THREAD = "xsc-checker"
ROW = re.compile(r"^\s*([0-9.]+)%\s+(\d+)\s+(.+?)\s{2,}(\S+)\s+\[(.)\]\s+(.*?)\s*$")


def group_of(dso, kernel):
    if kernel == "k" or dso.startswith("[kernel"):
        return "libc/kernel"
    if dso.startswith("libxstream_check"):
        return "runtime"
    if dso.startswith("libxstream_torch"):
        return "adapter"
    if dso.startswith("libcupti"):
        return "cupti"
    if dso.startswith("libcuda"):
        return "driver"
    if dso.startswith(("libtorch", "libc10", "_C.")):
        return "torch"
    if dso.startswith("libpython") or dso.startswith("python"):
        return "python"
    if dso.startswith(("libc.so", "libc-", "ld-linux", "libm.so", "libstdc++", "libpthread")):
        return "libc/kernel"
    return "other"


def read(path):
    """[(comm, dso, kind, symbol, samples)]"""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows.append((m.group(3).strip(), m.group(4), m.group(5), m.group(6), int(m.group(2))))
    if not rows:
        sys.exit(f"attribute.py: no sample rows in {path}")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--hz", type=float, default=1999.0)
    parser.add_argument("--steps", type=int, default=0, help="timed steps, to print per step")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    files = {}
    for name in sorted(os.listdir(args.dir)):
        m = re.match(r"comm-dso-sym-(.+)\.txt$", name)
        if m:
            files[m.group(1)] = os.path.join(args.dir, name)
    if "native" not in files:
        sys.exit(f"attribute.py: {args.dir} has no comm-dso-sym-native.txt")
    data = {v: read(p) for v, p in files.items()}
    scale = 1e3 / args.hz / (args.steps or 1)
    unit = "ms/step" if args.steps else "ms"
    groups = ["runtime", "adapter", "cupti", "driver", "torch", "python", "libc/kernel", "other"]

    def totals(rows, key):
        """Samples summed by key(comm, dso, kind, sym)."""
        out = collections.Counter()
        for comm, dso, kind, sym, n in rows:
            out[key(comm, dso, kind, sym)] += n
        return out

    def by_group(rows):
        return totals(rows, lambda comm, dso, kind, sym: group_of(dso, kind))

    def by_thread(rows):
        return totals(rows, lambda comm, dso, kind, sym: comm)

    def by_symbol(rows):
        return totals(rows, lambda comm, dso, kind, sym: (dso, sym))

    native = data["native"]
    ng, nt, ns = by_group(native), by_thread(native), by_symbol(native)
    for v, rows in data.items():
        if v == "native":
            continue
        g, t, s = by_group(rows), by_thread(rows), by_symbol(rows)
        total = sum(g.values()) - sum(ng.values())
        print(f"== {v} against native: {total * scale:+.3f} {unit} of CPU time")
        for name in groups:
            print(f"  {name:<12} {ng[name] * scale:9.3f} -> {g[name] * scale:9.3f}  "
                  f"({(g[name] - ng[name]) * scale:+.3f})")
        print("  threads:")
        for comm in sorted(set(t) | set(nt), key=lambda c: -(t[c] - nt[c]))[:8]:
            print(f"    {comm:<20} {nt[comm] * scale:9.3f} -> {t[comm] * scale:9.3f}  "
                  f"({(t[comm] - nt[comm]) * scale:+.3f})")
        print(f"  symbols that gained most ({unit}):")
        gained = sorted(((s[k] - ns[k], k) for k in set(s) | set(ns)), reverse=True)
        for diff, (dso, sym) in gained[:args.top]:
            print(f"    {diff * scale:+8.3f}  {dso:<24} {sym[:110]}")
        # The program's own threads (everything but the checker's thread):
        # their time is what a host-bound step waits for.
        program = [r for r in rows if r[0] != CHECKER_THREAD]
        native_program = [r for r in native if r[0] != CHECKER_THREAD]
        pg, png = by_group(program), by_group(native_program)
        print(f"  the program's threads alone: "
              f"{(sum(pg.values()) - sum(png.values())) * scale:+.3f} {unit}; by group: "
              + ", ".join(f"{name} {(pg[name] - png[name]) * scale:+.3f}" for name in groups))
        ps, pns = by_symbol(program), by_symbol(native_program)
        print(f"  symbols that gained most on the program's threads ({unit}):")
        gained = sorted(((ps[k] - pns[k], k) for k in set(ps) | set(pns)), reverse=True)
        for diff, (dso, sym) in gained[:args.top]:
            print(f"    {diff * scale:+8.3f}  {dso:<24} {sym[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
