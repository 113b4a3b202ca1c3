"""DistributedDataParallel training on one GPU over a one-rank NCCL group.

    python3 ddp_train.py [--steps N]

A small convolutional classifier learns a fixed batch with AdamW. Small
buckets (bucket_cap_mb) split its gradients into several all-reduces, which
DDP's reducer launches from autograd hooks while backward still computes
the remaining gradients. Exits 1 when the loss did not fall.
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from single_rank import finish, init_single_rank


def make_model(classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 256), nn.ReLU(),
        nn.Linear(256, classes),
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("need --steps >= 2")
    device = init_single_rank("ddp_train.py")
    torch.manual_seed(0)
    classes = 10
    model = DistributedDataParallel(make_model(classes).to(device), device_ids=[0],
                                    bucket_cap_mb=0.05)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    images = torch.randn(64, 3, 32, 32, device=device)
    labels = torch.randint(0, classes, (64,), device=device)
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    finish()
    print(f"ddp: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}")
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("ddp: the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
