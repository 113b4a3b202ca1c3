"""The rules of the Python check, over the interpreter's state: a free not
ordered after a use on another stream, the byte rules (use before ready,
write after read), and a tensor left pending on a stream at the return.
A mixin of analysis.FunctionAnalysis; report.py words what they find."""
import ast
import re

from .facts import ANY_STREAM, ENTRY
from .vocabulary import CURRENT, DEVICE_SIGNAL_CALLS, FOREIGN_TENSOR, HOST_SOURCE_WORDS, NOT_TENSOR_PARAMETER_WORDS, \
    says_host_memory
from .module import accepts, ordered_after_a_call, walk


# A device-wide synchronize, through torch or a device module held anywhere
# (`get_accelerator().synchronize()`, `self._device_handle.synchronize()`).
DEVICE_WIDE_SYNC = re.compile(r"(?:\btorch\.(?:cuda|accelerator)|\bget_accelerator\(\)|"
                              r"\btorch\.get_device_module\([^()]*\)|"
                              r"[\w.]*(?:device_module|device_handle|accelerator_module)\w*)\s*\.\s*synchronize\(\s*\)")


class RawFree:
    __slots__ = ("free_site", "buffer", "free_stream", "use_site", "use_stream", "how")

    def __init__(self, free_site, buffer, free_stream, use_site, use_stream, how):
        self.free_site = free_site
        self.buffer = buffer
        self.free_stream = free_stream
        self.use_site = use_site
        self.use_stream = use_stream
        self.how = how


class RawPending:
    """A tensor the analyzed function leaves behind (its caller's, or
    stored where it outlives the call) with a use on a stream its
    allocation stream is not ordered after, and nothing recorded."""
    __slots__ = ("buffer", "use_site", "use_stream", "alloc_stream", "exit_site", "write")

    def __init__(self, buffer, use_site, use_stream, alloc_stream, exit_site, write=False):
        self.write = write  # a write on use_stream the current stream does not wait for
        self.buffer = buffer
        self.use_site = use_site
        self.use_stream = use_stream
        self.alloc_stream = alloc_stream
        self.exit_site = exit_site


class RawRace:
    """A use before its write is ready ("ready": first is the write, second
    the use) or a write over a pending use ("war": first is the use, second
    the write)."""
    __slots__ = ("kind", "buffer", "first_site", "first_stream", "second_site", "second_stream")

    def __init__(self, kind, buffer, first_site, first_stream, second_site, second_stream):
        self.kind = kind
        self.buffer = buffer
        self.first_site = first_site
        self.first_stream = first_stream
        self.second_site = second_site
        self.second_stream = second_stream


class Rules:
    """The rules (see the module's comment)."""

    def pending_at_return(self, end_node):
        """What the function hands back with a use still pending. A tensor it
        did not make, or one it stored where it outlives the call, that was
        used here on a stream other than its allocation stream, with no
        record_stream of that stream, no wait of the allocation stream and
        no event recorded after the use: whoever frees it later, on its
        allocation stream, frees it under that use. Judged at the callers
        instead when one of them orders something after the call (a caller
        that waits makes the helper right), and only for streams the
        function names itself (a stream passed in may be the caller's
        current one). Also an unknown call's result made while a side stream
        was current: it comes from that stream's pool."""
        name = getattr(self.func, "name", None)
        if name is None:
            return
        params = self.param_names()
        passed_in = self.passed_in
        # In a fixed order, so that which tensor a site is reported for does
        # not depend on the order sets were iterated in.
        for atom, buf in sorted(self.st.buffers.items(), key=lambda item: str(item[0])):
            if not buf.alloc or atom[1] in self.host_sites:
                continue
            kept = self.kept_by_object(atom, buf)
            # An element of a container a side stream fills counts when this
            # function took it out (`ctx = context.module_contexts.pop(n)`)
            # or read it itself after making the current stream wait; one a
            # helper only read, after a wait the helper did not make, stays
            # with the container's owner, who hands it over (and records it)
            # later.
            path = atom[1][2:] if isinstance(atom[1], str) else None
            handed_over = path in self.field_made and (path in self.taken_out or path not in self.read_in_helpers)
            side_made = buf.foreign and path is not None and (
                self.made_on_side(path) or kept or
                (handed_over and any(s.startswith("@") for s in buf.alloc)))
            if buf.foreign and not side_made:
                # Only the caller's own tensors: a parameter, or reached from
                # one. An attribute of `self` may be a buffer the object keeps
                # for good (a flat gradient bucket), and one only handed to
                # unknown calls may be no tensor at all.
                root = atom[1][2:].partition(".")[0].partition("[")[0] if isinstance(atom[1], str) else None
                if buf.foreign != FOREIGN_TENSOR or root not in params:
                    continue
            elif not buf.foreign and not buf.escaped:
                continue
            if buf.foreign and isinstance(atom[1], str) and says_host_memory(atom[1][2:]):
                # The caller's host buffer (`host`, `cpu_grads[i]`): pinned
                # memory, which PyTorch's host allocator keeps until the
                # copies enqueued on it are done.
                continue
            for site, use in buf.uses.items():
                us = use.stream
                node = self.site_inner[site]
                # A non_blocking copy of a tensor not made here: one side is
                # likely pinned host memory, which PyTorch's host allocator
                # keeps until the copy is done.
                # A copy's source not made here may be host memory too;
                # not when the copy goes into host memory (its source is the
                # device's).
                if not isinstance(node, ast.Call) or (buf.foreign and id(node) not in self.copies_to_host and (any(
                        k.arg == "non_blocking" for k in node.keywords) or (id(node), atom) in self.copy_sources)):
                    continue
                if (id(node) in self.unknown_use_nodes and (not side_made or kept)) or \
                        us in (ANY_STREAM, None) or self.from_unknown_factory(us) or self.event_kept(use, buf) or \
                        use.host or us in buf.recorded or passed_in(us):
                    continue
                # The caller's tensor that the object keeps on some paths
                # only (a stash under a flag): on the others the caller
                # releases it at once, and a wait the object makes later,
                # for what it keeps, does not cover it.
                partly_kept = buf.foreign and buf.escaped and not buf.kept
                for fs in buf.alloc:
                    if fs in (ANY_STREAM, None) or passed_in(fs) or self.from_unknown_factory(fs) or \
                            (not partly_kept and self.class_orders_later(fs, us, free=True)):
                        continue
                    if fs == CURRENT and us.startswith("self.") and not partly_kept and self.ordered_elsewhere(us):
                        # Made from the current stream's pool and used on a
                        # stream of the object: what makes the current stream
                        # wait for that stream in another method (a wait
                        # helper the object hands it to, a device
                        # synchronize) orders its free too.
                        continue
                    if fs != us and not use.ordered_on(fs) and site not in self.pending:
                        label = self.buffer_name(atom)
                        if label == "tensor":
                            label = self.exit_names.get(atom, label)
                        self.pending[site] = RawPending(label, site, us, fs,
                                                        self.site(end_node, "exit"))
        self.writes_pending_at_return(end_node)
        if self.pending and self.a_caller_orders():
            self.pending = {}


    def from_unknown_factory(self, stream):
        """A stream a callable named by a plain name the run does not define
        returned (`<stream_factory()>`, a function handed in): it may be the
        caller's current stream, as a default factory's is. Not one a
        function of the run makes, nor a method's."""
        if not stream.startswith("<") or not stream.endswith("()>"):
            return False
        name = stream[1:-3]
        if not name.isidentifier():
            return False  # `cls.d2h_stream()`, `pool.stream()`: a method of an object of the run, or a library's
        return self.m.lookup_function(name) is None

    def event_kept(self, use, buf):
        """Whether an event recorded after the use outlives the function
        where it can order the tensor's free: handed back to the caller,
        who holds the tensor (it may wait before dropping it), kept by the
        object or by whoever made the event, or with a tensor kept on every
        path. An event only a closure or an unknown call keeps, without the
        tensor (a callback that waits for it when a future completes),
        orders nothing the caller frees."""
        if not use.captures:
            return False
        if buf.kept or use.captures & self.returned_records:
            return True
        if self._kept_records is None:
            roots = [a for k, v in self.st.names.items() for a in v]
            self._kept_records = {a[1] for a in self.reachable(roots) if a[0] == "e"}
        # An event this analysis did not make, recorded in place
        # (`self._done.record(s)`, `for ev in events: ev.record()` over a
        # list the function was handed), is kept by whoever made it.
        return bool(use.captures & (self._kept_records | self.foreign_records))

    def writes_pending_at_return(self, end_node):
        """What the function hands back written on another stream: a tensor
        it did not make (its caller's, or one an object keeps), or one it
        returns or stores where it outlives the call, last written on a
        stream other than the current one, with nothing making the current
        stream wait for that write (no wait_stream, no wait of an event
        recorded after it, no host synchronize). Whoever reads it next, on
        the current stream, may read it before it is written. The same
        exceptions as the pending uses: judged at the callers when one of
        them orders something after the call, and not for a stream passed
        in or one another method of the class makes the current stream
        wait for."""
        if getattr(self.func, "name", None) is None or self.signals_through_memory():
            return
        passed_in = self.passed_in
        for atom, buf in self.st.buffers.items():
            if atom[1] in self.host_sites or not (buf.foreign or buf.escaped or atom in self.returned):
                continue
            if buf.recorded:
                # Recorded on a stream: its life across streams is handed to
                # the allocator, and its readers are taken as ordered with it.
                continue
            for site, w in buf.writes.items():
                ws = w.stream
                # Only the writes made here: one that came with the tensor
                # (an object's state, an unknown call's result) is judged
                # where it is read.
                if ws in (ANY_STREAM, None, CURRENT) or w.host or w.ordered_on(CURRENT) or passed_in(ws) or \
                        self.from_unknown_factory(ws) or \
                        site in self.pending or site in self.made_sites:
                    continue
                if w.captures or self.ordered_elsewhere(ws):
                    continue
                label = self.buffer_name(atom)
                if label == "tensor":
                    label = self.exit_names.get(atom, label)
                self.pending[site] = RawPending(label, site, ws, CURRENT, self.site(end_node, "exit"), write=True)

    def ordered_elsewhere(self, stream):
        """Whether code outside the analyzed function may make the current
        stream (or the host) wait for `stream`: another method of the class
        orders the two (class_orders_later), or the class (for an attribute
        of self) or the module (for a module-level name) synchronizes with
        it, waits for it, records an event on it or hands it to a call other
        than a stream context (`_wait_for_batch(batch, self._memcpy_stream)`).
        A stream the function does not name itself (a closure's, one an
        unknown call returned) may be the caller's current one."""
        if self.class_orders_later(CURRENT, stream):
            return True
        name = stream.lstrip("~")
        root = name.partition(".")[0].partition("[")[0]
        if not root.isidentifier():
            return True
        # What follows reads only the class's or the module's text: kept per
        # module (the regular expressions over a whole module are slow).
        key = ("ordered_elsewhere", self.class_name if root == "self" else None, name,
               root != "self" and root in self.root.bound_names(self.func))
        cache = self.root._stream_cache
        if key not in cache:
            cache[key] = self.text_orders(name, root, key[3])
        return cache[key]

    def text_orders(self, name, root, bound):
        """ordered_elsewhere's reading of the class's or the module's text
        for `name` (`bound`: a local of the analyzed function)."""
        if root == "self":
            node = self.root.class_nodes.get(self.class_name) if self.class_name is not None else None
            if node is None:
                return True
            text = "\n".join(self.root.lines[node.lineno - 1:node.end_lineno or node.lineno])
            # A stream the class does not make itself (set by a base, or
            # handed to the constructor: `self.s = stream`) belongs to the
            # protocol of whoever made it.
            made = [m.group(1) for m in re.finditer(re.escape(name) + r"\s*(?::[^=\n]*)?=(?!=)\s*([^\n]*)", text)]
            if not made or any(re.match(r"(?!None\b)[\w.]+\s*(#.*)?$", m) for m in made):
                return True
        else:
            text = "\n".join(self.root.lines)
            if not bound and not re.search(r"^%s\s*[:=]" % re.escape(root), text, re.M):
                return True
        k = re.escape(name)
        if root == "self" and DEVICE_WIDE_SYNC.search(text):
            # The object synchronizes the whole device somewhere (before its
            # optimizer reads what its streams reduced): every stream it
            # owns is ordered there.
            return True
        if re.search(k + r"\s*\.\s*(synchronize|record_event|query)\(", text) or \
                re.search(r"wait_stream\(\s*" + k + r"\s*\)", text) or \
                re.search(r"\.record\(\s*(stream\s*=\s*)?" + k + r"\s*\)", text):
            return True
        for m in re.finditer(r"([\w.]+)\s*\(([^()]*[,(]\s*|\s*)(\w+\s*=\s*)?" + k + r"\s*[,)]", text):
            if "stream" not in m.group(1).rpartition(".")[2].lower():
                return True
        return False

    def param_names(self):
        if self._params is None:
            args = getattr(self.func, "args", None)
            self._params = set() if args is None else \
                {a.arg for a in args.args + args.kwonlyargs + args.posonlyargs} - {"self", "cls"}
        return self._params

    def kept_by_object(self, atom, buf):
        """A tensor not made here that the object keeps in an attribute its
        other methods fill (objects.py facts)."""
        return bool(buf.foreign) and isinstance(atom[1], str) and bool(self.attribute_facts(atom[1][2:]))

    def passed_in(self, stream):
        """A stream the function was handed (a parameter, or reached from
        one) and never waits for: it may be the caller's current stream. One
        the function waits for, or records a tensor's use on
        (`t.record_stream(s)` is a no-op on the allocation stream), it
        treats as another stream."""
        if stream == CURRENT or stream in self.waited_streams or stream in self.streams_recorded_on:
            return False
        root = stream.lstrip("~").partition(".")[0].partition("[")[0]
        # "forward:side": a parameter of one stage of an object's life
        # (Module.stages), handed in by the framework's caller.
        return root in self.param_names() or (":" in root and root.partition(":")[0].isidentifier())

    def from_parameter(self, atom):
        """The atom of a tensor reached from a parameter (`x`, `x[i]`,
        `x.grad`, an element of `*inputs`)."""
        path = atom[1][2:] if isinstance(atom[1], str) and atom[1].startswith("p:") else None
        if path is None:
            return False
        root = path.partition(".")[0].partition("[")[0]
        args = getattr(self.func, "args", None)
        varargs = {a.arg for a in (args.vararg,) if a is not None} if args is not None else set()
        if root in self.param_names() or root in varargs or (":" in root and root.partition(":")[0].isidentifier()):
            return True
        # A closure's free name that is a parameter of a def around it.
        return root not in self.root.bound_names(self.func) and root in self.root.enclosing_parameters(self.func)

    def own_state(self, atom):
        """A tensor kept on self that no method of the class makes on a side
        stream (objects.stored_streams): last written on the current stream,
        as the caller's are (a gradient buffer backward fills, weights the
        optimizer updates)."""
        path = atom[1][2:] if isinstance(atom[1], str) and atom[1].startswith("p:") else None
        if path is None or not path.startswith("self.") or self.class_name is None:
            return False
        buf = self.st.buffers.get(atom)
        return buf is not None and buf.foreign == FOREIGN_TENSOR and not self.attribute_facts(path)

    def tensor_like_parameter(self, atom):
        """A parameter (or an element of one, `*inputs` included) not named
        like a device, a dtype, a module, an iterator, ...
        (NOT_TENSOR_PARAMETER_WORDS)."""
        path = atom[1][2:] if isinstance(atom[1], str) and atom[1].startswith("p:") else None
        if path is None:
            return False
        if not self.from_parameter(atom):
            return False
        root = path.partition(".")[0].partition("[")[0]
        words = root.lower() + " " + path.rpartition(".")[2].lower()
        return not any(w in words for w in NOT_TENSOR_PARAMETER_WORDS)

    def entry_races_at_callers(self):
        """A use on another stream of what the caller wrote is judged at the
        callers when one of them orders something before the call (a
        caller that waits makes the function right)."""
        if not self.entry_races or getattr(self.func, "name", None) is None:
            return
        if self.a_caller_orders(before=True):
            for key in self.entry_races:
                self.races.pop(key, None)

    def a_caller_orders(self, before=False):
        """Whether a call of the analyzed function in the run is followed
        (`before`: preceded) in its caller by an ordering
        (Program.a_caller_orders), counting only calls whose arguments can
        bind to its parameters (accepts). A method is called through self
        in its own module, or through an instance anywhere: `self.f(...)`
        in another module calls another class's f."""
        fn = self.func.name
        own = self.root if self.class_name is not None else None
        fits = accepts(self.func, self.class_name is not None)
        itself = self.calls_of_itself()
        program = self.root.program
        if program is not None:
            return program.a_caller_orders(fn, before=before, own=own, fits=fits, itself=(self.root, itself),
                                           cls=self.class_name)
        index = self.root.call_index()
        return ordered_after_a_call(index, fn, index[1], before=before, skip=itself, fits=fits)

    def calls_of_itself(self):
        """(name, line) of the calls of the analyzed function's own name made
        inside it, or, for a method, inside the same-named method of a
        subclass in its module, through another object than self
        (`opt.step(closure)` in a `step` that steps its inner optimizers,
        `self.module.forward(x)` in a wrapper's forward): they are no
        callers of it whose orderings it lacks. Such a call delegates to
        another object's method; a recursive call runs this very text, whose
        orderings the analysis has seen."""
        fn = self.func.name
        defs = [self.func]
        if self.class_name is not None:
            for cls in self.root.class_nodes.values():
                if cls.name != self.class_name and any(
                        getattr(b, "id", None) == self.class_name or getattr(b, "attr", None) == self.class_name
                        for b in cls.bases):
                    defs += [d for d in cls.body if isinstance(d, ast.FunctionDef) and d.name == fn]

        def delegates(n):
            if not isinstance(n, ast.Call):
                return False
            if getattr(n.func, "id", None) == fn:
                return True
            recv = getattr(n.func, "value", None)
            return getattr(n.func, "attr", None) == fn and not (
                isinstance(recv, ast.Name) and recv.id in ("self", "cls") or
                isinstance(recv, ast.Call) and getattr(recv.func, "id", None) == "super")
        return frozenset((fn, n.lineno) for d in defs for n in walk(d) if delegates(n))

    def class_orders_later(self, waiter, waited, free=False):
        """Whether another method of the class may order `waiter` after
        `waited` (one of them an attribute of self): the object keeps the
        tensor and orders later, which this function cannot see
        (`self.copy_stream.wait_stream(...)` before it allocates again,
        `...wait_stream(self.copy_stream)` or an event recorded on it before
        the next step reads or frees). `free`: for a free, where the block
        goes back to `waiter`'s pool: when that is a stream of the object
        that waits for nothing in the class's text, no wait of another
        stream for `waited` orders it (`current.wait_stream(self.lookup)`
        leaves `self.dist`, which allocated, unordered)."""
        if self.class_name is None:
            return False
        node = self.root.class_nodes.get(self.class_name)
        if node is None:
            return False
        text = self.root.class_text.get(self.class_name)
        if text is None:
            text = self.root.class_text[self.class_name] = "\n".join(
                self.root.lines[node.lineno - 1:node.end_lineno or node.lineno])
        a, u = waiter.lstrip("~"), waited.lstrip("~")
        key = ("class_orders_later", self.class_name, a, u, free)
        found = self.root._stream_cache.get(key)
        if found is None:
            found = self.root._stream_cache[key] = self.class_text_orders(text, a, u, free)
        return found

    @staticmethod
    def class_text_orders(text, a, u, free=False):
        """class_orders_later's reading of the class's text."""
        if a.startswith("self."):
            if re.search(re.escape(a) + r"\s*\.\s*wait_(stream|event)\(", text):
                return True
            if free:
                return False
        if u.startswith("self."):
            k = re.escape(u)
            if re.search(r"wait_stream\(\s*" + k + r"\s*\)", text) or \
                    re.search(k + r"\s*\.\s*record_event\(", text):
                return True
            for m in re.finditer(r"([\w.]+)\s*\.record\(\s*(stream\s*=\s*)?" + k + r"\s*\)", text):
                # An event of the object recorded there counts when some
                # method waits on it (one kept elsewhere may be waited
                # anywhere).
                e = re.escape(m.group(1))
                if not m.group(1).startswith("self.") or re.search(r"wait_event\(\s*" + e + r"\s*\)", text) or \
                        re.search(e + r"\s*\.\s*(wait|synchronize|query)\(", text):
                    return True
        return False


    def signals_through_memory(self):
        """Whether the analyzed function calls a stream memory operation
        (vocabulary.DEVICE_SIGNAL_CALLS)."""
        if self._signals is None:
            text = self.root.source_text
            # Most modules name none of them: their functions call none.
            self._signals = any(name in text for name in DEVICE_SIGNAL_CALLS) and any(
                isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None))
                in DEVICE_SIGNAL_CALLS for n in walk(self.func))
        return self._signals

    def race(self, kind, atom, first_site, first_stream, second_site, second_stream):
        key = (kind, first_site, second_site)
        if key in self.races and self.races[key].buffer <= self.buffer_name(atom):
            # One report per pair of sites: the first buffer by name, so that
            # it does not depend on the order sets were iterated in.
            return
        if (first_stream == CURRENT and self.from_unknown_factory(second_stream or "")) or \
                (second_stream == CURRENT and self.from_unknown_factory(first_stream or "")):
            # The factory's stream may be the current one.
            return
        if first_site in self.made_sites:
            # Against what the caller wrote, or an unknown call's result: a
            # stream passed in may be the caller's current one, and one the
            # analysis cannot name may be any.
            if second_stream in (ANY_STREAM, None) or self.passed_in(second_stream) or \
                    first_stream in (ANY_STREAM, None):
                return
            buf = self.st.buffers.get(atom)
            if self.made_sites[first_site] == ENTRY and (not (self.from_parameter(atom) or self.own_state(atom)) or
                                                         any(w in atom[1].lower() for w in HOST_SOURCE_WORDS) or
                                                         says_host_memory(atom[1])):
                # What the caller wrote is judged for the caller's own
                # tensors: those of `self` (or a global) may have been
                # written anywhere, by another method on another stream; a
                # batch from a data loader, or a tensor named for the host,
                # was filled by the host.
                return
            if buf is not None and buf.foreign != FOREIGN_TENSOR and not self.tensor_like_parameter(atom):
                # Only handed to unknown calls: a tensor only when it is the
                # caller's by a tensor's name (`*inputs`, `output_grad`).
                return
            if self.made_sites[first_site] == ENTRY:
                self.entry_races.add(key)
        # Both inside one inlined call: the helper reports it itself.
        if self.site_nodes[first_site][0] is self.site_nodes[second_site][0]:
            return
        # Another method of the class orders the two streams (the object's
        # own protocol across calls, which one analysis does not see whole):
        # not known to be unordered.
        # Not for what a pack hook was just handed: autograd calls it right
        # after the forward wrote the tensor, with no method of the object in
        # between.
        # Nor for what a backward node reads right after unpack handed it back
        # (saved_tensor_hooks: autograd calls the node, no method between).
        if second_stream is not None and not self.reading_node and \
                self.class_orders_later(second_stream, first_stream) and not (
                self.made_sites.get(first_site) == ENTRY and self.from_parameter(atom) and
                getattr(self.func, "name", None) in self.root.pack_hooks()):
            return
        # Streams that signal each other through device memory (a kernel
        # spinning on a flag another stream writes): the order is in the
        # flags, not in the enqueue order this check follows.
        if self.signals_through_memory():
            return
        name = self.buffer_name(atom)
        if kind == "ready" and any(r.kind == "ready" and r.first_site == first_site and r.buffer == name and
                                   r.second_stream == second_stream and k != key for k, r in self.races.items()):
            # One missing wait, reported at the first use it leaves unordered
            # (`flat = w.contiguous()` then the collective on `flat`).
            return
        self.races[key] = RawRace(kind, name, first_site, first_stream, second_site, second_stream)


    def free(self, atom, site, name, how, keep=False):
        buf = self.st.buffers.get(atom)
        if buf is None:
            return
        if atom[1] in self.host_sites:
            # Host memory: PyTorch's host allocator keeps a pinned block until
            # the copies that used it are done.
            del self.st.buffers[atom]
            return
        self.free_sites.add(site)
        if self.f.depth > 0 and isinstance(atom[1], int):
            # A helper frees the caller's buffer: name it as the caller does.
            outer = self.buffer_name(atom)
            if outer != "tensor":
                name = outer
        # What an object keeps in an attribute that its methods fill from
        # several streams (a batch copied on the current stream, another
        # under a copy stream): which one this element came from is not
        # known, so the free is reported only when, whichever it is, some
        # use is unordered with its stream (and then for the first of them).
        # And one whose stream the object's methods make wait for the
        # stream that used it (`self.stream.wait_stream(current)` before the
        # next prefetch under self.stream): that wait comes before the
        # stream allocates again, at the object's next call (a missed bug
        # rather than a false report: the order of the calls is not
        # followed, as for the object's writes, seed_object_writes).
        kept = self.kept_by_object(atom, buf)
        waiters = self.object_facts().waiters if kept else {}

        def unordered(use, fs):
            return not use.ordered_on(fs) and use.stream not in buf.recorded and \
                fs not in waiters.get(use.stream, ()) and fs not in waiters.get(ANY_STREAM, ())

        alloc = sorted(buf.alloc, key=lambda s: (s == CURRENT, str(s)))
        if len(alloc) > 1 and kept:
            every = all(any(unordered(use, fs) for use in buf.uses.values()) for fs in alloc)
            alloc = alloc[:1] if every else []
        for fs in alloc:
            for use_site, use in buf.uses.items():
                if not unordered(use, fs):
                    continue
                key = (site, use_site, fs)
                self.st.open[key] = use
                if (self.f.depth == 0 or atom in self.frames[1].entry_buffers) and key not in self.found:
                    self.found[key] = RawFree(site, name, fs, use_site, use.stream, how)
        if keep:
            nb = buf.copy()
            nb.uses = {}
            self.st.buffers[atom] = nb
        else:
            del self.st.buffers[atom]
