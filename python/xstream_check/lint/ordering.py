"""How streams are ordered, in the interpreter's state: event records and
waits, stream waits, host synchronizations, and which streams an
expression names. A mixin of analysis.FunctionAnalysis."""

from .facts import ANY_STREAM, ENTRY, has_kind
from .vocabulary import CURRENT, EMPTY

# A name no code can bind: present on a path once the current stream has
# waited there for another stream (an event recorded on it, or the stream).
CURRENT_WAITED = "0:@current-waited"


class Ordering:
    """Stream ordering (see the module's comment)."""

    def all_uses(self, fn):
        st = self.st
        if st.made:
            for origin, (site, use) in list(st.made.items()):
                new = fn(use)
                if new is not use:
                    st.made[origin] = (site, new)
        for atom, buf in list(st.buffers.items()):
            if not buf.uses and not buf.writes:
                continue
            changed = None
            for site, use in buf.uses.items():
                new = fn(use)
                if new is not use:
                    if changed is None:
                        changed = dict(buf.uses)
                    changed[site] = new
            writes = None
            for site, use in buf.writes.items():
                new = fn(use)
                if new is not use:
                    if writes is None:
                        writes = dict(buf.writes)
                    writes[site] = new
            if changed is not None or writes is not None:
                nb = buf.copy()
                if changed is not None:
                    nb.uses = changed
                if writes is not None:
                    nb.writes = writes
                st.buffers[atom] = nb


    def record(self, stream, node):
        """An event recorded on `stream`: a set of candidates, or None when
        unknown (then it is taken to follow every use)."""
        site = self.site(node, "record")
        streams = {stream} if isinstance(stream, str) else stream
        if streams:
            self.record_streams[site] = frozenset(streams)

        def capture(use):
            if streams is None or any(use.ordered_on(s) for s in streams):
                if site in use.captures:
                    return use
                return use._replace(captures=use.captures | {site})
            if site in use.captures:  # this record replaces an older one
                return use._replace(captures=use.captures - {site})
            return use

        self.all_uses(capture)
        self.st.open = {k: capture(u) for k, u in self.st.open.items()}
        return frozenset((("e", site),))


    def wait(self, streams, event, node):
        records = frozenset(a[1] for a in event if a[0] == "e")
        if not records or not streams:
            return
        recorded_on = {s for r in records for s in self.record_streams.get(r, ())}
        if self.collect_waits is not None:
            self.note_wait(streams, recorded_on)
        for other in recorded_on:
            self.wait_log.append((frozenset(streams), other))
            if not streams <= {other}:
                self.waited_streams.add(other)
        if CURRENT in streams and recorded_on - {CURRENT}:
            self.note_current_waited()
        site = self.site(node, "wait")
        for stream in streams:
            def order(use):
                if records <= use.captures and stream not in use.ordered:
                    return use._replace(ordered=use.ordered | {stream})
                return use
            self.order_all(stream, order, site)
            self.blocking_waited(stream)


    def note_current_waited(self):
        """The current stream waited for another one (a hand-over), in the
        frame (helper) that made the wait."""
        self.st.names[CURRENT_WAITED] = EMPTY
        self.f.waited_current = True

    def note_wait(self, streams, waited):
        """While a class's facts are collected (objects.stored_streams)."""
        if self.collect_waits is not None:
            for waiter in streams:
                for w in waited:
                    if waiter != w and waiter != ANY_STREAM and isinstance(w, str):
                        self.collect_waits.add((waiter, w))

    def wait_stream(self, streams, other, node):
        if other is None or not streams:
            return
        self.note_wait(streams, (other,))
        self.wait_log.append((frozenset(streams), other))
        self.waited_streams.add(other)
        if CURRENT in streams and other != CURRENT:
            self.note_current_waited()
        site = self.site(node, "wait")
        for stream in streams:
            def order(use):
                if (other == ANY_STREAM or use.ordered_on(other)) and stream not in use.ordered:
                    return use._replace(ordered=use.ordered | {stream})
                return use
            self.order_all(stream, order, site)
            self.blocking_waited(stream)


    def order_all(self, stream, order, wait_site):
        self.all_uses(order)
        self.order_entry(stream)
        kept = {}
        for key, use in self.st.open.items():
            use = order(use)
            if (key[2] == stream or stream == ANY_STREAM) and use.ordered_on(key[2]):
                self.late.setdefault(key, wait_site)  # a wait after the free
            else:
                kept[key] = use
        self.st.open = kept


    def order_entry(self, stream):
        """A stream made to wait for anything here is taken as ordered after
        what the caller wrote (ENTRY): the function knows where its inputs
        come from (`s.wait_stream(self.memcpy_stream)` for a batch the
        caller copied there), and the caller's current stream is only the
        default guess."""
        made = self.st.made.get(ENTRY)
        if made is None or stream == ANY_STREAM:
            return
        site, use = made
        if stream not in use.ordered:
            self.st.made[ENTRY] = (site, use._replace(ordered=use.ordered | {stream}))
        for atom, buf in list(self.st.buffers.items()):
            w = buf.writes.get(site)
            if w is not None and stream not in w.ordered:
                nb = buf.copy()
                nb.writes[site] = w._replace(ordered=w.ordered | {stream})
                self.st.buffers[atom] = nb

    def host_sync(self, synced):
        self.all_uses(lambda u: u._replace(host=True) if not u.host and synced(u) else u)
        # A host wait after the free ends the hazard but is not "the wait".
        self.st.open = {k: u for k, u in self.st.open.items() if not synced(u)}


    def host_wait_on(self, expr, node):
        value = self.eval(expr)
        records = frozenset(a[1] for a in value if a[0] == "e")
        if records:
            self.host_sync(lambda u: records <= u.captures)
            return
        if has_kind(value, "ev"):
            return
        for stream in self.stream_keys(value, expr):
            self.host_sync(lambda u, s=stream: u.ordered_on(s))


    # ----- streams --------------------------------------------------------
    def stream_keys(self, value, node):
        """The streams an expression may be."""
        keys = {a[1] for a in value if a[0] == "s"}
        if keys:
            return keys
        paths = {a[1] for a in value if a[0] == "p"}
        if len(paths) == 1:
            path = next(iter(paths))
            if path.startswith("self.") and self.class_name is not None and \
                    path in self.root.current_stream_attributes(self.class_name):
                return {CURRENT}  # self.s0 = torch.cuda.default_stream()
            return paths
        return set()


    def waiting_streams(self, value, node):
        """The streams a wait may be made by. One from a container
        (`streams[i]`) or an unknown call may be the current stream or any
        other: such a wait orders every stream (a missed bug rather than a
        false report)."""
        keys = self.stream_keys(value, node)
        if not keys or any("[" in k or k.startswith("~") or (k.startswith("<") and k != CURRENT) for k in keys):
            return {ANY_STREAM}
        return keys


    def never_made(self, keys, value):
        """Streams named only by an attribute this module never assigns (a
        base class's, a framework's): which stream it is, the current one
        or another, is unknown."""
        # A call's result named for a stream (`cls.d2h_stream()`, a lazily
        # made side stream) is a stream of its own.
        if not keys or has_kind(value, "s"):
            return False
        modules = [self.m]
        if self.class_name is not None and any(k.startswith("self.") for k in keys):
            # A base class of the run assigns it in its own module.
            modules += self.m.base_modules(self.class_name)
        return all(
            "." in k and not any(m.assigns_attribute(k.rpartition(".")[2]) for m in modules) and
            not (k.startswith("<") and "stream" in k.lower() and "current" not in k.lower() and
                 "default" not in k.lower()) for k in keys)


    def stream_of(self, node):
        """One stream, or None when it is unknown or could be several."""
        keys = self.stream_keys(self.eval(node), node)
        return next(iter(keys)) if len(keys) == 1 else None
