"""python -m xstream_check.lint [--format=text|sarif|json] [--output=FILE]
[--source-root=DIR] FILES/DIRS...

Exit status: 0 no findings, 1 findings, 2 errors (a file that does not parse
or cannot be read, bad options). Text diagnostics go to stderr in clang's
style; the other files are checked after an error."""
import argparse
import json
import os
import sys

from .report import Linter
from .sarif import render

VERSION = "0.1.0"


def python_files(path):
    """A file as given; a directory: its .py files, sorted, hidden and cache
    directories skipped."""
    if not os.path.isdir(path):
        return [path]
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".py"))
    return out


def format_text(finding, lines_of):
    """clang's layout: the diagnostic, the source line and a caret."""
    out = []

    def emit(path, line, col, level, message):
        out.append("%s:%d:%d: %s: %s\n" % (path, line, col, level, message))
        lines = lines_of(path)
        if 0 < line <= len(lines):
            out.append("%5d | %s\n" % (line, lines[line - 1]))
            out.append("      | %s^\n" % (" " * (col - 1)))

    emit(finding.path, finding.line, finding.col, "warning", "%s [%s]" % (finding.message, finding.rule))
    for n in finding.notes:
        emit(n.path, n.line, n.col, "note", n.message)
    return "".join(out)


def as_json(findings, errors):
    return json.dumps({
        "findings": [{"rule": f.rule, "path": f.path, "line": f.line, "col": f.col, "message": f.message,
                      "notes": [{"path": n.path, "line": n.line, "col": n.col, "message": n.message}
                                for n in f.notes],
                      "identity": f.identity} for f in findings],
        "errors": [{"path": e.path, "line": e.line, "message": e.message} for e in errors],
    }, indent=1) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m xstream_check.lint",
        description="Finds tensors freed on one CUDA stream while another stream may still use them.")
    parser.add_argument("paths", nargs="*", metavar="FILE_OR_DIR")
    parser.add_argument("--format", choices=("text", "sarif", "json"), default="text",
                        help="text: clang-style diagnostics on stderr (default); sarif: a SARIF 2.1.0 log; "
                             "json: findings and errors as one JSON object (stdout, or --output)")
    parser.add_argument("--output", metavar="FILE", help="write the SARIF or JSON output to this file")
    parser.add_argument("--source-root", metavar="DIR", help="directory SARIF paths are relative to "
                        "(default: the current directory)")
    args = parser.parse_args(argv)
    if not args.paths:
        print("xstream-lint: error: no input files", file=sys.stderr)
        return 2
    if args.output and args.format == "text":
        print("xstream-lint: error: --output needs --format=sarif or --format=json", file=sys.stderr)
        return 2

    findings, errors, bad_input = [], [], False
    sources = {}
    files = []
    for path in args.paths:
        if not os.path.exists(path):
            print("xstream-lint: error: no such file '%s'" % path, file=sys.stderr)
            bad_input = True
            continue
        files.extend(python_files(path))
    # One run: every file is checked with the others in view, so a helper
    # imported from another of them is followed.
    linter = Linter(files)
    for f in files:
        error = linter.errors.get(f)
        if error is not None:
            errors.append(error)
            if args.format != "json":
                print("%s:%d: error: %s" % (error.path, error.line, error.message), file=sys.stderr)
            continue
        found = linter.check(f)
        findings.extend(found)
        if found and args.format != "json":
            def lines_of(p):
                if p not in sources:
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        sources[p] = fh.read().splitlines()
                return sources[p]
            for finding in found:
                sys.stderr.write(format_text(finding, lines_of))

    if args.format != "text":
        if args.format == "json":
            text = as_json(findings, errors)
        else:
            text = render(findings, VERSION, args.source_root or os.getcwd())
        if args.output:
            try:
                with open(args.output, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as e:
                print("xstream-lint: error: cannot write '%s': %s" % (args.output, e.strerror), file=sys.stderr)
                return 2
        else:
            sys.stdout.write(text)
    if bad_input or errors:
        return 2
    return 1 if findings else 0
