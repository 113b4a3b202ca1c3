"""FSDP2 training on one GPU: fully_shard over a one-rank NCCL group.

    python3 fsdp2_train.py [--steps N] [--layers L] [--dim D] [--batch B] [--cpu-offload]
                           [--explicit-prefetch]

A residual stack of bias-free linear layers with ReLU, each layer its own
fully_shard group and the root a group of its own, learns to classify a
fixed batch. Each step is optimizer.zero_grad(), forward, backward, AdamW
step, as in PyTorch's FSDP2 examples. FSDP2 all-gathers parameters on its
all-gather stream and reduce-scatters gradients on its reduce-scatter
stream, so the sharded gradients the optimizer reads on the default stream
live in blocks of the reduce-scatter stream. zero_grad frees them before
the reduce-scatter stream waits for the default stream again, in the next
backward: frees ahead of a late wait, with no use of the memory in between.

By default the layers and the batch are 2048 wide: every activation,
gradient and reduce-scatter input is 16 MiB, which the caching allocator
serves from segments of their own that it never merges, so a block freed on
the default stream goes to the next 16 MiB request there.

With --cpu-offload, every group shards its parameters into pinned host
memory (CPUOffloadPolicy(pin_memory=True)): FSDP2 copies them to the GPU
before each all-gather and copies the reduced gradients back with
non_blocking copies, and AdamW steps on the host, reading gradients
that a device copy wrote into pinned memory and writing the parameters
the next step's copies read.

With --explicit-prefetch, each layer names the layers whose all-gathers
it issues ahead of time (set_modules_to_forward_prefetch for the next two,
set_modules_to_backward_prefetch for the previous two), so all-gathered
parameters are made on the all-gather stream while earlier layers still
compute on the default stream, and freed after use further ahead.

The losses stay on the device until the end (a per-step .item() would be a
host synchronization that hides the pattern). Exits 1 when the loss did not
fall. fsdp2_keepalive_dropped.py (one directory up) runs this training with
one of FSDP2's own keepalives removed.
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard

from single_rank import finish, init_single_rank

CLASSES = 16


class ResidualLinear(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.linear = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.linear(x))


class Stack(nn.Module):
    def __init__(self, dim: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(ResidualLinear(dim) for _ in range(layers))
        self.head = nn.Linear(dim, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--cpu-offload", action="store_true",
                        help="shard the parameters into pinned host memory")
    parser.add_argument("--explicit-prefetch", action="store_true",
                        help="prefetch the next two layers' all-gathers, forward and backward")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.layers < 1 or args.dim < 8 or args.batch < 1:
        parser.error("need --steps >= 2, --layers >= 1, --dim >= 8, --batch >= 1")
    return args


def train(args, program: str = "fsdp2_train.py") -> list:
    """Trains args.steps steps and returns the losses."""
    device = init_single_rank(program)
    torch.manual_seed(0)
    model = Stack(args.dim, args.layers).to(device)
    mesh = init_device_mesh("cuda", (1,))
    policy = {"offload_policy": CPUOffloadPolicy(pin_memory=True)} if args.cpu_offload else {}
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, **policy)
    fully_shard(model, mesh=mesh, **policy)
    if args.explicit_prefetch:
        layers = list(model.layers)
        for i, layer in enumerate(layers):
            layer.set_modules_to_forward_prefetch(layers[i + 1:i + 3])
            layer.set_modules_to_backward_prefetch(layers[max(0, i - 2):i][::-1])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    inputs = torch.randn(args.batch, args.dim, device=device)
    labels = (inputs @ torch.randn(args.dim, CLASSES, device=device)).argmax(dim=1)
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    torch.cuda.synchronize()
    values = torch.stack(losses).tolist()
    finish()
    return values


def check_losses(name: str, losses: list) -> int:
    first, last = losses[0], losses[-1]
    print(f"{name}: trained {len(losses)} steps, loss {first:.4f} -> {last:.4f}", flush=True)
    if not all(math.isfinite(v) for v in losses) or not last < first:
        print(f"{name}: the loss did not fall", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    return check_losses("fsdp2", train(args))


if __name__ == "__main__":
    sys.exit(main())
