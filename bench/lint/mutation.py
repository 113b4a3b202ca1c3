"""Recall of the C++/CUDA static check (xstream-lint) by mutation.

    python3 bench/lint/mutation.py [--lint build/bin/xstream-lint] [--json OUT]
        [--arg=-IDIR ...] TREE...

Deletes, one at a time, each host synchronization, stream wait and
record_stream call in the tree's .cu and .cpp files, lints the mutated file
(the same compiler arguments as the unmutated one), and counts the
deletions that get a warning the unmutated file did not have. A deleted
call keeps the statement around it, so lines keep their numbers and the
code still compiles:
- cudaStreamWaitEvent, cudaStreamSynchronize, cudaEventSynchronize,
  cudaDeviceSynchronize (and their cu* driver forms): the call becomes
  `cudaSuccess` (`checkCudaErrors(cudaSuccess)`, `err = cudaSuccess`);
- `recordStream(...)` with its qualifiers, and `.record_stream(...)`: the
  call becomes `(void)0`, the method call nothing.

Each file is linted with `--cuda-path`, `-std=c++17`, `-I` to its own
directory, the `--arg` values ({tree} is the tree's root), and `-x cu` for
a .cu file. With `--nvcc NVCC`, those arguments are NVCC's command line,
given through a compilation database as a build's would be, so the linter
treats the file as nvcc compiles it (its nvcc compatibility prelude
included). A file the check cannot analyze unmutated (exit 2) is left
out; a mutant it cannot analyze is counted as neither.

Prints a row per tree (deletions, caught, files, the rules' warnings on the
unmutated tree) and, with --json, the unmutated tree's warnings and each
mutant's verdict and new warnings.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SYNCS = ("cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize",
         "cuStreamWaitEvent", "cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize")
RECORDS = ("recordStream",)
CALL = re.compile(r"(?:\b(?:[A-Za-z_]\w*::)*(%s)|\.(record_stream))\s*\(" % "|".join(SYNCS + RECORDS))
WARNING = re.compile(r"^(.*?):(\d+):(\d+): warning: (.*)$")


def blank_comments(text):
    """The text with comments and string literals replaced by spaces (newlines
    kept), so that a call named in one is not taken for a call."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def call_end(code, open_paren):
    """The index after the parenthesis that closes the one at `open_paren`."""
    depth = 0
    for i in range(open_paren, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def deletions(text):
    """(start, end, replacement, name, line) of each deletable call."""
    code = blank_comments(text)
    found = []
    for m in CALL.finditer(code):
        end = call_end(code, m.end() - 1)
        if end is None:
            continue
        name = m.group(1) or m.group(2)
        if m.group(2):
            replacement = ""
        elif name in RECORDS:
            replacement = "(void)0"
        else:
            replacement = "cudaSuccess" if name.startswith("cuda") else "CUDA_SUCCESS"
        line = text.count("\n", 0, m.start()) + 1
        found.append((m.start(), end, replacement, name, line))
    return found


def mutate(text, start, end, replacement):
    """`text` with [start, end) replaced, its newlines kept."""
    removed = text[start:end]
    pad = "".join(ch if ch == "\n" else " " for ch in removed[len(replacement):])
    return text[:start] + replacement + pad + text[end:]


def lint(args, path, source, tree):
    """(exit status, set of (line, message)) of linting `source` as `path`."""
    suffix = os.path.splitext(path)[1]
    with tempfile.NamedTemporaryFile("w", suffix=suffix, dir=os.path.dirname(path), delete=False,
                                     prefix=".xsc-mutant-") as f:
        f.write(source)
        mutant = f.name
    try:
        extra = ["-std=c++17", "-I" + os.path.dirname(path)] + [a.replace("{tree}", tree) for a in args.arg]
        if suffix == ".cu":
            extra += ["-x", "cu"]
        if args.nvcc:
            db = tempfile.mkdtemp(prefix="xsc-mutant-db-")
            command = [args.nvcc] + extra + ["-c", mutant, "-o", os.devnull]
            with open(os.path.join(db, "compile_commands.json"), "w") as f:
                json.dump([{"directory": os.path.dirname(path), "file": mutant, "arguments": command}], f)
            cmd = [args.lint, "--cuda-path=" + args.cuda_path, "-p", db, mutant]
        else:
            db = None
            cmd = [args.lint, "--cuda-path=" + args.cuda_path, mutant, "--"] + extra
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        finally:
            if db:
                shutil.rmtree(db, ignore_errors=True)
        warnings = set()
        for line in proc.stderr.splitlines():
            m = WARNING.match(line)
            # The rules' warnings; a function left out for its compile
            # errors (xstream-compile-error) is no finding.
            if m and os.path.basename(m.group(1)) == os.path.basename(mutant) and \
                    not m.group(4).endswith("[xstream-compile-error]"):
                warnings.add((int(m.group(2)), m.group(4)))
        return proc.returncode, warnings
    finally:
        os.unlink(mutant)


def run_tree(args, tree):
    files = []
    for root, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith((".cu", ".cpp")):
                files.append(os.path.join(root, name))
    row = {"tree": tree, "files": 0, "left_out": [], "baseline_warnings": [], "mutants": []}
    for path in files:
        with open(path, errors="replace") as f:
            text = f.read()
        found = deletions(text)
        if not found:
            continue
        status, base = lint(args, path, text, tree)
        if status == 2:
            row["left_out"].append(os.path.relpath(path, tree))
            continue
        row["files"] += 1
        row["baseline_warnings"] += [{"path": os.path.relpath(path, tree), "line": ln, "message": msg}
                                     for ln, msg in sorted(base)]
        for start, end, replacement, name, line in found:
            status, warned = lint(args, path, mutate(text, start, end, replacement), tree)
            new = sorted(warned - base)
            row["mutants"].append({"path": os.path.relpath(path, tree), "line": line, "call": name,
                                   "analyzed": status != 2, "caught": status != 2 and bool(new),
                                   "warnings": [{"line": ln, "message": msg} for ln, msg in new]})
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--lint", default=os.path.join(here, "..", "..", "build", "bin", "xstream-lint"))
    parser.add_argument("--cuda-path", default=os.environ.get("CUDA_PATH", "/usr/local/cuda"))
    parser.add_argument("--arg", action="append", default=[],
                        help="a compiler argument for every file ({tree}: the tree's root)")
    parser.add_argument("--json", help="write every mutant's verdict here")
    parser.add_argument("--nvcc", help="lint each file as this nvcc compiles it (a compilation database)")
    parser.add_argument("trees", nargs="+")
    args = parser.parse_args(argv)
    if not os.access(args.lint, os.X_OK):
        print("mutation.py: no xstream-lint at %s (--lint)" % args.lint, file=sys.stderr)
        return 2
    rows = []
    print("%-28s %9s %8s %12s %10s %9s" % ("tree", "deletions", "caught", "not analyzed", "files", "warnings"))
    for tree in args.trees:
        if not os.path.isdir(tree):
            print("mutation.py: not a directory: %s" % tree, file=sys.stderr)
            return 2
        row = run_tree(args, tree)
        rows.append(row)
        mutants = row["mutants"]
        print("%-28s %9d %8d %12d %10d %9d" % (
            os.path.basename(os.path.normpath(tree))[:28], len(mutants), sum(m["caught"] for m in mutants),
            sum(not m["analyzed"] for m in mutants), row["files"], len(row["baseline_warnings"])), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
