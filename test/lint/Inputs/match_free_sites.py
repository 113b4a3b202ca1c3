"""Matches xstream-lint warnings to the `// free-site: MODE` markers of an
example file: the free sites of the modes in --warn must carry a warning of
the given rule, every other marked free site none.

  match_free_sites.py EXAMPLE.cu LINT_OUTPUT --warn buggy=xstream-unordered-free
"""
import argparse
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("example")
ap.add_argument("lint_output")
ap.add_argument("--warn", action="append", default=[], help="MODE=RULE")
args = ap.parse_args()

expected = dict(w.split("=", 1) for w in args.warn)
sites = {}
for n, line in enumerate(open(args.example), 1):
    m = re.search(r"//\s*free-site:\s*(\S+)", line)
    if m:
        sites[n] = m.group(1)
if not sites:
    print("no free-site markers in " + args.example)
    sys.exit(1)

name = args.example.rsplit("/", 1)[-1]
warned = {}
for line in open(args.lint_output):
    m = re.match(r".*?([^/\s]+):(\d+):\d+: warning: .*\[(xstream-[a-z-]+)\]$", line.rstrip())
    if m and m.group(1) == name:
        warned.setdefault(int(m.group(2)), set()).add(m.group(3))

ok = True
for n, mode in sorted(sites.items()):
    got = warned.pop(n, set())
    want = expected.get(mode)
    status = "warns " + ",".join(sorted(got)) if got else "clean"
    print(f"{mode}: {status}")
    if want and want not in got:
        ok = False
        print(f"  line {n}: expected {want}")
    if not want and got:
        ok = False
        print(f"  line {n}: expected no warning")
for n, rules in sorted(warned.items()):
    print(f"unmarked line {n}: warns {','.join(sorted(rules))}")
    ok = False
sys.exit(0 if ok else 1)
