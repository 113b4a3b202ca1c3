"""Activation offloading: torch.autograd.graph.save_on_cpu(pin_memory=True).

    python3 save_on_cpu.py [--steps N]

Inside the context every tensor autograd saves for backward is copied to
pinned host memory and copied back, non_blocking, when backward needs it.
The first step's gradients must equal those of an identical model trained
without offloading, and the loss must fall; exits 1 otherwise.
"""
import argparse
import copy
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("need --steps >= 2")
    if not torch.cuda.is_available():
        print("save_on_cpu.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
        nn.Linear(1024, 512), nn.LayerNorm(512), nn.Linear(512, 10)).cuda()
    reference = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs = torch.randn(256, 512, device="cuda")
    labels = torch.randint(0, 10, (256,), device="cuda")

    F.cross_entropy(reference(inputs), labels).backward()
    losses = []
    grad_error = None
    for step in range(args.steps):
        optimizer.zero_grad()
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        if step == 0:
            grad_error = max((p.grad - r.grad).abs().max().item()
                             for p, r in zip(model.parameters(), reference.parameters()))
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    print(f"save_on_cpu: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}, "
          f"first-step gradients vs no offloading {grad_error:.2e}")
    if grad_error > 1e-5:
        print("save_on_cpu: offloaded gradients differ", file=sys.stderr)
        return 1
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("save_on_cpu: the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
