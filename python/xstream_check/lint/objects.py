"""What the methods of a class leave on `self`, for the methods that read it
back later: for each attribute, the streams the tensors stored there were
allocated on (and written on). An object's state outlives the call that
made it: a pipeline copies a batch under its memcpy stream in one method
(`self.batches.append(batch)`) and reads it on the current stream in
another (`self._model(self.batches[0])`), one training step later. Without
this a tensor kept on `self` is taken as allocated on the current stream of
the method that reads it.

The facts come from interpreting each short method (200 lines or less)
that deals with streams and stores on `self` or waits, once per class that
defines it (with its helpers, two calls deep), and noting, at each store to
`self`, the allocation streams of the tensors stored (the current stream,
or a stream kept on `self`: another method's local stream names nothing
here), and at each wait which stream waits for which: what one call of the
object made on a stream is ordered, at the next call, for the streams the
class makes wait for that stream (a missed bug rather than a false report:
the order of the calls is not followed). The
methods of the class and of the bases the run defines are read; while they
are interpreted no facts are consulted (no recursion)."""

import ast

from .module import STATEMENT_BLOCKS, walk
from .vocabulary import CONTAINER_ADD, CURRENT

# Bases followed, as Module.method does.
MAX_BASE_DEPTH = 4
# Methods longer than this are not read for facts (the bound of a helper
# interpreted at a call, analysis.MAX_INLINE_LINES): an object's state is
# kept by its small methods.
MAX_METHOD_LINES = 200


def stored_attribute(func, module=None):
    """Whether a def stores to an attribute of self (`self.x = ...`,
    `self.x[k] = ...`, `self.x.append(...)`). With its module: the calls
    from the module's index and the assignments from the statements alone,
    not a walk of every expression."""
    def self_attribute(node):
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"

    def stores(node):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        return any(self_attribute(t.value if isinstance(t, ast.Subscript) else t) for t in targets)

    def adds(node):
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in CONTAINER_ADD and self_attribute(node.func.value)

    if module is None or func not in module.scopes:
        return any(stores(node) or adds(node) for node in walk(func))
    if any(adds(call) for call in module.subtree(func)[2]):
        return True
    stack = [func]
    while stack:
        node = stack.pop()
        if stores(node):
            return True
        for field in node._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                stack.extend(x for x in v if isinstance(x, STATEMENT_BLOCKS))
    return False


class ObjectFacts:
    """streams: attribute -> frozenset of stream keys (CURRENT, or
    `self.<stream>`) the tensors the class's methods store there were
    allocated on; writers: the streams whose work last wrote them (a buffer
    allocated on the current stream and filled by a copy on the memcpy
    stream is the memcpy stream's to wait for); waiters: stream -> the
    streams some method of the class makes wait for it (directly or through
    others): an object's later call that reads what an earlier one made on
    a stream finds those streams ordered after it, as the methods that ran
    in between ordered them; tensors: the attributes that hold tensors
    operators made (not only unknown calls' results)."""

    def __init__(self, streams=None, writers=None, waiters=None, tensors=frozenset()):
        self.streams = streams or {}
        self.writers = writers or {}  # attribute -> the streams whose work last wrote it
        self.waiters = waiters or {}
        self.tensors = tensors  # attributes that hold tensors operators made (not only calls' results)


NO_FACTS = ObjectFacts()


def closure(waits):
    """(waiter, waited) pairs -> waited -> every stream that waits for it,
    directly or through another."""
    direct = {}
    for waiter, waited in waits:
        direct.setdefault(waited, set()).add(waiter)
    out = {}
    for start in direct:
        seen, stack = set(), list(direct[start])
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            stack.extend(direct.get(s, ()))
        out[start] = frozenset(seen - {start})
    return out


def waits_in(module, func):
    """Whether a def calls wait_stream, wait_event or wait, or a function
    whose name says it waits (`_wait_for_batch`)."""
    idents, _, calls = module.subtree(func)
    return any(i in ("wait_stream", "wait_event") or "wait" in i.lower() for i in idents)


def own_facts(module, class_name):
    """(attribute -> [streams, writers], waits) from the methods a class
    defines itself, read once per class (a base's methods are read once
    for all the classes that derive from it)."""
    cache = module.__dict__.setdefault("_own_facts", {})
    if class_name in cache:
        return cache[class_name]
    from .analysis import FunctionAnalysis, GaveUp
    facts, waits = {}, set()
    cache[class_name] = (facts, waits)
    for fn in module.classes.get(class_name, {}).values():
        # The methods that store on self, or wait (directly or in a helper
        # they call) for a stream.
        if not (stored_attribute(fn, module) or waits_in(module, fn)) or \
                not module.deals_with_streams(fn, class_name) or \
                (fn.end_lineno or fn.lineno) - fn.lineno > MAX_METHOD_LINES:
            continue
        analysis = FunctionAnalysis(module, fn, class_name, "%s.%s" % (class_name, fn.name))
        analysis.collect = facts
        analysis.collect_waits = waits
        try:
            analysis.run()
        except (GaveUp, RecursionError):
            pass
        analysis.flush_collected()
    return facts, waits


def class_lineage(module, class_name, depth=0, seen=None):
    """[(module, class name)]: the class, then the bases the run defines."""
    seen = set() if seen is None else seen
    if (module.name, class_name) in seen:
        return []
    seen.add((module.name, class_name))
    out = [(module, class_name)]
    node = module.class_nodes.get(class_name)
    if node is None or depth >= MAX_BASE_DEPTH:
        return out
    from .module import dotted
    for base in node.bases:
        name = dotted(base)
        found = module.lookup_function(name) if name else None
        if found is not None and found[1] is None:
            out.extend(class_lineage(found[0], found[2], depth + 1, seen))
    return out


def stored_streams(module, class_name):
    """The ObjectFacts of a class (its own methods' and its bases');
    NO_FACTS while another class's facts are being collected."""
    cache = module.__dict__.setdefault("_stored_streams", {})
    if class_name in cache:
        return cache[class_name]
    program = module.program
    if getattr(program, "collecting", False) or getattr(module, "_collecting", False):
        return NO_FACTS
    cache[class_name] = NO_FACTS
    if program is not None:
        program.collecting = True
    else:
        module._collecting = True
    facts, waits = {}, set()
    try:
        for m, cls in class_lineage(module, class_name):
            own, own_waits = own_facts(m, cls)
            for attr, (streams, writers, made) in own.items():
                mine = facts.setdefault(attr, [set(), set(), False])
                mine[0] |= streams
                mine[1] |= writers
                mine[2] = mine[2] or made
            waits |= own_waits
    finally:
        if program is not None:
            program.collecting = False
        else:
            module._collecting = False
    # Only what says more than the default: a stream other than the current.
    kept = [attr for attr, (streams, writers, _) in facts.items() if any(s != CURRENT for s in streams | writers)]
    streams = {attr: frozenset(facts[attr][0]) for attr in kept}
    # Writes on the current stream are left out: the default for what a
    # method did not make, judged only for its caller's tensors (the entry
    # write of analysis.seed_entry), and an object's tensors written on the
    # current stream on one path and on a side stream on another (a flag
    # the methods test apart) would be taken as written on both.
    writers = {attr: frozenset(facts[attr][1] - {CURRENT}) for attr in kept}
    tensors = frozenset(attr for attr in kept if facts[attr][2])
    result = ObjectFacts(streams, writers, closure(waits), tensors) if streams else NO_FACTS
    cache[class_name] = result
    return result
