#!/usr/bin/env python3
"""Fuzzes xstream-lint with token-level mutations of its own test inputs.

Each mutant is a copy of one lint input (a .cu file, or the shared .cuh
header under an unchanged .cu that includes it) with one to four random
edits: gentle ones that often still compile (statements deleted, duplicated,
swapped or moved; one identifier in place of another) and rough token-level
ones (deletions, duplications, swaps, replacements with tokens of the same
file or CUDA-flavoured ones, insertions, truncation, deep nesting). The
lint must end every run with exit status 0, 1 or 2: a signal (crash), any
other status, or a run longer than --timeout (hang) is a failure, and the
mutant is kept for reproduction.

  lint_mutate.py --lint XSTREAM_LINT --inputs test/lint/Inputs --work DIR
                 [--seed N] [--count N] [--timeout S] [--jobs N]

Deterministic for a given --seed and set of inputs.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shlex
import shutil
import subprocess
import sys

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\d[\w.]*)
  | (?P<punct><<<|>>>|<<=|>>=|->\*|::|->|\+\+|--|&&|\|\||<=|>=|==|!=|\+=|-=|\*=|/=|<<|>>|\#\#|.)
""", re.VERBOSE | re.DOTALL)

# Tokens that steer mutants towards the analysis' own territory.
POOL = [
    "cudaFreeAsync", "cudaMallocAsync", "cudaStreamWaitEvent", "cudaEventRecord",
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaFree", "cudaMalloc",
    "cudaEventCreate", "cudaStream_t", "cudaEvent_t", "compute", "ag_stream", "0",
    "nullptr", "&", "*", "(", ")", "{", "}", "[", "]", ";", ",", "<<<", ">>>", "if",
    "else", "for", "while", "do", "return", "goto", "break", "switch", "case", "template",
    "typename", "auto", "static", "__global__", "__device__", "[&]", "...", "#", "\n#define X\n",
    "\n#include \"pipeline_common.cuh\"\n", "=", "==", "->", "::", "<", ">", "'", "\"",
    "/*", "\\", "try", "catch", "throw", "co_await", "sizeof", "decltype", "L\"x\"",
    "18446744073709551615", "0x", "1e999", "__attribute__((noreturn))",
]


def tokenize(text):
    return [m.group(0) for m in TOKEN.finditer(text)]


def significant(tokens):
    return [i for i, t in enumerate(tokens) if not t.isspace()]


def mutate_tokens(text, rng):
    """A rough edit: most of these make the file fail to compile."""
    tokens = tokenize(text)
    sig = significant(tokens)
    if not sig:
        return text + rng.choice(POOL)
    i = rng.choice(sig)
    op = rng.randrange(9)
    if op == 0:      # delete
        del tokens[i]
    elif op == 1:    # duplicate
        tokens.insert(i, tokens[i])
    elif op == 2:    # swap with the next significant token
        later = [j for j in sig if j > i]
        if later:
            j = later[0]
            tokens[i], tokens[j] = tokens[j], tokens[i]
    elif op == 3:    # replace with a token of the same file
        tokens[i] = tokens[rng.choice(sig)]
    elif op == 4:    # replace with a pool token
        tokens[i] = rng.choice(POOL)
    elif op == 5:    # insert a pool token
        tokens.insert(i, " " + rng.choice(POOL) + " ")
    elif op == 6:    # truncate
        tokens = tokens[:i]
    elif op == 7:    # copy a span of tokens elsewhere
        start = rng.choice(sig)
        span = tokens[start:start + rng.randint(1, 40)]
        tokens[i:i] = span
    else:            # deep nesting around one token
        depth = rng.choice([8, 64, 300, 2000])
        open_, close = rng.choice([("(", ")"), ("{", "}"), ("[", "]")])
        tokens[i] = open_ * depth + tokens[i] + close * depth
    return "".join(tokens)


CALL_STATEMENT = re.compile(r"^\s*[A-Za-z_][\w:.]*\s*(<<<.*>>>)?\s*\(.*\)\s*;")
CUDA_CALL = re.compile(r"\b(cuda\w+)\(([^;()]*)\)")


def mutate_gently(text, rng):
    """An edit that usually still compiles, so the analysis itself runs on
    odd programs: a call statement deleted, duplicated or moved a few lines
    (a free before its use, a wait after the free), or one argument of a CUDA
    call replaced by what the same argument is elsewhere in the file (another
    stream, another event, another buffer)."""
    lines = text.split("\n")
    calls = [i for i, l in enumerate(lines) if CALL_STATEMENT.match(l)]
    if rng.random() < 0.5 and calls:
        i = rng.choice(calls)
        op = rng.randrange(3)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        else:
            moved = lines.pop(i)
            lines.insert(max(0, min(len(lines), i + rng.randint(-6, 6))), moved)
        return "\n".join(lines)
    matches = list(CUDA_CALL.finditer(text))
    seen = {}
    for m in matches:
        for k, arg in enumerate(m.group(2).split(",")):
            seen.setdefault((m.group(1), k), set()).add(arg.strip())
    if not matches:
        return text
    m = rng.choice(matches)
    args = m.group(2).split(",")
    k = rng.randrange(len(args))
    choices = sorted(seen[(m.group(1), k)] - {args[k].strip()})
    if not choices:
        return text
    args[k] = " " + rng.choice(choices) if k else rng.choice(choices)
    return text[:m.start(2)] + ",".join(args) + text[m.end(2):]


def mutate(text, rng):
    return mutate_gently(text, rng) if rng.random() < 0.75 else mutate_tokens(text, rng)


def pick_inputs(inputs_dir):
    sources = sorted(f for f in os.listdir(inputs_dir) if f.endswith((".cu", ".cuh")))
    if not sources:
        sys.exit("lint_mutate: no .cu/.cuh inputs in %s" % inputs_dir)
    return sources


def make_mutant(index, args, sources, rng):
    """Writes mutant `index` into its own directory; returns (main file, edits)."""
    target = rng.choice(sources)
    directory = os.path.join(args.work, "m%04d" % index)
    os.makedirs(directory)
    with open(os.path.join(args.inputs, target), encoding="utf-8", errors="replace") as f:
        text = f.read()
    edits = rng.randint(1, 4)
    for _ in range(edits):
        text = mutate(text, rng)
    with open(os.path.join(directory, target), "w", encoding="utf-8") as f:
        f.write(text)
    main = target
    if target.endswith(".cuh"):
        # Lint a .cu that includes the mutated header (found first, next to it).
        users = [s for s in sources if s.endswith(".cu") and
                 ('"%s"' % target) in open(os.path.join(args.inputs, s), errors="replace").read()]
        if not users:
            return None, target, edits
        main = rng.choice(users)
        shutil.copy(os.path.join(args.inputs, main), os.path.join(directory, main))
    return os.path.join(directory, main), target, edits


def run_one(lint, main, args):
    flags = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
             "-Wno-unknown-cuda-version", "-std=c++17",
             "-I", os.path.join(args.inputs, "cuda"), "-I", args.inputs]
    command = lint + [main, "--"] + flags
    try:
        done = subprocess.run(command, capture_output=True, timeout=args.timeout,
                              cwd=os.path.dirname(main))
    except subprocess.TimeoutExpired:
        return command, None, b""
    return command, done.returncode, done.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lint", required=True, help="the xstream-lint command")
    parser.add_argument("--inputs", required=True, help="the lint suite's Inputs directory")
    parser.add_argument("--work", required=True, help="scratch directory (recreated)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    args.inputs = os.path.abspath(args.inputs)
    args.work = os.path.abspath(args.work)
    lint = shlex.split(args.lint)
    if not lint or not (shutil.which(lint[0]) or os.access(lint[0], os.X_OK)):
        print("lint_mutate: %s is not an executable" % (lint[0] if lint else "''"))
        return 1
    if os.path.exists(lint[0]):
        lint[0] = os.path.abspath(lint[0])  # the lint runs from each mutant's directory

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    sources = pick_inputs(args.inputs)
    mutants = []
    for index in range(args.count):
        rng = random.Random(args.seed * 1000003 + index)
        main_file, target, edits = make_mutant(index, args, sources, rng)
        if main_file:
            mutants.append((index, main_file, target, edits))

    outcomes = {0: 0, 1: 0, 2: 0}
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = {pool.submit(run_one, lint, m[1], args): m for m in mutants}
        for future in concurrent.futures.as_completed(runs):
            index, main_file, target, edits = runs[future]
            command, status, stderr = future.result()
            if status in outcomes:
                outcomes[status] += 1
                continue
            if status is None:
                why = "hangs (over %g s)" % args.timeout
            elif status < 0:
                why = "killed by signal %d" % -status
            else:
                why = "exit %d (expected 0, 1 or 2)" % status
            failures.append((index, why, command, stderr))

    print("lint_mutate: %d mutants (seed %d): %d exit 0, %d exit 1, %d exit 2, %d failures"
          % (len(mutants), args.seed, outcomes[0], outcomes[1], outcomes[2], len(failures)))
    for index, why, command, stderr in sorted(failures):
        print("FAIL mutant %d: %s" % (index, why))
        print("  reproduce: " + " ".join(shlex.quote(c) for c in command))
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        for line in tail:
            print("  | " + line)
    return 1 if failures or not mutants else 0


if __name__ == "__main__":
    sys.exit(main())
