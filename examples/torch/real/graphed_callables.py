"""CUDA graphs in training: torch.cuda.make_graphed_callables.

    python3 graphed_callables.py [--steps N]

Two parts of a model are captured as CUDA graphs (forward and backward each)
that share one memory pool; a third part stays eager between them. Each
step replays the graphs with fresh inputs copied into their static buffers,
then AdamW steps outside the graphs. The graphed model's first loss and
gradients must match an eager copy's, and the loss must fall; exits 1
otherwise.
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
        print("graphed_callables.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    batch, dim, classes = 128, 256, 10
    encoder = nn.Sequential(nn.Linear(dim, 512), nn.ReLU(), nn.Linear(512, 512)).cuda()
    middle = nn.LayerNorm(512).cuda()  # eager between the graphs
    head = nn.Sequential(nn.ReLU(), nn.Linear(512, classes)).cuda()
    reference = [copy.deepcopy(m) for m in (encoder, middle, head)]

    # Sample inputs match the real ones in shape, dtype and requires_grad.
    sample_x = torch.randn(batch, dim, device="cuda")
    sample_h = torch.randn(batch, 512, device="cuda", requires_grad=True)
    graphed_encoder, graphed_head = torch.cuda.make_graphed_callables(
        (encoder, head), ((sample_x,), (sample_h,)))

    params = [p for m in (encoder, middle, head) for p in m.parameters()]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    inputs = torch.randn(batch, dim, device="cuda")
    labels = torch.randint(0, classes, (batch,), device="cuda")

    # The eager reference's first loss and gradients.
    ref_loss = F.cross_entropy(reference[2](reference[1](reference[0](inputs))), labels)
    ref_loss.backward()
    ref_grads = [p.grad for m in reference for p in m.parameters()]

    losses = []
    first_grad_error = None
    for step in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        # A fresh tensor each step, as a data loader would hand out.
        x = inputs + 0.0
        loss = F.cross_entropy(graphed_head(middle(graphed_encoder(x))), labels)
        loss.backward()
        if step == 0:
            first_grad_error = max((p.grad - g).abs().max().item()
                                   for p, g in zip(params, ref_grads))
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    loss_error = abs(values[0] - ref_loss.item())
    print(f"graphs: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}, "
          f"first step vs eager: loss {loss_error:.2e}, gradients {first_grad_error:.2e}")
    if loss_error > 1e-4 or first_grad_error > 1e-4:
        print("graphs: the graphed model disagrees with the eager one", file=sys.stderr)
        return 1
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("graphs: the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
