#!/usr/bin/env python3
"""Recall of the Python check by mutation: delete each ordering statement of
a tree (`x.record_stream(s)`, `s.wait_stream(o)`, `s.wait_event(e)`,
`...synchronize()`), one at a time, lint the tree again and count the
deletions that get a new warning.

  mutation.py [--json OUT] [--list] [--limit N] [--verdicts FILE] TREE [TREE...]

A deletion replaces the statement with `pass` (its other lines with blank
lines), so every other line keeps its number and a warning is new when its
(rule, line, column) was not reported on the unmutated file, or, for a free
inside a helper reported at the helper's call, when the free it names there
is another. The tree is
parsed and indexed once; each mutant re-checks its own file against the
rest of the tree (helpers in other modules keep their unmutated text).

Per tree it prints the lines, the deletions by kind, those caught (a new
warning anywhere in the mutated file or in a file of the tree that calls
the mutated function, each checked again with the mutated text in view;
and at the deletion's function: inside the def that holds it, at a call of
that def, or in a function whose check interpreted that def at a call), and
the warnings of the unmutated tree, which each need a verdict in
docs/static-check.md. `--only hazard` (with --verdicts) mutates only the
deletions judged to leave a hazard, for a quicker recall run.
With --verdicts (bench/pylint/verdicts.json: for each deletion of the
trees measured in docs/static-check.md, whether it leaves a hazard by the
three rules, decided by reading the code around it, and why), the recall is
also counted over the deletions that leave one. A verdict names its tree
by the tree folder's name and its file by the path under that folder
(`megatron_core/megatron/core/...`, `deepspeed/deepspeed-0.19.8/...` for an
sdist): a tree laid out otherwise meets none, and gets a warning saying so.
`--list` prints each deletion as CAUGHT (a new warning at its function, as
the recall counts), elsewhere (a new warning, not there) or missed.
A `record_stream` inside a method that only forwards to its tensors
(`def record_stream(self, stream): for t in ...: t.record_stream(stream)`)
is judged at its callers and counted apart as "forwarding".
"""
import argparse
import ast
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..", "..", "python")))

from xstream_check.lint.cli import python_files  # noqa: E402
from xstream_check.lint.report import Linter  # noqa: E402

KINDS = ("record_stream", "wait_stream", "wait_event", "synchronize")
# Callers in other files are checked again with the mutated text for at most
# this many files, and never for names every module calls.
MAX_CALLER_FILES = 12
# How many calls away a caller is looked for (MAX_INLINE_DEPTH of the check).
CALLER_DEPTH = 3
COMMON_NAMES = {"forward", "backward", "step", "run", "wait", "record_stream", "synchronize", "call",
                "apply", "update", "reset", "get", "set", "load", "save", "main"}


def kind_of(stmt):
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    func = stmt.value.func
    if isinstance(func, ast.Attribute) and func.attr in KINDS:
        return func.attr
    return None


def enclosing_defs(tree):
    """stmt id -> the innermost def around it."""
    out = {}

    def visit(node, fn):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            if isinstance(child, ast.stmt):
                out[id(child)] = fn
            visit(child, inner)

    visit(tree, None)
    return out


def is_forwarding(fn):
    return fn is not None and fn.name == "record_stream"


def mutations(path, source, tree):
    defs = enclosing_defs(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        kind = kind_of(node)
        if kind is None:
            continue
        fn = defs.get(id(node))
        out.append((node, kind, fn))
    out.sort(key=lambda m: (m[0].lineno, m[0].col_offset))
    return out


def warning_key(f):
    """What tells two warnings apart: rule and place, and for a free inside
    a helper reported at its call, where in the helper it frees."""
    return (f.rule, f.line, f.col, f.freed_at)


def mutate(lines, stmt):
    new = list(lines)
    first, last = stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
    # A statement that shares its line with others (`a(); b.record_stream(s)`)
    # is left alone: no deletion keeps the rest of that line intact.
    text = lines[first][stmt.col_offset:] if first == last else None
    if first == last and text is not None and stmt.end_col_offset is not None and \
            lines[first][stmt.end_col_offset:].strip() not in ("", ) and \
            not lines[first][stmt.end_col_offset:].strip().startswith("#"):
        return None
    if lines[first][:stmt.col_offset].strip():
        return None
    new[first] = indent + "pass"
    for i in range(first + 1, last + 1):
        new[i] = ""
    return new


def callee_name(call):
    """`f` of a call `f(...)` or `x.f(...)`, else None."""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def calls_of(tree, name):
    """Lines of calls `name(...)` / `x.name(...)` in a tree."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and callee_name(node) == name]


def run_tree(root, limit=None, listing=False, keep=None):
    files = python_files(root)
    linter = Linter(files)
    start = time.process_time()
    baseline = linter.check_all()
    lint_cpu = time.process_time() - start
    lines = sum(len(linter.lines(p)) for p in files)
    counts = {k: {"deletions": 0, "caught": 0, "caught_at_function": 0} for k in KINDS}
    call_lines = {}
    texts = {}

    def calls_in(other, name):
        key = (other, name)
        if key not in call_lines:
            call_lines[key] = set(calls_of(linter.tree(other), name)) if linter.tree(other) else set()
        return call_lines[key]

    def callers_in(p, names):
        """Names of the defs in file `p` that call one of `names`."""
        out = set()
        tree = linter.tree(p)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(c, ast.Call) and callee_name(c) in names for c in ast.walk(node)):
                out.add(node.name)
        return out

    def caller_files(fn, path):
        """The other files of the tree that call `fn` by its name, or call a
        function that does, up to CALLER_DEPTH calls away (the check follows
        a helper that deep into its caller, and reports there). At most
        MAX_CALLER_FILES; a name as common as `forward` is left alone."""
        if fn is None or fn.name.startswith("__") or fn.name in COMMON_NAMES:
            return []
        if not texts:
            texts.update((p, "\n".join(linter.lines(p))) for p in files)
        out, names, frontier = set(), {fn.name}, {fn.name}
        for depth in range(CALLER_DEPTH):
            patterns = [n + "(" for n in frontier]
            hits = [p for p in files if any(x in texts[p] for x in patterns)]
            wider = out | {p for p in hits if p != path}
            if len(wider) > MAX_CALLER_FILES:
                # The direct callers alone past the bound: none (as before);
                # a farther level past it: the nearer ones.
                return [] if depth == 0 else sorted(out)
            out = wider
            frontier = set().union(*(callers_in(p, frontier) for p in hits)) - names - COMMON_NAMES
            frontier = {n for n in frontier if not n.startswith("__")}
            names |= frontier
            if not frontier:
                break
        return sorted(out)
    forwarding = 0
    rows = []
    done = 0
    for path in files:
        tree = linter.tree(path)
        if tree is None:
            continue
        src_lines = linter.lines(path)
        before = {warning_key(f) for f in baseline.get(path, [])}
        for stmt, kind, fn in mutations(path, None, tree):
            if is_forwarding(fn):
                forwarding += 1
                continue
            if keep is not None and not keep(os.path.relpath(path, root), stmt.lineno, kind):
                continue
            new = mutate(src_lines, stmt)
            if new is None:
                continue
            if limit is not None and done >= limit:
                break
            done += 1
            others = caller_files(fn, path)
            found = linter.recheck(path, "\n".join(new) + "\n", also=others)
            if not others:
                found = {path: found}
            fresh = [f for f in found[path] if warning_key(f) not in before]
            # A caller in another file interprets the changed function at its
            # call, and reports there what the deletion left unordered.
            remote = []
            for other in others:
                had = {warning_key(f) for f in baseline.get(other, [])}
                remote.extend((other, f) for f in found.get(other, [])
                              if warning_key(f) not in had)
            c = counts[kind]
            c["deletions"] += 1
            at_fn = False
            if fresh or remote:
                c["caught"] += 1
                if fn is not None:
                    lo, hi = fn.lineno, fn.end_lineno or fn.lineno
                    callers = set(calls_of(tree, fn.name))
                    # Inside the function, at a call of it, or in a function
                    # whose check interpreted it at a call (the deletion is
                    # in what that check followed).
                    me = (path, fn.lineno)
                    at_fn = any(lo <= f.line <= hi or f.line in callers or me in f.inlined for f in fresh) or any(
                        f.line in calls_in(other, fn.name) or me in f.inlined for other, f in remote)
                else:
                    at_fn = True
                if at_fn:
                    c["caught_at_function"] += 1
            rows.append({"path": os.path.relpath(path, root), "line": stmt.lineno, "kind": kind,
                         "function": fn.name if fn is not None else "<module>",
                         "caught": bool(fresh or remote), "at_function": at_fn,
                         "warnings": ["%d: %s" % (f.line, f.rule) for f in fresh] +
                         ["%s:%d: %s" % (os.path.relpath(o, root), f.line, f.rule) for o, f in remote]})
            if listing:
                # As the recall counts it: a warning at the deletion's function.
                verdict = "CAUGHT" if at_fn else "elsewhere" if fresh or remote else "missed"
                print("%s %s:%d %s %s" % (verdict, os.path.relpath(path, root), stmt.lineno, kind,
                                          rows[-1]["function"]))
    warnings = [{"path": os.path.relpath(p, root), "line": f.line, "rule": f.rule, "message": f.message}
                for p in files for f in baseline.get(p, [])]
    return {"tree": root, "files": len(files), "lines": lines, "lint_cpu_s": round(lint_cpu, 2),
            "lines_per_s": round(lines / lint_cpu) if lint_cpu else None,
            "kinds": counts, "forwarding": forwarding, "baseline_warnings": warnings, "mutants": rows}


def verdict_layout_problem(root, verdicts):
    """Why no deletion of the tree at `root` can meet its verdicts, or None.
    A verdict names its tree by the folder's name and its file by the path
    under that folder, as the tree was laid out when it was judged."""
    name = os.path.basename(os.path.normpath(root))
    paths = sorted({path for tree, path, _, _ in verdicts if tree == name})
    if not paths:
        named = sorted({tree for tree, _, _, _ in verdicts})
        return "no verdict names the tree '%s' (they name %s): its deletions have none" % (
            name, ", ".join(named))
    if not any(os.path.isfile(os.path.join(root, p)) for p in paths):
        return ("none of the %d files the verdicts of '%s' name is under %s: lay it out as they do "
                "(e.g. %s/%s)" % (len(paths), name, root, name, paths[0]))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--json", help="write every tree's result (each mutant too) to this file")
    ap.add_argument("--list", action="store_true", help="print each mutant's verdict")
    ap.add_argument("--limit", type=int, help="at most this many mutants per tree")
    ap.add_argument("--verdicts", help="a verdicts file: count the recall over the deletions that leave a hazard")
    ap.add_argument("--only", choices=("hazard", "no-hazard", "unknown"),
                    help="with --verdicts: mutate only the deletions with this verdict (a quicker recall run)")
    args = ap.parse_args()
    verdicts = {}
    if args.verdicts:
        try:
            with open(args.verdicts) as fh:
                for v in json.load(fh):
                    verdicts[(v["tree"], v["path"], v["line"], v["kind"])] = v
        except (OSError, ValueError, KeyError, TypeError) as e:
            print("mutation.py: error: cannot read verdicts '%s': %s" % (args.verdicts, e), file=sys.stderr)
            return 2
    results = []
    for t in args.trees:
        if not os.path.isdir(t):
            print("mutation.py: error: '%s' is not a directory" % t, file=sys.stderr)
            return 2
        if verdicts:
            laid_out_wrong = verdict_layout_problem(t, verdicts)
            if laid_out_wrong:
                print("mutation.py: warning: %s" % laid_out_wrong, file=sys.stderr)
        keep = None
        if args.only:
            name = os.path.basename(os.path.normpath(t))

            def keep(path, line, kind, name=name):
                v = verdicts.get((name, path, line, kind))
                return v is not None and v["verdict"] == args.only
        results.append(run_tree(t, args.limit, args.list, keep))
    hdr = "%-28s %9s %7s %14s %14s %6s %9s" % ("tree", "lines", "lines/s", "record_stream", "waits+syncs",
                                                "fwd", "warnings")
    print(hdr)
    total = {"rs": [0, 0], "w": [0, 0]}
    for r in results:
        rs = r["kinds"]["record_stream"]
        w = [sum(r["kinds"][k][f] for k in KINDS[1:]) for f in ("deletions", "caught_at_function")]
        total["rs"][0] += rs["deletions"]
        total["rs"][1] += rs["caught_at_function"]
        total["w"][0] += w[0]
        total["w"][1] += w[1]
        print("%-28s %9d %7s %14s %14s %6d %9d" % (
            os.path.basename(os.path.normpath(r["tree"]))[:28], r["lines"], r["lines_per_s"],
            "%d/%d" % (rs["caught_at_function"], rs["deletions"]), "%d/%d" % (w[1], w[0]), r["forwarding"],
            len(r["baseline_warnings"])))
    print("total: record_stream %d/%d caught, waits and synchronizes %d/%d caught" % (
        total["rs"][1], total["rs"][0], total["w"][1], total["w"][0]))
    if verdicts:
        hazard = {"rs": [0, 0], "w": [0, 0]}
        unjudged = 0
        for r in results:
            tree = os.path.basename(os.path.normpath(r["tree"]))
            for m in r["mutants"]:
                v = verdicts.get((tree, m["path"], m["line"], m["kind"]))
                m["verdict"] = v["verdict"] if v else None
                if v is None:
                    unjudged += 1
                    continue
                if v["verdict"] != "hazard":
                    continue
                h = hazard["rs" if m["kind"] == "record_stream" else "w"]
                h[0] += 1
                h[1] += m["at_function"]
        print("over the deletions that leave a hazard: record_stream %d/%d caught, waits and synchronizes "
              "%d/%d caught%s" % (hazard["rs"][1], hazard["rs"][0], hazard["w"][1], hazard["w"][0],
                                  " (%d deletions have no verdict)" % unjudged if unjudged else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
