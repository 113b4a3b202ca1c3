"""The seed's bug as a pytest suite, for `pytest --xstream-check` on a GPU
(test/wheel/gpu-check.sh runs it and expects exactly the first test to fail).

A tensor is allocated on the default stream and read by a kernel on a side
stream. PyTorch's caching allocator ties the block to the default stream, so
once the tensor is released the next allocation on the default stream may
receive the block while the side stream's kernel still reads it.
"""
import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

NUMEL = 1 << 22  # 16 MiB of floats: a block of the large pool of its own


def read_on_side_stream(side, default):
    """A tensor made on the default stream, read by a kernel on `side`."""
    x = torch.full((NUMEL,), 1.0, device="cuda")  # xsc: alloc on the default stream
    side.wait_stream(default)  # the side stream sees the fill
    with torch.cuda.stream(side):
        total = x.sum()  # xsc: the side stream's read
    return x, total


def test_freed_before_the_default_stream_waits():
    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    x, total = read_on_side_stream(side, default)
    del x  # xsc: free before the wait; the block goes back to the default stream
    y = torch.full((NUMEL,), 2.0, device="cuda")  # may get the block while the sum reads it
    default.wait_stream(side)  # too late for x
    assert y.sum().item() == 2.0 * NUMEL
    # total is NUMEL, or more when the fill won the race: whether or not a
    # run corrupts it, the order of the calls is the bug.
    assert total.item() >= float(NUMEL)


def test_waits_before_del():
    default = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    x, total = read_on_side_stream(side, default)
    default.wait_stream(side)  # the default stream is ordered after the read...
    del x  # ...before the block can be handed out again
    y = torch.full((NUMEL,), 2.0, device="cuda")
    assert y.sum().item() == 2.0 * NUMEL
    assert total.item() == float(NUMEL)
