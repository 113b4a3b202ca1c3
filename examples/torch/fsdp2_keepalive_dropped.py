"""FSDP2 training with its reduce-scatter keepalive removed: a real bug.

    python3 fsdp2_keepalive_dropped.py [fsdp2_train.py options]

FSDP2's foreach_reduce allocates the reduce-scatter input on the default
(compute) stream and reads it on the reduce-scatter stream. It returns that
tensor, and FSDPParamGroup.post_backward keeps it, with the reduce-scatter's
event, in ReduceScatterState until the next group's post_backward has made
the default stream wait on that event: the keepalive. This program replaces
foreach_reduce as _fsdp_param_group imported it with a wrapper that hands
post_backward an empty tensor instead and drops the real one at once. The
block goes back to the default stream's pool while the reduce-scatter
stream may still read it, and the next layer's backward allocates from that
pool before any wait: with the default sizes every block there is 16 MiB,
the dropped input was the lowest free one when it was allocated, and only
the unsharded gradient freed just before it can come first, so the first or
second 16 MiB request of that backward gets it.

The training is examples/torch/real/fsdp2_train.py, unchanged. The program
checks that torch's code still has the shape the patch relies on and exits 3
with a message when it does not or when the wrapper never ran (a result of
another shape raises inside the backward pass).
"""
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real"))

import torch  # noqa: E402
from torch.distributed.fsdp._fully_shard import _fsdp_collectives  # noqa: E402
from torch.distributed.fsdp._fully_shard import _fsdp_param_group  # noqa: E402

import fsdp2_train  # noqa: E402

PATCHED = "torch.distributed.fsdp._fully_shard._fsdp_param_group.foreach_reduce"


def shape_error(message: str) -> None:
    print(f"fsdp2_keepalive_dropped.py: torch {torch.__version__} differs from what this "
          f"program patches: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


def check_torch_shape() -> None:
    """The patch is only meaningful if post_backward keeps foreach_reduce's
    first result as the reduce-scatter keepalive."""
    original = getattr(_fsdp_param_group, "foreach_reduce", None)
    if original is None or original is not getattr(_fsdp_collectives, "foreach_reduce", None):
        shape_error("_fsdp_param_group no longer imports _fsdp_collectives.foreach_reduce")
    group_class = getattr(_fsdp_param_group, "FSDPParamGroup", None)
    if group_class is None or not hasattr(group_class, "post_backward"):
        shape_error("FSDPParamGroup.post_backward is gone")
    source = inspect.getsource(group_class.post_backward)
    if not re.search(r"\(\s*reduce_scatter_input\s*,[^=]*\)\s*=\s*foreach_reduce\(", source):
        shape_error("post_backward no longer unpacks reduce_scatter_input first from foreach_reduce")
    if not re.search(r"ReduceScatterState\(\s*reduce_scatter_input\s*,", source):
        shape_error("post_backward no longer keeps reduce_scatter_input in ReduceScatterState")


class DropKeepalive:
    """Calls foreach_reduce and drops the reduce-scatter input it returns."""

    def __init__(self, original):
        self.original = original
        self.calls = 0

    def __call__(self, *args, **kwargs):
        result = self.original(*args, **kwargs)
        # Raised, not exited: this runs inside autograd's backward hooks.
        if not isinstance(result, tuple) or not result or not isinstance(result[0], torch.Tensor):
            raise RuntimeError(f"torch {torch.__version__}: foreach_reduce returned "
                               f"{type(result).__name__}, not a tuple whose first element "
                               "is a tensor; this program's patch does not apply")
        reduce_scatter_input = result[0]
        if reduce_scatter_input.device.type != "cuda" or reduce_scatter_input.numel() == 0:
            raise RuntimeError(f"torch {torch.__version__}: foreach_reduce's first result is "
                               "not the CUDA reduce-scatter input; this program's patch does "
                               "not apply")
        placeholder = torch.empty(0, dtype=reduce_scatter_input.dtype,
                                  device=reduce_scatter_input.device)
        result = (placeholder,) + result[1:]
        self.calls += 1
        del reduce_scatter_input  # xsc: keepalive dropped
        return result


def main(argv=None) -> int:
    args = fsdp2_train.parse_args(argv)
    check_torch_shape()
    wrapper = DropKeepalive(_fsdp_param_group.foreach_reduce)
    _fsdp_param_group.foreach_reduce = wrapper
    print(f"patched {PATCHED}: the reduce-scatter input it returns is replaced by an empty "
          "tensor and dropped", flush=True)
    losses = fsdp2_train.train(args, "fsdp2_keepalive_dropped.py")
    if wrapper.calls == 0:
        shape_error("FSDP2 never called foreach_reduce through _fsdp_param_group")
    print(f"dropped {wrapper.calls} reduce-scatter inputs", flush=True)
    return fsdp2_train.check_losses("fsdp2 without reduce-scatter keepalive", losses)


if __name__ == "__main__":
    sys.exit(main())
