"""torch.compile training: a small MLP compiled by Inductor, trained a few steps.

    python3 compile_train.py [--steps N]

The forward and backward run as Triton kernels Inductor generated, with
buffers it plans and reuses itself; the optimizer (AdamW) stays eager. The
compiled model's first-step output must match the eager model's, and the
loss must fall; exits 1 otherwise.
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn


def make_model(dim: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(dim, 4 * dim), nn.GELU(),
        nn.Linear(4 * dim, dim), nn.LayerNorm(dim), nn.ReLU(),
        nn.Linear(dim, 10),
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--dim", type=int, default=256)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.dim < 8:
        parser.error("need --steps >= 2 and --dim >= 8")
    if not torch.cuda.is_available():
        print("compile_train.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = make_model(args.dim).cuda()
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs = torch.randn(512, args.dim, device="cuda")
    labels = torch.randint(0, 10, (512,), device="cuda")

    with torch.no_grad():
        eager_out = model(inputs)
        compiled_out = compiled(inputs)
    mismatch = (eager_out - compiled_out).abs().max().item()

    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(compiled(inputs), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    print(f"compile: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}, "
          f"eager/compiled max difference {mismatch:.2e}")
    if mismatch > 1e-3:
        print("compile: the compiled model disagrees with the eager one", file=sys.stderr)
        return 1
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("compile: the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
