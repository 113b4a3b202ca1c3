"""The modules of one run of the Python check, by the dotted names they are
imported as, so that a call into another module of the linted roots
(`from .x import f`, `import pkg.mod as m`, a class's base in another file)
is followed like a call into the same module."""

import re

from .module import BUILTIN_METHODS

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Re-exports (`from .impl import f` in a package's __init__) followed at most
# this many times.
MAX_REEXPORTS = 4


class Program:
    def __init__(self):
        self.modules = {}  # dotted name -> analysis.Module
        # names of the run's functions that make an ordering call, and the
        # module objects they were read from (see a_caller_orders)
        self._orderers = None
        self._callers = {}  # identifier -> modules naming it
        self._indexed = {}
        # The module whose text stands in for its file's while Linter.recheck
        # checks it, else None.
        self.text_replaced = None
        self._side_fields = None  # see side_filled_fields
        self._side_fields_of = {}
        self._subclasses = None  # see subclasses

    def add(self, module):
        self.modules.setdefault(module.name, module)
        module.program = self

    def function(self, canon, depth=0):
        """(module, def, None) for a function, (module, None, class name) for
        a class, by its absolute dotted name; None when the run does not
        define it."""
        mod, _, attr = canon.rpartition(".")
        m = self.modules.get(mod)
        if m is None and mod:
            # A namespace package (no __init__.py at the top, as in an
            # installed wheel) makes the run's names shorter than the
            # import's: megatron.core.x is the run's core.x.
            rest = mod
            while m is None and rest.count(".") > 1:
                rest = rest.partition(".")[2]
                m = self.modules.get(rest)
        if m is None:
            # pkg.mod.Class.method is looked up through the class.
            outer, _, cls = mod.rpartition(".")
            m = self.modules.get(outer)
            if m is not None and cls in m.classes:
                return m.method(cls, attr)
            return None
        fn = m.functions.get(attr)
        if fn is not None:
            return (m, fn, None)
        if attr in m.classes:
            return (m, None, attr)
        target = m.aliases.get(attr)
        if target is not None and target != canon and depth < MAX_REEXPORTS:
            return self.function(target, depth + 1)
        return None

    def module_names_stream(self, canon):
        """Whether the module an import names (or the module defining the
        name it imports) mentions a stream."""
        for name in (canon, canon.rpartition(".")[0]):
            m = self.modules.get(name)
            if m is not None:
                return "stream" in m.source_text or "Stream" in m.source_text
        return False

    def side_filled_fields(self):
        """The containers the run's modules fill while a side stream is
        current (Module.side_filled_fields), over every module; a module
        whose text was replaced since (the mutation harness's recheck)
        answers for itself."""
        if self._side_fields is None:
            self._side_fields = set()
            self._side_fields_of = {}
            for name, m in self.modules.items():
                self._side_fields_of[name] = m
                self._side_fields |= m.side_filled_fields()
        out = self._side_fields
        for m in self.replaced_since(self._side_fields_of):
            out = out | m.side_filled_fields()
        return out

    def subclasses(self, module_name, class_name):
        """[(module name, class name)] of the run's classes that derive from
        a class (through bases the run defines, at most four levels): a
        method of the class calling `self.f(...)` runs a subclass's f on
        an instance of that subclass. By module name, so that a module
        whose text was replaced (the mutation harness's recheck) is the
        one read."""
        if self._subclasses is None:
            from .module import dotted
            direct = {}
            for name, m in self.modules.items():
                for cls, node in m.class_nodes.items():
                    for base in node.bases:
                        text = dotted(base)
                        found = m.lookup_function(text) if text else None
                        if found is not None and found[1] is None:
                            direct.setdefault((found[0].name, found[2]), []).append((name, cls))
            self._subclasses = direct
        out, todo, seen = [], [(module_name, class_name, 0)], set()
        while todo:
            mod, cls, depth = todo.pop()
            for sub in self._subclasses.get((mod, cls), ()):
                if sub not in seen and depth < 4:
                    seen.add(sub)
                    out.append(sub)
                    todo.append(sub + (depth + 1,))
        return out

    def replaced_since(self, indexed):
        """The module standing replaced (Linter.recheck), as a list of at
        most one, when it is not the one `indexed` (name -> module) read."""
        m = self.text_replaced
        return [m] if m is not None and m is not indexed.get(m.name) else []

    def a_caller_orders(self, name, before=False, own=None, fits=None, itself=None, cls=None):
        """Whether some call of `name` in the run is followed in its caller
        by an ordering, or by a call of a function that makes one
        (analysis.ordered_after_a_call); `before`: preceded by one; `fits`:
        which calls' arities can be of the function meant; `itself`: (module,
        (name, line) of the calls the function makes of its own name, which
        are not its callers); `cls`: the method's class in `own`, whose
        method `super().name(...)` calls only from a subclass of it. The
        run's functions that order are collected once; a module whose text
        was replaced since (the mutation harness's recheck) answers for
        itself."""
        from .module import ordered_after_a_call
        if self._orderers is None:
            # Only modules that name an ordering call can define a function
            # that makes one; only modules that name a function can call it.
            self._orderers, self._callers = set(), {}
            for mod_name, m in self.modules.items():
                self._indexed[mod_name] = m
                text = m.source_text
                if "wait" in text or "synchronize" in text or "record" in text:
                    self._orderers |= m.call_index()[1]
                for word in set(WORD.findall(text)):
                    self._callers.setdefault(word, []).append(mod_name)
        replaced = self.replaced_since(self._indexed)
        orderers = self._orderers
        for m in replaced:
            orderers = orderers | m.call_index()[1]

        # With `own` (a method's module), `self.name(...)` in another module
        # calls another class's method of that name.
        def skip(m):
            skipped = m.self_call_lines() if own is not None and m is not own and m.name != own.name else ()
            if own is not None and name in BUILTIN_METHODS:
                # A method named like a dict's or a list's (`update`): its
                # callers are those through self.
                skipped = frozenset(skipped) | m.builtin_named_calls()
            if itself is not None and m.path == itself[0].path:
                skipped = frozenset(skipped) | itself[1]
            if own is not None and cls is not None:
                # `super().forward(x)` in a class that does not derive from
                # the method's (PipelineEngine's forward calling
                # DeepSpeedEngine's) is no caller of it.
                subs = set(self.subclasses(own.name, cls))
                skipped = frozenset(skipped) | {(n, line) for n, line, c in m.super_calls()
                                                if (m.name, c) not in subs}
            return skipped
        for mod_name in self._callers.get(name, ()):
            m = self.modules.get(mod_name)
            if m is self._indexed.get(mod_name) and name in m.call_index()[0] and \
                    ordered_after_a_call(m.call_index(), name, orderers, before, skip(m), fits):
                return True
        return any(name in m.call_index()[0] and
                   ordered_after_a_call(m.call_index(), name, orderers, before, skip(m), fits) for m in replaced)
