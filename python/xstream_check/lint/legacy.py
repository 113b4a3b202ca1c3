"""Blocking streams and the legacy default stream (CuPy's `Stream()`
without `non_blocking=True`). CUDA orders such a stream with the legacy
default stream, CuPy's current one, in both directions: work enqueued on
the legacy stream waits for all earlier work of every blocking stream, and
work enqueued on a blocking stream waits for all earlier work of the
legacy stream. Two blocking streams are not ordered with each other; only
legacy work between them orders them. A mixin of analysis.FunctionAnalysis.

A use's `ordered` (facts.Use) says whose later work runs after it. So:
- a use on a blocking stream is ordered on the current stream at once:
  every later legacy op waits for it (fresh_use);
- a legacy op orders every use already ordered on the current stream, or
  made there, before all later work of every blocking stream (legacy_op);
  LEGACY_PAST marks such a use, so that a blocking stream first met later
  is added to it (note_blocking);
- a blocking stream made to wait for a use passes it on to the legacy
  stream's later work (blocking_waited).

Only data work (kernels, copies) is taken as such an op: an event record
or a wait on the legacy stream orders nothing here. In a module with no
blocking stream none of this runs."""

import ast

from .facts import new_use
from .vocabulary import CURRENT

# A name no code can bind, in a use's `ordered`: the use precedes the legacy
# default stream's work so far, which every blocking stream's later work
# waits for.
LEGACY_PAST = "0:@legacy-past"


def cupy_keyword_true(call, name):
    return any(k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)


def cupy_null_stream(call):
    """`cupy.cuda.Stream(null=True)`: the legacy default stream."""
    return cupy_keyword_true(call, "null") or (
        bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is True)


def cupy_blocking_stream(call):
    """A CuPy stream made without `non_blocking=True` (the second positional
    parameter): ordered with the legacy default stream."""
    if cupy_keyword_true(call, "non_blocking"):
        return False
    return not (len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and call.args[1].value is True)


def in_legacy_past(use):
    return use.stream == CURRENT or LEGACY_PAST in use.ordered


class LegacyStreams:
    """Blocking streams' ordering with the legacy stream (see the module's comment)."""

    def is_blocking(self, key):
        """Whether `key` names a blocking stream: one made here, or an
        attribute every assignment of the class binds to one (noted on its
        first mention)."""
        if key in self.blocking:
            return True
        if isinstance(key, str) and key.startswith("self.") and self.class_name is not None and \
                key in self.root.blocking_stream_attributes(self.class_name):
            self.note_blocking(key)
            return True
        return False

    def note_blocking(self, key):
        """A blocking stream met for the first time: its later work runs
        after everything the legacy stream has run so far."""
        if key in self.blocking:
            return
        self.blocking.add(key)
        self.order_legacy(lambda u: in_legacy_past(u) and key not in u.ordered, {key}, None)

    def fresh_use(self, stream):
        """The use of work enqueued now on `stream`."""
        use = new_use(stream)
        if stream != CURRENT and self.blocking and self.is_blocking(stream):
            use = use._replace(ordered=use.ordered | {CURRENT})
        return use

    def enqueued(self, stream, node):
        """Data work is enqueued on `stream`: the legacy stream's implicit
        orderings take effect before its uses are checked."""
        if stream == CURRENT:
            if self.blocking:
                self.legacy_op(node)
        elif isinstance(stream, str) and stream.startswith("self."):
            self.is_blocking(stream)

    def legacy_op(self, node):
        added = frozenset(self.blocking) | {CURRENT, LEGACY_PAST}
        self.order_legacy(lambda u: (u.stream == CURRENT or u.ordered_on(CURRENT)) and not added <= u.ordered,
                          added, node)

    def blocking_waited(self, stream):
        """`stream` was made to wait: if it is blocking, what it now runs
        after, the legacy stream's later work runs after too."""
        if stream == CURRENT or not self.is_blocking(stream):
            return
        self.order_legacy(lambda u: stream in u.ordered and CURRENT not in u.ordered, {CURRENT}, None)

    def order_legacy(self, applies, added, node):
        """Adds `added` to the streams every use `applies` to is ordered on.
        A freed block's pending use so ordered after its free stream is
        ordered there only now: a wait after the free, at `node`."""
        def order(use):
            return use._replace(ordered=use.ordered | added) if applies(use) else use

        self.all_uses(order)
        if not self.st.open:
            return
        kept, site = {}, None
        for key, use in self.st.open.items():
            use = order(use)
            if node is not None and use.ordered_on(key[2]):
                if site is None:
                    site = self.site(node, "wait")
                self.late.setdefault(key, site)
            else:
                kept[key] = use
        self.st.open = kept
