"""What the programs that remove one ordering from a released library share.

Each such program (diffusers_sync_dropped.py, torchao_sync_dropped.py,
trl_offload_sync_dropped.py) runs a clean-corpus program of
examples/torch/real/ unchanged, after patching the library so that one of
its own orderings returns at once. It first checks that the library's
source still makes the call it removes, and afterwards that the call came:
otherwise the run would prove nothing, and it exits 3 saying why.
"""
import importlib
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))

import torch  # noqa: E402


def shape_error(program: str, library: str, message: str) -> None:
    """Exits 3: the library is not what `program` patches."""
    version = getattr(importlib.import_module(library), "__version__", "(unknown version)")
    print(f"{program}: {library} {version} differs from what this program patches: {message}",
          file=sys.stderr, flush=True)
    sys.exit(3)


def require_call(program: str, library: str, cls, pattern: str) -> None:
    """Exits 3 unless the source of `cls` still makes the call `pattern`
    (a regular expression) matches."""
    if not re.search(pattern, inspect.getsource(cls)):
        shape_error(program, library, f"{cls.__name__} no longer calls {pattern}")


def instances_of(cls) -> list:
    """A list that receives every instance of `cls` made from now on (its
    __init__ wrapped), for a patch that tells the library's own streams and
    events from the rest of the process's."""
    made = []
    original_init = cls.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        made.append(self)

    cls.__init__ = init
    return made


class SkippedCalls:
    """Counts the calls a patch made return at once."""

    def __init__(self):
        self.count = 0

    def skipping(self, original, drops):
        """`original` (a method), except that a call for which drops(self, *args) holds
        returns None at once."""
        def call(receiver, *args, **kwargs):
            if drops(receiver, *args):
                self.count += 1
                return None
            return original(receiver, *args, **kwargs)
        return call


def run(program: str, library: str, modes, patch, target_main, removed) -> int:
    """`program MODE [target options]`: patch(MODE), then target_main(options).
    `removed(MODE)` names the removed call for the message when it never came;
    patch returns the SkippedCalls (or anything with a `count`) it counts with."""
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        print(f"usage: {program} {'|'.join(modes)} [options of the program it runs]",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(f"{program}: no CUDA device available", file=sys.stderr)
        return 2
    try:
        skipped = patch(sys.argv[1])
    except ImportError as error:
        print(f"{program}: {library} is not importable ({error})", file=sys.stderr)
        return 3
    status = target_main(sys.argv[2:])
    if skipped.count == 0:
        shape_error(program, library, f"the call {removed(sys.argv[1])} never came")
    return status
