"""diffusers' group offloading with one of its stream synchronizations removed.

    python3 diffusers_sync_dropped.py offload|onload [diffusers_group_offload.py options]

examples/torch/real/diffusers_group_offload.py, unchanged, in its default mode
(block_level, use_stream, record_stream=False), with one host
synchronization of diffusers' ModuleGroup taken out: while the named method
runs, torch.cuda.Stream.synchronize returns at once.

offload   ModuleGroup._offload_to_memory synchronizes the current (default)
          stream before it drops the group's device weights (param.data =
          the host copy). Without it each block's weights, allocated on the
          transfer stream, are freed while the default stream's GEMMs may
          still read them, and the next prefetch on the transfer stream is
          allocated in the same blocks: unordered frees, with the
          reallocation.
onload    ModuleGroup._onload_from_memory synchronizes the transfer stream
          before it starts the next group's copies; that is what orders the
          block about to run after the copies of its own weights, issued
          one block earlier. Without it the default stream's GEMMs read
          weights the transfer stream may not have written yet: uses before
          ready (of every block but the last, which synchronizes in
          GroupOffloadingHook.pre_forward).

The program checks that diffusers' code still has the shape the patch
relies on and exits 3 with a message when it does not or when the patched
method never ran.
"""
import contextlib
import inspect
import sys

import torch

import library_mutant  # puts examples/torch/real on the path
from library_mutant import SkippedCalls

import diffusers_group_offload

PROGRAM = "diffusers_sync_dropped.py"
# The method each mutant patches, and the synchronization its source must hold.
PATCHED = {
    "offload": ("_offload_to_memory", "current_stream().synchronize()"),
    "onload": ("_onload_from_memory", "self.stream.synchronize()"),
}


def shape_error(message: str) -> None:
    library_mutant.shape_error(PROGRAM, "diffusers", message)


@contextlib.contextmanager
def stream_synchronize_skipped():
    original = torch.cuda.Stream.synchronize
    torch.cuda.Stream.synchronize = lambda self: None
    try:
        yield
    finally:
        torch.cuda.Stream.synchronize = original


def patch(which: str) -> SkippedCalls:
    from diffusers.hooks import group_offloading

    method, synchronization = PATCHED[which]
    group_class = getattr(group_offloading, "ModuleGroup", None)
    original = getattr(group_class, method, None)
    if original is None:
        shape_error(f"ModuleGroup.{method} is gone")
    if synchronization not in inspect.getsource(original):
        shape_error(f"ModuleGroup.{method} no longer calls {synchronization}")
    runs = SkippedCalls()  # counts the patched method's runs

    def without_synchronize(self, *args, **kwargs):
        runs.count += 1
        with stream_synchronize_skipped():
            return original(self, *args, **kwargs)

    setattr(group_class, method, without_synchronize)
    return runs


def main() -> int:
    return library_mutant.run(PROGRAM, "diffusers", PATCHED, patch, diffusers_group_offload.main,
                              lambda which: f"ModuleGroup.{PATCHED[which][0]}")


if __name__ == "__main__":
    sys.exit(main())
