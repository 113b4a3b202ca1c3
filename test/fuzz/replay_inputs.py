#!/usr/bin/env python3
"""Replays trace inputs through `xstream-check replay` and checks how it ends.

An input whose file name starts with "broken_", and with --all-rejected every
input whose name does not start with "valid_", must be rejected: exit status
2 and exactly one line on stderr. Any other input is a valid trace: exit 0
(clean) or 66 (findings). A signal, a hang or any other status fails.

  replay_inputs.py --xsc XSTREAM_CHECK [--all-rejected] PATH...
PATH is an input file or a directory of them (README.md files are skipped).
"""
import argparse
import os
import resource
import subprocess
import sys


def inputs(paths):
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if os.path.isfile(full) and not name.endswith(".md"):
                    yield full
        else:
            yield path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--xsc", required=True)
    parser.add_argument("--all-rejected", action="store_true")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--max-rss-mb", type=int, default=None,
                        help="fail an input whose replay's peak RSS exceeds this")
    parser.add_argument("--allow-empty", action="store_true",
                        help="no inputs is not a failure")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()

    failures = 0
    count = 0
    for path in inputs(args.paths):
        count += 1
        name = os.path.basename(path)
        rejected = name.startswith("broken_") or (args.all_rejected and not name.startswith("valid_"))
        peak_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        try:
            done = subprocess.run([args.xsc, "replay", path], capture_output=True,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print("FAIL %s: hangs (over %g s)" % (path, args.timeout))
            failures += 1
            continue
        err_lines = done.stderr.decode("utf-8", "replace").splitlines()
        # The children's peak only rises: a rise past the limit is this run's.
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if done.returncode < 0:
            problem = "killed by signal %d" % -done.returncode
        elif rejected and done.returncode != 2:
            problem = "exit %d, expected 2 (rejected)" % done.returncode
        elif rejected and len(err_lines) != 1:
            problem = "%d lines on stderr, expected one error line" % len(err_lines)
        elif not rejected and done.returncode not in (0, 66):
            problem = "exit %d, expected 0 or 66 (a valid trace)" % done.returncode
        elif (args.max_rss_mb is not None and peak_kb > peak_before
              and peak_kb > args.max_rss_mb * 1024):
            problem = "peak RSS %d MiB, over the %d MiB limit" % (peak_kb // 1024, args.max_rss_mb)
        else:
            outcome = err_lines[0] if rejected else "exit %d" % done.returncode
            print("ok %s: %s" % (os.path.basename(path), outcome))
            continue
        failures += 1
        print("FAIL %s: %s" % (path, problem))
        sys.stdout.write(done.stderr.decode("utf-8", "replace")[-2000:])
    print("%d input(s), %d failure(s)" % (count, failures))
    return 1 if failures or (count == 0 and not args.allow_empty) else 0


if __name__ == "__main__":
    sys.exit(main())
