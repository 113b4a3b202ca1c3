#!/usr/bin/env python3
"""Waits dropped from traces of real programs, and what the checker says.

    python3 bench/replay/wait_mutations.py [--xsc BIN] [--single] TRACE...

A trace recorded from a correct program (XSC_OPTIONS=record=, or the clean
corpus of test/replay/Inputs/corpus) replays with no finding. Each stream
wait in it orders the waiting stream after the work its event captured;
drop the waits and the program is the bug this checker exists to catch,
unless something else still orders that work (another wait, a host
synchronization) or the work touches nothing the waiting stream's later
work does. For each trace this replays the trace as it is, then once per
pair of streams (the waiting one, and the one that recorded the event
waited on) without every wait of that pair, and prints one line each:

    TRACE waiter=S on=R waits=N exit=E findings=K kinds=KIND:COUNT,...

S and R are the trace's stream numbers (0: the legacy default stream; R
is `none` when the trace never recorded the event). `--single` also drops
the pair's waits one at a time and prints how many of those replays
reported anything (`single=REPORTED/N`). A line `TRACE clean exit=E
findings=K` comes first. The replays' own reports are not kept;
`--keep DIR` keeps each pair's mutated trace as DIR/TRACE.S.R.trace, to
replay for the full report.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

SUMMARY = re.compile(r"^SUMMARY: xstream-check: (\S+) ")
FINDINGS = re.compile(r"xstream-check: (\d+) finding\(s\)")


def fail(message):
    print(f"wait_mutations.py: {message}", file=sys.stderr)
    sys.exit(2)


def default_xsc():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "bin", "xstream-check")


def read_trace(path):
    """The trace's lines, and per line the (waiter, recorder) pair of a
    wait, None for every other line."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    recorder = {}
    pairs = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            fail(f"{path}:{number}: not a JSON line")
        if not isinstance(record, dict):
            fail(f"{path}:{number}: not a JSON object")
        kind = record.get("t")
        if kind == "record":
            recorder[record.get("e")] = record.get("s")
        if kind == "wait":
            pairs.append((record.get("s"), recorder.get(record.get("e"))))
        else:
            pairs.append(None)
    return lines, pairs


def replay(xsc, lines, scratch):
    """(exit status, findings, Counter of finding kinds) of a replay."""
    with open(scratch, "w") as f:
        f.write("\n".join(lines) + "\n")
    run = subprocess.run([xsc, "replay", scratch], capture_output=True, text=True)
    text = run.stdout + run.stderr
    counted = FINDINGS.findall(text)
    if run.returncode not in (0, 66) or not counted:
        last = (text.strip().splitlines() or ["no output"])[-1]
        fail(f"replay failed with exit {run.returncode}: {last}")
    kinds = collections.Counter()
    for line in text.splitlines():
        m = SUMMARY.match(line)
        if m:
            kinds[m.group(1)] += 1
    return run.returncode, int(counted[-1]), kinds


def name(stream):
    return "none" if stream is None else str(stream)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE")
    parser.add_argument("--xsc", default=default_xsc(), help="the xstream-check binary")
    parser.add_argument("--single", action="store_true",
                        help="also drop each wait alone and count the replays that report")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each pair's mutated trace in DIR")
    args = parser.parse_args(argv)
    if not os.access(args.xsc, os.X_OK):
        fail(f"{args.xsc}: not an executable xstream-check")
    if args.keep is not None and not os.path.isdir(args.keep):
        fail(f"{args.keep}: not a directory")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "mutated.trace")
        for path in args.traces:
            label = os.path.basename(path)
            lines, pairs = read_trace(path)
            status, findings, _ = replay(args.xsc, lines, scratch)
            print(f"{label} clean exit={status} findings={findings}", flush=True)
            by_pair = collections.defaultdict(list)
            for index, pair in enumerate(pairs):
                if pair is not None:
                    by_pair[pair].append(index)
            for pair in sorted(by_pair, key=lambda p: (name(p[0]), name(p[1]))):
                dropped = set(by_pair[pair])
                kept = [line for i, line in enumerate(lines) if i not in dropped]
                status, findings, kinds = replay(args.xsc, kept, scratch)
                if args.keep is not None:
                    os.replace(scratch, os.path.join(
                        args.keep, f"{label}.{name(pair[0])}.{name(pair[1])}.trace"))
                kind_text = ",".join(f"{k}:{kinds[k]}" for k in sorted(kinds)) or "-"
                line = (f"{label} waiter={name(pair[0])} on={name(pair[1])} "
                        f"waits={len(dropped)} exit={status} findings={findings} kinds={kind_text}")
                if args.single:
                    reported = 0
                    for index in by_pair[pair]:
                        reported += replay(args.xsc, lines[:index] + lines[index + 1:],
                                           scratch)[1] > 0
                    line += f" single={reported}/{len(dropped)}"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
