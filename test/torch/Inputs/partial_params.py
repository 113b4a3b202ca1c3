"""PyTorch kernels whose by-value parameters hold tables of pointers filled
only in part: cat (CatArrInputTensorMetadata), a foreach kernel
(TensorListMetadata), _foreach_norm's last kernel (TensorListAddresses)
a reduction (ReduceOp's dst[1]) and the non-contiguous elementwise path,
whose lambda captures an OffsetCalculator set below its dims only (a
transposed copy; an add of a transposed float and a half, whose operands'
dtypes differ).

    python3 partial_params.py MODE

First the same calls run with x among their tensors, so that the host's
stack under the next calls may still hold x's address in the tables'
unfilled entries. Then x is overwritten by a copy on a side stream, and on
another stream that never waits for it:
    stale    cat, foreach add, foreach norm, sum and the strided copy and
             add of a and b only: x is no input (no finding, however stale
             the tables are)
    cat      cat of a and x: x is an input, read before the copy lands
    foreach  foreach add on a and x
    sum      the sum of x
    strided  the transposed copy of x
Prints "done" and exits 0.
"""
import sys

import torch

MODES = ("stale", "cat", "foreach", "sum", "strided")


def cat_of(tensors):
    return torch.cat(tensors)


def foreach_add(tensors):
    torch._foreach_add_(tensors, 1.0)


def norms(tensors):
    return torch._foreach_norm(tensors)


def total(t):
    return t.sum()


def strided(t, other):
    """A transposed copy (gpu_kernel_impl_nocast's lambda) and the add of a
    transposed float and a half (gpu_kernel_impl's)."""
    square = t.view(64, 64).t()
    return square.contiguous(), square + other.view(64, 64).half()


def main(argv):
    if len(argv) != 2 or argv[1] not in MODES:
        print(f"usage: partial_params.py {{{'|'.join(MODES)}}}", file=sys.stderr)
        return 2
    mode = argv[1]
    device = torch.device("cuda")
    side = torch.cuda.Stream()
    other = torch.cuda.Stream()
    a = torch.ones(4096, device=device)
    b = torch.ones(4096, device=device)
    x = torch.ones(4096, device=device)
    source = torch.full((4096,), 2.0, device=device)
    for _ in range(3):
        cat_of([a, b, x])
        foreach_add([a, b, x])
        norms([a, b, x])
        total(torch.stack([a, x]))
        strided(x, a)
        strided(a, x)
    torch.cuda.synchronize()
    joined = normed = summed = transposed = None
    with torch.cuda.stream(side):
        x.copy_(source)  # xsc: overwrite
    with torch.cuda.stream(other):
        if mode == "stale":
            joined = cat_of([a, b])
            foreach_add([a, b])
            normed = norms([a, b])
            summed = total(a)
            transposed = strided(a, b)
        elif mode == "cat":
            joined = cat_of([a, x])  # xsc: cat
        elif mode == "foreach":
            foreach_add([a, x])  # xsc: foreach
        elif mode == "sum":
            summed = total(x)  # xsc: sum
        else:
            transposed = x.view(64, 64).t().contiguous()  # xsc: strided
    torch.cuda.synchronize()
    del joined, normed, summed, transposed
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
