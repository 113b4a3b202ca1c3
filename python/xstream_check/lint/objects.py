"""What the methods of a class leave on `self`, for the methods that read it
back later: for each attribute, the streams the tensors stored there were
allocated on (and written on). An object's state outlives the call that
made it: a pipeline copies a batch under its memcpy stream in one method
(`self.batches.append(batch)`) and reads it on the current stream in
another (`self._model(self.batches[0])`), one training step later. Without
this a tensor kept on `self` is taken as allocated on the current stream of
the method that reads it.

The facts come from interpreting each method that stores to `self` (with
its helpers, as any analyzed function) and noting, at each store, the
allocation streams of the tensors stored: the current stream, or a stream
kept on `self` (another method's local stream names nothing here). The
methods of the class and of the bases the run defines are read; while they
are interpreted no facts are consulted (no recursion)."""

import ast

from .vocabulary import CONTAINER_ADD, CURRENT

# Bases followed, as Module.method does.
MAX_BASE_DEPTH = 4


def class_methods(module, class_name, depth=0, seen=None):
    """[(module, def, class name)] of a class's methods, its own first, then
    those of the bases the run defines that it does not override."""
    seen = set() if seen is None else seen
    out = []
    for name, fn in module.classes.get(class_name, {}).items():
        if name not in seen:
            seen.add(name)
            out.append((module, fn, class_name))
    node = module.class_nodes.get(class_name)
    if node is None or depth >= MAX_BASE_DEPTH:
        return out
    from .module import dotted
    for base in node.bases:
        name = dotted(base)
        found = module.lookup_function(name) if name else None
        if found is not None and found[1] is None:
            m, _, cls = found
            out.extend(class_methods(m, cls, depth + 1, seen))
    return out


def stored_attribute(func):
    """Whether a def stores to an attribute of self (`self.x = ...`,
    `self.x[k] = ...`, `self.x.append(...)`)."""
    for node in ast.walk(func):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            base = t.value if isinstance(t, ast.Subscript) else t
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self":
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CONTAINER_ADD:
            recv = node.func.value
            if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
                return True
    return False


def stored_streams(module, class_name):
    """attribute -> frozenset of stream keys (CURRENT, or `self.<stream>`)
    the tensors its class's methods store there were allocated on; {} while
    another class's facts are being collected."""
    cache = module.__dict__.setdefault("_stored_streams", {})
    if class_name in cache:
        return cache[class_name]
    program = module.program
    if getattr(program, "collecting", False) or getattr(module, "_collecting", False):
        return {}
    cache[class_name] = {}
    if program is not None:
        program.collecting = True
    else:
        module._collecting = True
    from .analysis import FunctionAnalysis, GaveUp
    facts = {}
    try:
        for m, fn, cls in class_methods(module, class_name):
            if not stored_attribute(fn) or not m.deals_with_streams(fn, cls):
                continue
            analysis = FunctionAnalysis(m, fn, cls, "%s.%s" % (cls, fn.name))
            analysis.collect = facts
            try:
                analysis.run()
            except (GaveUp, RecursionError):
                continue
    finally:
        if program is not None:
            program.collecting = False
        else:
            module._collecting = False
    # Only what says more than the default: a stream other than the current.
    result = {attr: frozenset(streams) for attr, streams in facts.items()
              if any(s != CURRENT for s in streams)}
    cache[class_name] = result
    return result
