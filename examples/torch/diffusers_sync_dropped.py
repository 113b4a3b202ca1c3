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
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))

import torch  # noqa: E402

import diffusers_group_offload  # noqa: E402

# The method each mutant patches, and the synchronization its source must hold.
PATCHED = {
    "offload": ("_offload_to_memory", "current_stream().synchronize()"),
    "onload": ("_onload_from_memory", "self.stream.synchronize()"),
}
calls = 0


def shape_error(message: str) -> None:
    import diffusers
    print(f"diffusers_sync_dropped.py: diffusers {diffusers.__version__} differs from what this "
          f"program patches: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


@contextlib.contextmanager
def stream_synchronize_skipped():
    original = torch.cuda.Stream.synchronize
    torch.cuda.Stream.synchronize = lambda self: None
    try:
        yield
    finally:
        torch.cuda.Stream.synchronize = original


def patch(which: str) -> None:
    from diffusers.hooks import group_offloading

    method, synchronization = PATCHED[which]
    group_class = getattr(group_offloading, "ModuleGroup", None)
    original = getattr(group_class, method, None)
    if original is None:
        shape_error(f"ModuleGroup.{method} is gone")
    if synchronization not in inspect.getsource(original):
        shape_error(f"ModuleGroup.{method} no longer calls {synchronization}")

    def without_synchronize(self, *args, **kwargs):
        global calls
        calls += 1
        with stream_synchronize_skipped():
            return original(self, *args, **kwargs)

    setattr(group_class, method, without_synchronize)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in PATCHED:
        print("usage: diffusers_sync_dropped.py offload|onload "
              "[diffusers_group_offload.py options]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("diffusers_sync_dropped.py: no CUDA device available", file=sys.stderr)
        return 2
    patch(sys.argv[1])
    status = diffusers_group_offload.main(sys.argv[2:])
    if calls == 0:
        shape_error(f"ModuleGroup.{PATCHED[sys.argv[1]][0]} never ran")
    return status


if __name__ == "__main__":
    sys.exit(main())
