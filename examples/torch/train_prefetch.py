"""A small training loop whose input batches are prefetched on a side stream.

A few transformer-style blocks (layer norm, attention, MLP) train on random
data for --steps steps. Each batch is copied host-to-device on a copy stream
while the previous step computes on the default stream; the default stream
waits on the copy's event before it reads the batch. The batch block belongs
to the copy stream, so after its last use (the backward pass) the step
records an event, keeps a reference, and releases the batch one step later
only after the copy stream waited on that event (the keepalive pattern).
The program is free of cross-stream lifetime bugs; it serves as the clean
workload of the benchmarks and the checker's false-positive test.

Usage: python3 train_prefetch.py [--steps N] [--layers L] [--dim D]
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        shape = (batch, seq, self.heads, dim // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self, d_in: int, dim: int, layers: int, classes: int):
        super().__init__()
        self.embed = nn.Linear(d_in, dim)
        self.blocks = nn.ModuleList(Block(dim, heads=4) for _ in range(layers))
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


class Prefetcher:
    """Copies host batches to the device on its own stream, one step ahead."""

    def __init__(self, host_batches):
        self.host_batches = host_batches
        self.stream = torch.cuda.Stream()
        self.keepalive = None  # (batch tensors, event after their last use)

    def load(self, step: int):
        x_host, y_host = self.host_batches[step % len(self.host_batches)]
        with torch.cuda.stream(self.stream):
            x = x_host.to("cuda", non_blocking=True)
            y = y_host.to("cuda", non_blocking=True)
            ready = self.stream.record_event()
        return x, y, ready

    def retire(self, batch, last_use: torch.cuda.Event) -> None:
        """Drops the previously retired batch (ordered first), keeps this one."""
        if self.keepalive is not None:
            self.stream.wait_event(self.keepalive[1])
        self.keepalive = (batch, last_use)

    def close(self) -> None:
        if self.keepalive is not None:
            self.stream.wait_event(self.keepalive[1])
            self.keepalive = None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.layers < 1 or args.dim < 16 or args.dim % 4:
        parser.error("need --steps >= 1, --layers >= 1, --dim >= 16 and a multiple of 4")
    if not torch.cuda.is_available():
        print("train_prefetch.py: no CUDA device available", file=sys.stderr)
        return 2

    torch.manual_seed(0)
    d_in, classes = 64, 10
    model = Model(d_in, args.dim, args.layers, classes).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    # A few pinned host batches, reused round-robin.
    host_batches = [(torch.randn(args.batch, args.seq, d_in).pin_memory(),
                     torch.randint(0, classes, (args.batch,)).pin_memory()) for _ in range(8)]
    prefetch = Prefetcher(host_batches)
    default = torch.cuda.current_stream()

    # The steady state is timed apart from start-up (import, CUDA context,
    # first-use library initialization): from the first step after the
    # warm-up steps to the end, both sides synchronized.
    warmup = min(10, args.steps - 1)
    steady_start = None
    upcoming = prefetch.load(0)
    for step in range(args.steps):
        if step == warmup:
            torch.cuda.synchronize()
            steady_start = time.perf_counter()
        x, y, ready = upcoming
        upcoming = prefetch.load(step + 1)  # overlaps with this step's compute
        default.wait_event(ready)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        # The batch's last use was the backward pass above.
        prefetch.retire((x, y), default.record_event())
        del x, y
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    prefetch.close()
    del upcoming  # only ever used on the copy stream
    torch.cuda.synchronize()
    steady = time.perf_counter() - steady_start
    print(f"trained {args.steps} steps, {args.layers} layers, dim {args.dim}")
    print(f"steady_s={steady:.4f} for steps {warmup} to {args.steps - 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
