"""Findings of the Python check, worded and grouped as the C++ check's
(clang-plugin/analysis/analyzer.cpp): one warning per free, at the free, with
notes at the unordered uses, or at the late wait and the use."""
import ast
import gc
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

from .analysis import FunctionAnalysis, GaveUp
from .module import Module, none_tested_stream, repeated_flag, walk
from .facts import ENTRY
from .vocabulary import CURRENT
from .program import Program

RULE_FREE_BEFORE_WAIT = "xstream-free-before-wait"
RULE_UNORDERED_FREE = "xstream-unordered-free"
RULE_USE_BEFORE_READY = "xstream-use-before-ready"
RULE_WRITE_AFTER_READ = "xstream-write-after-read"
RULE_PENDING_AT_RETURN = "xstream-pending-at-return"
# At most this many uses are shown as notes under one warning.
MAX_NOTED_USES = 3


@dataclass
class Note:
    path: str
    line: int
    col: int  # 1-based, in bytes as clang counts
    message: str


@dataclass
class Finding:
    rule: str
    path: str
    line: int
    col: int
    message: str
    notes: list = field(default_factory=list)
    # Stable identity for fingerprints: does not move with line numbers.
    function: str = ""
    buffer: str = ""
    free_stream: str = ""
    use_stream: str = ""
    # The functions (path, line of the def) the analysis interpreted at a
    # call while it checked this finding's function: what the finding may
    # depend on (the mutation harness's "at the deletion's function").
    inlined: frozenset = field(default_factory=frozenset, compare=False, repr=False)
    # Where a helper the finding's function calls frees the buffer (path,
    # line), when the warning is at that call.
    freed_at: tuple = field(default=None, compare=False, repr=False)

    @property
    def identity(self):
        return "|".join((self.function, self.buffer, self.free_stream, self.use_stream))


@dataclass
class ParseError:
    path: str
    line: int
    message: str


# A stream made by a call bound to no name (`streams.append(Stream())`).
UNNAMED_STREAM = re.compile(r"stream@(\d+)")


def stream_name(key):
    if key == CURRENT:
        return "the current stream"
    if key is None:
        return "an unknown stream"
    if key.startswith("@"):
        return "the stream that fills '%s'" % key[1:]
    made = UNNAMED_STREAM.fullmatch(key)
    if made:
        return "the stream made at line %s" % made.group(1)
    return "stream '%s'" % key.lstrip("~")


def stream_expr(key, cupy=False):
    """A stream key as the code would name it."""
    if key == CURRENT:
        return "cupy.cuda.get_current_stream()" if cupy else "torch.cuda.current_stream()"
    made = UNNAMED_STREAM.fullmatch(key)
    if made:
        return "<the stream made at line %s>" % made.group(1)
    return key.lstrip("~")


def wait_expr(waiter, other, cupy=False):
    """The call that makes stream `waiter` wait for stream `other`'s work so
    far: wait_stream in PyTorch, an event recorded and waited on in CuPy
    (whose streams have no wait_stream)."""
    if cupy:
        return "%s.wait_event(%s.record())" % (stream_expr(waiter, True), stream_expr(other, True))
    return "%s.wait_stream(%s)" % (stream_expr(waiter), stream_expr(other))


def speaks_cupy(analysis):
    """Whether the advice is for CuPy code: the module imports CuPy and not
    PyTorch."""
    targets = [t.partition(".")[0] for t in analysis.m.aliases.values()]
    return "cupy" in targets and "torch" not in targets


FREED = {
    "del": "is freed",
    "rebind": "is freed by this assignment",
    "resize": "is freed by resize_(0)",
    "pop": "is freed by this pop",
    "clear": "is freed by clear()",
}


def findings_for(analysis, found, late, path, lines):
    def loc(site):
        node, _ = analysis.site_nodes[site]
        return node.lineno, node.col_offset + 1  # ast's columns count UTF-8 bytes, as clang's

    by_free = {}
    for key in sorted(found):
        by_free.setdefault(key[0], []).append(found[key])
    out = []
    for free_site, entries in sorted(by_free.items()):
        late_entries = [e for e in entries if (e.free_site, e.use_site, e.free_stream) in late]
        unordered = [e for e in entries if (e.free_site, e.use_site, e.free_stream) not in late]
        first = entries[0]
        buf = "'%s'" % first.buffer
        if first.how == "exit":
            freed = "is freed when '%s' returns" % analysis.func.name
        else:
            freed = FREED.get(first.how, "is freed")
        line, col = loc(free_site)
        # Freed inside a helper: the warning is at the call, the first note
        # at the free itself.
        where = analysis.site_where[free_site]
        helper = where[1] if where is not None else None
        inner = analysis.site_inner[free_site]
        inner_freed = freed
        if helper is not None:
            if first.how == "exit":
                inner_freed = "is freed when '%s' returns" % helper
            freed = "is freed in '%s', called here," % helper

        def base(rule, e):
            f = Finding(rule, path, line, col, "", [], analysis.qualname, buf, stream_name(e.free_stream),
                        stream_name(e.use_stream))
            if helper is not None:
                f.freed_at = (where[0], inner.lineno)
                f.notes.append(Note(where[0], inner.lineno, inner.col_offset + 1,
                                    "%s %s here, inside '%s'" % (buf, inner_freed, helper)))
            return f

        if late_entries:
            e = late_entries[0]
            f = base(RULE_FREE_BEFORE_WAIT, e)
            fs = stream_name(e.free_stream)
            f.message = "%s %s on %s before %s waits for its use on %s" % (
                buf, freed, fs, fs, stream_name(e.use_stream))
            noted = set()
            what = "the del" if first.how == "del" else "the free"
            for le in late_entries[:MAX_NOTED_USES]:
                wait = late[(le.free_site, le.use_site, le.free_stream)]
                if wait not in noted:
                    noted.add(wait)
                    f.notes.append(Note(path, *loc(wait), "move this wait before %s" % what))
                f.notes.append(Note(path, *loc(le.use_site), "%s is used on %s here, and the wait orders %s after it"
                                    % (buf, stream_name(le.use_stream), stream_name(le.free_stream))))
            out.append(f)
        if unordered:
            e = unordered[0]
            f = base(RULE_UNORDERED_FREE, e)
            fs = stream_name(e.free_stream)
            f.message = "%s %s on %s while %s may still be using it; nothing orders %s after that use" % (
                buf, freed, fs, stream_name(e.use_stream), fs)
            shown = []
            for u in unordered:
                # Uses inside an inlined helper all show at its call: once is enough.
                if loc(u.use_site) not in [loc(x.use_site) for x in shown]:
                    shown.append(u)
            for u in shown[:MAX_NOTED_USES]:
                us = stream_name(u.use_stream)
                f.notes.append(Note(path, *loc(u.use_site),
                                    "%s is used on %s here; record an event on %s after this use and make %s "
                                    "wait on it before the free" % (buf, us, us, stream_name(u.free_stream))))
            out.append(f)
    out.extend(races_for(analysis, loc, path))
    out.extend(pending_for(analysis, loc, path))
    return out


def pending_for(analysis, loc, path):
    """A tensor left behind with a use pending on another stream: at the
    use, a note where the function returns."""
    out = []
    seen = set()
    for site in sorted(analysis.pending, key=loc):
        p = analysis.pending[site]
        line, col = loc(site)
        if (line, col) in seen:
            continue
        seen.add((line, col))
        buf = "'%s'" % p.buffer
        us, fs = stream_name(p.use_stream), stream_name(p.alloc_stream)
        cupy = speaks_cupy(analysis)
        # A pending write is waited for; a pending use is waited for or, in
        # PyTorch, recorded (CuPy has no record_stream).
        fix = "make %s wait for %s (%s)" % (fs, us, wait_expr(p.alloc_stream, p.use_stream, cupy))
        if p.write:
            f = Finding(RULE_PENDING_AT_RETURN, path, line, col,
                        "%s is written on %s here and handed back when '%s' returns, with nothing making %s wait "
                        "for this write; its next reader on %s may read it before it is written" % (
                            buf, us, analysis.func.name, fs, fs), [], analysis.qualname, buf, us, fs)
        else:
            f = Finding(RULE_PENDING_AT_RETURN, path, line, col,
                        "%s is used on %s here and is still held when '%s' returns, with nothing ordering %s "
                        "(where it was allocated) after this use; whoever frees it later frees it while %s may "
                        "still be using it" % (buf, us, analysis.func.name, fs, us), [],
                        analysis.qualname, buf, fs, us)
            if not cupy:
                fix = "call %s.record_stream(%s) after the use, or make %s wait for %s" % (
                    p.buffer, stream_expr(p.use_stream), fs, us)
        f.notes.append(Note(path, *loc(p.exit_site),
                            "'%s' returns here; %s before returning" % (analysis.func.name, fix)))
        out.append(f)
    return out


def races_for(analysis, loc, path):
    """The byte rules: a use before the write it needs is ordered before it
    (at the use, a note at the write), a write over a use another stream may
    still make (at the write, a note at the use). One warning per location."""
    out = []
    seen = set()
    # The buffer's name breaks ties (two tensors one call reads, before one
    # missing wait): the report does not depend on set order.
    for key in sorted(analysis.races, key=lambda k: (loc(k[2]), loc(k[1]), k[0], analysis.races[k].buffer)):
        r = analysis.races[key]
        line, col = loc(r.second_site)
        if (r.kind, line, col) in seen:
            continue
        seen.add((r.kind, line, col))
        buf = "'%s'" % r.buffer
        first, second = stream_name(r.first_stream), stream_name(r.second_stream)
        origin = analysis.made_sites.get(r.first_site)
        if r.kind == "host":
            f = Finding(RULE_USE_BEFORE_READY, path, line, col,
                        "%s is read by the host before its write on %s is finished; nothing makes the host wait "
                        "for %s after the write" % (buf, first, first), [], analysis.qualname, buf, first, "host")
            f.notes.append(Note(path, *loc(r.first_site),
                                "%s is written on %s here (a copy the host does not wait for); synchronize with "
                                "%s (%s.synchronize(), or an event recorded after the copy and its "
                                "synchronize()) before the read" % (
                                    buf, first, first, stream_expr(r.first_stream, speaks_cupy(analysis)))))
        elif r.kind == "ready" and origin is not None:
            f = Finding(RULE_USE_BEFORE_READY, path, line, col,
                        "%s is used on %s before its write on %s is ordered before this use; nothing makes %s "
                        "wait for %s after the write" % (buf, second, first, second, first), [],
                        analysis.qualname, buf, first, second)
            wait = wait_expr(r.second_stream, r.first_stream, speaks_cupy(analysis))
            if origin == ENTRY:
                f.notes.append(Note(path, *loc(r.first_site),
                                    "%s comes from the caller of '%s', last written on %s before the call; make "
                                    "%s wait for it (%s) before the use" % (
                                        buf, analysis.func.name, first, second, wait)))
            elif isinstance(origin, tuple):
                f.notes.append(Note(path, *loc(r.first_site),
                                    "%s is kept by the object, and another method of its class makes what it "
                                    "holds on %s; make %s wait for it (%s, or an event recorded after that work) "
                                    "before the use" % (buf, first, second, wait)))
            else:
                f.notes.append(Note(path, *loc(r.first_site),
                                    "%s is the result of '%s', made by work on %s; make %s wait for it (%s, or an "
                                    "event recorded after the call) before the use" % (
                                        buf, analysis.call_label(origin), first, second, wait)))
        elif r.kind == "ready":
            f = Finding(RULE_USE_BEFORE_READY, path, line, col,
                        "%s is used on %s before its write on %s is ordered before this use; nothing makes %s "
                        "wait for %s after the write" % (buf, second, first, second, first), [],
                        analysis.qualname, buf, first, second)
            f.notes.append(Note(path, *loc(r.first_site),
                                "%s is written on %s here; make %s wait for it (%s, or an event recorded after "
                                "this write) before the use" % (
                                    buf, first, second,
                                    wait_expr(r.second_stream, r.first_stream, speaks_cupy(analysis)))))
        elif r.first_site in analysis.allocation_sites:
            f = Finding(RULE_WRITE_AFTER_READ, path, line, col,
                        "%s is written on %s into a block allocated from the pool of %s, which %s never waited "
                        "for; work %s enqueued before the allocation may still be using the block"
                        % (buf, second, first, second, first), [], analysis.qualname, buf, second, first)
            f.notes.append(Note(path, *loc(r.first_site),
                                "%s is allocated on %s here; make %s wait for %s (%s) after the allocation and "
                                "before the write" % (
                                    buf, first, second, first,
                                    wait_expr(r.second_stream, r.first_stream, speaks_cupy(analysis)))))
        else:
            f = Finding(RULE_WRITE_AFTER_READ, path, line, col,
                        "%s is written on %s while %s may still be using it; nothing orders %s after that use"
                        % (buf, second, first, second), [], analysis.qualname, buf, second, first)
            f.notes.append(Note(path, *loc(r.first_site),
                                "%s is used on %s here; record an event on %s after this use and make %s wait "
                                "on it before the write" % (buf, first, first, second)))
        out.append(f)
    return out


NOLINT = re.compile(r"#.*\bNOLINT(NEXTLINE)?(?:\(([^)]*)\))?")


def suppressed(lines, finding):
    """`# NOLINT`, `# NOLINT(rule, ...)` on the line, or `# NOLINTNEXTLINE(...)`
    on the line above, as on the C++ side (`xstream-*` matches both rules)."""
    for index, next_line in ((finding.line - 1, False), (finding.line - 2, True)):
        if not 0 <= index < len(lines):
            continue
        m = NOLINT.search(lines[index])
        if not m or bool(m.group(1)) != next_line:
            continue
        if m.group(2) is None:
            return True
        rules = [r.strip() for r in m.group(2).split(",")]
        if any(r == finding.rule or (r.endswith("*") and finding.rule.startswith(r[:-1])) for r in rules):
            return True
    return False


def functions_of(tree):
    """(function, class name, qualified name) for every def, nested ones too."""
    out = []

    def visit(body, prefix, class_name):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + node.name
                out.append((node, class_name, qual))
                visit(node.body, qual + ".", class_name)  # a closure's self is its method's
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".", node.name)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for part in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, part, None)
                    if inner:
                        if part == "handlers":
                            for h in inner:
                                visit(h.body, prefix, class_name)
                        else:
                            visit(inner, prefix, class_name)

    visit(tree.body, "", None)
    return out


def count(stats, key, n=1):
    if stats is not None:
        stats[key] = stats.get(key, 0) + n


def check_tree(tree, path, source, stats=None, module=None):
    """Findings for a parsed module, in source order. `stats`, a dict, gets
    counts of what the analysis did. `module`: the file's Module when it is
    part of a Program (its imports from the run are followed)."""
    if module is None:
        if "stream" not in source and "Stream" not in source and "pin_memory" not in source and \
                "Event(" not in source and "non_blocking" not in source:
            # a use on another stream needs a stream; a host read, a pinned
            # buffer, an event or a copy that does not block
            return []
        module = Module(tree, path, source.splitlines())
    elif not module.streamy():
        return []
    lines = module.lines
    findings = []
    seen = set()
    targets = [(f, c, q) for f, c, q in functions_of(tree) if module.deals_with_streams(f, c)]
    targets.append((tree, None, "<module>"))
    for name, node in module.class_nodes.items():
        stages = module.stages(name)
        if stages and any(module.deals_with_streams(fn, name) for fn, _, _ in stages):
            targets.append((node, name, name + ".<life>", stages))
    for target in targets:
        func, class_name, qual = target[:3]
        single = len(target) == 3 and func is not tree
        nodes = walk(func) if single else None
        flag = repeated_flag(func, nodes) if single else None
        # Such a stream's name names a stream (none_tested_stream).
        maybe_none = none_tested_stream(func, nodes) if single and any(
            "stream" in name.lower() for name in module.subtree(func)[0]) else None
        # One run per value of a flag tested twice, and per None-ness of a
        # stream tested against None (module.repeated_flag,
        # none_tested_stream); their findings are reported together.
        runs = [{}]
        for key in ([flag] if flag else []) + ([("none", maybe_none)] if maybe_none else []):
            runs = [dict(r, **{key: v}) if isinstance(key, str) else {**r, key: v}
                    for r in runs for v in (True, False)]
        # And once more as each subclass that overrides a method this one
        # calls through self.
        runs = [(r, None) for r in runs]
        if single and class_name is not None:
            runs += [({}, sub) for sub in subclass_runs(module, func, class_name, nodes)]
        for n, (assume, self_type) in enumerate(runs):
            analysis = FunctionAnalysis(module, func, class_name, qual)
            analysis.assume = assume or None
            analysis.self_type = self_type
            if n == 0:
                count(stats, "functions")
            try:
                if len(target) > 3:
                    found, late = analysis.run_stages(target[3])
                else:
                    found, late = analysis.run(is_module=func is tree)
            except (GaveUp, RecursionError):
                count(stats, "gave_up")
                continue
            except Exception as e:  # a bug of this check: one function is skipped, not the run
                count(stats, "internal_errors")
                sys.stderr.write("%s:%d: internal error of the Python check in '%s' (%s: %s); the function "
                                 "is not checked\n" % (path, getattr(func, "lineno", 1), qual, type(e).__name__, e))
                continue
            count(stats, "frees", len(analysis.free_sites))
            count(stats, "side_stream_uses", len(analysis.side_use_sites))
            for f in findings_for(analysis, found, late, path, lines):
                f.inlined = frozenset(analysis.inlined)
                # Two frees inside one helper are two warnings at its call.
                key = (f.line, f.col, f.rule, f.freed_at)
                if key in seen or suppressed(lines, f):
                    continue
                seen.add(key)
                findings.append(f)
    findings.sort(key=lambda f: (f.line, f.col, f.rule))
    return findings


def subclass_runs(module, func, class_name, nodes):
    """[(module, class name)] of the run's subclasses of `class_name` that
    override a method `func` calls through self (`self.partition_grads(...)`)
    and not `func` itself: on an instance of one, `func` runs the
    override."""
    program = module.program
    if program is None:
        return []
    called = {n.func.attr for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
              isinstance(n.func.value, ast.Name) and n.func.value.id == "self"}
    if not called:
        return []
    out = []
    for mod_name, cls in program.subclasses(module.name, class_name):
        m = program.modules.get(mod_name)
        own = m.classes.get(cls, {}) if m is not None else {}
        if func.name not in own and not called.isdisjoint(own):
            out.append((m, cls))
    return out


def check_source(source, path, stats=None):
    """(findings, error): error is a ParseError when the file does not parse."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return [], ParseError(path, e.lineno or 1, e.msg or "invalid syntax")
    except ValueError as e:  # null bytes
        return [], ParseError(path, 1, str(e))
    return check_tree(tree, path, source, stats), None


def check_file(path, stats=None):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        return [], ParseError(path, 0, "cannot read: " + (e.strerror or str(e)))
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [], ParseError(path, data[:e.start].count(b"\n") + 1, "not UTF-8: " + e.reason)
    return check_source(source, path, stats)


class Linter:
    """The files of one run, parsed once: every file is checked with the
    others in view (helpers imported from them are followed), and one file
    can be checked again with new text against the rest (the mutation
    harness, bench/pylint/mutation.py)."""

    def __init__(self, paths):
        with collector_paused():
            self._read(paths)
            # The trees and modules live as long as the run: moved out of
            # the collector's generations, no collection walks them again.
            gc.freeze()

    def __del__(self):
        # A module and the program refer to each other: frozen, that cycle
        # would never be collected; without it the run's objects go when
        # the linter does.
        for m in list(getattr(self, "_modules", {}).values()):
            m.program = None

    def _read(self, paths):
        self.paths = list(paths)
        self._sources = {}
        self._trees = {}
        self.errors = {}
        for p in self.paths:
            source, error = read_source(p)
            if error is None:
                try:
                    self._trees[p] = ast.parse(source, filename=p)
                except SyntaxError as e:
                    error = ParseError(p, e.lineno or 1, e.msg or "invalid syntax")
                except ValueError as e:
                    error = ParseError(p, 1, str(e))
            if error is not None:
                self.errors[p] = error
                source = ""
            self._sources[p] = source
        self.program = Program()
        self._modules = {}
        for p, tree in self._trees.items():
            m = Module(tree, p, self._sources[p].splitlines())
            self._modules[p] = m
            self.program.add(m)

    def tree(self, path):
        return self._trees.get(path)

    def lines(self, path):
        return self._sources.get(path, "").splitlines()

    def check(self, path, stats=None):
        tree = self._trees.get(path)
        if tree is None:
            return []
        with collector_paused():
            return check_tree(tree, path, self._sources[path], stats, self._modules[path])

    def check_all(self, stats=None):
        with collector_paused():
            return {p: self.check(p, stats) for p in self.paths}

    def recheck(self, path, source, also=()):
        """The findings of `path` with `source` standing in for its text;
        with `also` (other files of the run), a dict path -> findings that
        holds theirs too, checked while the new text stands in (a caller in
        another file interprets the changed helper at its call)."""
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError):
            return {path: []} if also else []
        # The new text stands in for the file's module while it is checked.
        module = Module(tree, path, source.splitlines(), program=self.program)
        old = self.program.modules.get(module.name)
        self.program.modules[module.name] = module
        self.program.text_replaced = module
        try:
            with collector_paused():
                found = check_tree(tree, path, source, None, module)
            if not also:
                return found
            out = {path: found}
            for other in also:
                if other != path and other in self._trees:
                    out[other] = self.check(other)
            return out
        finally:
            self.program.text_replaced = None
            if old is not None:
                self.program.modules[module.name] = old


@contextmanager
def collector_paused():
    """The cyclic garbage collector off while a run parses and checks: the
    run keeps every module's tree alive, which each full collection would
    walk again, and makes little cyclic garbage (it is collected when the
    collector is back on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def read_source(path):
    """(text, error)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        return "", ParseError(path, 0, "cannot read: " + (e.strerror or str(e)))
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return "", ParseError(path, data[:e.start].count(b"\n") + 1, "not UTF-8: " + e.reason)
