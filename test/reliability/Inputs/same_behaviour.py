#!/usr/bin/env python3
"""Runs a program without and with the checker and compares what it did.

The checker must not change a checked program's behaviour: its stdout must be
byte for byte the same, and it must end the same way (exit status or signal).
Whatever the checker could not do it must say in at most --max-notices lines
on stderr (lines that mention "xstream-check"). A run that outlives --timeout
counts as a hang.

  same_behaviour.py --runtime LIB [options] -- PROGRAM [ARGS...]

Exit status 0 when the runs agree, 1 (with both runs' output) when not.
"""
import argparse
import os
import re
import subprocess
import sys


def parse_env(items):
    env = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            sys.exit("same_behaviour: --env/--checked-env takes NAME=VALUE, got %r" % item)
        env[name] = value
    return env


def base_environment(extra):
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith("XSC_")}
    env.update(extra)
    return env


def run(argv, env, timeout):
    try:
        done = subprocess.run(argv, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as hung:
        return None, hung.stdout or b"", hung.stderr or b""
    return done.returncode, done.stdout, done.stderr


def describe_status(status):
    if status is None:
        return "hung (timeout)"
    if status < 0:
        return "killed by signal %d" % -status
    return "exit %d" % status


def notice_lines(stderr):
    return [line for line in stderr.decode("utf-8", "replace").splitlines()
            if "xstream-check" in line]


def rss_growth_kb(stderr):
    """Growth of "load-rss: ... rss_kb=N" between the first and last report."""
    values = [int(m.group(1)) for m in re.finditer(rb"load-rss: .*?rss_kb=(\d+)", stderr)]
    if len(values) < 2:
        return None
    return values[-1] - values[0]


def max_rss_kb(stderr):
    values = [int(m.group(1)) for m in re.finditer(rb"maxrss_kb=(\d+)", stderr)]
    return max(values) if values else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True, help="libxstream_check.so")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE for both runs")
    parser.add_argument("--checked-env", action="append", default=[],
                        help="NAME=VALUE for the run under the checker only")
    parser.add_argument("--max-notices", type=int, default=1)
    parser.add_argument("--expect-notice", default=None,
                        help="regex one notice line must match")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--rss-growth-limit-kb", type=int, default=None,
                        help="checked run's RSS growth between its first and last "
                             "load-rss report, beyond the unchecked run's, at most this")
    parser.add_argument("--stderr-out", default=None,
                        help="write the checked run's stderr here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        sys.exit("same_behaviour: no program given")
    if not os.path.exists(args.runtime):
        sys.exit("same_behaviour: runtime %s does not exist" % args.runtime)

    plain_env = base_environment(parse_env(args.env))
    checked_env = dict(plain_env)
    checked_env["LD_PRELOAD"] = args.runtime
    checked_env.update(parse_env(args.checked_env))

    plain = run(command, plain_env, args.timeout)
    checked = run(command, checked_env, args.timeout)
    if args.stderr_out:
        with open(args.stderr_out, "wb") as out:
            out.write(checked[2])

    problems = []
    if plain[0] is None:
        problems.append("the program hangs even without the checker")
    if checked[0] != plain[0]:
        problems.append("ending differs: %s without the checker, %s with it"
                        % (describe_status(plain[0]), describe_status(checked[0])))
    if checked[1] != plain[1]:
        problems.append("stdout differs")
    notices = notice_lines(checked[2])
    if len(notices) - len(notice_lines(plain[2])) > args.max_notices:
        problems.append("%d lines from the checker, at most %d allowed"
                        % (len(notices), args.max_notices))
    if args.expect_notice and not any(re.search(args.expect_notice, n) for n in notices):
        problems.append("no checker line matches /%s/" % args.expect_notice)
    if args.rss_growth_limit_kb is not None:
        plain_growth = rss_growth_kb(plain[2])
        checked_growth = rss_growth_kb(checked[2])
        if plain_growth is None or checked_growth is None:
            problems.append("the program did not report its RSS twice")
        else:
            print("rss growth: %d kB without the checker, %d kB with it (limit +%d kB)"
                  % (plain_growth, checked_growth, args.rss_growth_limit_kb))
            if checked_growth - plain_growth > args.rss_growth_limit_kb:
                problems.append("memory grows with the history: %d kB more than without "
                                "the checker" % (checked_growth - plain_growth))
    for label, result in (("without", plain), ("with", checked)):
        peak = max_rss_kb(result[2])
        if peak is not None:
            print("peak RSS %s the checker: %d kB" % (label, peak))

    print("%s: %s without the checker, %s with it, %d checker line(s)"
          % (os.path.basename(command[0]), describe_status(plain[0]),
             describe_status(checked[0]), len(notices)))
    for line in notices:
        print("  " + line)
    if not problems:
        return 0
    for p in problems:
        print("FAIL: " + p)
    for label, result in (("without", plain), ("with", checked)):
        sys.stdout.write("--- stdout %s the checker ---\n" % label)
        sys.stdout.write(result[1].decode("utf-8", "replace"))
        sys.stdout.write("--- stderr %s the checker ---\n" % label)
        sys.stdout.write(result[2].decode("utf-8", "replace"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
