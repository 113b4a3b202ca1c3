"""The dataflow facts of the Python check, the same as the C++ check's
(clang-plugin/analysis/dataflow.cpp): for every use of a buffer still
reachable at a point, which streams are ordered after it, which event records
capture it, and whether the host has waited for it.

Joins keep a use present on either incoming path (it may exist) but only the
ordering facts true on both (they must hold). So a free reports a use when on
at least one path nothing orders the free's stream after it."""
from typing import NamedTuple

# A wait by a stream the analysis cannot name orders every stream: a missed
# bug rather than a false report.
ANY_STREAM = "*"


class Use(NamedTuple):
    stream: str
    ordered: frozenset  # streams whose later work runs after the use
    captures: frozenset  # record sites whose event completes after it
    host: bool = False  # the host has waited for it

    def join(self, other):
        # A use the host has waited for is ordered before everything that
        # follows, so joining it with another path keeps that path's facts.
        if other.host:
            return self
        if self.host:
            return other
        if self is other:
            return self
        return Use(self.stream, meet(self.ordered, other.ordered), self.captures & other.captures, False)

    def ordered_on(self, stream):
        return self.host or stream in self.ordered or ANY_STREAM in self.ordered


def meet(mine, theirs):
    """The streams ordered on both paths; ANY_STREAM stands for all of them."""
    if ANY_STREAM in mine:
        return theirs | mine if ANY_STREAM in theirs else theirs
    if ANY_STREAM in theirs:
        return mine
    return mine & theirs


_NEW_USES = {}


def new_use(stream):
    # Uses are immutable: one per stream serves every site.
    use = _NEW_USES.get(stream)
    if use is None:
        use = _NEW_USES[stream] = Use(stream, frozenset((stream,)), frozenset())
    return use


class Buffer:
    """What is known about one tensor storage (an allocation site, and
    generation: the newest one, or a summary of older ones still alive)."""

    __slots__ = ("alloc", "uses", "recorded", "escaped", "stored", "writes", "foreign", "kept")

    def __init__(self, alloc=frozenset(), uses=None, recorded=frozenset(), escaped=False, stored=False,
                 writes=None, foreign=0, kept=False):
        self.alloc = alloc  # may: streams it was allocated on
        self.uses = uses if uses is not None else {}  # use site -> Use (reads, writes, unknown)
        self.recorded = recorded  # must: streams named by record_stream
        self.escaped = escaped  # stored where it outlives the function: never freed here
        self.stored = stored  # passed to an unknown function that may keep it
        # write site -> Use: the known writes (an operator's output, an
        # in-place operator, copy_'s destination) whose readers must wait
        self.writes = writes if writes is not None else {}
        # Not made here (a parameter, an attribute, a container's element, an
        # unknown call's result): allocated before the function started, on
        # the stream current then, and held by others too, so only an
        # explicit release frees it (see analysis.release_foreign).
        self.foreign = foreign
        # must: stored where it outlives the function on every path (escaped
        # is the may). A tensor the caller handed in that the object keeps on
        # one path only is released by the caller on the other.
        self.kept = kept

    def copy(self):
        return Buffer(self.alloc, dict(self.uses), self.recorded, self.escaped, self.stored, dict(self.writes),
                      self.foreign, self.kept)

    def join(self, other):
        if self is other:
            return self
        return Buffer(self.alloc | other.alloc, join_uses(self.uses, other.uses), self.recorded & other.recorded,
                      self.escaped or other.escaped, self.stored or other.stored,
                      join_uses(self.writes, other.writes),
                      max(self.foreign, other.foreign) if self.foreign and other.foreign else 0,
                      self.kept and other.kept)

    def __eq__(self, other):
        if self is other:
            return True
        return (self.alloc == other.alloc and self.uses == other.uses and self.recorded == other.recorded
                and self.escaped == other.escaped and self.stored == other.stored
                and self.writes == other.writes and self.foreign == other.foreign and self.kept == other.kept)


def join_uses(mine, other):
    # The dicts are never changed in place once a Buffer holds them
    # (Buffer.copy copies them), so an identical one is shared.
    if mine is other or not other:
        return mine
    if not mine:
        return other
    uses = dict(mine)
    for site, use in other.items():
        have = uses.get(site)
        uses[site] = use if have is None else have.join(use)
    return uses


def join_dicts(into, other, join_value):
    if other.items() <= into.items():
        return  # each of its entries is already there, equal: joined, the same
    for key, value in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = value
        elif mine is not value:
            into[key] = join_value(mine, value)


class State:
    """The abstract state at one program point.

    names: binding key -> value (a frozenset of atoms, see analysis.py)
    buffers: buffer atom -> Buffer
    containers: container atom -> value held by the container
    open: (free site, use site, stream) -> Use, a free already made, kept so
          that a later wait that orders it is found.
    made: origin -> (write site, Use), the writes of tensors not made here
          that are not buffers yet: ENTRY (whatever the caller wrote before
          the function started, on the stream current then) and each
          unknown call's result (written on the stream current at the call).
          Orderings apply to them as to buffers' writes; a tensor not made
          here takes its origin's write when it becomes a buffer."""

    __slots__ = ("names", "buffers", "containers", "open", "made")

    def __init__(self, names=None, buffers=None, containers=None, open_frees=None, made=None):
        self.names = names if names is not None else {}
        self.buffers = buffers if buffers is not None else {}
        self.containers = containers if containers is not None else {}
        self.open = open_frees if open_frees is not None else {}
        self.made = made if made is not None else {}

    def copy(self):
        # Buffers are copied on write (every change to one makes a new
        # Buffer first), so two states share those they did not change.
        return State(dict(self.names), dict(self.buffers),
                     dict(self.containers), dict(self.open), dict(self.made))

    def __eq__(self, other):
        return (self.names == other.names and self.buffers == other.buffers
                and self.containers == other.containers and self.open == other.open
                and self.made == other.made)


def join_states(states):
    """Joins the reachable states (None: unreachable); None if none is."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = live[0].copy()
    for s in live[1:]:
        join_dicts(out.names, s.names, frozenset.union)
        join_dicts(out.containers, s.containers, frozenset.union)
        if not s.buffers.items() <= out.buffers.items():
            for key, buf in s.buffers.items():
                mine = out.buffers.get(key)
                out.buffers[key] = buf if mine is None else mine.join(buf)
        join_dicts(out.open, s.open, Use.join)
        join_dicts(out.made, s.made, join_made)
    return out


def join_made(mine, other):
    return (mine[0], mine[1].join(other[1])) if mine[0] == other[0] else mine


# The origin of what the caller wrote before the function started (State.made).
ENTRY = "<entry>"


# The interpreter's values are frozensets of atoms (analysis.py's comment).
def tensor_atoms(value):
    return [a for a in value if a[0] == "t"]


def path_of(atom):
    """The path naming something not made here (`params[*].grad`), from its
    atom or the tensor made of it once used as one; None for the others."""
    if atom[0] == "p":
        return atom[1]
    return atom[1][2:] if atom[0] == "t" and isinstance(atom[1], str) else None


def has_kind(value, kind):
    for a in value:
        if a[0] == kind:
            return True
    return False
