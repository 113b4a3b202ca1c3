"""FSDP1 training on one GPU: FullyShardedDataParallel over a one-rank NCCL group.

    python3 fsdp1_train.py [--steps N]

A small pre-norm MLP stack, each block wrapped by an auto-wrap policy and the
root by FullyShardedDataParallel itself, with backward prefetch and
forward prefetch on, learns a fixed regression batch with AdamW. FSDP1
unshards, reduces and frees its flat parameters on streams of its own
(world size 1 selects NO_SHARD, whose gradients go through an all-reduce).
Exits 1 when the loss did not fall.
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.fsdp import BackwardPrefetch, FullyShardedDataParallel
from torch.distributed.fsdp.wrap import ModuleWrapPolicy

from single_rank import finish, init_single_rank


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, dim: int, layers: int):
        super().__init__()
        self.blocks = nn.Sequential(*(Block(dim) for _ in range(layers)))
        self.out = nn.Linear(dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.blocks(x)).squeeze(-1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=512)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.layers < 1 or args.dim < 8:
        parser.error("need --steps >= 2, --layers >= 1, --dim >= 8")
    device = init_single_rank("fsdp1_train.py")
    torch.manual_seed(0)
    model = FullyShardedDataParallel(
        Model(args.dim, args.layers),
        auto_wrap_policy=ModuleWrapPolicy({Block}),
        backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
        forward_prefetch=True,
        device_id=device,
        use_orig_params=True,
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    inputs = torch.randn(256, args.dim, device=device)
    targets = torch.sin(inputs.sum(dim=1) / math.sqrt(args.dim))
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    finish()
    print(f"fsdp1: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}")
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("fsdp1: the loss did not fall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
