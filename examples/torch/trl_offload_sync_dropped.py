"""trl's activation offloading with one of its orderings removed.

    python3 trl_offload_sync_dropped.py offload-wait|reload-wait|stash-wait|node-wait [options]

(the options are trl_activation_offload.py's)

examples/torch/real/trl_activation_offload.py, unchanged, with one of
OffloadActivations' orderings made to return at once, for the hooks' own
stream (s1) and events only (nothing else in the process is touched):

offload-wait  pack's s1.wait_stream(s0): the copy of an activation to the
              host, on s1, may read it before the compute stream's forward
              has written it: uses before ready.
reload-wait   unpack's s0.wait_stream(s1): the backward node reads a
              reloaded activation that s1 may not have copied back yet:
              uses before ready.
stash-wait    pack's s0.wait_event(ev) before it drops a stashed device
              activation: the block goes back to the compute stream's pool
              while s1's copy out of it may still run: unordered frees.
node-wait     s1.wait_event(ev) before a reloaded activation is dropped one
              node later (and at the end of the backward): the block goes
              back to s1's pool while the backward node's read of it may
              still run: unordered frees.

The program checks that trl's code still has the shape the patch relies
on and exits 3 with a message when it does not or when the removed call
never came.
"""
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))

import torch  # noqa: E402

import trl_activation_offload  # noqa: E402

# What each mutant removes, and the line of OffloadActivations that makes it.
REMOVED = {
    "offload-wait": r"self\.s1\.wait_stream\(self\.s0\)",
    "reload-wait": r"self\.s0\.wait_stream\(self\.s1\)",
    "stash-wait": r"self\.s0\.wait_event\(ev\)",
    "node-wait": r"self\.s1\.wait_event\(event\)",
}
skipped = 0


def shape_error(message: str) -> None:
    import trl
    print(f"trl_offload_sync_dropped.py: trl {trl.__version__} differs from what this "
          f"program patches: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


def patch(which: str) -> None:
    from trl.models import activation_offloading

    hooks_class = activation_offloading.OffloadActivations
    if not re.search(REMOVED[which], inspect.getsource(hooks_class)):
        shape_error(f"OffloadActivations no longer calls {REMOVED[which]}")
    managers = []
    original_init = hooks_class.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        managers.append(self)

    hooks_class.__init__ = init

    def side(stream) -> bool:
        return any(stream is getattr(manager, "s1", None) for manager in managers)

    def stashed(event) -> bool:
        return any(event is stashed_event for manager in managers
                   for _, stashed_event in getattr(manager, "fwd_stash", {}).values())

    # Whether a call is the one removed, by its receiver and argument.
    drops = {
        "offload-wait": lambda stream, other: side(stream),
        "reload-wait": lambda stream, other: not side(stream) and side(other),
        "stash-wait": lambda stream, event: not side(stream) and stashed(event),
        "node-wait": lambda stream, event: side(stream),
    }[which]
    method = "wait_stream" if which in ("offload-wait", "reload-wait") else "wait_event"
    original = getattr(torch.cuda.Stream, method)

    def call(self, argument, *args, **kwargs):
        global skipped
        if drops(self, argument):
            skipped += 1
            return None
        return original(self, argument, *args, **kwargs)

    setattr(torch.cuda.Stream, method, call)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in REMOVED:
        print("usage: trl_offload_sync_dropped.py offload-wait|reload-wait|stash-wait|node-wait "
              "[trl_activation_offload.py options]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("trl_offload_sync_dropped.py: no CUDA device available", file=sys.stderr)
        return 2
    try:
        patch(sys.argv[1])
    except ImportError as error:
        print(f"trl_offload_sync_dropped.py: trl is not importable ({error})", file=sys.stderr)
        return 3
    status = trl_activation_offload.main(sys.argv[2:])
    if skipped == 0:
        shape_error(f"OffloadActivations never made the call {REMOVED[sys.argv[1]]}")
    return status


if __name__ == "__main__":
    sys.exit(main())
