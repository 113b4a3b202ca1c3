#!/usr/bin/env python3
"""Runs a libFuzzer target for a bounded time; fails on any crash.

First every committed regression input is run once through the fuzzer (so
they are checked with the fuzzer's sanitizers too), then the fuzzer mutates
from a fresh working copy of the seed corpus for --seconds. The committed
corpus is never written to. On failure the crashing input is kept under
WORK/artifacts/ and the way to turn it into a regression test is printed.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fuzzer", required=True)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--seeds", required=True, help="committed seed corpus directory")
    parser.add_argument("--regressions", default=None,
                        help="directory of inputs that once crashed")
    parser.add_argument("--dict", default=None)
    parser.add_argument("--work", required=True, help="scratch directory (recreated)")
    parser.add_argument("--rss-limit-mb", type=int, default=2048)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()

    if not os.access(args.fuzzer, os.X_OK):
        print("run_fuzzer: %s is not built" % args.fuzzer)
        return 1
    shutil.rmtree(args.work, ignore_errors=True)
    corpus = os.path.join(args.work, "corpus")
    artifacts = os.path.join(args.work, "artifacts") + os.sep
    os.makedirs(corpus)
    os.makedirs(artifacts)
    common = ["-rss_limit_mb=%d" % args.rss_limit_mb, "-timeout=10",
              "-artifact_prefix=" + artifacts, "-print_final_stats=1"]
    if args.dict:
        common.append("-dict=" + args.dict)

    regressions = sorted(glob.glob(os.path.join(args.regressions, "*"))) if args.regressions else []
    regressions = [r for r in regressions if os.path.isfile(r) and not r.endswith(".md")]
    if regressions:
        print("run_fuzzer: replaying %d regression input(s)" % len(regressions), flush=True)
        done = subprocess.run([args.fuzzer] + common + regressions)
        if done.returncode != 0:
            print("run_fuzzer: a regression input fails again (exit %d)" % done.returncode)
            return 1

    command = [args.fuzzer] + common + ["-max_total_time=%d" % args.seconds, corpus, args.seeds]
    if args.jobs > 1:
        command[1:1] = ["-fork=%d" % args.jobs]
    print("run_fuzzer: " + " ".join(command), flush=True)
    done = subprocess.run(command)
    found = sorted(os.listdir(artifacts))
    if done.returncode == 0 and not found:
        print("run_fuzzer: no crash in %d s" % args.seconds)
        return 0
    print("run_fuzzer: FAILED (exit %d); inputs kept:" % done.returncode)
    for name in found:
        print("  " + os.path.join(artifacts, name))
    print("run_fuzzer: reproduce with `%s INPUT`; minimize with -minimize_crash=1 -runs=10000;\n"
          "  then add the input to test/fuzz/regressions/ (see its README.md) and fix the bug."
          % args.fuzzer)
    return 1


if __name__ == "__main__":
    sys.exit(main())
