"""The modules of one run of the Python check, by the dotted names they are
imported as, so that a call into another module of the linted roots
(`from .x import f`, `import pkg.mod as m`, a class's base in another file)
is followed like a call into the same module."""

# Re-exports (`from .impl import f` in a package's __init__) followed at most
# this many times.
MAX_REEXPORTS = 4


class Program:
    def __init__(self):
        self.modules = {}  # dotted name -> analysis.Module

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
