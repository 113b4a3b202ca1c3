"""The stream-ordering check for PyTorch code: an abstract interpreter over
each function's structured control flow (Python's own `ast`), forward and
path-merging, with the facts and transfer rules of the C++ check
(clang-plugin/analysis/dataflow.cpp). Branches are joined where they meet;
loops are iterated to a fixpoint.

Values are frozensets of atoms, what an expression may evaluate to:
  ("t", site, gen)      a tensor storage allocated here (gen 0: the newest
                        from its site, gen 1: older ones still alive)
  ("s", key)            a CUDA stream
  ("e", site)           an event recorded at a record site; ("ev",) one not
                        recorded yet
  ("c", site)           a list or deque made here (its content is in the state)
  ("tup", fields, elems) a tuple or NamedTuple of values
  ("p", path)           something not made here, named by its path
  ("work", stream)      an async collective's handle, issued on a stream
  ("none",)             None
  ("?",)                with a stream atom: a stream on some paths only
  ("sctx", key)         a stream context not entered yet (torch.cuda.stream(s))
A storage is freed when the last binding that reaches it goes (del,
rebinding, the end of the function), or by `untyped_storage().resize_(0)`.
"""
import ast
import re

from .facts import ANY_STREAM, ENTRY, Buffer, State, has_kind, join_states, new_use, path_of, tensor_atoms
from .vocabulary import (
    CONTAINER_ADD, CONTAINER_FACTORIES, CONTAINER_LOOK, CONTAINER_TAKE, CUPY_NON_ARRAY,
    CUPY_STREAM_FACTORIES, CURRENT, CURRENT_STREAM,
    DEFINITELY_NOT_NONE, DEVICE_MODULE_CALLS, DEVICE_SYNC, DIST_PREFIX, DIST_WRITES_FIRST, EMPTY,
    EVENT_FACTORIES, FOREIGN_TENSOR, FOREIGN_UNKNOWN, HARMLESS_BUILTINS, HOST_COPY_METHODS,
    HOST_SYNC_METHODS, INLINE_BUDGET_LINES, LIKE_FACTORIES, MAX_INLINE_DEPTH, MAX_INLINE_LINES, MAX_LOOP_ROUNDS,
    MAYBE_SELF_METHODS, MAYBE_STREAM, METADATA_METHODS, NEW_TENSOR_METHODS, NONE, NONE_VALUE,
    HOST_READING_BUILTINS, HOST_SYNC_BUILTINS, NON_TENSOR_KEYWORDS, NOT_TENSOR_WORDS, PASS_THROUGH_BUILTINS,
    SIZES_WORDS,
    DIST_NON_TENSOR_KEYWORDS, DIST_QUERIES, DIST_READS_FIRST, GRAPH_CAPTURE_CONTEXTS, OBJECT_COPIES,
    PLATFORM_FALSE_ON_CUDA, TYPE_CASTS, SAVED_TENSORS_HOOKS, STREAM_CONTEXTS, STREAM_FACTORIES,
    TENSOR_FACTORIES, TENSOR_FIELDS, TENSOR_METADATA, TENSOR_NAMESPACES, TENSOR_ONLY_METHODS,
    TORCH_NON_TENSOR, VIEW_ATTRIBUTES, VIEW_METHODS, WIDEN_AFTER_ROUNDS, as_cuda, is_in_place,
    says_host_memory)
from .module import dotted, flag_text, guarded_entry_wait, is_ordering_statement, none_test, targets_host, \
    to_device_call
from .legacy import LegacyStreams, cupy_blocking_stream, cupy_null_stream
from .ordering import CURRENT_WAITED, Ordering
from .rules import Rules

# What a saved-tensor pack hook is handed (saved_tensor_hooks), as a buffer.
SAVED_PREFIX = "p:<saved tensor "


def waits_on_each(loop, elems):
    """A loop over events recorded here that waits on each (`for e in done:
    s.wait_event(e)`). Its round-less path, where the list was empty, is
    not taken: no event was recorded there, and the work they were
    recorded after was not enqueued either (the two are made together)."""
    if not elems or not all(a[0] in ("e", "ev") for a in elems) or not isinstance(loop.target, ast.Name):
        return False
    name = loop.target.id
    for n in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("wait_event", "wait", "synchronize"):
            if any(isinstance(a, ast.Name) and a.id == name for a in n.args) or \
                    (isinstance(n.func.value, ast.Name) and n.func.value.id == name):
                return True
    return False


def platform_test(test):
    """The value a test of the accelerator takes on CUDA
    (`not get_accelerator().resolves_data_dependency()`: True), or None."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.Call) and isinstance(test.func, (ast.Attribute, ast.Name)) and not test.args and \
            (getattr(test.func, "attr", None) or getattr(test.func, "id", None)) in PLATFORM_FALSE_ON_CUDA:
        return negated
    # `t.device.type not in ["cuda", ...]`, `t.device.type != "cuda"`: the
    # device is CUDA's in what this check is about.
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Attribute) and \
            test.left.attr == "type" and isinstance(test.left.value, ast.Attribute) and \
            test.left.value.attr == "device":
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            values = {right.value}
        elif isinstance(right, (ast.List, ast.Tuple, ast.Set)):
            values = {e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if "cuda" not in values and len(values) != len(right.elts):
                return None  # another element may be "cuda"
        else:
            return None
        op = test.ops[0]
        if isinstance(op, (ast.Eq, ast.In)):
            return ("cuda" in values) != negated
        if isinstance(op, (ast.NotEq, ast.NotIn)):
            return ("cuda" not in values) != negated
    return None


# Arguments whose value reading twice changes nothing (see call_method).
PLAIN_ARGUMENTS = (ast.Name, ast.Attribute, ast.Constant)


class GaveUp(Exception):
    """No fixpoint within the budget: the function is not reported."""


# A container named by where it came from (subscript_path) is at most this
# many subscripts deep (`opt.state[p]`): a loop that rebinds `x = x[0]`
# would make new names each round and never reach a fixpoint.
MAX_ELEMENT_DEPTH = 1


def element_depth(path):
    """How many subscripts deep a path is (`opt.state[task[1]]`: one)."""
    depth = level = 0
    for ch in path:
        if ch == "[":
            depth += level == 0
            level += 1
        elif ch == "]":
            level -= 1
    return depth


def call_root(path):
    """The unknown call's result a path names or is reached from:
    `<r.wait()>` for `<r.wait()>[0].features`."""
    return path[:path.find(")>") + 2] if ")>" in path else path


def flatten_nested(value, depth=0):
    """Tuples nested deeper than a few levels lose their shape (`args = (*args,
    x)` in a loop would otherwise grow without end)."""
    if not any(a[0] == "tup" for a in value):
        return value
    out = set()
    for a in value:
        if a[0] != "tup":
            out.add(a)
        elif depth >= 2:
            for e in a[2]:
                out |= flatten_nested(e, depth)
        else:
            out.add(("tup", a[1], tuple(flatten_nested(e, depth + 1) for e in a[2])))
    return frozenset(out)


SCALAR_TYPES = {"bool", "int", "float", "str", "bytes", "complex"}
# Annotations of a sequence or mapping of values, not of one tensor.
CONTAINER_TYPES = {"List", "Tuple", "Sequence", "MutableSequence", "Dict", "Mapping", "MutableMapping",
                   "Deque", "list", "tuple", "dict", "deque"}


def container_tests(test):
    """The expressions a test says are a container when it is true:
    `isinstance(x, list)`, `isinstance(x, (list, tuple))`, and the `and`s of
    such tests."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [t for v in test.values for t in container_tests(v)]
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and not test.keywords):
        return []
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = [(dotted(k) or "").rpartition(".")[2] for k in kinds]
    text = dotted(test.args[0])
    if text and names and all(n in CONTAINER_TYPES for n in names):
        return [text]
    return []


def argument_nodes(names, call):
    """{parameter: argument expression} of a call: the positional parameters
    `names` (in order) it fills before any `*args`, and those it names by
    keyword."""
    out = {}
    for name, a in zip(names, call.args):
        if isinstance(a, ast.Starred):
            break
        out[name] = a
    for k in call.keywords:
        if k.arg is not None:
            out[k.arg] = k.value
    return out


def names_tensor_type(text):
    """A type's dotted name that says it is a tensor or a parameter."""
    text = text.lower()
    return "tensor" in text or "parameter" in text


def scalar_annotation(ann):
    """`bool`, `int`, `Optional[int]`, `Union[int, str]`, `int | None`,
    `"str"`: no tensor."""
    if isinstance(ann, ast.Constant):
        return isinstance(ann.value, str) and ann.value in SCALAR_TYPES
    if isinstance(ann, ast.Name):
        return ann.id in SCALAR_TYPES
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = [ann.left, ann.right]
        return all(scalar_annotation(x) or isinstance(x, ast.Constant) and x.value is None for x in sides) and \
            any(scalar_annotation(x) for x in sides)
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").rpartition(".")[2] in ("Optional", "Union"):
        inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return all(scalar_annotation(x) or isinstance(x, ast.Constant) and x.value is None or
                   (isinstance(x, ast.Name) and x.id == "None") for x in inner) and \
            any(scalar_annotation(x) for x in inner)
    return False


def tensor_annotation(ann):
    """`torch.Tensor`, `Tensor`, `nn.Parameter`, `"Tensor"`,
    `Optional[Tensor]`, `Tensor | None`: a tensor (not a container of them)."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = [x for x in (ann.left, ann.right) if not (isinstance(x, ast.Constant) and x.value is None)]
        return len(sides) == 1 and tensor_annotation(sides[0])
    if isinstance(ann, ast.Subscript) and (dotted(ann.value) or "").rpartition(".")[2] == "Optional":
        return tensor_annotation(ann.slice)
    return (dotted(ann) or "").rpartition(".")[2] in ("Tensor", "Parameter")


def may_be_async(node):
    """A copy call given `non_blocking=` anything but False."""
    return any(k.arg == "non_blocking" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in node.keywords) or len(node.args) >= 2


def kwargs_of(node):
    """The keyword arguments of a call other than `start=` / `strict=`."""
    return [k for k in node.keywords if k.arg not in ("start", "strict")]


# `ctx.module_contexts[name]`: the container's field name.
FILLED_FIELD = re.compile(r"\.(\w+)\[[^\[\]]*\]$")

# A module's own tensors, by the path of something not made here: an
# element of `model.parameters()` (or its buffers, named or not), or
# `layer.weight` / `layer.bias`. The group is the module's text.
MODULE_PART = re.compile(r"^<(.+)\.(?:named_)?(?:parameters|buffers)\(\)>\[\*\]|^(.+)\.(?:weight|bias)$")


# A module's methods that hand out its own tensors.
MODULE_TENSOR_ACCESSORS = ("parameters", "named_parameters", "buffers", "named_buffers")


def module_of_part(path):
    """The module whose tensor `path` names (see MODULE_PART), or None."""
    m = MODULE_PART.match(path)
    return (m.group(1) or m.group(2)) if m else None


def returns_a_stream(fn):
    """A def annotated to return a stream (`-> torch.cuda.Stream`), not
    an Optional one."""
    ann = getattr(fn, "returns", None)
    text = dotted(ann) if ann is not None else None
    return bool(text) and text.rpartition(".")[2] in ("Stream", "ExternalStream")


class Evaluated:
    """What a `with` statement's call gave when it made no stream current."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def widen(state):
    for table in (state.names, state.containers):
        for k, v in table.items():
            if any(a[0] == "tup" for a in v):
                table[k] = flatten_nested(v, 2)


class Frame:
    """One function being interpreted: the analyzed one (depth 0) or a helper
    inlined into it."""

    def __init__(self, module, func, fid, depth, class_name, chain, self_outer, outer_fid=None):
        self.module = module
        self.func = func
        self.fid = fid
        self.depth = depth
        self.class_name = class_name
        self.chain = chain  # ids of the call expressions that inlined it
        self.self_outer = self_outer  # `self` is the analyzed function's self
        self.returns = []  # (state, value)
        self.loops = []  # [(breaks, continues)]
        self.streams = [CURRENT]  # stream contexts, innermost last
        # A closure keeps what it names alive, past the function.
        self.globals, self.captured = module.frame_facts(func)
        self.kept_by_closures = module.kept_by_closures(func)
        # A nested function or lambda called here: the names it does not bind
        # itself are its enclosing frame's.
        self.outer_fid = outer_fid
        self.own_names = module.bound_names(func) if outer_fid is not None else None
        # The buffers that existed when the helper was entered: the caller's.
        self.entry_buffers = frozenset()
        self.stage = False
        self.waited_current = False  # made the current stream wait for another one (note_current_waited)
        self.keys = {}  # name -> binding key (FunctionAnalysis.key): fixed for the frame
        # A parameter of an inlined helper -> the text its argument gives an
        # element key (`state[key]` in the helper is the caller's
        # `state["exp_avg"]`): see key_text.
        self.key_texts = {}
        # A parameter of an inlined helper -> the literal True, False or None
        # the call gives it: see FunctionAnalysis.constant_arguments.
        self.constants = {}


class FunctionAnalysis(Rules, Ordering, LegacyStreams):
    """Interprets one function (with its helpers inlined) and collects the
    frees not ordered after a use on another stream."""

    def __init__(self, module, func, class_name, qualname):
        self.root = module
        self.func = func
        self.class_name = class_name
        self.qualname = qualname
        self.sites = {}  # (node id, chain) -> site number
        self.site_nodes = []  # site number -> (node, kind)
        self.site_inner = []  # site number -> its node (inside a helper, not the call)
        self.site_where = []  # site number -> (path, function) of a helper's site, or None
        self.found = {}  # (free site, use site, stream) -> RawFree
        self.late = {}  # (free site, use site, stream) -> wait site
        self.st = None
        self.frames = []
        self.next_fid = 0
        self.steps = 0
        # What it did, for the benchmark: free sites checked, use sites on a
        # stream other than the current one.
        self.free_sites = set()
        self.side_use_sites = set()
        self.functions_seen = {}  # id of a def or lambda -> (node, module, enclosing fid, class, self_outer)
        self.modules_seen = {module.name: module}  # for ("obj", module name, class) atoms
        # (write site, use site) -> RawRace: the byte rules
        self.races = {}
        self.autograd_hooks = None  # inside an unpack hook: [("node" | "end", function value)]
        self.reading_node = False  # a backward node reads what unpack handed back (node_read)
        self.escaping = set()  # function values whose captures escape (once each)
        # use site -> RawPending: uses still pending on another stream when
        # the analyzed function returns (see pending_at_return)
        self.pending = {}
        self.own_sites = set()  # sites in the analyzed function itself, not in a helper
        self.host_sites = set()  # allocation sites of host tensors
        self.unknown_use_nodes = set()  # calls of unknown functions (what they do with a tensor is not known)
        # calls of the run's own functions left uninterpreted (too deep, too
        # long, recursive): they may wait before they read
        self.uninlined = set()
        self.harmless_calls = set()  # copy.copy(x) and alike: no kernel reads x
        self.exit_names = {}
        self.copy_sources = set()  # (call id, tensor atom): what a copy reads from
        self.copies_to_host = set()  # call ids of copies whose destination is host memory
        self.allocation_sites = set()  # sites of uninitialized device allocations, kept as uses
        # path of an unknown call's result -> the side stream current when it was made
        self.side_made = {}
        self.opaque_results = set()  # paths of unknown calls given arguments (unknown_call)
        self.taken_out = set()  # paths of elements popped from containers not made here
        self.read_in_helpers = set()  # paths first read inside an inlined helper
        # path -> "@field": an element of a container the run fills while a
        # side stream is current (Program.side_filled_fields)
        self.field_made = {}
        self.waited_streams = set()  # streams some stream was made to wait for
        self.inlined_lines = 0  # see INLINE_BUDGET_LINES
        # (module, class name) of the subclass whose instance `self` is, for
        # a run of a base class's method as that subclass's; else None.
        self.self_type = None
        self.each_names = []  # (fid, name) of each `for name in ...` being run, or None
        # (frame, container text, container value, key name, value's binding
        # key, loop) of each `for k, v in d.items()` being run, or None
        self.items_loops = []
        # module text -> device tensors this function put into that module
        # (`p.data = t` for p in its parameters, `layer.weight.copy_(t)`):
        # a call of the module reads them (call_module_of_parts).
        self.module_parts = {}
        self.part_names = {}  # tensor made here -> the module part it was put into (`model.parameters()[*]`)
        self.call_labels = {}  # "<call@N()>" -> the call's text, for reports
        self.streams_recorded_on = set()  # streams some tensor was record_stream'ed on
        self.discarding = None  # the call whose result an expression statement drops
        # flag text -> value (see module.repeated_flag), ("none", stream
        # text) -> whether it is None (see module.none_tested_stream)
        self.assume = None
        # Attributes of instances made here with None (`Task(None, ...)`)
        # and with anything else: see note_none_fields.
        self.none_fields = set()
        self.some_fields = set()
        # (frame id, expression text) of the values the if-branches being
        # run tested to be containers (`if isinstance(x.w, list):`).
        self.container_texts = []
        # (defs, {flag: value}) while an unpack hook runs once per value of
        # the flags its node hooks test (see flag_runs)
        self.flag_split = None
        # (container, newest tensor) -> binding key of the name it was last
        # stored under (`d[k] = t`), or None for another key expression
        self.entry_keys = {}
        self._signals = None  # see signals_through_memory
        self.inlined = set()  # (module path, def line) of every function interpreted at a call
        self.inlined_calls = set()  # ids of the call nodes interpreted in place
        # write site -> origin (State.made) of the writes of tensors not made here
        self.made_sites = {}
        self.entry_races = set()  # keys of self.races against what the caller wrote (ENTRY)
        self._params = None  # see param_names
        # attribute -> set of stream keys, filled while a class's methods are
        # read for what they store on self (objects.stored_streams)
        self.collect = None
        # While collecting: stores whose facts wait for the end of the method
        # (a later store at the same target in the same block replaces them).
        self.collect_pending = {}
        self.returned = set()  # tensor atoms the analyzed function returns
        self.returned_records = set()  # record sites of the events it returns
        self._kept_records = None  # see event_kept
        self.foreign_records = set()  # record sites of events this analysis did not make
        self.collect_waits = None  # (waiter, waited) stream pairs, likewise
        self.record_streams = {}  # record site -> the streams its event may be recorded on
        self._object_facts = None
        self._object_seeded = False
        self.wait_log = []  # (waiting streams, waited stream): see seed_object_writes
        self.blocking = set()  # keys of the blocking streams met (legacy.py)

    # ----- sites and keys -------------------------------------------------
    @property
    def f(self):
        return self.frames[-1]

    @property
    def m(self):
        """The module of the function being interpreted (an inlined helper's
        own, when it comes from another module)."""
        return self.frames[-1].module if self.frames else self.root

    def ctx_is_side(self):
        return self.ctx not in (CURRENT, None)

    def site(self, node, kind=""):
        chain = self.f.chain
        key = (id(node), chain, kind)
        s = self.sites.get(key)
        if s is None:
            s = len(self.site_nodes)
            self.sites[key] = s
            # Inside an inlined helper, report at the call in the analyzed function.
            self.site_nodes.append((chain[0][1] if chain else node, kind))
            self.site_inner.append(node)
            self.site_where.append((self.m.path, getattr(self.f.func, "name", None)) if chain else None)
            if not chain:
                self.own_sites.add(s)
        return s

    def key(self, name):
        """The binding key of a local name or attribute path."""
        f = self.frames[-1]
        k = f.keys.get(name)
        if k is not None:
            return k
        root = name.partition(".")[0].partition("[")[0]
        if root in f.globals:
            k = "g:" + name
        elif root == "self" and f.self_outer:
            k = "0:" + name
        elif f.outer_fid is not None and root not in f.own_names:
            k = "%d:%s" % (f.outer_fid, name)
        else:
            k = "%d:%s" % (self.owner_fid(f, root) if name != root else f.fid, name)
        f.keys[name] = k
        return k

    def owner_fid(self, f, root):
        """The frame a path's root belongs to. In an inlined helper, a path
        whose root the helper's text never names, or names for the caller's
        object of that name (a parameter bound to it), came from a caller's
        value (`ctx1.forward_ctxs['a']` for the helper's `current_ctx.
        forward_ctxs['a']`, subscript_path): it is the caller's element, so
        another helper handed the same object finds it there."""
        if f.depth == 0:
            return f.fid
        if root in f.module.subtree(f.func)[1]:
            bound = self.st.names.get("%d:%s" % (f.fid, root)) if self.st is not None else None
            if not bound or not any(a == ("p", root) or a == ("t", "p:" + root, 0) for a in bound):
                return f.fid
        for outer in reversed(self.frames[:-1]):
            if outer.depth == 0 or root in outer.module.subtree(outer.func)[1]:
                return outer.fid
        return f.fid

    @property
    def ctx(self):
        return self.f.streams[-1]

    # ----- entry ----------------------------------------------------------
    def run(self, is_module=False):
        fid = self.next_fid
        self.next_fid += 1
        self.frames.append(Frame(self.root, self.func, fid, 0, None if is_module else self.class_name, (), True))
        self.st = State()
        if not is_module:
            self.seed_entry()
        body = self.func.body
        self.exec_block(body)
        if not is_module:
            prefix = "%d:" % fid
            for st in [self.st] + [r[0] for r in self.f.returns]:
                for k, val in (st.names.items() if st is not None else ()):
                    if k.startswith(prefix) and "." not in k:
                        for a in val:
                            self.exit_names.setdefault(a, k[len(prefix):])
            returned = self.finish_frame(self.f, self.st, None, body[-1] if body else self.func)
            if self.st is not None:
                reached = self.reachable(returned)
                self.returned = {a for a in reached if a[0] == "t"}
                self.returned_records = {a[1] for a in reached if a[0] == "e"}
                self.pending_at_return(body[-1] if body else self.func)
            self.entry_races_at_callers()
        return self.found, self.late

    def seed_entry(self):
        """What the caller wrote before the function started, on the stream
        current then (State.made)."""
        site = self.site(self.func, "entry")
        self.made_sites[site] = ENTRY
        self.st.made[ENTRY] = (site, new_use(CURRENT))

    def seed_object_writes(self):
        """What other methods of the object made on its streams, for the
        attributes that hold it (objects.stored_streams): seeded when an
        attribute first needs it, with the waits this function made before
        then (wait_log) applied."""
        if self._object_seeded:
            return
        self._object_seeded = True
        facts = self.object_facts()
        for stream in sorted({s for streams in facts.writers.values() for s in streams}):
            origin = ("entry", stream)
            site = self.site(self.func, "entry:" + stream)
            self.made_sites[site] = origin
            use = new_use(stream)
            waiters = facts.waiters.get(stream)
            if waiters:
                use = use._replace(ordered=use.ordered | waiters)
            for waiting, waited in self.wait_log:
                if waited == ANY_STREAM or use.ordered_on(waited):
                    use = use._replace(ordered=use.ordered | waiting)
            self.st.made[origin] = (site, use)

    def object_facts(self):
        """The ObjectFacts of the analyzed function's class
        (objects.stored_streams); none outside a class or while such facts
        are collected."""
        if self._object_facts is None:
            from .objects import NO_FACTS, stored_streams
            self._object_facts = NO_FACTS
            if self.class_name is not None and self.collect is None:
                self._object_facts = stored_streams(self.root, self.class_name)
        return self._object_facts

    def attribute_streams(self):
        """attribute -> streams its tensors were made on (ObjectFacts)."""
        return self.object_facts().streams

    @staticmethod
    def attribute_of(path):
        return path[5:].partition(".")[0].partition("[")[0]

    def attribute_facts(self, path):
        """The streams the tensors at `self.<attr>` (or an element of it)
        were made on, when another method says so; else None."""
        if not path.startswith("self.") or self.collect is not None:
            return None
        rest = path[5:]
        attr = rest.partition(".")[0].partition("[")[0]
        tail = rest[len(attr):]
        if tail and not tail.startswith("["):
            return None  # self.x.grad: another tensor
        kept = self.attribute_streams().get(attr)
        if kept and self.st is not None:
            self.seed_object_writes()
        return kept

    def note_store(self, text, value, target=None, stmt=None):
        """While a class's methods are read (objects.stored_streams): the
        streams the tensors stored at `self.<attr>` were allocated on. With
        the store's target and statement: what a later statement of the
        same block stores at the same target replaces it, so only what the
        method leaves there counts (`self.kv = torch.cat(...)` followed by
        `self.kv = self.kv.to("cpu", non_blocking=True)` leaves host
        memory, not a tensor of the current stream)."""
        if self.collect is None or text is None or not text.startswith("self.") or not self.f.self_outer:
            return
        pending_key = None
        if target is not None and stmt is not None:
            pending_key = ast.dump(target)
            earlier = self.collect_pending.pop(pending_key, None)
            if earlier is not None and not self.m.replaces(self.f.func, earlier[0], stmt):
                # A store on another path (the other branch of an if) is
                # left there too.
                self.add_collected(earlier[1])
        attr = text[5:].partition(".")[0].partition("[")[0]
        streams, writers, made = set(), set(), False
        for a in self.reachable(value):
            if a[0] == "t":
                if a[1] in self.host_sites:
                    continue  # host memory: no stream's pool made it
                buf = self.st.buffers.get(a)
                if buf is not None and buf.foreign and not (isinstance(a[1], str) and self.made_on_side(a[1][2:])):
                    continue  # not made here: where is only assumed
                if buf is not None:
                    streams |= buf.alloc
                    writers |= {w.stream for w in buf.writes.values()}
                    made = made or not buf.foreign  # an operator's tensor
            elif a[0] == "p" and self.made_on_side(a[1]):
                side = self.made_on_side(a[1])
                streams.add(side)
                writers.add(side)

        def kept(keys):
            return {s for s in keys if s == CURRENT or (isinstance(s, str) and s.startswith("self."))}
        stored_on = kept(streams)
        if not stored_on:
            return
        fact = (attr, stored_on, kept(writers), made)
        if pending_key is not None:
            self.collect_pending[pending_key] = (stmt, fact)
        else:
            self.add_collected(fact)

    def add_collected(self, fact):
        attr, streams, writers, made = fact
        entry = self.collect.setdefault(attr, [set(), set(), False])
        entry[0].update(streams)
        entry[1].update(writers)
        entry[2] = entry[2] or made

    def flush_collected(self):
        """The method was read: the stores no later one replaced count."""
        for _, fact in self.collect_pending.values():
            self.add_collected(fact)
        self.collect_pending = {}

    def run_stages(self, stages):
        """One object across the calls a framework makes of it, in their
        order: each stage is (def, arguments), interpreted one after the
        other in one state, so what the first puts on `self` or `ctx` the
        next one sees (__enter__ then __exit__; forward then backward of an
        autograd Function). Each stage's frees and races are reported where
        they are."""
        fid = self.next_fid
        self.next_fid += 1
        self.frames.append(Frame(self.root, self.func, fid, 0, self.class_name, (), True))
        self.st = State()
        self.seed_entry()
        anchor = self.func
        for fn, args, self_node in stages:
            if self.st is None:
                break
            self.inline(fn, anchor, args, {}, self_node, module=self.root, class_name=self.class_name,
                        stage=True)
        return self.found, self.late

    def saved_tensor_hooks(self, pack, unpack, node, owner=None):
        """saved_tensors_hooks(pack, unpack): autograd calls pack with each
        tensor the forward saves (two here, so a later call finds what an
        earlier one left on the object), then, in the backward, unpack with
        what pack returned, in reverse order. The backward node that saved a
        tensor reads what unpack hands back on the current stream; then run
        the hooks unpack registered on that node (`node.register_hook(h)`,
        called after the node), and at the end of the backward the callbacks
        it queued (`queue_callback(f)`). `owner`: (module, class name) of a
        subclass made with super().__init__(pack, unpack): its __enter__
        runs before the forward and its __exit__ after it, before the
        backward (`with Offload(): out = model(x)`, then `out.backward()`)
        or after it (the backward inside the with-block): both are followed,
        from the state the forward left."""
        def method(name):
            found = owner[0].method(owner[1], name) if owner is not None else None
            if found is not None and self.st is not None:
                self.inline(found[1], node, [], {}, ast.Name(id="self", ctx=ast.Load()), module=found[0],
                            class_name=found[2], stage=True)
        method("__enter__")
        packed = []
        for i in (1, 2):
            if self.st is None:
                return
            packed.append(self.call_function_value(pack, None, [self.foreign_value(SAVED_PREFIX[2:] + "%d>" % i)]))
            # Autograd keeps what pack returned, not the tensor: the names
            # and entries pack left holding it are its last references.
            atom = ("t", SAVED_PREFIX + "%d>" % i, 0)
            buf = self.st.buffers.get(atom) if self.st is not None else None
            if buf is not None and buf.foreign:
                buf = buf.copy()
                buf.foreign = 0
                self.st.buffers[atom] = buf
        if self.st is None:
            return
        forward = self.st.copy()
        # The with-block ends after the forward, then the backward runs; or
        # the backward runs inside it (both are common).
        method("__exit__")
        self.backward(unpack, packed, node)
        if owner is not None and owner[0].method(owner[1], "__exit__") is not None:
            first, self.st = self.st, forward
            self.backward(unpack, packed, node)
            method("__exit__")
            ends = [st for st in (first, self.st) if st is not None]
            self.st = join_states(ends) if ends else None

    def backward(self, unpack, packed, node):
        """The backward of saved_tensor_hooks: unpack each saved tensor, in
        reverse order; the node reads what it handed back, then the hooks it
        registered on the node run; at the end the callbacks it queued."""
        queued = []
        for value in reversed(packed):
            if self.st is None:
                return
            start, ends = self.st, []
            runs = self.flag_runs(unpack)
            for valuation in runs:
                self.st = start.copy() if len(runs) > 1 else start
                ends.append(self.unpack_once(unpack, value, node, valuation, queued))
            self.st = join_states(ends)
        for hook in queued:
            if self.st is not None:
                self.call_function_value(hook, None, [])

    def unpack_once(self, unpack, value, node, valuation, queued):
        """One unpack of a saved tensor, the node's read and the node's
        hooks, under `valuation` (flag_runs); the state it leaves, or None
        when no path gives the flags those values."""
        outer, self.autograd_hooks = self.autograd_hooks, []
        split, assume = self.flag_split, self.assume
        if valuation is not None:
            self.flag_split = valuation
            self.assume = dict(assume or {}, **valuation[1])
        try:
            out = self.call_function_value(unpack, None, [value])
            hooks = self.autograd_hooks
            if self.st is None:
                return None
            self.node_read(out, node)
            for kind, hook in hooks:
                if kind == "end":
                    if hook not in queued:
                        queued.append(hook)
                elif self.st is not None:
                    self.call_function_value(hook, None, [EMPTY, EMPTY])
            return self.st
        finally:
            self.autograd_hooks = outer
            self.flag_split, self.assume = split, assume

    def flag_runs(self, unpack):
        """The valuations to run an unpack hook under: one per value of the
        flags it sets for the hooks it registers (module.closure_flags), as
        (its defs, {flag: value}); [None] when it sets none. On the path
        where unpack reloaded a tensor the node hook records its event; on
        the path that kept the forward's tensor it does not: one run for
        both would pair the reload with the missing event."""
        defs, flags = [], set()
        for a in unpack:
            entry = self.functions_seen.get(a[1]) if a[0] == "fn" else None
            if entry is not None:
                defs.append(entry[0])
                flags.update(entry[1].closure_flags(entry[0]))
        flags = sorted(flags)[:2]
        if not flags:
            return [None]
        runs = []
        for bits in range(1 << len(flags)):
            runs.append((tuple(defs), {f: bool(bits >> i & 1) for i, f in enumerate(flags)}))
        return runs

    def contradicts_split(self, st, stmt):
        """Whether state `st` of the function being run under a flag
        valuation (flag_runs) gives a flag the other value for good: set to
        it and not set again past `stmt` (None: the function's end)."""
        if st is None or self.flag_split is None or self.f.func not in self.flag_split[0]:
            return False
        for flag, value in self.flag_split[1].items():
            bound = st.names.get(self.key(flag))
            if bound is not None and len(bound) == 1:
                atom = next(iter(bound))
                if atom[0] == "bool" and atom[1] != value and (
                        stmt is None or not self.m.assigned_after(self.f.func, flag, stmt)):
                    return True
        return False

    def node_read(self, value, node):
        """The backward node reads what unpack handed back, on the current
        stream: it must be ready there (what unpack wrote on another stream,
        the current stream waited for), and the read is a use that whoever
        frees the tensor later (the node's hooks, the end-of-backward
        callbacks) orders first. The hooks order it by the flags unpack set
        (flag_runs) and the entries it stashed (absent_entry)."""
        self.reading_node = True
        try:
            self.use(self.materialize(value), node)
        finally:
            self.reading_node = False

    # ----- statements -----------------------------------------------------
    def exec_block(self, stmts):
        for s in stmts:
            if self.st is None:
                return
            self.exec_stmt(s)

    def exec_stmt(self, s):
        self.steps += 1
        if self.steps > 200000:
            raise GaveUp()
        t = type(s)
        if t is ast.Expr:
            # A yielded value escapes (see eval); a popped one is dropped.
            self.discarding = s.value
            self.eval(s.value)
            self.discarding = None
        elif t is ast.Assign:
            value = self.eval(s.value, hint=s.targets[0])
            for target in s.targets:
                self.assign(target, value, s)
        elif t is ast.AnnAssign:
            if s.value is not None:
                self.assign(s.target, self.eval(s.value, hint=s.target), s)
        elif t is ast.AugAssign:
            target = self.eval(s.target)
            value = self.eval(s.value)
            if has_kind(target, "p") and tensor_atoms(value):
                target = self.materialize(target)
            if tensor_atoms(target):
                self.use(value, s)
                self.write(target, s)  # in place: same storage
            elif has_kind(target, "c"):
                self.container_add(target, value, s)
            else:
                # `x.attr *= k` of something not made here keeps naming it
                # (in place on a tensor, and a number is no tensor either way).
                result = self.binop(target, value, s)
                self.assign(s.target, result if result or not has_kind(target, "p") else target, s)
        elif t is ast.Delete:
            for target in s.targets:
                self.delete(target, s)
        elif t is ast.If:
            self.exec_if(s)
        elif t in (ast.For, ast.AsyncFor, ast.While):
            self.exec_loop(s)
        elif t in (ast.With, ast.AsyncWith):
            self.exec_with(s)
        elif t is ast.Return:
            value = self.eval(s.value) if s.value is not None else NONE_VALUE
            self.f.returns.append((self.st, value, s))
            self.st = None
        elif t is ast.Raise:
            if s.exc is not None:
                self.eval(s.exc)
            self.st = None
        elif t is ast.Break:
            if self.f.loops:
                self.f.loops[-1][0].append(self.st)
            self.st = None
        elif t is ast.Continue:
            if self.f.loops:
                self.f.loops[-1][1].append(self.st)
            self.st = None
        elif t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            self.exec_try(s)
        elif t is ast.Match:
            self.eval(s.subject)
            before = self.st
            outs = []
            for case in s.cases:
                self.st = before.copy()
                self.exec_block(case.body)
                outs.append(self.st)
            outs.append(before)
            self.st = join_states(outs)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if t is ast.ClassDef or s.decorator_list or t is ast.AsyncFunctionDef:
                # A decorated function or a class may be kept anywhere: what
                # it names stays alive (see Frame.captured).
                captured = self.f.captured
                for k, v in list(self.st.names.items()):
                    if v and k.partition(":")[2].partition(".")[0] in captured:
                        self.escape(v)
                if t is not ast.ClassDef:
                    self.st.names[self.key(s.name)] = EMPTY
            else:
                # A nested function: followed where it is called; what it
                # names stays alive only if it is kept (escape_functions).
                self.st.names[self.key(s.name)] = self.function_value(s)
        elif t is ast.Assert:
            self.host_read(self.eval(s.test), s)
        # Import, Pass, Global, Nonlocal: nothing to do.

    def exec_if(self, s):
        self.eval(s.test)
        assumed = self.assumed(s.test)
        if assumed is None:
            assumed = platform_test(s.test)
        if assumed is None:
            assumed = self.constant_test(s.test)
        if assumed is not None:
            # One run of the function per value of a flag it tests twice
            # (see repeated_flag): only the branch that value takes.
            self.exec_block(s.body if assumed else s.orelse)
            return
        if not s.orelse and (is_ordering_statement(s) or
                             (type(s.test) is ast.Compare and guarded_entry_wait(s))):
            # `if not accelerator.is_synchronized_device(): t.record_stream(s)`,
            # `if record_stream: ...`, `if t.device.type != "cpu": ...`: an
            # ordering under a guard tests the platform or the tensor's kind,
            # and is taken as made (docs/static-check.md).
            self.exec_block(s.body)
            return
        before = self.st
        self.st = self.narrow(before.copy(), s.test, True)
        tested = [(self.f.fid, text) for text in container_tests(s.test)]
        self.container_texts.extend(tested)
        try:
            self.exec_block(s.body)
        finally:
            del self.container_texts[len(self.container_texts) - len(tested):]
        then = self.st
        self.st = self.narrow(before, s.test, False)
        self.exec_block(s.orelse)
        if self.flag_split is not None:
            then = None if self.contradicts_split(then, s) else then
            self.st = None if self.contradicts_split(self.st, s) else self.st
        self.st = join_states([then, self.st])

    def constant_arguments(self, callee, positional, node):
        """{parameter: value} of a helper's parameters that this call gives a
        literal True, False or None, passed or left to a literal default,
        and that the helper never rebinds (`zeros_only=True`)."""
        out = {}
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return out  # *args or **kwargs: any parameter may be given anything
        given = argument_nodes([p.arg for p in positional], node)
        params = callee.args
        # Defaults belong to the last positional parameters.
        defaults = dict(zip([p.arg for p in positional][::-1], params.defaults[::-1]))
        defaults.update({p.arg: d for p, d in zip(params.kwonlyargs, params.kw_defaults) if d is not None})
        stores = self.m.names_table(callee)["stores"]
        for name in [p.arg for p in positional] + [p.arg for p in params.kwonlyargs]:
            if name in stores:
                continue
            expr = given[name] if name in given else defaults.get(name)
            if isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, bool)):
                out[name] = expr.value
        return out

    def constant_test(self, test):
        """The truth of an if's test on a parameter this helper call gave a
        literal (constant_arguments): `if flag:`, `if not flag:`, `if x is
        None:`, `if x is not None:`; None when it tests anything else."""
        constants = self.f.constants if self.frames else None
        if not constants:
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.constant_test(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Name) and test.id in constants:
            return bool(constants[test.id])
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) and \
                test.left.id in constants and isinstance(test.ops[0], (ast.Is, ast.IsNot)) and \
                isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            same = constants[test.left.id] is None
            return same if isinstance(test.ops[0], ast.Is) else not same
        return None

    def assumed(self, test):
        """The value this run takes for a flag test or a stream's test
        against None, or None."""
        if not self.assume:
            return None
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        text = flag_text(test.operand if negated else test)
        if text is not None and text in self.assume:
            return self.assume[text] != negated
        found = none_test(test)
        if found is not None and self.assumed_none(found[0]) is not None:
            return self.assumed_none(found[0]) == found[1]
        return None

    def assumed_none(self, text):
        """Whether this run takes the stream named `text` to be None (see
        module.none_tested_stream); None when it assumes nothing of it. Only
        the analyzed function's own names, and self's in helpers of self."""
        if not self.assume or text is None:
            return None
        value = self.assume.get(("none", text))
        if value is None:
            return None
        if self.f.depth == 0 or (text.startswith("self.") and self.f.self_outer):
            return value
        return None

    def narrow(self, st, test, truth):
        """On each branch of `x is None` / `x is not None` / `x`, drop what x
        cannot be there (the first round of a keepalive loop). None: the
        branch cannot be taken."""
        if st is None:
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.narrow(st, test.operand, not truth)
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) == truth:
                for v in test.values:
                    st = self.narrow(st, v, truth)
            return st
        emptied = self.container_test(test, truth)
        if emptied is not None:
            return self.empty_container(st, emptied)
        if self.entry_keys and isinstance(test, ast.Compare):
            st = self.absent_entry(st, test, truth)
        name, is_none = None, None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            name = dotted(test.left)
            if isinstance(test.ops[0], ast.Is):
                is_none = truth
            elif isinstance(test.ops[0], ast.IsNot):
                is_none = not truth
        elif dotted(test) is not None:
            name = dotted(test)
            is_none = False if truth else None  # falsy: None, or an empty list
        if name is None or is_none is None:
            return st
        k = self.key(name)
        v = st.names.get(k)
        if v is None:
            if is_none and "stream" in name.rpartition(".")[2].lower():
                # A stream kept elsewhere, None on this branch: what was
                # enqueued "on" it ran on the current stream.
                self.equate_with_current(st, name)
            return st
        if is_none and v and all(a[0] == "p" and "stream" in a[1].rpartition(".")[2].lower() for a in v):
            for a in v:
                self.equate_with_current(st, a[1])
        if is_none:
            if NONE in v and v != NONE_VALUE:
                st.names[k] = NONE_VALUE
                self.forget_unreachable(st)
            elif NONE not in v and v and all(a[0] in DEFINITELY_NOT_NONE for a in v):
                return None  # a tensor, a stream, a list made here: never None
        elif NONE in v:
            st.names[k] = v - NONE_VALUE
        return st

    def equate_with_current(self, st, stream):
        """On a branch where `stream` is None, torch.cuda.stream(stream) left
        the current stream current: its uses and writes are the current
        stream's, ordered with it both ways."""
        saved, self.st = self.st, st

        def same(use):
            if use.stream == stream:
                # A stream left None is most often a device without
                # streams (a CPU run): what ran "on" it is not held against
                # the others on this branch.
                if ANY_STREAM not in use.ordered:
                    return use._replace(ordered=use.ordered | {CURRENT, ANY_STREAM})
            elif stream in use.ordered:
                if CURRENT not in use.ordered:
                    return use._replace(ordered=use.ordered | {CURRENT})
            elif use.ordered_on(CURRENT) and stream not in use.ordered:
                return use._replace(ordered=use.ordered | {stream})
            return use
        self.all_uses(same)
        # Nor is a record_stream of it missing on this branch: the record
        # made only where it exists (`if s is not None: t.record_stream(s)`)
        # holds for its later uses after the branches join.
        for atom, buf in list(st.buffers.items()):
            if stream not in buf.recorded:
                buf = buf.copy()
                buf.recorded = buf.recorded | {stream}
                st.buffers[atom] = buf
        self.st = saved

    def container_test(self, test, truth):
        """The name of a local container that `test` being `truth` says is
        empty (`while q:` ends, `if not q`, `len(q) == 0`), or None."""
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "len" \
                and len(test.args) == 1:
            test = test.args[0]
        elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call) \
                and isinstance(test.left.func, ast.Name) and test.left.func.id == "len" \
                and len(test.left.args) == 1 and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value == 0:
            op = test.ops[0]
            if isinstance(op, (ast.Gt, ast.NotEq)):
                return self.container_test(test.left.args[0], truth)
            if isinstance(op, ast.Eq):
                return self.container_test(test.left.args[0], not truth)
            return None
        name = dotted(test)
        if name is None or truth:
            return None
        v = self.st.names.get(self.key(name)) if self.st is not None else None
        if v and all(a[0] == "c" for a in v):
            return name
        return None

    def empty_container(self, st, name):
        v = st.names.get(self.key(name), EMPTY)
        changed = False
        for c in v:
            if c[0] == "c" and st.containers.get(c):
                st.containers[c] = EMPTY
                changed = True
        if changed:
            self.forget_unreachable(st)
        return st

    def forget_unreachable(self, st):
        """On a path where the name was None, what only it held never existed."""
        saved, self.st = self.st, st
        held = self.held()
        self.st = saved
        for atom in [a for a in st.buffers if a not in held]:
            del st.buffers[atom]

    def exec_loop(self, s):
        is_for = not isinstance(s, ast.While)
        elems = EMPTY
        if is_for:
            elems = self.elements(self.eval(s.iter))
        forever = not is_for and isinstance(s.test, ast.Constant) and bool(s.test.value)
        entry = self.st
        head = entry
        # A loop over streams (`for s in streams: t.record_stream(s)`)
        # records each (see tensor record_stream). A GaveUp leaves it
        # pushed, and ends the whole analysis.
        each = (self.f.fid, s.target.id) if is_for and isinstance(s.target, ast.Name) else None
        self.each_names.append(each)
        # `for k, v in d.items():` binds v to d[k] for the round.
        items = None
        if is_for and isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Attribute) and \
                s.iter.func.attr == "items" and not s.iter.args and isinstance(s.target, ast.Tuple) and \
                len(s.target.elts) == 2 and all(isinstance(e, ast.Name) for e in s.target.elts):
            items = (self.f, dotted(s.iter.func.value), self.eval(s.iter.func.value), s.target.elts[0].id,
                     self.key(s.target.elts[1].id), s)
        self.items_loops.append(items)
        for rounds in range(MAX_LOOP_ROUNDS):
            self.f.loops.append(([], []))
            self.st = head.copy()
            if is_for:
                self.fresh_elements(elems, s)
                self.assign(s.target, elems, s)
                cond = None
            else:
                self.eval(s.test)
                cond = self.st.copy()
                self.st = self.narrow(self.st, s.test, True)
            self.exec_block(s.body)
            breaks, continues = self.f.loops.pop()
            ends = [self.st] + continues
            # Joining the previous head too keeps the heads growing, so that
            # strong updates (a queue emptied by popleft) cannot oscillate.
            new_head = join_states([head, entry] + ends)
            if rounds >= WIDEN_AFTER_ROUNDS:
                widen(new_head)
            if new_head == head:
                break
            head = new_head
        else:
            raise GaveUp()
        self.each_names.pop()
        self.items_loops.pop()
        if is_for:
            # No round at all: a local list iterated over was empty, and so
            # holds nothing. Over anything else (range(n), a parameter) the
            # loop is taken to run: a loop of waits waits for what exists.
            iterated = dotted(s.iter)
            if iterated is not None and all(a[0] == "c" for a in entry.names.get(self.key(iterated), (NONE,))) \
                    and not waits_on_each(s, elems):
                exit_state = join_states([self.empty_container(entry.copy(), iterated)] + ends)
            else:
                exit_state = join_states(ends)
            if exit_state is None:
                exit_state = None if breaks else head.copy()
        elif forever:
            exit_state = None
        else:
            exit_state = self.narrow(cond, s.test, False)
            if exit_state is not None:
                self.st = exit_state
                self.query_loop_sync(s.test)
                exit_state = self.st
        self.st = exit_state
        if s.orelse:
            self.exec_block(s.orelse)
        self.st = join_states([self.st] + breaks)

    def query_loop_sync(self, test):
        """`while not e.query(): ...` ends with the host past e (or the stream)."""
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return
        call = test.operand
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "query"):
            return
        self.host_wait_on(call.func.value, test)

    def exec_with(self, s):
        pushed = 0
        exits = []
        for item in s.items:
            if self.captures_a_graph(item.context_expr):
                # torch.cuda.graph(g) synchronizes the device on entry
                # (torch/cuda/graphs.py, graph.__enter__).
                self.eval(item.context_expr)
                self.host_sync(lambda u: True)
                continue
            managed = self.generator_context(item.context_expr)
            if managed is not None:
                # A @contextmanager of the run: its code before the yield
                # runs here, the rest after the body.
                found, halves = managed
                module, fn, cls = found
                args, kwargs = self.eval_args(item.context_expr)
                self_node = item.context_expr.func.value if isinstance(item.context_expr.func, ast.Attribute) and \
                    isinstance(item.context_expr.func.value, ast.Name) and \
                    item.context_expr.func.value.id == "self" else None
                value = self.inline(halves[0], item.context_expr, args, kwargs, self_node, module=module,
                                    class_name=cls)
                stream = None
                if halves[2] and value:
                    keys = self.stream_keys(value, item.context_expr)
                    stream = next(iter(keys)) if len(keys) == 1 else None
                if halves[2]:
                    self.f.streams.append(stream)
                    pushed += 1
                exits.append((halves[1], item.context_expr, args, kwargs, self_node, module, cls))
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, EMPTY, s)
                continue
            stream = self.stream_context(item.context_expr)
            if isinstance(stream, Evaluated):
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, EMPTY if tensor_atoms(stream.value) else stream.value, s)
            elif stream is not False:
                self.f.streams.append(stream)
                pushed += 1
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, EMPTY, s)
            else:
                value = self.eval(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, EMPTY if tensor_atoms(value) else value, s)
        self.exec_block(s.body)
        for _ in range(pushed):
            self.f.streams.pop()
        for after, node, args, kwargs, self_node, module, cls in reversed(exits):
            if self.st is None:
                break
            self.inline(after, node, args, kwargs, self_node, module=module, class_name=cls)

    def captures_a_graph(self, expr):
        """`torch.cuda.graph(g)`, DeepSpeed's `capture_to_graph(g)`."""
        if not isinstance(expr, ast.Call):
            return False
        name = as_cuda(self.m.canonical(dotted(expr.func) or ""))
        return name in GRAPH_CAPTURE_CONTEXTS or (
            isinstance(expr.func, ast.Attribute) and expr.func.attr == "capture_to_graph")

    def generator_context(self, expr):
        """((module, def, class), (before, after, enters a stream)) when
        `expr` calls a @contextmanager function of the run; else None."""
        if not isinstance(expr, ast.Call):
            return None
        found = self.m.resolve_callee(expr.func, self.f.class_name)
        if found is None or found[1] is None:
            return None
        halves = found[0].context_halves(found[1])
        return (found, halves) if halves is not None else None

    def stream_context(self, expr):
        """The stream a `with` makes current (None: unknown), or False when
        the context manager is not a stream context."""
        if isinstance(expr, ast.Call):
            name = as_cuda(self.m.canonical(dotted(expr.func) or ""))
            # torch.cuda.stream(s), and a device module's: device_handle.stream(s)
            if name in STREAM_CONTEXTS or (isinstance(expr.func, ast.Attribute) and expr.func.attr == "stream"
                                           and not tensor_atoms(self.eval(expr.func.value))):
                arg = expr.args[0] if expr.args else next(
                    (k.value for k in expr.keywords if k.arg == "stream"), None)
                if arg is None or (isinstance(arg, ast.Constant) and arg.value is None) or \
                        self.assumed_none(flag_text(arg)):
                    return self.ctx
                value = self.eval(arg)
                if self.none_field(value):
                    return self.ctx
                keys = self.one_side(self.stream_keys(value, arg))
                if len(keys) == 1 and not self.never_made(keys, value):
                    return next(iter(keys))
                return None
            evaluated = None
            if self.m.resolve_callee(expr.func, self.f.class_name) is not None:
                # A helper of the run that returns a stream context
                # (`return accelerator.stream(s)`, or a nullcontext() when
                # there is no stream).
                evaluated = self.eval(expr)
                contexts = self.one_side({a[1] for a in evaluated if a[0] == "sctx"})
                if contexts:
                    return next(iter(contexts)) if len(contexts) == 1 else None
            if len(expr.args) == 1 and not expr.keywords and \
                    not isinstance(expr.args[0], (ast.Constant, ast.Call)):
                # A context manager given one stream and nothing else
                # (`with stream_context(s):`, `with maybe_stream(s):`, a
                # Callable parameter): taken as making it current, as every such
                # helper in the real trees measured does.
                if self.assumed_none(flag_text(expr.args[0])):
                    if evaluated is None:
                        self.eval(expr)
                    return self.ctx
                arg = self.eval(expr.args[0])
                if self.none_field(arg):
                    # `use_stream(self.stream)` of an instance made with None.
                    if evaluated is None:
                        self.eval(expr)
                    return self.ctx
                keys = {a[1] for a in arg if a[0] == "s"} or \
                    {a[1] for a in arg if a[0] == "p" and "stream" in a[1].rpartition(".")[2].lower()}
                if len(keys) == 1 and len(arg) == 1:
                    if evaluated is None:
                        self.eval(expr)
                    return next(iter(keys))
            return False if evaluated is None else Evaluated(evaluated)
        value = self.eval(expr)
        contexts = {a[1] for a in value if a[0] == "sctx"}
        if contexts:
            # A stream context made earlier; one made on some paths only
            # (`nullcontext() if flag else torch.cuda.stream(s)`) is taken as
            # made: on the other path the work stays on the current stream,
            # and what this path needs ordered is what is checked.
            return next(iter(contexts)) if len(contexts) == 1 else None
        keys = {a[1] for a in value if a[0] == "s"}
        if keys and ("?",) in value:
            # A stream on some paths only (`Stream() if side else
            # nullcontext()`): the path that enters it is the one checked.
            return next(iter(keys)) if len(keys) == 1 else None
        if not keys:
            # `with stream:` on a stream made elsewhere (torch.Stream is a context manager)
            keys = {a[1] for a in value if a[0] == "p" and "stream" in a[1].rpartition(".")[2].lower()}
        if keys:
            return next(iter(keys)) if len(keys) == 1 else None
        return False

    def side_keys(self, value, node):
        """The streams a value may be, the current one dropped when the
        other path names one side stream (`self.side if overlap else
        current_stream()`, where the side stream is an attribute)."""
        keys = self.stream_keys(value, node)
        paths = {a[1] for a in value if a[0] == "p"}
        if keys == {CURRENT} and len(paths) == 1:
            keys = keys | paths
        return self.one_side(keys)

    @staticmethod
    def one_side(keys):
        """A side stream on some paths and the current stream on the others
        (`stream = self.s1 if overlap else current_stream()`): the path
        that enters the side stream is the one checked; on the other the
        work stays on the current stream, in order."""
        if len(keys) == 2 and CURRENT in keys:
            return keys - {CURRENT}
        return keys

    def exec_try(self, s):
        before = self.st.copy()
        # Where the paths that leave through return, break or continue start,
        # to run the finally on them too.
        marks = (len(self.f.returns),) + tuple((len(b), len(c)) for b, c in self.f.loops[-1:])
        self.exec_block(s.body)
        body_out = self.st
        outs = []
        if s.handlers:
            entry = join_states([before, body_out])
            for h in s.handlers:
                self.st = entry.copy()
                if h.name:
                    self.st.names[self.key(h.name)] = EMPTY
                self.exec_block(h.body)
                outs.append(self.st)
        self.st = body_out
        if s.orelse and self.st is not None:
            self.exec_block(s.orelse)
        self.st = join_states([self.st] + outs)
        if s.finalbody:
            after = self.st
            self.finally_on_jumps(s.finalbody, marks)
            self.st = after
            if self.st is not None:
                self.exec_block(s.finalbody)

    def finally_on_jumps(self, body, marks):
        """A return, break or continue inside the try runs the finally first
        (a wait there orders the frees at the return)."""
        def through(state):
            self.st = state
            self.exec_block(body)
            return self.st

        returns = self.f.returns
        for i in range(marks[0], len(returns)):
            state, value, node = returns[i]
            returns[i] = (through(state), value, node)
        self.f.returns = [r for r in returns if r[0] is not None]
        if len(marks) > 1 and self.f.loops:
            breaks, continues = self.f.loops[-1]
            for jumps, start in ((breaks, marks[1][0]), (continues, marks[1][1])):
                moved = [through(st) for st in jumps[start:]]
                del jumps[start:]
                jumps.extend(st for st in moved if st is not None)

    # ----- bindings -------------------------------------------------------
    def assign(self, target, value, stmt):
        t = type(target)
        if t is ast.Name:
            k = self.key(target.id)
            old = self.st.names.get(k)
            if self.flag_split is not None and target.id in self.flag_split[1] and \
                    self.f.func in self.flag_split[0] and isinstance(getattr(stmt, "value", None), ast.Constant):
                # A flag the run splits on (flag_runs): its value, kept.
                self.st.names[k] = frozenset((("bool", bool(stmt.value.value)),))
                return
            if target.id in self.f.globals or target.id in self.f.kept_by_closures:
                # A global outlives the function, and so does what a closure
                # kept elsewhere names (a decorated def, a class body).
                self.escape(value)
            self.st.names[k] = value
            if old:
                self.drop(old - value, stmt, target.id, "rebind")
        elif t in (ast.Tuple, ast.List):
            n = len(target.elts)
            parts = [set() for _ in range(n)]
            for atom in value:
                if atom[0] == "tup" and len(atom[2]) == n:
                    for i, elem in enumerate(atom[2]):
                        parts[i] |= elem
                elif atom[0] == "t":  # split/chunk: views of one storage
                    for p in parts:
                        p.add(atom)
                elif atom[0] == "c":
                    for p in parts:
                        p |= self.st.containers.get(atom, EMPTY)
                elif atom[0] == "p":
                    # `a, b = pair` of something not made here: its fields
                    for i, p in enumerate(parts):
                        p |= self.foreign_value("%s[%d]" % (atom[1], i))
            for elt, part in zip(target.elts, parts):
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                self.assign(elt, frozenset(part), stmt)
        elif t is ast.Attribute:
            base = self.eval(target.value)
            path = dotted(target)
            self.note_store(path, value, target, stmt)
            if tensor_atoms(value) or has_kind(value, "c") or has_kind(value, "tup") or has_kind(value, "fn"):
                self.escape(value)
                self.escape_functions([value])
            if target.attr == "data" and (has_kind(base, "p") or tensor_atoms(base)):
                self.note_module_parts(base, value)
                # x.data = y: x's storage is replaced, the old one goes.
                for atom in tensor_atoms(self.materialize(base)):
                    if isinstance(atom[1], str):
                        self.release_path(atom[1][2:], stmt, "rebind", self.key(path) if path else None)
                base_path = dotted(target.value)
                inner = target.value
                if isinstance(inner, ast.Attribute):
                    bk = self.attr_key(self.eval(inner.value), inner.attr, base_path)
                else:
                    bk = self.key(base_path) if base_path is not None else None
                if bk is not None:
                    self.st.names[bk] = value
                return
            k = self.attr_key(base, target.attr, path)
            fpath = self.foreign_path(base, target.attr)
            old = self.st.names.get(k) if k else None
            uploaded = self.replaced_by_upload(target, stmt)
            if fpath is not None and not uploaded:
                self.release_value(old, stmt, fpath, "rebind", k, value)
            if k is not None:
                self.st.names[k] = value
                if old and not uploaded:
                    # `self.x = None` drops a tensor this analysis made and
                    # stored there, once nothing else holds it.
                    self.drop_stored(old - value, stmt, path or target.attr)
        elif t is ast.Subscript:
            base = self.eval(target.value)
            self.eval(target.slice)
            self.note_store(dotted(target.value), value, target, stmt)
            if has_kind(base, "c"):
                self.container_add(base, value, stmt)
                self.note_entry_key(base, value, target.slice)
            elif tensor_atoms(base) and not self.sequence_value(getattr(stmt, "value", None)) and \
                    not self.container_parameter(target.value) and \
                    (self.f.fid, dotted(target.value)) not in self.container_texts:
                self.write(base, stmt)  # t[i] = v is a copy kernel
                self.use(value, stmt)
                if any(a[0] == "t" and a[1] in self.host_sites for a in self.reachable(value)):
                    # From host memory the copy is a blocking one (into a
                    # device tensor, PyTorch waits for it) or the host's own
                    # (into a host tensor): finished when the statement is.
                    self.host_done(base, stmt)
            else:
                self.escape(value)
                path = self.subscript_path(target, base) if has_kind(base, "p") else None
                if path is not None:
                    # d[k] = other, lst[i] = other: the element it held goes.
                    k = self.key(path)
                    old = self.st.names.get(k)
                    ignore = ()
                    if old is None:
                        old, ignore = self.item_in_round(target, stmt)
                    uploaded = self.replaced_by_upload(target, stmt)
                    if not uploaded:
                        self.release_value(old, stmt, path, "rebind", k, value, ignore)
                    self.st.names[k] = value
                    if old and not uploaded:
                        # `bufs[i] = other` drops a tensor this analysis made
                        # and stored there, as `self.x = other` does.
                        self.drop_stored(old - value, stmt, path)
        elif t is ast.Starred:
            self.assign(target.value, value, stmt)

    def delete(self, target, stmt):
        if isinstance(target, ast.Name):
            k = self.key(target.id)
            old = self.st.names.pop(k, None)
            if old:
                old = self.resolve_foreign(old)
            if old:
                self.drop(old, stmt, target.id, "del")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.delete(elt, stmt)
        elif isinstance(target, ast.Attribute):
            # del self.x: the storage it held goes, unless another name holds it.
            base = self.eval(target.value)
            path = dotted(target)
            k = self.attr_key(base, target.attr, path)
            old = self.st.names.pop(k, None) if k is not None else None
            fpath = self.foreign_path(base, target.attr)
            if fpath is not None:
                self.release_value(old, stmt, fpath, "del", k)
        elif isinstance(target, ast.Subscript):
            base = self.eval(target.value)
            self.eval(target.slice)
            if has_kind(base, "p") and not has_kind(base, "c"):
                path = self.subscript_path(target, base)
                if path is not None:
                    k = self.key(path)
                    self.release_value(self.st.names.pop(k, None), stmt, path, "del", k)
                return
            # del q[0]: the oldest entry of a local queue goes
            if has_kind(base, "c") and isinstance(target.slice, ast.Constant):
                for c in [a for a in base if a[0] == "c"]:
                    taken = self.st.containers.get(c, EMPTY)
                    self.st.containers[c] = EMPTY
                    self.drop(taken, stmt, dotted(target.value) or "entry", "del")
            elif has_kind(base, "c"):
                # del d[k]: one of its entries goes (the entries of a container
                # are one summary here); the others stay.
                name = "%s[?]" % (dotted(target.value) or "entry")
                for c in [a for a in base if a[0] == "c"]:
                    taken = self.st.containers.get(c, EMPTY)
                    self.st.containers[c] = EMPTY
                    self.drop(taken, stmt, name, "del", entry=True)
                    self.st.containers[c] = taken

    def reachable(self, roots):
        """Every atom reachable from `roots` through tuples and containers."""
        seen = set(roots)
        stack = [a for a in seen if a[0] == "tup" or a[0] == "c"]
        if not stack:
            return seen
        containers = self.st.containers
        while stack:
            a = stack.pop()
            inner = [e for elem in a[2] for e in elem] if a[0] == "tup" else containers.get(a, EMPTY)
            for e in inner:
                if e not in seen:
                    seen.add(e)
                    if e[0] == "tup" or e[0] == "c":
                        stack.append(e)
        return seen

    def held(self, discarded=True, after=None):
        """What some binding reaches; without `discarded`, not through a
        name `_` (`_, ev = stash[k]; ...; del stash[k]`: the value is thrown
        away, and the entry going is what frees it). `after`: a statement
        past which the current function's locals that it never reads again
        count as gone (`t = stash[k]; del stash[k]` and t unused: the entry
        going is what frees it, t only outlives it to the return)."""
        roots = []
        f = self.frames[-1]
        prefix = "%d:" % f.fid
        for k, v in self.st.names.items():
            if not discarded and k.rpartition(":")[2] == "_":
                continue
            if after is not None and k.startswith(prefix) and "." not in k and "[" not in k and \
                    not self.m.read_after(f.func, k[len(prefix):], after):
                continue
            roots.extend(v)
        return self.reachable(roots)

    def holds(self, atom):
        """Whether `atom` is in self.held(), without making all of it: a
        name holds it, or a tuple or container a name holds reaches it."""
        compound = set()
        for v in self.st.names.values():
            if atom in v:
                return True
            for a in v:
                if a[0] == "tup" or a[0] == "c":
                    compound.add(a)
        return bool(compound) and atom in self.reachable(compound)

    def drop(self, value, stmt, name, how, entry=False):
        """A binding to `value` went: free what nothing else reaches.
        `entry`: a container's entry was deleted, and a local the function
        no longer reads does not keep it (see held)."""
        gone = [a for a in self.reachable(value) if a[0] == "t"]
        if not gone:
            return
        held = self.held(discarded=how != "del")
        lasting = self.held(discarded=False, after=stmt) if entry and any(a in held for a in gone) else held
        for atom in gone:
            if atom in lasting:
                continue
            buf = self.st.buffers.get(atom)
            if buf is None or buf.escaped or (atom in held and (buf.stored or buf.foreign)):
                continue
            if buf.foreign and not (how == "del" and atom[1].startswith("p:<")):
                # Held by whoever made it: a local name going frees nothing,
                # except `del t` of an unknown call's result.
                continue
            if buf.stored and how != "del":
                del self.st.buffers[atom]
                continue
            self.free(atom, self.site(stmt, "free"), name, how)

    def drop_stored(self, value, stmt, name):
        """An attribute no longer holds `value`: the tensors made here that
        it held, stored nowhere else now, are freed."""
        made = [a for a in self.reachable(value) if a[0] == "t" and isinstance(a[1], int)]
        if not made:
            return
        held = self.held()
        for atom in made:
            buf = self.st.buffers.get(atom)
            if atom in held or buf is None or buf.stored or atom[1] in self.host_sites:
                continue
            self.free(atom, self.site(stmt, "free"), name, "rebind")

    def escape(self, value):
        reached = self.reachable(value)
        if any(a[0] == "fn" for a in reached):
            self.escape_functions([frozenset(a for a in reached if a[0] == "fn")])
        for atom in reached:
            if atom[0] == "t":
                buf = self.st.buffers.get(atom)
                if buf is not None and not buf.kept:
                    buf = buf.copy()
                    buf.escaped = buf.kept = True
                    self.st.buffers[atom] = buf

    def finish_frame(self, frame, fallthrough, value, end_node):
        """The function returns: its locals go, except what it returns."""
        exits = [(st, v, node) for st, v, node in frame.returns]
        if fallthrough is not None:
            exits.append((fallthrough, NONE_VALUE if value is None else value, end_node))
        if self.flag_split is not None:
            exits = [e for e in exits if not self.contradicts_split(e[0], None)]
        prefix = "%d:" % frame.fid
        outs, values = [], []
        for st, v, node in exits:
            self.st = st
            local_roots, keep_roots = [], list(v)
            for a in self.reachable(v):
                # A closure returned keeps what it names of this frame.
                entry = self.functions_seen.get(a[1]) if a[0] == "fn" else None
                if entry is not None and entry[2] == frame.fid:
                    for name in entry[1].subtree(entry[0])[1] - entry[1].bound_names(entry[0]):
                        keep_roots.extend(st.names.get(prefix + name, EMPTY))
            for k, val in st.names.items():
                if k.startswith(prefix):
                    (keep_roots if "." in k else local_roots).extend(val)
                else:
                    keep_roots.extend(val)
            # The tensors only the frame's locals hold, of those it may free
            # (a stage's own locals: its own analysis reports them; but not a
            # tensor an earlier pack hook call kept, saved_tensor_hooks).
            candidates = []
            for atom in self.reachable(local_roots):
                if atom[0] == "t" and not (frame.stage and not str(atom[1]).startswith(SAVED_PREFIX)):
                    buf = st.buffers.get(atom)
                    if not (buf is None or buf.escaped or buf.stored or buf.foreign):
                        candidates.append(atom)
            if candidates:
                keep = self.reachable(keep_roots)
                candidates = [a for a in candidates if a not in keep]
            if candidates:
                names = {}
                for k, val in st.names.items():
                    if k.startswith(prefix) and "." not in k:
                        for a in self.reachable(val):
                            names.setdefault(a, k[len(prefix):])
                for atom in sorted(candidates, key=repr):
                    self.free(atom, self.site(node, "exit"), names.get(atom, "tensor"), "exit")
            for k in [k for k in st.names if k.startswith(prefix)]:
                del st.names[k]
            outs.append(self.st)
            values.append(v)
        self.st = join_states(outs)
        return frozenset().union(*values) if values else NONE_VALUE


    # ----- dataflow transfer (the C++ check's ops) -------------------------
    def alloc(self, node, stream):
        """A new storage from this site; the previous one from the same site,
        if still alive, joins the summary of older ones."""
        site = self.site(node, "alloc")
        new = ("t", site, 0)
        st = self.st
        if new in st.buffers:
            old = ("t", site, 1)
            if self.holds(new):
                moved = st.buffers.pop(new)
                prev = st.buffers.get(old)
                st.buffers[old] = moved if prev is None else prev.join(moved)
                self.rename(new, old)
            else:
                del st.buffers[new]
        st.buffers[new] = Buffer(alloc=frozenset((stream,)) if stream is not None else frozenset())
        return frozenset((new,))

    def rename(self, old, new):
        def sub(value):
            # Only `old` itself, or a tuple that may hold it, changes.
            if old not in value and not any(a[0] == "tup" for a in value):
                return value
            out = set()
            for a in value:
                if a == old:
                    out.add(new)
                elif a[0] == "tup":
                    out.add(("tup", a[1], tuple(sub(e) for e in a[2])))
                else:
                    out.add(a)
            return frozenset(out)

        st = self.st
        for k, v in list(st.names.items()):
            st.names[k] = sub(v)
        for k, v in list(st.containers.items()):
            st.containers[k] = sub(v)

    def use(self, value, node, ready=True, kind="use"):
        """Work enqueued on the current stream touches these tensors (reads
        them, or an unknown direction). `ready`: check that their known
        writes on other streams are ordered before it."""
        stream = self.ctx
        if stream is None:
            return
        self.enqueued(stream, node)
        if stream == CURRENT and self.side_made and any(a[0] == "c" or a[0] == "tup" for a in value):
            # What a list or tuple holds that a side stream's pool made is
            # touched too (`f([c.x for c in ctxs])`, the contexts a side
            # stream's collective handed back).
            inner = self.reachable(value)
            if any(a[0] == "p" and self.made_on_side(a[1]) for a in inner):
                value = frozenset(inner)
        if stream != CURRENT or (self.side_made and any(a[0] == "p" and self.made_on_side(a[1]) for a in value)) \
                or (self.field_made and any(a[0] == "p" and a[1] in self.field_made for a in value)) \
                or (any(a[0] == "p" and a[1].startswith("self.") for a in value) and
                    any(a[0] == "p" and self.attribute_facts(a[1]) for a in value)):
            value = self.materialize(value, evidence=False)
        site, atoms = self.touched(value, node, stream, kind)
        for atom in atoms:
            buf = self.st.buffers.get(atom)
            if buf is None:
                continue
            if atom[1] in self.host_sites and (id(node), atom) not in self.copy_sources:
                # An operator on host memory runs on the host: it reads what
                # the copies wrote, and enqueues nothing. What an unknown
                # call does with it (an optimizer made around it) is not
                # known to read it.
                if id(node) not in self.unknown_use_nodes:
                    self.host_read(frozenset((atom,)), node)
                continue
            if ready and buf.writes and id(node) not in self.uninlined and id(node) not in self.harmless_calls:
                for wsite, w in buf.writes.items():
                    if wsite != site and not w.ordered_on(stream):
                        if wsite in self.made_sites and (id(node), atom) in self.copy_sources and \
                                id(node) not in self.copies_to_host:
                            # A copy to the device of a tensor not made here:
                            # its source may be host memory the host filled.
                            continue
                        if isinstance(self.made_sites.get(wsite), tuple) and id(node) in self.unknown_use_nodes \
                                and isinstance(atom[1], str) and \
                                self.attribute_of(atom[1][2:]) not in self.object_facts().tensors:
                            # What an object keeps and only unknown calls made
                            # (a context object), handed to an unknown call:
                            # not known to be read by a kernel there.
                            continue
                        self.race("ready", atom, wsite, w.stream, site, stream)
            buf = buf.copy()
            buf.uses[site] = self.fresh_use(stream)
            self.st.buffers[atom] = buf

    def write(self, value, node):
        """Work enqueued on the current stream writes these tensors: every
        earlier use on another stream must be ordered before it, and later
        uses on other streams must wait for it."""
        stream = self.ctx
        if stream is None:
            return
        self.enqueued(stream, node)
        value = self.materialize(value)
        site, atoms = self.touched(value, node, stream)
        for atom in atoms:
            buf = self.st.buffers.get(atom)
            if buf is None:
                continue
            for usite, u in buf.uses.items():
                if usite != site and not u.ordered_on(stream):
                    self.race("war", atom, usite, u.stream, site, stream)
            buf = buf.copy()
            buf.uses[site] = self.fresh_use(stream)
            buf.writes[site] = self.fresh_use(stream)
            self.st.buffers[atom] = buf

    def host_copy_sync(self, values, node):
        """`float(t)`, `print(t)` of a device tensor made here: a copy to the
        host on the current stream that the host waits for, as `t.item()`.
        Not of a value not made here (a parameter may be a number:
        `float(norm_type)` waits for nothing)."""
        device = []
        for v in values:
            for atom in tensor_atoms(self.materialize(v)):
                buf = self.st.buffers.get(atom)
                if buf is not None and buf.foreign == 0 and atom[1] not in self.host_sites:
                    device.append(atom)
        if not device:
            return
        self.use(frozenset(device), node)
        self.host_waits_for_current()

    def host_waits_for_current(self):
        """The host waits for the stream current here (`.item()`, a
        blocking copy to the host): what it did before is done."""
        ctx = self.ctx
        if ctx is not None:
            self.host_sync(lambda u: u.ordered_on(ctx))

    def host_read(self, value, node):
        """The host reads these tensors' elements (`.item()`, formatting,
        `assert`, `float(t)`): those in host memory must have every device
        write to them finished, by a synchronization of the host with the
        writing stream (its synchronize, an event's, the device's)."""
        if not value:
            return
        for atom in self.reachable(value):
            if atom[0] != "t" or atom[1] not in self.host_sites:
                continue
            buf = self.st.buffers.get(atom)
            if buf is None:
                continue
            site = None
            for wsite, w in buf.writes.items():
                if w.host or w.stream in (ANY_STREAM, None):
                    continue
                if site is None:
                    site = self.site(node, "use")
                self.race("host", atom, wsite, w.stream, site, None)

    def touched(self, value, node, stream, kind="use"):
        """(use site, tensor atoms) of work on `stream` touching `value`; no
        site when it touches no tensor."""
        atoms = [a for a in self.reachable(value) if a[0] == "t"]
        if not atoms:
            return None, atoms
        site = self.site(node, kind)
        if stream != CURRENT:
            self.side_use_sites.add(site)
        return site, atoms

    def allocated_on_stream(self, value, node):
        """An uninitialized device allocation: taken as a use on the stream
        whose pool gave it (its earlier work may still use the block), so a
        write on another stream before it waits is reported (report.py words
        it as an allocation)."""
        site = self.site(node, "alloc")
        self.allocation_sites.add(site)
        for atom in tensor_atoms(value):
            buf = self.st.buffers.get(atom)
            if buf is not None:
                buf = buf.copy()
                buf.uses[site] = self.fresh_use(self.ctx)
                self.st.buffers[atom] = buf

    def host_done(self, value, node):
        """The write this call made to these tensors is finished when it
        returns (a blocking copy into host memory)."""
        site = self.site(node, "use")
        for atom in tensor_atoms(value):
            buf = self.st.buffers.get(atom)
            if buf is not None and site in buf.writes:
                buf = buf.copy()
                buf.writes[site] = buf.writes[site]._replace(host=True)
                self.st.buffers[atom] = buf

    def produced(self, value, node, stream=None):
        """An operator's new output: written by that operator's kernel on
        the current stream (or on `stream`)."""
        stream = stream or self.ctx
        if stream is None:
            return value
        self.enqueued(stream, node)
        site = self.site(node, "use")
        for atom in tensor_atoms(value):
            buf = self.st.buffers.get(atom)
            if buf is not None:
                buf = buf.copy()  # buffers are shared between states (State.copy)
                buf.writes[site] = self.fresh_use(stream)
                buf.uses[site] = self.fresh_use(stream)  # a later write on another stream must wait for it too
                self.st.buffers[atom] = buf
        return value


    def call_label(self, path):
        """How reports name an unknown call's result `<f()>`: by the call's
        text."""
        root = call_root(path)
        if root != path:
            # A part of the result (`<r.wait()>[0].features`), by the local
            # name that holds the result when one does (`net.module.weight`).
            held = self.local_holding(("t", "p:" + root, 0), plain=True)
            return (held or self.call_label(root)) + path[len(root):]
        return self.call_labels.get(path, path.strip("<>"))

    def local_holding(self, atom, plain=False):
        """The analyzed function's local name that holds a buffer not made
        here (or held it when the function returned), or None; `plain`: a
        name, not an element of one."""
        probe = ("p", atom[1][2:])
        first = "%d:" % self.frames[0].fid
        for k, v in self.st.names.items():
            if (atom in v or probe in v) and k.startswith(first) and "." not in k and not (plain and "[" in k):
                return k.partition(":")[2]
        return self.exit_names.get(atom) or self.exit_names.get(probe)

    def buffer_name(self, atom):
        part = self.part_names.get(atom)
        if part is not None:
            return part
        if isinstance(atom[1], str) and not atom[1].startswith("p:<"):
            if "[" in atom[1] and "[*]" not in atom[1]:
                # An element taken out of a container by a key the check
                # does not follow (`data = ctx.inputs.pop(name)`): by the
                # local name holding it, when one does.
                held = self.local_holding(atom, plain=True)
                if held is not None:
                    return held
            return atom[1][2:]
        if isinstance(atom[1], str):
            # An unknown call's result: by the local name holding it.
            held = self.local_holding(atom)
            return held if held is not None else self.call_label(atom[1][2:])
        first = "%d:" % self.frames[0].fid
        for k, v in self.st.names.items():
            if atom in v and k.startswith(first):
                return k.partition(":")[2]
        for k, v in self.st.names.items():
            if atom in v and not k.startswith("g:"):
                return k.partition(":")[2]
        # An element of a list made here (`parts.append(x * 2)`): by the list.
        for c, held in self.st.containers.items():
            if atom in held:
                for k, v in self.st.names.items():
                    if c in v and k.startswith(first):
                        return k.partition(":")[2] + "[*]"
        return "tensor"


    @staticmethod
    def sequence_value(node):
        """A tuple or a list written out (`tuple(...)`, `[...]`, a
        comprehension): what `batch[:] = ...` stores in a sequence object's
        slots, not a copy into a tensor."""
        if isinstance(node, (ast.Tuple, ast.List, ast.ListComp, ast.GeneratorExp)):
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list")

    def note_entry_key(self, containers, value, key_node):
        """`d[k] = v`: v's newest tensors were stored last under the key
        local k names (for `k in d` tests, see absent_entry); under any
        other key, under no known one."""
        key = self.key(key_node.id) if isinstance(key_node, ast.Name) else None
        for c in containers:
            if c[0] != "c":
                continue
            for a in self.reachable(value):
                if a[0] == "t" and a[2] == 0:
                    self.entry_keys[(c, a)] = key

    def absent_entry(self, st, test, truth):
        """On the branch where `k in d` says d holds nothing under k (d a
        container made here), the entries stored under that key are not
        there: what only they held was not kept (`if k in stash: ...`
        handles the entry a previous call may have dropped already)."""
        if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.left, ast.Name) or \
                not isinstance(test.ops[0], (ast.In, ast.NotIn)) or isinstance(test.ops[0], ast.In) == truth:
            return st
        saved, self.st = self.st, st
        try:
            held = self.eval(test.comparators[0])
        finally:
            self.st = saved
        key = self.key(test.left.id)
        changed = False
        for c in held:
            if c[0] != "c" or not st.containers.get(c):
                continue
            kept = []
            for m in st.containers[c]:
                mine = [a for a in self.reachable(frozenset((m,))) if a[0] == "t"]
                if mine and all(a[2] == 0 and self.entry_keys.get((c, a)) == key for a in mine):
                    changed = True
                    continue
                kept.append(m)
            st.containers[c] = frozenset(kept)
        if changed:
            self.forget_unreachable(st)
        return st

    def container_add(self, container, value, node):
        for c in container:
            if c[0] == "c":
                self.st.containers[c] = self.st.containers.get(c, EMPTY) | value


    # ----- expressions ----------------------------------------------------
    def elements(self, value):
        """What iterating over a value yields."""
        out = set()
        for a in value:
            kind = a[0]
            if kind == "c":
                out |= self.st.containers.get(a, EMPTY)
            elif kind == "tup":
                for e in a[2]:
                    out |= e
            elif kind == "t" and isinstance(a[1], str) and a[1] != "p:" and \
                    self.st.buffers.get(a) is not None and self.st.buffers[a].foreign == FOREIGN_UNKNOWN:
                # Not known to be a tensor: a list of them, most likely.
                out |= self.foreign_value(a[1][2:] + "[*]")
            elif kind == "t":
                out.add(a)  # rows of a tensor: views
            elif kind == "p":
                out |= self.foreign_value(a[1] + "[*]")  # `for p in params`
                # and what this function appended to it (call_method)
                out |= self.st.names.get(self.key(a[1] + "[+]"), EMPTY)
        return frozenset(out)

    def eval(self, node, hint=None):
        t = type(node)
        if t is ast.Name:
            v = self.st.names.get(self.key(node.id))
            if v is not None:
                return self.resolve_foreign(v)
            fn = self.m.functions.get(node.id)
            if fn is not None:
                return self.function_value(fn, self.m, outer=False)
            return self.foreign_value(self.m.canonical(node.id))
        if t is ast.Constant:
            return NONE_VALUE if node.value is None else EMPTY
        if t is ast.Attribute:
            return self.eval_attribute(node)
        if t is ast.Call:
            return self.eval_call(node, hint)
        if t is ast.Subscript:
            base = self.eval(node.value)
            self.eval(node.slice)
            if len(base) == 1 and next(iter(base))[0] == "p":
                path = self.subscript_path(node, base)
                if path is not None:
                    # An element of a container not made here (`bufs[i]`, `streams[i]`).
                    v = self.st.names.get(self.key(path))
                    return v if v is not None else self.foreign_value(path)
            out = set(tensor_atoms(base))  # slicing: a view
            idx = node.slice.value if isinstance(node.slice, ast.Constant) else None
            for a in base:
                if a[0] == "tup":
                    if isinstance(idx, int) and -len(a[2]) <= idx < len(a[2]):
                        out |= a[2][idx]
                    else:
                        for e in a[2]:
                            out |= e
                elif a[0] == "c":
                    out |= self.st.containers.get(a, EMPTY)
            return frozenset(out)
        if t is ast.BinOp:
            return self.binop(self.eval(node.left), self.eval(node.right), node)
        if t is ast.UnaryOp:
            v = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return EMPTY
            return self.binop(v, EMPTY, node)
        if t is ast.BoolOp:
            out = EMPTY
            for v in node.values:
                out = out | self.eval(v)
            return out
        if t is ast.Compare:
            vals = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return EMPTY
            if any(tensor_atoms(v) for v in vals):
                return self.binop(frozenset().union(*vals), EMPTY, node)
            return EMPTY
        if t is ast.IfExp:
            self.eval(node.test)
            assumed = self.assumed(node.test)
            if assumed is not None:
                return self.eval(node.body if assumed else node.orelse, hint)
            body, orelse = self.eval(node.body, hint), self.eval(node.orelse, hint)
            if has_kind(body, "s") != has_kind(orelse, "s") or has_kind(body, "sctx") != has_kind(orelse, "sctx"):
                # `Stream() if side else nullcontext()`: maybe a stream
                return body | orelse | MAYBE_STREAM
            return body | orelse
        if t is ast.Tuple:
            elems = tuple(flatten_nested(self.eval(e.value if isinstance(e, ast.Starred) else e))
                          for e in node.elts)
            return frozenset((("tup", None, elems),))
        if t in (ast.List, ast.Set):
            content = EMPTY
            for e in node.elts:
                content = content | self.eval(e.value if isinstance(e, ast.Starred) else e)
            return self.new_container(node, content)
        if t is ast.Dict:
            content = EMPTY
            for k, v in zip(node.keys, node.values):
                if k is not None:
                    self.eval(k)
                content = content | self.eval(v)
            return self.new_container(node, content)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self.eval_comprehension(node)
        if t is ast.NamedExpr:
            v = self.eval(node.value)
            self.assign(node.target, v, node)
            return v
        if t is ast.Starred:
            return self.eval(node.value)
        if t is ast.Lambda:
            # Followed where it is called; what it names stays alive only if
            # it is kept (a hook, a callback: escape_functions).
            return self.function_value(node)
        if t in (ast.Await, ast.Yield, ast.YieldFrom):
            if node.value is not None:
                v = self.eval(node.value)
                if t is not ast.Await:
                    self.escape(v)
                return v if t is ast.Await else EMPTY
            return EMPTY
        if t is ast.JoinedStr:
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    self.host_read(self.eval(v.value), v)  # formatting reads the elements
            return EMPTY
        if t is ast.Slice:
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    self.eval(part)
            return EMPTY
        return EMPTY

    def new_container(self, node, content):
        c = ("c", self.site(node, "container"))
        self.st.containers[c] = content
        return frozenset((c,))

    def eval_comprehension(self, node):
        saved = dict(self.st.names)
        for gen in node.generators:
            elems = self.elements(self.eval(gen.iter))
            self.assign_quiet(gen.target, elems)
            for cond in gen.ifs:
                self.eval(cond)
        if isinstance(node, ast.DictComp):
            self.eval(node.key)
            content = self.eval(node.value)
        else:
            content = self.eval(node.elt)
        # The comprehension's own names do not outlive it.
        for k in list(self.st.names):
            if k not in saved:
                del self.st.names[k]
        for k, v in saved.items():
            self.st.names[k] = v
        if isinstance(node, ast.GeneratorExp):
            return frozenset((("tup", None, (content,)),))
        return self.new_container(node, content)

    def assign_quiet(self, target, value):
        if isinstance(target, ast.Name):
            self.st.names[self.key(target.id)] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.assign_quiet(elt.value if isinstance(elt, ast.Starred) else elt, value)

    def binop(self, left, right, node):
        operands = left | right
        typed = self.typed_parameters(operands)
        if typed:
            # `x * 2` of a parameter annotated as a tensor: a kernel reading x.
            operands = (operands - typed) | self.materialize(typed)
        if any(a[0] == "p" and a[1].startswith("<") for a in operands) and \
                any(a[0] == "p" and a[1].startswith("<") and self.made_write(a[1]) for a in operands):
            # Arithmetic on an unknown call's result: a tensor the call made.
            operands = frozenset(a if not (a[0] == "p" and a[1].startswith("<")) else
                                 next(iter(self.materialize(frozenset((a,))))) for a in operands)
        if not tensor_atoms(operands) and self.ctx_is_side() and has_kind(operands, "p") and \
                isinstance(node, ast.BinOp) and not has_kind(operands, "c"):
            # Arithmetic on what the caller handed in, under a side stream:
            # a kernel there, if it is a tensor (as an unknown call's
            # argument).
            self.use(operands, node)
            operands = self.resolve_foreign(operands)
            if tensor_atoms(operands):
                return self.produced(self.alloc(node, self.ctx), node)
        if not tensor_atoms(operands):
            if has_kind(operands, "c") and isinstance(node, ast.BinOp):
                # [None] * depth, a + b: a list of what they hold
                return self.new_container(node, self.elements(operands))
            return EMPTY
        self.use(operands, node)
        # A new tensor, written by the operator's kernel.
        return self.produced(self.alloc(node, self.ctx), node)

    def attr_key(self, base, attr, path):
        """The binding key of `base.attr`: an attribute of something not made
        here is the same attribute in every frame (`ctx.saved` set in forward
        and read in backward, `obj.buf` set by a helper); others are keyed as
        names are."""
        if len(base) == 1:
            a = next(iter(base))
            if a[0] == "p" and not self.not_a_tensor(a[1] + ".x"):
                return "P:%s.%s" % (a[1], attr)
            if a[0] == "t" and isinstance(a[1], str):
                return "P:%s.%s" % (a[1][2:], attr)
        return self.key(path) if path is not None else None

    def eval_attribute(self, node):
        path = dotted(node)
        base = self.eval(node.value)
        if NONE in base and len(base) > 1:
            # `ctx = x if ... else None`: an attribute of the x it is, when it
            # is something.
            base = base - NONE_VALUE
        k = self.attr_key(base, node.attr, path)
        if k is not None:
            v = self.st.names.get(k)
            if v is not None:
                return self.resolve_foreign(v)
        prop = self.own_property(node)
        if prop is not None:
            module, callee, cls = prop
            result = self.inline(callee, node, [], {}, node.value, module=module, class_name=cls)
            if result is not None:
                return result
        out = set()
        for a in base:
            if a[0] == "tup" and a[1] is not None and node.attr in a[1]:
                out |= a[2][a[1].index(node.attr)]
        if node.attr in VIEW_ATTRIBUTES:
            out.update(tensor_atoms(base))
            if node.attr == "data" and len(base) == 1 and next(iter(base))[0] == "p":
                # `p.grad.data` of something not made here: the same storage
                # as `p.grad`, not a tensor of its own.
                out.update(base)
        if out:
            return frozenset(out)
        if len(base) == 1:
            a = next(iter(base))
            # An attribute of something not made here, named by its path
            # (`p.grad`, `self.stash`, `params[*].grad`).
            if a[0] == "p":
                return self.foreign_value(a[1] + "." + node.attr)
            if a[0] == "t" and isinstance(a[1], str) and (node.attr in TENSOR_FIELDS or (
                    self.st.buffers.get(a) is not None and self.st.buffers[a].foreign == FOREIGN_UNKNOWN)):
                # A tensor's .grad; or a field of something only handed to
                # unknown calls so far, which may be no tensor at all (a
                # context object: `ctx.forward_ctxs`).
                return self.foreign_value(a[1][2:] + "." + node.attr)
        if len(base) == 1 and next(iter(base))[0] == "obj":
            # An attribute of an instance made here: something not made here
            # (set by its __init__), named by the instance's class and site.
            a = next(iter(base))
            return self.foreign_value("~%s.%s" % (a[3], node.attr))
        if tensor_atoms(base) or has_kind(base, "tup") or has_kind(base, "c") or has_kind(base, "obj"):
            return EMPTY
        if path is not None:
            return self.foreign_value(self.m.canonical(path))
        return EMPTY

    def own_property(self, node):
        """`self.x` where x is a property of the class whose body only
        returns a value (`return self.device.current_stream()`): (module,
        def, class) to interpret in place, or None."""
        if not (isinstance(node.value, ast.Name) and node.value.id == "self" and self.f.class_name is not None
                and self.key("self") not in self.st.names):
            return None
        found = self.m.method(self.f.class_name, node.attr)
        if found is None:
            return None
        fn = found[1]
        body = [b for b in fn.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None or not any(
                dotted(d) in ("property", "functools.cached_property", "cached_property") for d in fn.decorator_list):
            return None
        return found

    # ----- what the function did not make ---------------------------------
    def foreign_value(self, path):
        """Something not made here, named by its path: a parameter, an
        attribute, a container's element, an unknown call's result. Once
        used as a tensor it is a buffer of its own (materialize)."""
        atom = ("t", "p:" + path, 0)
        buf = self.st.buffers.get(atom)
        if buf is not None:
            made = self.field_made.get(path)
            waited = self.st.names.get(CURRENT_WAITED)
            if made is not None and waited is not None:
                if buf.alloc == frozenset((CURRENT,)):
                    # Read first before the hand-over, taken as the current
                    # stream's; read again after the current stream waited
                    # for the stream that fills its container: made there
                    # (materialize).
                    buf = buf.copy()
                    buf.alloc = frozenset((made,))
                    self.st.buffers[atom] = buf
                if self.f.depth == 0 or self.f.waited_current:
                    self.read_in_helpers.discard(path)
            return frozenset((atom,))
        if path.endswith("]") and path not in self.field_made:
            field = FILLED_FIELD.search(path)
            program = self.root.program
            if field is not None and program is not None and field.group(1) in program.side_filled_fields():
                # An element of a container some function fills while a
                # side stream is current: made from that stream's pool.
                self.field_made[path] = "@" + field.group(1)
        return frozenset((("p", path),))

    def opaque(self, path):
        """Whether `path` is an unknown call's result given arguments, or a
        part of one (`<f(x)>[0]`, `<f(x)>.out`): it may be an argument or a
        view of one, and is no tensor of its own here. What a call on it
        returns (`<r.wait()>` for each `r` in it) is a result of its own."""
        if not self.opaque_results or not path.startswith("<"):
            return False
        return call_root(path) in self.opaque_results

    def made_on_side(self, path):
        """The side stream that was current when the unknown call `path`
        names, or the one it is reached from (`<r.wait()>[0].features`),
        made it: its memory comes from that stream's pool. None otherwise."""
        side = self.side_made
        if not side:
            return None
        found = side.get(path)
        if found is None and path.startswith("<"):
            found = side.get(call_root(path))
        return found

    def resolve_foreign(self, value):
        """A binding to something not made here, once it is a buffer."""
        for a in value:
            if a[0] == "p" and ("t", "p:" + a[1], 0) in self.st.buffers:
                return frozenset(("t", "p:" + a[1], 0) if a[0] == "p" and ("t", "p:" + a[1], 0) in
                                 self.st.buffers else a for a in value)
        return value

    def call_result(self, node):
        """What a call this analysis does not know returns: named by the
        call's text, and a new object each time it runs (a buffer left from
        an earlier round of a loop is not this one)."""
        name = dotted(node.func)
        path = "<%s()>" % (name or "call@%d" % node.lineno)
        if name is None:
            # Named in reports by its text (`reqs[k].wait()`), kept apart
            # from the path, which must not hold a '.' or '['.
            text = ast.unparse(node.func)
            self.call_labels[path] = (text if len(text) <= 80 else text[:38] + "..." + text[-38:]) + "()"
        self.st.buffers.pop(("t", "p:" + path, 0), None)
        if getattr(node.func, "attr", None) in MODULE_TENSOR_ACCESSORS and not node.args:
            # `model.parameters()`: the module's own tensors, made before
            # and elsewhere, not by this call on the stream current for it.
            self.side_made.pop(path, None)
            return frozenset((("p", path),))
        if self.ctx is not None:
            # If it is a tensor, the call's work wrote it, on the stream
            # current for the call.
            site = self.site(node, "use")
            self.made_sites[site] = path
            self.st.made[path] = (site, new_use(self.ctx))
        if self.ctx not in (CURRENT, None):
            # Made while a side stream was current: its memory, if it is a
            # tensor or holds some, comes from that stream's pool.
            self.side_made[path] = self.ctx
        else:
            self.side_made.pop(path, None)
        return frozenset((("p", path),))

    def fresh_elements(self, elems, loop):
        """Each round of `for x in xs` (xs not made here) binds another
        element: the uses and writes an earlier round made are not its (those
        made before the loop, by an earlier loop over the same elements,
        are)."""
        lo, hi = loop.lineno, loop.end_lineno or loop.lineno
        nodes = self.site_nodes

        def inside(site):
            n = nodes[site][0]
            return lo <= getattr(n, "lineno", 0) <= hi

        for a in elems:
            path = path_of(a)
            if path is None or "[*]" not in path:
                continue
            prefix = "p:" + path
            for atom, buf in list(self.st.buffers.items()):
                if not (isinstance(atom[1], str) and atom[1].startswith(prefix)):
                    continue
                if any(inside(x) for x in buf.uses) or any(inside(x) for x in buf.writes):
                    nb = buf.copy()
                    nb.uses = {k: u for k, u in buf.uses.items() if not inside(k)}
                    nb.writes = {k: u for k, u in buf.writes.items() if not inside(k)}
                    self.st.buffers[atom] = nb

    def materialize(self, value, evidence=True):
        """The tensors among what was not made here: each path becomes a
        buffer allocated before the function started, on the stream current
        then (CURRENT), and held by others too. `evidence`: the code treats it
        as a tensor (a tensor method, an operator's argument); without it (an
        unknown call's argument on a side stream) its uses are kept, but no
        release of its path frees it."""
        if not any(a[0] == "p" or (evidence and a[0] == "t" and isinstance(a[1], str)) for a in value):
            return value
        kind = FOREIGN_TENSOR if evidence else FOREIGN_UNKNOWN
        out = set()
        buffers = self.st.buffers
        for a in value:
            if a[0] == "p" and evidence and self.opaque(a[1]) and not self.not_a_tensor(a[1], evidence):
                # Used as a tensor (`out.clone()`, `out.zero_()`), though it
                # may be one of the call's arguments: a tensor whose
                # allocation stream is not known.
                atom = ("t", "p:" + a[1], 0)
                if atom not in buffers:
                    # Whichever it is, the call's work wrote it on the
                    # stream current for the call (`with stream(s): y =
                    # model(x)`): readers on other streams must wait.
                    made = self.made_write(a[1])
                    buffers[atom] = Buffer(alloc=frozenset((ANY_STREAM,)), foreign=FOREIGN_TENSOR,
                                           writes={made[0]: made[1]} if made is not None else None)
                out.add(atom)
            elif a[0] == "p" and not self.not_a_tensor(a[1], evidence) and not self.opaque(a[1]):
                atom = ("t", "p:" + a[1], 0)
                buf = buffers.get(atom)
                if buf is None:
                    kept = self.attribute_facts(a[1])
                    if kept:
                        # Made on the object's streams by another method.
                        writes = {}
                        for stream in self.object_facts().writers.get(self.attribute_of(a[1]), ()):
                            made = self.st.made.get(("entry", stream))
                            if made is not None:
                                writes[made[0]] = made[1]
                        # What other methods stored there were tensors.
                        buffers[atom] = Buffer(alloc=kept, foreign=FOREIGN_TENSOR, writes=writes)
                    else:
                        made = self.made_write(a[1])
                        # An element of a container filled under a side
                        # stream, read where the current stream has waited
                        # for another stream (the hand-over): made there.
                        alloc = self.made_on_side(a[1]) or (
                            self.field_made.get(a[1], CURRENT) if CURRENT_WAITED in self.st.names else CURRENT)
                        if self.f.depth > 0 and not self.f.waited_current:
                            # Read in a helper that did not wait for it itself.
                            self.read_in_helpers.add(a[1])
                        buffers[atom] = Buffer(alloc=frozenset((alloc,)),
                                               foreign=kind,
                                               writes={made[0]: made[1]} if made is not None else None)
                elif buf.foreign < kind:
                    buf = buf.copy()
                    buf.foreign = kind
                    buffers[atom] = buf
                out.add(atom)
            elif evidence and a[0] == "t" and isinstance(a[1], str):
                buf = buffers.get(a)
                if buf is not None and buf.foreign < kind:
                    buf = buf.copy()
                    buf.foreign = kind
                    buffers[a] = buf
                out.add(a)
            else:
                out.add(a)
        return frozenset(out)

    def made_write(self, path):
        """(site, Use) of the write that made what `path` names, or None:
        the unknown call whose result it is or is reached from, else what
        the caller wrote before the function started."""
        made = self.st.made
        if not made:
            return None
        if path.startswith("<"):
            return made.get(call_root(path))
        return made.get(ENTRY)

    def not_a_tensor(self, path, evidence=False):
        """Whether what `path` names is no tensor; `evidence`: the code uses
        it as one, which a name of sizes (SIZES_WORDS) yields to."""
        root = path.partition(".")[0].partition("[")[0]
        last = path.rpartition(".")[2].strip("<>()").rpartition(".")[2].lower()
        return root in ("self", "cls") and "." not in path or (root == path and root in self.scalar_parameters()) or (
            "." in path and self.m.is_module_name(path)) or path in self.m.aliases or \
            any(word in last for word in NOT_TENSOR_WORDS) or ("." in path and last in TENSOR_METADATA) or \
            (not evidence and any(word in last for word in SIZES_WORDS))

    def scalar_parameters(self):
        """Parameters of the analyzed def that are no tensor by their
        annotation (`quantize: bool`, `n: Optional[int]`) or their default
        (`flag=False`, `n=4`, `mode="sum"`)."""
        found = getattr(self.func, "_xsc_scalars", None)
        if found is None:
            found = set()
            args = getattr(self.func, "args", None)
            if args is not None:
                positional = args.posonlyargs + args.args
                defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
                pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
                for a, default in pairs:
                    if a.annotation is not None and scalar_annotation(a.annotation) or \
                            isinstance(default, ast.Constant) and default.value is not None and \
                            not isinstance(default.value, type(Ellipsis)):
                        found.add(a.arg)
            self.func._xsc_scalars = found
        return found

    def tensor_parameters(self):
        """Parameters of the analyzed def annotated as a tensor (`x:
        torch.Tensor`, `w: nn.Parameter`): arithmetic on them is a kernel."""
        found = getattr(self.func, "_xsc_tensors", None)
        if found is None:
            found = set()
            args = getattr(self.func, "args", None)
            if args is not None:
                for a in args.posonlyargs + args.args + args.kwonlyargs:
                    if a.annotation is not None and tensor_annotation(a.annotation):
                        found.add(a.arg)
            self.func._xsc_tensors = found
        return found

    def typed_parameters(self, value, objects=True):
        """The parameters among `value` annotated as a tensor, and with
        `objects` the attributes of self (or their elements) where the
        class's methods store tensors operators made (`x * self.buf`, with
        `self.buf` made under a side stream in `stage` and read back in
        `consume`). Not for their methods: such facts do not tell an
        attribute that holds tensors from one whose elements do
        (`self.batches.append(b)`), nor a tensor from a batch object with
        tensor-like methods (`batch.to(...)`, `batch.record_stream(s)`)."""
        return frozenset(a for a in value if a[0] == "p" and
                         (a[1] in self.tensor_parameters() or (objects and self.object_tensor(a[1]))))

    def object_tensor(self, path):
        """`self.x` or `self.x[k]` where the class's methods store tensors
        operators made (ObjectFacts.tensors)."""
        if not path.startswith("self.") or self.collect is not None:
            return False
        attr = self.attribute_of(path)
        tail = path[5 + len(attr):]
        if tail and (not tail.startswith("[") or "." in tail):
            return False
        return attr in self.object_facts().tensors and bool(self.attribute_facts(path))

    def container_parameter(self, node):
        """A parameter the def never rebinds whose annotation names a
        container (`batch: List[Tensor]`, `Tuple`, `Dict`, ...) or a class
        the run defines that derives from no tensor type (`batch: Batch`):
        `batch[:] = ...` fills its slots, it copies into no tensor."""
        if not isinstance(node, ast.Name):
            return False
        func = self.f.func if self.frames else self.func
        found = getattr(func, "_xsc_containers", None)
        if found is None:
            found = set()
            args = getattr(func, "args", None)
            if args is not None:
                stores = self.m.names_table(func)["stores"]
                for a in args.posonlyargs + args.args + args.kwonlyargs:
                    if a.arg not in stores and a.annotation is not None and \
                            self.container_annotation(a.annotation):
                        found.add(a.arg)
            func._xsc_containers = found
        return node.id in found

    def container_annotation(self, ann):
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return False
        if isinstance(ann, ast.Subscript):
            ann = ann.value
        name = dotted(ann)
        if not name:
            return False
        if name.rpartition(".")[2] in CONTAINER_TYPES:
            return True
        if names_tensor_type(name):
            return False
        found = self.m.lookup_function(name)
        if found is None or found[1] is not None:
            return False
        node = found[0].class_nodes.get(found[2])
        return node is not None and not any(names_tensor_type(dotted(b) or "") for b in node.bases)

    def release_path(self, path, stmt, how, key=None, keep=False, ignore=()):
        """`self.x = None`, `del self.x`, `p.grad = None`, `d[k] = other`,
        `d.pop(k)`: the storage that path held goes, unless another name
        (but those in `ignore`) still holds it. `keep`: it goes on some
        paths only."""
        if path.startswith("~"):
            return  # an instance's attribute: instances bound to one name are one here
        atom = ("t", "p:" + path, 0)
        buf = self.st.buffers.get(atom)
        if buf is None or buf.foreign != FOREIGN_TENSOR:
            return
        probe = ("p", path)
        for k, v in self.st.names.items():
            if k != key and k not in ignore and (atom in v or probe in v):
                return  # `g = p.grad; p.grad = None`: g still holds it
        self.free(atom, self.site(stmt, "free"), path, how, keep=keep)

    def item_in_round(self, target, stmt):
        """`for k, v in d.items(): ... d[k] = other`: the entry replaced is
        v (its value, and v's binding key when the round reads v no more,
        so that v does not keep it: it is bound again before it is read);
        (None, ()) for any other subscript."""
        if not isinstance(target.slice, ast.Name):
            return None, ()
        text = dotted(target.value)
        for loop in reversed(self.items_loops):
            if loop is None:
                continue
            frame, container, container_value, key, value_key, node = loop
            if frame is self.f:
                if container != text or key != target.slice.id:
                    continue
            elif not container_value or any(a[0] != "p" for a in container_value) or \
                    self.eval(target.value) != container_value or self.key_text(target.slice) != key:
                # In a helper the loop's body called (`group.push(tag, x)`
                # doing `self._tensors[tag] = x`): the same object and key.
                continue
            held = frozenset(("t", "p:" + a[1], 0) if a[0] == "p" else a
                             for a in self.st.names.get(value_key, EMPTY))
            if not held:
                return None, ()
            # The round's statement that replaced the entry (the call, in a
            # helper) is where the loop's function stops reading v.
            at = self.f.chain[len(frame.chain)][1] if frame is not self.f else stmt
            dead = not frame.module.read_after(frame.func, value_key.partition(":")[2], at, rebinding=node)
            return held, ((value_key,) if dead else ())
        return None, ()

    def release_value(self, old, stmt, path, how, key, new=EMPTY, ignore=()):
        """A binding at an attribute or element path is replaced (by `new`)
        or deleted. What the new value still holds (`self.x =
        helper(self.x)` returning it) is not released."""
        kept = self.reachable(new) if new else set()
        # `self.x = helper(self.x)` where the helper hands back, on some
        # path, a host copy in its place (`x = x.to("cpu", non_blocking=True)`
        # under an `if`): on that path the device tensor is released.
        value = getattr(stmt, "value", None)
        replaced = isinstance(value, ast.Call) and id(value) in self.inlined_calls and \
            any(a[0] == "t" and isinstance(a[1], int) and a[1] in self.host_sites for a in new)
        if old is None:
            if ("t", "p:" + path, 0) not in kept and ("p", path) not in kept:
                self.release_path(path, stmt, how, key)
            elif replaced and ("t", "p:" + path, 0) in new:
                self.release_path(path, stmt, how, key, keep=True)
            return
        for a in old:
            if a[0] == "t" and isinstance(a[1], str) and a not in kept:
                self.release_path(a[1][2:], stmt, how, key, ignore=ignore)
            elif a[0] == "t" and isinstance(a[1], str) and replaced and a in new:
                self.release_path(a[1][2:], stmt, how, key, keep=True)

    def foreign_path(self, base, attr):
        """The path of `base.attr` when base is one thing not made here."""
        if len(base) != 1:
            return None
        a = next(iter(base))
        if a[0] == "p":
            return a[1] + "." + attr
        if a[0] == "t" and isinstance(a[1], str):
            return a[1][2:] + "." + attr
        return None

    def subscript_path(self, node, base_value=EMPTY):
        """`d[k]` -> "d[k]" (the key's text), for an element not made here.
        The container is named by where it came from, else by its text."""
        base = dotted(node.value)
        if NONE in base_value and len(base_value) > 1:
            base_value = base_value - NONE_VALUE
        if len(base_value) == 1:
            # A container bound to a name (`state = opt.state[p]`), or handed
            # to an inlined helper: named as where it came from, while that
            # is a short path (a loop that rebinds `x = x[0]` is not followed).
            a = next(iter(base_value))
            path = path_of(a)
            # Not for an unknown call's result: what its elements hold was
            # not written by that call.
            if path is not None and element_depth(path) <= MAX_ELEMENT_DEPTH and not path.startswith("<"):
                base = path
        if base is None:
            return None
        return "%s[%s]" % (base, self.key_text(node.slice))

    def key_text(self, sl, frame=None):
        """An element key's text. A constant, a name, or a name's element
        or attribute is its own key (`state[key]` and `state[buf_key]` are
        two elements); a helper's parameter is its argument's text at the
        call; any other key expression names one element whatever it is."""
        if isinstance(sl, ast.Constant):
            return repr(sl.value)
        if isinstance(sl, ast.Name):
            return (frame or self.f).key_texts.get(sl.id, sl.id)
        if isinstance(sl, (ast.Subscript, ast.Attribute)) and isinstance(sl.value, ast.Name) \
                and sl.value.id not in (frame or self.f).key_texts:
            # `state[task[2]]`, `bufs[self.idx]`: one element, named by its text.
            return ast.unparse(sl)
        return "?"

    def eval_args(self, node):
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value)
                tups = [x for x in v if x[0] == "tup"]
                if len(tups) == 1 and len(v) == 1:
                    args.extend(tups[0][2])  # f(*args): the tuple's elements in place
                    continue
                args.append(v)
            else:
                args.append(self.eval(a))
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        return args, kwargs

    def eval_call(self, node, hint=None):
        func = node.func
        if self.autograd_hooks is not None and isinstance(func, ast.Attribute) and \
                func.attr in ("register_hook", "queue_callback") and len(node.args) == 1:
            # Inside an unpack hook (saved_tensor_hooks): a hook on the
            # backward node, or a callback at the end of the backward.
            self.eval(func.value)
            args, _ = self.eval_args(node)
            if has_kind(args[0], "fn"):
                self.autograd_hooks.append(("node" if func.attr == "register_hook" else "end", args[0]))
                return EMPTY
            return self.unknown_call(node, args, {})
        name = dotted(func)
        canon = self.m.canonical(name) if name else None
        if canon is not None and self.m.is_module_name(name) and self.key(name.partition(".")[0]) \
                not in self.st.names:
            if not canon.startswith("torch."):
                found = self.m.lookup_function(name)
                if found is not None:
                    return self.call_found(found, node, hint=hint)
            return self.call_module_function(canon, node, hint)
        if isinstance(func, ast.Attribute):
            return self.call_method(func, node, hint)
        if isinstance(func, ast.Name):
            bound = self.st.names.get(self.key(func.id))
            if bound is not None:
                if has_kind(bound, "fn"):
                    return self.call_function_value(bound, node)
            else:
                found = self.m.lookup_function(func.id) if func.id not in self.m.tuple_fields else None
                if found is not None:
                    return self.call_found(found, node, hint=hint)
                if func.id in self.m.tuple_fields:
                    args, kwargs = self.eval_args(node)
                    fields = self.m.tuple_fields[func.id]
                    elems = list(args[:len(fields)]) + [EMPTY] * max(0, len(fields) - len(args))
                    for k, v in kwargs.items():
                        if k in fields:
                            elems[fields.index(k)] = v
                    return frozenset((("tup", fields, tuple(elems)),))
                if func.id == "zip" and node.args and not node.keywords:
                    # zip(a, b): rounds of (element of a, element of b)
                    args, _ = self.eval_args(node)
                    row = ("tup", None, tuple(self.elements(a) for a in args))
                    return frozenset((("tup", None, (frozenset((row,)),)),))
                if func.id == "next" and node.args:
                    # An element of what is iterated, not the iterator.
                    args, _ = self.eval_args(node)
                    return self.elements(args[0]) | (args[1] if len(args) > 1 else EMPTY)
                if func.id in ("enumerate", "zip") and node.args and not kwargs_of(node) and \
                        not any(isinstance(a, ast.Starred) for a in node.args):
                    # Pairs: (index, element), (element of a, element of b);
                    # one-field tuples of them, so that iterating yields them.
                    args, _ = self.eval_args(node)
                    parts = [self.elements(a) for a in args]
                    if func.id == "enumerate":
                        parts = [EMPTY, parts[0]]
                    pair = ("tup", None, tuple(parts))
                    return frozenset((("tup", None, (frozenset((pair,)),)),))
                if func.id in PASS_THROUGH_BUILTINS:
                    args, kwargs = self.eval_args(node)
                    out = EMPTY
                    for a in args:
                        out = out | a
                    if func.id in ("list", "dict", "set") and (args or not kwargs):
                        return self.new_container(node, self.elements(out) if args else EMPTY)
                    return out
                if func.id == "getattr" and len(node.args) in (2, 3) and isinstance(node.args[1], ast.Constant) \
                        and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier():
                    # `getattr(p, "decoupled_grad", p.grad)`: that attribute,
                    # or the default.
                    args, _ = self.eval_args(node)
                    base = [a for a in args[0] if a[0] == "p"]
                    out = args[2] if len(args) == 3 else EMPTY
                    if len(base) == 1 and len(args[0]) == 1:
                        out = out | self.foreign_value(base[0][1] + "." + node.args[1].value)
                    return out
                if func.id in HARMLESS_BUILTINS:
                    args, kwargs = self.eval_args(node)
                    if func.id == "sum" and args:
                        # `sum(zs)` of device tensors adds them up with their
                        # operators, on the current stream.
                        tensors = frozenset(a for a in self.elements(args[0]) if a[0] == "t")
                        if tensors and not any(a[1] in self.host_sites for a in tensors):
                            self.use(tensors, node)
                            return EMPTY
                    if func.id in HOST_READING_BUILTINS:
                        for v in list(args) + list(kwargs.values()):
                            self.host_read(v, node)
                    if func.id in HOST_SYNC_BUILTINS:
                        self.host_copy_sync(list(args) + list(kwargs.values()), node)
                    return EMPTY
        callee = self.eval(func)
        if has_kind(callee, "fn"):
            return self.call_function_value(callee, node)
        args, kwargs = self.eval_args(node)
        self.call_module_of_parts(func, node)
        return self.unknown_call(node, args, kwargs)

    def note_module_parts(self, parts, value):
        """`parts` (tensors of a module not made here, see MODULE_PART) now
        hold `value`'s device tensors."""
        device = frozenset(t for t in tensor_atoms(value) if t[1] not in self.host_sites)
        if not device:
            return
        for a in parts:
            path = path_of(a)
            module = module_of_part(path) if path else None
            if module is None:
                continue
            self.module_parts[module] = self.module_parts.get(module, EMPTY) | device
            for t in device:
                if not isinstance(t[1], str):  # made here: named by where it went
                    self.part_names.setdefault(t, path.strip("<").replace(")>", ")"))

    def call_module_of_parts(self, func, node):
        """A call of a module this function put tensors into (`model(x)`
        after `p.data = t` for its parameters): its forward reads them on
        the current stream, which must be ordered after their copies."""
        text = dotted(func)
        parts = self.module_parts.get(text) if text is not None else None
        if parts:
            live = frozenset(a for a in parts if a in self.st.buffers)
            if live:
                self.use(live, node)

    def call_found(self, found, node, self_value=None, hint=None):
        """A call of a function or class the run defines."""
        module, fn, cls = found
        args, kwargs = self.eval_args(node)
        if fn is None:
            # An instance of a class of the run: its methods are followed
            # through it (`p = Pool(); t = p.make()`).
            self.escape_functions(list(args) + list(kwargs.values()))
            self.use_quietly(args, kwargs, node, module.constructor_stores_only(cls))
            self.modules_seen[module.name] = module
            # Named by what it is bound to (`pool = Pool()`); attributes of
            # one name are one thing here (~name.attr).
            label = (dotted(hint) if hint is not None else None) or "%s@%d" % (cls, node.lineno)
            self.note_none_fields(module, cls, label, node)
            return frozenset((("obj", module.name, cls, label),))
        result = self.inline(fn, node, args, kwargs, None, module=module, class_name=cls,
                             self_value=self_value)
        if result is not None:
            if not has_kind(result, "s") and returns_a_stream(fn):
                # A stream made once and kept where the check cannot follow
                # (`cache.setdefault(device, Stream())`): one stream of its
                # own, named by the function.
                return frozenset((("s", "<%s()>" % fn.name),))
            return result
        self.uninlined.add(id(node))
        return self.unknown_call(node, args, kwargs)

    def note_none_fields(self, module, cls, label, node):
        """`task = Task(None, ...)` whose __init__ does `self.stream = stream`:
        `task.stream` is None in this instance, so a stream context given it
        (`with use_stream(self.stream)`) switches no stream. An attribute of
        a name ever constructed with anything but None is never taken for
        None (instances bound to one name are one thing here)."""
        fields = module.constructor_fields(cls)
        if fields is None:
            return
        params, stores = fields
        given = argument_nodes(params, node)
        for param, attrs in stores.items():
            arg = given.get(param)
            for attr in attrs:
                path = "~" + label + "." + attr  # how methods name the attribute
                if isinstance(arg, ast.Constant) and arg.value is None:
                    self.none_fields.add(path)
                else:
                    self.some_fields.add(path)

    def none_field(self, value):
        """A value that is an instance's attribute which every construction
        of it this run saw left None (note_none_fields)."""
        paths = [a[1] for a in value if a[0] == "p"]
        return len(paths) == 1 and len(value) == 1 and paths[0] in self.none_fields and \
            paths[0] not in self.some_fields

    def use_quietly(self, args, kwargs, node, stores_only=False):
        """A constructor's arguments: kept by the new object, and used on the
        current stream for the free rule (it may run work on them), but not
        taken as reads that must wait for pending writes (an object made
        around a tensor runs no kernel on it). `stores_only`: its __init__
        calls nothing on them (Module.constructor_stores_only), so, as with
        an unknown call, no kernel is known to run on them."""
        values = list(args) + list(kwargs.values())
        if not values:
            return
        everything = frozenset().union(*values)
        if stores_only:
            self.unknown_use_nodes.add(id(node))
        self.use(everything, node, ready=False)
        self.mark_stored(everything)

    def call_function_value(self, value, node, given=None):
        """A call of a nested function, a lambda or a function passed in as
        an argument: interpreted in place, with its enclosing frame's names.
        `given`: the arguments of a call the framework makes (node None)."""
        fns = [a for a in value if a[0] == "fn"]
        args, kwargs = (given, {}) if given is not None else self.eval_args(node)
        if len(fns) == 1:
            entry = self.functions_seen.get(fns[0][1])
            if entry is not None:
                fn, module, outer_fid, cls, self_outer = entry
                result = self.inline(fn, node or fn, args, kwargs, None, module=module, class_name=cls,
                                     outer_fid=outer_fid, self_outer=self_outer, stage=node is None)
                if result is not None:
                    return result
                self.uninlined.add(id(node))
        if node is None:
            return EMPTY
        return self.unknown_call(node, args, kwargs)

    def function_value(self, fn, module=None, outer=True):
        """The value of a def or lambda: ("fn", id), its facts kept aside."""
        seen = self.functions_seen.get(id(fn))
        if seen is None or (outer and seen[2] != self.f.fid):
            # A def run again in another call of its enclosing function
            # closes over that call's frame.
            f = self.f
            self.functions_seen[id(fn)] = (fn, module or self.m, f.fid if outer else None, f.class_name,
                                           f.self_outer)
        return frozenset((("fn", id(fn)),))

    def escape_functions(self, values):
        """A function value handed to code that may keep it (a hook, a
        callback, an attribute): what it names lives as long as it does."""
        for v in values:
            for a in self.reachable(v):
                if a[0] != "fn":
                    continue
                entry = self.functions_seen.get(a[1])
                if entry is None or entry[2] is None:
                    continue
                fn, module, outer_fid, _, _ = entry
                if (a, outer_fid) in self.escaping:
                    continue
                self.escaping.add((a, outer_fid))
                own = module.bound_names(fn)
                prefix = "%d:" % outer_fid
                for name in module.subtree(fn)[1] - own:
                    held = self.st.names.get(prefix + name)
                    if held:
                        self.escape(held)

    def unknown_call(self, node, args, kwargs):
        """A call this analysis does not know: its tensor arguments are used on
        the current stream, and it may keep them."""
        values = list(args) + list(kwargs.values())
        if not values:
            return self.call_result(node)
        self.escape_functions(values)
        everything = frozenset().union(*values)
        self.unknown_use_nodes.add(id(node))
        self.use(everything, node)
        streams, stream_values = self.argument_streams(node, args, kwargs)
        tensors = frozenset().union(*(v for v in values if v not in stream_values))
        for stream in streams:
            # `m.prefetch(dist_input=t, forward_stream=s)`: a call handed a
            # tensor and a stream may enqueue work on the tensor there, or
            # leave it for that stream's later work. Only the free rules
            # read this use: it is no read that must wait for a write.
            self.f.streams.append(stream)
            self.use(tensors, node, ready=False, kind="use@" + stream)
            self.f.streams.pop()
        self.mark_stored(everything)
        if not self.ctx_is_side():
            return EMPTY
        # Made while a side stream is current. The result, and what it
        # holds, may be one of the arguments or a view of one: no tensor of
        # its own here (opaque). But what a call on it returns (each
        # awaitable's .wait() in a list of them) is made under that stream,
        # from its pool.
        result = self.call_result(node)
        self.opaque_results.add(next(iter(result))[1])
        return result

    def argument_streams(self, node, args, kwargs):
        """(streams, their argument values): the streams other than the
        current context a call is handed, each an argument that is a stream,
        or one named for a stream by its keyword (`forward_stream=s`) or its
        own name (`self.copy_stream`)."""
        pairs = [(None, v) for v in args] + [(k, v) for k, v in kwargs.items() if k]
        found, values = set(), []
        for word, value in pairs:
            if not value or tensor_atoms(value):
                continue
            keys = self.stream_keys(value, node)
            if len(keys) != 1:
                continue
            key = next(iter(keys))
            if key in (CURRENT, self.ctx) or key.startswith("~"):
                continue
            if has_kind(value, "s") or (word and "stream" in word.lower()) or \
                    "stream" in key.rpartition(".")[2].lower():
                found.add(key)
                values.append(value)
        return sorted(found), values

    def mark_stored(self, value):
        """Passed to code that may keep it: rebinding a name frees nothing."""
        for atom in self.reachable(value):
            buf = self.st.buffers.get(atom) if atom[0] == "t" else None
            if buf is not None and not buf.stored:
                buf = buf.copy()
                buf.stored = True
                self.st.buffers[atom] = buf

    def stream_context_value(self, node):
        """A stream context made for a later `with` (`ctx =
        torch.cuda.stream(s)`, `ctx = nullcontext() if flag else
        torch.cuda.stream(s)`, a helper returning `accelerator.stream(s)`)."""
        args, kwargs = self.eval_args(node)
        arg = args[0] if args else kwargs.get("stream")
        arg_node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "stream"),
                                                       None)
        if arg is None or arg_node is None:
            return EMPTY
        if (isinstance(arg_node, ast.Constant) and arg_node.value is None) or \
                self.assumed_none(flag_text(arg_node)):
            return frozenset((("sctx", self.ctx),)) if self.ctx is not None else EMPTY
        keys = self.side_keys(arg, arg_node)
        if len(keys) == 1 and not self.never_made(keys, arg):
            return frozenset((("sctx", next(iter(keys))),))
        return EMPTY

    def call_module_function(self, canon, node, hint):
        canon = as_cuda(canon)
        if canon in OBJECT_COPIES:
            self.harmless_calls.add(id(node))
        if canon in TYPE_CASTS and len(node.args) == 2:
            # cast(T, x) is x.
            return self.eval_args(node)[0][1]
        if canon in STREAM_CONTEXTS:
            return self.stream_context_value(node)
        if canon in CUPY_STREAM_FACTORIES and cupy_null_stream(node):
            self.eval_args(node)
            return frozenset((("s", CURRENT),))
        if canon in STREAM_FACTORIES or canon in CUPY_STREAM_FACTORIES:
            self.eval_args(node)
            name = dotted(hint) if hint is not None else None
            key = name or "stream@%d" % node.lineno
            if canon in CUPY_STREAM_FACTORIES and cupy_blocking_stream(node):
                self.note_blocking(key)  # ordered with the legacy default stream (legacy.py)
            return frozenset((("s", key),))
        if canon in CURRENT_STREAM:
            self.eval_args(node)
            if canon.endswith("default_stream"):
                return frozenset((("s", CURRENT),))
            return frozenset((("s", self.ctx),)) if self.ctx is not None else EMPTY
        if canon in EVENT_FACTORIES:
            self.eval_args(node)
            return frozenset((("ev",),))
        if canon in DEVICE_SYNC:
            self.eval_args(node)
            self.host_sync(lambda u: True)
            return EMPTY
        if canon in CONTAINER_FACTORIES:
            args, kwargs = self.eval_args(node)
            return self.new_container(node, self.elements(args[0]) if args else EMPTY)
        if canon in SAVED_TENSORS_HOOKS:
            args, kwargs = self.eval_args(node)
            hooks = args[:2] + [kwargs[k] for k in ("pack_hook", "unpack_hook") if k in kwargs]
            if len(hooks) == 2 and all(has_kind(h, "fn") for h in hooks):
                self.saved_tensor_hooks(hooks[0], hooks[1], node)
            return EMPTY
        args, kwargs = self.eval_args(node)
        # dtype=, device=, ...: never a tensor the operator reads.
        values = list(args) + [v for k, v in kwargs.items() if k not in NON_TENSOR_KEYWORDS]
        # cupy.X: an array on the device, made or computed on the current stream.
        cupy_short = canon[len("cupy."):] if canon.startswith("cupy.") else ""
        cupy = bool(cupy_short) and "." not in cupy_short
        if (canon.startswith("torch.") and canon[len("torch."):] in TENSOR_FACTORIES) or \
                (cupy and cupy_short in TENSOR_FACTORIES):
            values = []  # torch.rand(dim, dim): sizes, not tensors
        everything = frozenset().union(*values) if values else EMPTY
        if canon.startswith(DIST_PREFIX) and canon.rpartition(".")[2] in DIST_QUERIES:
            self.eval_args(node)
            return EMPTY  # get_rank(group), get_world_size(group), new_group(...): no tensor
        if canon.startswith(DIST_PREFIX):
            # Collectives: enqueued on the current stream; most write their
            # first argument (in place, or the output). Their group=, op=,
            # async_op=, src= ... are no tensors.
            tensor_kwargs = {k: v for k, v in kwargs.items() if k not in DIST_NON_TENSOR_KEYWORDS}
            if canon.rpartition(".")[2] in DIST_WRITES_FIRST and args:
                rest = frozenset().union(*args[1:], *tensor_kwargs.values()) if len(args) > 1 or tensor_kwargs \
                    else EMPTY
                self.use(self.materialize(rest), node)
                first = self.materialize(args[0])
                if canon.rpartition(".")[2] in DIST_READS_FIRST:
                    self.use(first, node)  # in place: what it reduces must be ready
                self.write(first, node)
            else:
                self.use(self.materialize(frozenset().union(*args, *tensor_kwargs.values())
                                          if args or tensor_kwargs else EMPTY), node)
            # An async collective's handle: work.wait() makes the stream
            # current then wait for the collective, so for what preceded it
            # on the stream it was issued on.
            return frozenset((("work", self.ctx),)) if self.ctx is not None else EMPTY
        short = canon[len("torch."):] if canon.startswith("torch.") else None
        if cupy and cupy_short not in CUPY_NON_ARRAY:
            short = cupy_short
        is_torch_op = short is not None and (
            ("." not in short and short not in TORCH_NON_TENSOR and not short.startswith("_"))
            or canon.startswith(TENSOR_NAMESPACES))
        if not is_torch_op:
            if short is not None and (short.startswith("cuda.") or short in TORCH_NON_TENSOR):
                return EMPTY  # metadata and predicates: no kernel
            return self.unknown_call(node, args, kwargs)
        out = kwargs.pop("out", None)
        if out is not None:
            everything = frozenset().union(*args, *(v for k, v in kwargs.items() if k not in NON_TENSOR_KEYWORDS))
        everything = self.materialize(everything)
        if short not in LIKE_FACTORIES:
            self.use(everything, node)  # `empty_like(x)` reads only x's shape
        if out is not None:
            self.write(out, node)
            return self.materialize(out)
        if short in TENSOR_FACTORIES or short in LIKE_FACTORIES:
            # `pin_memory=True` asks for a pinned host buffer, on the host
            # whether or not `device=` says so (`torch.empty(n,
            # pin_memory=True)`): filled and read by the host, and by copies
            # on streams that do not block it. A flag (`pin_memory=pin`)
            # may leave it pageable, where copies block: not followed.
            pinned = not cupy and any(k.arg == "pin_memory" and isinstance(k.value, ast.Constant) and
                                      k.value.value is True for k in node.keywords)
            if not cupy and (self.on_host(node) or (pinned and "device" not in kwargs)):
                if pinned:
                    made = self.alloc(node, None)
                    self.host_sites.add(next(iter(made))[1])
                    return made
                return EMPTY
            if short in TENSOR_FACTORIES and "device" not in kwargs and not cupy:
                return EMPTY  # the default device: the host, unless set otherwise
            made = self.alloc(node, self.ctx)
            if short not in ("empty", "empty_like", "empty_strided"):
                self.produced(made, node)  # a fill kernel writes it
            elif ("device" in kwargs or cupy) and self.ctx is not None:
                # A block from the current stream's pool: work that stream
                # enqueued before may still use it (its previous owner), so
                # another stream must wait for this one before writing it.
                self.allocated_on_stream(made, node)
            return made
        if short.startswith("_foreach_") and short.endswith("_"):
            # An in-place foreach op writes its first list (`self`) only;
            # the other lists and scalars it reads (used above).
            self.write(self.materialize(args[0]) if args else everything, node)
            return EMPTY
        if tensor_atoms(everything) or has_kind(everything, "c") or has_kind(everything, "tup"):
            # An operator returns a new tensor, written by its kernel.
            return self.produced(self.alloc(node, self.ctx), node)
        return EMPTY

    def on_host(self, node):
        for k in node.keywords:
            if k.arg == "device":
                v = k.value
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    return not v.value.startswith("cuda")
                if isinstance(v, ast.Call) and self.m.canonical(dotted(v.func) or "") == "torch.device" \
                        and v.args and isinstance(v.args[0], ast.Constant):
                    return not str(v.args[0].value).startswith("cuda")
        return False

    def call_method(self, func, node, hint=None):
        meth = func.attr
        recv_node = func.value
        # t.untyped_storage().resize_(0) frees the storage whoever else holds it.
        if meth in ("resize_", "_resize_") and isinstance(recv_node, ast.Call) and \
                isinstance(recv_node.func, ast.Attribute) and \
                recv_node.func.attr in ("untyped_storage", "storage", "_typed_storage"):
            return self.storage_resize(recv_node.func.value, node)
        if meth == "__init__" and isinstance(recv_node, ast.Call) and isinstance(recv_node.func, ast.Name) \
                and recv_node.func.id == "super" and self.f.class_name is not None \
                and self.m.derives_from(self.f.class_name, "saved_tensors_hooks"):
            # class Offload(saved_tensors_hooks): super().__init__(pack, unpack)
            args, kwargs = self.eval_args(node)
            if len(args) >= 2 and has_kind(args[0], "fn") and has_kind(args[1], "fn"):
                self.saved_tensor_hooks(args[0], args[1], node, (self.m, self.f.class_name))
            return EMPTY
        # A helper method of the same class (or a base the run defines), inlined.
        if isinstance(recv_node, ast.Name) and recv_node.id == "self" and self.f.class_name is not None \
                and self.key("self") not in self.st.names:
            if self.self_type is not None and self.f.self_outer:
                # The analyzed method run on an instance of a subclass
                # (report.subclass_runs): its override is the one called.
                found = self.self_type[0].method(self.self_type[1], meth)
            else:
                found = self.m.method(self.f.class_name, meth)
            if found is not None:
                module, callee, cls = found
                args, kwargs = self.eval_args(node)
                result = self.inline(callee, node, args, kwargs, recv_node, module=module, class_name=cls)
                if result is not None:
                    return result
                self.uninlined.add(id(node))
                return self.unknown_call(node, args, kwargs)
        if meth == "stream" and len(node.args) + len(node.keywords) == 1 and isinstance(recv_node, ast.Call) and \
                not tensor_atoms(self.eval(recv_node)):
            # A device module's stream context (`get_accelerator().stream(s)`,
            # `torch.get_device_module(d).stream(s)`).
            return self.stream_context_value(node)
        recv = self.eval(recv_node)
        if meth == "pin_memory" and not tensor_atoms(recv):
            # `torch.empty(n).pin_memory()`, `accelerator.pin_memory(t)`:
            # pinned host memory, filled and read by copies on streams.
            self.eval_args(node)
            made = self.alloc(node, None)
            self.host_sites.add(next(iter(made))[1])
            return made
        # A parameter annotated as a tensor is one whatever its method.
        if (meth in TENSOR_ONLY_METHODS or is_in_place(meth) or (meth == "to" and to_device_call(node)) or
                self.typed_parameters(recv, objects=False)) and has_kind(recv, "p") and \
                not has_kind(recv, "s") and \
                not has_kind(recv, "c"):
            recv = self.materialize(recv)
        objs = [a for a in recv if a[0] == "obj"]
        if objs:
            # A method through an instance of a class of the run.
            module = self.modules_seen.get(objs[0][1])
            found = module.method(objs[0][2], meth) if module is not None else None
            if found is not None and len(objs) == 1:
                args, kwargs = self.eval_args(node)
                return self.call_method_of(found, node, args, kwargs, recv)
        found = None
        if not objs and recv and all(a[0] == "p" and "[" in a[1] for a in recv) and \
                all(isinstance(a, PLAIN_ARGUMENTS) for a in node.args) and \
                all(isinstance(k.value, PLAIN_ARGUMENTS) for k in node.keywords):
            found = self.m.unique_method(meth)
        if found is not None:
            # An element of a container of objects of unknown type (a list
            # of groups) whose method only one class of the module defines,
            # handed tensors of this analysis by name: that class's method
            # (`group.push_tensor(tag, state)`); an attribute of self may
            # be anything (a wrapped module). Names only, so that reading
            # them here and again below changes nothing.
            args, kwargs = self.eval_args(node)
            if any(not self.st.buffers.keys().isdisjoint(self.reachable(v)) for v in args + list(kwargs.values())):
                return self.call_method_of(found, node, args, kwargs, recv)
        if has_kind(recv, "p") and not tensor_atoms(recv) and self.m.program is not None:
            # pkg.mod.f through a module object bound to a name (import pkg.mod).
            path = next(a[1] for a in recv if a[0] == "p")
            found = self.m.program.function(path + "." + meth) if "." in path or path in \
                self.m.program.modules else None
            if found is not None and found[1] is not None:
                return self.call_found(found, node)
        if not tensor_atoms(recv) and not has_kind(recv, "c"):
            # A device module by another name (device_handle = torch.cuda).
            generic = DEVICE_MODULE_CALLS.get(meth)
            if generic is not None and not has_kind(recv, "s") and not has_kind(recv, "e"):
                path = (dotted(recv_node) or "").lower()
                if meth != "synchronize" or not ("stream" in path or "event" in path):
                    return self.call_module_function(generic, node, hint)
        if meth == "wait_event":
            streams = self.waiting_streams(recv, recv_node)
            args, kwargs = self.eval_args(node)
            event = args[0] if args else kwargs.get("event", EMPTY)
            if not any(a[0] == "e" for a in event):
                # An event this analysis did not see recorded (kept by the
                # object, an element of a container): it may follow anything.
                self.wait_stream(streams, ANY_STREAM, node)
                return EMPTY
            self.wait(streams, event, node)
            return EMPTY
        if meth == "wait_stream":
            streams = self.waiting_streams(recv, recv_node)
            value = self.eval(node.args[0]) if node.args else EMPTY
            others = self.stream_keys(value, node.args[0]) if node.args else set()
            if node.args and (has_kind(value, "c") or
                              any("[" in k or (k.startswith("<") and k != CURRENT) for k in others)):
                # A stream from a container or an unknown call: any of them,
                # the current one included (a missed bug rather than a false
                # report).
                others = {ANY_STREAM}
            elif self.never_made(others, value):
                # A stream this module never makes or assigns (set by a
                # base class, a framework): it may be the current stream, and
                # waiting for it is taken as waiting for that too (a missed
                # bug rather than a false report).
                others = others | {CURRENT}
            for other in others:
                self.wait_stream(streams, other, node)
            return EMPTY
        if meth == "record_event" or (meth == "record" and has_kind(recv, "s")):
            # CuPy's stream.record(): the event recorded, as record_event().
            self.eval_args(node)
            return self.record(self.stream_keys(recv, recv_node) or None, node)
        if meth == "record_stream":
            # Recording the allocation's own (current) stream is a no-op, so
            # of `side if overlap else current` the side stream is recorded.
            arg = self.eval(node.args[0]) if node.args else EMPTY
            keys = self.side_keys(arg, node.args[0]) if node.args else ()
            streams = {next(iter(keys))} if len(keys) == 1 else set()
            if node.args and isinstance(node.args[0], ast.Name) and \
                    (self.f.fid, node.args[0].id) in self.each_names:
                # `for s in consumers: t.record_stream(s)`: one round per
                # stream records each of them.
                streams = self.stream_keys(arg, node.args[0]) | {a[1] for a in arg if a[0] == "p"} | streams
            for stream in sorted(streams):
                self.streams_recorded_on.add(stream)
                # Evidence of a tensor, or of an object holding some (a
                # Multistreamable): only stream-ordered memory is recorded.
                for atom in tensor_atoms(self.materialize(recv)):
                    buf = self.st.buffers.get(atom)
                    if buf is not None:
                        buf = buf.copy()
                        buf.recorded = buf.recorded | {stream}
                        # The uses made so far on that stream are safe on this
                        # path even where a join loses the buffer-wide fact.
                        buf.uses = {k: (u._replace(host=True) if u.stream == stream else u)
                                    for k, u in buf.uses.items()}
                        self.st.buffers[atom] = buf
            return EMPTY
        is_tensor = bool(tensor_atoms(recv))
        is_event = has_kind(recv, "e") or has_kind(recv, "ev")
        if meth == "record" and not is_tensor:
            if node.args or node.keywords:
                arg = node.args[0] if node.args else node.keywords[0].value
                stream = self.stream_keys(self.eval(arg), arg) or None
            else:
                stream = self.ctx
            event = self.record(stream, node)
            if not is_event:
                # An event this function did not make (the object's, an
                # element of a list it was handed): whoever made it keeps it.
                self.foreign_records.update(a[1] for a in event)
            path = dotted(recv_node)
            if path is not None:
                self.st.names[self.key(path)] = event
            elif isinstance(recv_node, ast.Subscript):
                # events[i].record(): one of a local list's events (a ring of
                # N events for N buffers in flight) now names this record.
                for c in self.eval(recv_node.value):
                    if c[0] == "c":
                        held = self.st.containers.get(c, EMPTY)
                        self.st.containers[c] = frozenset(a for a in held if a[0] not in ("e", "ev")) | event
            return EMPTY
        if meth == "wait" and has_kind(recv, "work"):
            self.eval_args(node)
            issued = {a[1] for a in recv if a[0] == "work"}
            if len(issued) == 1 and self.ctx is not None:
                self.wait_stream({self.ctx}, next(iter(issued)), node)
            return EMPTY
        if meth == "wait" and is_event:
            if node.args:
                streams = self.stream_keys(self.eval(node.args[0]), node.args[0])
            else:
                streams = {self.ctx} if self.ctx is not None else set()
            self.wait(streams or {ANY_STREAM}, recv, node)
            return EMPTY
        if meth == "synchronize" and not is_tensor:
            self.eval_args(node)
            if not is_event and not has_kind(recv, "s"):
                path = dotted(recv_node) or ""
                if "event" in path.lower():
                    return EMPTY
            self.host_wait_on(recv_node, node)
            return EMPTY
        if has_kind(recv, "c") and not is_tensor:
            return self.container_method(recv, meth, node, dotted(recv_node) or "entries")
        if not is_tensor and meth in ("pop", "clear", "popitem", "popleft") and has_kind(recv, "p"):
            return self.foreign_container_method(recv, meth, node)
        args, kwargs = self.eval_args(node)
        if is_tensor and meth == "set_" and args:
            # t.set_(source, ...): t now views source's storage.
            source = frozenset(tensor_atoms(self.materialize(args[0])))
            path = dotted(recv_node)
            if source and path is not None:
                self.st.names[self.key(path)] = source
                return source
        if is_tensor or (meth == "copy_" and len(args) == 1):
            # Also `dst.copy_(src)` into a destination the check does not
            # know (an entry made on only some paths, by a factory whose
            # pinning a flag decides): only tensors have copy_, and the copy
            # still reads its source on the current stream.
            return self.tensor_method(recv, meth, node, args, kwargs)
        if meth in NEW_TENSOR_METHODS or meth in ("cuda",) or (meth == "to" and to_device_call(node)):
            self.use(frozenset().union(*args, *kwargs.values()) if args or kwargs else EMPTY, node)
            made = self.alloc(node, self.ctx)
            if meth not in ("new_empty", "new_empty_strided"):
                self.produced(made, node)  # the copy (or fill) writes it
            if meth == "to" and self.targets_host(node):
                # Into host memory (pinned, when the copy does not block); a
                # blocking one synchronized its stream before returning.
                self.host_sites.add(next(iter(made))[1])
                if not may_be_async(node):
                    self.host_waits_for_current()
            return made
        if meth in CONTAINER_ADD:
            # Kept by something that is not a local container: never freed here.
            for v in args:
                self.note_store(dotted(recv_node), v)
                self.escape(v)
            if args and meth in ("append", "appendleft", "add"):
                # What iterating that container later in this function
                # yields includes what was put there (elements), under the
                # binding key of its path with "[+]" appended.
                for a in recv:
                    if a[0] == "p":
                        k = self.key(a[1] + "[+]")
                        self.st.names[k] = self.st.names.get(k, EMPTY) | args[-1]
            return EMPTY
        if meth == "wait" and has_kind(recv, "p") and "event" in (dotted(recv_node) or "").lower():
            # `self.event.wait(stream)`: an event this analysis did not see
            # recorded; it may follow anything.
            streams = self.stream_keys(args[0], node.args[0]) if node.args and args else \
                ({self.ctx} if self.ctx is not None else set())
            self.wait_stream(streams or {ANY_STREAM}, ANY_STREAM, node)
            return EMPTY
        if meth == "wait" and has_kind(recv, "p"):
            return self.call_result(node)  # `t = work.wait()`, `request.wait()`: a tensor, maybe
        if meth in ("values", "items") and not node.args and has_kind(recv, "p") and not has_kind(recv, "s"):
            # A dict not made here (`for k, v in tensors.items()`): its
            # elements; for items(), (key, element) pairs, each a one-field
            # tuple's field so that iterating yields the pair.
            elems = self.elements(frozenset(a for a in recv if a[0] == "p"))
            if meth == "values":
                return elems
            return frozenset((("tup", None, (frozenset((("tup", None, (EMPTY, elems)),)),)),))
        if meth in CONTAINER_TAKE or meth in ("wait", "query", "is_completed", "get", "keys", "values",
                                              "items", "format", "join", "split", "startswith"):
            return EMPTY
        return self.unknown_call(node, args, kwargs)

    def call_method_of(self, found, node, args, kwargs, recv):
        """A method (module, def, class name) called on `recv`: interpreted
        in place, else an unknown call."""
        m2, callee, cls = found
        result = self.inline(callee, node, args, kwargs, None, module=m2, class_name=cls, self_value=recv)
        if result is not None:
            return result
        self.uninlined.add(id(node))
        return self.unknown_call(node, args, kwargs)

    @staticmethod
    def to_host(meth, node):
        """`t.to("cpu", ...)` of a tensor used on a stream, or any
        `t.to(device, non_blocking=True)` (non_blocking matters only for a
        copy between devices): a new tensor, never the tensor itself."""
        if meth != "to":
            return False
        if any(k.arg == "non_blocking" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in node.keywords):
            return True
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
        return isinstance(first, ast.Constant) and first.value == "cpu"

    def tensor_method(self, recv, meth, node, args, kwargs):
        others = frozenset().union(*args, *kwargs.values()) if args or kwargs else EMPTY
        mine = frozenset(tensor_atoms(recv))
        if meth in VIEW_METHODS:
            return mine
        if mine and all(a[1] in self.host_sites for a in mine) and meth in ("numpy", "__array__", "__dlpack__"):
            return mine  # a view of the same host memory, read later
        if mine and all(a[1] in self.host_sites for a in mine) and meth in MAYBE_SELF_METHODS and \
                meth not in ("to", "cuda"):
            # `.float()`, `.contiguous()` of host memory: the tensor itself when
            # nothing changes, else a host copy (read then).
            made = self.alloc(node, None)
            self.host_sites.add(next(iter(made))[1])
            return mine | made
        if mine and all(a[1] in self.host_sites for a in mine) and meth not in ("to", "cuda", "copy_") and \
                meth not in HOST_SYNC_METHODS and meth not in METADATA_METHODS and not is_in_place(meth):
            # An operator on host memory: the host runs it (reading what
            # copies wrote there) and its result is host memory too.
            self.host_read(mine, node)
            made = self.alloc(node, None)
            self.host_sites.add(next(iter(made))[1])
            return made
        if meth in ("untyped_storage", "storage", "_typed_storage"):
            return mine  # the storage is the buffer itself
        if meth in METADATA_METHODS:
            if meth == "register_hook":
                self.escape_functions(args)
            return EMPTY
        if meth in NEW_TENSOR_METHODS:
            self.use(others, node)
            return self.alloc(node, self.ctx)
        if meth in ("copy_", "set_"):
            # The source is read; the receiver is written (and waits for the source).
            self.note_module_parts(mine, mine)
            source = self.materialize(others)
            self.copy_sources.update((id(node), a) for a in source if a[0] == "t")
            if any(a[1] in self.host_sites for a in mine) or self.names_host(node.func.value):
                # Into host memory: its source is device memory some stream wrote.
                self.copies_to_host.add(id(node))
            self.use(source, node)
            self.write(mine, node)
            if id(node) in self.copies_to_host and not may_be_async(node):
                # A blocking copy into host memory returns when it is done.
                self.host_done(mine, node)
            return mine
        if is_in_place(meth):
            if mine and all(a[1] in self.host_sites for a in mine):
                # An in-place operator on host memory runs on the host
                # (`pinned.zero_()`): it reads what copies wrote there.
                self.host_read(mine, node)
                return mine
            self.use(self.materialize(others), node)
            self.write(mine, node)
            return mine
        if meth in ("to", "cuda", "cpu") or (meth in ("clone", "contiguous") and
                                             id(node) in self.f.module.copied_to_device()):
            self.copy_sources.update((id(node), a) for a in mine)
            if meth == "cpu" or (meth == "to" and self.targets_host(node)):
                self.copies_to_host.add(id(node))
        if meth in HOST_SYNC_METHODS and mine and all(a[1] in self.host_sites for a in mine):
            # `.item()`, `.tolist()`, `.numpy()` of host memory: the host
            # reads it, and waits for no stream.
            self.host_read(mine, node)
            return EMPTY
        self.use(mine | others, node)
        if meth in HOST_SYNC_METHODS or (meth == "cpu" and "non_blocking" not in kwargs):
            self.host_waits_for_current()
            return EMPTY
        blocking_to_host = meth == "to" and self.targets_host(node) and not may_be_async(node)
        if blocking_to_host:
            # A blocking copy to the host (`.to("cpu")`, `non_blocking=False`)
            # synchronizes the stream it runs on before it returns: what that
            # stream did before it, an earlier copy that did not block
            # included, is done (the host then reads both copies).
            self.host_waits_for_current()
        # `batch.to(device, non_blocking=True, data_copy_stream=s)` (a
        # Pipelineable's own to()): allocated here, copied on s.
        copy_stream = self.stream_keyword(node) if meth == "to" else None
        if meth in MAYBE_SELF_METHODS and not self.to_host(meth, node):
            return mine | self.produced(self.alloc(node, self.ctx), node, copy_stream)
        if (meth in HOST_COPY_METHODS and "non_blocking" not in kwargs) or blocking_to_host:
            made = self.alloc(node, self.ctx)  # a host tensor the call has filled when it returns
            self.host_sites.add(next(iter(made))[1])
            return made
        made = self.alloc(node, self.ctx)
        if meth in ("cpu", "pin_memory") or (meth == "to" and self.targets_host(node)):
            self.host_sites.add(next(iter(made))[1])
        return self.produced(made, node, copy_stream)

    @staticmethod
    def names_host(node):
        """A receiver named for host memory (`p_host.grad`, `cpu_buf`,
        `self.pinned[k]`): the check cannot see where it was made, and the
        name says it."""
        words = []
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            if isinstance(node, ast.Attribute):
                words.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            words.append(node.id)
        return says_host_memory(" ".join(words))

    def stream_keyword(self, node):
        """The one stream a keyword argument names (`data_copy_stream=s`),
        or None."""
        for k in node.keywords:
            if k.arg and "stream" in k.arg.lower():
                keys = self.stream_keys(self.eval(k.value), k.value)
                if len(keys) == 1:
                    return next(iter(keys))
        return None

    def replaced_by_upload(self, target, stmt):
        """`x = x.to(device, non_blocking=True)` at an attribute or element
        (`layers[i]`, `self.kv`): what the target held is host memory, or
        the device tensor itself when it is there already (the copy is then
        no copy). Replaced, it frees no block of a stream's pool (PyTorch's
        host allocator keeps a pinned block until the copies that used it
        are done)."""
        value = getattr(stmt, "value", None)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return False
        return value.func.attr in ("to", "cuda") and ast.unparse(value.func.value) == ast.unparse(target) and \
            self.uploads(value.func.attr, value)

    def uploads(self, meth, node):
        """`t.to(device, non_blocking=True)`, `t.cuda(non_blocking=True)`: a
        copy that may be asynchronous, to a device, changing nothing but
        the device (with a dtype, a device tensor would be converted into a
        new one)."""
        if not may_be_async(node) or any(k.arg in ("dtype", "memory_format", "copy") for k in node.keywords):
            return False
        if meth == "cuda":
            return len(node.args) <= 1
        if len(node.args) > 1:
            return False
        target = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
        if target is None or self.targets_host(node):
            return False
        if isinstance(target, ast.Call) and self.m.canonical(dotted(target.func) or "") == "torch.device":
            return True
        if isinstance(target, ast.Constant):
            return isinstance(target.value, str) and target.value.partition(":")[0] == "cuda"
        text = (dotted(target) or "").lower()
        return "device" in text or "cuda" in text

    def targets_host(self, node):
        """`.to("cpu")`, `.to(torch.device("cpu"))`, `.to(device="cpu")`."""
        return targets_host(node, self.m.canonical)

    def foreign_container_method(self, recv, meth, node):
        """pop / clear on a container not made here (`self.stash.pop(k)`):
        the element's storage goes when the result is dropped."""
        args, kwargs = self.eval_args(node)
        base = next(a[1] for a in recv if a[0] == "p")
        if meth == "clear":
            # Only the elements this analysis saw put there (`d[k] = t`), or
            # those of an object's container that its other methods fill
            # with tensors (objects.stored_streams): a list of parameters
            # cleared frees none of them.
            prefix = "%d:%s[" % (self.frames[0].fid, base)
            for k in [k for k in self.st.names if k.startswith(prefix) or k.startswith(
                    "0:%s[" % base)]:
                self.release_value(self.st.names.get(k), node, k.partition(":")[2], "clear", k)
            if self.attribute_facts(base):
                for atom in [a for a in self.st.buffers if isinstance(a[1], str) and
                             a[1].startswith("p:%s[" % base)]:
                    self.release_path(atom[1][2:], node, "clear")
            return EMPTY
        if meth in ("pop", "popleft") and (node.args or meth == "popleft" or self.attribute_facts(base)):
            if node.args:
                k = node.args[0]
                text = repr(k.value) if isinstance(k, ast.Constant) else k.id if isinstance(k, ast.Name) else "?"
            else:
                text = "0" if meth == "popleft" else "-1"  # the oldest entry, or the newest
            path = "%s[%s]" % (base, text)
            if self.discarding is node:
                self.release_path(path, node, "pop")
                return EMPTY
            self.taken_out.add(path)
            return self.foreign_value(path)
        return self.call_result(node)

    def container_method(self, recv, meth, node, name):
        args, kwargs = self.eval_args(node)
        if meth in CONTAINER_ADD:
            value = args[-1] if args else EMPTY
            if meth in ("extend", "extendleft"):
                value = self.elements(value)
            self.container_add(recv, value, node)
            return EMPTY
        if meth in CONTAINER_TAKE:
            # The taken entry is no longer the container's: a queue hands its
            # oldest entry over (entries of one site are one summary here).
            out = EMPTY
            for c in recv:
                if c[0] == "c":
                    out = out | self.st.containers.get(c, EMPTY)
                    self.st.containers[c] = EMPTY
            return out
        if meth == "clear":
            for c in recv:
                if c[0] == "c":
                    taken = self.st.containers.get(c, EMPTY)
                    self.st.containers[c] = EMPTY
                    self.drop(taken, node, name, "del")
            return EMPTY
        if meth == "copy":
            out = EMPTY
            for c in recv:
                if c[0] == "c":
                    out = out | self.st.containers.get(c, EMPTY)
            return self.new_container(node, out)
        if meth in ("values", "items", "keys"):
            return self.elements(recv) if meth != "keys" else EMPTY
        if meth in CONTAINER_LOOK and meth != "copy":
            return self.elements(recv)
        return EMPTY

    def storage_resize(self, tensor_node, node):
        target = self.materialize(self.eval(tensor_node))
        args, kwargs = self.eval_args(node)
        size = node.args[0] if node.args else None
        atoms = tensor_atoms(target)
        if isinstance(size, ast.Constant) and size.value == 0:
            name = dotted(tensor_node) or "storage"
            for atom in atoms:
                self.free(atom, self.site(node, "free"), name, "resize")
            return EMPTY
        # Resized up: a new allocation on the current stream, held by the
        # tensor (FSDP's flat parameters). One not made here is kept escaped:
        # only an explicit resize_(0) frees it.
        path = dotted(tensor_node)
        stream = self.ctx
        if atoms:
            for atom in atoms:
                buf = self.st.buffers.get(atom)
                if buf is not None:
                    buf = buf.copy()
                    buf.alloc = frozenset((stream,)) if stream is not None else frozenset()
                    buf.uses = {}
                    self.st.buffers[atom] = buf
        elif path is not None:
            new = self.alloc(node, stream)
            for atom in new:
                self.st.buffers[atom].escaped = self.st.buffers[atom].kept = True
            self.st.names[self.key(path)] = new
        return EMPTY

    # ----- inlining -------------------------------------------------------
    def holds_parts_of(self, values):
        """Whether this analysis stored something in a field or element of
        an object handed over (`ctx.outputs[k] = made` before
        `self.consume(ctx)`): the helper may read it back."""
        paths = {a[1] for v in values for a in v if a[0] == "p" and not a[1].startswith("<")}
        if not paths:
            return False
        for k in self.st.names:
            rest = k.partition(":")[2]
            for path in paths:
                if len(rest) > len(path) and rest.startswith(path) and rest[len(path)] in ".[":
                    return True
        return False

    def inline(self, callee, node, args, kwargs, self_node, module=None, class_name=None, outer_fid=None,
               self_outer=None, self_value=None, stage=False):
        """Interprets a function the run defines in place, its parameters
        bound to the call's arguments: a helper of this module or another, a
        method through `self` or an instance, a nested function or lambda
        (with its enclosing frame's names), a function passed in. None when
        it is not inlined (too deep, recursive, too long, a generator)."""
        module = module or self.m
        # Reading a class's methods for facts (objects.py) follows helpers
        # two calls deep, not three: what a method stores on self is near it.
        limit = MAX_INLINE_DEPTH - 1 if self.collect is not None else MAX_INLINE_DEPTH
        if (self.f.depth >= limit and not stage) or any(fr.func is callee for fr in self.frames):
            return None
        if isinstance(callee, ast.AsyncFunctionDef):
            return None
        size = (getattr(callee, "end_lineno", None) or callee.lineno) - callee.lineno
        if size > MAX_INLINE_LINES and not stage:
            return None
        is_lambda = isinstance(callee, ast.Lambda)
        if not is_lambda and module.is_generator(callee):
            return None
        cls = class_name if class_name is not None else self.f.class_name
        values = list(args) + list(kwargs.values())
        streamy = stage or is_lambda or module.deals_with_streams(callee, cls)
        if not streamy and not any(not self.st.buffers.keys().isdisjoint(self.reachable(v)) for v in values) \
                and not self.ctx_is_side() and not self.holds_parts_of(values):
            # Nothing of ours goes in and no stream is named: a plain call.
            return None
        if not streamy and self.inlined_lines + size > INLINE_BUDGET_LINES:
            # A helper that names no stream, taken in only for what it does
            # with our tensors, past the budget.
            return None
        fid = self.next_fid
        self.next_fid += 1
        if not streamy:
            self.inlined_lines += size
        self.inlined.add((module.path, callee.lineno))
        self.inlined_calls.add(id(node))
        if stage:
            # One stage of an object's life (see run_stages): reported where
            # it is, as the analyzed function's own code.
            chain, depth = self.f.chain, self.f.depth
        else:
            chain = self.f.chain + ((id(node), node),) if self.f.chain else ((id(node), node),)
            depth = self.f.depth + 1
        if self_outer is None:
            self_outer = self_node is not None and self.f.self_outer
        frame = Frame(module, callee, fid, depth, cls, chain, self_outer, outer_fid)
        frame.stage = stage
        frame.streams = [self.ctx]
        frame.entry_buffers = frozenset(self.st.buffers)
        params = callee.args
        positional = list(params.posonlyargs) + list(params.args)
        before = self.st.copy()
        caller = self.f
        self.frames.append(frame)
        static = any(dotted(d) == "staticmethod" for d in getattr(callee, "decorator_list", ()))
        if self_node is not None and positional and not static:
            # A static method called through self (`self._record(ctx, s)`)
            # has no self to skip.
            positional = positional[1:]
        elif self_value is not None and positional and not static:
            self.st.names[self.key(positional[0].arg)] = self_value
            positional = positional[1:]
        if isinstance(node, ast.Call) and not stage:
            frame.constants = self.constant_arguments(callee, positional, node)
            # Element keys the helper takes from its parameters, as the
            # caller writes them (key_text).
            for name, a in argument_nodes([p.arg for p in positional], node).items():
                frame.key_texts[name] = self.key_text(a, caller)
        try:
            defaults = list(params.defaults)
            first_default = len(positional) - len(defaults)
            for i, p in enumerate(positional):
                if i < len(args):
                    value = args[i]
                elif p.arg in kwargs:
                    value = kwargs[p.arg]
                elif i >= first_default:
                    value = self.eval(defaults[i - first_default])
                else:
                    value = EMPTY
                self.st.names[self.key(p.arg)] = value
            for p, d in zip(params.kwonlyargs, params.kw_defaults):
                if p.arg in kwargs:
                    value = kwargs[p.arg]
                elif d is not None:
                    value = self.eval(d)
                else:
                    value = EMPTY
                self.st.names[self.key(p.arg)] = value
            if params.vararg is not None:
                rest = tuple(args[len(positional):])
                self.st.names[self.key(params.vararg.arg)] = frozenset((("tup", None, rest),))
            if params.kwarg is not None:
                self.st.names[self.key(params.kwarg.arg)] = EMPTY
            if is_lambda:
                value = self.eval(callee.body)  # before self.st is read: the body may replace it
                result = self.finish_frame(frame, self.st, value, node)
            else:
                self.exec_block(callee.body)
                result = self.finish_frame(frame, self.st, None, node)
        finally:
            self.frames.pop()
        if self.st is None:
            # Every path raised: what follows the call runs only where a
            # caller catches; carry on from before the call.
            self.st = before
            return EMPTY
        return result
