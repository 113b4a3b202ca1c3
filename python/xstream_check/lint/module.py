"""What the functions of one file share (imports, classes, helpers to
inline, which functions deal with streams), and the indexes built once per
file: the calls each function makes and what follows them."""
import ast
import re
import os

from .vocabulary import FUNCTION_NODES, MAX_INLINE_DEPTH, ORDERING_METHODS


_AST = ast.AST


# Methods of the builtin containers and objects: a call of one on an object
# of unknown type is not taken for a class's method of the same name.
BUILTIN_METHODS = frozenset(
    name for t in (dict, list, set, str, bytes, tuple, object, frozenset) for name in dir(t))


def child_nodes(node):
    """ast.iter_child_nodes(node) as a list, in its order (without its
    generators: the indexes below walk every node of a run)."""
    out = []
    for name in node._fields:
        v = getattr(node, name, None)
        if isinstance(v, _AST):
            out.append(v)
        elif type(v) is list:
            for x in v:
                if isinstance(x, _AST):
                    out.append(x)
    return out


def walk(node):
    """ast.walk(node) as a list, in its order (breadth first)."""
    out = [node]
    append = out.append
    i = 0
    while i < len(out):
        n = out[i]
        i += 1
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, _AST):
                append(v)
            elif type(v) is list:
                for x in v:
                    if isinstance(x, _AST):
                        append(x)
    return out


# Names that make a function worth checking although it names no stream: a
# pinned buffer a copy fills, an event the host waits on.
HOST_ORDER_WORDS = {"pin_memory", "Event"}


def is_ordering_statement(stmt):
    """An ordering call, or a guard (no else) holding only orderings (and
    asserts: `if record_stream: assert isinstance(batch, ...);
    batch.record_stream(s)`)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        return isinstance(f, ast.Attribute) and f.attr in ORDERING_METHODS
    if isinstance(stmt, ast.If) and not stmt.orelse:
        orderings = [b for b in stmt.body if not isinstance(b, ast.Assert)]
        return bool(orderings) and all(is_ordering_statement(b) for b in orderings)
    return False


def guarded_entry_wait(stmt):
    """`if k in events: e = events[k]; s.wait_event(e); del events[k]`: a
    wait on the entry a container holds for a key, under the test that it
    holds one (no else). Like `if e is not None: s.wait_event(e)`, the
    entry is there whenever there is something to wait for."""
    test = stmt.test
    if stmt.orelse or not isinstance(test, ast.Compare) or len(test.ops) != 1 or \
            not isinstance(test.ops[0], ast.In):
        return False
    key, container = ast.dump(test.left), ast.dump(test.comparators[0])

    def entry(node):
        return isinstance(node, ast.Subscript) and ast.dump(node.value) == container and \
            ast.dump(node.slice) == key
    waits = 0
    for b in stmt.body:
        if isinstance(b, ast.Assign) and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name) and \
                entry(b.value):
            continue
        if isinstance(b, ast.Delete) and all(entry(t) for t in b.targets):
            continue
        if is_ordering_statement(b):
            waits += 1
            continue
        return False
    return waits > 0


# Ordering calls that make a stream or the host wait.
WAITING_CALLS = {"wait_stream", "wait_event", "wait", "synchronize"}


def index_module_calls(tree):
    """Module.call_index in one pass over the module: for every def, nested
    ones and methods included, its ordering calls (line, whether it waits,
    guards) and its calls (line, callee name, loop spans around it, arity,
    other branches, guards); the calls in a lambda or a class body belong
    to no def's index, a def's own decorators and defaults are its own.
    Guards: the spans of the if branches and except handlers around a call,
    which may not run when the statements around them do. What follows a
    block that ends in a return or a raise (outside a try with a finally)
    never follows the calls in it."""
    callers, orderers = {}, set()
    function_types = (ast.FunctionDef, ast.AsyncFunctionDef)
    loop_types = (ast.For, ast.AsyncFor, ast.While)
    call_type, attr_type, name_type = ast.Call, ast.Attribute, ast.Name
    entries = []
    stack = [(tree, None, (), (), (), False)]
    try_types = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
    exits = (ast.Return, ast.Raise)
    # Names and their contexts hold no call.
    leaves = (ast.Name, ast.Load, ast.Store, ast.Del, ast.Constant)

    def span(stmts):
        return (stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno)
    while stack:
        node, entry, loop_spans, other_branches, guards, in_finally = stack.pop()
        finally_here = in_finally or (type(node) in try_types and bool(node.finalbody))
        for field in node._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                children = v
            elif isinstance(v, _AST):
                children = (v,)
            else:
                continue
            excluded = other_branches
            if type(v) is list and v and type(v[-1]) in exits and not finally_here:
                excluded = excluded + ((v[-1].end_lineno + 1, 1 << 30),)
            if type(node) is ast.If and node.orelse and field in ("body", "orelse"):
                # The other branch of an if never runs after this one (but
                # may in a later round of a loop around both).
                excluded = other_branches + (span(node.orelse if field == "body" else node.body),)
            inner_guards = guards
            if type(node) is ast.If and field in ("body", "orelse") and children:
                inner_guards = guards + (span(children) + (present_names(node.test, field == "body"),),)
            elif type(node) is ast.ExceptHandler and field == "body" and children:
                inner_guards = guards + (span(children) + (frozenset(),),)
            for child in children:
                t = type(child)
                if t in leaves or not isinstance(child, _AST):
                    continue
                if t in function_types:
                    inner = ([], [])
                    entries.append((child.name, inner))
                    stack.append((child, inner, (), (), (), False))
                    continue
                if t is ast.Lambda or t is ast.ClassDef:
                    stack.append((child, None, (), (), (), False))
                    continue
                spans = loop_spans
                if t in loop_types:
                    spans = loop_spans + ((child.lineno, child.end_lineno or child.lineno),)
                if t is call_type and entry is not None:
                    f = child.func
                    name = f.attr if type(f) is attr_type else f.id if type(f) is name_type else None
                    if name in ORDERING_METHODS or name == "synchronize":
                        receiver = dotted(f.value) if type(f) is attr_type else None
                        entry[0].append((child.lineno, name in WAITING_CALLS, inner_guards, receiver))
                    if name is not None:
                        args = child.args
                        starred = any(type(a) is ast.Starred for a in args) or \
                            any(k.arg is None for k in child.keywords)
                        arity = (len(args), frozenset(k.arg for k in child.keywords if k.arg), starred)
                        entry[1].append((child.lineno, name, spans, arity, excluded, inner_guards))
                stack.append((child, entry, spans, excluded, inner_guards, finally_here))
    for name, entry in entries:
        if entry[0]:
            orderers.add(name)
        for line, callee, spans, arity, excluded, _ in entry[1]:
            callers.setdefault(callee, []).append((entry, line, spans, arity, excluded))
    return callers, orderers


def parameter_names(func):
    """Every parameter a def or lambda takes, `*args` and `**kwargs`
    included."""
    a = func.args
    return {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} | \
        {p.arg for p in (a.vararg, a.kwarg) if p is not None}


def present_names(test, body):
    """The names an if's branch runs only when they are there: `x` and
    `x is not None` (and `and`s of them) for the body, `x is None` and
    `not x` for the else branch. An ordering on such a name under that
    branch (`if event is not None: event.wait()`) orders whenever there is
    something to order."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and body:
        out = frozenset()
        for v in test.values:
            out |= present_names(v, True)
        return out
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return present_names(test.operand, not body)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        present = isinstance(test.ops[0], ast.IsNot) if body else isinstance(test.ops[0], ast.Is)
        text = dotted(test.left) if present else None
        return frozenset((text,)) if text else frozenset()
    text = dotted(test) if body else None
    return frozenset((text,)) if text else frozenset()


def accepts(func, method):
    """Whether a call of (positional count, keyword names, starred) could
    bind to `func`'s parameters; `method`: the first is self or cls. A call
    of another class's method of the same name often cannot
    (`self._module.run(ctx, data)` is not `run(self)`)."""
    a = func.args
    params = list(a.posonlyargs) + list(a.args)
    if method and params and not any(dotted(d) == "staticmethod" for d in getattr(func, "decorator_list", ())):
        params = params[1:]
    names = {p.arg for p in params} | {p.arg for p in a.kwonlyargs}
    required = len(params) - len(a.defaults)
    required_kw = {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None}

    def fits(arity):
        npos, keywords, starred = arity
        if starred:
            return True
        if npos > len(params) and a.vararg is None:
            return False
        if a.kwarg is None and not keywords <= names:
            return False
        covered = npos + len({p.arg for p in params[npos:]} & keywords)
        return covered >= required and required_kw <= keywords
    return fits


def asks_for_pinned_memory(node):
    """A call given `pin_memory=True` (`torch.empty(n, pin_memory=True)`)."""
    return isinstance(node, ast.Call) and any(
        k.arg == "pin_memory" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in node.keywords)


def targets_host(node, canonical=lambda name: name):
    """`.to("cpu")`, `.to(torch.device("cpu"))`, `.to(device="cpu")`;
    `canonical` resolves the module's import aliases (Module.canonical)."""
    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
    if isinstance(first, ast.Call) and canonical(dotted(first.func) or "") == "torch.device" and first.args:
        first = first.args[0]
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and \
        first.value.partition(":")[0] == "cpu"


def host_copy_without_blocking(node, canonical):
    """`t.to("cpu", non_blocking=True)`: PyTorch makes the result pinned
    host memory and returns before the copy lands."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"):
        return False
    blocking = next((k.value for k in node.keywords if k.arg == "non_blocking"), None)
    if blocking is None or (isinstance(blocking, ast.Constant) and not blocking.value):
        return False
    return targets_host(node, canonical)


def to_device_call(node):
    """`x.to("cuda")`, `x.to(device)`, `x.to(device=..., non_blocking=...)`:
    a `.to()` that names a device."""
    for a in list(node.args) + [k.value for k in node.keywords]:
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("cuda"):
            return True
        if "device" in (dotted(a) or "").lower():
            return True
    return any(k.arg in ("device", "non_blocking") for k in node.keywords)


def ordered_after_a_call(index, name, orderers, before=False, skip=(), fits=None):
    """Whether, in one module's call index, a call of `name` is followed in
    its caller by an ordering call, or by a call of a function that makes
    one (`orderers`): textually after it, or anywhere in a loop around it.
    `before`: preceded instead of followed, by a wait (a record before the
    call orders nothing the call does). An ordering on the other branch of
    an if around the call is not after it, nor is one after it that only
    some paths take (in an if branch or an except handler that the call is
    not in: `if opts.sync: torch.cuda.synchronize()`), which leaves the
    other paths unordered; but an ordering on what the branch tests is
    there (`if event is not None: event.wait()`) counts. `skip`: (name,
    line) of calls not to count. `fits`: whether a call's arity (see
    accepts) can be a call of the function meant."""
    for (order_lines, calls), line, spans, arity, excluded in index[0].get(name, ()):
        if (name, line) in skip or (fits is not None and not fits(arity)):
            continue

        def later(at, guards, receiver=None):
            if not before and not all(lo <= line <= hi or receiver in present for lo, hi, present in guards):
                return False
            if any(lo <= at <= hi for lo, hi in spans):
                return True
            if before:
                # A wait on the other branch before the call is still taken
                # as one: what the caller hands in is judged by a rule on
                # its whole text, and errs toward silence.
                return at < line
            return at > line and not any(lo <= at <= hi for lo, hi in excluded)
        if any(later(o, guards, receiver) for o, waits, guards, receiver in order_lines if waits or not before):
            return True
        if any(later(at, guards) and callee in orderers and callee != name
               for at, callee, _, _, _, guards in calls):
            return True
    return False


def flag_text(node):
    """`self.use_streams`, `overlap`: a flag whose value one run of a function
    cannot change (an attribute of self or a name), as text; else None."""
    text = dotted(node)
    return text if text and text.count(".") <= 2 else None


def repeated_flag(func, nodes=None):
    """A flag that decides two branches of `func` (`if self.use_streams:`
    ... `s1 if self.use_streams else s0`), never assigned in it: one path
    through the function takes both branches alike, so it is run once per
    value and the two runs' findings are reported together."""
    tests, assigned = {}, {}
    for node in walk(func) if nodes is None else nodes:
        test = node.test if isinstance(node, (ast.If, ast.IfExp)) else None
        if test is not None:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = test.operand
            text = flag_text(test)
            if text:
                tests.setdefault(text, []).append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                text = dotted(target)
                if text:
                    assigned.setdefault(text, []).append(node.lineno)
    for text, lines in tests.items():
        # Set at most once, before it is first tested (`self.x = x` at the
        # top of __init__).
        sets = assigned.get(text, [])
        if len(lines) >= 2 and len(sets) <= 1 and all(a < min(lines) for a in sets):
            return text
    return None


def none_test(test):
    """(text, is_none when the test is true) for `x is None`, `x is not
    None`, `x` and `not x` on a name or attribute chain; else None."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        text = flag_text(test.left)
        is_none = isinstance(test.ops[0], ast.Is)
    else:
        text = flag_text(test)
        is_none = False
    if text is None:
        return None
    return text, is_none != negated


STREAM_USES = {"wait_stream", "wait_event", "record_event", "synchronize", "query"}


def none_tested_stream(func, nodes=None):
    """A stream the function tests against None (`if self._stream is not
    None:`) and also uses as a stream (`torch.cuda.stream(x)`, a context
    manager given it alone, `x.wait_stream(...)`), never assigned in it:
    where it is None, `torch.cuda.stream(None)` leaves the current stream
    current, so the function is run once with it None and once not (the
    tests and the stream contexts then agree), as for repeated_flag."""
    tested, used, assigned = set(), set(), set()
    for node in walk(func) if nodes is None else nodes:
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            found = none_test(node.test)
            if found is not None:
                tested.add(found[0])
        elif isinstance(node, ast.Call):
            f = node.func
            if len(node.args) == 1 and not node.keywords and (
                    (isinstance(f, ast.Attribute) and f.attr == "stream") or
                    "stream" in (dotted(f) or "").rpartition(".")[2].lower()):
                text = flag_text(node.args[0])
                if text:
                    used.add(text)
            if isinstance(f, ast.Attribute) and f.attr in STREAM_USES:
                text = flag_text(f.value)
                if text:
                    used.add(text)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                text = dotted(target)
                if text:
                    assigned.add(text)
    for text in sorted(tested & used):
        if text not in assigned and "stream" in text.rpartition(".")[2].lower():
            return text
    return None


_NOT_YET = object()


def dotted(node):
    """'a.b.c' for a chain of names and attributes, else None (kept on the
    attribute's node: the interpreter asks again at every visit)."""
    t = type(node)
    if t is ast.Name:
        return node.id
    if t is not ast.Attribute:
        return None
    text = getattr(node, "_xsc_dotted", _NOT_YET)
    if text is _NOT_YET:
        inner = dotted(node.value)
        text = node._xsc_dotted = None if inner is None else inner + "." + node.attr
    return text


class Scope:
    """What one function (or the module) contains, nested functions apart."""

    __slots__ = ("identifiers", "names", "calls", "declared", "children", "classes", "yields")

    def __init__(self):
        self.identifiers = set()  # Name ids and attribute names
        self.names = set()  # Name ids
        self.calls = []
        self.declared = set()  # global / nonlocal
        self.children = []  # nested functions
        self.classes = []  # class statements (nested functions apart)
        self.yields = []  # yield and yield from expressions (nested functions apart)


def index_module(tree):
    """One walk over the module: imports (local name -> canonical dotted
    name) and, per function, what it names and calls; per class statement,
    every Name id in it (its methods' too)."""
    aliases = {}
    scopes = {tree: Scope()}
    class_names = {}
    stack = [(tree, scopes[tree], ())]
    push = stack.append
    name_type = ast.Name
    # Load, Store, Del: leaves nothing here reads.
    contexts = (ast.Load, ast.Store, ast.Del)
    while stack:
        node, scope, classes = stack.pop()
        t = type(node)
        if t is ast.Name:
            scope.identifiers.add(node.id)
            scope.names.add(node.id)
            for names in classes:
                names.add(node.id)
            continue
        if t is ast.ClassDef:
            scope.classes.append(node)
            names = class_names[node] = set()
            classes = classes + (names,)
        elif t is ast.Attribute:
            scope.identifiers.add(node.attr)
        elif t is ast.Call:
            scope.calls.append(node)
        elif t is ast.Yield or t is ast.YieldFrom:
            scope.yields.append(node)
        elif t in FUNCTION_NODES and node is not tree:
            inner = Scope()
            scopes[node] = inner
            scope.children.append(node)
            scope = inner
        elif t is ast.Import or t is ast.ImportFrom:
            add_import_aliases(node, aliases)
        elif t is ast.Global or t is ast.Nonlocal:
            scope.declared.update(node.names)
        for field in node._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                for x in v:
                    if type(x) is name_type:
                        scope.identifiers.add(x.id)
                        scope.names.add(x.id)
                        for names in classes:
                            names.add(x.id)
                    elif isinstance(x, _AST):
                        push((x, scope, classes))
            elif type(v) is name_type:
                scope.identifiers.add(v.id)
                scope.names.add(v.id)
                for names in classes:
                    names.add(v.id)
            elif isinstance(v, _AST) and type(v) not in contexts:
                push((v, scope, classes))
    return aliases, scopes, class_names


WITH_STREAM_LINE = re.compile(r"^[ \t]*(?:async[ \t]+)?with\b[^\n]*stream", re.M | re.I)


def names_a_side_stream(expr):
    """Whether a `with` item makes a side stream current, read from its text
    alone: `x.stream(s)` or `torch.cuda.stream(s)`, or a call given one
    argument named for a stream (`self._stream_context(self._data_dist_stream)`),
    where the stream named is not the current or the default one."""
    if not isinstance(expr, ast.Call) or len(expr.args) != 1 or expr.keywords:
        return False
    arg = dotted(expr.args[0])
    if arg is None:
        return False
    last = arg.rpartition(".")[2].lower()
    if "current" in last or "default" in last:
        return False
    f = expr.func
    return (isinstance(f, ast.Attribute) and f.attr == "stream") or "stream" in last


def add_import_aliases(node, aliases):
    """Adds what one import statement binds to `aliases` (name -> dotted
    module or object). Relative imports keep their dots; Module.canonical
    resolves them against the module's package."""
    if type(node) is ast.Import:
        for a in node.names:
            if a.asname:
                aliases[a.asname] = a.name
            else:
                root = a.name.split(".")[0]
                aliases[root] = root
        return
    base = "." * node.level + (node.module or "")
    if base:
        for a in node.names:
            if a.name != "*":
                aliases[a.asname or a.name] = base + ("." if node.module else "") + a.name


# The nodes an import statement can be in.
STATEMENT_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def import_aliases(tree):
    """The aliases of index_module without its walk of every expression:
    imports are statements, so only statements (and the handlers and
    cases holding them) are visited, in index_module's order (the same
    depth-first order, so a name imported twice ends up the same)."""
    aliases = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Import or t is ast.ImportFrom:
            add_import_aliases(node, aliases)
        for field in node._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                for x in v:
                    if isinstance(x, STATEMENT_BLOCKS):
                        stack.append(x)
    return aliases


def module_name(path):
    """The dotted name a file is imported as: its path below the outermost
    directory of packages (directories with an __init__.py) above it."""
    path = os.path.abspath(path)
    directory, base = os.path.split(path)
    parts = [] if base == "__init__.py" else [os.path.splitext(base)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, pkg = os.path.split(directory)
        parts.append(pkg)
        if not pkg:
            break
    return ".".join(reversed(parts)) or os.path.splitext(base)[0]


def resolve_relative(package, target):
    """`..x.f` imported into `package` -> its absolute dotted name."""
    level = len(target) - len(target.lstrip("."))
    rest = target[level:]
    parts = package.split(".") if package else []
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([rest] if rest else []))


class Module:
    """What the functions of one file share: imports, helpers to inline,
    NamedTuple fields, which functions deal with streams at all."""

    def __init__(self, tree, path, lines, name=None, program=None):
        self.tree = tree
        self.path = path
        self.lines = lines
        self.name = name or module_name(path)
        self.program = program  # the other modules of the run (program.py), or None
        self.aliases = import_aliases(tree)
        self._scopes = None  # see scopes
        self._class_names = None  # class statement -> every Name id in it (index_module)
        self._made = set()  # the defs context_halves made
        package = self.name.rpartition(".")[0] if not path.endswith("__init__.py") else self.name
        for local, target in list(self.aliases.items()):
            if target.startswith("."):
                self.aliases[local] = resolve_relative(package, target)
        self._subtree = {}
        self.functions = {}  # module-level defs
        self.classes = {}  # name -> {method name: def}
        self.tuple_fields = {}  # NamedTuple/dataclass name -> field names
        self.class_nodes = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.class_nodes[node.name] = node
                self.classes[node.name] = {n.name: n for n in node.body
                                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                if self._is_record_class(node):
                    self.tuple_fields[node.name] = tuple(
                        n.target.id for n in node.body
                        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
        self._stream_cache = {}
        self.class_text = {}  # class name -> its source (Module.class_orders_later)
        self.source_text = "\n".join(lines)

    @property
    def scopes(self):
        """What each function names and calls (index_module), made when
        first asked: most modules of a run are only looked into for the
        names they define and import."""
        if self._scopes is None:
            _, self._scopes, self._class_names = index_module(self.tree)
        return self._scopes

    def _is_record_class(self, node):
        for base in node.bases:
            name = self.canonical(dotted(base) or "")
            if name in ("typing.NamedTuple", "NamedTuple"):
                return True
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if self.canonical(dotted(target) or "").endswith("dataclass"):
                return True
        return False

    def canonical(self, name):
        if not name:
            return name
        root, _, rest = name.partition(".")
        full = self.aliases.get(root)
        if full is None:
            return name
        return full + ("." + rest if rest else "")

    def is_module_name(self, name):
        return name.partition(".")[0] in self.aliases

    def subtree(self, func):
        """(identifiers, Name ids, calls) of a function and the functions in it."""
        cached = self._subtree.get(func)
        if cached is None:
            scope = self.scopes[func]
            idents, names, calls = set(scope.identifiers), set(scope.names), list(scope.calls)
            for child in scope.children:
                ci, cn, cc = self.subtree(child)
                idents |= ci
                names |= cn
                calls += cc
            cached = self._subtree[func] = (idents, names, calls)
        return cached

    def bound_names(self, func):
        """Names a function binds itself: its parameters and the names it
        assigns (nested functions apart)."""
        key = ("bound", func)
        cached = self._subtree.get(key)
        if cached is None:
            cached = parameter_names(func)
            stack = list(func.body) if isinstance(func.body, list) else [func.body]
            while stack:
                n = stack.pop()
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    cached.add(n.id)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    cached.add(n.name)
                    continue
                elif isinstance(n, ast.Lambda):
                    continue
                stack.extend(child_nodes(n))
            cached -= self.scopes[func].declared if func in self.scopes else set()
            self._subtree[key] = cached
        return cached

    def names_table(self, func):
        """Where a function (nested functions included) reads and binds its
        names, and its loops: {"loads": name -> [(line, column)], "stores":
        name -> [line], "loops": [loop]}, made once."""
        key = ("names", func)
        table = self._subtree.get(key)
        if table is None:
            table = {"loads": {}, "stores": {}, "loops": []}
            for n in walk(func):
                if isinstance(n, ast.Name):
                    if isinstance(n.ctx, ast.Load):
                        table["loads"].setdefault(n.id, []).append((n.lineno, n.col_offset))
                    elif isinstance(n.ctx, ast.Store):
                        table["stores"].setdefault(n.id, []).append(n.lineno)
                elif isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
                    table["loops"].append(n)
            self._subtree[key] = table
        return table

    def read_after(self, func, name, stmt, rebinding=None):
        """Whether the function (nested functions included: a closure reads
        the name later) may read local `name` after statement `stmt`: a
        load of it further down, or anywhere in a loop around `stmt`, but
        the loop `rebinding` (a for loop whose target is the name: the next
        round binds it again before reading it) and those around it."""
        table = self.names_table(func)
        loads = table["loads"].get(name, ())
        end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
        if any(at > end for at in loads):
            return True
        for loop in table["loops"]:
            if rebinding is not None and loop.lineno <= rebinding.lineno:
                continue
            if loop.lineno <= stmt.lineno and (stmt.end_lineno or stmt.lineno) <= (loop.end_lineno or loop.lineno):
                first = (loop.lineno, loop.col_offset)
                if any(first <= at <= end for at in loads):
                    return True
        return False

    def closure_flags(self, func):
        """Names `func` sets to True or False only (outside loops, nested
        functions apart) that a function nested in it reads: a flag whose
        value on the path taken a hook `func` registers tests later
        (`reloaded = False` on one branch, `if reloaded:` in the hook).
        At most two, by name."""
        key = ("flags", func)
        cached = self._subtree.get(key)
        if cached is None:
            sets, others, looped = {}, set(), set()
            stack = [(n, False) for n in (func.body if isinstance(func.body, list) else [func.body])]
            nested_loads = set()
            while stack:
                n, in_loop = stack.pop()
                if isinstance(n, FUNCTION_NODES):
                    nested_loads |= {c.id for c in walk(n) if isinstance(c, ast.Name) and isinstance(c.ctx, ast.Load)}
                    continue
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and \
                        isinstance(n.value, ast.Constant) and isinstance(n.value.value, bool):
                    (looped if in_loop else sets.setdefault(n.targets[0].id, set())).add(
                        n.targets[0].id if in_loop else n.lineno)
                    continue
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    others.add(n.id)
                loop = in_loop or isinstance(n, (ast.For, ast.AsyncFor, ast.While))
                stack.extend((c, loop) for c in child_nodes(n))
            cached = sorted(n for n in sets if n in nested_loads and n not in looped and
                            n not in others and len(sets[n]) >= 2)[:2]
            self._subtree[key] = cached
        return cached

    def unique_method(self, meth):
        """(module, def, class name) of the one class of the module that
        defines method `meth`, when only one does and the name is none of
        the builtin containers' or objects' methods; else None."""
        cache = self._stream_cache.setdefault("unique-methods", {})
        if meth not in cache:
            owners = [c for c, methods in self.classes.items() if meth in methods]
            cache[meth] = (self, self.classes[owners[0]][meth], owners[0]) \
                if len(owners) == 1 and meth not in BUILTIN_METHODS and meth not in ORDERING_METHODS and \
                not meth.startswith("__") else None
        return cache[meth]

    def assigned_after(self, func, name, stmt):
        """Whether `func` assigns `name` past the end of `stmt`."""
        end = stmt.end_lineno or stmt.lineno
        return any(line > end for line in self.names_table(func)["stores"].get(name, ()))

    def kept_by_closures(self, func):
        """Names of this function that a decorated nested def or a nested
        class names: such closures may be kept anywhere."""
        key = ("kept", func)
        cached = self._subtree.get(key)
        if cached is None:
            cached = set()
            scope = self.scopes.get(func)
            for child in (scope.children if scope is not None else ()):
                if isinstance(child, ast.AsyncFunctionDef) or (
                        isinstance(child, ast.FunctionDef) and child.decorator_list):
                    cached |= self.subtree(child)[1]
            if scope is not None and func not in self._made:
                # The class statements of its body, outside nested defs,
                # are its scope's (index_module).
                for node in scope.classes:
                    cached |= self._class_names[node]
                self._subtree[key] = cached
                return cached
            stack = list(func.body) if isinstance(func.body, list) else []
            while stack:
                n = stack.pop()
                if isinstance(n, ast.ClassDef):
                    for c in walk(n):
                        if isinstance(c, ast.Name):
                            cached.add(c.id)
                elif not isinstance(n, FUNCTION_NODES):
                    stack.extend(child_nodes(n))
            self._subtree[key] = cached
        return cached

    def frame_facts(self, func):
        """(global/nonlocal names, names its closures keep alive)."""
        scope = self.scopes.get(func)
        if scope is None:
            return set(), set()
        key = ("captured", func)
        captured = self._subtree.get(key)
        if captured is None:
            captured = set()
            for child in scope.children:
                captured |= self.subtree(child)[1]
            self._subtree[key] = captured
        return scope.declared, captured

    def deals_with_streams(self, func, class_name, depth=0):
        """Whether the function, or a helper it calls, names a stream: a
        use on another stream needs one."""
        key = id(func)
        if key in self._stream_cache:
            return self._stream_cache[key]
        self._stream_cache[key] = False  # recursion
        idents, _, calls = self.subtree(func)
        # A stream, or a pinned buffer or event that the host waits on (a
        # copy on the current stream the host reads back; a factory's
        # `pin_memory=True`), or a copy to the host that does not block
        # (`t.to("cpu", non_blocking=True)` fills pinned memory the host may
        # read before the copy lands).
        result = any("stream" in name.lower() for name in idents) or bool(idents & HOST_ORDER_WORDS) or \
            any(host_copy_without_blocking(n, self.canonical) or asks_for_pinned_memory(n) for n in calls)
        if not result and depth < MAX_INLINE_DEPTH:
            for n in calls:
                found = self.resolve_callee(n.func, class_name)
                if found is not None and found[1] is None:
                    # An instance of a class of the run: its methods may run
                    # work on a stream (`pool = Pool(s); pool.consume(x)`).
                    m, _, cls = found
                    if any(m.deals_with_streams(meth, cls, depth + 1)
                           for meth in m.classes.get(cls, {}).values()):
                        result = True
                        break
                    continue
                if found is None or found[1] is func:
                    continue
                m, callee, cls = found
                if m.deals_with_streams(callee, cls if cls is not None else class_name, depth + 1):
                    result = True
                    break
        self._stream_cache[key] = result
        return result

    def attributes_always(self, class_name, tag, binds):
        """Attributes of self (`self.x`) that every assignment in the class
        binds to a value `binds(value node)` accepts; cached under `tag`."""
        key = (tag, class_name)
        if key in self._subtree:
            return self._subtree[key]
        assigned = {}
        node = self.class_nodes.get(class_name)
        for n in walk(node) if node is not None else ():
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        assigned[t.attr] = assigned.get(t.attr, True) and binds(n.value)
        result = frozenset("self." + a for a, always in assigned.items() if always)
        self._subtree[key] = result
        return result

    def current_stream_attributes(self, class_name):
        """Attributes of self that every assignment in the class binds to
        the current or the default stream (`self.compute_stream =
        torch.cuda.current_stream()`): names of the current stream."""
        return self.attributes_always(
            class_name, "current-attrs",
            lambda value: isinstance(value, ast.Call) and not value.args and
            (dotted(value.func) or "").rpartition(".")[2] in ("current_stream", "default_stream"))

    def blocking_stream_attributes(self, class_name):
        """Attributes of self that every assignment in the class binds to a
        CuPy stream made without `non_blocking=True` (lint/legacy.py)."""
        from .legacy import cupy_blocking_stream, cupy_null_stream
        from .vocabulary import CUPY_STREAM_FACTORIES
        return self.attributes_always(
            class_name, "blocking-attrs",
            lambda value: isinstance(value, ast.Call) and
            self.canonical(dotted(value.func) or "") in CUPY_STREAM_FACTORIES and
            cupy_blocking_stream(value) and not cupy_null_stream(value))

    def context_halves(self, func):
        """A @contextmanager function split at its one yield: (a def of the
        code before it, which returns the stream a `with
        torch.cuda.stream(s): yield` around the yield enters; a def of the
        code after it, the finally's included; whether a stream is
        entered). None when it is no such function, or its yield is not
        where this can split it (at the top, in a try's body, or in a
        stream context's body)."""
        key = ("halves", id(func))
        if key in self._subtree:
            return self._subtree[key]
        self._subtree[key] = None
        if not any((dotted(d) or "").rpartition(".")[2] == "contextmanager" for d in func.decorator_list):
            return None

        def has_yield(stmt):
            return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk(stmt))

        def split(body):
            """(before, after, stream expression or None) of a block holding the yield."""
            for i, stmt in enumerate(body):
                if not has_yield(stmt):
                    continue
                before, after = list(body[:i]), list(body[i + 1:])
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
                    return before, after, None
                if isinstance(stmt, ast.Try) and not stmt.orelse:
                    inner = split(stmt.body)
                    if inner is None:
                        return None
                    return before + inner[0], inner[1] + stmt.finalbody + after, inner[2]
                if isinstance(stmt, (ast.With,)) and len(stmt.items) == 1:
                    inner = split(stmt.body)
                    ctx = stmt.items[0].context_expr
                    if inner is None or inner[2] is not None or not isinstance(ctx, ast.Call) or not ctx.args:
                        return None
                    return before + inner[0], inner[1] + after, ctx.args[0]
                return None
            return None

        parts = split(func.body)
        if parts is None:
            return None
        before, after, stream = parts

        def make(body, returns):
            stmts = list(body) + ([ast.Return(value=returns)] if returns is not None else [])
            if not stmts:
                stmts = [ast.Pass()]
            fn = ast.FunctionDef(name=func.name, args=func.args, body=stmts, decorator_list=[], returns=None,
                                 type_comment=None)
            if "type_params" in ast.FunctionDef._fields:
                fn.type_params = []
            ast.copy_location(fn, func)
            fn.end_lineno = func.end_lineno
            for n in walk(fn):
                if not hasattr(n, "lineno") and isinstance(n, (ast.stmt, ast.expr)):
                    ast.copy_location(n, func)
            self.scopes.setdefault(fn, self.scopes.get(func))
            self._made.add(fn)
            return fn
        halves = (make(before, stream), make(after, None), stream is not None)
        self._subtree[key] = halves
        return halves

    def is_generator(self, func):
        key = ("gen", func)
        cached = self._subtree.get(key)
        scope = self.scopes.get(func) if cached is None and func not in self._made else None
        if scope is not None and isinstance(func.body, list) and func.body:
            # Its scope's yields, less those of its decorators, defaults and
            # annotations (the enclosing function's): those before its body.
            start = (func.body[0].lineno, func.body[0].col_offset)
            cached = any((y.lineno, y.col_offset) >= start for y in scope.yields)
            self._subtree[key] = cached
        if cached is None:
            stack, cached = list(func.body), False
            while stack and not cached:
                n = stack.pop()
                if isinstance(n, (ast.Yield, ast.YieldFrom)):
                    cached = True
                elif not isinstance(n, FUNCTION_NODES):
                    stack.extend(child_nodes(n))
            self._subtree[key] = cached
        return cached

    def resolve_callee(self, func, class_name):
        """(module, def, class name) of what a call expression calls, where
        this module or another of the run defines it; None otherwise."""
        if isinstance(func, ast.Name):
            return self.lookup_function(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                and class_name is not None:
            return self.method(class_name, func.attr)
        name = dotted(func)
        if name is not None and self.is_module_name(name):
            return self.lookup_function(name)
        return None

    def lookup_function(self, name):
        """A function by the name this module calls it (`f`, `mod.f`,
        `pkg.mod.f`): (module, def, None), or for a class (module, None,
        class name); None when the run does not define it."""
        if "." not in name:
            fn = self.functions.get(name)
            if fn is not None:
                return (self, fn, None)
            if name in self.classes:
                return (self, None, name)
        if self.program is None:
            return None
        canon = self.canonical(name)
        if canon == name and "." not in name:
            return None
        return self.program.function(canon)

    def method(self, class_name, meth, depth=0):
        """(module, def, class name) of a method, looked up through the bases
        the run defines (at most four levels)."""
        fn = self.classes.get(class_name, {}).get(meth)
        if fn is not None:
            return (self, fn, class_name)
        node = self.class_nodes.get(class_name)
        if node is None or depth >= 4:
            return None
        for base in node.bases:
            name = dotted(base)
            if name is None:
                continue
            found = self.lookup_function(name)
            if found is not None and found[1] is None:
                m, _, cls = found
                hit = m.method(cls, meth, depth + 1)
                if hit is not None:
                    return hit
        return None

    def constructor_stores_only(self, class_name):
        """Whether making an instance of the class runs nothing on what it is
        given: a dataclass, or an __init__ (its own or a base's) that hands
        none of its parameters to a call (`self._context = context`)."""
        key = ("stores-only", class_name)
        cached = self._stream_cache.get(key)
        if cached is not None:
            return cached
        found = self.method(class_name, "__init__")
        if found is None:
            node = self.class_nodes.get(class_name)
            result = node is not None and any(
                (dotted(d.func if isinstance(d, ast.Call) else d) or "").rpartition(".")[2] == "dataclass"
                for d in node.decorator_list)
        else:
            fn = found[1]
            params = parameter_names(fn) - {"self"}
            result = not any(isinstance(n, ast.Call) and any(
                isinstance(x, ast.Name) and x.id in params for part in [n.func] + n.args + [k.value for k in n.keywords]
                for x in ast.walk(part)) for n in walk(fn))
        self._stream_cache[key] = result
        return result

    def constructor_fields(self, class_name):
        """(positional parameters of __init__ but self, in order; {parameter:
        [attribute]}) for the attributes its body sets straight from a
        parameter it never rebinds, keyword-only ones included
        (`self.stream = stream`), outside any branch; None when the class has no __init__ of its own
        or of a base the run defines."""
        key = ("fields", class_name)
        if key in self._stream_cache:
            return self._stream_cache[key]
        found = self.method(class_name, "__init__")
        result = None
        if found is not None:
            fn = found[1]
            a = fn.args
            params = [p.arg for p in a.posonlyargs + a.args][1:]
            # A parameter __init__ rebinds (`stream = stream or Stream()`)
            # no longer holds what the caller gave when it is stored.
            rebound = self.names_table(fn)["stores"]
            given = [p for p in params + [p.arg for p in a.kwonlyargs] if p not in rebound]
            stores = {}
            for stmt in fn.body:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
                    stmt.target if isinstance(stmt, ast.AnnAssign) else None
                value = getattr(stmt, "value", None)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                        target.value.id == "self" and isinstance(value, ast.Name) and \
                        value.id in given:
                    stores.setdefault(value.id, []).append(target.attr)
            result = (params, stores)
        self._stream_cache[key] = result
        return result

    def side_filled_fields(self):
        """Names of the containers on objects (`ctx.module_contexts[k] =
        ...`) that this module fills while a side stream is current: inside
        a `with` that makes a stream current (read from the text: a
        `.stream(s)` call, or a call given one stream-named argument, none
        of them the current or default stream), or inside a function of the
        run called there (one call deep), or after it with a name bound in
        it. What such a container holds was made on that stream, whichever
        function reads it later."""
        found = self._stream_cache.get("side_fields")
        if found is not None:
            return found
        found = set()
        # Only a module with a `with` line naming a stream has such a block.
        if "stream" in self.source_text and WITH_STREAM_LINE.search(self.source_text):
            def filled(assign):
                """The fields of the containers an assignment stores into
                (`x.field[k] = ...`)."""
                return {t.value.attr for t in assign.targets
                        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute)}

            def stores(body):
                out = set()
                for stmt in body:
                    for node in walk(stmt):
                        if isinstance(node, ast.Assign):
                            out |= filled(node)
                return out

            def stored_names(fn, names):
                """Containers the def fills with a name it bound under the
                side stream (`with ...: x = req.wait()`, then
                `ctx.inputs[k] = x` after the block)."""
                for node in walk(fn):
                    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                            node.value.id in names:
                        found.update(filled(node))

            def visit(body, class_name):
                for stmt in body:
                    if isinstance(stmt, ast.ClassDef):
                        visit(stmt.body, stmt.name)
                        continue
                    side_bound = set()
                    for node in walk(stmt):
                        if not isinstance(node, (ast.With, ast.AsyncWith)) or \
                                not any(names_a_side_stream(i.context_expr) for i in node.items):
                            continue
                        found.update(stores(node.body))
                        for inner in node.body:
                            if isinstance(inner, ast.Assign):
                                side_bound.update(t.id for t in inner.targets if isinstance(t, ast.Name))
                            for call in walk(inner):
                                if not isinstance(call, ast.Call):
                                    continue
                                f = call.func
                                hit = None
                                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                                        f.value.id == "self" and class_name is not None:
                                    hit = self.method(class_name, f.attr)
                                elif isinstance(f, (ast.Name, ast.Attribute)) and dotted(f):
                                    hit = self.lookup_function(dotted(f))
                                if hit is not None and hit[1] is not None:
                                    callee = hit[1]
                                    kept = getattr(callee, "_xsc_container_stores", None)
                                    if kept is None:
                                        kept = callee._xsc_container_stores = stores(callee.body)
                                    found.update(kept)
                    if side_bound and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        stored_names(stmt, side_bound)
            visit(self.tree.body, None)
        self._stream_cache["side_fields"] = found
        return found

    def assigns_attribute(self, attr):
        """Whether the module's text assigns `.attr` (`x.attr = ...`, also
        annotated: `self.attr: torch.cuda.Stream = ...`)."""
        found = self._stream_cache.get(("assigns", attr))
        if found is None:
            found = "%s =" % attr in self.source_text or re.search(
                r"\b%s\s*:[^=\n]*=(?!=)" % re.escape(attr), self.source_text) is not None
            self._stream_cache[("assigns", attr)] = found
        return found

    def base_modules(self, class_name, depth=0):
        """The other modules of the run that define a base of the class (at
        most four levels), where its attributes may be assigned."""
        node = self.class_nodes.get(class_name)
        if node is None or depth >= 4:
            return []
        out = []
        for base in node.bases:
            name = dotted(base)
            found = self.lookup_function(name) if name is not None else None
            if found is not None and found[1] is None:
                m, _, cls = found
                if m is not self:
                    out.append(m)
                out.extend(m.base_modules(cls, depth + 1))
        return out

    def derives_from(self, class_name, base_name):
        node = self.class_nodes.get(class_name)
        return node is not None and any((dotted(b) or "").rpartition(".")[2] == base_name for b in node.bases)

    def pack_hooks(self):
        """Names of the functions handed to autograd as saved-tensor pack
        hooks: the first argument of `saved_tensors_hooks(pack, unpack)` or
        of a subclass's `super().__init__(pack, unpack)`. Autograd calls one
        with a tensor the forward has just written, nothing in between."""
        cached = self._stream_cache.get("pack_hooks")
        if cached is None:
            cached = set()
            for node in ast.walk(self.tree) if "saved_tensors_hooks" in "\n".join(self.lines) else ():
                if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Name):
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name == "saved_tensors_hooks" or (
                        name == "__init__" and isinstance(f.value, ast.Call) and
                        getattr(f.value.func, "id", None) == "super"):
                    cached.add(node.args[0].id)
            self._stream_cache["pack_hooks"] = cached
        return cached

    def stages(self, class_name):
        """The calls a framework makes of one object, in order, for the
        classes whose life this analysis follows (FunctionAnalysis.run_stages):
        a context manager's __enter__ then __exit__, an autograd Function's
        forward then backward, a module's forward pre-hook, forward and
        forward hook when it registers them on itself. [(def, argument
        values, self node)] or None."""
        methods = self.classes.get(class_name, {})
        self_node = ast.Name(id="self", ctx=ast.Load())
        if "__enter__" in methods and "__exit__" in methods:
            return [(methods["__enter__"], [], self_node),
                    (methods["__exit__"], [frozenset((("none",),))] * 3, self_node)]
        if "forward" in methods and "backward" in methods and self.derives_from(class_name, "Function"):
            out = []
            for name in ("forward", "backward"):
                fn = methods[name]
                params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                if not params:
                    return None
                ctx = frozenset((("p", "ctx"),))
                args = [ctx] + [frozenset((("p", "%s:%s" % (name, q)),)) for q in params[1:]]
                out.append((fn, args, None))
            return out
        if "forward" in methods and self.derives_from(class_name, "Module"):
            hooks = self.own_forward_hooks(class_name)
            if hooks.get("pre") in methods or hooks.get("post") in methods:
                # A module's forward pre-hook, forward and forward hook, as
                # nn.Module.__call__ runs them: pre(module, args), forward(...),
                # post(module, args, output), each a method of the module.
                out = []
                if hooks.get("pre") in methods:
                    out.append((methods[hooks["pre"]], [frozenset((("p", "pre:module"),)),
                                                        frozenset((("p", "pre:args"),))], self_node))
                fwd = methods["forward"]
                params = [a.arg for a in fwd.args.posonlyargs + fwd.args.args][1:]
                out.append((fwd, [frozenset((("p", "forward:%s" % q),)) for q in params], self_node))
                if hooks.get("post") in methods:
                    out.append((methods[hooks["post"]], [frozenset((("p", "post:module"),)),
                                                         frozenset((("p", "post:args"),)),
                                                         frozenset((("p", "post:output"),))], self_node))
                return out
        return None

    def own_forward_hooks(self, class_name):
        """{"pre": name, "post": name} of the methods a module registers on
        itself (`self.register_forward_pre_hook(self._pre)`,
        `self.register_forward_hook(self._post)`)."""
        out = {}
        node = self.class_nodes.get(class_name)
        for n in walk(node) if node is not None else ():
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args and \
                    isinstance(n.func.value, ast.Name) and n.func.value.id == "self" and \
                    isinstance(n.args[0], ast.Attribute) and isinstance(n.args[0].value, ast.Name) and \
                    n.args[0].value.id == "self":
                if n.func.attr == "register_forward_pre_hook":
                    out["pre"] = n.args[0].attr
                elif n.func.attr == "register_forward_hook":
                    out["post"] = n.args[0].attr
        return out

    def call_index(self):
        """(callee name -> [(order lines, calls) of each function calling
        it, and the call's line and loop spans]; names of the functions
        here with an ordering call of their own). What a function leaves
        pending on a stream when it returns is judged at its callers when
        one of them orders something after the call (see
        Program.a_caller_orders)."""
        cached = self._stream_cache.get("calls")
        if cached is None:
            cached = self._stream_cache["calls"] = index_module_calls(self.tree)
        return cached

    def enclosing_parameters(self, func):
        """The parameters of the defs around a nested def (a closure reads
        them as its caller's tensors)."""
        parents = self._subtree.get("parents")
        if parents is None:
            parents = {}
            stack = [(self.tree, None)]
            while stack:
                node, fn = stack.pop()
                for child in child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        parents[child] = fn
                        stack.append((child, child))
                    else:
                        stack.append((child, fn))
            self._subtree["parents"] = parents
        out = set()
        outer = parents.get(func)
        while outer is not None:
            out |= parameter_names(outer)
            outer = parents.get(outer)
        return out - {"self", "cls"}

    def replaces(self, func, earlier, later):
        """Whether statement `later` always runs after `earlier` once that
        ran: both in one block of `func`, `later` further down, and nothing
        between them that leaves the block (return, raise, break, continue)."""
        blocks = self._subtree.setdefault("blocks", {})
        where = blocks.get(func)
        if where is None:
            where = blocks[func] = {}
            for node in walk(func):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    stmts = getattr(node, field, None)
                    if type(stmts) is list:
                        for i, st in enumerate(stmts):
                            where[id(st)] = (stmts, i)
        a, b = where.get(id(earlier)), where.get(id(later))
        if a is None or b is None or a[0] is not b[0] or a[1] >= b[1]:
            return False
        leaving = (ast.Return, ast.Raise, ast.Break, ast.Continue)
        return not any(isinstance(n, leaving) for st in a[0][a[1] + 1:b[1]] for n in walk(st))

    def self_call_lines(self):
        """(name, line) of the calls `self.name(...)` here: a method of this
        module's classes, never another module's."""
        cached = self._stream_cache.get("self-calls")
        if cached is None:
            cached = frozenset((n.func.attr, n.lineno) for n in walk(self.tree)
                               if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                               isinstance(n.func.value, ast.Name) and n.func.value.id == "self")
            self._stream_cache["self-calls"] = cached
        return cached

    def copied_to_device(self):
        """ids of the calls `x.clone()` (through `.detach()` and
        `.contiguous()` too) whose result goes straight to `.cuda()` or
        `.to("cuda")` (`src.clone().detach().cuda()`): a copy of what its
        author takes for host data, as `x.to(device)` itself is."""
        cached = self._stream_cache.get("copied-to-device")
        if cached is None:
            found = set()
            for n in walk(self.tree):
                if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                        (n.func.attr == "cuda" or (n.func.attr == "to" and to_device_call(n)))):
                    continue
                inner = n.func.value
                while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and \
                        inner.func.attr in ("clone", "detach", "contiguous"):
                    found.add(id(inner))
                    inner = inner.func.value
            cached = self._stream_cache["copied-to-device"] = frozenset(found)
        return cached

    def super_calls(self):
        """(name, line, class) of the calls `super().name(...)` in the
        methods of this module's classes: each calls a base class's method,
        never the method of a class that is no base of `class`."""
        cached = self._stream_cache.get("super-calls")
        if cached is None:
            found = set()
            for cls, node in self.class_nodes.items():
                for n in walk(node):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                            isinstance(n.func.value, ast.Call) and \
                            getattr(n.func.value.func, "id", None) == "super":
                        found.add((n.func.attr, n.lineno, cls))
            cached = self._stream_cache["super-calls"] = frozenset(found)
        return cached

    def builtin_named_calls(self):
        """(name, line) of the calls `x.name(...)` here of a builtin
        container's method name (`d.update(other)`, `q.pop()`) through
        anything but self: taken for the container's, not for a class's
        method of that name."""
        cached = self._stream_cache.get("builtin-calls")
        if cached is None:
            cached = frozenset((n.func.attr, n.lineno) for n in walk(self.tree)
                               if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                               n.func.attr in BUILTIN_METHODS and
                               not (isinstance(n.func.value, ast.Name) and n.func.value.id == "self"))
            self._stream_cache["builtin-calls"] = cached
        return cached

    def streamy(self):
        """Whether this module, or a module it imports from the run, names a
        stream: a use on another stream needs one."""
        cached = self._stream_cache.get("module")
        if cached is None:
            cached = "stream" in self.source_text or "Stream" in self.source_text or \
                "pin_memory" in self.source_text or "Event(" in self.source_text or \
                "non_blocking" in self.source_text
            if not cached and self.program is not None:
                cached = any(self.program.module_names_stream(t) for t in self.aliases.values())
            self._stream_cache["module"] = cached
        return cached
