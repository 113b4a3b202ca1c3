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
import sys

import torch

import library_mutant  # puts examples/torch/real on the path
from library_mutant import SkippedCalls

import trl_activation_offload

PROGRAM = "trl_offload_sync_dropped.py"
# What each mutant removes, and the line of OffloadActivations that makes it.
REMOVED = {
    "offload-wait": r"self\.s1\.wait_stream\(self\.s0\)",
    "reload-wait": r"self\.s0\.wait_stream\(self\.s1\)",
    "stash-wait": r"self\.s0\.wait_event\(ev\)",
    "node-wait": r"self\.s1\.wait_event\(event\)",
}


def patch(which: str) -> SkippedCalls:
    from trl.models import activation_offloading

    hooks_class = activation_offloading.OffloadActivations
    library_mutant.require_call(PROGRAM, "trl", hooks_class, REMOVED[which])
    managers = library_mutant.instances_of(hooks_class)

    def side(stream) -> bool:
        return any(stream is getattr(manager, "s1", None) for manager in managers)

    def stashed(event) -> bool:
        return any(event is stashed_event for manager in managers
                   for _, stashed_event in getattr(manager, "fwd_stash", {}).values())

    def node_event(event) -> bool:
        return any(event is node_done for manager in managers
                   for node_done in getattr(manager, "bwd_ev_stash", {}).values())

    # Whether a call is the one removed, by its receiver and argument. By
    # its event too where the method is wait_event: torch.cuda.Stream's
    # wait_stream waits through wait_event, on an event it records itself.
    drops = {
        "offload-wait": lambda stream, other: side(stream),
        "reload-wait": lambda stream, other: not side(stream) and side(other),
        "stash-wait": lambda stream, event: not side(stream) and stashed(event),
        "node-wait": lambda stream, event: side(stream) and node_event(event),
    }[which]
    method = "wait_stream" if which in ("offload-wait", "reload-wait") else "wait_event"
    skipped = SkippedCalls()
    setattr(torch.cuda.Stream, method, skipped.skipping(getattr(torch.cuda.Stream, method), drops))
    return skipped


def main() -> int:
    return library_mutant.run(PROGRAM, "trl", REMOVED, patch, trl_activation_offload.main,
                              lambda which: f"of OffloadActivations {REMOVED[which]}")


if __name__ == "__main__":
    sys.exit(main())
